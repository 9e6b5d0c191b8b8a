//! The typed instruction builder: one method per instruction family, each returning `Result`.
//!
//! A [`FunctionBuilder`] hands out typed registers ([`FunctionBuilder::reg`]), labels and
//! parameters, and appends instructions. Every instruction is checked against the form table when it
//! is written: a form the target lacks is an error naming the form, the target and the targets that
//! have it; the PTX version it needs raises the module's `.version`.
//!
//! Families live in one file each: `arith` (integer, float, half), `bits`, `cmp`, `cvt`, `mov`,
//! `mem`, `atom`, `sync`, `warp`, `control`.

/// Builder methods that each hand their operands to one family emitter: a table of
/// `fn name<T: Bound>(params) => emitter(args);` rows, one public method each, or a
/// `family<T: Bound>(params) => emitter(.., shared args) { fn name(row args); ... }` whose methods
/// share one signature (the habit of `bin_methods!` and `int_mode_methods!` in `arith.rs`, for
/// families whose methods differ only in the row, mnemonic or type they pass on).
macro_rules! forward_methods {
    // A family: methods of one signature, each handing the emitter its own leading arguments (its
    // row, its opcode) and then the family's shared ones.
    (
        family<$t:ident: $bound:path>($($p:ident: $pt:ty),* $(,)?)
            => $emitter:ident(.., $($tail:expr),* $(,)?) { $($rows:tt)* }
    ) => {
        forward_methods! { @rows [$t: $bound] [$($p: $pt),*] [$emitter] [$($tail),*] $($rows)* }
    };
    (@rows [$t:ident: $bound:path] $params:tt $emitter:tt $tail:tt) => {};
    (
        @rows [$t:ident: $bound:path] [$($p:ident: $pt:ty),*] [$emitter:ident] [$($tail:expr),*]
        $(#[$doc:meta])* fn $name:ident($($head:expr),* $(,)?); $($rest:tt)*
    ) => {
        $(#[$doc])*
        pub fn $name<$t: $bound>(&mut self, $($p: $pt),*) -> Result<()> {
            self.$emitter($($head,)* $($tail),*)
        }
        forward_methods! { @rows [$t: $bound] [$($p: $pt),*] [$emitter] [$($tail),*] $($rest)* }
    };
    ($(
        $(#[$doc:meta])*
        fn $name:ident$(<$t:ident: $bound:path>)?($($p:ident: $pt:ty),* $(,)?)
            => $emitter:ident$(::<$($ta:ty),+>)?($($arg:expr),* $(,)?);
    )*) => {$(
        $(#[$doc])*
        pub fn $name$(<$t: $bound>)?(&mut self, $($p: $pt),*) -> Result<()> {
            self.$emitter$(::<$($ta),+>)?($($arg),*)
        }
    )*};
}

mod arith;
mod atom;
mod bits;
mod bulk;
mod cluster;
mod cmp;
mod control;
mod cp_async;
mod cvt;
mod matrix;
mod mbarrier;
mod mem;
mod mov;
mod printf;
mod sync;
mod tcgen05;
mod warp;
mod wgmma;

pub use arith::{DivMode, FloatMods, Rounding};
pub use atom::{AtomOp, AtomSem};
pub use bulk::{CtaGroup, TensorMapRef, TmaLoadOpts, TmaReduceOp};
pub use cluster::ClusterArrive;
pub use cmp::{BoolOp, CmpOp, PredSrc};
pub use cp_async::CpAsyncCache;
pub use cvt::{CvtMods, CvtRounding, F8Kind};
pub use matrix::{MatrixCount, MmaKind};
pub use mbarrier::{ArriveOpts, WaitOn};
pub use mem::{CacheOp, Evict, L2Evict, LdOpts, MemOrder, PrefetchSize, Scope, StOpts};
pub use mov::SharedSymbol;
pub use printf::{PrintfArg, PrintfClass, PrintfFormat, printf_conversions};
pub use sync::{BarrierLevel, FenceSem};
pub use tcgen05::{BlockScaleKind, MmaKindTc, TcA, TmemCpDecompress, TmemCpShape, TmemShape};
pub use warp::{ReduxOp, ShflMode, VoteMode};
pub use wgmma::{ScaleD, Wgmma, WgmmaA, WgmmaImm, WgmmaTypes};

use std::marker::PhantomData;

use crate::error::{Error, ErrorKind, Result};
use crate::forms::Form;
use crate::instr::{Guard, InstrRef, Instruction, Label, Operand};
use crate::module::{
    ArenaMark, Directive, Function, FunctionKind, InstrArena, Param, ParamKind, Statement,
    check_identifier,
};
use crate::reg::{Pred, Reg, RegClass, RegRef, ty};
use crate::space::StateSpace;
use crate::target::{PtxVersion, Target};
use crate::types::ScalarType;

/// A scalar or pointer parameter whose value loads into a `Reg<T>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamRef<T: ty::RegType> {
    name: String,
    _ty: PhantomData<T>,
}

impl<T: ty::RegType> ParamRef<T> {
    /// The parameter's name in the PTX.
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// A by-value byte-array parameter (a tensor map): used by address, `[name]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BytesParam {
    name: String,
}

impl BytesParam {
    /// The parameter's name in the PTX.
    pub fn name(&self) -> &str {
        &self.name
    }
}

/// A point in a function's construction that [`FunctionBuilder::rollback`] returns to: what a
/// lowering that fails halfway uses to leave no partial instructions behind.
#[derive(Debug, Clone)]
pub struct Checkpoint {
    body: usize,
    arena: ArenaMark,
    reg_counts: [u32; 9],
    labels_placed: Vec<bool>,
    labels_used: Vec<bool>,
    required: (PtxVersion, String),
    local_params: u32,
    cta_group: Option<CtaGroup>,
    target_lists: u32,
}

/// Builds one function. Start it with [`crate::Module::entry`] or [`crate::Module::func`]; finish it
/// with [`FunctionBuilder::finish`] and add it to the module.
#[derive(Debug)]
#[must_use = "a function builder does nothing until `finish` and `Module::add`"]
pub struct FunctionBuilder {
    name: String,
    kind: FunctionKind,
    target: Target,
    check_targets: bool,
    params: Vec<Param>,
    ret: Option<Param>,
    directives: Vec<Directive>,
    reg_counts: [u32; 9],
    body: Vec<Statement>,
    /// The words and operands of `body`'s instructions.
    arena: InstrArena,
    labels_placed: Vec<bool>,
    labels_used: Vec<bool>,
    guard: Option<Guard>,
    required: (PtxVersion, String),
    first_error: Option<Error>,
    local_params: u32,
    cta_group: Option<CtaGroup>,
    target_lists: u32,
}

impl FunctionBuilder {
    pub(crate) fn new(
        name: &str,
        kind: FunctionKind,
        target: Target,
        check_targets: bool,
    ) -> FunctionBuilder {
        let mut b = FunctionBuilder {
            name: name.to_string(),
            kind,
            target,
            check_targets,
            params: Vec::new(),
            ret: None,
            directives: Vec::new(),
            reg_counts: [0; 9],
            body: Vec::new(),
            // Room for a kernel's few hundred instructions: the lists grow by copying, and a
            // GEMM's build paid 13 % for growing them from empty (issue 33).
            arena: InstrArena::with_capacity(1024, 1024),
            labels_placed: Vec::new(),
            labels_used: Vec::new(),
            guard: None,
            required: (target.min_ptx(), format!("target {target}")),
            first_error: None,
            local_params: 0,
            cta_group: None,
            target_lists: 0,
        };
        if let Err(e) = check_identifier(name) {
            b.first_error = Some(e);
        }
        b
    }

    /// The function's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The target the function is built for.
    pub fn target(&self) -> Target {
        self.target
    }

    /// A fresh register of type `T`.
    pub fn reg<T: ty::RegType>(&mut self) -> Reg<T> {
        Reg::from_index(self.reg_of(T::CLASS).index)
    }

    /// A fresh register of `class`, for an operand whose type is chosen at run time (a wgmma
    /// accumulator of `.f32` or `.s32`, a fragment of either).
    pub fn reg_of(&mut self, class: RegClass) -> RegRef {
        let slot = &mut self.reg_counts[class as usize];
        let r = RegRef {
            class,
            index: *slot,
        };
        *slot += 1;
        if class == RegClass::B128 {
            self.require(ScalarType::B128.min_ptx(), "a .b128 register");
        }
        r
    }

    /// `n` fresh registers of `class` (see [`Self::reg_of`]).
    pub fn regs_of(&mut self, class: RegClass, n: usize) -> Vec<RegRef> {
        (0..n).map(|_| self.reg_of(class)).collect()
    }

    /// `n` fresh registers of type `T`.
    pub fn regs<T: ty::RegType>(&mut self, n: usize) -> Vec<Reg<T>> {
        (0..n).map(|_| self.reg()).collect()
    }

    /// A fresh predicate register.
    pub fn pred(&mut self) -> Pred {
        self.reg()
    }

    // ---- parameters --------------------------------------------------------------------------

    /// Declares a scalar parameter `.param .T name`.
    pub fn param<T: ty::RegType>(&mut self, name: &str) -> Result<ParamRef<T>> {
        if T::TYPE == ScalarType::Pred {
            return Err(
                Error::new(ErrorKind::OperandType, "a parameter cannot be a predicate")
                    .in_function(&self.name),
            );
        }
        self.add_param(name, ParamKind::Scalar(T::TYPE))?;
        Ok(ParamRef {
            name: name.to_string(),
            _ty: PhantomData,
        })
    }

    /// Declares a pointer parameter `.param .u64 .ptr .global .align A name` (kernels) or
    /// `.param .u64 name` (device functions, which take no `.ptr` attribute).
    pub fn param_ptr(
        &mut self,
        name: &str,
        space: StateSpace,
        align: Option<u32>,
    ) -> Result<ParamRef<ty::U64>> {
        if let Some(a) = align {
            if !a.is_power_of_two() {
                return Err(Error::new(
                    ErrorKind::Invalid,
                    format!("alignment {a} is not a power of two"),
                )
                .in_function(&self.name));
            }
        }
        let kind = match self.kind {
            FunctionKind::Entry => ParamKind::Ptr { space, align },
            FunctionKind::Func => ParamKind::Scalar(ScalarType::U64),
        };
        self.add_param(name, kind)?;
        Ok(ParamRef {
            name: name.to_string(),
            _ty: PhantomData,
        })
    }

    /// Declares a by-value byte array `.param .align A .b8 name[size]`, e.g. a tensor map
    /// (`align` 64, `size` 128).
    pub fn param_bytes(&mut self, name: &str, align: u32, size: u32) -> Result<BytesParam> {
        if !align.is_power_of_two() || size == 0 {
            return Err(Error::new(
                ErrorKind::Invalid,
                format!("`{name}`: bad byte array align {align} size {size}"),
            )
            .in_function(&self.name));
        }
        self.add_param(name, ParamKind::Bytes { align, size })?;
        Ok(BytesParam {
            name: name.to_string(),
        })
    }

    /// Declares the return parameter of a device function, `.func (.param .T name) f(...)`.
    pub fn returns<T: ty::RegType>(&mut self, name: &str) -> Result<ParamRef<T>> {
        if self.kind != FunctionKind::Func {
            return Err(
                Error::new(ErrorKind::Invalid, "only device functions return values")
                    .in_function(&self.name),
            );
        }
        check_identifier(name)?;
        if self.ret.is_some() {
            return Err(
                Error::new(ErrorKind::BadName, "a function has one return parameter")
                    .in_function(&self.name),
            );
        }
        self.ret = Some(Param {
            name: name.to_string(),
            kind: ParamKind::Scalar(T::TYPE),
        });
        Ok(ParamRef {
            name: name.to_string(),
            _ty: PhantomData,
        })
    }

    fn add_param(&mut self, name: &str, kind: ParamKind) -> Result<()> {
        check_identifier(name).map_err(|e| e.in_function(&self.name))?;
        if self.params.iter().any(|p| p.name == name)
            || self.ret.as_ref().is_some_and(|p| p.name == name)
        {
            return Err(Error::new(
                ErrorKind::BadName,
                format!("parameter `{name}` declared twice"),
            )
            .in_function(&self.name));
        }
        self.params.push(Param {
            name: name.to_string(),
            kind,
        });
        Ok(())
    }

    /// Loads a parameter into a fresh register: `ld.param.T %r, [name];`.
    pub fn load_param<T: ty::RegType>(&mut self, p: &ParamRef<T>) -> Result<Reg<T>> {
        let d = self.reg::<T>();
        let i = Instruction::from_opcode("ld.param")
            .ty(T::TYPE)
            .operand(d)
            .operand(Operand::Addr(crate::space::Address::at(
                crate::space::AddrBase::Symbol(p.name.clone()),
            )));
        self.emit(Form::Ld, i)?;
        Ok(d)
    }

    /// Stores a device function's return value: `st.param.T [ret], a;`.
    pub fn store_return<T: ty::RegType>(&mut self, p: &ParamRef<T>, a: Reg<T>) -> Result<()> {
        let i = Instruction::from_opcode("st.param")
            .ty(T::TYPE)
            .operand(Operand::Addr(crate::space::Address::at(
                crate::space::AddrBase::Symbol(p.name.clone()),
            )))
            .operand(a);
        self.emit(Form::St, i)
    }

    // ---- directives --------------------------------------------------------------------------

    /// Adds a performance or cluster directive (kernels only). Checked against the form table and
    /// for consistency (no zero dimensions, one of each kind).
    pub fn directive(&mut self, d: Directive) -> Result<()> {
        let err = |m: String| Err(Error::new(ErrorKind::BadDirective, m).in_function(&self.name));
        if self.kind != FunctionKind::Entry {
            return err(format!("{d:?} applies to kernels only"));
        }
        let dims_ok = |v: &[u32; 3]| v.iter().all(|&x| x > 0);
        match d {
            Directive::MaxNtid(v) | Directive::ReqNtid(v) | Directive::ReqNctaPerCluster(v)
                if !dims_ok(&v) =>
            {
                return err(format!("{d:?} has a zero dimension"));
            }
            Directive::MaxNreg(n) if !(24..=255).contains(&n) => {
                return err(format!(".maxnreg {n} is outside 24..=255"));
            }
            Directive::MinNctaPerSm(0) | Directive::MaxClusterRank(0) => {
                return err(format!("{d:?} must be positive"));
            }
            _ => {}
        }
        if self
            .directives
            .iter()
            .any(|x| std::mem::discriminant(x) == std::mem::discriminant(&d))
        {
            return err(format!("{d:?} given twice"));
        }
        if let (Directive::MaxNtid(a), Some(Directive::ReqNtid(b)))
        | (Directive::ReqNtid(b), Some(Directive::MaxNtid(a))) = (
            d,
            self.directives
                .iter()
                .copied()
                .find(|x| matches!(x, Directive::MaxNtid(_) | Directive::ReqNtid(_))),
        ) {
            if a.iter().zip(&b).any(|(m, r)| r > m) {
                return err(format!(".reqntid {b:?} exceeds .maxntid {a:?}"));
            }
        }
        if let Some(form) = d.form() {
            self.gate(form, format_args!("{d:?}"))?;
        }
        self.directives.push(d);
        Ok(())
    }

    // ---- labels, guards, comments ---------------------------------------------------------------

    /// A fresh label; place it with [`FunctionBuilder::place`].
    pub fn label(&mut self) -> Label {
        self.labels_placed.push(false);
        self.labels_used.push(false);
        Label(self.labels_placed.len() as u32 - 1)
    }

    /// Places `label` here. A label is placed once.
    pub fn place(&mut self, label: Label) -> Result<()> {
        match self.labels_placed.get_mut(label.0 as usize) {
            Some(placed) if !*placed => {
                *placed = true;
                self.body.push(Statement::Label(label));
                Ok(())
            }
            Some(_) => Err(
                Error::new(ErrorKind::UndefinedLabel, format!("{label} placed twice"))
                    .in_function(&self.name),
            ),
            None => Err(Error::new(
                ErrorKind::UndefinedLabel,
                format!("{label} does not belong to this function"),
            )
            .in_function(&self.name)),
        }
    }

    pub(crate) fn use_label(&mut self, label: Label) -> Result<()> {
        match self.labels_used.get_mut(label.0 as usize) {
            Some(u) => {
                *u = true;
                Ok(())
            }
            None => Err(Error::new(
                ErrorKind::UndefinedLabel,
                format!("{label} does not belong to this function"),
            )
            .in_function(&self.name)),
        }
    }

    /// Predicates the next instruction on `p`: `@p`. Chain it: `k.when(p).bra(l)?`.
    pub fn when(&mut self, p: Pred) -> &mut Self {
        self.set_guard(Guard {
            pred: p.as_ref(),
            negated: false,
        })
    }

    /// Predicates the next instruction on `!p`: `@!p`.
    pub fn unless(&mut self, p: Pred) -> &mut Self {
        self.set_guard(Guard {
            pred: p.as_ref(),
            negated: true,
        })
    }

    fn set_guard(&mut self, g: Guard) -> &mut Self {
        if self.guard.is_some() && self.first_error.is_none() {
            self.first_error = Some(
                Error::new(
                    ErrorKind::DanglingGuard,
                    "a guard was set while another was pending",
                )
                .in_function(&self.name),
            );
        }
        self.guard = Some(g);
        self
    }

    /// A comment line in the body.
    pub fn comment(&mut self, text: &str) {
        self.body
            .push(Statement::Comment(text.replace('\n', " ").into()));
    }

    /// Attaches a comment to the last instruction written.
    pub fn annotate(&mut self, text: &str) {
        if let Some(Statement::Instr(i)) = self.body.last_mut() {
            i.set_comment(text.replace('\n', " ").into());
        }
    }

    // ---- writing instructions ---------------------------------------------------------------------

    /// Records that the function needs `version` because of `why` (written only when the version
    /// is a new highest: most instructions need no more than the function already does).
    pub(crate) fn require(&mut self, version: PtxVersion, why: impl std::fmt::Display) {
        if version > self.required.0 {
            self.required = (version, why.to_string());
        }
    }

    /// Checks a form against the target and records its PTX version.
    pub(crate) fn gate(&mut self, form: Form, what: impl std::fmt::Display) -> Result<()> {
        let spec = form.spec();
        if self.check_targets && !spec.targets.has(self.target) {
            self.guard = None;
            return Err(Error::new(
                ErrorKind::UnsupportedTarget,
                format!(
                    "{} lacks `{}` ({}); targets that have it: {}",
                    self.target,
                    spec.name,
                    spec.section,
                    spec.targets.names()
                ),
            )
            .at_instruction(what.to_string())
            .on_target(self.target)
            .in_function(&self.name));
        }
        self.require(
            form.min_ptx_on(self.target),
            format_args!("`{}`", spec.name),
        );
        Ok(())
    }

    /// Writes an instruction of `form`, applying a pending guard. The feature rows it implies are
    /// found by [`crate::forms::features::implied`], the decision the validator reads too.
    pub(crate) fn emit(&mut self, form: Form, mut i: Instruction) -> Result<()> {
        self.check_row(form, &i.view())?;
        self.gate(form, i.opcode_text())?;
        for f in crate::forms::features::implied(form, &i.view()) {
            self.gate(f, i.opcode_text())?;
        }
        for t in i.types() {
            self.require(t.min_ptx(), format_args!("type {t}"));
        }
        i.form = Some(form);
        i.guard = self.guard.take();
        let i = self.arena.push(i);
        self.body.push(Statement::Instr(i));
        Ok(())
    }

    /// Writes the one instruction a row without choices or operands stands for
    /// (`griddepcontrol.wait`, `wgmma.fence.sync.aligned`): the row's pattern is its opcode. A row
    /// with a required choice or an operand is refused by [`Self::emit`]'s check of the row.
    pub(crate) fn emit_row(&mut self, form: Form) -> Result<()> {
        let p = form.pattern();
        let mut i = Instruction::new(p.mnemonic());
        for e in p.elements() {
            if let [only] = e.alternatives() {
                if !e.is_optional() {
                    for m in only {
                        i = i.modifier(m.as_str());
                    }
                }
            }
        }
        self.emit(form, i)
    }

    /// Every instruction the builder writes is one its row allows: the row's pattern matches the
    /// opcode and the operand count, and the row's rules ([`crate::forms::rules`]) hold.
    fn check_row(&mut self, form: Form, i: &InstrRef<'_>) -> Result<()> {
        let p = form.pattern();
        // The remembered answer for this opcode, when it is this row, says the pattern matches
        // the opcode and the operand count: one lookup, the pattern matched once per opcode.
        let matched = crate::parse::resolve::resolves_to(form, i);
        if !matched && !p.matches_opcode(i.mnemonic, i.modifiers) {
            let opcode = i.opcode();
            let why = p
                .difference(i.mnemonic, i.modifiers)
                .and_then(|(_, d)| d)
                .map_or(String::new(), |d| format!(": {d}"));
            let spec = form.spec();
            return Err(self.err(
                ErrorKind::InvalidModifier,
                &opcode,
                format!(
                    "`{opcode}` is not a form of `{}` ({}){why}",
                    spec.name, spec.syntax
                ),
            ));
        }
        if !matched && !p.matches_operand_count(i.operands.len()) {
            let opcode = i.opcode();
            let (lo, hi) = p.operand_range();
            return Err(self.err(
                ErrorKind::OperandCount,
                &opcode,
                format!(
                    "`{opcode}` takes {lo} to {hi} operands ({}), not {}",
                    form.spec().syntax,
                    i.operands.len()
                ),
            ));
        }
        if let Err(v) = crate::forms::rules::check(form, i) {
            return Err(self.err(v.kind, &i.opcode(), v.message));
        }
        Ok(())
    }

    /// An error about the instruction `opcode` in this function.
    pub(crate) fn err(&mut self, kind: ErrorKind, opcode: &str, msg: impl Into<String>) -> Error {
        self.guard = None;
        Error::new(kind, msg)
            .at_instruction(opcode)
            .on_target(self.target)
            .in_function(&self.name)
    }

    /// The error for an instruction written `spelled` (`ex2.approx`, `atom.add`) that has no form
    /// (no row of the form table, PTX ISA chapter 9.7) for operand type `t`.
    pub(crate) fn no_form(&mut self, opcode: &str, spelled: &str, t: ScalarType) -> Error {
        self.err(
            ErrorKind::OperandType,
            opcode,
            format!("{spelled} has no form for {t}"),
        )
    }

    /// A function's tcgen05 instructions all use one CTA group (ptxas 13.0: "uses single CTA
    /// (.cta_group::1) and CTA pair granularity (.cta_group::2) and that is not allowed").
    pub(crate) fn note_cta_group(&mut self, opcode: &str, g: CtaGroup) -> Result<()> {
        match self.cta_group {
            Some(prev) if prev != g => Err(self.err(
                ErrorKind::InvalidModifier,
                opcode,
                format!(
                    "this function already uses .{}; one function cannot mix it with .{}",
                    prev.name(),
                    g.name()
                ),
            )),
            _ => {
                self.cta_group = Some(g);
                Ok(())
            }
        }
    }

    pub(crate) fn next_local_param(&mut self) -> String {
        self.local_params += 1;
        format!("param{}", self.local_params - 1)
    }

    pub(crate) fn push_statement(&mut self, s: Statement) {
        self.body.push(s);
    }

    /// The state to return to with [`FunctionBuilder::rollback`].
    pub fn checkpoint(&self) -> Checkpoint {
        Checkpoint {
            body: self.body.len(),
            arena: self.arena.mark(),
            reg_counts: self.reg_counts,
            labels_placed: self.labels_placed.clone(),
            labels_used: self.labels_used.clone(),
            required: self.required.clone(),
            local_params: self.local_params,
            cta_group: self.cta_group,
            target_lists: self.target_lists,
        }
    }

    /// Forgets everything written since `c`: statements, registers, labels, version needs. Registers
    /// and labels handed out since then must not be used again.
    pub fn rollback(&mut self, c: Checkpoint) {
        self.body.truncate(c.body);
        self.arena.truncate(c.arena);
        self.reg_counts = c.reg_counts;
        self.labels_placed = c.labels_placed;
        self.labels_used = c.labels_used;
        self.required = c.required;
        self.local_params = c.local_params;
        self.cta_group = c.cta_group;
        self.target_lists = c.target_lists;
        self.guard = None;
    }

    /// Finishes the function: every branched-to label placed, no guard left dangling.
    pub fn finish(self) -> Result<Function> {
        if let Some(e) = self.first_error {
            return Err(e);
        }
        if self.guard.is_some() {
            return Err(Error::new(
                ErrorKind::DanglingGuard,
                "a guard (`when`/`unless`) has no instruction after it",
            )
            .in_function(&self.name));
        }
        for (i, (&used, &placed)) in self.labels_used.iter().zip(&self.labels_placed).enumerate() {
            if used && !placed {
                return Err(Error::new(
                    ErrorKind::UndefinedLabel,
                    format!("{} is branched to but never placed", Label(i as u32)),
                )
                .in_function(&self.name));
            }
        }
        Ok(Function {
            name: self.name,
            kind: self.kind,
            params: self.params,
            ret: self.ret,
            directives: self.directives,
            reg_counts: self.reg_counts,
            body: self.body,
            target: self.target,
            required_ptx: self.required,
            arena: self.arena,
        })
    }
}
