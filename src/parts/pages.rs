//! Walking a sequence's pages: the block-table slot and the row in its page of a key that moves
//! a fixed number of keys at a time through pages whose size is known only at launch (a paged
//! KV cache, `library::decode`: each key tile's pages). The position is kept by adds and one
//! compare a step ([`PageCursor::advance`]); the divisions by the page size (an integer divide
//! is a sequence of some twenty instructions on the GPU, PTX ISA 9.7.1.8 `div`) happen once,
//! when the cursor is made.
//!
//! ```
//! use ptxkit::isa::{Target, ty};
//! use ptxkit::kernel::{Expr, KernelBuilder, TensorOpts};
//! use ptxkit::parts::PageCursor;
//!
//! let mut k = KernelBuilder::new("walk", Target::Sm90a);
//! let (pages, page_size) = (k.symbol("pages")?, k.symbol("page_size")?);
//! // A sequence's keys in pages of `page_size` (the block table the identity here).
//! let keys = k.tensor::<ty::U32>("keys", [pages, page_size], TensorOpts::default())?;
//! let out = k.tensor::<ty::U32>("out", [64u32, 8], TensorOpts::default())?;
//! let [t] = k.thread_id([64])?;
//! // Thread t's key 16 t, then 64 keys a step.
//! let walk = PageCursor::new(&mut k, t * 16u32, page_size, 64)?;
//! k.for_range(0u32, 8u32, |k, i| {
//!     let key = k.load(&keys, [Expr::from(walk.slot()), walk.row().into()])?;
//!     k.store(&out, [Expr::from(t), i.into()], key)?;
//!     walk.advance(k)
//! })?;
//! let ptx = k.finish()?.ptx().to_string();
//! // The key's slot and row, and the step's pages and rows: divided once, before the loop.
//! assert_eq!(ptx.matches("div.u32").count() + ptx.matches("rem.u32").count(), 4);
//! # Ok::<(), ptxkit::kernel::KernelError>(())
//! ```

use ptx_isa::builder::CmpOp;

use crate::kernel::{Expr, KernelBuilder, Result, Var};

/// Key `key + n · step` of a sequence in pages of `page_size` keys after `n` steps
/// ([`PageCursor::advance`]): its block-table slot `(key + n · step) / page_size` and its row in
/// that page `(key + n · step) % page_size`. The slot is not clamped to the sequence's pages (a
/// key past them names a slot past them; the caller clamps the slot it reads the table at).
#[derive(Debug, Clone)]
pub struct PageCursor {
    slot: Var,
    row: Var,
    /// Whole pages a step moves (`step / page_size`) and the rows past them
    /// (`step % page_size`, below a page).
    step_slots: Var,
    step_rows: Var,
    page_size: Expr,
}

impl PageCursor {
    /// The cursor at `key` of pages of `page_size` keys (at least 1 at launch), `step` keys a
    /// step: `key`'s slot and row, and `step`'s whole pages and rows past them, divided here,
    /// once.
    pub fn new(
        k: &mut KernelBuilder,
        key: impl Into<Expr>,
        page_size: impl Into<Expr>,
        step: u32,
    ) -> Result<PageCursor> {
        let (key, page_size) = (key.into(), page_size.into());
        let at = k.let_("page_key", key)?;
        let slot = k.index_var("page_slot", Expr::from(at) / page_size.clone())?;
        let row = k.index_var("page_row", Expr::from(at) % page_size.clone())?;
        let step_slots = k.let_("step_slots", Expr::from(step) / page_size.clone())?;
        let step_rows = k.let_("step_rows", Expr::from(step) % page_size.clone())?;
        Ok(PageCursor {
            slot,
            row,
            step_slots,
            step_rows,
            page_size,
        })
    }

    /// The key's block-table slot now (a mutable scalar: [`PageCursor::advance`] changes it; a
    /// value kept past it is a `let_` copy).
    pub fn slot(&self) -> Var {
        self.slot
    }

    /// The key's row in its page now (as [`PageCursor::slot`], below the page size).
    pub fn row(&self) -> Var {
        self.row
    }

    /// Moves the key on `step` keys: the row by the step's rows past whole pages and the slot
    /// by its pages, then, where the row reaches the page's end, one page more and the row back
    /// by a page (both rows are below a page, so their sum is below two).
    pub fn advance(&self, k: &mut KernelBuilder) -> Result<()> {
        let (slot, row) = (self.slot, self.row);
        k.assign(slot, slot + self.step_slots)?;
        k.assign(row, row + self.step_rows)?;
        let past = k.cmp(CmpOp::Ge, row, self.page_size.clone())?;
        k.if_(past, |k| {
            k.assign(row, Expr::from(row) - self.page_size.clone())?;
            k.assign(slot, slot + 1u32)
        })
        .end()
    }
}
