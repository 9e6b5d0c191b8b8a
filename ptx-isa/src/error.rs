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

/// Where an error is: the instruction, operand, target, function and PTX line, each where known.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Place {
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

impl Place {
    /// True when nothing of the place is known.
    pub fn is_empty(&self) -> bool {
        *self == Place::default()
    }
}

impl fmt::Display for Place {
    /// The known parts, outermost first: `line 3, in `k`, `add.f32`, operand 1, target sm_90`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let parts = [
            self.line.map(|l| format!("line {l}")),
            self.function.as_ref().map(|func| format!("in `{func}`")),
            self.instruction.as_ref().map(|i| format!("`{i}`")),
            self.operand.map(|o| format!("operand {o}")),
            self.target.map(|t| format!("target {t}")),
        ];
        let parts: Vec<String> = parts.into_iter().flatten().collect();
        f.write_str(&parts.join(", "))
    }
}

/// A ptxkit error: a kind, a message and, where known, the place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// What went wrong.
    pub kind: ErrorKind,
    /// A one-line description.
    pub message: String,
    /// Where, as far as known (boxed: an error stays small beside the values it is returned
    /// in place of).
    pub place: Box<Place>,
}

impl Error {
    /// An error with a kind and a message and no place yet.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> Error {
        Error {
            kind,
            message: message.into(),
            place: Box::default(),
        }
    }

    /// Names the instruction.
    pub fn at_instruction(mut self, opcode: impl Into<String>) -> Error {
        self.place.instruction.get_or_insert_with(|| opcode.into());
        self
    }

    /// Names the operand position.
    pub fn at_operand(mut self, index: usize) -> Error {
        self.place.operand.get_or_insert(index);
        self
    }

    /// Names the target.
    pub fn on_target(mut self, target: Target) -> Error {
        self.place.target.get_or_insert(target);
        self
    }

    /// Names the function.
    pub fn in_function(mut self, name: impl Into<String>) -> Error {
        self.place.function.get_or_insert_with(|| name.into());
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.place.is_empty() {
            true => write!(f, "{:?}: {}", self.kind, self.message),
            false => write!(f, "{:?} at {}: {}", self.kind, self.place, self.message),
        }
    }
}

impl std::error::Error for Error {}

/// `Result` with a ptxkit [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
