//! The dispatch registry: variants filed per (op, targets) with a name, a priority, a list of
//! predicates and a planner. Dispatch tries the variants of an op by priority (highest first, then
//! name); the first whose predicates all hold and whose planner returns a plan emits it. A caller
//! may force a variant by name. When none takes the op, the error is a table of every variant and
//! why it declined.
//!
//! Lowering chooses, emission writes: a planner decides everything (instructions, widths,
//! registers, addresses) and returns a typed [`Plan`] or a typed [`Rejection`]; the plan's
//! [`Plan::emit`] only writes through the ptx-isa builder and never declines, so nothing is rolled
//! back and the next variant is never tried after a first one wrote.

use std::fmt;

use ptx_isa::{FunctionBuilder, TargetSet};

use super::op::{OpCtx, OpKind};
use super::reject::Rejection;

/// A named yes/no question about an op, with the reason when the answer is no.
#[derive(Clone, Copy)]
pub struct Predicate {
    /// The predicate's name (shown in the rejection table).
    pub name: &'static str,
    /// `Ok` when it holds, the rejection when it declines.
    pub check: fn(&OpCtx<'_>) -> Result<(), Rejection>,
}

impl fmt::Debug for Predicate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

/// What a variant decided for one op: everything the emission needs.
pub trait Plan {
    /// Writes the instructions. It declines nothing (the planner did the deciding); an error is
    /// the builder's (a form the target lacks, a module limit), not a reason to try another
    /// variant.
    fn emit(&self, k: &mut FunctionBuilder) -> ptx_isa::Result<()>;
}

/// A plan borrowed from the op it was made for.
pub type Planned<'a> = Box<dyn Plan + 'a>;

/// The last question a variant asks: the plan, or why there is none.
#[derive(Clone, Copy)]
pub struct Planner {
    /// Its name (shown in the rejection table when it declines).
    pub name: &'static str,
    /// Makes the plan.
    pub plan: for<'a> fn(&'a OpCtx<'a>) -> Result<Planned<'a>, Rejection>,
}

/// One way to lower an op.
#[derive(Clone, Copy)]
pub struct Variant {
    /// The op it lowers.
    pub op: OpKind,
    /// Its name, e.g. `copy.vector`.
    pub name: &'static str,
    /// The targets it can run on.
    pub targets: TargetSet,
    /// Higher is tried first.
    pub priority: i32,
    /// Whether it honours operands' run-time pitch and bounds ([`TileRef::pitch`],
    /// [`TileRef::bounds`]); the registry declines such operands for the others.
    ///
    /// [`TileRef::pitch`]: super::TileRef::pitch
    /// [`TileRef::bounds`]: super::TileRef::bounds
    pub views: bool,
    /// What must hold for it to apply, asked in order before the planner.
    pub predicates: &'static [Predicate],
    /// Makes the plan once the predicates hold.
    pub planner: Planner,
}

impl fmt::Debug for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (priority {})", self.name, self.priority)
    }
}

/// Why one variant did not take the op.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Declined {
    /// The variant.
    pub variant: &'static str,
    /// Its priority.
    pub priority: i32,
    /// The predicate (or planner) that declined, or `target`, `views`, `name`.
    pub predicate: &'static str,
    /// The reason.
    pub reason: Rejection,
}

/// A tile op that was not lowered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DispatchError {
    /// No variant takes the op: every variant of the op with the first predicate that declined.
    NoVariant {
        /// The op, its scope and its operands.
        op: String,
        /// One row per variant, in the order they were tried.
        declined: Vec<Declined>,
    },
    /// The chosen variant's plan failed to write (a builder error).
    Emit {
        /// The op, its scope and its operands.
        op: String,
        /// The variant whose plan it was.
        variant: &'static str,
        /// The builder's error.
        error: Box<ptx_isa::Error>,
    },
}

impl fmt::Display for DispatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (op, declined) = match self {
            DispatchError::Emit { op, variant, error } => {
                return write!(
                    f,
                    "{variant} planned {op}\n  and could not write it: {error}"
                );
            }
            DispatchError::NoVariant { op, declined } => (op, declined),
        };
        writeln!(f, "no variant lowers {op}")?;
        // Each column as wide as its longest entry and at least its heading.
        let width = |len: fn(&Declined) -> usize, heading: usize| {
            declined.iter().map(len).fold(heading, usize::max)
        };
        let (w, p) = (
            width(|d| d.variant.len(), 7),
            width(|d| d.predicate.len(), 9),
        );
        writeln!(
            f,
            "  {:<w$} | priority | {:<p$} | reason",
            "variant", "predicate"
        )?;
        for d in declined {
            writeln!(
                f,
                "  {:<w$} | {:>8} | {:<p$} | {}",
                d.variant, d.priority, d.predicate, d.reason
            )?;
        }
        Ok(())
    }
}

impl std::error::Error for DispatchError {}

/// Every registered variant.
pub fn variants() -> &'static [Variant] {
    super::variants::ALL
}

