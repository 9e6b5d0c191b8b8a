//! Bulk copies (PTX ISA 9.7.9.25.4 `cp.async.bulk`, `.commit_group`, `.wait_group`, `.prefetch`)
//! and tensor copies through tensor maps, the TMA (9.7.9.27 `cp.async.bulk.tensor`,
//! `cp.reduce.async.bulk.tensor`, `cp.async.bulk.prefetch.tensor`; 9.7.9.15 `prefetch.tensormap`).

use super::FunctionBuilder;
use crate::builder::BytesParam;
use crate::error::{ErrorKind, Result};
use crate::forms::Form;
use crate::instr::{Imm, Instruction, Operand, Src};
use crate::reg::{Reg, ty};
use crate::space::{Addr, AddrBase, SharedScope, StateSpace, spaces};
use crate::types::ScalarType;

/// Where a tensor map is: the kernel's `.param .align 64 .b8 [128]` parameter, or a register holding
/// its generic address.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TensorMapRef {
    /// A by-value kernel parameter, referenced by name.
    Param(String),
    /// A 64-bit generic address.
    Generic(Reg<ty::U64>),
}

impl From<&BytesParam> for TensorMapRef {
    fn from(p: &BytesParam) -> TensorMapRef {
        TensorMapRef::Param(p.name().to_string())
    }
}

impl TensorMapRef {
    fn base(&self) -> AddrBase {
        match self {
            TensorMapRef::Param(n) => AddrBase::Symbol(n.clone()),
            TensorMapRef::Generic(r) => AddrBase::Reg(r.as_ref()),
        }
    }
}

impl FunctionBuilder {
    /// The generic address of a tensor map: the tensor instructions take a generic address, not a
    /// `.param` symbol (ptxas: "State space mismatch"), so a parameter's address is taken with
    /// `mov.u64` and `cvta.param.u64` (as nvcc does for a `__grid_constant__` parameter).
    pub fn tensor_map_address(&mut self, map: &TensorMapRef) -> Result<Reg<ty::U64>> {
        match map {
            TensorMapRef::Generic(r) => Ok(*r),
            TensorMapRef::Param(name) => {
                let (p, g) = (self.reg::<ty::U64>(), self.reg::<ty::U64>());
                self.mov_symbol_addr(p, name)?;
                self.cvta_from(StateSpace::Param, g, p)?;
                Ok(g)
            }
        }
    }
}

/// The CTA group of a tensor load (`.cta_group::1` / `::2`, sm_100a): which CTAs of a CTA pair the
/// mbarrier signal may go to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CtaGroup {
    /// `.cta_group::1`
    One,
    /// `.cta_group::2`
    Two,
}

impl CtaGroup {
    pub(crate) fn name(self) -> &'static str {
        match self {
            CtaGroup::One => "cta_group::1",
            CtaGroup::Two => "cta_group::2",
        }
    }
}

/// Options of a TMA or bulk load.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TmaLoadOpts<'a> {
    /// `.multicast::cluster` with a 16-bit mask of destination CTAs.
    pub multicast: Option<Src<ty::U16>>,
    /// `.cta_group::N` (sm_100a).
    pub cta_group: Option<CtaGroup>,
    /// `.L2::cache_hint` with a 64-bit cache policy.
    pub cache_hint: Option<Reg<ty::B64>>,
    /// A tensor load's `.im2col` mode with its `dims - 2` 16-bit im2col offsets (3 to 5
    /// coordinates; PTX ISA 9.7.9.27.1.2 `.load_mode`); `None` is the `.tile` mode. Tensor
    /// copies only.
    pub im2col: Option<&'a [Src<ty::U16>]>,
}

/// The reduction of `cp.reduce.async.bulk.tensor`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum TmaReduceOp {
    Add,
    Min,
    Max,
    Inc,
    Dec,
    And,
    Or,
    Xor,
}

impl TmaReduceOp {
    /// Its modifier (`add`, `min`, ...).
    pub fn name(self) -> &'static str {
        match self {
            TmaReduceOp::Add => "add",
            TmaReduceOp::Min => "min",
            TmaReduceOp::Max => "max",
            TmaReduceOp::Inc => "inc",
            TmaReduceOp::Dec => "dec",
            TmaReduceOp::And => "and",
            TmaReduceOp::Or => "or",
            TmaReduceOp::Xor => "xor",
        }
    }
}

const DIMS: [&str; 5] = ["1d", "2d", "3d", "4d", "5d"];

