//! Rules that span the instructions of one function, which no single row can check: one
//! `.cta_group` for the tcgen05 instructions of a function, and no stores to a kernel's
//! parameters.

use super::Ctx;
use crate::error::ErrorKind;
use crate::instr::{InstrRef, Operand};
use crate::module::{Function, FunctionKind};
use crate::parse::Pos;
use crate::space::AddrBase;

/// What the instructions of a function bring to the rules across them.
#[derive(Debug, Default)]
pub(crate) struct Across {
    /// Each tcgen05 instruction's `.cta_group::N`: the modifier, the opcode and the place.
    cta_groups: Vec<(String, String, Option<Pos>)>,
}

impl Across {
    /// Checks `i` (at `pos` in `f`) on its own and notes what the rules across instructions need.
    pub(crate) fn instruction(
        &mut self,
        cx: &mut Ctx<'_>,
        f: &Function,
        i: &InstrRef<'_>,
        pos: Option<Pos>,
    ) {
        // The mnemonic's first part is `tcgen05` (a builder's mnemonic may be dotted).
        let tcgen05 = i
            .mnemonic
            .strip_prefix("tcgen05")
            .is_some_and(|rest| rest.is_empty() || rest.starts_with('.'));
        if tcgen05 {
            if let Some(g) = i.modifiers.iter().find(|m| m.starts_with("cta_group::")) {
                self.cta_groups.push((g.to_string(), i.opcode(), pos));
            }
        }
        param_write(cx, f, i, pos);
    }

    /// PTX ISA 9.7.16 (tcgen05, "CTA pair"): the tcgen05 instructions of a kernel all name the
    /// same `.cta_group`; ptxas 13.0 refuses a function with both ("Function 'k' uses single
    /// CTA(.cta_group::1) and CTA pair granularity(.cta_group::2) and that is not allowed"),
    /// naming no line. Every tcgen05 instruction of such a function is reported, with the line
    /// of the first that names the other group. `cp.async.bulk.tensor ... .cta_group::2` is not
    /// a tcgen05 instruction and does not count (ptxas 13.0 takes it beside
    /// `tcgen05.alloc.cta_group::1`).
    pub(crate) fn finish(self, cx: &mut Ctx<'_>, f: &Function) {
        for (group, op, pos) in &self.cta_groups {
            let Some((other, _, at)) = self.cta_groups.iter().find(|(g, _, _)| g != group) else {
                continue;
            };
            let at = at.map_or(String::new(), |p| format!(" (line {})", p.line));
            cx.error(
                ErrorKind::MixedCtaGroup,
                *pos,
                format!(
                    "`{op}` names .{group} where another tcgen05 instruction{at} of `{}` names .{other}: one function uses one .cta_group (PTX ISA 9.7.16, tcgen05 CTA pair; ptxas 13.0 refuses both)",
                    f.name
                ),
            );
        }
    }
}

/// PTX ISA 5.1.6.1: kernel parameters are read-only. ptxas 13.0 refuses a store to a kernel
/// parameter by name ("Illegal to write to function input parameter") and crashes on
/// `st.param` through a register in a kernel on sm_90 and later (sm_80 takes it); a `.param`
/// declared in the kernel's body (a call's argument) may be stored to.
fn param_write(cx: &mut Ctx<'_>, f: &Function, i: &InstrRef<'_>, pos: Option<Pos>) {
    if f.kind != FunctionKind::Entry || i.mnemonic != "st" {
        return;
    }
    let param = i
        .modifiers
        .iter()
        .any(|m| m.as_ref() == "param" || m.starts_with("param::"));
    if !param {
        return;
    }
    let Some(Operand::Addr(a)) = i.operands.first() else {
        return;
    };
    let op = i.opcode();
    match &a.base {
        AddrBase::Symbol(s) if f.params.iter().any(|p| p.name == *s) => cx.error(
            ErrorKind::ParamWrite,
            pos,
            format!(
                "`{op}` stores to `{s}`, a parameter of kernel `{}`: kernel parameters are read-only (PTX ISA 5.1.6.1)",
                f.name
            ),
        ),
        AddrBase::Reg(r) if cx.target.is_some_and(|t| t.sm() >= 90) => {
            let t = cx.target.map_or(String::new(), |t| t.to_string());
            cx.error(
                ErrorKind::ParamWrite,
                pos,
                format!(
                    "`{op}` stores to the parameter space of kernel `{}` through `{r}`: kernel parameters are read-only (PTX ISA 5.1.6.1; ptxas 13.0 fails on it for {t})",
                    f.name
                ),
            );
        }
        _ => {}
    }
}
