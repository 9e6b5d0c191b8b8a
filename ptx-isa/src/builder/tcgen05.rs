//! The 5th-generation tensor core family, sm_100a (PTX ISA 9.7.16): tensor-memory allocation,
//! loads and stores between tensor memory and registers, copies from shared memory, `mma` with its
//! commit, and the thread-sync fences.
//!
//! Tensor memory is 128 lanes x 512 columns of 32-bit cells per CTA; an address holds the lane in
//! bits 16-31 and the column in bits 0-15 (PTX ISA 9.7.16.2 "Tensor Memory").

use super::FunctionBuilder;
use super::bulk::CtaGroup;
use crate::error::{ErrorKind, Result};
use crate::forms::Form;
use crate::instr::{Imm, Instruction, Operand, Src};
use crate::reg::{Pred, Reg, RegRef, ty};
use crate::space::{Addr, AddrBase, Address, SharedScope, StateSpace, spaces};
use crate::types::ScalarType;

/// The shape of a `tcgen05.ld`/`.st` (PTX ISA 9.7.16.8.3, "Shapes"): lanes x bits per access.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TmemShape {
    /// `.16x64b`
    S16x64b,
    /// `.16x128b`
    S16x128b,
    /// `.16x256b`
    S16x256b,
    /// `.32x32b`
    S32x32b,
    /// `.16x32bx2`: two 16x32b accesses, the second `half_split` columns further on.
    S16x32bx2,
}

impl TmemShape {
    /// Every shape.
    pub const ALL: [TmemShape; 5] = [
        TmemShape::S16x64b,
        TmemShape::S16x128b,
        TmemShape::S16x256b,
        TmemShape::S32x32b,
        TmemShape::S16x32bx2,
    ];

    /// The shape's name without its dot.
    pub fn name(self) -> &'static str {
        match self {
            TmemShape::S16x64b => "16x64b",
            TmemShape::S16x128b => "16x128b",
            TmemShape::S16x256b => "16x256b",
            TmemShape::S32x32b => "32x32b",
            TmemShape::S16x32bx2 => "16x32bx2",
        }
    }

    /// 32-bit registers per thread for `.x1`: the shape's bits over the warp's 32 threads.
    pub fn registers_per_num(self) -> usize {
        match self {
            TmemShape::S16x64b | TmemShape::S32x32b | TmemShape::S16x32bx2 => 1,
            TmemShape::S16x128b => 2,
            TmemShape::S16x256b => 4,
        }
    }

    /// The largest `.num` (the result may use at most 128 registers): the row's rule (PTX ISA
    /// 9.7.16.8.3).
    pub fn max_num(self) -> u32 {
        let form = if self == TmemShape::S16x32bx2 {
            Form::Tcgen05Ld16x32bx2
        } else {
            Form::Tcgen05Ld
        };
        crate::forms::rules::number_values(form, &[self.name()])
            .and_then(|v| v.all().last().copied())
            .map_or(0, |n| n as u32)
    }

    /// Registers per thread for `.num` = `num`. `.pack::16b`/`.unpack::16b` do not change the
    /// count (each register then holds two 16-bit halves of adjacent columns; ptxas 13.0 agrees).
    pub fn registers(self, num: u32) -> usize {
        self.registers_per_num() * num as usize
    }
}

/// The shape of a `tcgen05.cp` (PTX ISA 9.7.16.8.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum TmemCpShape {
    S128x256b,
    S4x256b,
    S128x128b,
    /// `.64x128b.warpx2::02_13`
    S64x128bWarpx2_02_13,
    /// `.64x128b.warpx2::01_23`
    S64x128bWarpx2_01_23,
    /// `.32x128b.warpx4`
    S32x128bWarpx4,
}

/// The source-format decompression of `tcgen05.cp` (6- and 4-bit elements padded to 8 bits).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TmemCpDecompress {
    /// `.b8x16.b6x16_p32`
    B6x16P32,
    /// `.b8x16.b4x16_p64`
    B4x16P64,
}

/// The kind of a `tcgen05.mma` (PTX ISA 9.7.16.10.9).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MmaKindTc {
    /// `.kind::f16`: f16/bf16 inputs.
    F16,
    /// `.kind::tf32`
    Tf32,
    /// `.kind::f8f6f4`: fp8, fp6, fp4 inputs.
    F8f6f4,
    /// `.kind::i8`
    I8,
}

