//! The offline validator (issue 9, part 4): what ptxas would reject, found without ptxas.
//!
//! [`validate`] checks a [`Module`] (parsed or built) against the form table and the PTX ISA's
//! rules: every instruction's form, operand count, operand kinds and types, declared registers
//! (undeclared, wrong type, declared twice in one scope), labels, vector widths, immediates, target
//! and PTX-version gating (through [`Form::available_on`] and [`Form::min_ptx_on`]) and state
//! spaces. [`check`] parses text and validates it, for `ptxkit check`.
//!
//! ```
//! let text = ".version 8.0\n.target sm_80\n.address_size 64\n\
//!             .visible .entry k()\n{\n\tadd.s32 %r1, %r1, 1;\n\tret;\n}\n";
//! let diags = ptx_isa::validate::check(text, &Default::default());
//! assert_eq!(diags[0].to_string(), "6:2: error: register `%r1` is not declared");
//! ```

mod function;
mod operands;
mod scope;
mod shape;

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::Arc;

use crate::error::ErrorKind;
use crate::forms::Form;
use crate::instr::{InstrRef, Instruction, Operand};
use crate::module::{FunctionKind, Item, Module, ParamKind, Statement};
use crate::parse::{Pos, SourceMap};
use crate::reg::RegClass;
use crate::space::StateSpace;
use crate::target::{PtxVersion, Target};

pub use scope::{Redeclared, RegInfo};

/// How bad a finding is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Severity {
    /// ptxas would reject the module.
    Error,
    /// Kept as written, not checked (an instruction outside the table, an unmodelled target).
    Warning,
}

/// One finding, with its place when the module came from text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// The kind (the builder's error kinds).
    pub kind: ErrorKind,
    /// A one-line message, shared: the one error of every line of an opcode no row takes is
    /// formatted once and counted, not copied (issue 33).
    pub message: Arc<str>,
    /// Where, when known.
    pub pos: Option<Pos>,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sev = match self.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
        };
        match self.pos {
            Some(p) => write!(f, "{}:{}: {sev}: {}", p.line, p.column, self.message),
            None => write!(f, "{sev}: {}", self.message),
        }
    }
}

/// What to validate against.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Check as if the module said `.target T` (the gating of another target).
    pub target: Option<Target>,
}

/// Parses and validates PTX text: a parse error is one error diagnostic; parser warnings are kept.
/// The calling thread keeps the lexer's token buffer for its next call (16 bytes a token, at
/// most 32 MiB; issue 33).
pub fn check(text: &str, opts: &Options) -> Vec<Diagnostic> {
    match crate::parse::parse_for_check(text) {
        Err(e) => vec![Diagnostic {
            severity: Severity::Error,
            kind: ErrorKind::Invalid,
            message: e.message.into(),
            pos: Some(e.pos),
        }],
        Ok(mut p) => {
            let mut d = validate(&p.module, Some(&p.source_map), opts);
            // `validate` warns of a target it does not model exactly when none is named here
            // and the module's is not known (no scan of every message: issue 33).
            let unknown_target_warned = opts.target.is_none() && !p.module.target_is_known();
            let warnings = std::mem::take(&mut p.warnings);
            crate::parse::give_back(p);
            for w in warnings {
                if unknown_target_warned && w.message.contains("not one ptxkit") {
                    continue;
                }
                d.push(Diagnostic {
                    severity: Severity::Warning,
                    kind: ErrorKind::Invalid,
                    message: w.message.into(),
                    pos: Some(w.pos),
                });
            }
            // Most often in order already: a module of many refused lines sorts nothing, and
            // the stable sort's buffer is not allocated (issue 33).
            let at = |x: &Diagnostic| x.pos.map(|p| p.offset);
            if !d.is_sorted_by_key(at) {
                d.sort_by_key(at);
            }
            d
        }
    }
}

/// True when no diagnostic is an error.
pub fn is_valid(diags: &[Diagnostic]) -> bool {
    diags.iter().all(|d| d.severity != Severity::Error)
}