/// The variants of `op` in the order dispatch tries them: priority descending, then name.
pub fn candidates(op: OpKind) -> Vec<&'static Variant> {
    let mut v: Vec<&Variant> = variants().iter().filter(|x| x.op == op).collect();
    v.sort_by(|a, b| b.priority.cmp(&a.priority).then(a.name.cmp(b.name)));
    v
}

/// `v`'s plan for `ctx`, or the first question that declined it (its name and the rejection).
pub fn plan_with<'a>(
    v: &Variant,
    ctx: &'a OpCtx<'a>,
) -> Result<Planned<'a>, (&'static str, Rejection)> {
    if !v.targets.has(ctx.target) {
        return Err((
            "target",
            Rejection::Target {
                target: ctx.target,
                supported: v.targets,
            },
        ));
    }
    if !v.views {
        if let Some(t) = ctx.op.operands().into_iter().find(|t| t.is_view()) {
            return Err((
                "views",
                Rejection::View {
                    operand: t.to_string(),
                },
            ));
        }
    }
    for p in v.predicates {
        (p.check)(ctx).map_err(|r| (p.name, r))?;
    }
    (v.planner.plan)(ctx).map_err(|r| (v.planner.name, r))
}

/// Why `v` declines `ctx` (the first predicate that does), or `None` when it takes it.
pub fn why_not(v: &Variant, ctx: &OpCtx<'_>) -> Option<(&'static str, Rejection)> {
    plan_with(v, ctx).err()
}

/// The plan of the first variant that takes `ctx` (or of the variant named `force`), with that
/// variant: the choice, nothing written yet.
pub fn plan<'a>(
    ctx: &'a OpCtx<'a>,
    force: Option<&str>,
) -> Result<(&'static Variant, Planned<'a>), DispatchError> {
    let list = candidates(ctx.op.kind());
    if let Some(name) = force.filter(|n| !list.iter().any(|v| v.name == *n)) {
        return Err(DispatchError::NoVariant {
            op: ctx.to_string(),
            declined: vec![Declined {
                variant: "(forced)",
                priority: 0,
                predicate: "name",
                reason: Rejection::UnknownName {
                    op: ctx.op.kind(),
                    name: name.to_string(),
                },
            }],
        });
    }
    let mut declined = Vec::new();
    for v in list {
        if force.is_some_and(|n| n != v.name) {
            continue;
        }
        match plan_with(v, ctx) {
            Ok(p) => return Ok((v, p)),
            Err((predicate, reason)) => declined.push(Declined {
                variant: v.name,
                priority: v.priority,
                predicate,
                reason,
            }),
        }
    }
    Err(DispatchError::NoVariant {
        op: ctx.to_string(),
        declined,
    })
}

/// Plans `ctx` with the first variant that takes it (or with the variant named `force`), emits the
/// plan, and returns the variant's name.
pub fn dispatch(
    k: &mut FunctionBuilder,
    ctx: &OpCtx<'_>,
    force: Option<&str>,
) -> Result<&'static str, DispatchError> {
    let (v, p) = plan(ctx, force)?;
    p.emit(k).map_err(|error| DispatchError::Emit {
        op: ctx.to_string(),
        variant: v.name,
        error: Box::new(error),
    })?;
    Ok(v.name)
}

/// [`dispatch`], recording what the op does to a named barrier in `sync`: the bytes an
/// asynchronous copy delivers to the barrier it completes on ([`TileOp::completes_on`]), so the
/// protocol check compares them with the `expect_tx` announced there and a debug build's hang
/// records know them. The way kernels lower copies that complete on an mbarrier. As with
/// [`dispatch`], an op that fails has written nothing and recorded nothing.
///
/// [`TileOp::completes_on`]: super::TileOp::completes_on
pub fn dispatch_on(
    k: &mut FunctionBuilder,
    sync: &mut smem::pipeline::sync::BarrierSync,
    ctx: &OpCtx<'_>,
    force: Option<&str>,
) -> Result<&'static str, DispatchError> {
    let (v, p) = plan(ctx, force)?;
    let delivers = delivered(ctx, v.name)?;
    p.emit(k).map_err(|error| DispatchError::Emit {
        op: ctx.to_string(),
        variant: v.name,
        error: Box::new(error),
    })?;
    if let Some((at, bytes)) = delivers {
        sync.copy(at, bytes);
    }
    Ok(v.name)
}

/// The named barrier `ctx`'s op, planned by `variant`, completes on and the bytes it delivers
/// there, checked to fit the protocol's count before anything is written.
pub(crate) fn delivered(
    ctx: &OpCtx<'_>,
    variant: &'static str,
) -> Result<Option<(smem::pipeline::protocol::BarrierAt, u32)>, DispatchError> {
    let Some((at, bytes)) = ctx.op.completes_on() else {
        return Ok(None);
    };
    let bytes = u32::try_from(bytes).map_err(|_| DispatchError::Emit {
        op: ctx.to_string(),
        variant,
        error: Box::new(ptx_isa::Error::new(
            ptx_isa::ErrorKind::Invalid,
            format!("the copy delivers {bytes} bytes, more than an mbarrier's tx-count holds"),
        )),
    })?;
    Ok(Some((at, bytes)))
}