impl MmaKindTc {
    /// The PTX spelling after `.kind::`.
    pub const fn name(self) -> &'static str {
        match self {
            MmaKindTc::F16 => "f16",
            MmaKindTc::Tf32 => "tf32",
            MmaKindTc::F8f6f4 => "f8f6f4",
            MmaKindTc::I8 => "i8",
        }
    }
}

impl std::fmt::Display for MmaKindTc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for MmaKindTc {
    type Err = crate::Error;

    /// A kind by its name, with or without `kind::`, in any case (`f16`, `kind::F8F6F4`).
    fn from_str(s: &str) -> Result<MmaKindTc> {
        let t = s.strip_prefix("kind::").unwrap_or(s).to_ascii_lowercase();
        [
            MmaKindTc::F16,
            MmaKindTc::Tf32,
            MmaKindTc::F8f6f4,
            MmaKindTc::I8,
        ]
        .into_iter()
        .find(|k| k.name() == t)
        .ok_or_else(|| {
            crate::Error::new(
                ErrorKind::InvalidModifier,
                format!("unknown tcgen05.mma kind `{s}` (expected f16, tf32, f8f6f4 or i8)"),
            )
            .at_instruction("tcgen05.mma")
        })
    }
}

/// The block-scaled kinds (`.block_scale`) with their scale-vector size (PTX 8.6 spells it
/// `.scale_vec::NX`: mxf8f6f4 takes 1X, mxf4 2X, mxf4nvf4 2X or 4X; writing none means `.block32`,
/// PTX 8.8).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BlockScaleKind {
    /// `.kind::mxf8f6f4.block_scale.scale_vec::1X`
    Mxf8f6f4,
    /// `.kind::mxf4.block_scale.scale_vec::2X`
    Mxf4,
    /// `.kind::mxf4nvf4.block_scale.scale_vec::2X`
    Mxf4nvf4X2,
    /// `.kind::mxf4nvf4.block_scale.scale_vec::4X`
    Mxf4nvf4X4,
}

/// Where a `tcgen05.mma` takes A from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TcA {
    /// A shared-memory descriptor.
    Desc(Reg<ty::B64>),
    /// Tensor memory, `[taddr]`.
    Tmem(Reg<ty::U32>),
}

fn taddr(r: Reg<ty::U32>) -> Operand {
    Operand::Addr(Address::at(AddrBase::Reg(r.as_ref())))
}

impl FunctionBuilder {
    fn group(&mut self, opcode: &str, g: CtaGroup) -> Result<&'static str> {
        self.note_cta_group(opcode, g)?;
        Ok(g.name())
    }
}

impl FunctionBuilder {
    /// `tcgen05.alloc.cta_group::N.sync.aligned.shared::cta.b32 [dst], ncols`: allocates `ncols`
    /// columns of tensor memory (warp-wide) and writes their address to shared memory at `dst`.
    pub fn tcgen05_alloc<S: spaces::Window32>(
        &mut self,
        group: CtaGroup,
        dst: Addr<S>,
        ncols: impl Into<Src<ty::U32>>,
    ) -> Result<()> {
        // The column count's range is the row's rule (PTX ISA 9.7.16.7.1), checked by `emit`.
        let ncols = ncols.into();
        if matches!(S::SPACE, StateSpace::Shared(SharedScope::Cluster)) {
            return Err(self.err(
                ErrorKind::OperandKind,
                "tcgen05.alloc",
                "the address is written to shared::cta memory",
            ));
        }
        let i = self.alloc_opcode("alloc", group)?.modifier("shared::cta");
        self.emit(
            Form::Tcgen05Alloc,
            i.ty(ScalarType::B32).operands((dst, ncols)),
        )
    }

    /// `tcgen05.dealloc.cta_group::N.sync.aligned.b32 taddr, ncols` (the allocating warp).
    pub fn tcgen05_dealloc(
        &mut self,
        group: CtaGroup,
        taddr_reg: Reg<ty::U32>,
        ncols: impl Into<Src<ty::U32>>,
    ) -> Result<()> {
        let i = self.alloc_opcode("dealloc", group)?.ty(ScalarType::B32);
        self.emit(Form::Tcgen05Dealloc, i.operands((taddr_reg, ncols.into())))
    }

    /// `tcgen05.relinquish_alloc_permit.cta_group::N.sync.aligned`.
    pub fn tcgen05_relinquish_alloc_permit(&mut self, group: CtaGroup) -> Result<()> {
        let i = self.alloc_opcode("relinquish_alloc_permit", group)?;
        self.emit(Form::Tcgen05Relinquish, i)
    }

