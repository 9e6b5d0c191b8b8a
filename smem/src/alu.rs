//! A tiny straight-line integer program: what the swizzle and the descriptor address arithmetic
//! become in the kernel, before the PTX builder exists to lower it.
//!
//! Each [`AluStep`] maps to one PTX instruction (`and.b32`, `shr.u64`, `cvt.u64.u32`...), so the
//! lead can lower a program step by step; [`AluProgram::eval`] is its host interpreter, and the
//! property tests check that the interpreter agrees with the host functions the program encodes.
//! Semantics follow PTX ISA 9.7.8 (logic and shift instructions): shift amounts of the register
//! width or more give 0 (`shl`, `shr.u*` clamp the amount to the width), `add` wraps.

use std::fmt;

/// The width of a value: a 32- or 64-bit register.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Width {
    /// `.b32` / `.u32`.
    U32,
    /// `.b64` / `.u64`.
    U64,
}

impl Width {
    /// Bits in the register.
    pub const fn bits(self) -> u32 {
        match self {
            Width::U32 => 32,
            Width::U64 => 64,
        }
    }

    /// The mask of the bits a value of this width keeps.
    pub const fn mask(self) -> u64 {
        match self {
            Width::U32 => u32::MAX as u64,
            Width::U64 => u64::MAX,
        }
    }
}

/// A value of the program: `Value(0)` is the input, `Value(i)` the result of step `i - 1`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Value(pub u32);

/// The second operand of a binary step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Operand {
    /// An earlier value.
    Value(Value),
    /// An immediate, already within the step's width.
    Imm(u64),
}

/// A binary operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinOp {
    /// `and.bN`
    And,
    /// `or.bN`
    Or,
    /// `xor.bN`
    Xor,
    /// `shl.bN`
    Shl,
    /// `shr.uN` (logical)
    Shr,
    /// `add.uN` (wrapping)
    Add,
}

impl BinOp {
    /// The PTX mnemonic with its type suffix for `width`.
    pub fn mnemonic(self, width: Width) -> String {
        let (name, ty) = match self {
            BinOp::And => ("and", 'b'),
            BinOp::Or => ("or", 'b'),
            BinOp::Xor => ("xor", 'b'),
            BinOp::Shl => ("shl", 'b'),
            BinOp::Shr => ("shr", 'u'),
            BinOp::Add => ("add", 'u'),
        };
        format!("{name}.{ty}{}", width.bits())
    }

    fn apply(self, width: Width, a: u64, b: u64) -> u64 {
        let r = match self {
            BinOp::And => a & b,
            BinOp::Or => a | b,
            BinOp::Xor => a ^ b,
            // PTX clamps shift amounts larger than the width: everything shifts out.
            BinOp::Shl if b >= u64::from(width.bits()) => 0,
            BinOp::Shr if b >= u64::from(width.bits()) => 0,
            BinOp::Shl => a << b,
            BinOp::Shr => a >> b,
            BinOp::Add => a.wrapping_add(b),
        };
        r & width.mask()
    }
}

/// One step; it defines the next [`Value`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AluStep {
    /// `dst = lhs op rhs` at `width`.
    Bin {
        /// The operation.
        op: BinOp,
        /// The register width of both operands and the result.
        width: Width,
        /// The first operand.
        lhs: Value,
        /// The second operand.
        rhs: Operand,
    },
    /// `cvt.u64.u32 dst, src`: zero-extend a 32-bit value.
    ZeroExtend {
        /// The 32-bit value.
        src: Value,
    },
}

/// Why a step could not be added.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AluError {
    /// The operand refers to a value the program has not defined yet.
    #[error("value %v{} is not defined (the program has {defined} values)", .value.0)]
    UndefinedValue {
        /// The value.
        value: Value,
        /// How many values exist.
        defined: u32,
    },
    /// An operand has the wrong width for the step.
    #[error("value %v{} is {found:?}, the step needs {expected:?}", .value.0)]
    WidthMismatch {
        /// The value.
        value: Value,
        /// The width the step needs.
        expected: Width,
        /// The value's width.
        found: Width,
    },
    /// An immediate does not fit the step's width.
    #[error("immediate {imm:#x} does not fit in {width:?}")]
    ImmediateTooWide {
        /// The immediate.
        imm: u64,
        /// The step's width.
        width: Width,
    },
}

