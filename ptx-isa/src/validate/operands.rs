//! Operand checks: names declared, kinds (address or value) against the form's syntax pattern,
//! register types against the instruction's type (PTX ISA 6.1 "Operand Type Information", and the
//! relaxed size rule of `ld`/`st`/`cvt`, 9.7.9.8), vector widths (5.4.2), immediates, state spaces
//! (6.4 "Using Addresses") and branch targets. Each rule was held against ptxas 13.0.

use std::collections::HashMap;

use super::scope::{RegInfo, Scopes};
use super::{Ctx, SymbolKind, addr_base_name};
use crate::error::ErrorKind;
use crate::forms::Form;
use crate::instr::{Imm, Instruction, Operand};
use crate::parse::Pos;
use crate::space::{AddrBase, SharedScope, StateSpace};
use crate::types::{ScalarType, TypeKind};

/// Special registers ptxkit does not model but ptxas knows (PTX ISA chapter 10).
const OTHER_SREGS: &[&str] = &[
    "%envreg",
    "%pm",
    "%clock_hi",
    "%globaltimer_lo",
    "%globaltimer_hi",
    "%reserved_smem_offset",
    "%aggr_smem_size",
    "%current_graph_exec",
    "%lanemask",
];

/// What the operand checks can see: the register scopes, the function's parameters and local
/// variables, and which labels are visible from the instruction's block.
pub(crate) struct Env<'a> {
    pub scopes: &'a Scopes,
    pub locals: &'a HashMap<String, SymbolKind>,
    pub label_visible: &'a dyn Fn(&str) -> bool,
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

/// The type twice as wide (`mul.wide`): `.s32` gives `.s64`.
fn wide(t: ScalarType) -> Option<ScalarType> {
    use ScalarType::*;
    Some(match t {
        U16 => U32,
        U32 => U64,
        S16 => S32,
        S32 => S64,
        _ => return None,
    })
}

/// How an operand's register type must relate to the type it is used at.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Rule {
    /// Same size and compatible kind (PTX ISA 6.1).
    Agree,
    /// Compatible kind and at least as wide (`ld`, `st`, `cvt`).
    Wider,
}