    /// `tcgen05.op.cta_group::N.sync.aligned`: the opcode of the allocation instructions (PTX ISA
    /// 9.7.16.7.1 alloc, dealloc, relinquish_alloc_permit).
    fn alloc_opcode(&mut self, op: &'static str, group: CtaGroup) -> Result<Instruction> {
        Ok(Instruction::new("tcgen05")
            .modifier(op)
            .modifier(self.group("tcgen05", group)?)
            .modifier("sync")
            .modifier("aligned"))
    }

    fn ldst_checks(
        &mut self,
        mn: &str,
        shape: TmemShape,
        num: u32,
        packed: bool,
        regs: &[RegRef],
        half_split: Option<u32>,
    ) -> Result<()> {
        if !num.is_power_of_two() || num > shape.max_num() {
            return Err(self.err(
                ErrorKind::InvalidModifier,
                mn,
                format!(
                    ".x{num} is not a power of two up to .x{} for .{}",
                    shape.max_num(),
                    shape.name()
                ),
            ));
        }
        let want = shape.registers(num);
        if regs.len() != want {
            return Err(self.err(
                ErrorKind::OperandCount,
                mn,
                format!(
                    ".{}.x{num}{} takes {want} registers per thread, not {}",
                    shape.name(),
                    if packed { " packed" } else { "" },
                    regs.len()
                ),
            ));
        }
        if let Some(bad) = regs.iter().find(|r| r.class.decl_type().bits() != 32) {
            return Err(self.err(
                ErrorKind::OperandType,
                mn,
                format!("{bad} is not a 32-bit register"),
            ));
        }
        match (shape, half_split) {
            (TmemShape::S16x32bx2, None) => Err(self.err(
                ErrorKind::OperandCount,
                mn,
                ".16x32bx2 needs its half-split column offset",
            )),
            (TmemShape::S16x32bx2, Some(_)) | (_, None) => Ok(()),
            (_, Some(_)) => Err(self.err(
                ErrorKind::OperandCount,
                mn,
                "only .16x32bx2 takes a half-split offset",
            )),
        }
    }

    forward_methods! {
        /// `tcgen05.ld.sync.aligned.shape.xN{.pack::16b}.b32 {r...}, [taddr]{, half_split}`:
        /// tensor memory to registers, warp-wide; each warp of a warpgroup reaches its own 32
        /// lanes.
        fn tcgen05_ld(shape: TmemShape, num: u32, pack: bool,
            r: &[RegRef], taddr_reg: Reg<ty::U32>, half_split: Option<u32>)
            => tmem_copy(true, shape, num, pack, r, taddr_reg, half_split);
        /// `tcgen05.st.sync.aligned.shape.xN{.unpack::16b}.b32 [taddr]{, half_split}, {r...}`.
        fn tcgen05_st(shape: TmemShape, num: u32, unpack: bool,
            taddr_reg: Reg<ty::U32>, half_split: Option<u32>, r: &[RegRef])
            => tmem_copy(false, shape, num, unpack, r, taddr_reg, half_split);
    }

    /// `tcgen05.{ld|st}.sync.aligned.shape.xN{.pack::16b|.unpack::16b}.b32`, its operands in the
    /// order of PTX ISA 9.7.16.8.3 (load: `{r...}, [taddr]{, half_split}`) and 9.7.16.8.4 (store:
    /// `[taddr]{, half_split}, {r...}`); `.16x32bx2` has rows of its own.
    #[allow(clippy::too_many_arguments)] // one parameter per PTX operand
    fn tmem_copy(
        &mut self,
        load: bool,
        shape: TmemShape,
        num: u32,
        packed: bool,
        r: &[RegRef],
        taddr_reg: Reg<ty::U32>,
        half_split: Option<u32>,
    ) -> Result<()> {
        let (op, pack, rows) = if load {
            (
                "ld",
                "pack::16b",
                [Form::Tcgen05Ld, Form::Tcgen05Ld16x32bx2],
            )
        } else {
            (
                "st",
                "unpack::16b",
                [Form::Tcgen05St, Form::Tcgen05St16x32bx2],
            )
        };
        self.ldst_checks(&format!("tcgen05.{op}"), shape, num, packed, r, half_split)?;
        let regs = Operand::Vector(r.iter().map(|x| Operand::Reg(*x)).collect());
        let mut place = vec![taddr(taddr_reg)];
        place.extend(half_split.map(|h| Operand::Imm(Imm::UInt(h as u64))));
        let mut i = Instruction::new("tcgen05")
            .modifier(op)
            .modifier("sync")
            .modifier("aligned")
            .modifier(shape.name())
            .modifier(format!("x{num}"))
            .modifier_if(packed, pack)
            .ty(ScalarType::B32);
        if load {
            i.operands.push(regs);
            i.operands.extend(place);
        } else {
            i.operands.extend(place);
            i.operands.push(regs);
        }
        self.emit(rows[usize::from(shape == TmemShape::S16x32bx2)], i)
    }

