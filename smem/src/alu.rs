//! A tiny straight-line integer program: what the swizzle, the 2-D offsets and the descriptor
//! address arithmetic become in the kernel.
//!
//! Each [`AluStep`] maps to one PTX instruction (`and.b32`, `shr.u64`, `mul.lo.u32`,
//! `cvt.u64.u32`...); [`crate::emit::lower`] writes them with the PTX builder, one step each.
//! [`AluProgram::eval`] is the host interpreter, and the property tests check that the
//! interpreter agrees with the host functions the program encodes, and that the emitted PTX
//! agrees with the interpreter. Semantics follow PTX ISA 9.7.8 (logic and shift instructions):
//! shift amounts of the register width or more give 0 (`shl`, `shr.u*` clamp the amount to the
//! width); and PTX ISA 9.7.1 (integer arithmetic): `add` and `mul.lo` wrap.

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

/// A value of the program: `Value(0)` to `Value(n - 1)` are the `n` inputs, `Value(n + i)` the
/// result of step `i`.
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

impl Operand {
    /// What the operand stands for: `value` of the earlier value, or `imm` of the immediate.
    pub fn resolve<T>(self, value: impl FnOnce(Value) -> T, imm: impl FnOnce(u64) -> T) -> T {
        match self {
            Operand::Value(v) => value(v),
            Operand::Imm(i) => imm(i),
        }
    }
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
    /// `mul.lo.uN`: the low half of the product (wrapping)
    Mul,
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
            BinOp::Mul => ("mul.lo", 'u'),
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
            BinOp::Mul => a.wrapping_mul(b),
        };
        r & width.mask()
    }
}

/// A binary step: `dst = lhs op rhs` at `width`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BinStep {
    /// The operation.
    pub op: BinOp,
    /// The register width of both operands and the result.
    pub width: Width,
    /// The first operand.
    pub lhs: Value,
    /// The second operand.
    pub rhs: Operand,
}

/// One step; it defines the next [`Value`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AluStep {
    /// `dst = lhs op rhs` at `width`.
    Bin(BinStep),
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
    /// A program needs at least one input.
    #[error("a program needs at least one input")]
    NoInputs,
    /// [`AluProgram::eval_inputs`] was given the wrong number of inputs.
    #[error("the program takes {expected} inputs, {found} were given")]
    InputCount {
        /// The program's inputs.
        expected: usize,
        /// The values given.
        found: usize,
    },
}

/// A straight-line program of [`AluStep`]s from one or more inputs to the last value defined.
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
    inputs: u32,
    steps: Vec<AluStep>,
    widths: Vec<Width>,
}

