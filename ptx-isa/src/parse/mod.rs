//! Reading PTX text into the [`Module`] model the builder writes (issue 9).
//!
//! [`parse`] reads whole modules as nvcc, Triton and LLVM's NVPTX back end write them: module
//! directives, variables with initializers, kernels and device functions with their parameter
//! attributes and performance directives, `.reg` declarations, nested `{ }` scopes, labels,
//! predicated instructions with every operand form, `.loc`/`.file`/`.section` debug directives and
//! comments. An instruction whose form is in the table gets its [`crate::Form`]; one the table does
//! not know is kept as written (mnemonic, modifiers, operands) with a [`Warning`], so real PTX
//! round-trips.
//!
//! ```
//! let text = "
//! .version 8.0
//! .target sm_90a
//! .address_size 64
//! .visible .entry k(.param .u64 k_param_0)
//! {
//!     .reg .b64 %rd<3>;
//!     ld.param.u64 %rd1, [k_param_0];
//!     ret;
//! }";
//! let parsed = ptx_isa::parse::parse(text).unwrap();
//! assert_eq!(parsed.module.functions()[0].name, "k");
//! let again = ptx_isa::parse::parse(&parsed.module.print()).unwrap();
//! assert_eq!(again.module, parsed.module);
//! ```
//!
//! The parser never panics: every error is a [`ParseError`] with a kind and a line and column, and
//! what it will read is bounded by the [`limits`].

pub mod error;
pub mod lexer;
pub mod limits;
pub mod literal;
mod parser;
pub mod resolve;

pub use error::{ParseError, ParseErrorKind, Pos, Warning};

use crate::module::Module;

/// Where each parsed thing was written: for the validator's `FILE:LINE:COL` diagnostics.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SourceMap {
    /// The `.version` directive.
    pub version: Pos,
    /// The `.target` directive.
    pub target: Pos,
    /// The `.address_size` directive, where one is written.
    pub address_size: Option<Pos>,
    /// Each module-scope variable, by index in [`Module::variables`].
    pub variables: Vec<Pos>,
    /// Each function, by index in [`Module::functions`].
    pub functions: Vec<FunctionSpans>,
}

/// Where a function's parts were written.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FunctionSpans {
    /// The `.entry`/`.func` keyword.
    pub header: Pos,
    /// Each body statement, by index in [`crate::Function::body`].
    pub body: Vec<Pos>,
    /// The `.reg` declaration of each register class block (`reg_counts`), by class index.
    pub reg_blocks: [Option<Pos>; 9],
}

/// A parsed module, its warnings and its source map.
#[derive(Debug, Clone)]
pub struct Parsed {
    /// The module.
    pub module: Module,
    /// What was kept as written rather than understood.
    pub warnings: Vec<Warning>,
    /// Where things were written.
    pub source_map: SourceMap,
}

/// Parses a PTX module.
pub fn parse(text: &str) -> Result<Parsed, ParseError> {
    parser::parse_module(text, false)
}

/// [`parse`] for a caller that reads the module and drops it ([`crate::validate::check`]): its
/// tokens go into a buffer the thread keeps for the next module, and its function bodies into
/// the bodies the thread kept from the last ([`give_back`]). Measured on a 1.3 MB CUTLASS
/// module (issue 33): a thousand fewer page faults per `check` in a loop (a 5 MB token buffer
/// mapped and unmapped each time); [`parse`] keeps none, because its callers keep the module,
/// and there glibc, whose trim threshold follows the largest block it unmapped, gave back and
/// faulted in the module's memory more often.
pub(crate) fn parse_for_check(text: &str) -> Result<Parsed, ParseError> {
    parser::parse_module(text, true)
}

/// Drops a module [`parse_for_check`] read, keeping its function bodies' buffers, emptied, for
/// the thread's next one (at most 32 MiB).
pub(crate) fn give_back(parsed: Parsed) {
    parser::KeptBodies::keep(parsed);
}