    /// `tcgen05.wait::ld.sync.aligned`: waits for this thread's `tcgen05.ld`s.
    pub fn tcgen05_wait_ld(&mut self) -> Result<()> {
        self.emit_row(Form::Tcgen05WaitLd)
    }

    /// `tcgen05.wait::st.sync.aligned`.
    pub fn tcgen05_wait_st(&mut self) -> Result<()> {
        self.emit_row(Form::Tcgen05WaitSt)
    }

    /// `tcgen05.cp.cta_group::N.shape{.decompress} [taddr], s-desc`: shared memory (described by a
    /// tcgen05 shared-memory descriptor) to tensor memory.
    pub fn tcgen05_cp(
        &mut self,
        group: CtaGroup,
        shape: TmemCpShape,
        decompress: Option<TmemCpDecompress>,
        taddr_reg: Reg<ty::U32>,
        sdesc: Reg<ty::B64>,
    ) -> Result<()> {
        let mut i = Instruction::from_opcode("tcgen05.cp").modifier(self.group("tcgen05", group)?);
        i = match shape {
            TmemCpShape::S128x256b => i.modifier("128x256b"),
            TmemCpShape::S4x256b => i.modifier("4x256b"),
            TmemCpShape::S128x128b => i.modifier("128x128b"),
            TmemCpShape::S64x128bWarpx2_02_13 => i.modifier("64x128b").modifier("warpx2::02_13"),
            TmemCpShape::S64x128bWarpx2_01_23 => i.modifier("64x128b").modifier("warpx2::01_23"),
            TmemCpShape::S32x128bWarpx4 => i.modifier("32x128b").modifier("warpx4"),
        };
        i = match decompress {
            None => i,
            Some(TmemCpDecompress::B6x16P32) => i.modifier("b8x16").modifier("b6x16_p32"),
            Some(TmemCpDecompress::B4x16P64) => i.modifier("b8x16").modifier("b4x16_p64"),
        };
        self.emit(Form::Tcgen05Cp, i.operands((taddr(taddr_reg), sdesc)))
    }

    /// `tcgen05.shift.cta_group::N.down [taddr]`: shifts 32-byte rows of the matrix at `taddr` down
    /// one row.
    pub fn tcgen05_shift(&mut self, group: CtaGroup, taddr_reg: Reg<ty::U32>) -> Result<()> {
        let i = Instruction::from_opcode("tcgen05.shift")
            .modifier(self.group("tcgen05", group)?)
            .modifier("down")
            .operand(taddr(taddr_reg));
        self.emit(Form::Tcgen05Shift, i)
    }

    /// `tcgen05.mma.cta_group::N.kind::K [d], a, b-desc, idesc{, {disable-output-lane}},
    /// enable-input-d`: D (in tensor memory) = A*B (+ D where `enable_input_d`). The instruction
    /// descriptor `idesc` (smem's `InstrDesc`) gives the types, shape and majors. With
    /// `disable_output_lane`, 4 (cta_group::1) or 8 (cta_group::2) 32-bit masks. `ws`: the `.ws`
    /// (weight-stationary) form, cta_group::1 only.
    #[allow(clippy::too_many_arguments)]
    pub fn tcgen05_mma(
        &mut self,
        group: CtaGroup,
        kind: MmaKindTc,
        ws: bool,
        d: Reg<ty::U32>,
        a: TcA,
        b: Reg<ty::B64>,
        idesc: impl Into<Src<ty::U32>>,
        disable_output_lane: Option<&[RegRef]>,
        enable_input_d: Pred,
    ) -> Result<()> {
        let mn = "tcgen05.mma";
        if ws && group != CtaGroup::One {
            return Err(self.err(ErrorKind::InvalidModifier, mn, ".ws is cta_group::1 only"));
        }
        if ws && disable_output_lane.is_some() {
            return Err(self.err(
                ErrorKind::OperandCount,
                mn,
                ".ws takes no disable-output-lane mask",
            ));
        }
        if let Some(mask) = disable_output_lane {
            let want = if group == CtaGroup::One { 4 } else { 8 };
            if mask.len() != want || mask.iter().any(|r| r.class.decl_type() != ScalarType::B32) {
                return Err(self.err(
                    ErrorKind::OperandCount,
                    mn,
                    format!(
                        "disable-output-lane is {want} .b32 registers for {}",
                        group.name()
                    ),
                ));
            }
        }
        let k = format!("kind::{kind}");
        let mut i = Instruction::from_opcode("tcgen05.mma")
            .modifier_if(ws, "ws")
            .modifier(self.group("tcgen05", group)?)
            .modifier(k)
            .operand(taddr(d));
        i = match a {
            TcA::Desc(r) => i.operand(r),
            TcA::Tmem(r) => i.operand(taddr(r)),
        };
        i = i.operands((b, idesc.into()));
        if let Some(mask) = disable_output_lane {
            i = i.operand(Operand::Vector(
                mask.iter().map(|r| Operand::Reg(*r)).collect(),
            ));
        }
        i = i.operand(enable_input_d);
        self.emit(
            if ws {
                Form::Tcgen05MmaWs
            } else {
                Form::Tcgen05Mma
            },
            i,
        )
    }

