//! Operand checks: names declared, kinds (address or value) against the form's syntax pattern,
//! register types against the instruction's type (PTX ISA 6.1 "Operand Type Information", and the
//! relaxed size rule of `ld`/`st`/`cvt`, 9.7.9.8), vector widths (5.4.2), immediates, state spaces
//! (6.4 "Using Addresses") and branch targets. Each rule was held against ptxas 13.0.

use std::collections::HashMap;

use super::scope::{RegInfo, Scopes};
use super::{Ctx, SymbolKind};
use crate::error::ErrorKind;
use crate::forms::Form;
use crate::forms::operand_types::{self, Fit};
use crate::forms::rules::{Check, rules_of};
use crate::instr::{Imm, InstrRef, OpcodeText, Operand};
use crate::parse::Pos;
use crate::space::{AddrBase, SharedScope, StateSpace};
use crate::sreg::SpecialReg;
use crate::target::{PtxVersion, v};
use crate::types::{ScalarType, TypeKind};

/// Special registers ptxkit does not model but ptxas knows (PTX ISA chapter 10), by prefix, with
/// the first PTX version and SM that have them where those are later than sm_75's (measured with
/// ptxas 13.0: "Feature '%reserved_smem_offset_1' requires PTX ISA .version 7.6 or later",
/// "... requires .target sm_80 or higher").
const OTHER_SREGS: &[(&str, PtxVersion, u32)] = &[
    ("%envreg", v(1, 0), 0),
    ("%pm", v(1, 0), 0),
    ("%clock_hi", v(1, 0), 0),
    ("%globaltimer_lo", v(1, 0), 0),
    ("%globaltimer_hi", v(1, 0), 0),
    // 10.32 %reserved_smem_offset_{begin,end,cap,<2>}: PTX 7.6, sm_80.
    ("%reserved_smem_offset", v(7, 6), 80),
    // 10.33 %aggr_smem_size: PTX 8.1, sm_90.
    ("%aggr_smem_size", v(8, 1), 90),
    // 10.35 %current_graph_exec: PTX 8.0.
    ("%current_graph_exec", v(8, 0), 0),
    ("%lanemask", v(1, 0), 0),
];

/// What the operand checks can see: the register scopes, the function's parameters and local
/// variables, and which labels are visible from the instruction's block.
pub(crate) struct Env<'a> {
    pub scopes: &'a Scopes<'a>,
    pub locals: &'a HashMap<String, SymbolKind>,
    pub label_visible: &'a dyn Fn(&str) -> bool,
    /// For the name of a `.branchtargets` list: whether it is declared before the instruction in
    /// a block that encloses it (`None`: no list has that name).
    pub target_list: &'a dyn Fn(&str) -> Option<bool>,
}

fn kind_compatible(inst: ScalarType, reg: ScalarType) -> bool {
    match (inst.kind(), reg.kind()) {
        (TypeKind::Pred, TypeKind::Pred) => true,
        (TypeKind::Pred, _) | (_, TypeKind::Pred) => false,
        (TypeKind::Bits, _) | (_, TypeKind::Bits) => true,
        (TypeKind::Unsigned | TypeKind::Signed, TypeKind::Unsigned | TypeKind::Signed) => true,
        (TypeKind::Float, TypeKind::Float) => inst == reg,
        _ => false,
    }
}

/// Whether special register `s` may be read as `want` in a slot that fits registers by `fit`:
/// as an integer of its own width; by `cvt` (its source slot fits a wider register, PTX ISA
/// 9.7.9.21) as a narrower integer, as ptxas 13.0 takes `cvt.u32.u16 %r, %laneid` and refuses
/// `cvt.u32.u64 %r, %tid.x`; by `mov` at the width the register had before the PTX ISA widened it
/// ([`SpecialReg::legacy_bits`]: `mov.u16 %rh, %tid.x`).
fn sreg_reads_as(s: SpecialReg, want: ScalarType, fit: Fit, mnemonic: &str) -> bool {
    let ty = s.ty();
    if want.agrees_with(ty) {
        return true;
    }
    let narrower = kind_compatible(want, ty) && want.bits() < ty.bits();
    match fit {
        Fit::Wider => narrower && mnemonic == "cvt",
        _ => {
            narrower && mnemonic == "mov" && s.legacy_bits().is_some_and(|bits| want.bits() >= bits)
        }
    }
}