/// Shorthands for [`AluProgram::bin`], one method a row: `name(BinOp, rhs: type => Operand kind)`
/// is `fn name(&mut self, lhs: Value, rhs: type)` appending `lhs op rhs`.
macro_rules! bin_shorthands {
    ($($(#[$doc:meta])* $name:ident($op:ident, $rhs:ident: $ty:ty => $kind:ident);)*) => {$(
        $(#[$doc])*
        pub fn $name(&mut self, lhs: Value, $rhs: $ty) -> Result<Value, AluError> {
            self.bin(BinOp::$op, lhs, Operand::$kind($rhs))
        }
    )*};
}

impl AluProgram {
    /// An empty program whose one input has `input_width`; it returns its input.
    pub fn new(input_width: Width) -> AluProgram {
        AluProgram {
            inputs: 1,
            steps: Vec::new(),
            widths: vec![input_width],
        }
    }

    /// An empty program with one input per entry of `widths` (`%v0`, `%v1`...); it returns its
    /// last input until a step is added.
    ///
    /// ```
    /// use smem::alu::{AluProgram, Width};
    /// let mut p = AluProgram::with_inputs(&[Width::U32, Width::U32]).unwrap();
    /// let (row, col) = (p.input(), p.input_at(1).unwrap());
    /// let r = p.mul(row, 48).unwrap();
    /// p.add_value(r, col).unwrap();
    /// assert_eq!(p.eval_inputs(&[2, 5]), Ok(101));
    /// ```
    pub fn with_inputs(widths: &[Width]) -> Result<AluProgram, AluError> {
        if widths.is_empty() {
            return Err(AluError::NoInputs);
        }
        Ok(AluProgram {
            inputs: widths.len() as u32,
            steps: Vec::new(),
            widths: widths.to_vec(),
        })
    }

    /// The first input value, `%v0`.
    pub fn input(&self) -> Value {
        Value(0)
    }

    /// Input `i`, if the program has that many.
    pub fn input_at(&self, i: u32) -> Option<Value> {
        (i < self.inputs).then_some(Value(i))
    }

    /// The number of inputs.
    pub fn inputs(&self) -> u32 {
        self.inputs
    }

    /// The width of the first input.
    pub fn input_width(&self) -> Width {
        self.widths.first().copied().unwrap_or(Width::U32)
    }

    /// The widths of the inputs, in order.
    pub fn input_widths(&self) -> &[Width] {
        self.widths.get(..self.inputs as usize).unwrap_or(&[])
    }

    /// The value the program returns: the last one defined.
    pub fn output(&self) -> Value {
        Value(self.widths.len() as u32 - 1)
    }

    /// The width of the result.
    pub fn output_width(&self) -> Width {
        self.widths.last().copied().unwrap_or(Width::U32)
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
        self.steps.push(AluStep::Bin(BinStep {
            op,
            width,
            lhs,
            rhs,
        }));
        self.widths.push(width);
        Ok(self.output())
    }

    bin_shorthands! {
        /// `lhs & imm`.
        and(And, imm: u64 => Imm);
        /// `lhs | imm`.
        or(Or, imm: u64 => Imm);
        /// `lhs ^ rhs`.
        xor(Xor, rhs: Value => Value);
        /// `lhs << amount`.
        shl(Shl, amount: u64 => Imm);
        /// `lhs >> amount` (logical).
        shr(Shr, amount: u64 => Imm);
        /// `lhs + imm` (wrapping).
        add(Add, imm: u64 => Imm);
        /// `lhs + rhs` (wrapping).
        add_value(Add, rhs: Value => Value);
        /// `lhs * imm`, low half (wrapping).
        mul(Mul, imm: u64 => Imm);
    }

    /// `lhs * factor` as the cheapest step: none for 1, `shl` by `log2(factor)` for a power of
    /// two, `mul.lo` otherwise (0 included). Returns `lhs` itself when no step is needed.
    /// The factor must fit the width, as for [`AluProgram::mul`].
    pub fn mul_const(&mut self, lhs: Value, factor: u64) -> Result<Value, AluError> {
        let width = self.width_of(lhs)?;
        if factor & !width.mask() != 0 {
            return Err(AluError::ImmediateTooWide { imm: factor, width });
        }
        match factor {
            1 => Ok(lhs),
            f if f.is_power_of_two() => self.shl(lhs, u64::from(f.trailing_zeros())),
            f => self.mul(lhs, f),
        }
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

    /// Runs the program on `input` (truncated to the input width) and returns the output; any
    /// further inputs are 0 (see [`AluProgram::eval_inputs`]).
    pub fn eval(&self, input: u64) -> u64 {
        let mut inputs = vec![0; self.inputs as usize];
        if let Some(first) = inputs.first_mut() {
            *first = input;
        }
        self.run(&inputs)
    }

    /// Runs the program on one value per input (each truncated to its width).
    pub fn eval_inputs(&self, inputs: &[u64]) -> Result<u64, AluError> {
        if inputs.len() != self.inputs as usize {
            return Err(AluError::InputCount {
                expected: self.inputs as usize,
                found: inputs.len(),
            });
        }
        Ok(self.run(inputs))
    }

    fn run(&self, inputs: &[u64]) -> u64 {
        let mut vals = Vec::with_capacity(self.widths.len());
        for (x, w) in inputs.iter().zip(&self.widths) {
            vals.push(x & w.mask());
        }
        for step in &self.steps {
            // Builder methods only accept defined operands, so every index is in range.
            let get = |v: Value| vals.get(v.0 as usize).copied().unwrap_or(0);
            let r = match *step {
                AluStep::Bin(s) => s.op.apply(s.width, get(s.lhs), s.rhs.resolve(get, |i| i)),
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
            let dst = i + self.inputs as usize;
            match *step {
                AluStep::Bin(s) => {
                    let rhs = s
                        .rhs
                        .resolve(|v| format!("%v{}", v.0), |i| format!("{i:#x}"));
                    let mn = s.op.mnemonic(s.width);
                    writeln!(f, "%v{dst} = {mn} %v{}, {rhs}", s.lhs.0)?;
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
    fn several_inputs_and_mul() {
        assert_eq!(AluProgram::with_inputs(&[]), Err(AluError::NoInputs));
        let mut p = AluProgram::with_inputs(&[Width::U32, Width::U32]).unwrap();
        let (x, y) = (p.input(), p.input_at(1).unwrap());
        assert_eq!(p.input_at(2), None);
        let a = p.mul_const(x, 48).unwrap(); // mul.lo
        let b = p.mul_const(y, 4).unwrap(); // shl 2
        assert_eq!(p.mul_const(b, 1), Ok(b)); // nothing
        p.add_value(a, b).unwrap();
        assert_eq!(
            p.to_string(),
            "%v2 = mul.lo.u32 %v0, 0x30\n%v3 = shl.b32 %v1, 0x2\n%v4 = add.u32 %v2, %v3\n"
        );
        assert_eq!(p.eval_inputs(&[3, 5]), Ok(164));
        assert_eq!(p.eval(3), 144);
        assert_eq!(
            p.eval_inputs(&[1]),
            Err(AluError::InputCount {
                expected: 2,
                found: 1
            })
        );
        assert!(matches!(
            p.mul_const(x, 1 << 32),
            Err(AluError::ImmediateTooWide { .. })
        ));
        // mul.lo wraps.
        let mut q = AluProgram::new(Width::U32);
        let x = q.input();
        q.mul(x, 0x1_0000).unwrap();
        assert_eq!(q.eval(0x1_0000), 0);
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