/// What a module-scope or parameter name is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum SymbolKind {
    /// A variable or parameter in this space.
    Data(StateSpace),
    /// A function.
    Function,
}

pub(crate) struct Ctx<'a> {
    pub module: &'a Module,
    pub target: Option<Target>,
    pub version: PtxVersion,
    pub globals: HashMap<&'a str, SymbolKind>,
    pub out: Vec<Diagnostic>,
    /// What the row checks said of the module's instructions, by shape.
    pub shapes: shape::Shapes,
}

impl Ctx<'_> {
    /// The SM number of the module's `.target` (`sm_13` gives 13), modelled or not.
    pub(crate) fn sm(&self) -> Option<u32> {
        if let Some(t) = self.target {
            return Some(t.sm());
        }
        let digits = self.module.target_name().strip_prefix("sm_")?;
        digits.trim_end_matches(['a', 'f']).parse().ok()
    }

    pub(crate) fn error(
        &mut self,
        kind: ErrorKind,
        pos: Option<Pos>,
        message: impl Into<Arc<str>>,
    ) {
        self.out.push(Diagnostic {
            severity: Severity::Error,
            kind,
            message: message.into(),
            pos,
        });
    }

    pub(crate) fn warning(&mut self, pos: Option<Pos>, message: impl Into<Arc<str>>) {
        self.out.push(Diagnostic {
            severity: Severity::Warning,
            kind: ErrorKind::Invalid,
            message: message.into(),
            pos,
        });
    }

    /// Target and PTX-version gating of one row.
    pub(crate) fn gate(&mut self, form: Form, what: impl fmt::Display, pos: Option<Pos>) {
        let spec = form.spec();
        let Some(t) = self.target else {
            // A target ptxkit does not model: the row's first version still holds (it is the
            // lowest on any target; ptxas 13.0: "Feature 'tanh' requires PTX ISA .version 7.0").
            if spec.min_ptx > self.version {
                self.error(
                    ErrorKind::PtxVersionTooLow,
                    pos,
                    format!(
                        "`{what}` (`{}`) needs PTX ISA {}; the module says .version {}",
                        spec.name, spec.min_ptx, self.version
                    ),
                );
            }
            return;
        };
        if !form.available_on(t) {
            self.error(
                ErrorKind::UnsupportedTarget,
                pos,
                format!(
                    "{t} lacks `{}` ({}), used by `{what}`; targets that have it: {}",
                    spec.name,
                    spec.section,
                    spec.targets.names()
                ),
            );
        } else if form.min_ptx_on(t) > self.version {
            self.error(
                ErrorKind::PtxVersionTooLow,
                pos,
                format!(
                    "`{what}` (`{}`) needs PTX ISA {} on {t}; the module says .version {}",
                    spec.name,
                    form.min_ptx_on(t),
                    self.version
                ),
            );
        }
    }
}