impl Env<'_> {
    fn symbol_known(&self, cx: &Ctx<'_>, name: &str) -> bool {
        self.scopes.lookup(name).is_some()
            || self.locals.contains_key(name)
            || cx.globals.contains_key(name)
            || (self.label_visible)(name)
            || OTHER_SREGS.iter().any(|p| name.starts_with(p))
    }

    /// Reports names that nothing declares.
    pub fn declared(&self, cx: &mut Ctx<'_>, o: &Operand, op: &str, pos: Option<Pos>) {
        let branch = op.starts_with("bra") || op.starts_with("brx");
        match o {
            Operand::Reg(r) | Operand::NotPred(r) | Operand::SinkPair(r) => {
                self.reg_declared(cx, &r.to_string(), op, pos);
            }
            Operand::Pair(a, b) => {
                self.reg_declared(cx, &a.to_string(), op, pos);
                self.reg_declared(cx, &b.to_string(), op, pos);
            }
            Operand::NotSymbol(s) => self.reg_declared(cx, s, op, pos),
            Operand::NamedPair(a, b) => {
                self.declared(cx, a, op, pos);
                self.declared(cx, b, op, pos);
            }
            Operand::Symbol(s) => {
                if !self.symbol_known(cx, s) {
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
            Operand::Imm(_) | Operand::Sreg(_) | Operand::Sink => {}
        }
    }

    fn base_declared(&self, cx: &mut Ctx<'_>, b: &AddrBase, op: &str, pos: Option<Pos>) {
        match b {
            AddrBase::Reg(r) => self.reg_declared(cx, &r.to_string(), op, pos),
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
        if let Some(name) = addr_base_name(b) {
            if let Some(info) = self.scopes.lookup(&name) {
                if matches!(info.ty.kind(), TypeKind::Pred | TypeKind::Float) {
                    cx.error(
                        ErrorKind::OperandType,
                        pos,
                        format!(
                            "`{name}` is {}: an address register holds an integer",
                            info.ty
                        ),
                    );
                }
            }
        }
    }

    fn reg_declared(&self, cx: &mut Ctx<'_>, name: &str, op: &str, pos: Option<Pos>) {
        if self.scopes.lookup(name).is_none() {
            cx.error(
                ErrorKind::UndefinedRegister,
                pos,
                format!("register `{name}` is not declared"),
            );
            let _ = op;
        }
    }

    /// A guard register is a declared predicate.
    pub fn expect_pred(&self, cx: &mut Ctx<'_>, name: &str, op: &str, pos: Option<Pos>) {
        match self.scopes.lookup(name) {
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

    fn reg_of(&self, o: &Operand) -> Option<(String, RegInfo)> {
        let name = match o {
            Operand::Reg(r) => r.to_string(),
            Operand::Symbol(s) => s.to_string(),
            _ => return None,
        };
        let info = self.scopes.lookup(&name)?;
        info.vector.is_none().then_some((name, info))
    }

    fn expect(
        &self,
        cx: &mut Ctx<'_>,
        o: Option<&Operand>,
        want: ScalarType,
        rule: Rule,
        what: (&str, usize),
        pos: Option<Pos>,
    ) {
        let Some(o) = o else { return };
        let (op, n) = what;
        if let Operand::Vector(v) = o {
            for x in v {
                self.expect(cx, Some(x), want, rule, what, pos);
            }
            return;
        }
        if let Operand::Imm(i) = o {
            let float_imm = matches!(i, Imm::F32(_) | Imm::F64(_));
            let bad = match want.kind() {
                TypeKind::Float => !float_imm,
                TypeKind::Unsigned | TypeKind::Signed => float_imm,
                TypeKind::Pred | TypeKind::Bits => false,
            };
            if bad {
                cx.error(
                    ErrorKind::OperandType,
                    pos,
                    format!("operand {n} of `{op}`: the immediate `{i}` is not a {want} value"),
                );
            }
            return;
        }
        let Some((name, info)) = self.reg_of(o) else {
            return;
        };
        let ok = match rule {
            Rule::Agree => want.agrees_with(info.ty),
            Rule::Wider => kind_compatible(want, info.ty) && info.ty.bits() >= want.bits(),
        };
        if !ok {
            cx.error(
                ErrorKind::OperandType,
                pos,
                format!(
                    "operand {n} of `{op}`: `{name}` is {} where {want} is needed",
                    info.ty
                ),
            );
        }
    }

    /// Register types against the instruction's types.
    pub fn types(&self, cx: &mut Ctx<'_>, form: Form, i: &Instruction, pos: Option<Pos>) {
        let op = i.opcode();
        let types: Vec<ScalarType> = i.types().collect();
        let Some(&t) = types.first() else { return };
        let ops = &i.operands;
        let has = |m: &str| i.modifiers.iter().any(|x| x == m);
        let e = |cx: &mut Ctx<'_>, k: usize, want: ScalarType, rule: Rule| {
            self.expect(cx, ops.get(k), want, rule, (&op, k), pos);
        };
        use Form::*;
        match form {
            AddInt | SubInt | DivInt | RemInt | AbsInt | NegInt | MinInt | MaxInt | AddF32
            | AddF64 | SubF32 | SubF64 | MulF32 | MulF64 | FmaF32 | FmaF64 | DivF32 | DivF64
            | AbsF32 | AbsF64 | NegF32 | NegF64 | MinF32 | MinF64 | MaxF32 | MaxF64 | RcpF32
            | RcpF64 | RcpApproxF64 | SqrtF32 | SqrtF64 | RsqrtF32 | RsqrtF64 | SinF32 | CosF32
            | Lg2F32 | Ex2F32 | TanhF32 | And | Or | Xor | Not | Brev | AddCc | Addc | SubCc
            | Subc | Mul24 | Mad24 | Sad | Cnot | Copysign | Fns | Bmsk | Shf | AddF16
            | AddBf16 | SubF16 | SubBf16 | MulF16 | MulBf16 | FmaF16 | FmaBf16 | NegF16
            | NegBf16 | AbsF16 | AbsBf16 | MinF16 | MinBf16 | MaxF16 | MaxBf16 | TanhF16
            | TanhBf16 | Ex2F16 | Ex2Bf16 => {
                for k in 0..ops.len() {
                    e(cx, k, t, Rule::Agree);
                }
            }
            MulInt | MadInt => {
                // A `.wide` on a 64-bit type breaks a rule of the row (reported there).
                let w = if has("wide") { wide(t) } else { Some(t) };
                if let Some(w) = w {
                    e(cx, 0, w, Rule::Agree);
                    e(cx, 1, t, Rule::Agree);
                    e(cx, 2, t, Rule::Agree);
                    e(cx, 3, w, Rule::Agree);
                }
            }
            SetpInt | SetpF32 | SetpF64 | SetpF16 | SetpBf16 => {
                match ops.first() {
                    Some(Operand::Pair(_, _)) | Some(Operand::NamedPair(_, _)) => {}
                    _ => e(cx, 0, ScalarType::Pred, Rule::Agree),
                }
                e(cx, 1, t, Rule::Agree);
                e(cx, 2, t, Rule::Agree);
                if !matches!(
                    ops.get(3),
                    Some(Operand::NotPred(_) | Operand::NotSymbol(_))
                ) {
                    e(cx, 3, ScalarType::Pred, Rule::Agree);
                }
            }
            Set => {
                if let (Some(&d), Some(&a)) = (types.first(), types.get(1)) {
                    e(cx, 0, d, Rule::Agree);
                    e(cx, 1, a, Rule::Agree);
                    e(cx, 2, a, Rule::Agree);
                }
            }
            AtomInt | AtomF32 | AtomF64 | AtomF16 | AtomBf16 => {
                e(cx, 0, t, Rule::Agree);
                e(cx, 2, t, Rule::Agree);
                e(cx, 3, t, Rule::Agree);
            }
            RedInt | RedF32 | RedF64 | RedF16 | RedBf16 => e(cx, 1, t, Rule::Agree),
            MatchAny
                if matches!(
                    ops.first(),
                    Some(Operand::Pair(..) | Operand::NamedPair(..))
                ) =>
            {
                // PTX ISA 9.7.13.9: only match.all writes the predicate.
                cx.error(
                    ErrorKind::OperandKind,
                    pos,
                    format!("`{op}` writes no predicate: `d|p` is match.all's"),
                );
            }
            MatchAny | MatchAll => {
                if !matches!(
                    ops.first(),
                    Some(Operand::Pair(..) | Operand::NamedPair(..))
                ) {
                    e(cx, 0, ScalarType::B32, Rule::Agree);
                }
                e(cx, 1, t, Rule::Agree);
                e(cx, 2, ScalarType::B32, Rule::Agree);
            }
            Mapa => {
                e(cx, 0, t, Rule::Agree);
                e(cx, 1, t, Rule::Agree);
                e(cx, 2, ScalarType::U32, Rule::Agree);
            }
            Getctarank => {
                e(cx, 0, ScalarType::U32, Rule::Agree);
                e(cx, 1, t, Rule::Agree);
            }
            Selp => {
                for k in 0..3 {
                    e(cx, k, t, Rule::Agree);
                }
                e(cx, 3, ScalarType::Pred, Rule::Agree);
            }
            Shl | Shr => {
                e(cx, 0, t, Rule::Agree);
                e(cx, 1, t, Rule::Agree);
                e(cx, 2, ScalarType::U32, Rule::Agree);
            }
            Bfe => {
                e(cx, 0, t, Rule::Agree);
                e(cx, 1, t, Rule::Agree);
                e(cx, 2, ScalarType::U32, Rule::Agree);
                e(cx, 3, ScalarType::U32, Rule::Agree);
            }
            Bfi => {
                for k in 0..3 {
                    e(cx, k, t, Rule::Agree);
                }
                e(cx, 3, ScalarType::U32, Rule::Agree);
                e(cx, 4, ScalarType::U32, Rule::Agree);
            }
            Popc | Clz => {
                e(cx, 0, ScalarType::U32, Rule::Agree);
                e(cx, 1, t, Rule::Agree);
            }
            MovB128 => match ops.iter().position(|o| matches!(o, Operand::Vector(_))) {
                Some(k) => self.packed(cx, i, k, t, pos),
                None => {
                    for k in 0..ops.len() {
                        e(cx, k, t, Rule::Agree);
                    }
                }
            },
            // PTX ISA 9.7.13.15: the state is .b64, counts and transaction counts .u32, the
            // phase parity .u32, the waited-on result a predicate.
            MbarrierArrive
            | MbarrierArriveDrop
            | MbarrierArriveNoComplete
            | MbarrierArriveExpectTx => {
                if !matches!(ops.first(), Some(Operand::Sink)) {
                    e(cx, 0, ScalarType::B64, Rule::Agree);
                }
                e(cx, 2, ScalarType::U32, Rule::Agree);
            }
            MbarrierInit | MbarrierExpectTx | MbarrierCompleteTx => {
                e(cx, 1, ScalarType::U32, Rule::Agree);
            }
            MbarrierTestWait | MbarrierTryWait => {
                e(cx, 0, ScalarType::Pred, Rule::Agree);
                let state = if has("parity") {
                    ScalarType::U32
                } else {
                    ScalarType::B64
                };
                e(cx, 2, state, Rule::Agree);
                e(cx, 3, ScalarType::U32, Rule::Agree);
            }
            // PTX ISA 9.7.14.2: .f32 and .s32 fragments are registers of that type (.f16 ones
            // are packed .f16x2 in 32-bit registers).
            WmmaStore if matches!(t, ScalarType::F32 | ScalarType::S32) => {
                e(cx, 1, t, Rule::Agree);
            }
            WmmaLoad if matches!(t, ScalarType::F32 | ScalarType::S32) => {
                e(cx, 0, t, Rule::Agree);
            }
            WmmaMma => {
                if t == ScalarType::F32 {
                    e(cx, 0, t, Rule::Agree);
                }
                if types.get(1) == Some(&ScalarType::F32) {
                    e(cx, 3, ScalarType::F32, Rule::Agree);
                }
            }
            Mov => {
                let vector = ops.iter().position(|o| matches!(o, Operand::Vector(_)));
                match vector {
                    None => {
                        e(cx, 0, t, Rule::Agree);
                        if !matches!(ops.get(1), Some(Operand::Symbol(_)))
                            || self.reg_of(&ops[1]).is_some()
                        {
                            e(cx, 1, t, Rule::Agree);
                        }
                    }
                    Some(k) => self.packed(cx, i, k, t, pos),
                }
            }
            // PTX ISA 10: special registers are read as .u32/.u64 (.pred for the cluster flags);
            // ptxas: "Special register argument not allowed".
            MovSreg | MovSregCluster | MovSregTotalSmem if t.is_float() => {
                cx.error(
                    ErrorKind::OperandType,
                    pos,
                    format!("`{op}` reads a special register as {t}; they are integers"),
                );
            }
            MovSreg | MovSregCluster | MovSregTotalSmem => {
                e(cx, 0, t, Rule::Agree);
                if let Some(Operand::Sreg(s)) = ops.get(1) {
                    if s.ty().bits() != t.bits() {
                        cx.error(
                            ErrorKind::OperandType,
                            pos,
                            format!("`{op}`: `{s}` is {}, not {t}", s.ty()),
                        );
                    }
                }
            }
            Cvt => {
                if let (Some(&d), Some(&a)) = (types.first(), types.get(1)) {
                    e(cx, 0, d, Rule::Wider);
                    e(cx, 1, a, Rule::Wider);
                }
            }
            // PTX ISA 9.7.9.21: a .tf32 result is the 32-bit pattern of the value (a .b32
            // register), rounded from an .f32.
            CvtTf32F32 => {
                e(cx, 0, ScalarType::B32, Rule::Agree);
                e(cx, 1, ScalarType::F32, Rule::Agree);
            }
            // PTX ISA 9.7.9.21: a packed pair of halves is one 32-bit register, made of two .f32.
            CvtF16x2F32 | CvtBf16x2F32 => {
                e(cx, 0, ScalarType::B32, Rule::Agree);
                e(cx, 1, ScalarType::F32, Rule::Agree);
                e(cx, 2, ScalarType::F32, Rule::Agree);
            }
            Ld | LdOrdered | LdGlobalNc => {
                e(cx, 0, t, Rule::Wider);
            }
            St | StOrdered => {
                e(cx, 1, t, Rule::Wider);
            }
            Szext => {
                e(cx, 0, t, Rule::Agree);
                e(cx, 1, t, Rule::Agree);
                e(cx, 2, ScalarType::U32, Rule::Agree);
            }
            Bfind => {
                e(cx, 0, ScalarType::U32, Rule::Agree);
                e(cx, 1, t, Rule::Agree);
            }
            Testp => {
                e(cx, 0, ScalarType::Pred, Rule::Agree);
                e(cx, 1, t, Rule::Agree);
            }
            Isspacep => e(cx, 0, ScalarType::Pred, Rule::Agree),
            Slct => {
                for k in 0..3 {
                    e(cx, k, t, Rule::Agree);
                }
                if let Some(&c) = types.get(1) {
                    e(cx, 3, c, Rule::Agree);
                }
            }
            Movmatrix => {
                e(cx, 0, ScalarType::B32, Rule::Agree);
                e(cx, 1, ScalarType::B32, Rule::Agree);
            }
            Ldu => e(cx, 0, t, Rule::Wider),
            // PTX ISA 9.7.9.12/9.7.13.7: the value has the instruction's type.
            StAsync | StAsyncGlobal | RedAsync => e(cx, 1, t, Rule::Agree),
            // PTX ISA 9.7.16.10.10: ctaMask is a 16-bit register (ptxas 13.0 refuses an
            // immediate or a 32-bit register: "Arguments mismatch for instruction
            // 'tcgen05.commit'").
            Tcgen05Commit if ops.len() == 2 => {
                if let Some(Operand::Imm(_)) = ops.get(1) {
                    cx.error(
                        ErrorKind::OperandKind,
                        pos,
                        format!("`{op}`: ctaMask is a 16-bit register, not an immediate"),
                    );
                } else {
                    e(cx, 1, ScalarType::B16, Rule::Agree);
                }
            }
            // PTX ISA 9.7.9, tensormap.replace: `new_val` has the instruction's type.
            TensormapReplace | TensormapReplaceMode | TensormapReplaceAtomicity => {
                e(cx, 1, t, Rule::Agree);
            }
            TensormapReplaceOrd => {
                e(cx, 1, ScalarType::B32, Rule::Agree);
                e(cx, 2, t, Rule::Agree);
            }
            // PTX ISA 9.7.9.18: the policy is a 64-bit register.
            CreatepolicyFractional => e(cx, 0, ScalarType::B64, Rule::Agree),
            Cvta | CvtaCluster => {
                e(cx, 0, t, Rule::Agree);
                e(cx, 1, t, Rule::Agree);
            }
            _ => {}
        }
    }

    /// `mov.b64 d, {a, b}` / `mov.b64 {a, b}, d`: the elements share one size and fill the type.
    fn packed(&self, cx: &mut Ctx<'_>, i: &Instruction, k: usize, t: ScalarType, pos: Option<Pos>) {
        let op = i.opcode();
        let Some(Operand::Vector(v)) = i.operands.get(k) else {
            return;
        };
        let sizes: Vec<u32> = v
            .iter()
            .filter_map(|x| self.reg_of(x).map(|(_, info)| info.ty.bits()))
            .collect();
        let uniform = sizes.windows(2).all(|w| w[0] == w[1]);
        if !uniform || sizes.len() == v.len() && sizes.iter().sum::<u32>() != t.bits() {
            cx.error(
                ErrorKind::VectorWidth,
                pos,
                format!("`{op}`: the vector's elements do not make one {t}"),
            );
        }
        let other = 1 - k.min(1);
        self.expect(cx, i.operands.get(other), t, Rule::Agree, (&op, other), pos);
    }

    /// `.vN` against the data vector of `ld`/`st` (PTX ISA 5.4.2; ptxas: "Argument vector size
    /// mismatch").
    pub fn vectors(&self, cx: &mut Ctx<'_>, i: &Instruction, pos: Option<Pos>) {
        if !matches!(i.mnemonic.as_ref(), "ld" | "st" | "ldu") {
            return;
        }
        let op = i.opcode();
        let width = i.modifiers.iter().find_map(|m| match m.as_ref() {
            "v2" => Some(2),
            "v4" => Some(4),
            "v8" => Some(8),
            _ => None,
        });
        let data = if i.mnemonic == "st" {
            i.operands.get(1)
        } else {
            i.operands.first()
        };
        match (width, data) {
            (Some(n), Some(Operand::Vector(v))) if v.len() != n => cx.error(
                ErrorKind::VectorWidth,
                pos,
                format!("`{op}` moves a vector of {n}, not {}", v.len()),
            ),
            // PTX ISA 9.7.9.12 gives `st.async.vN` a vector of N; ptxas 13.0 accepts one
            // register there (sm_90 to sm_120a).
            (Some(n), Some(o))
                if !matches!(o, Operand::Vector(_))
                    && i.modifiers.first().is_some_and(|m| m == "async") =>
            {
                cx.warning(
                    pos,
                    format!(
                        "`{op}` stores one register where PTX ISA 9.7.9.12 writes a vector of {n}; ptxas 13.0 takes it"
                    ),
                );
            }
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
    pub fn spaces(&self, cx: &mut Ctx<'_>, i: &Instruction, pos: Option<Pos>) {
        if !matches!(
            i.mnemonic.as_ref(),
            "ld" | "st" | "ldu" | "atom" | "red" | "prefetch" | "mbarrier"
        ) {
            return;
        }
        let op = i.opcode();
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
            (is_async && matches!(i.mnemonic.as_ref(), "st" | "red"))
                .then_some(StateSpace::Shared(SharedScope::Cluster))
        });
        for o in &i.operands {
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
                    let Some(name) = addr_base_name(base) else {
                        continue;
                    };
                    let Some(info) = self.scopes.lookup(&name) else {
                        continue;
                    };
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

    /// ptxas 13.0 refuses `cp.async.bulk.shared::cluster.global` whose global source is a 32-bit
    /// register on sm_120 and sm_120a ("Arguments mismatch for instruction 'mov'"), where sm_90
    /// and sm_100a take it; PTX ISA 9.7.9.25.4.1 writes a global address, 64-bit under
    /// `.address_size 64`.
    pub fn bulk_source(&self, cx: &mut Ctx<'_>, form: Form, i: &Instruction, pos: Option<Pos>) {
        let cluster = i.modifiers.iter().any(|m| m == "shared::cluster");
        if form != Form::CpAsyncBulkG2S || !cluster || cx.target.is_none_or(|t| t.sm() != 120) {
            return;
        }
        let Some(Operand::Addr(a)) = i.operands.get(1) else {
            return;
        };
        let Some(name) = addr_base_name(&a.base) else {
            return;
        };
        if self.scopes.lookup(&name).is_some_and(|r| r.ty.bits() == 32) {
            let op = i.opcode();
            let t = cx.target.map_or(String::new(), |t| t.to_string());
            cx.error(
                ErrorKind::OperandType,
                pos,
                format!(
                    "`{op}`: the global source `{name}` is a 32-bit register; ptxas 13.0 on {t} needs a 64-bit one ({})",
                    form.spec().name
                ),
            );
        }
    }

    /// `bra` goes to a label; `call` calls a function.
    pub fn targets(&self, cx: &mut Ctx<'_>, i: &Instruction, pos: Option<Pos>) {
        let op = i.opcode();
        match i.mnemonic.as_ref() {
            "bra" => match i.operands.first() {
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
pub(crate) fn kinds(cx: &mut Ctx<'_>, form: Form, i: &Instruction, pos: Option<Pos>) {
    let pattern = form.pattern();
    let slots = pattern.operands();
    let fixed = pattern.fixed_operands();
    let all_present = i.operands.len() == slots.len();
    let op = i.opcode();
    for (k, o) in i.operands.iter().enumerate() {
        if k >= fixed && !all_present {
            break;
        }
        let Some(slot) = slots.get(k) else { break };
        let name = &slot.name;
        // ptxas 13.0 also takes a bare register for the destination of a tensor copy.
        let lenient = k == 0 && matches!(form, Form::TmaLoad | Form::TmaLoadIm2col);
        // The acquire form of `fence.proxy.tensormap` names `[addr]` (PTX ISA 9.7.13.4).
        let bracketed = form == Form::FenceProxyTensormap && k == 0;
        let want_addr = (slot.is_address() || bracketed) && !lenient;
        let is_addr = matches!(o, Operand::Addr(_) | Operand::Tensor { .. });
        if want_addr && !is_addr {
            cx.error(
                ErrorKind::OperandKind,
                pos,
                format!("operand {k} of `{op}` is an address `{name}` (in brackets)"),
            );
        }
        // The other direction is not checked: pattern names such as `addr` or `a` stand for an
        // address in some uses and a value in others (`fence.proxy.tensormap`, `tcgen05.mma`).
    }
}

/// Operand counts that depend on the modifiers. (Immediate ranges are rules of the rows:
/// [`crate::forms::rules`].)
pub(crate) fn counts(cx: &mut Ctx<'_>, form: Form, i: &Instruction, pos: Option<Pos>) {
    let op = i.opcode();
    use Form::*;
    let has = |m: &str| i.modifiers.iter().any(|x| x == m);
    let n = i.operands.len();
    let mut count = |ok: bool, why: &str| {
        if !ok {
            cx.error(
                ErrorKind::OperandCount,
                pos,
                format!("`{op}` {why}, not {n}"),
            );
        }
    };
    match form {
        // PTX ISA 9.7.5.2/9.7.5.1: a boolean operation combines with the predicate `c`.
        SetpInt | SetpF32 | SetpF64 | SetpF16 | SetpBf16 | Set => {
            let boolean = has("and") || has("or") || has("xor");
            let base = 3;
            count(
                n == base + usize::from(boolean),
                if boolean {
                    "with a boolean operation takes the predicate `c` too"
                } else {
                    "takes `c` only with a boolean operation"
                },
            );
        }
        // PTX ISA 9.7.13.4: the acquire form names the address and size; release names none.
        FenceProxyTensormap => count(
            if has("acquire") { n == 2 } else { n == 0 },
            if has("acquire") {
                "(acquire) takes the address and the size"
            } else {
                "(release) takes no operands"
            },
        ),
        _ => {}
    }
}
