//! The tile-op lowering layer: ops on tiles (regions of buffers with layouts) at an execution
//! scope — `copy`, `copy_async`, `gemm_async`, `fill`, `cast` — dispatched to hardware variants.
//!
//! A tile op says what moves or multiplies; [`dispatch`] picks the variant (by predicates and
//! priority, TIRx style) and the variant writes the instructions through the ptx-isa builder. A
//! miss lists every variant with the first predicate that declined it:
//!
//! ```text
//! no variant lowers copy at warp scope on sm_90a
//!   dst: local.f32 [16x8] regs mma.m16n8k16.C align 4
//!   src: global.f32 [16x8] 8 align 4
//!   variant        | priority | predicate | reason
//!   copy.ldmatrix  |       30 | storage   | global->local is not shared->local
//!   ...
//! ```

pub mod op;
pub mod operand;
pub mod registry;
pub mod reject;
pub mod tensor;
pub mod tmem;
pub mod variants;

pub use op::{Accumulate, Elementwise, OpCtx, OpKind, TileOp};
pub use operand::{Base, ExecScope, RunCount, ScopeKind, Storage, StoragePair, TileRef};
pub use registry::{
    Declined, DispatchError, Plan, Planned, Planner, Predicate, Variant, candidates, dispatch,
    dispatch_on, plan, plan_with, variants as all_variants, why_not,
};
pub use reject::{Aspect, Rejection};
pub use tensor::{TileOperand, TileOperandDyn};
