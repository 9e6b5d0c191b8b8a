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

use ptx_isa::builder::{CmpOp, ShflMode};
use ptx_isa::{Reg, ty};

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

/// A warp's block-table entries for the next [`PageWindow::LANES`] steps of a walk, one a lane:
/// lane `j` holds the entry of step `32 w + j` of window `w`, and the whole next window is
/// read a window ahead ([`PageWindow::fill`]: one load a lane every 32 steps, each lane at its
/// own slot, kept by its own [`PageCursor`] moving 32 steps at a time), so a step's page is a
/// `shfl.sync.idx` (PTX ISA 9.7.9.6) from a register loaded 32 steps before, never a load the
/// step waits for. Every lane of the warp calls [`PageWindow::page`] at every step, the
/// walk's key warp-uniform.
///
/// ```
/// use ptxkit::isa::{Target, ty};
/// use ptxkit::kernel::{Expr, KernelBuilder, Ptr, TensorOpts};
/// use ptxkit::parts::PageWindow;
///
/// let mut k = KernelBuilder::new("window", Target::Sm90a);
/// let (slots, pages, page_size) = (k.symbol("slots")?, k.symbol("pages")?, k.symbol("page_size")?);
/// // A sequence's block table over a cache of `pages` pages of `page_size` keys.
/// let table = k.tensor::<ty::S32>("table", [slots], TensorOpts::default())?;
/// let _cache = k.tensor::<ty::U32>("cache", [pages, page_size], TensorOpts::default())?;
/// let out = k.tensor::<ty::S32>("out", [64u32, 32], TensorOpts::default())?;
/// let [lane] = k.thread_id([32])?;
/// // The warp's key 0, then 64 keys a step: each lane reads the table at its slot.
/// let window = PageWindow::new(&mut k, lane, 0u32, page_size, 64)?;
/// let read = |k: &mut KernelBuilder, slot, page| {
///     let Ptr::Global(at) = k.ptr_to(&table, [Expr::from(slot)])? else {
///         return Err(k.error("global"));
///     };
///     k.isa().ld(page, ptxkit::isa::Addr::<ptxkit::isa::spaces::Global>::reg(at))?;
///     Ok(())
/// };
/// window.fill(&mut k, read)?;
/// k.for_range(0u32, 64u32, |k, i| {
///     let page = window.page(k, read)?;
///     k.store(&out, [Expr::from(i), lane.into()], page)
/// })?;
/// let ptx = k.finish()?.ptx().to_string();
/// // Two table reads in the text (the first window before the loop, the next in it) and one
/// // shuffle a step.
/// assert_eq!(ptx.matches("ld.global.s32").count(), 2);
/// assert_eq!(ptx.matches("shfl.sync.idx.b32").count(), 1);
/// # Ok::<(), ptxkit::kernel::KernelError>(())
/// ```
#[derive(Debug, Clone)]
pub struct PageWindow {
    /// This lane's step of the window being read: `32 (w + 1) + lane` while window `w` is used.
    ahead_walk: PageCursor,
    /// This lane's entry of the window in use, and of the next (in flight).
    now: Reg<ty::S32>,
    ahead: Reg<ty::S32>,
    /// The step within the window in use (warp-uniform; [`PageWindow::LANES`]: none yet).
    at: Var,
    /// With [`PageWindow::looking_ahead`]: the steps it looks ahead, and the walk's key that
    /// many steps on (every lane the same), moved a step a step.
    look: Option<(u32, PageCursor)>,
    /// The walk's first key (the same on every lane), its page size and step, for the look.
    key: Expr,
    page_size: Expr,
    step: u32,
}

impl PageWindow {
    /// Steps a window holds: a warp's lanes.
    pub const LANES: u32 = 32;

    /// The window of the warp whose walk starts at `key` (the same on every lane), `step`
    /// keys a step, in pages of `page_size` keys; `lane` is the lane's id in the warp. Nothing
    /// is read yet ([`PageWindow::fill`] reads the first window).
    pub fn new(
        k: &mut KernelBuilder,
        lane: impl Into<Expr>,
        key: impl Into<Expr>,
        page_size: impl Into<Expr>,
        step: u32,
    ) -> Result<PageWindow> {
        let (key, page_size) = (key.into(), page_size.into());
        let own = key.clone() + lane.into() * step;
        let ahead_walk = PageCursor::new(k, own, page_size.clone(), step * Self::LANES)?;
        let at = k.index_var("window_at", Self::LANES)?;
        Ok(PageWindow {
            ahead_walk,
            now: k.reg(),
            ahead: k.reg(),
            at,
            look: None,
            key,
            page_size,
            step,
        })
    }