impl FunctionBuilder {
    fn cta_window(&mut self, mn: &str, space: StateSpace) -> Result<()> {
        if matches!(space, StateSpace::Shared(SharedScope::Cluster)) {
            return Err(self.err(
                ErrorKind::OperandKind,
                mn,
                "the source must be the executing CTA's shared memory (shared::cta)",
            ));
        }
        Ok(())
    }

    /// `cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [dst], [src], size, [mbar]`:
    /// copies `size` bytes (a multiple of 16) to shared memory, completing on `mbar`; with
    /// `multicast`, to the same offset in every CTA of the mask.
    pub fn cp_async_bulk_load(
        &mut self,
        o: &TmaLoadOpts<'_>,
        dst: Addr<spaces::SharedCluster>,
        src: Addr<spaces::Global>,
        size: impl Into<Src<ty::U32>>,
        mbar: Addr<spaces::SharedCluster>,
    ) -> Result<()> {
        let mn = "cp.async.bulk";
        let size = size.into();
        if o.cta_group.is_some() {
            return Err(self.err(
                ErrorKind::InvalidModifier,
                mn,
                ".cta_group applies to tensor copies",
            ));
        }
        if o.im2col.is_some() {
            return Err(self.err(
                ErrorKind::InvalidModifier,
                mn,
                ".im2col applies to tensor copies",
            ));
        }
        let mut i = Instruction::from_opcode(
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes",
        );
        if o.multicast.is_some() {
            i = i.modifier("multicast::cluster");
        }
        i = i
            .modifier_if(o.cache_hint.is_some(), "L2::cache_hint")
            .operands((dst, src, size, mbar));
        if let Some(m) = o.multicast {
            i = i.operand(m);
        }
        if let Some(h) = o.cache_hint {
            i = i.operand(h);
        }
        self.emit(Form::CpAsyncBulkG2S, i)
    }

    /// `cp.async.bulk.global.shared::cta.bulk_group [dst], [src], size`: shared to global, completing
    /// with the bulk async-group (`cp.async.bulk.commit_group` / `.wait_group`).
    pub fn cp_async_bulk_store<S: spaces::Window32>(
        &mut self,
        dst: Addr<spaces::Global>,
        src: Addr<S>,
        size: impl Into<Src<ty::U32>>,
        cache_hint: Option<Reg<ty::B64>>,
    ) -> Result<()> {
        self.bulk_to_global(None, dst, src, size.into(), cache_hint)
    }

    /// `cp.reduce.async.bulk.global.shared::cta.bulk_group.op.type [dst], [src], size` (PTX ISA
    /// 9.7.9.25.4.2): `size` bytes of shared memory reduced element-wise into global memory
    /// (a multiple of 16 bytes, both addresses 16-byte aligned), completing with the bulk
    /// async-group like [`FunctionBuilder::cp_async_bulk_store`]. Which operation takes which
    /// type is the form's rule (`add` takes `.u32`, `.s32`, `.u64`, `.f32`, `.f64`).
    pub fn cp_reduce_bulk<S: spaces::Window32>(
        &mut self,
        op: TmaReduceOp,
        t: ScalarType,
        dst: Addr<spaces::Global>,
        src: Addr<S>,
        size: impl Into<Src<ty::U32>>,
    ) -> Result<()> {
        self.bulk_to_global(Some((op, t)), dst, src, size.into(), None)
    }

    /// [`FunctionBuilder::cp_async_bulk_store`], or with `reduce`
    /// [`FunctionBuilder::cp_reduce_bulk`]: the source is the executing CTA's window.
    fn bulk_to_global<S: spaces::Window32>(
        &mut self,
        reduce: Option<(TmaReduceOp, ScalarType)>,
        dst: Addr<spaces::Global>,
        src: Addr<S>,
        size: Src<ty::U32>,
        cache_hint: Option<Reg<ty::B64>>,
    ) -> Result<()> {
        let (mn, form, i) = match reduce {
            None => (
                "cp.async.bulk",
                Form::CpAsyncBulkS2G,
                Instruction::from_opcode("cp.async.bulk.global.shared::cta.bulk_group"),
            ),
            Some((op, t)) => (
                "cp.reduce.async.bulk",
                Form::CpReduceBulk,
                Instruction::from_opcode("cp.reduce.async.bulk.global.shared::cta.bulk_group")
                    .modifier(op.name())
                    .ty(t),
            ),
        };
        self.cta_window(mn, S::SPACE)?;
        let mut i = i
            .modifier_if(cache_hint.is_some(), "L2::cache_hint")
            .operands((dst, src, size));
        if let Some(h) = cache_hint {
            i = i.operand(h);
        }
        self.emit(form, i)
    }

