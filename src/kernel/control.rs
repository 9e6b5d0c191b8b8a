//! Structured control flow: ranged and unrolled loops, `while`, `if`/`else`. Each takes its body
//! as a closure and places its own labels around it, so no label is left unplaced and no branch
//! leaves a body (PTX ISA 9.7.12 "Control Flow Instructions": `bra`, guards `@p`).

use ptx_isa::builder::CmpOp;
use ptx_isa::{Pred, ty};

use super::KernelBuilder;
use super::error::Result;
use super::expr::{Expr, Var, VarFacts, bounds};

impl KernelBuilder {
    /// `p = a op b` on unsigned 32-bit index expressions (`setp.op.u32`).
    #[track_caller]
    pub fn cmp(&mut self, op: CmpOp, a: impl Into<Expr>, b: impl Into<Expr>) -> Result<Pred> {
        let a = self.simplify(&a.into());
        let b = self.simplify(&b.into());
        let a = self.lower(&a)?;
        let b = self.lower(&b)?;
        let p = self.f.pred();
        self.f.setp::<ty::U32>(op, p, a, b)?;
        Ok(p)
    }

    /// `for i in start..end { body(k, i) }` with a run-time loop (`setp.ge`, `@p bra`, `add`,
    /// `bra`). `start` and `end` are evaluated once, before the loop.
    #[track_caller]
    pub fn for_range(
        &mut self,
        start: impl Into<Expr>,
        end: impl Into<Expr>,
        body: impl FnOnce(&mut KernelBuilder, Var) -> Result<()>,
    ) -> Result<()> {
        self.for_range_step(start, end, 1, body)
    }

    /// `for i in (start..end).step_by(step)`. The counter is known to be `start` plus a multiple
    /// of `step`, which the simplifier uses (a counter stepping by 4 from 0 is divisible by 4).
    /// A step of 0 is an error. [`KernelBuilder::for_stride`] takes a step known only at run time.
    ///
    /// ```
    /// use ptxkit::isa::Target;
    /// use ptxkit::kernel::KernelBuilder;
    ///
    /// let mut k = KernelBuilder::new("k", Target::Sm90a);
    /// k.thread_id([32])?;
    /// k.for_range_step(0, 1024, 128, |k, i| {
    ///     assert_eq!(k.divisibility(&i.into()), 128);
    ///     Ok(())
    /// })?;
    /// assert!(k.finish()?.ptx().contains("add.u32 %r1, %r1, 128;"));
    /// # Ok::<(), ptxkit::kernel::KernelError>(())
    /// ```
    #[track_caller]
    pub fn for_range_step(
        &mut self,
        start: impl Into<Expr>,
        end: impl Into<Expr>,
        step: u32,
        body: impl FnOnce(&mut KernelBuilder, Var) -> Result<()>,
    ) -> Result<()> {
        self.for_stride(start, end, step, body)
    }