/// Validates a module. `map` gives places (a parsed module's [`SourceMap`]).
pub fn validate(m: &Module, map: Option<&SourceMap>, opts: &Options) -> Vec<Diagnostic> {
    let version = m.version.unwrap_or_else(|| m.required_version().0);
    let target = opts
        .target
        .or_else(|| m.target_is_known().then_some(m.target));
    let mut cx = Ctx {
        module: m,
        target,
        version,
        globals: HashMap::new(),
        out: Vec::new(),
        shapes: shape::Shapes::default(),
    };
    let vpos = map.map(|s| s.version);
    let tpos = map.map(|s| s.target);
    if version > PtxVersion::MAX {
        cx.error(
            ErrorKind::BadVersion,
            vpos,
            format!(
                ".version {version} is newer than PTX ISA {}, the newest ptxas 13.0 reads",
                PtxVersion::MAX
            ),
        );
    } else if !version.read_by_ptxas() {
        cx.error(
            ErrorKind::BadVersion,
            vpos,
            format!(".version {version} is no release of the PTX ISA (chapter 13)"),
        );
    }
    // PTX ISA 11.1.3: `.address_size` is PTX 2.3 (ptxas 13.0: "Feature '.address_size
    // directive' requires PTX ISA .version 2.3 or later").
    if m.written_address_size().is_some() && version < crate::target::v(2, 3) {
        cx.error(
            ErrorKind::PtxVersionTooLow,
            map.and_then(|s| s.address_size).or(vpos),
            format!(".address_size needs PTX ISA 2.3; the module says .version {version}"),
        );
    }
    match target {
        Some(t) if t.min_ptx() > version => cx.error(
            ErrorKind::PtxVersionTooLow,
            tpos,
            format!(
                "target {t} needs PTX ISA {}; the module says .version {version}",
                t.min_ptx()
            ),
        ),
        Some(_) => {}
        None => {
            let name = m.target_name();
            match PtxVersion::lowest_for_target(name) {
                None => cx.error(
                    ErrorKind::UnknownTarget,
                    tpos,
                    format!("ptxas 13.0 reads no target `{name}`"),
                ),
                Some(low) if low > version => cx.error(
                    ErrorKind::PtxVersionTooLow,
                    tpos,
                    format!(
                        "target {name} needs PTX ISA {low}; the module says .version {version}"
                    ),
                ),
                Some(_) => {}
            }
            cx.warning(
                tpos,
                format!("target `{name}` is not one ptxkit models: target gating is not checked"),
            );
        }
    }
    // Module-scope names.
    let layout = m.layout();
    for item in layout.iter() {
        match item {
            Item::Variable(i) => {
                let Some(v) = m.variables.get(*i) else {
                    continue;
                };
                let pos = map.and_then(|s| s.variables.get(*i).copied());
                if cx
                    .globals
                    .insert(&v.name, SymbolKind::Data(v.space))
                    .is_some()
                {
                    cx.error(
                        ErrorKind::BadName,
                        pos,
                        format!("`{}` is defined twice in this module", v.name),
                    );
                }
                incomplete(&mut cx, v, pos);
                samplers(&mut cx, v.opaque, &v.name, pos);
                if !v.align.is_power_of_two() {
                    cx.error(
                        ErrorKind::Invalid,
                        pos,
                        format!(
                            "alignment {} of `{}` is not a power of two",
                            v.align, v.name
                        ),
                    );
                }
            }
            Item::Function(i, decl) => {
                let Some(f) = m.functions.get(*i) else {
                    continue;
                };
                let pos = map.and_then(|s| s.functions.get(*i)).map(|s| s.header);
                if decl.noreturn {
                    noreturn(&mut cx, f, pos);
                }
                match cx.globals.insert(&f.name, SymbolKind::Function) {
                    Some(SymbolKind::Function) if decl.defined => {
                        let defined_before = layout.iter().any(|it| {
                            matches!(it, Item::Function(j, d) if j < i && d.defined
                                && m.functions.get(*j).is_some_and(|g| g.name == f.name))
                        });
                        if defined_before {
                            cx.error(
                                ErrorKind::BadName,
                                pos,
                                format!("function `{}` is defined twice", f.name),
                            );
                        }
                    }
                    Some(SymbolKind::Data(_)) => cx.error(
                        ErrorKind::BadName,
                        pos,
                        format!("`{}` is defined twice in this module", f.name),
                    ),
                    _ => {}
                }
            }
            Item::Directive(_) => {}
        }
    }
    for (i, f) in m.functions.iter().enumerate() {
        let spans = map.and_then(|s| s.functions.get(i));
        function(&mut cx, f, spans);
    }
    cx.out
}