/// A straight-line program of [`AluStep`]s from one input to the last value defined.
///
/// ```
/// use smem::alu::{AluProgram, Width};
/// let mut p = AluProgram::new(Width::U32);
/// let x = p.input();
/// let t = p.and(x, 0x380).unwrap();
/// let t = p.shr(t, 3).unwrap();
/// p.xor(x, t).unwrap();
/// assert_eq!(p.eval(0x80), 0x90);
/// assert_eq!(p.to_string(), "%v1 = and.b32 %v0, 0x380\n%v2 = shr.u32 %v1, 0x3\n%v3 = xor.b32 %v0, %v2\n");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AluProgram {
    input_width: Width,
    steps: Vec<AluStep>,
    widths: Vec<Width>,
}

impl AluProgram {
    /// An empty program whose input has `input_width`; it returns its input.
    pub fn new(input_width: Width) -> AluProgram {
        AluProgram {
            input_width,
            steps: Vec::new(),
            widths: vec![input_width],
        }
    }

    /// The input value, `%v0`.
    pub fn input(&self) -> Value {
        Value(0)
    }

    /// The width of the input.
    pub fn input_width(&self) -> Width {
        self.input_width
    }

    /// The value the program returns: the last one defined.
    pub fn output(&self) -> Value {
        Value(self.steps.len() as u32)
    }

    /// The width of the result.
    pub fn output_width(&self) -> Width {
        self.widths.last().copied().unwrap_or(self.input_width)
    }

    /// The steps, in order.
    pub fn steps(&self) -> &[AluStep] {
        &self.steps
    }

    /// The width of a value, or an error if it is not defined.
    pub fn width_of(&self, v: Value) -> Result<Width, AluError> {
        self.widths
            .get(v.0 as usize)
            .copied()
            .ok_or(AluError::UndefinedValue {
                value: v,
                defined: self.widths.len() as u32,
            })
    }

    /// Appends `lhs op rhs` at the width of `lhs`; checks that operands exist and agree.
    pub fn bin(&mut self, op: BinOp, lhs: Value, rhs: Operand) -> Result<Value, AluError> {
        let width = self.width_of(lhs)?;
        match rhs {
            Operand::Value(v) => {
                let w = self.width_of(v)?;
                if w != width {
                    return Err(AluError::WidthMismatch {
                        value: v,
                        expected: width,
                        found: w,
                    });
                }
            }
            Operand::Imm(imm) => {
                if imm & !width.mask() != 0 {
                    return Err(AluError::ImmediateTooWide { imm, width });
                }
            }
        }
        self.steps.push(AluStep::Bin {
            op,
            width,
            lhs,
            rhs,
        });
        self.widths.push(width);
        Ok(self.output())
    }

    /// `lhs & imm`.
    pub fn and(&mut self, lhs: Value, imm: u64) -> Result<Value, AluError> {
        self.bin(BinOp::And, lhs, Operand::Imm(imm))
    }

    /// `lhs | imm`.
    pub fn or(&mut self, lhs: Value, imm: u64) -> Result<Value, AluError> {
        self.bin(BinOp::Or, lhs, Operand::Imm(imm))
    }

    /// `lhs ^ rhs`.
    pub fn xor(&mut self, lhs: Value, rhs: Value) -> Result<Value, AluError> {
        self.bin(BinOp::Xor, lhs, Operand::Value(rhs))
    }

    /// `lhs << amount`.
    pub fn shl(&mut self, lhs: Value, amount: u64) -> Result<Value, AluError> {
        self.bin(BinOp::Shl, lhs, Operand::Imm(amount))
    }

