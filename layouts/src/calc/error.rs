//! Errors of the calculator: a syntax error with its column, or a violated precondition.

use crate::error::LayoutError;

/// Why an expression could not be evaluated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CalcError {
    /// The text is not an expression; `column` counts characters from 1.
    #[error("column {column}: {message}")]
    Syntax {
        /// 1-based character column.
        column: usize,
        /// What was expected.
        message: String,
    },
    /// A call names no function of the calculator.
    #[error("unknown function `{0}`; known: {known}", known = super::FUNCTIONS.join(", "))]
    UnknownFunction(String),
    /// A function got the wrong number or kind of arguments.
    #[error("{func}: {message}")]
    BadArgument {
        /// The function.
        func: &'static str,
        /// What was wrong.
        message: String,
    },
    /// A layout operation refused its arguments.
    #[error("{}", prefixed(func, source))]
    Layout {
        /// The function.
        func: &'static str,
        /// The violated precondition.
        source: LayoutError,
    },
}

/// `func: message`, unless the message already starts with the operation's name.
fn prefixed(func: &str, source: &LayoutError) -> String {
    let message = source.to_string();
    if message.starts_with(&format!("{func}:")) {
        message
    } else {
        format!("{func}: {message}")
    }
}