    /// The most steps [`PageWindow::looking_ahead`] looks ahead: a step past the window in use
    /// takes its entry from the next window, read at the window's first step; at most this
    /// many steps ahead that read is at least `LANES - MAX_LOOK` = 8 steps old when it is
    /// shuffled, its latency long past (a step is a tile's copies).
    pub const MAX_LOOK: u32 = 24;

    /// The same window that also hands [`PageWindow::page_touching`]'s `touch` the page and
    /// row of the walk's key `steps` steps on (1 to [`PageWindow::MAX_LOOK`]): a second
    /// [`PageCursor`], that many steps ahead of the walk's. Before [`PageWindow::fill`].
    pub fn looking_ahead(mut self, k: &mut KernelBuilder, steps: u32) -> Result<PageWindow> {
        if !(1..=Self::MAX_LOOK).contains(&steps) {
            return Err(k.error(format!(
                "a page window looks 1 to {} steps ahead, not {steps}",
                Self::MAX_LOOK
            )));
        }
        let at = self.key.clone() + steps * self.step;
        let walk = PageCursor::new(k, at, self.page_size.clone(), self.step)?;
        self.look = Some((steps, walk));
        Ok(self)
    }

    /// Reads the next window: `read(k, slot, page)` loads the block-table entry at this lane's
    /// slot (the caller clamps a slot past the sequence's pages) into `page`, left in flight;
    /// then the lane's cursor moves a window on. Once before the walk's first step.
    pub fn fill(
        &self,
        k: &mut KernelBuilder,
        read: impl Fn(&mut KernelBuilder, Var, Reg<ty::S32>) -> Result<()>,
    ) -> Result<()> {
        read(k, self.ahead_walk.slot(), self.ahead)?;
        self.ahead_walk.advance(k)
    }

    /// The walk's page at this step (every lane the same): at a window's first step the window
    /// read a window ago becomes the one in use and the next is read ([`PageWindow::fill`]);
    /// then the step's entry from its lane by `shfl.sync.idx`, and the window moves a step on.
    pub fn page(
        &self,
        k: &mut KernelBuilder,
        read: impl Fn(&mut KernelBuilder, Var, Reg<ty::S32>) -> Result<()>,
    ) -> Result<Reg<ty::S32>> {
        self.page_touching(k, read, |_, _, _| Ok(()))
    }

    /// [`PageWindow::page`], and with [`PageWindow::looking_ahead`] `touch(k, page, row)` with
    /// the page and row of the walk's key that many steps on (every lane the same): the entry
    /// of a step `s + L` still in the window in use from its lane `s + L`, past it from lane
    /// `s + L - 32` of the next window (read at this window's first step, at least
    /// `32 - L` steps ago), one `selp` and one `shfl.sync.idx` (PTX ISA 9.7.9.6) a step; then
    /// that cursor moves a step on. Without the look, `touch` is not called.
    pub fn page_touching(
        &self,
        k: &mut KernelBuilder,
        read: impl Fn(&mut KernelBuilder, Var, Reg<ty::S32>) -> Result<()>,
        touch: impl FnOnce(&mut KernelBuilder, Reg<ty::S32>, Var) -> Result<()>,
    ) -> Result<Reg<ty::S32>> {
        let at = self.at;
        let start = k.cmp(CmpOp::Eq, at, Self::LANES)?;
        k.if_(start, |k| {
            k.isa().mov(self.now, self.ahead)?;
            self.fill(k, &read)?;
            k.assign(at, 0u32)
        })
        .end()?;
        let page = k.reg::<ty::S32>();
        let lane = k.eval(at)?;
        // c = 0x1f: the whole warp one segment, lanes clamped to 31 (PTX ISA 9.7.9.6).
        k.isa()
            .shfl_sync(ShflMode::Idx, page, None, self.now, lane, 0x1fu32, u32::MAX)?;
        if let Some((steps, walk)) = &self.look {
            // Step s + L: in the window in use below 32 (its lane s + L), else in the next
            // (its lane s + L - 32); the lane is the step mod 32 either way, which the shuffle
            // takes from its lane operand's bits 0-4 alone (PTX ISA 9.7.9.6: `bval[4:0]`).
            let there = k.let_("look_at", at + *steps)?;
            let inside = k.cmp(CmpOp::Lt, there, Self::LANES)?;
            let held = k.reg::<ty::S32>();
            k.isa().selp(held, self.now, self.ahead, inside)?;
            let from = k.eval(there)?;
            let ahead = k.reg::<ty::S32>();
            k.isa()
                .shfl_sync(ShflMode::Idx, ahead, None, held, from, 0x1fu32, u32::MAX)?;
            touch(k, ahead, walk.row())?;
            walk.advance(k)?;
        }
        k.assign(at, at + 1u32)?;
        Ok(page)
    }
}
