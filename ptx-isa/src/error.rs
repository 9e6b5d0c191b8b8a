//! Errors: values with a kind and a place (instruction, operand, target, PTX line).

use std::fmt;

use crate::target::Target;

/// What went wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// The target lacks the instruction form.
    UnsupportedTarget,
    /// The module's `.version` is too low for a form, type or target.
    PtxVersionTooLow,
    /// A `.version` outside 7.0-9.0 or unparsable.
    BadVersion,
    /// An unknown `.target` name.
    UnknownTarget,
    /// An unknown type name.
    UnknownType,
    /// An operand's type does not agree with the instruction.
    OperandType,
    /// An operand of the wrong kind (register where an address is needed...).
    OperandKind,
    /// The wrong number of operands.
    OperandCount,
    /// A vector of the wrong length.
    VectorWidth,
    /// A modifier that the instruction (or this type) does not take.
    InvalidModifier,
    /// An immediate outside its legal range.
    ImmediateRange,
    /// A label that is branched to but never placed, or placed twice.
    UndefinedLabel,
    /// A register that was never declared (or declared twice).
    UndefinedRegister,
    /// A duplicate or malformed name (kernel, parameter, variable).
    BadName,
    /// A directive with a bad value (`.maxntid 0`, conflicting cluster dims...).
    BadDirective,
    /// A guard (`@p`) set with no instruction after it.
    DanglingGuard,
    /// tcgen05 instructions of one function that name both `.cta_group::1` and `.cta_group::2`.
    MixedCtaGroup,
    /// A store to a kernel's parameter space (kernel parameters are read-only).
    ParamWrite,
    /// Anything the builder rejects that fits no other kind.
    Invalid,
}

/// A ptxkit error: a kind, a message and, where known, the place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// What went wrong.
    pub kind: ErrorKind,
    /// A one-line description.
    pub message: String,
    /// The instruction (its opcode, e.g. `add.bf16`) or directive involved.
    pub instruction: Option<String>,
    /// The operand involved (0-based position).
    pub operand: Option<usize>,
    /// The target involved.
    pub target: Option<Target>,
    /// The function (kernel) involved.
    pub function: Option<String>,
    /// The 1-based PTX line, when the error refers to text.
    pub line: Option<usize>,
}

impl Error {
    /// An error with a kind and a message and no place yet.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error {
            kind,
            message: message.into(),
            instruction: None,
            operand: None,
            target: None,
            function: None,
            line: None,
        }
    }

    /// Names the instruction.
    pub fn at_instruction(mut self, opcode: impl Into<String>) -> Error {
        self.instruction.get_or_insert_with(|| opcode.into());
        self
    }

    /// Names the operand position.
    pub fn at_operand(mut self, index: usize) -> Error {
        self.operand.get_or_insert(index);
        self
    }

    /// Names the target.
    pub fn on_target(mut self, target: Target) -> Error {
        self.target.get_or_insert(target);
        self
    }

    /// Names the function.
    pub fn in_function(mut self, name: impl Into<String>) -> Error {
        self.function.get_or_insert_with(|| name.into());
        self
    }

    /// Names the PTX line.
    pub fn at_line(mut self, line: usize) -> Error {
        self.line.get_or_insert(line);
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut place = Vec::new();
        if let Some(l) = self.line {
            place.push(format!("line {l}"));
        }
        if let Some(func) = &self.function {
            place.push(format!("in `{func}`"));
        }
        if let Some(i) = &self.instruction {
            place.push(format!("`{i}`"));
        }
        if let Some(o) = self.operand {
            place.push(format!("operand {o}"));
        }
        if let Some(t) = self.target {
            place.push(format!("target {t}"));
        }
        if place.is_empty() {
            write!(f, "{:?}: {}", self.kind, self.message)
        } else {
            write!(
                f,
                "{:?} at {}: {}",
                self.kind,
                place.join(", "),
                self.message
            )
        }
    }
}

impl std::error::Error for Error {}

/// `Result` with a ptxkit [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
