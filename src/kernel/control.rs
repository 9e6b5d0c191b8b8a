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
    #[track_caller]
    pub fn for_range_step(
        &mut self,
        start: impl Into<Expr>,
        end: impl Into<Expr>,
        step: u32,
        body: impl FnOnce(&mut KernelBuilder, Var) -> Result<()>,
    ) -> Result<()> {
        if step == 0 {
            return Err(self.scope_err("a loop step of 0"));
        }
        let start = self.simplify(&start.into());
        let end = self.simplify(&end.into());
        let divisor = {
            let d = self.divisibility(&start);
            if d == 0 {
                i64::from(step)
            } else {
                gcd(d, i64::from(step))
            }
        };
        let end_src = self.lower(&end)?;
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
        if let Some(info) = self.vars.last_mut() {
            info.changes = true;
        }
        let (top, done) = (self.f.label(), self.f.label());
        let p = self.f.pred();
        self.f.place(top)?;
        self.f.setp::<ty::U32>(CmpOp::Ge, p, i, end_src)?;
        self.f.when(p).bra(done)?;
        self.nested(|k| body(k, var), done)?;
        self.f.add(i, i, step)?;
        self.f.bra(top)?;
        self.f.place(done)?;
        Ok(())
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
