//! The dispatch registry: variants filed per (op, targets) with a name, a priority and a list of
//! predicates. Dispatch tries the variants of an op by priority (highest first, then name) and
//! uses the first whose predicates all hold and whose lowering succeeds; a caller may force a
//! variant by name. When none matches, the error is a table of every variant and why it declined.
//!
//! Lowering chooses; the PTX builder is the only thing that writes instructions. A lowering that
//! fails halfway is rolled back ([`FunctionBuilder::rollback`]) before the next variant is tried.

use std::fmt;

use ptx_isa::{FunctionBuilder, TargetSet};

use super::op::{OpCtx, OpKind};

/// A named yes/no question about an op, with the reason when the answer is no.
#[derive(Clone, Copy)]
pub struct Predicate {
    /// The predicate's name (shown in the rejection table).
    pub name: &'static str,
    /// `Ok` when it holds, `Err(reason)` when it declines.
    pub check: fn(&OpCtx<'_>) -> Result<(), String>,
}

impl fmt::Debug for Predicate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
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
    /// What must hold for it to apply.
    pub predicates: &'static [Predicate],
    /// Writes the instructions.
    pub lower: fn(&mut FunctionBuilder, &OpCtx<'_>) -> ptx_isa::Result<()>,
}

impl fmt::Debug for Variant {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (priority {})", self.name, self.priority)
    }
}

/// Why one variant did not lower the op.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Declined {
    /// The variant.
    pub variant: &'static str,
    /// Its priority.
    pub priority: i32,
    /// The predicate that declined (or `target`, or `lowering`).
    pub predicate: &'static str,
    /// The reason.
    pub reason: String,
}

/// No variant lowered the op: every variant of the op with the first predicate that declined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DispatchError {
    /// The op, its scope and its operands.
    pub op: String,
    /// One row per variant, in the order they were tried.
    pub declined: Vec<Declined>,
}

impl fmt::Display for DispatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "no variant lowers {}", self.op)?;
        let w = self
            .declined
            .iter()
            .map(|d| d.variant.len())
            .max()
            .unwrap_or(7)
            .max(7);
        let p = self
            .declined
            .iter()
            .map(|d| d.predicate.len())
            .max()
            .unwrap_or(9)
            .max(9);
        writeln!(
            f,
            "  {:<w$} | priority | {:<p$} | reason",
            "variant", "predicate"
        )?;
        for d in &self.declined {
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

/// Why `v` declines `ctx` (the first predicate that does), or `None` when every predicate holds.
pub fn why_not(v: &Variant, ctx: &OpCtx<'_>) -> Option<(&'static str, String)> {
    if !v.targets.has(ctx.target) {
        return Some((
            "target",
            format!("{} lacks it (targets: {})", ctx.target, v.targets.names()),
        ));
    }
    v.predicates
        .iter()
        .find_map(|p| (p.check)(ctx).err().map(|r| (p.name, r)))
}

/// Lowers `ctx` with the first variant that applies (or with the variant named `force`), and
/// returns its name.
pub fn dispatch(
    k: &mut FunctionBuilder,
    ctx: &OpCtx<'_>,
    force: Option<&str>,
) -> Result<&'static str, DispatchError> {
    let mut declined = Vec::new();
    let list = candidates(ctx.op.kind());
    if let Some(name) = force {
        if !list.iter().any(|v| v.name == name) {
            declined.push(Declined {
                variant: "(forced)",
                priority: 0,
                predicate: "name",
                reason: format!("no {} variant is called `{name}`", ctx.op.kind()),
            });
            return Err(DispatchError {
                op: ctx.to_string(),
                declined,
            });
        }
    }
    for v in list {
        if force.is_some_and(|n| n != v.name) {
            continue;
        }
        if let Some((predicate, reason)) = why_not(v, ctx) {
            declined.push(Declined {
                variant: v.name,
                priority: v.priority,
                predicate,
                reason,
            });
            continue;
        }
        let checkpoint = k.checkpoint();
        match (v.lower)(k, ctx) {
            Ok(()) => return Ok(v.name),
            Err(e) => {
                k.rollback(checkpoint);
                declined.push(Declined {
                    variant: v.name,
                    priority: v.priority,
                    predicate: "lowering",
                    reason: e.to_string(),
                });
            }
        }
    }
    Err(DispatchError {
        op: ctx.to_string(),
        declined,
    })
}