    /// `for i in (start..end).step_by(step)` with a step that may be known only at run time: the
    /// grid-stride loop of a persistent kernel (`for tile in (cta..tiles).step_by(grid_size)`,
    /// [`KernelBuilder::persistent_cta_id`], [`KernelBuilder::grid_size`]). `start`, `end` and
    /// `step` are evaluated once, before the loop; the step must be provably at least 1 (a
    /// constant, or an expression whose bounds say so, as `grid_size`'s do), else the loop could
    /// spin forever and it is an error. The counter is known to be `start` plus a multiple of
    /// what divides `step`, and below `end`. The counter is 32-bit: `end + step` must fit.
    ///
    /// ```
    /// use ptxkit::isa::Target;
    /// use ptxkit::kernel::KernelBuilder;
    ///
    /// let mut k = KernelBuilder::new("k", Target::Sm90a);
    /// k.thread_id([128])?; // %r0
    /// let cta = k.persistent_cta_id(4096, None)?; // %r1
    /// let ctas = k.grid_size()?; // %r2
    /// k.for_stride(cta, 4096, ctas, |_k, _tile| Ok(()))?; // counter %r3
    /// let ptx = k.finish()?.ptx().to_string();
    /// assert!(ptx.contains("mov.u32 %r2, %nctaid.x;"));
    /// assert!(ptx.contains("add.u32 %r3, %r3, %r2;")); // the counter steps by the grid size
    /// # Ok::<(), ptxkit::kernel::KernelError>(())
    /// ```
    #[track_caller]
    pub fn for_stride(
        &mut self,
        start: impl Into<Expr>,
        end: impl Into<Expr>,
        step: impl Into<Expr>,
        body: impl FnOnce(&mut KernelBuilder, Var) -> Result<()>,
    ) -> Result<()> {
        let start = self.simplify(&start.into());
        let end = self.simplify(&end.into());
        let step = self.simplify(&step.into());
        let (step_lo, _) = bounds(&step, self.vars.as_slice());
        if step.as_const() == Some(0) {
            return Err(self.scope_err("a loop step of 0"));
        }
        if step_lo < 1 {
            return Err(self.scope_err(format!(
                "a loop step of {} that may be 0 (its least value is {step_lo})",
                self.show(&step)
            )));
        }
        let divisor = {
            let s = self.divisibility(&step).max(1);
            let d = self.divisibility(&start);
            if d == 0 { s } else { gcd(d, s) }
        };
        let end_src = self.lower(&end)?;
        let step_src = self.lower(&step)?;
        let i = self.f.reg::<ty::U32>();
        let start_src = self.lower(&start)?;
        self.f.mov(i, start_src)?;
        let var = self.new_var(
            "i",
            Some(i),
            {
                let (lo, _) = bounds(&start, self.vars.as_slice());
                let (_, hi) = bounds(&end, self.vars.as_slice());
                VarFacts::range(lo.max(0), hi.map(|h| h - 1), divisor)
            },
            None,
        );
        let body_depth = self.depth + 1;
        if let Some(info) = self.vars.last_mut() {
            info.changes = true;
            info.loop_body = Some(body_depth);
        }
        let (top, done) = (self.f.label(), self.f.label());
        let p = self.f.pred();
        self.f.place(top)?;
        self.f.setp::<ty::U32>(CmpOp::Ge, p, i, end_src)?;
        self.f.when(p).bra(done)?;
        self.nested(|k| body(k, var), done)?;
        self.f.add(i, i, step_src)?;
        self.f.bra(top)?;
        self.f.place(done)?;
        Ok(())
    }

    /// A persistent kernel's loop over `work` items: states the persistent grid
    /// ([`KernelBuilder::persistent_cta_id`]) and runs `body(k, item)` for
    /// `item in (cta..work).step_by(grid_size)` ([`KernelBuilder::for_stride`]), so the
    /// launcher's CTAs, however many the device holds, cover every item once.
    ///
    /// ```
    /// use ptxkit::isa::{Target, ty};
    /// use ptxkit::kernel::{KernelBuilder, TensorOpts};
    ///
    /// let mut k = KernelBuilder::new("fill", Target::Sm90a);
    /// let n = k.symbol("n")?;
    /// let out = k.tensor::<ty::U32>("out", [n], TensorOpts::default())?;
    /// k.thread_id([32])?;
    /// k.persistent_for(n, None, |k, item| k.store(&out, [item], 7u32))?;
    /// let built = k.finish()?;
    /// assert!(built.launch_spec().persistent.is_some());
    /// # Ok::<(), ptxkit::kernel::KernelError>(())
    /// ```
    #[track_caller]
    pub fn persistent_for(
        &mut self,
        work: impl Into<Expr>,
        ctas_per_sm: Option<u32>,
        body: impl FnOnce(&mut KernelBuilder, Var) -> Result<()>,
    ) -> Result<()> {
        let work = work.into();
        let cta = self.persistent_cta_id(work.clone(), ctas_per_sm)?;
        let ctas = self.grid_size()?;
        self.for_stride(cta, work, ctas, body)
    }

    /// `for i in range { body(k, i) }` unrolled at build time: the body is written once per
    /// value, with `i` a constant that folds into the index arithmetic.
    #[track_caller]
    pub fn unroll(
        &mut self,
        range: std::ops::Range<u32>,
        mut body: impl FnMut(&mut KernelBuilder, u32) -> Result<()>,
    ) -> Result<()> {
        for i in range {
            body(self, i)?;
        }
        Ok(())
    }

    /// `while cond(k) { body(k) }`: `cond` writes the test and returns its predicate each time
    /// round.
    #[track_caller]
    pub fn while_(
        &mut self,
        cond: impl FnOnce(&mut KernelBuilder) -> Result<Pred>,
        body: impl FnOnce(&mut KernelBuilder) -> Result<()>,
    ) -> Result<()> {
        let (top, done) = (self.f.label(), self.f.label());
        self.f.place(top)?;
        let p = cond(self)?;
        self.f.unless(p).bra(done)?;
        self.nested(body, done)?;
        self.f.bra(top)?;
        self.f.place(done)?;
        Ok(())
    }