/// `.noreturn` (PTX ISA 11.4.3): PTX 6.4, on a device function that returns no value (ptxas
/// 13.0: "Feature '.noreturn' requires PTX ISA .version 6.4", "Invalid directive '.noreturn' for
/// function"; on a kernel a syntax error).
fn noreturn(cx: &mut Ctx<'_>, f: &crate::module::Function, pos: Option<Pos>) {
    let why = if f.kind == FunctionKind::Entry {
        Some("a kernel")
    } else if f.ret.is_some() {
        Some("a function that returns a value")
    } else {
        None
    };
    if let Some(why) = why {
        cx.error(
            ErrorKind::BadDirective,
            pos,
            format!("`.noreturn` on `{}`: not on {why}", f.name),
        );
    }
    if cx.version < crate::target::v(6, 4) {
        cx.error(
            ErrorKind::PtxVersionTooLow,
            pos,
            format!(
                "`.noreturn` needs PTX ISA 6.4; the module says .version {}",
                cx.version
            ),
        );
    }
}

/// `.samplerref` is for the independent texturing mode only (PTX ISA 5.3.2, 11.1.2 `.target`
/// `texmode_independent`; ptxas 13.0: "Instruction or declaration violates .target
/// texmode_unified setting").
fn samplers(cx: &mut Ctx<'_>, opaque: Option<crate::module::Opaque>, name: &str, pos: Option<Pos>) {
    let independent = cx
        .module
        .target_options()
        .iter()
        .any(|o| o == "texmode_independent");
    if opaque == Some(crate::module::Opaque::Samplerref) && !independent {
        cx.error(
            ErrorKind::Invalid,
            pos,
            format!("`.samplerref {name}` needs `.target ..., texmode_independent`"),
        );
    }
}

/// A variable of incomplete type, an array `[]` of no size, is declared `.extern` or sized by an
/// initializer (PTX ISA 5.4.4 "Array Declarations"; ptxas 13.0: "Non-external variable 'x' has
/// incomplete type").
fn incomplete(cx: &mut Ctx<'_>, v: &crate::module::Variable, pos: Option<Pos>) {
    let open = v.dims.iter().any(Option::is_none);
    if open && v.linkage != Some(crate::module::Linkage::Extern) && v.init.is_none() {
        cx.error(
            ErrorKind::Invalid,
            pos,
            format!(
                "`{}` is an array of no size: only an `.extern` one or one with an initializer may be",
                v.name
            ),
        );
    }
}

