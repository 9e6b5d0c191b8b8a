//! Named limits: what the parser refuses to read, so that hostile or broken input cannot make it
//! allocate without bound or recurse deeply (the habit of wasmparser's `limits.rs`). Every limit is
//! far above what nvcc, Triton or LLVM write.

/// The largest input, in bytes.
pub const MAX_INPUT_BYTES: usize = 256 << 20;
/// The deepest nesting of `{ }` scopes in a function body.
pub const MAX_BLOCK_DEPTH: usize = 64;
/// The deepest nesting of operands (a vector inside an address inside a list) and initializers.
pub const MAX_OPERAND_DEPTH: usize = 4;
/// The most operands of one instruction, or elements of one vector or list (wgmma's accumulators
/// and `tcgen05.ld.x128` reach 128).
pub const MAX_OPERANDS: usize = 1024;
/// The most modifiers of one opcode.
pub const MAX_MODIFIERS: usize = 32;
/// The largest `N` of a parameterized register declaration `%r<N>` (declarations are kept as
/// ranges, never expanded).
pub const MAX_PARAMETERIZED_REGS: u32 = 1 << 24;
/// The most elements of one variable initializer.
pub const MAX_INIT_ELEMENTS: usize = 1 << 22;
/// The most warnings kept for one module (further ones are counted, not stored).
pub const MAX_WARNINGS: usize = 1000;
