//! The tensor-memory pool (sm_100a): column bump allocation over the 512 columns of a CTA's
//! tensor memory (PTX ISA 9.7.16.2: 128 lanes x 512 columns of 32-bit cells), with the
//! warp-collective `tcgen05.alloc` / `relinquish_alloc_permit` / `dealloc` emitted for one warp
//! (PTX ISA 9.7.16.7.1: allocations are powers of two from 32 to 512 columns, made and freed by
//! the same warp).

use ptx_isa::builder::CtaGroup;
use ptx_isa::{Addr, FunctionBuilder, Pred, Reg, Result, spaces, ty};

/// Columns of tensor memory per CTA.
pub const COLUMNS: u32 = 512;

/// A named block of columns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TmemRegion {
    /// Its name.
    pub name: String,
    /// Its first column, relative to the allocation.
    pub column: u32,
    /// Its width in columns.
    pub columns: u32,
}

/// Why an allocation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TmemError {
    /// More columns than tensor memory has.
    #[error("{name}: {requested} columns after {used} exceed the {COLUMNS} of tensor memory")]
    Full {
        /// The region.
        name: String,
        /// Columns asked for.
        requested: u32,
        /// Columns already used.
        used: u32,
    },
    /// A zero-width region.
    #[error("{0}: zero columns")]
    Empty(String),
}

/// The pool: regions bumped one after the other, each aligned to 32 columns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TmemPool {
    regions: Vec<TmemRegion>,
    used: u32,
}

impl TmemPool {
    /// An empty pool.
    pub fn new() -> TmemPool {
        TmemPool::default()
    }

    /// Reserves `columns` columns (rounded up to 32) named `name`.
    pub fn alloc(
        &mut self,
        name: &str,
        columns: u32,
    ) -> std::result::Result<TmemRegion, TmemError> {
        if columns == 0 {
            return Err(TmemError::Empty(name.to_string()));
        }
        let width = columns.div_ceil(32) * 32;
        if self.used + width > COLUMNS {
            return Err(TmemError::Full {
                name: name.to_string(),
                requested: width,
                used: self.used,
            });
        }
        let r = TmemRegion {
            name: name.to_string(),
            column: self.used,
            columns: width,
        };
        self.used += width;
        self.regions.push(r.clone());
        Ok(r)
    }

    /// The regions, in allocation order.
    pub fn regions(&self) -> &[TmemRegion] {
        &self.regions
    }

    /// The columns `tcgen05.alloc` must request: the used columns rounded up to a power of two
    /// (at least 32).
    pub fn allocation(&self) -> u32 {
        self.used.max(32).next_power_of_two()
    }

    /// Emits, for the warp whose threads have `alloc_warp` true: `tcgen05.alloc` of
    /// [`Self::allocation`] columns writing the base address to the shared word at `slot`, then
    /// `tcgen05.relinquish_alloc_permit` (no further allocations by this CTA). Everyone then needs
    /// a barrier and a `tcgen05.fence::after_thread_sync` before reading the slot.
    pub fn emit_alloc(
        &self,
        k: &mut FunctionBuilder,
        alloc_warp: Pred,
        slot: Addr<spaces::Shared>,
    ) -> Result<()> {
        let skip = k.label();
        k.unless(alloc_warp).bra(skip)?;
        k.comment(&format!(
            "tensor memory: {} columns for {}",
            self.allocation(),
            self.regions
                .iter()
                .map(|r| format!("{} @{}+{}", r.name, r.column, r.columns))
                .collect::<Vec<_>>()
                .join(", ")
        ));
        k.tcgen05_alloc(CtaGroup::One, slot, self.allocation())?;
        k.tcgen05_relinquish_alloc_permit(CtaGroup::One)?;
        k.place(skip)
    }

    /// Emits the `tcgen05.dealloc` of the allocation at `base` by the same warp.
    pub fn emit_dealloc(
        &self,
        k: &mut FunctionBuilder,
        alloc_warp: Pred,
        base: Reg<ty::U32>,
    ) -> Result<()> {
        let skip = k.label();
        k.unless(alloc_warp).bra(skip)?;
        k.tcgen05_dealloc(CtaGroup::One, base, self.allocation())?;
        k.place(skip)
    }

    /// The tensor-memory address of `region` (lane 0) from the allocation's base address.
    pub fn region_addr(
        &self,
        k: &mut FunctionBuilder,
        base: Reg<ty::U32>,
        region: &TmemRegion,
    ) -> Result<Reg<ty::U32>> {
        let a = k.reg::<ty::U32>();
        k.add(a, base, region.column)?;
        Ok(a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bump_allocation_rounds_and_refuses_overflow() {
        let mut p = TmemPool::new();
        let a = p.alloc("acc0", 256).unwrap();
        let b = p.alloc("acc1", 100).unwrap();
        assert_eq!(
            (a.column, a.columns, b.column, b.columns),
            (0, 256, 256, 128)
        );
        assert_eq!(p.allocation(), 512);
        assert!(matches!(p.alloc("x", 160), Err(TmemError::Full { .. })));
        assert!(matches!(p.alloc("z", 0), Err(TmemError::Empty(_))));
        let mut q = TmemPool::new();
        q.alloc("small", 8).unwrap();
        assert_eq!(q.allocation(), 32);
    }
}