fn function(
    cx: &mut Ctx<'_>,
    f: &crate::module::Function,
    spans: Option<&crate::parse::FunctionSpans>,
) {
    let header = spans.map(|s| s.header);
    let at = |k: usize| spans.and_then(|s| s.body.get(k).copied()).or(header);
    // Parameters and directives.
    let mut locals: HashMap<String, SymbolKind> = HashMap::new();
    for p in f.params.iter().chain(f.ret.iter()) {
        if locals
            .insert(p.name.clone(), SymbolKind::Data(StateSpace::Param))
            .is_some()
        {
            cx.error(
                ErrorKind::BadName,
                header,
                format!("parameter `{}` declared twice", p.name),
            );
        }
        if let ParamKind::Opaque(o) = p.kind {
            samplers(cx, Some(o), &p.name, header);
        }
        if let ParamKind::Ptr { .. } = p.kind {
            if f.kind != FunctionKind::Entry {
                cx.error(
                    ErrorKind::Invalid,
                    header,
                    format!("`.ptr` on `{}`: only kernel parameters take it", p.name),
                );
            }
        }
    }
    // ptxas 13.0: "Feature 'kernel parameter list' requires PTX ISA .version 1.4 or later".
    if f.kind == FunctionKind::Entry && !f.params.is_empty() && cx.version < crate::target::v(1, 4)
    {
        cx.error(
            ErrorKind::PtxVersionTooLow,
            header,
            format!(
                "kernel `{}` has parameters: a kernel parameter list needs PTX ISA 1.4; the module says .version {}",
                f.name, cx.version
            ),
        );
    }
    // PTX ISA 5.1.6.2: a device function's parameters in the `.param` space are sm_20's (the
    // ABI); sm_1x functions pass `.reg` parameters (ptxas 13.0: "Function parameter ... has
    // illegal state space").
    if f.kind != FunctionKind::Entry && cx.sm().is_some_and(|sm| sm < 20) {
        let param = f
            .params
            .iter()
            .chain(f.ret.iter())
            .find(|p| !matches!(p.kind, ParamKind::Reg(_)));
        if let Some(p) = param {
            cx.error(
                ErrorKind::UnsupportedTarget,
                header,
                format!(
                    "parameter `{}` of `{}` is in the .param space, which device functions have from sm_20 on; the target is {}",
                    p.name,
                    f.name,
                    cx.module.target_name()
                ),
            );
        }
    }
    for d in &f.directives {
        if f.kind != FunctionKind::Entry {
            cx.error(
                ErrorKind::BadDirective,
                header,
                format!("{d:?}: performance directives apply to kernels"),
            );
        }
        if let Some(form) = d.form() {
            cx.gate(form, format_args!("{d:?}"), header);
        }
    }
    // Blocks and their labels (PTX labels are scoped to the block that places them).
    let mut parents: Vec<Option<usize>> = vec![None];
    // Names borrowed from the body: no copy per label (issue 33).
    let mut labels: Vec<HashSet<Cow<'_, str>>> = vec![HashSet::new()];
    let mut block_of = Vec::with_capacity(f.body.len());
    // The `.branchtargets` lists (PTX ISA 11.3.1): name, statement, block. A list's name is a
    // label name too (ptxas: "Duplicate definition of label").
    let mut lists: Vec<(&str, usize, usize)> = Vec::new();
    {
        let mut cur = 0usize;
        for (k, st) in f.body.iter().enumerate() {
            match st {
                Statement::Open => {
                    parents.push(Some(cur));
                    labels.push(HashSet::new());
                    cur = parents.len() - 1;
                }
                Statement::Close => cur = parents.get(cur).copied().flatten().unwrap_or(0),
                Statement::Label(l) if !labels[cur].insert(l.to_string().into()) => {
                    cx.error(
                        ErrorKind::UndefinedLabel,
                        at(k),
                        format!("label `{l}` is placed twice"),
                    );
                }
                // `prototype_0 : .callprototype ...` names a prototype that `call` refers to.
                Statement::Other(text) if text.contains(".callprototype") => {
                    if let Some((name, _)) = text.split_once(':') {
                        labels[cur].insert(name.trim().into());
                    }
                }
                Statement::NamedLabel(l) if !labels[cur].insert(l.as_str().into()) => {
                    cx.error(
                        ErrorKind::UndefinedLabel,
                        at(k),
                        format!("label `{l}` is placed twice"),
                    );
                }
                Statement::BranchTargets(b) => {
                    if !labels[cur].insert(b.name.as_str().into()) {
                        cx.error(
                            ErrorKind::UndefinedLabel,
                            at(k),
                            format!("`{}` is defined twice", b.name),
                        );
                    }
                    lists.push((&b.name, k, cur));
                }
                _ => {}
            }
            block_of.push(cur);
        }
    }
    let label_visible = |mut b: usize, name: &str| loop {
        if labels.get(b).is_some_and(|s| s.contains(name)) {
            return true;
        }
        match parents.get(b).copied().flatten() {
            Some(p) => b = p,
            None => return false,
        }
    };
    // True when block `inner` is `outer` or inside it.
    let encloses = |outer: usize, mut inner: usize| loop {
        if inner == outer {
            return true;
        }
        match parents.get(inner).copied().flatten() {
            Some(p) => inner = p,
            None => return false,
        }
    };
    let is_list = |name: &str| lists.iter().any(|(n, _, _)| *n == name);
    let mut across = function::Across::default();
    // Registers.
    let mut scopes = scope::Scopes::new();
    // Register parameters are registers of the function's outermost scope.
    for p in f.params.iter().chain(f.ret.iter()) {
        if let ParamKind::Reg(ty) = p.kind {
            let _ = scopes.declare(p.name.as_str().into(), None, RegInfo { ty, vector: None });
        }
    }
    for class in RegClass::ALL {
        let n = f.reg_count(class);
        if n > 0 {
            let _ = scopes.declare(
                format!("%{}", class.prefix()).into(),
                Some(n),
                RegInfo {
                    ty: class.decl_type(),
                    vector: None,
                },
            );
        }
    }
    for (k, st) in f.body.iter().enumerate() {
        let pos = at(k);
        match st {
            Statement::Open => scopes.open(),
            Statement::Close => scopes.close(),
            Statement::RegDecl(d) => {
                // PTX ISA 5.2.5: `.f32x2` types instructions only (ptxas 13.0: "Type .f32x2 may
                // only be used as an instruction type").
                if d.ty == crate::types::ScalarType::F32x2 {
                    cx.error(
                        ErrorKind::UnknownType,
                        pos,
                        "`.f32x2` is an instruction type only: its registers are `.b64`",
                    );
                }
                if d.ty == crate::types::ScalarType::B128 && cx.version < crate::target::v(8, 3) {
                    cx.error(
                        ErrorKind::PtxVersionTooLow,
                        pos,
                        format!(
                            ".b128 registers need PTX ISA 8.3; the module says .version {}",
                            cx.version
                        ),
                    );
                }
                for n in &d.names {
                    let info = RegInfo {
                        ty: d.ty,
                        vector: d.vector,
                    };
                    if let Err(e) = scopes.declare(n.name.as_ref().into(), n.count, info) {
                        cx.error(ErrorKind::UndefinedRegister, pos, e.to_string());
                    }
                }
            }
            // PTX ISA 11.5.2 `.loc`: `inlined_at` is PTX 7.0 (ptxas 13.0: "Feature 'Line
            // information of inline functions' requires PTX ISA .version 7.0 or later").
            Statement::Loc(l)
                if l.contains("inlined_at") && cx.version < crate::target::v(7, 0) =>
            {
                cx.error(
                    ErrorKind::PtxVersionTooLow,
                    pos,
                    format!(
                        "`.loc` with `inlined_at` needs PTX ISA 7.0; the module says .version {}",
                        cx.version
                    ),
                );
            }
            Statement::LocalParam(p) => {
                locals.insert(p.name.clone(), SymbolKind::Data(StateSpace::Param));
            }
            Statement::Var(v) => {
                incomplete(cx, v, pos);
                if locals
                    .insert(v.name.clone(), SymbolKind::Data(v.space))
                    .is_some()
                {
                    cx.error(
                        ErrorKind::BadName,
                        pos,
                        format!("`{}` is declared twice in this function", v.name),
                    );
                }
            }
            // PTX ISA 11.3.1: the labels of a `.branchtargets` list are labels of the function
            // that its block sees (ptxas: "Unknown symbol").
            Statement::BranchTargets(b) => {
                cx.gate(Form::DirBranchTargets, ".branchtargets", pos);
                for l in &b.labels {
                    let name = match l {
                        Operand::Label(l) => l.to_string(),
                        Operand::Symbol(s) => s.to_string(),
                        other => other.to_string(),
                    };
                    if is_list(&name) || !label_visible(block_of[k], &name) {
                        cx.error(
                            ErrorKind::UndefinedLabel,
                            pos,
                            format!(
                                "`{}` lists `{name}`, which is not a label placed in a block that encloses it (PTX ISA 11.3.1)",
                                b.name
                            ),
                        );
                    }
                }
            }
            Statement::Instr(i) => {
                let i = &f.instruction(i);
                across.instruction(cx, f, i, pos);
                let env =
                    operands::Env {
                        scopes: &scopes,
                        locals: &locals,
                        label_visible: &|name: &str| label_visible(block_of[k], name),
                        target_list: &|name: &str| {
                            if !is_list(name) {
                                return None;
                            }
                            Some(lists.iter().any(|(n, at, b)| {
                                *n == name && *at < k && encloses(*b, block_of[k])
                            }))
                        },
                    };
                instruction(cx, &env, i, pos);
            }
            _ => {}
        }
    }
    across.finish(cx, f);
}

