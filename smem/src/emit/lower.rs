//! [`lower`]: an [`AluProgram`] onto a [`FunctionBuilder`], one instruction per step.
//!
//! Sections: PTX ISA 9.7.1 "Integer Arithmetic Instructions", 9.7.8 "Logic and Shift
//! Instructions", 9.7.9.21 "Data Movement and Conversion Instructions: cvt".
//!
//! | step                    | PTX (32-bit / 64-bit)          | PTX ISA            |
//! |-------------------------|--------------------------------|--------------------|
//! | `BinOp::And/Or/Xor`     | `and.b32` / `and.b64` ...      | 9.7.8.1-9.7.8.3    |
//! | `BinOp::Shl`            | `shl.b32` / `shl.b64`          | 9.7.8.8            |
//! | `BinOp::Shr`            | `shr.u32` / `shr.u64`          | 9.7.8.9            |
//! | `BinOp::Add`            | `add.u32` / `add.u64`          | 9.7.1.1            |
//! | `BinOp::Mul`            | `mul.lo.u32` / `mul.lo.u64`    | 9.7.1.3            |
//! | `AluStep::ZeroExtend`   | `cvt.u64.u32`                  | 9.7.9.21           |
//!
//! A shift amount is a `.u32` operand in PTX whatever the width: an immediate amount is written
//! clamped to the register width (PTX clamps larger amounts to the width, so the result is the
//! same), and a register amount must be a 32-bit value.

use ptx_isa::{Error, ErrorKind, FunctionBuilder, Imm, Reg, Result, Src, ty};

use crate::alu::{AluProgram, AluStep, BinOp, BinStep, Value, Width};

/// A register holding a value of an [`AluProgram`]: 32 or 64 bits, as the program's
/// [`Width`] says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AluReg {
    /// A `.u32` register (`%r`).
    U32(Reg<ty::U32>),
    /// A `.u64` register (`%rd`).
    U64(Reg<ty::U64>),
}

impl AluReg {
    /// The width of the value the register holds.
    pub fn width(self) -> Width {
        match self {
            AluReg::U32(_) => Width::U32,
            AluReg::U64(_) => Width::U64,
        }
    }

    /// The 32-bit register, if it is one.
    pub fn u32(self) -> Option<Reg<ty::U32>> {
        match self {
            AluReg::U32(r) => Some(r),
            AluReg::U64(_) => None,
        }
    }

    /// The 64-bit register, if it is one.
    pub fn u64(self) -> Option<Reg<ty::U64>> {
        match self {
            AluReg::U64(r) => Some(r),
            AluReg::U32(_) => None,
        }
    }
}

/// The second operand of a binary step, resolved: a register or an immediate.
#[derive(Clone, Copy)]
enum Rhs {
    Reg(AluReg),
    Imm(u64),
}

impl Rhs {
    /// The source operand of type `T`, when a register is of `T`'s width.
    fn src<T: ty::RegType>(self, pick: fn(AluReg) -> Option<Reg<T>>) -> Option<Src<T>> {
        match self {
            Rhs::Reg(r) => pick(r).map(Src::Reg),
            Rhs::Imm(i) => Some(Src::Imm(Imm::UInt(i))),
        }
    }
}

impl From<Reg<ty::U32>> for AluReg {
    fn from(r: Reg<ty::U32>) -> AluReg {
        AluReg::U32(r)
    }
}

impl From<Reg<ty::U64>> for AluReg {
    fn from(r: Reg<ty::U64>) -> AluReg {
        AluReg::U64(r)
    }
}