impl Env<'_> {
    fn symbol_known(&self, cx: &Ctx<'_>, name: &str) -> bool {
        self.scopes.lookup(name).is_some()
            || self.locals.contains_key(name)
            || cx.globals.contains_key(name)
            || (self.label_visible)(name)
            || OTHER_SREGS.iter().any(|(p, _, _)| name.starts_with(p))
    }

    /// An unmodelled special register ([`OTHER_SREGS`]) in a version or on a target that lacks it.
    fn other_sreg_gated(&self, cx: &mut Ctx<'_>, name: &str, pos: Option<Pos>) {
        let Some((_, first, sm)) = OTHER_SREGS.iter().find(|(p, _, _)| name.starts_with(p)) else {
            return;
        };
        if *first > cx.version {
            cx.error(
                ErrorKind::PtxVersionTooLow,
                pos,
                format!(
                    "`{name}` needs PTX ISA {first}; the module says .version {}",
                    cx.version
                ),
            );
        }
        if let Some(t) = cx.target.filter(|t| t.sm() < *sm) {
            cx.error(
                ErrorKind::UnsupportedTarget,
                pos,
                format!("{t} lacks `{name}` (sm_{sm} and later have it)"),
            );
        }
    }

    /// Reports names that nothing declares.
    pub fn declared(&self, cx: &mut Ctx<'_>, o: &Operand, op: OpcodeText<'_>, pos: Option<Pos>) {
        match o {
            Operand::Reg(r) | Operand::NotPred(r) | Operand::SinkPair(r) => {
                self.reg_declared(cx, self.scopes.lookup_reg(*r), r, pos);
            }
            Operand::Pair(a, b) => {
                self.reg_declared(cx, self.scopes.lookup_reg(*a), a, pos);
                self.reg_declared(cx, self.scopes.lookup_reg(*b), b, pos);
            }
            Operand::NotSymbol(s) => self.reg_declared(cx, self.scopes.lookup(s), s, pos),
            Operand::NamedPair(a, b) => {
                self.declared(cx, a, op, pos);
                self.declared(cx, b, op, pos);
            }
            Operand::Symbol(s) => {
                if s.starts_with('%') {
                    self.other_sreg_gated(cx, s, pos);
                }
                if !self.symbol_known(cx, s) {
                    let branch =
                        op.mnemonic().starts_with("bra") || op.mnemonic().starts_with("brx");
                    let (kind, what) = if branch {
                        (
                            ErrorKind::UndefinedLabel,
                            "no label of that name is placed in a block that encloses it",
                        )
                    } else {
                        (
                            ErrorKind::UndefinedRegister,
                            "no register, variable, parameter, label or function has that name",
                        )
                    };
                    cx.error(
                        kind,
                        pos,
                        format!("`{s}` in `{op}` is not declared: {what}"),
                    );
                }
            }
            Operand::Label(l) => {
                if !(self.label_visible)(&l.to_string()) {
                    cx.error(
                        ErrorKind::UndefinedLabel,
                        pos,
                        format!("label `{l}` in `{op}` is not placed in a block that encloses it"),
                    );
                }
            }
            Operand::Addr(a) => self.base_declared(cx, &a.base, op, pos),
            Operand::Tensor { map, coords } => {
                self.base_declared(cx, map, op, pos);
                for c in coords {
                    self.declared(cx, c, op, pos);
                }
            }
            Operand::Vector(v) | Operand::List(v) => {
                for x in v {
                    self.declared(cx, x, op, pos);
                }
            }
            Operand::Video { value, .. } => self.declared(cx, value, op, pos),
            Operand::Element { array, .. } => {
                if !self.symbol_known(cx, array) {
                    cx.error(
                        ErrorKind::UndefinedRegister,
                        pos,
                        format!("array `{array}` in `{op}` is not declared"),
                    );
                }
            }
            Operand::Imm(_) | Operand::Sreg(_) | Operand::Sink => {}
        }
    }

    fn base_declared(&self, cx: &mut Ctx<'_>, b: &AddrBase, op: OpcodeText<'_>, pos: Option<Pos>) {
        match b {
            AddrBase::Reg(r) => self.reg_declared(cx, self.scopes.lookup_reg(*r), r, pos),
            AddrBase::Symbol(s) => {
                if !self.symbol_known(cx, s) {
                    cx.error(
                        ErrorKind::UndefinedRegister,
                        pos,
                        format!("address `[{s}]` in `{op}`: `{s}` is not declared"),
                    );
                }
            }
            AddrBase::Absolute(_) => {}
        }
        // Address registers hold integers (ptxas: "Use integer or bit only"); a 32-bit one is a
        // window address, which the generic and global spaces do not have under .address_size 64.
        if let Some(info) = self.scopes.lookup_base(b) {
            if matches!(info.ty.kind(), TypeKind::Pred | TypeKind::Float) {
                cx.error(
                    ErrorKind::OperandType,
                    pos,
                    format!(
                        "`{}` is {}: an address register holds an integer",
                        b, info.ty
                    ),
                );
            }
        }
    }

    /// Reports register `name` when its lookup `found` nothing.
    fn reg_declared(
        &self,
        cx: &mut Ctx<'_>,
        found: Option<RegInfo>,
        name: impl std::fmt::Display,
        pos: Option<Pos>,
    ) {
        if found.is_none() {
            cx.error(
                ErrorKind::UndefinedRegister,
                pos,
                format!("register `{name}` is not declared"),
            );
        }
    }

    /// A guard register (`found` by its lookup, named `name`) is a declared predicate.
    pub fn expect_pred(
        &self,
        cx: &mut Ctx<'_>,
        found: Option<RegInfo>,
        name: impl std::fmt::Display,
        op: OpcodeText<'_>,
        pos: Option<Pos>,
    ) {
        match found {
            None => cx.error(
                ErrorKind::UndefinedRegister,
                pos,
                format!("guard register `{name}` of `{op}` is not declared"),
            ),
            Some(i) if i.ty != ScalarType::Pred => cx.error(
                ErrorKind::OperandType,
                pos,
                format!("guard `{name}` of `{op}` is {}, not .pred", i.ty),
            ),
            _ => {}
        }
    }

    /// The width of a vector register operand (`%v` of `.reg .v4 .f32 %v;`).
    fn vector_register(&self, o: &Operand) -> Option<crate::types::VectorWidth> {
        match o {
            Operand::Symbol(s) => self.scopes.lookup(s)?.vector,
            _ => None,
        }
    }

    /// The declaration of a scalar register operand (named as its `Display` writes it).
    fn reg_of(&self, o: &Operand) -> Option<RegInfo> {
        let info = match o {
            Operand::Reg(r) => self.scopes.lookup_reg(*r)?,
            Operand::Symbol(s) => self.scopes.lookup(s)?,
            _ => return None,
        };
        info.vector.is_none().then_some(info)
    }

    fn expect(
        &self,
        cx: &mut Ctx<'_>,
        o: Option<&Operand>,
        want: ScalarType,
        fit: Fit,
        what: (OpcodeText<'_>, usize, &str),
        pos: Option<Pos>,
    ) {
        let Some(o) = o else { return };
        let (op, n, slot) = what;
        let refusal = match o {
            // A selected byte or half-word of a register is typed as the register (PTX ISA 9.7.18).
            Operand::Video { value, .. } => {
                return self.expect(cx, Some(value), want, fit, what, pos);
            }
            Operand::Vector(_) if fit == Fit::Scalar => Some((
                ErrorKind::OperandKind,
                format!("`{op}`: {slot} (operand {n}) is one {want} value, not a vector"),
            )),
            Operand::Vector(v) | Operand::Tensor { coords: v, .. } => {
                for (e, x) in v.iter().enumerate() {
                    // An array geometry's first coordinate is the array index.
                    let (want, fit) = match fit {
                        Fit::ArrayIndex if e == 0 => (ScalarType::S32, Fit::Agree),
                        Fit::ArrayIndex | Fit::ScalarOr(_) => (want, Fit::Agree),
                        f => (want, f),
                    };
                    self.expect(cx, Some(x), want, fit, what, pos);
                }
                None
            }
            Operand::Imm(_) if fit == Fit::Register => Some((
                ErrorKind::OperandKind,
                format!(
                    "`{op}`: {slot} is a {}-bit register (operand {n}), not an immediate",
                    want.bits()
                ),
            )),
            Operand::Imm(i) => {
                let float_imm = matches!(i, Imm::F32(_) | Imm::F64(_));
                let bad = match want.kind() {
                    TypeKind::Float => !float_imm,
                    TypeKind::Unsigned | TypeKind::Signed => float_imm,
                    TypeKind::Pred | TypeKind::Bits => false,
                };
                bad.then(|| {
                    (
                        ErrorKind::OperandType,
                        format!("operand {n} of `{op}`: the immediate `{i}` is not a {want} value"),
                    )
                })
            }
            // PTX ISA 10: a special register is read as an integer of its own width (ptxas:
            // "Special register argument not allowed"), or of a legacy width.
            Operand::Sreg(s) => (!sreg_reads_as(*s, want, fit, op.mnemonic())).then(|| {
                (
                    ErrorKind::OperandType,
                    format!("`{op}`: `{s}` is {}, not {want}", s.ty()),
                )
            }),
            _ => self.reg_refusal(o, want, fit, (op, n)),
        };
        if let Some((kind, message)) = refusal {
            cx.error(kind, pos, message);
        }
    }

    /// A register (or a symbol of one) against the type `want` by `fit`: the refusal, if any.
    fn reg_refusal(
        &self,
        o: &Operand,
        want: ScalarType,
        fit: Fit,
        (op, n): (OpcodeText<'_>, usize),
    ) -> Option<(ErrorKind, String)> {
        let info = self.reg_of(o)?;
        let want = match fit {
            Fit::ScalarOr(t) => t,
            _ => want,
        };
        let ok = match fit {
            Fit::Agree
            | Fit::Packed
            | Fit::Register
            | Fit::Scalar
            | Fit::ArrayIndex
            | Fit::ScalarOr(_) => want.agrees_with(info.ty),
            Fit::Wider => kind_compatible(want, info.ty) && info.ty.bits() >= want.bits(),
        };
        (!ok).then(|| {
            (
                ErrorKind::OperandType,
                format!(
                    "operand {n} of `{op}`: `{o}` is {} where {want} is needed",
                    info.ty
                ),
            )
        })
    }

    /// Register types against the types the row gives its operands
    /// ([`crate::forms::operand_types`]).
    /// `types` are the instruction's ([`Instruction::type_list`]).
    pub fn types(
        &self,
        cx: &mut Ctx<'_>,
        form: Form,
        i: &InstrRef<'_>,
        types: &[ScalarType],
        pos: Option<Pos>,
    ) {
        let op = i.opcode_text();
        // ptxas 13.0 converts no special register to a floating-point type (`cvt.rn.f32.u32 %f,
        // %tid.x`: "Special register argument not allowed for instruction 'cvt'").
        if form == Form::Cvt && types.first().is_some_and(|t| t.is_float()) {
            if let Some(Operand::Sreg(s)) = i.operands.get(1) {
                cx.error(
                    ErrorKind::OperandType,
                    pos,
                    format!(
                        "`{op}`: `{s}` converts to no floating-point type (PTX ISA 9.7.9.21, 10)"
                    ),
                );
            }
        }
        for slot in operand_types::of(form) {
            if !operand_types::applies(slot.when, i.modifiers, types) {
                continue;
            }
            let Some(want) = operand_types::wanted(slot.want, types) else {
                continue;
            };
            let positions = if slot.operand == operand_types::ALL {
                0..i.operands.len()
            } else {
                slot.operand..slot.operand + 1
            };
            for k in positions {
                let o = i.operands.get(k);
                if slot.fit == Fit::Packed && matches!(o, Some(Operand::Vector(_))) {
                    self.packed(cx, i, k, want, pos);
                } else {
                    let name = form
                        .pattern()
                        .operands()
                        .get(k)
                        .map_or("", |s| s.name.as_str());
                    self.expect(cx, o, want, slot.fit, (op, k, name), pos);
                }
            }
        }
    }

    /// `mov.b64 d, {a, b}` / `mov.b64 {a, b}, d`: the elements share one size and fill the type.
    fn packed(
        &self,
        cx: &mut Ctx<'_>,
        i: &InstrRef<'_>,
        k: usize,
        t: ScalarType,
        pos: Option<Pos>,
    ) {
        let op = i.opcode_text();
        let Some(Operand::Vector(v)) = i.operands.get(k) else {
            return;
        };
        let sizes: Vec<u32> = v
            .iter()
            .filter_map(|x| self.reg_of(x).map(|info| info.ty.bits()))
            .collect();
        let uniform = sizes.windows(2).all(|w| w[0] == w[1]);
        if !uniform || sizes.len() == v.len() && sizes.iter().sum::<u32>() != t.bits() {
            cx.error(
                ErrorKind::VectorWidth,
                pos,
                format!("`{op}`: the vector's elements do not make one {t}"),
            );
        }
    }

    /// `.vN` against the data vector of the rows that write one (`ld`, `st`, `multimem`, `tex`,
    /// `suld`...): the first operand that is not an address (PTX ISA 5.4.2; ptxas: "Argument
    /// vector size mismatch").
    pub fn vectors(&self, cx: &mut Ctx<'_>, form: Form, i: &InstrRef<'_>, pos: Option<Pos>) {
        let p = form.pattern();
        // Per row, once (issue 33): whether the row writes `.v2`/`.v4`/`.v8`.
        static VECTOR_ROWS: std::sync::LazyLock<Vec<bool>> = std::sync::LazyLock::new(|| {
            Form::all()
                .iter()
                .map(|spec| {
                    spec.form
                        .pattern()
                        .elements()
                        .iter()
                        .flat_map(|e| e.alternatives().iter().flatten())
                        .any(|m| matches!(m.as_str(), "v2" | "v4" | "v8"))
                })
                .collect()
        });
        let vector_row = VECTOR_ROWS.get(form as usize).copied().unwrap_or(false);
        let Some(data_at) = p.operands().iter().position(|o| !o.is_address()) else {
            return;
        };
        if !vector_row {
            return;
        }
        let op = i.opcode_text();
        let width = i.modifiers.iter().find_map(|m| match m.as_ref() {
            "v2" => Some(2),
            "v4" => Some(4),
            "v8" => Some(8),
            _ => None,
        });
        let data = i.operands.get(data_at);
        match (width, data) {
            (Some(n), Some(Operand::Vector(v))) if v.len() != n => cx.error(
                ErrorKind::VectorWidth,
                pos,
                format!("`{op}` moves a vector of {n}, not {}", v.len()),
            ),
            // The row says when one register stands for the vector (`Check::OneForVector`).
            (Some(n), Some(o))
                if !matches!(o, Operand::Vector(_))
                    && rules_of(form).any(|r| r.check == Check::OneForVector) =>
            {
                cx.warning(
                    pos,
                    format!(
                        "`{op}` stores one register where PTX ISA {} writes a vector of {n}; ptxas 13.0 takes it",
                        form.spec().section.split(' ').next().unwrap_or_default()
                    ),
                );
            }
            // A vector register of the same width (`.reg .v4 .f32 %v;`, PTX ISA 5.4.2).
            (Some(n), Some(o)) if self.vector_register(o).is_some_and(|w| w.len() == n) => {}
            (Some(n), Some(o)) if !matches!(o, Operand::Vector(_)) => cx.error(
                ErrorKind::VectorWidth,
                pos,
                format!("`{op}` moves a vector of {n}: braces `{{...}}` of {n} registers"),
            ),
            (None, Some(Operand::Vector(v))) if v.len() > 1 => cx.error(
                ErrorKind::VectorWidth,
                pos,
                format!("`{op}` has a vector of {} but no `.v{}`", v.len(), v.len()),
            ),
            _ => {}
        }
    }

    /// The instruction's state space against the space of a variable or parameter it addresses
    /// (ptxas: "State space mismatch between instruction and address"), and address registers of
    /// 32 bits where only 64-bit addresses exist.
    pub fn spaces(&self, cx: &mut Ctx<'_>, i: &InstrRef<'_>, pos: Option<Pos>) {
        if !matches!(
            i.mnemonic,
            "ld" | "st" | "ldu" | "atom" | "red" | "prefetch" | "mbarrier"
        ) {
            return;
        }
        let op = i.opcode_text();
        let written = i.modifiers.iter().find_map(|m| match m.as_ref() {
            "global" => Some(StateSpace::Global),
            "shared" | "shared::cta" => Some(StateSpace::Shared(SharedScope::Implicit)),
            "shared::cluster" => Some(StateSpace::Shared(SharedScope::Cluster)),
            "local" => Some(StateSpace::Local),
            "const" => Some(StateSpace::Const),
            "param" => Some(StateSpace::Param),
            _ => None,
        });
        // PTX ISA 9.7.9.12/9.7.13.7: st.async and red.async address .shared::cluster whether or
        // not the qualifier is written.
        let is_async = i.modifiers.first().is_some_and(|m| m == "async");
        let space = written.or_else(|| {
            (is_async && matches!(i.mnemonic, "st" | "red"))
                .then_some(StateSpace::Shared(SharedScope::Cluster))
        });
        for o in i.operands {
            let Operand::Addr(a) = o else { continue };
            match &a.base {
                AddrBase::Symbol(s) if self.scopes.lookup(s).is_none() => {
                    let kind = self
                        .locals
                        .get(s.as_str())
                        .or_else(|| cx.globals.get(s.as_str()));
                    let Some(SymbolKind::Data(var_space)) = kind.copied() else {
                        continue;
                    };
                    let Some(space) = space else {
                        // PTX ISA 6.4.1 (generic addressing): a generic address reaches the
                        // .global, .shared and .local windows; .param and .const variables are
                        // read through their own space (ptxas: "State space mismatch between
                        // instruction and address").
                        if matches!(var_space, StateSpace::Param | StateSpace::Const) {
                            cx.error(
                                ErrorKind::OperandKind,
                                pos,
                                format!(
                                    "`{op}` addresses generically but `{s}` is a {var_space} variable: write .{}",
                                    var_space.to_string().trim_start_matches('.')
                                ),
                            );
                        }
                        continue;
                    };
                    let same = match (space, var_space) {
                        (StateSpace::Shared(_), StateSpace::Shared(_)) => true,
                        (a, b) => a == b,
                    };
                    if !same {
                        cx.error(
                            ErrorKind::OperandKind,
                            pos,
                            format!("`{op}` addresses {space} but `{s}` is a {var_space} variable"),
                        );
                    }
                }
                base => {
                    let Some(info) = self.scopes.lookup_base(base) else {
                        continue;
                    };
                    let name = base;
                    let window = matches!(
                        space,
                        Some(
                            StateSpace::Shared(_)
                                | StateSpace::Local
                                | StateSpace::Const
                                | StateSpace::Param
                        )
                    );
                    if info.ty.bits() == 32 && !window && cx.module.address_size() == 64 {
                        cx.error(
                            ErrorKind::OperandType,
                            pos,
                            format!(
                                "`{op}`: `{name}` is a 32-bit address; {} addresses are 64-bit under .address_size 64",
                                space.map_or("generic".to_string(), |s| s.to_string())
                            ),
                        );
                    }
                }
            }
        }
    }

    /// The address operands the row holds to 64-bit registers on some targets
    /// ([`Check::Address64On`]: `cp.async.bulk`'s global source on sm_120).
    pub fn bulk_source(&self, cx: &mut Ctx<'_>, form: Form, i: &InstrRef<'_>, pos: Option<Pos>) {
        let has = |m: &str| i.modifiers.iter().any(|x| x == m);
        for r in rules_of(form) {
            let Check::Address64On { operand, when, sm } = r.check else {
                continue;
            };
            if !when.iter().all(|w| has(w)) || cx.target.is_none_or(|t| t.sm() != sm) {
                continue;
            }
            let Some(Operand::Addr(a)) = i.operands.get(operand) else {
                continue;
            };
            let name = &a.base;
            if self
                .scopes
                .lookup_base(&a.base)
                .is_some_and(|r| r.ty.bits() == 32)
            {
                let op = i.opcode_text();
                let t = cx.target.map_or(String::new(), |t| t.to_string());
                cx.error(
                    ErrorKind::OperandType,
                    pos,
                    format!(
                        "`{op}`: operand {operand} `{name}` is a 32-bit register; ptxas 13.0 on {t} needs a 64-bit address (PTX ISA {})",
                        r.section
                    ),
                );
            }
        }
    }

    /// `bra` goes to a label; `brx.idx` indexes a `.branchtargets` list; `call` calls a function.
    pub fn targets(&self, cx: &mut Ctx<'_>, i: &InstrRef<'_>, pos: Option<Pos>) {
        let op = i.opcode_text();
        match i.mnemonic {
            // PTX ISA 9.7.12.4: `tlist` is a `.branchtargets` list "defined in the local function
            // scope before it is used" (ptxas: "Label expected for forward reference").
            "brx" | "brx.idx" => match i.operands.get(1) {
                Some(Operand::Symbol(s)) => match (self.target_list)(s) {
                    Some(true) => {}
                    Some(false) => cx.error(
                        ErrorKind::UndefinedLabel,
                        pos,
                        format!("`{op}` names the list `{s}` before it is declared, or outside its block"),
                    ),
                    None => cx.error(
                        ErrorKind::OperandKind,
                        pos,
                        format!("`{op}` indexes a `.branchtargets` list; `{s}` is none"),
                    ),
                },
                _ => cx.error(
                    ErrorKind::OperandKind,
                    pos,
                    format!("`{op}` indexes a `.branchtargets` list"),
                ),
            },
            "bra" => match i.operands.first() {
                Some(Operand::Symbol(s)) if (self.target_list)(s).is_some() => cx.error(
                    ErrorKind::OperandKind,
                    pos,
                    format!("`{op}` branches to a label; `{s}` is a `.branchtargets` list"),
                ),
                Some(Operand::Label(_)) => {}
                Some(Operand::Symbol(s)) if (self.label_visible)(s) => {}
                Some(Operand::Symbol(_)) => {} // reported as undeclared
                _ => cx.error(
                    ErrorKind::OperandKind,
                    pos,
                    format!("`{op}` branches to a label"),
                ),
            },
            "call" => {
                let target = i.operands.iter().find(|o| !matches!(o, Operand::List(_)));
                match target {
                    Some(Operand::Symbol(s))
                        if matches!(cx.globals.get(s.as_ref()), Some(SymbolKind::Function)) => {}
                    Some(Operand::Symbol(s)) if self.scopes.lookup(s).is_some() => {}
                    Some(Operand::Reg(_)) => {}
                    Some(Operand::Symbol(s)) => cx.error(
                        ErrorKind::BadName,
                        pos,
                        format!("`{op}` calls `{s}`, which is not a function of this module"),
                    ),
                    _ => cx.error(
                        ErrorKind::OperandKind,
                        pos,
                        format!("`{op}` needs a function to call"),
                    ),
                }
            }
            _ => {}
        }
    }
}

/// Operand kinds against the form's pattern: an operand written `[a]` takes an address.
pub(crate) fn kinds(cx: &mut Ctx<'_>, form: Form, i: &InstrRef<'_>, pos: Option<Pos>) {
    let pattern = form.pattern();
    let slots = pattern.operands();
    let fixed = pattern.fixed_operands();
    let all_present = i.operands.len() == slots.len();
    let op = i.opcode_text();
    for (k, o) in i.operands.iter().enumerate() {
        if k >= fixed && !all_present {
            break;
        }
        let Some(slot) = slots.get(k) else { break };
        let name = &slot.name;
        // The kinds the row's slot takes (`[a]`, `a`, or both: `a/[a]`).
        let is_addr = matches!(o, Operand::Addr(_) | Operand::Tensor { .. });
        // An array element `a[1]` is an address, or a value in `mov` (PTX ISA 6.4.2:
        // `ld.global.u32 s, a[0];`, `mov.u32 s, a[1];`).
        let element = matches!(o, Operand::Element { .. });
        if !is_addr && !element && !slot.takes_value() {
            cx.error(
                ErrorKind::OperandKind,
                pos,
                format!("operand {k} of `{op}` is an address `{name}` (in brackets)"),
            );
        }
        // The other direction: an address where the pattern names a value (`[meta]` of
        // tcgen05.mma.sp in the place of the dense form's `idesc`; ptxas: "Arguments mismatch").
        if is_addr && !slot.takes_address() {
            cx.error(
                ErrorKind::OperandKind,
                pos,
                format!("operand {k} of `{op}` is a value `{name}`, not an address"),
            );
        }
        // A pair `d|p` only where the pattern writes one (PTX ISA 9.7.13.9: match.any writes no
        // predicate; match.all's `d{|p}` does).
        let pair = matches!(
            o,
            Operand::Pair(..) | Operand::NamedPair(..) | Operand::SinkPair(_)
        );
        if pair && !slot.takes_pair() {
            cx.error(
                ErrorKind::OperandKind,
                pos,
                format!("operand {k} of `{op}` is one register `{name}`: it writes no predicate"),
            );
        }
    }
}
