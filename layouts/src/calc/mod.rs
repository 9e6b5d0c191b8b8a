//! The layout calculator behind `ptxkit layout EXPR`: CuTe notation and calls of the algebra's
//! free functions, nested freely.
//!
//! ```text
//! expr   := call | layout | tiler
//! call   := name '(' expr (',' expr)* ')'
//! layout := tuple (':' tuple)?          a bare shape is taken column-major
//! tiler  := '<' expr (',' expr)* '>'
//! tuple  := int | '(' tuple (',' tuple)* ')'
//! ```

mod error;
mod eval;
pub(crate) mod parse;

pub use error::CalcError;
pub use eval::{FUNCTIONS, evaluate};
pub(crate) use parse::parse_layout;