    /// `tcgen05.mma.cta_group::N.kind::mx*.block_scale [d], a, b-desc, idesc, [scale-a], [scale-b],
    /// enable-input-d`: the block-scaled kinds, scale factors in tensor memory.
    #[allow(clippy::too_many_arguments)]
    pub fn tcgen05_mma_block_scale(
        &mut self,
        group: CtaGroup,
        kind: BlockScaleKind,
        d: Reg<ty::U32>,
        a: TcA,
        b: Reg<ty::B64>,
        idesc: impl Into<Src<ty::U32>>,
        scale_a: Reg<ty::U32>,
        scale_b: Reg<ty::U32>,
        enable_input_d: Pred,
    ) -> Result<()> {
        let (k, v) = match kind {
            BlockScaleKind::Mxf8f6f4 => ("kind::mxf8f6f4", "scale_vec::1X"),
            BlockScaleKind::Mxf4 => ("kind::mxf4", "scale_vec::2X"),
            BlockScaleKind::Mxf4nvf4X2 => ("kind::mxf4nvf4", "scale_vec::2X"),
            BlockScaleKind::Mxf4nvf4X4 => ("kind::mxf4nvf4", "scale_vec::4X"),
        };
        let mut i = Instruction::from_opcode("tcgen05.mma")
            .modifier(self.group("tcgen05", group)?)
            .modifier(k)
            .modifier("block_scale")
            .modifier(v)
            .operand(taddr(d));
        i = match a {
            TcA::Desc(r) => i.operand(r),
            TcA::Tmem(r) => i.operand(taddr(r)),
        };
        let i = i.operands((
            b,
            idesc.into(),
            taddr(scale_a),
            taddr(scale_b),
            enable_input_d,
        ));
        self.emit(Form::Tcgen05MmaBlockScale, i)
    }

    /// `tcgen05.commit.cta_group::N.mbarrier::arrive::one{.shared::cluster}{.multicast::cluster}.b64
    /// [mbar]{, mask}`: the mbarrier gets one arrival when this thread's earlier async tcgen05
    /// operations complete.
    pub fn tcgen05_commit<S: spaces::Window32>(
        &mut self,
        group: CtaGroup,
        mbar: Addr<S>,
        multicast: Option<Reg<ty::U16>>,
    ) -> Result<()> {
        let cluster = matches!(S::SPACE, StateSpace::Shared(SharedScope::Cluster));
        let mut i = Instruction::from_opcode("tcgen05.commit")
            .modifier(self.group("tcgen05", group)?)
            .modifier("mbarrier::arrive::one")
            .modifier_if(cluster, "shared::cluster")
            .modifier_if(multicast.is_some(), "multicast::cluster")
            .ty(ScalarType::B64)
            .operand(mbar);
        if let Some(m) = multicast {
            i = i.operand(m);
        }
        self.emit(Form::Tcgen05Commit, i)
    }

    /// `tcgen05.fence::before_thread_sync`: orders earlier async tcgen05 operations before a
    /// following thread synchronisation.
    pub fn tcgen05_fence_before_thread_sync(&mut self) -> Result<()> {
        self.emit_row(Form::Tcgen05FenceBefore)
    }

    /// `tcgen05.fence::after_thread_sync`.
    pub fn tcgen05_fence_after_thread_sync(&mut self) -> Result<()> {
        self.emit_row(Form::Tcgen05FenceAfter)
    }
}