    /// `cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes [dst], [src], size,
    /// [mbar]`: this CTA's shared memory to another CTA's in the cluster.
    pub fn cp_async_bulk_shared_to_cluster<S: spaces::Window32>(
        &mut self,
        dst: Addr<spaces::SharedCluster>,
        src: Addr<S>,
        size: impl Into<Src<ty::U32>>,
        mbar: Addr<spaces::SharedCluster>,
    ) -> Result<()> {
        let mn = "cp.async.bulk";
        let size = size.into();
        self.cta_window(mn, S::SPACE)?;
        let i = Instruction::from_opcode(
            "cp.async.bulk.shared::cluster.shared::cta.mbarrier::complete_tx::bytes",
        )
        .operands((dst, src, size, mbar));
        self.emit(Form::CpAsyncBulkS2S, i)
    }

    /// `cp.async.bulk.commit_group`.
    pub fn cp_async_bulk_commit_group(&mut self) -> Result<()> {
        self.emit_row(Form::CpAsyncBulkCommit)
    }

    /// `cp.async.bulk.wait_group{.read} n`: waits until at most `n` bulk groups are pending (`.read`:
    /// until their sources have been read, so shared memory may be reused).
    pub fn cp_async_bulk_wait_group(&mut self, n: u32, read: bool) -> Result<()> {
        let i = Instruction::from_opcode("cp.async.bulk.wait_group")
            .modifier_if(read, "read")
            .operand(Imm::UInt(n as u64));
        self.emit(Form::CpAsyncBulkWait, i)
    }

    /// `cp.async.bulk.prefetch.L2.global [src], size`: prefetches into L2.
    pub fn cp_async_bulk_prefetch(
        &mut self,
        src: Addr<spaces::Global>,
        size: impl Into<Src<ty::U32>>,
    ) -> Result<()> {
        let size = size.into();
        let i = Instruction::from_opcode("cp.async.bulk.prefetch.L2.global").operands((src, size));
        self.emit(Form::CpAsyncBulkPrefetch, i)
    }

    fn tensor_operand(
        &mut self,
        mn: &str,
        map: &TensorMapRef,
        coords: &[Src<ty::S32>],
        dims: std::ops::RangeInclusive<usize>,
    ) -> Result<(Operand, &'static str)> {
        if !dims.contains(&coords.len()) {
            return Err(self.err(
                ErrorKind::OperandCount,
                mn,
                format!(
                    "{} coordinates; this form takes {}..={}",
                    coords.len(),
                    dims.start(),
                    dims.end()
                ),
            ));
        }
        let generic = self.tensor_map_address(map)?;
        let op = Operand::Tensor {
            map: Box::new(AddrBase::Reg(generic.as_ref())),
            coords: coords.iter().map(|c| (*c).into()).collect(),
        };
        Ok((op, DIMS[coords.len() - 1]))
    }

    /// `cp.async.bulk.tensor.Nd.dst.global.mode.mbarrier::complete_tx::bytes [dst], [map,
    /// {coords}], [mbar]` (PTX ISA 9.7.9.27.1.2): loads the box at `coords` (1 to 5, innermost
    /// first; `.im2col` with [`TmaLoadOpts::im2col`]) into shared memory, completing on `mbar`.
    /// `dst` and `mbar` are in the cluster's window (`.shared::cluster`) or the executing CTA's
    /// own (`.shared::cta`, PTX 8.6; no multicast there: that writes other CTAs).
    pub fn tma_load<S: spaces::TensorDst>(
        &mut self,
        o: &TmaLoadOpts<'_>,
        dst: Addr<S>,
        map: &TensorMapRef,
        coords: &[Src<ty::S32>],
        mbar: Addr<S>,
    ) -> Result<()> {
        let mn = "cp.async.bulk.tensor";
        // How many dimensions an .im2col copy takes and how many offsets go with them are the
        // row's (PTX ISA 9.7.9.27.1.2), checked by `emit`.
        let (tensor, dim) = self.tensor_operand(mn, map, coords, 1..=5)?;
        let dst_space = S::SPACE.qualifier().trim_start_matches('.');
        let mut i = Instruction::from_opcode("cp.async.bulk.tensor")
            .modifier(dim)
            .modifier(dst_space)
            .modifier("global")
            .modifier(if o.im2col.is_some() { "im2col" } else { "tile" })
            .modifier("mbarrier::complete_tx::bytes");
        if o.multicast.is_some() {
            i = i.modifier("multicast::cluster");
        }
        if let Some(g) = o.cta_group {
            i = i.modifier(g.name());
        }
        i = i
            .modifier_if(o.cache_hint.is_some(), "L2::cache_hint")
            .operands((dst, tensor, mbar));
        if let Some(off) = o.im2col {
            i = i.operand(Operand::Vector(off.iter().map(|x| (*x).into()).collect()));
        }
        if let Some(m) = o.multicast {
            i = i.operand(m);
        }
        if let Some(h) = o.cache_hint {
            i = i.operand(h);
        }
        self.emit(
            if o.im2col.is_some() {
                Form::TmaLoadIm2col
            } else {
                Form::TmaLoad
            },
            i,
        )
    }