    /// `lhs >> amount` (logical).
    pub fn shr(&mut self, lhs: Value, amount: u64) -> Result<Value, AluError> {
        self.bin(BinOp::Shr, lhs, Operand::Imm(amount))
    }

    /// `lhs + imm` (wrapping).
    pub fn add(&mut self, lhs: Value, imm: u64) -> Result<Value, AluError> {
        self.bin(BinOp::Add, lhs, Operand::Imm(imm))
    }

    /// Zero-extends a 32-bit value to 64 bits.
    pub fn zero_extend(&mut self, src: Value) -> Result<Value, AluError> {
        let w = self.width_of(src)?;
        if w != Width::U32 {
            return Err(AluError::WidthMismatch {
                value: src,
                expected: Width::U32,
                found: w,
            });
        }
        self.steps.push(AluStep::ZeroExtend { src });
        self.widths.push(Width::U64);
        Ok(self.output())
    }

    /// Runs the program on `input` (truncated to the input width) and returns the output.
    pub fn eval(&self, input: u64) -> u64 {
        let mut vals = Vec::with_capacity(self.steps.len() + 1);
        vals.push(input & self.input_width.mask());
        for step in &self.steps {
            // Builder methods only accept defined operands, so every index is in range.
            let get = |v: Value| vals.get(v.0 as usize).copied().unwrap_or(0);
            let r = match *step {
                AluStep::Bin {
                    op,
                    width,
                    lhs,
                    rhs,
                } => {
                    let b = match rhs {
                        Operand::Value(v) => get(v),
                        Operand::Imm(i) => i,
                    };
                    op.apply(width, get(lhs), b)
                }
                AluStep::ZeroExtend { src } => get(src) & Width::U32.mask(),
            };
            vals.push(r);
        }
        vals.last().copied().unwrap_or(0)
    }
}

impl fmt::Display for AluProgram {
    /// One line per step, PTX-like: `%v2 = shr.u32 %v1, 0x3`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, step) in self.steps.iter().enumerate() {
            let dst = i + 1;
            match *step {
                AluStep::Bin {
                    op,
                    width,
                    lhs,
                    rhs,
                } => {
                    write!(f, "%v{dst} = {} %v{}, ", op.mnemonic(width), lhs.0)?;
                    match rhs {
                        Operand::Value(v) => writeln!(f, "%v{}", v.0)?,
                        Operand::Imm(i) => writeln!(f, "{i:#x}")?,
                    }
                }
                AluStep::ZeroExtend { src } => writeln!(f, "%v{dst} = cvt.u64.u32 %v{}", src.0)?,
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_program_is_identity_truncated() {
        let p = AluProgram::new(Width::U32);
        assert_eq!(p.eval(0x1_2345_6789), 0x2345_6789);
        assert_eq!(p.output_width(), Width::U32);
    }

    #[test]
    fn shifts_clamp_and_adds_wrap() {
        let mut p = AluProgram::new(Width::U32);
        let x = p.input();
        p.shl(x, 40).unwrap();
        assert_eq!(p.eval(7), 0);
        let mut p = AluProgram::new(Width::U32);
        let x = p.input();
        p.add(x, 1).unwrap();
        assert_eq!(p.eval(u64::from(u32::MAX)), 0);
    }

    #[test]
    fn builder_checks_operands() {
        let mut p = AluProgram::new(Width::U32);
        let x = p.input();
        assert_eq!(
            p.and(x, 1 << 40),
            Err(AluError::ImmediateTooWide {
                imm: 1 << 40,
                width: Width::U32
            })
        );
        assert!(matches!(
            p.xor(x, Value(5)),
            Err(AluError::UndefinedValue { .. })
        ));
        let w = p.zero_extend(x).unwrap();
        assert!(matches!(p.xor(w, x), Err(AluError::WidthMismatch { .. })));
        assert!(matches!(
            p.zero_extend(w),
            Err(AluError::WidthMismatch { .. })
        ));
        let r = p.or(w, 1 << 40).unwrap();
        assert_eq!(p.output(), r);
        assert_eq!(p.eval(3), (1 << 40) | 3);
    }
}