fn instruction(cx: &mut Ctx<'_>, env: &operands::Env<'_>, i: &InstrRef<'_>, pos: Option<Pos>) {
    use crate::parse::resolve::{Resolution, remembered};
    /// What the row lookup said, without a refusal's strings.
    enum Resolved {
        Form(Form),
        Refused { modifier: bool },
        Unknown,
    }
    let memo = std::cell::OnceCell::new();
    let memo = || memo.get_or_init(|| remembered(i));
    let resolved = match i.form {
        // The parser's own lookup of the same table for this instruction: not made twice
        // (issue 33).
        Some(f) if i.resolved => Resolved::Form(f),
        _ => memo().resolution_with(i, |r| match r {
            Resolution::Form(f) => Resolved::Form(*f),
            Resolution::WrongModifier { .. } => Resolved::Refused { modifier: true },
            Resolution::OperandCount { .. } | Resolution::WrongType { .. } => {
                Resolved::Refused { modifier: false }
            }
            Resolution::UnknownMnemonic | Resolution::UnknownModifiers => Resolved::Unknown,
        }),
    };
    // What ptxas takes beyond the grammar (modifiers out of order or twice, no `.aligned`) is a
    // warning, and the instruction is checked as its row writes it.
    if let Resolved::Refused { modifier: true } = resolved {
        if let Some((form, fixed)) = memo().lenient(i) {
            cx.warning(
                pos,
                format!(
                    "`{}` is `{}` as the PTX ISA writes it ({}); ptxas 13.0 takes it as written",
                    i.opcode(),
                    fixed.opcode(),
                    form.spec().syntax
                ),
            );
            instruction(cx, env, &fixed.view(), pos);
            return;
        }
    }
    if let Resolved::Refused { modifier: true } = resolved {
        if let Some(rounded) = legacy_mad(cx, i) {
            instruction(cx, env, &rounded.view(), pos);
            return;
        }
    }
    let op = i.opcode_text();
    // The guard.
    if let Some(g) = &i.guard {
        env.expect_pred(cx, env.scopes.lookup_reg(g.pred), g.pred, op, pos);
    }
    if let Some(g) = &i.named_guard {
        env.expect_pred(cx, env.scopes.lookup(&g.name), &g.name, op, pos);
    }
    // Types exist in this version.
    let types = i.type_list();
    // Past a full list, the rest as written (no row names that many: the row lookup refuses it).
    let rest = (types.len() == crate::instr::TypeList::CAPACITY)
        .then(|| i.types().skip(types.len()))
        .into_iter()
        .flatten();
    for t in types.iter().copied().chain(rest) {
        if t.min_ptx() > cx.version {
            cx.error(
                ErrorKind::PtxVersionTooLow,
                pos,
                format!(
                    "type {t} of `{op}` needs PTX ISA {}; the module says .version {}",
                    t.min_ptx(),
                    cx.version
                ),
            );
        }
    }
    // Every name an operand uses is declared.
    for o in i.operands {
        env.declared(cx, o, op, pos);
    }
    let form = match resolved {
        Resolved::Form(f) => f,
        Resolved::Refused { .. } => {
            // The refusal depends on the opcode and the operand count alone: formatted once per
            // opcode and shared by every line of it, so that an instruction no row takes costs no
            // more than one a row takes (issue 33).
            let (kind, message) = memo().refusal(|r| refusal(r, i));
            cx.error(*kind, pos, Arc::clone(message));
            return;
        }
        Resolved::Unknown => {
            // The parser warned already; what can be checked without a row still is.
            for q in crate::forms::features::qualifiers(i) {
                cx.gate(q, op, pos);
            }
            if i.operands.iter().any(|o| matches!(o, Operand::Addr(_))) {
                env.spaces(cx, i, pos);
            }
            return;
        }
    };
    row_checks(cx, form, i, pos);
    env.vectors(cx, form, i, pos);
    env.types(cx, form, i, &types, pos);
    env.spaces(cx, i, pos);
    env.bulk_source(cx, form, i, pos);
    env.targets(cx, i, pos);
}