/// Writes `p` on `k` with `inputs[i]` holding input `%v{i}`, and returns the register holding
/// the output: one fresh register and one instruction per step (table in the module docs).
///
/// Post-condition: when the emitted instructions run with the inputs holding `x0, x1...`, the
/// output register holds `p.eval_inputs(&[x0, x1...])`. A program without steps emits nothing
/// and returns its last input register.
///
/// Errors: the number or the widths of `inputs` do not match the program's
/// ([`ErrorKind::OperandCount`], [`ErrorKind::OperandType`]); a 64-bit shift by a register
/// amount ([`ErrorKind::OperandType`]: PTX takes a `.u32` amount); and any error of the builder.
pub fn lower(k: &mut FunctionBuilder, p: &AluProgram, inputs: &[AluReg]) -> Result<AluReg> {
    let err = |k: &FunctionBuilder, kind, msg: String| {
        Error::new(kind, msg)
            .at_instruction("ALU program")
            .on_target(k.target())
            .in_function(k.name())
    };
    if inputs.len() != p.inputs() as usize {
        let msg = format!(
            "the program takes {} inputs, {} registers were given",
            p.inputs(),
            inputs.len()
        );
        return Err(err(k, ErrorKind::OperandCount, msg));
    }
    for (i, (r, &w)) in inputs.iter().zip(p.input_widths()).enumerate() {
        if r.width() != w {
            let msg = format!("input %v{i} is {w:?}, the register is {:?}", r.width());
            return Err(err(k, ErrorKind::OperandType, msg).at_operand(i));
        }
    }
    let mut regs: Vec<AluReg> = inputs.to_vec();
    for step in p.steps() {
        let get = |regs: &[AluReg], v: Value| regs.get(v.0 as usize).copied();
        let r = match *step {
            AluStep::Bin(BinStep {
                op,
                width,
                lhs,
                rhs,
            }) => {
                let a = get(&regs, lhs);
                let b = rhs.resolve(|v| get(&regs, v).map(Rhs::Reg), |i| Some(Rhs::Imm(i)));
                let r = match width {
                    Width::U32 => a
                        .and_then(AluReg::u32)
                        .zip(b.and_then(|b| b.src(AluReg::u32)))
                        .map(|(a, b)| bin(k, op, a, b).map(AluReg::U32)),
                    Width::U64 => a
                        .and_then(AluReg::u64)
                        .zip(b.and_then(|b| b.src(AluReg::u64)))
                        .map(|(a, b)| bin(k, op, a, b).map(AluReg::U64)),
                };
                r.ok_or_else(|| width_error(k, op, width))??
            }
            AluStep::ZeroExtend { src } => match get(&regs, src) {
                Some(AluReg::U32(a)) => {
                    let d = k.reg::<ty::U64>();
                    k.cvt(d, a)?;
                    AluReg::U64(d)
                }
                _ => {
                    let msg = format!("cvt.u64.u32 needs a 32-bit %v{}", src.0);
                    return Err(err(k, ErrorKind::OperandType, msg));
                }
            },
        };
        regs.push(r);
    }
    regs.last().copied().ok_or_else(|| {
        err(
            k,
            ErrorKind::OperandCount,
            "the program has no inputs".into(),
        )
    })
}

/// [`lower`] for a program of 32-bit inputs and a 32-bit output (swizzles, offsets).
pub fn lower_u32(
    k: &mut FunctionBuilder,
    p: &AluProgram,
    inputs: &[Reg<ty::U32>],
) -> Result<Reg<ty::U32>> {
    let inputs: Vec<AluReg> = inputs.iter().map(|&r| AluReg::U32(r)).collect();
    lower(k, p, &inputs)?
        .u32()
        .ok_or_else(|| output_error(k, Width::U32))
}

/// [`lower`] for a program of one 32-bit input and a 64-bit output (a descriptor address).
pub fn lower_u32_to_u64(
    k: &mut FunctionBuilder,
    p: &AluProgram,
    input: Reg<ty::U32>,
) -> Result<Reg<ty::U64>> {
    lower(k, p, &[AluReg::U32(input)])?
        .u64()
        .ok_or_else(|| output_error(k, Width::U64))
}

fn output_error(k: &FunctionBuilder, want: Width) -> Error {
    Error::new(
        ErrorKind::OperandType,
        format!("the program's output is not {want:?}"),
    )
    .at_instruction("ALU program")
    .on_target(k.target())
    .in_function(k.name())
}

fn width_error(k: &FunctionBuilder, op: BinOp, width: Width) -> Error {
    Error::new(
        ErrorKind::OperandType,
        format!(
            "an operand of {} is undefined, not {width:?}, or a 64-bit shift amount in a register",
            op.mnemonic(width)
        ),
    )
    .at_instruction(op.mnemonic(width))
    .on_target(k.target())
    .in_function(k.name())
}

/// One binary step into a fresh register of `T`.
fn bin<T: ty::Int>(k: &mut FunctionBuilder, op: BinOp, a: Reg<T>, b: Src<T>) -> Result<Reg<T>> {
    let d = k.reg::<T>();
    match op {
        BinOp::And => k.and(d, a, b)?,
        BinOp::Or => k.or(d, a, b)?,
        BinOp::Xor => k.xor(d, a, b)?,
        BinOp::Add => k.add(d, a, b)?,
        BinOp::Mul => k.mul_lo(d, a, b)?,
        BinOp::Shl => {
            let amount = shift_amount(k, op, b)?;
            k.shl(d, a, amount)?
        }
        BinOp::Shr => {
            let amount = shift_amount(k, op, b)?;
            k.shr(d, a, amount)?
        }
    }
    Ok(d)
}

/// The `.u32` shift amount for a shift of a `T`: an immediate clamped to the width, or the
/// same register viewed as `.u32` when `T` is 32 bits wide.
fn shift_amount<T: ty::Int>(k: &FunctionBuilder, op: BinOp, b: Src<T>) -> Result<Src<ty::U32>> {
    let width = if T::TYPE.bits() == 64 {
        Width::U64
    } else {
        Width::U32
    };
    match b {
        Src::Imm(Imm::UInt(n)) => Ok(Src::Imm(Imm::UInt(n.min(u64::from(width.bits()))))),
        Src::Reg(r) => r
            .retype::<ty::U32>()
            .map(Src::Reg)
            .map_err(|_| width_error(k, op, width)),
        Src::Imm(_) => Err(width_error(k, op, width)),
    }
}