    /// `cp.async.bulk.tensor.Nd.global.shared::cta.tile.bulk_group [map, {coords}], [src]`: stores
    /// a box from shared memory, completing with the bulk async-group.
    pub fn tma_store<S: spaces::Window32>(
        &mut self,
        map: &TensorMapRef,
        coords: &[Src<ty::S32>],
        src: Addr<S>,
        cache_hint: Option<Reg<ty::B64>>,
    ) -> Result<()> {
        self.tma_store_impl(None, map, coords, src, cache_hint)
    }

    /// `cp.reduce.async.bulk.tensor.Nd.global.shared::cta.op.tile.bulk_group [map, {coords}], [src]`:
    /// reduces a box from shared memory into global memory.
    pub fn tma_reduce<S: spaces::Window32>(
        &mut self,
        op: TmaReduceOp,
        map: &TensorMapRef,
        coords: &[Src<ty::S32>],
        src: Addr<S>,
        cache_hint: Option<Reg<ty::B64>>,
    ) -> Result<()> {
        self.tma_store_impl(Some(op), map, coords, src, cache_hint)
    }

    fn tma_store_impl<S: spaces::Window32>(
        &mut self,
        op: Option<TmaReduceOp>,
        map: &TensorMapRef,
        coords: &[Src<ty::S32>],
        src: Addr<S>,
        cache_hint: Option<Reg<ty::B64>>,
    ) -> Result<()> {
        let mn = if op.is_some() {
            "cp.reduce.async.bulk.tensor"
        } else {
            "cp.async.bulk.tensor"
        };
        self.cta_window(mn, S::SPACE)?;
        let (tensor, dim) = self.tensor_operand(mn, map, coords, 1..=5)?;
        let mut i = Instruction::new("cp");
        if op.is_some() {
            i = i.modifier("reduce");
        }
        i = i
            .modifier("async")
            .modifier("bulk")
            .modifier("tensor")
            .modifier(dim)
            .modifier("global")
            .modifier("shared::cta");
        if let Some(op) = op {
            i = i.modifier(op.name());
        }
        i = i
            .modifier("tile")
            .modifier("bulk_group")
            .modifier_if(cache_hint.is_some(), "L2::cache_hint")
            .operands((tensor, src));
        if let Some(h) = cache_hint {
            i = i.operand(h);
        }
        self.emit(
            if op.is_some() {
                Form::TmaReduce
            } else {
                Form::TmaStore
            },
            i,
        )
    }

    /// `cp.async.bulk.prefetch.tensor.Nd.L2.global.tile [map, {coords}]`: prefetches a box into L2.
    pub fn tma_prefetch(&mut self, map: &TensorMapRef, coords: &[Src<ty::S32>]) -> Result<()> {
        let (tensor, dim) =
            self.tensor_operand("cp.async.bulk.prefetch.tensor", map, coords, 1..=5)?;
        let i = Instruction::from_opcode("cp.async.bulk.prefetch.tensor")
            .modifier(dim)
            .modifier("L2")
            .modifier("global")
            .modifier("tile")
            .operand(tensor);
        self.emit(Form::TmaPrefetch, i)
    }

    /// `prefetch.param.tensormap [map]` (or a generic address): brings the tensor map into the cache.
    pub fn prefetch_tensormap(&mut self, map: &TensorMapRef) -> Result<()> {
        let mut i = Instruction::new("prefetch");
        if matches!(map, TensorMapRef::Param(_)) {
            i = i.modifier("param");
        }
        let i = i
            .modifier("tensormap")
            .operand(Operand::Addr(crate::space::Address::at(map.base())));
        self.emit(Form::PrefetchTensormap, i)
    }
}