/// The checks of `i`'s row (PTX ISA version and target gates of the row and of the features its
/// modifiers imply, the row's rules, and the operands' kinds against its slots), said once per
/// instruction shape ([`shape`]).
fn row_checks(cx: &mut Ctx<'_>, form: Form, i: &InstrRef<'_>, pos: Option<Pos>) {
    let s = shape::Shape::of(form, i);
    if let Some(said) = s.as_ref().and_then(|s| cx.shapes.get(s)) {
        cx.out
            .extend(said.iter().map(|(severity, kind, message)| Diagnostic {
                severity: *severity,
                kind: *kind,
                message: Arc::clone(message),
                pos,
            }));
        return;
    }
    let before = cx.out.len();
    let op = i.opcode_text();
    cx.gate(form, op, pos);
    for extra in crate::forms::features::implied(form, i) {
        cx.gate(extra, op, pos);
    }
    if let Err(v) = crate::forms::rules::check(form, i) {
        cx.error(v.kind, pos, v.message);
    }
    operands::kinds(cx, form, i, pos);
    if let Some(s) = s {
        let said = cx.out.get(before..).unwrap_or_default();
        let said = said
            .iter()
            .map(|d| (d.severity, d.kind, Arc::clone(&d.message)));
        cx.shapes.keep(s, said);
    }
}

