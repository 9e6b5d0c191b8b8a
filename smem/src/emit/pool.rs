//! The pool's dynamic shared array in a module: its declaration, its regions as comments, and
//! region addresses in registers.

use ptx_isa::{FunctionBuilder, Module, Reg, Result, ty};

use super::host_error;
use crate::mbarrier::MbarrierArray;
use crate::pool::{Region, SmemPool, Storage};

/// The pool's dynamic shared array as declared on a module:
/// `.extern .shared .align A .b8 name[];` with `A` = [`SmemPool::base_align`] (PTX ISA 5.1
/// "State Spaces", the shared state space; the size is the launch's dynamic shared-memory size,
/// [`SmemPool::dynamic_bytes`]).
///
/// Addresses are `.shared::cta` window addresses (32 bits), what `ld.shared`, `cp.async.bulk`
/// and the matrix descriptors take.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DynamicSmem {
    symbol: String,
    align: u32,
    bytes: u32,
}

impl DynamicSmem {
    /// Declares the array `name` on `m` for `pool` (one per module; ptx-isa refuses a second).
    pub fn declare(m: &mut Module, name: &str, pool: &SmemPool) -> Result<DynamicSmem> {
        let symbol = m.dynamic_shared(name, pool.base_align())?;
        Ok(DynamicSmem {
            symbol,
            align: pool.base_align(),
            bytes: pool.dynamic_bytes(),
        })
    }

    /// The array's name in the PTX.
    pub fn symbol(&self) -> &str {
        &self.symbol
    }

    /// The declared alignment.
    pub fn align(&self) -> u32 {
        self.align
    }

    /// The dynamic shared-memory size the launch must request.
    pub fn bytes(&self) -> u32 {
        self.bytes
    }

    /// Writes the pool's layout as comment lines: a header with the sizes, then one line per
    /// region ([`Region`]'s `Display`).
    pub fn comment_regions(&self, k: &mut FunctionBuilder, pool: &SmemPool) {
        k.comment(&format!(
            "shared memory: {} = {} dynamic bytes (align {}), {} static bytes",
            self.symbol,
            pool.dynamic_bytes(),
            pool.base_align(),
            pool.static_bytes()
        ));
        for r in pool.regions() {
            k.comment(&format!("  {r}"));
        }
    }

    /// `mov.u32 %r, name;`: the array's shared address in a fresh register.
    pub fn base_addr(&self, k: &mut FunctionBuilder) -> Result<Reg<ty::U32>> {
        let d = k.reg::<ty::U32>();
        k.mov_shared_addr(d, &self.symbol)?;
        Ok(d)
    }

    /// The shared address of `region` in a fresh register: [`DynamicSmem::base_addr`], then
    /// `add.u32` of the region's offset when it is not 0.
    ///
    /// Errors: a static region (it is not in this array), a region that ends past the array or
    /// is aligned more than it.
    pub fn region_addr(&self, k: &mut FunctionBuilder, region: &Region) -> Result<Reg<ty::U32>> {
        self.check(k, region)?;
        let base = self.base_addr(k)?;
        self.region_addr_from(k, base, region)
    }

    /// The shared address of `region` from a register already holding the array's address
    /// ([`DynamicSmem::base_addr`]): one `add.u32`, or `base` itself for offset 0.
    pub fn region_addr_from(
        &self,
        k: &mut FunctionBuilder,
        base: Reg<ty::U32>,
        region: &Region,
    ) -> Result<Reg<ty::U32>> {
        self.check(k, region)?;
        self.offset_from(k, base, region.offset, &region.name)
    }

    /// The shared address of barrier `i` of `barriers` from a register holding the array's
    /// address: one `add.u32` (the operand `mbarrier.init`, `mbarrier.arrive` and
    /// `mbarrier.try_wait` take, PTX ISA 9.7.13.15 "Parallel Synchronization and Communication
    /// Instructions: mbarrier"). Errors: `i` out of range, or the barriers
    /// are not in this array.
    pub fn mbarrier_addr_from(
        &self,
        k: &mut FunctionBuilder,
        base: Reg<ty::U32>,
        barriers: &MbarrierArray,
        i: u32,
    ) -> Result<Reg<ty::U32>> {
        self.check(k, barriers.region())?;
        let offset = barriers
            .offset(i)
            .map_err(|e| host_error(k, "DynamicSmem::mbarrier_addr_from", e))?;
        let name = format!("{}[{i}]", barriers.region().name);
        self.offset_from(k, base, offset, &name)
    }

    /// Initialises every barrier of `barriers` with its count (`mbarrier.init.shared.b64`, PTX
    /// ISA 9.7.13.15.9), from a register holding the array's address: call it from one thread,
    /// then make the initialisation visible (`bar.sync`, or `fence.mbarrier_init` and a cluster
    /// barrier when other CTAs use the barriers). Errors: the barriers are not in this array.
    pub fn init_mbarriers(
        &self,
        k: &mut FunctionBuilder,
        base: Reg<ty::U32>,
        barriers: &MbarrierArray,
    ) -> Result<()> {
        for i in 0..barriers.len() {
            let count = barriers
                .init_count(i)
                .map_err(|e| host_error(k, "DynamicSmem::init_mbarriers", e))?;
            let at = self.mbarrier_addr_from(k, base, barriers, i)?;
            k.mbarrier_init(ptx_isa::Addr::<ptx_isa::spaces::Shared>::reg32(at), count)?;
        }
        Ok(())
    }

    fn offset_from(
        &self,
        k: &mut FunctionBuilder,
        base: Reg<ty::U32>,
        offset: u32,
        name: &str,
    ) -> Result<Reg<ty::U32>> {
        if offset == 0 {
            return Ok(base);
        }
        let d = k.reg::<ty::U32>();
        k.add(d, base, offset)?;
        k.annotate(&format!("{name}: {} + {offset:#x}", self.symbol));
        Ok(d)
    }

    fn check(&self, k: &FunctionBuilder, region: &Region) -> Result<()> {
        let what = "DynamicSmem::region_addr";
        if region.storage != Storage::Dynamic {
            return Err(host_error(
                k,
                what,
                format!(
                    "region `{}` is a static .shared variable, not part of `{}`",
                    region.name, self.symbol
                ),
            ));
        }
        let end = region.offset.checked_add(region.bytes);
        if end.is_none_or(|e| e > self.bytes) || region.align > self.align {
            return Err(host_error(
                k,
                what,
                format!(
                    "region `{}` ({} bytes at {:#x}, align {}) is not in `{}` ({} bytes, align {})",
                    region.name,
                    region.bytes,
                    region.offset,
                    region.align,
                    self.symbol,
                    self.bytes,
                    self.align
                ),
            ));
        }
        Ok(())
    }
}
