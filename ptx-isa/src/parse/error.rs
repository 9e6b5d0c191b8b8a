//! Parse errors and warnings: a kind, a message and a place (byte offset, 1-based line and
//! column), as wasmparser's `BinaryReaderError` carries an offset.

use std::fmt;

/// A place in the source text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct Pos {
    /// Byte offset from the start of the text.
    pub offset: usize,
    /// 1-based line.
    pub line: u32,
    /// 1-based column, in bytes.
    pub column: u32,
}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// What went wrong while reading.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ParseErrorKind {
    /// A character that starts no PTX token.
    UnexpectedChar,
    /// A string or block comment that does not end.
    Unterminated,
    /// A token other than the grammar allows here.
    UnexpectedToken,
    /// The text ends inside a construct.
    UnexpectedEof,
    /// A malformed or out-of-range number.
    BadNumber,
    /// A directive ptxkit does not read (or not in this place).
    UnsupportedDirective,
    /// An unknown type, target or version.
    BadValue,
    /// A named limit ([`super::limits`]) was exceeded.
    LimitExceeded,
}

/// A parse error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// What went wrong.
    pub kind: ParseErrorKind,
    /// A one-line description.
    pub message: String,
    /// Where.
    pub pos: Pos,
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.pos, self.message)
    }
}

impl std::error::Error for ParseError {}

/// A warning: the text was read, but something in it is kept as written rather than understood
/// (an instruction form the table does not know, a target ptxkit does not model).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Warning {
    /// A one-line description.
    pub message: String,
    /// Where.
    pub pos: Pos,
}

impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.pos, self.message)
    }
}