/// `mad.f32` with no rounding, the legacy form (PTX ISA 9.7.3.7: a rounding modifier is
/// required for sm_20 and later targets), as `mad.rn.f32` where ptxas 13.0 still takes it: on
/// sm_1x targets, and on the others below PTX ISA 3.2 (measured: `.version 3.1` with `.target
/// sm_30` passes, 3.2 gives "Rounding modifier required for instruction 'mad'").
fn legacy_mad(cx: &Ctx<'_>, i: &InstrRef<'_>) -> Option<Instruction> {
    let legacy = cx.sm().is_some_and(|sm| sm < 20) || cx.version < crate::target::v(3, 2);
    let plain = i.mnemonic == "mad" && i.modifiers.last().is_some_and(|m| m == "f32");
    let rounded = i
        .modifiers
        .iter()
        .any(|m| matches!(m.as_ref(), "rn" | "rz" | "rm" | "rp"));
    if !legacy || !plain || rounded {
        return None;
    }
    let mut fixed = i.to_instruction();
    fixed.modifiers.insert(0, "rn".into());
    Some(fixed)
}

/// The error for an instruction the table covers but no row takes, as `resolution` says why.
fn refusal(
    resolution: &crate::parse::resolve::Resolution,
    i: &InstrRef<'_>,
) -> (ErrorKind, String) {
    use crate::parse::resolve::Resolution;
    let op = i.opcode_text();
    match resolution {
        Resolution::OperandCount { form, range } => {
            let want = if range.0 == range.1 {
                format!("{}", range.0)
            } else {
                format!("{} to {}", range.0, range.1)
            };
            (
                ErrorKind::OperandCount,
                format!(
                    "`{op}` takes {want} operands ({}), not {}",
                    form.spec().syntax,
                    i.operands.len()
                ),
            )
        }
        Resolution::WrongType { form, token } => (
            ErrorKind::OperandType,
            format!(
                "`.{token}` is not a type `{op}` takes ({})",
                form.spec().syntax
            ),
        ),
        Resolution::WrongModifier {
            family,
            form,
            difference,
        } => {
            let spec = form.spec();
            let why = difference
                .as_ref()
                .map_or(String::new(), |d| format!(": {d}"));
            (
                ErrorKind::InvalidModifier,
                format!(
                    "`{op}` is no form of `{}`; the nearest is `{}` ({}, PTX ISA {}){why}",
                    family.unwrap_or(i.mnemonic.split('.').next().unwrap_or("")),
                    spec.name,
                    spec.syntax,
                    spec.section
                ),
            )
        }
        // Not refusals: the caller handles them.
        Resolution::Form(_) | Resolution::UnknownMnemonic | Resolution::UnknownModifiers => (
            ErrorKind::Invalid,
            format!("`{op}` is not refused by the table"),
        ),
    }
}