    /// `if p { then(k) }`, with an optional `.else_(|k| ..)`. The branch is written when the
    /// returned [`If`] is consumed by `else_` or `end`, or dropped; an error met when dropped is
    /// returned by [`KernelBuilder::finish`].
    #[track_caller]
    pub fn if_<F>(&mut self, p: Pred, then: F) -> If<'_, F>
    where
        F: FnOnce(&mut KernelBuilder) -> Result<()>,
    {
        If {
            k: self,
            p,
            then: Some(then),
        }
    }

    /// `if p { then(k, state) } else { otherwise(k, state) }`: [`KernelBuilder::if_`] with an
    /// `else` whose two branches both change `state` (a kernel part that writes either
    /// branch through its own methods).
    #[track_caller]
    pub fn if_else_with<S: ?Sized>(
        &mut self,
        p: Pred,
        state: &mut S,
        then: impl FnOnce(&mut KernelBuilder, &mut S) -> Result<()>,
        otherwise: impl FnOnce(&mut KernelBuilder, &mut S) -> Result<()>,
    ) -> Result<()> {
        // The branches are written one after the other: each borrows the state in turn.
        let state = std::cell::RefCell::new(state);
        self.write_if(
            p,
            |k| then(k, &mut state.borrow_mut()),
            Some(Box::new(|k: &mut KernelBuilder| {
                otherwise(k, &mut state.borrow_mut())
            })),
        )
    }

    /// Runs a body one level deeper. When it fails, `exit` (the label branched to past it) is
    /// placed before the error is returned, so the builder is left with no label unplaced and
    /// stays usable.
    #[track_caller]
    fn nested(
        &mut self,
        body: impl FnOnce(&mut KernelBuilder) -> Result<()>,
        exit: ptx_isa::Label,
    ) -> Result<()> {
        self.depth += 1;
        let r = body(self);
        self.depth -= 1;
        // What the body computed does not dominate what follows it.
        let depth = self.depth;
        self.memo.retain(|m| m.depth <= depth);
        if r.is_err() {
            self.f.place(exit)?;
        }
        r
    }

    #[track_caller]
    fn write_if(
        &mut self,
        p: Pred,
        then: impl FnOnce(&mut KernelBuilder) -> Result<()>,
        otherwise: Option<Body<'_>>,
    ) -> Result<()> {
        let skip = self.f.label();
        self.f.unless(p).bra(skip)?;
        self.nested(then, skip)?;
        match otherwise {
            None => self.f.place(skip)?,
            Some(g) => {
                let done = self.f.label();
                self.f.bra(done)?;
                self.f.place(skip)?;
                self.nested(g, done)?;
                self.f.place(done)?;
            }
        }
        Ok(())
    }
}

/// A branch body, boxed so `if_` and `if_ .. else_` share one writer.
type Body<'a> = Box<dyn FnOnce(&mut KernelBuilder) -> Result<()> + 'a>;

#[track_caller]
fn gcd(a: i64, b: i64) -> i64 {
    let (mut a, mut b) = (a.abs(), b.abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// An `if` whose `else` may follow; see [`KernelBuilder::if_`].
pub struct If<'k, F>
where
    F: FnOnce(&mut KernelBuilder) -> Result<()>,
{
    k: &'k mut KernelBuilder,
    p: Pred,
    then: Option<F>,
}

impl<F> If<'_, F>
where
    F: FnOnce(&mut KernelBuilder) -> Result<()>,
{
    /// `else { otherwise(k) }`: writes the whole `if`/`else`.
    #[track_caller]
    pub fn else_(mut self, otherwise: impl FnOnce(&mut KernelBuilder) -> Result<()>) -> Result<()> {
        let then = self.then.take();
        match then {
            Some(t) => self.k.write_if(self.p, t, Some(Box::new(otherwise))),
            None => Ok(()),
        }
    }

    /// Writes the `if` with no `else`, returning its error now.
    #[track_caller]
    pub fn end(mut self) -> Result<()> {
        match self.then.take() {
            Some(t) => self.k.write_if(self.p, t, None),
            None => Ok(()),
        }
    }
}

impl<F> Drop for If<'_, F>
where
    F: FnOnce(&mut KernelBuilder) -> Result<()>,
{
    fn drop(&mut self) {
        if let Some(t) = self.then.take() {
            if let Err(e) = self.k.write_if(self.p, t, None) {
                self.k.defer(e);
            }
        }
    }
}
