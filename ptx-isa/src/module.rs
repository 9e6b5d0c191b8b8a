//! Modules, functions, parameters, performance directives and shared variables (PTX ISA chapter 11
//! "Directives": 11.1 module directives `.version`/`.target`/`.address_size`, 11.2 `.entry`/`.func`,
//! 11.4 performance-tuning directives, 11.7 cluster dimension directives).

use crate::error::{Error, ErrorKind, Result};
use crate::forms::Form;
use crate::instr::{Guard, InstrRef, Instruction, NamedGuard, Operand};
use crate::reg::RegClass;
use crate::space::StateSpace;
use crate::target::{PtxVersion, Target};
use crate::types::ScalarType;

/// What a parameter holds (PTX ISA 5.1.6.1 "Kernel Function Parameters", 5.1.6.2 "Kernel Function
/// Parameter Attributes").
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ParamKind {
    /// A scalar: `.param .u32 n`.
    Scalar(ScalarType),
    /// A pointer: `.param .u64 .ptr .global .align 16 a` (the `.ptr` attribute, PTX 2.2+, kernels
    /// only).
    Ptr {
        /// The space it points into (`.global`, `.shared`, `.const`, `.local`), or generic.
        space: StateSpace,
        /// The alignment of the pointee in bytes, if known.
        align: Option<u32>,
    },
    /// A byte array passed by value: `.param .align 64 .b8 tmap[128]` (a CUDA tensor map).
    Bytes {
        /// Alignment in bytes.
        align: u32,
        /// Size in bytes.
        size: u32,
    },
    /// An opaque handle, `.param .texref t` (PTX ISA 5.3 "Texture Sampler and Surface Types").
    Opaque(Opaque),
    /// A register parameter of a device function, `.reg .b32 a` (PTX ISA 11.1.5 "Kernel and
    /// Function Directives: .func": a function's parameters and return values may be `.reg`; the
    /// body reads and writes them as registers).
    Reg(ScalarType),
}

/// An opaque handle type (PTX ISA 5.3 "Texture Sampler and Surface Types"): what `tex`, `tld4`,
/// `suld`, `sust` and the `txq`/`suq` queries name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Opaque {
    /// `.texref`
    Texref,
    /// `.samplerref` (only with `.target ..., texmode_independent`)
    Samplerref,
    /// `.surfref`
    Surfref,
}

impl Opaque {
    /// The type as written, with its dot.
    pub const fn directive(self) -> &'static str {
        match self {
            Opaque::Texref => ".texref",
            Opaque::Samplerref => ".samplerref",
            Opaque::Surfref => ".surfref",
        }
    }

    /// The opaque type `w` (with its dot) names.
    pub fn from_directive(w: &str) -> Option<Opaque> {
        [Opaque::Texref, Opaque::Samplerref, Opaque::Surfref]
            .into_iter()
            .find(|o| o.directive() == w)
    }
}

/// One parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Param {
    /// The parameter's name in the PTX.
    pub name: String,
    /// What it holds.
    pub kind: ParamKind,
}

/// A performance-tuning or cluster directive of a kernel (PTX ISA 11.4, 11.7).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Directive {
    /// `.maxntid x, y, z`
    MaxNtid([u32; 3]),
    /// `.reqntid x, y, z`
    ReqNtid([u32; 3]),
    /// `.minnctapersm n`
    MinNctaPerSm(u32),
    /// `.maxnreg n`
    MaxNreg(u32),
    /// `.reqnctapercluster x, y, z` (PTX 7.8, sm_90)
    ReqNctaPerCluster([u32; 3]),
    /// `.explicitcluster` (PTX 7.8, sm_90)
    ExplicitCluster,
    /// `.maxclusterrank n` (PTX 7.8, sm_90)
    MaxClusterRank(u32),
}

impl Directive {
    /// The form-table row that gates the directive, if any.
    pub fn form(self) -> Option<Form> {
        match self {
            Directive::ReqNctaPerCluster(_) => Some(Form::DirReqNctaPerCluster),
            Directive::ExplicitCluster => Some(Form::DirExplicitCluster),
            Directive::MaxClusterRank(_) => Some(Form::DirMaxClusterRank),
            _ => None,
        }
    }
}

/// A statement of a function body. 40 bytes: an instruction's operands and opcode words are
/// held by its function ([`BodyInstr`]), and the rare large statements are boxed (issue 33: the
/// parsed 1.3 MB CUTLASS module took 15 MB, 112 bytes a statement and up to three heap blocks
/// an instruction).
#[derive(Debug, Clone, PartialEq)]
pub enum Statement {
    /// An instruction ([`Function::instruction`] reads it).
    Instr(BodyInstr),
    /// A label placed here.
    Label(crate::instr::Label),
    /// A comment line: its text after `// `. Borrowed when it is one nvcc writes around every
    /// inline-asm block (the parser allocates nothing for those, issue 33).
    Comment(std::borrow::Cow<'static, str>),
    /// `{`: a nested scope (used around `call` sequences).
    Open,
    /// `}`
    Close,
    /// A `.param` declaration inside a nested scope: `.param .b32 param0;` (boxed: a
    /// statement is 40 bytes, issue 33).
    LocalParam(Box<Param>),
    // ---- parsed text (issue 9): what nvcc, Triton and LLVM write that the builder does not ------
    /// A `.reg` declaration the builder's per-class blocks do not cover: named registers, another
    /// type, a vector, or one inside a nested `{ }` scope (PTX ISA 5.1.1, 5.4.6).
    RegDecl(RegDecl),
    /// A label with a name of its own (`$L__BB0_2:`); the builder's labels are [`crate::Label`].
    NamedLabel(String),
    /// `.loc file line col[, ...]`, the rest of the line as written with single spaces (PTX ISA
    /// 11.5.2 "Debugging Directives: .loc").
    Loc(String),
    /// `.pragma "a", "b";`: the strings (PTX ISA 11.8 "Pragma Directives").
    Pragma(Vec<String>),
    /// A function-scope variable: `.local .align 8 .b8 __local_depot0[32];` (PTX ISA 5.1).
    Var(Box<Variable>),
    /// Any other directive statement, kept as written without its `;` (e.g. `prototype_0 :
    /// .callprototype ()_ (.param .b64 _);`).
    Other(String),
    /// A list of branch targets: `name: .branchtargets L0, L1;` (PTX ISA 11.3.1), what `brx.idx`
    /// indexes.
    BranchTargets(Box<BranchTargets>),
}

/// An instruction of a function body ([`Statement::Instr`]): its guard and row inline, its
/// mnemonic, modifiers and operands in its function's lists, a comment or a named guard boxed.
/// [`Function::instruction`] reads it as an [`InstrRef`]; [`Function::push_instruction`] adds
/// one. An index into one function's lists: it means nothing in another function.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BodyInstr {
    guard: Option<Guard>,
    form: Option<Form>,
    /// `form` is the parser's lookup of the table ([`InstrRef`]'s `resolved`).
    resolved: bool,
    /// The mnemonic and then the modifiers: `words_len` words from `words` in
    /// [`InstrArena::words`].
    words: u32,
    words_len: u32,
    /// `operands_len` operands from `operands` in [`InstrArena::operands`].
    operands: u32,
    operands_len: u32,
    /// The comment and the named guard, which few instructions have.
    extra: Option<Box<InstrExtra>>,
}

/// What few instructions have ([`BodyInstr`]).
#[derive(Debug, Clone, PartialEq, Eq)]
struct InstrExtra {
    comment: Option<Box<str>>,
    named_guard: Option<NamedGuard>,
}

impl BodyInstr {
    /// The form-table row, when known (as [`InstrRef::form`]).
    pub fn form(&self) -> Option<Form> {
        self.form
    }

    /// Sets the row the parser's lookup of the table found for the instruction.
    pub(crate) fn set_resolved_form(&mut self, form: Option<Form>) {
        self.form = form;
        self.resolved = form.is_some();
    }

    /// The comment written after the instruction, if any.
    pub fn comment(&self) -> Option<&str> {
        self.extra.as_ref()?.comment.as_deref()
    }

    /// Sets the comment written after the instruction.
    pub(crate) fn set_comment(&mut self, c: Box<str>) {
        self.extra
            .get_or_insert_with(|| {
                Box::new(InstrExtra {
                    comment: None,
                    named_guard: None,
                })
            })
            .comment = Some(c);
    }
}

/// The opcode words and operands of a function body's instructions, each instruction's in one
/// run ([`BodyInstr`]): two lists per function in place of two heap blocks per instruction
/// (issue 33). The builder and the parser fill one; a [`Function`] keeps it.
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct InstrArena {
    /// Each instruction's mnemonic and then its modifiers.
    pub(crate) words: Vec<std::borrow::Cow<'static, str>>,
    /// Each instruction's operands.
    pub(crate) operands: Vec<Operand>,
}

/// Where an [`InstrArena`]'s lists ended: what [`InstrArena::truncate`] goes back to.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ArenaMark {
    words: usize,
    operands: usize,
}

/// An index into an [`InstrArena`] list, in 32 bits: a parsed body holds fewer words than its
/// text's bytes (the lexer's offsets are 32 bits); past that, a run reads as empty, never as
/// another instruction's.
pub(crate) fn index32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

impl InstrArena {
    /// Empty lists with room for `words` words and `operands` operands.
    pub(crate) fn with_capacity(words: usize, operands: usize) -> InstrArena {
        InstrArena {
            words: Vec::with_capacity(words),
            operands: Vec::with_capacity(operands),
        }
    }

    /// Moves `i`'s words and operands into the lists: the body's statement for it.
    pub(crate) fn push(&mut self, i: Instruction) -> BodyInstr {
        let Instruction {
            guard,
            mnemonic,
            modifiers,
            operands,
            form,
            comment,
            named_guard,
        } = i;
        let words = self.words.len();
        let ops = self.operands.len();
        self.words.push(mnemonic);
        self.words.extend(modifiers);
        self.operands.extend(operands);
        let extra = (comment.is_some() || named_guard.is_some()).then(|| {
            Box::new(InstrExtra {
                comment,
                named_guard: named_guard.map(|g| *g),
            })
        });
        self.finish(guard, form, extra, words, ops)
    }

    /// The statement for the words and operands pushed since `words` and `operands` (the
    /// parser reads an instruction's straight into the lists, issue 33).
    pub(crate) fn read(
        &self,
        guard: Option<Guard>,
        named_guard: Option<NamedGuard>,
        words: usize,
        operands: usize,
    ) -> BodyInstr {
        let extra = named_guard.map(|g| {
            Box::new(InstrExtra {
                comment: None,
                named_guard: Some(g),
            })
        });
        self.finish(guard, None, extra, words, operands)
    }

    fn finish(
        &self,
        guard: Option<Guard>,
        form: Option<Form>,
        extra: Option<Box<InstrExtra>>,
        words: usize,
        operands: usize,
    ) -> BodyInstr {
        BodyInstr {
            guard,
            form,
            resolved: false,
            words: index32(words),
            words_len: index32(self.words.len() - words),
            operands: index32(operands),
            operands_len: index32(self.operands.len() - operands),
            extra,
        }
    }

    /// The instruction `b` of these lists.
    pub(crate) fn get<'a>(&'a self, b: &'a BodyInstr) -> InstrRef<'a> {
        let w = b.words as usize;
        let words = self
            .words
            .get(w..w + b.words_len as usize)
            .unwrap_or_default();
        let o = b.operands as usize;
        let extra = b.extra.as_deref();
        InstrRef {
            guard: b.guard,
            mnemonic: words.first().map_or("", |m| m),
            modifiers: words.get(1..).unwrap_or_default(),
            operands: self
                .operands
                .get(o..o + b.operands_len as usize)
                .unwrap_or_default(),
            form: b.form,
            comment: extra.and_then(|e| e.comment.as_deref()),
            named_guard: extra.and_then(|e| e.named_guard.as_ref()),
            resolved: b.resolved,
        }
    }

    /// Where the lists end now.
    pub(crate) fn mark(&self) -> ArenaMark {
        ArenaMark {
            words: self.words.len(),
            operands: self.operands.len(),
        }
    }

    /// Drops what was pushed after `m` (the builder's rollback to a checkpoint).
    pub(crate) fn truncate(&mut self, m: ArenaMark) {
        self.words.truncate(m.words);
        self.operands.truncate(m.operands);
    }
}

/// A `.branchtargets` list (PTX ISA 11.3.1): its name and its labels, which must be labels of the
/// function; `brx.idx` (9.7.12.4) names the list after it is declared.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BranchTargets {
    /// The name `brx.idx` refers to (`$T__0` from the builder).
    pub name: String,
    /// The labels in index order: each an [`crate::Operand::Label`] or, in parsed text, an
    /// [`crate::Operand::Symbol`] (`$L__BB0_2`).
    pub labels: Vec<crate::instr::Operand>,
}

/// A `.reg` declaration: `.reg .b32 %r<5>;`, `.reg .pred p, q;`, `.reg .v2 .f32 v;`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegDecl {
    /// The declared type.
    pub ty: ScalarType,
    /// A vector width (`.reg .v4 .f32 v;`).
    pub vector: Option<crate::types::VectorWidth>,
    /// The names, in order.
    pub names: Vec<RegName>,
}

/// One name of a `.reg` declaration: `p`, or the `count` registers `%r0`..`%r{count-1}` of
/// `%r<count>` (PTX ISA 5.4.6 "Parameterized Variable Names").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegName {
    /// The name, or the prefix of a parameterized name. Borrowed when the parser keeps the text
    /// for the process (a short name it met before, `p`: issue 33).
    pub name: std::borrow::Cow<'static, str>,
    /// `Some(n)` for `name<n>`.
    pub count: Option<u32>,
}

impl std::fmt::Display for RegDecl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(".reg ")?;
        if let Some(v) = self.vector {
            write!(f, ".{} ", v.name())?;
        }
        write!(f, "{} ", self.ty)?;
        crate::emit::write_list(f, "", &self.names, "")
    }
}

impl std::fmt::Display for RegName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.name)?;
        match self.count {
            Some(c) => write!(f, "<{c}>"),
            None => Ok(()),
        }
    }
}

/// A linking directive on a module-scope declaration (PTX ISA 11.6 "Linking Directives").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Linkage {
    /// `.visible`
    Visible,
    /// `.extern`
    Extern,
    /// `.weak`
    Weak,
    /// `.common`
    Common,
}

impl Linkage {
    /// The directive as written.
    pub const fn directive(self) -> &'static str {
        match self {
            Linkage::Visible => ".visible",
            Linkage::Extern => ".extern",
            Linkage::Weak => ".weak",
            Linkage::Common => ".common",
        }
    }
}

/// A variable initializer (PTX ISA 5.4.4 "Initializers"): `= 0`, `= {1, 2}`, `= {foo, generic(bar)}`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Init {
    /// A constant.
    Imm(crate::instr::Imm),
    /// The address of a variable or function.
    Symbol(String),
    /// `generic(name)`: the generic address of a variable.
    Generic(String),
    /// `{a, b, ...}`
    List(Vec<Init>),
}

impl std::fmt::Display for Init {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Init::Imm(i) => i.fmt(f),
            Init::Symbol(s) => f.write_str(s),
            Init::Generic(s) => write!(f, "generic({s})"),
            Init::List(v) => crate::emit::write_list(f, "{", v, "}"),
        }
    }
}

/// How a module-scope function is declared (parsed text; the builder's are `.visible` and defined).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FunctionDecl {
    /// `.visible`, `.extern`, `.weak`, or none (internal).
    pub linkage: Option<Linkage>,
    /// False for a prototype (`.extern .func f(...);`), true when a body follows.
    pub defined: bool,
    /// `.noreturn` (PTX ISA 11.3.3, device functions).
    pub noreturn: bool,
}

impl FunctionDecl {
    /// What the builder writes: `.visible`, with a body.
    pub const BUILT: FunctionDecl = FunctionDecl {
        linkage: Some(Linkage::Visible),
        defined: true,
        noreturn: false,
    };
}

/// One module-scope item in source order (parsed text keeps its order; a built module lists its
/// variables, then its functions).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    /// The variable at this index of [`Module::variables`].
    Variable(usize),
    /// The function at this index of [`Module::functions`], and how it is declared.
    Function(usize, FunctionDecl),
    /// A module-scope directive kept as written: `.file 1 "a.cu"`, a `.section` block, a
    /// module-scope `.pragma`.
    Directive(String),
}

/// Whether a function is a kernel or a device function.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FunctionKind {
    /// `.visible .entry`: a kernel.
    Entry,
    /// `.func`: a device function (`.visible .func` when visible).
    Func,
}

/// A finished function (kernel or device function).
#[derive(Debug, Clone, PartialEq)]
pub struct Function {
    /// The function's name.
    pub name: String,
    /// Kernel or device function.
    pub kind: FunctionKind,
    /// Its parameters, in order.
    pub params: Vec<Param>,
    /// The return parameter of a `.func`, if any.
    pub ret: Option<Param>,
    /// Its directives.
    pub directives: Vec<Directive>,
    /// How many registers of each class it uses (`%f<N>`), indexed like [`RegClass::ALL`].
    pub reg_counts: [u32; 9],
    /// The body.
    pub body: Vec<Statement>,
    /// The target the function was built for.
    pub target: Target,
    /// The lowest PTX version the body needs, and what needs it.
    pub required_ptx: (PtxVersion, String),
    /// The words and operands of the body's instructions ([`Function::instruction`]).
    pub(crate) arena: InstrArena,
}

impl Function {
    /// The instruction `i`, a statement of this function's body.
    pub fn instruction<'a>(&'a self, i: &'a BodyInstr) -> InstrRef<'a> {
        self.arena.get(i)
    }

    /// The body's instructions in order, each with its index in [`Function::body`].
    pub fn instructions(&self) -> impl Iterator<Item = (usize, InstrRef<'_>)> {
        self.body.iter().enumerate().filter_map(|(k, s)| match s {
            Statement::Instr(i) => Some((k, self.arena.get(i))),
            _ => None,
        })
    }

    /// Appends `i` to the body (as written: no row is checked; [`crate::validate`] checks).
    pub fn push_instruction(&mut self, i: Instruction) {
        let b = self.arena.push(i);
        self.body.push(Statement::Instr(b));
    }

    /// The number of registers of `class` in use.
    pub fn reg_count(&self, class: RegClass) -> u32 {
        self.reg_counts[class as usize]
    }
}

/// A module-scope variable: `.shared .align 8 .b8 bars[64];` or the dynamic
/// `.extern .shared .align 1024 .b8 smem[];` (PTX ISA 5.1.5, 11.6 "Linking Directives: .extern").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Variable {
    /// Its name.
    pub name: String,
    /// Its space (`.shared`, `.global`, `.const`).
    pub space: StateSpace,
    /// Its alignment in bytes.
    pub align: u32,
    /// Its size in bytes; `None` for the `.extern` unsized array of dynamic shared memory.
    pub bytes: Option<u32>,
    // ---- parsed text (issue 9): the builder's variables are `.b8` arrays of `bytes` ------------
    /// The element type (`.b8` for the builder's byte arrays).
    pub elem: ScalarType,
    /// A vector element (`.global .v4 .f32 v;`).
    pub vector: Option<crate::types::VectorWidth>,
    /// The array dimensions as written (`None` for `[]`); empty for a scalar.
    pub dims: Vec<Option<u32>>,
    /// Its linking directive (the builder's dynamic shared array is `.extern`).
    pub linkage: Option<Linkage>,
    /// Its initializer.
    pub init: Option<Init>,
    /// An opaque handle (`.global .texref t;`, PTX ISA 5.3): the type in place of `elem`, which
    /// is then `.b64`, the handle's size.
    pub opaque: Option<Opaque>,
}

impl Variable {
    /// `{linkage }{space} .align A{ .vN} .T name[dims]{ = init}` (without `;`); an opaque handle
    /// `{linkage }{space} .texref name`.
    pub fn declaration(&self) -> String {
        let mut s = String::new();
        if let Some(l) = self.linkage {
            s.push_str(l.directive());
            s.push(' ');
        }
        if let Some(o) = self.opaque {
            s.push_str(&format!("{} {} {}", self.space, o.directive(), self.name));
            return s;
        }
        s.push_str(&format!("{} .align {} ", self.space, self.align));
        if let Some(v) = self.vector {
            s.push_str(&format!(".{} ", v.name()));
        }
        s.push_str(&format!("{} {}", self.elem, self.name));
        for d in &self.dims {
            match d {
                Some(n) => s.push_str(&format!("[{n}]")),
                None => s.push_str("[]"),
            }
        }
        if let Some(i) = &self.init {
            s.push_str(&format!(" = {i}"));
        }
        s
    }
}

/// A PTX module: one `.version`, one `.target`, `.address_size 64`, variables and functions.
///
/// ```
/// use ptx_isa::{Module, Target, ty};
/// let mut m = Module::new(Target::Sm90a);
/// let mut k = m.entry("noop");
/// k.ret().unwrap();
/// m.add(k.finish().unwrap()).unwrap();
/// let ptx = m.to_ptx().unwrap();
/// assert!(ptx.contains(".target sm_90a"));
/// assert!(ptx.contains(".version 8.0")); // the lowest that knows sm_90a
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct Module {
    pub(crate) target: Target,
    pub(crate) version: Option<PtxVersion>,
    pub(crate) variables: Vec<Variable>,
    pub(crate) functions: Vec<Function>,
    pub(crate) check_targets: bool,
    // ---- parsed text (issue 9) ------------------------------------------------------------------
    /// The `.target` name when it is not one of [`Target::ALL`] (`sm_75`); `target` is then a
    /// stand-in and gating is not checked.
    pub(crate) target_name: Option<String>,
    /// Further `.target` entries: `debug`, `texmode_independent`, `map_f64_to_f32`.
    pub(crate) target_options: Vec<String>,
    /// `.address_size`: 64 in a built module; as written in parsed text, `None` where the text
    /// has none (PTX ISA 11.1.3: the directive is optional, and does not exist before PTX 2.3).
    pub(crate) address_size: Option<u32>,
    /// Module-scope items in source order; empty for a built module (variables, then functions).
    pub(crate) layout: Vec<Item>,
}

impl Module {
    /// An empty module for `target`.
    pub fn new(target: Target) -> Module {
        Module {
            target,
            version: None,
            variables: Vec::new(),
            functions: Vec::new(),
            check_targets: true,
            target_name: None,
            target_options: Vec::new(),
            address_size: Some(64),
            layout: Vec::new(),
        }
    }

    /// Turns off target gating: forms the target lacks are written anyway. For testing ptxkit's
    /// gating against ptxas only; a module built this way may not assemble.
    pub fn without_target_checks(mut self) -> Module {
        self.check_targets = false;
        self
    }

    /// The target.
    pub fn target(&self) -> Target {
        self.target
    }

    /// Sets `.version` explicitly. [`Module::to_ptx`] fails if it is lower than what the module needs.
    pub fn set_version(&mut self, version: PtxVersion) -> Result<()> {
        if !version.is_supported() {
            return Err(Error::new(
                ErrorKind::BadVersion,
                format!("PTX ISA {version} is outside 7.0-9.0"),
            ));
        }
        self.version = Some(version);
        Ok(())
    }

    /// The lowest `.version` this module can use, and what sets it.
    pub fn required_version(&self) -> (PtxVersion, String) {
        let mut best = (self.target.min_ptx(), format!("target {}", self.target));
        for f in &self.functions {
            if f.required_ptx.0 > best.0 {
                best = f.required_ptx.clone();
            }
        }
        best
    }

    /// The `.version` the module is written with: the explicit one, else the lowest it needs.
    pub fn version(&self) -> Result<PtxVersion> {
        let (need, why) = self.required_version();
        if need > PtxVersion::MAX {
            return Err(Error::new(
                ErrorKind::PtxVersionTooLow,
                format!(
                    "{why} needs PTX ISA {need}, above the {} that ptxkit writes",
                    PtxVersion::MAX
                ),
            )
            .on_target(self.target));
        }
        match self.version {
            Some(v) if v < need => Err(Error::new(
                ErrorKind::PtxVersionTooLow,
                format!(".version {v} is set but {why} needs PTX ISA {need}"),
            )
            .on_target(self.target)),
            Some(v) => Ok(v),
            None => Ok(need),
        }
    }

    /// Starts a kernel (`.visible .entry name`). Add it with [`Module::add`] once built.
    pub fn entry(&self, name: &str) -> crate::builder::FunctionBuilder {
        crate::builder::FunctionBuilder::new(
            name,
            FunctionKind::Entry,
            self.target,
            self.check_targets,
        )
    }

    /// Starts a device function (`.func name`). Add it with [`Module::add`] once built.
    pub fn func(&self, name: &str) -> crate::builder::FunctionBuilder {
        crate::builder::FunctionBuilder::new(
            name,
            FunctionKind::Func,
            self.target,
            self.check_targets,
        )
    }

    /// Adds a finished function. Device functions must be added before the kernels that call them.
    pub fn add(&mut self, f: Function) -> Result<()> {
        if f.target != self.target {
            return Err(Error::new(
                ErrorKind::Invalid,
                format!(
                    "function built for {} added to a module for {}",
                    f.target, self.target
                ),
            )
            .in_function(&f.name));
        }
        self.check_new_name(&f.name)?;
        if !self.layout.is_empty() {
            self.layout
                .push(Item::Function(self.functions.len(), FunctionDecl::BUILT));
        }
        self.functions.push(f);
        Ok(())
    }

    /// Declares a static shared variable `.shared .align A .b8 name[bytes];` and returns its name
    /// (an address operand: `Addr::<Shared>::symbol(name)`).
    pub fn shared(&mut self, name: &str, align: u32, bytes: u32) -> Result<String> {
        self.variable(
            name,
            StateSpace::Shared(crate::space::SharedScope::Implicit),
            align,
            Some(bytes),
        )
    }

    /// Declares the dynamic shared memory array `.extern .shared .align A .b8 name[];` (its size is
    /// set at launch).
    pub fn dynamic_shared(&mut self, name: &str, align: u32) -> Result<String> {
        self.variable(
            name,
            StateSpace::Shared(crate::space::SharedScope::Implicit),
            align,
            None,
        )
    }

    /// Declares an initialised global byte array `{linkage} .global .align A .b8 name[N] = {b0,
    /// ...};` (PTX ISA 5.1.4 "Global State Space", 5.4.4 "Initializers", 11.6 "Linking
    /// Directives") and returns its name: a format string for `vprintf` (no linkage, as nvcc
    /// writes them), or a block the runtime finds by name (`.visible`, as nvcc writes a
    /// `__device__` variable, for `cuModuleGetGlobal`).
    pub fn global_bytes(
        &mut self,
        name: &str,
        align: u32,
        data: &[u8],
        linkage: Option<Linkage>,
    ) -> Result<String> {
        let bytes = u32::try_from(data.len()).map_err(|_| {
            Error::new(
                ErrorKind::Invalid,
                format!("`{name}` of {} bytes is too large", data.len()),
            )
        })?;
        self.variable(name, StateSpace::Global, align, Some(bytes))?;
        let init = Init::List(
            data.iter()
                .map(|&b| Init::Imm(crate::instr::Imm::UInt(u64::from(b))))
                .collect(),
        );
        if let Some(v) = self.variables.last_mut() {
            v.init = Some(init);
            v.linkage = linkage;
        }
        Ok(name.to_string())
    }

    /// Declares an external device function: its prototype `.extern .func (ret) name(params);`
    /// (PTX ISA 11.6 "Linking Directives: .extern"), resolved when the driver links the module
    /// (`vprintf`: the PTX Writer's Guide to Interoperability, "System Calls"). Calls to it are
    /// built with [`crate::FunctionBuilder::call`] on the returned prototype. Declaring the same
    /// prototype twice returns the first; another function of that name is an error.
    pub fn extern_func(
        &mut self,
        name: &str,
        params: Vec<Param>,
        ret: Option<Param>,
    ) -> Result<Function> {
        if let Some(f) = self.functions.iter().find(|f| f.name == name) {
            if f.kind == FunctionKind::Func && f.params == params && f.ret == ret {
                return Ok(f.clone());
            }
            return Err(Error::new(
                ErrorKind::BadName,
                format!("`{name}` is already defined in this module with another signature"),
            ));
        }
        check_identifier(name)?;
        self.check_new_name(name)?;
        let f = Function {
            name: name.to_string(),
            kind: FunctionKind::Func,
            params,
            ret,
            directives: Vec::new(),
            reg_counts: [0; 9],
            body: Vec::new(),
            target: self.target,
            required_ptx: (PtxVersion::MIN, String::new()),
            arena: InstrArena::default(),
        };
        if self.layout.is_empty() {
            self.layout = self.layout().into_owned();
        }
        self.layout.push(Item::Function(
            self.functions.len(),
            FunctionDecl {
                linkage: Some(Linkage::Extern),
                defined: false,
                noreturn: false,
            },
        ));
        self.functions.push(f.clone());
        Ok(f)
    }

    fn variable(
        &mut self,
        name: &str,
        space: StateSpace,
        align: u32,
        bytes: Option<u32>,
    ) -> Result<String> {
        check_identifier(name)?;
        if !align.is_power_of_two() {
            return Err(Error::new(
                ErrorKind::Invalid,
                format!("alignment {align} of `{name}` is not a power of two"),
            ));
        }
        if bytes == Some(0) {
            return Err(Error::new(
                ErrorKind::Invalid,
                format!("`{name}` has size 0"),
            ));
        }
        if bytes.is_none() && self.variables.iter().any(|v| v.bytes.is_none()) {
            return Err(Error::new(
                ErrorKind::BadName,
                "a module has one dynamic shared array",
            ));
        }
        self.check_new_name(name)?;
        if !self.layout.is_empty() {
            self.layout.push(Item::Variable(self.variables.len()));
        }
        self.variables.push(Variable {
            name: name.to_string(),
            space,
            align,
            bytes,
            elem: ScalarType::B8,
            vector: None,
            dims: vec![bytes],
            linkage: bytes.is_none().then_some(Linkage::Extern),
            init: None,
            opaque: None,
        });
        Ok(name.to_string())
    }

    fn check_new_name(&self, name: &str) -> Result<()> {
        if self.functions.iter().any(|f| f.name == name)
            || self.variables.iter().any(|v| v.name == name)
        {
            return Err(Error::new(
                ErrorKind::BadName,
                format!("`{name}` is already defined in this module"),
            ));
        }
        Ok(())
    }

    /// The module's functions.
    pub fn functions(&self) -> &[Function] {
        &self.functions
    }

    /// The module's variables.
    pub fn variables(&self) -> &[Variable] {
        &self.variables
    }

    /// The function called `name` (its definition, where a prototype comes first).
    pub fn function(&self, name: &str) -> Option<&Function> {
        let layout = self.layout();
        let defined = |i: usize| {
            layout
                .iter()
                .any(|it| matches!(it, Item::Function(j, d) if *j == i && d.defined))
        };
        let mut named = self
            .functions
            .iter()
            .enumerate()
            .filter(|(_, f)| f.name == name);
        let first = named.clone().next().map(|(_, f)| f);
        named.find(|(i, _)| defined(*i)).map(|(_, f)| f).or(first)
    }

    /// The module-scope items in order: as parsed, or (for a built module) its variables, then its
    /// functions.
    pub fn layout(&self) -> std::borrow::Cow<'_, [Item]> {
        if self.layout.is_empty() {
            let vars = (0..self.variables.len()).map(Item::Variable);
            let funcs = (0..self.functions.len()).map(|i| Item::Function(i, FunctionDecl::BUILT));
            std::borrow::Cow::Owned(vars.chain(funcs).collect())
        } else {
            std::borrow::Cow::Borrowed(&self.layout)
        }
    }

    /// The `.target` name as written (`sm_90a`, or one ptxkit does not model such as `sm_75`).
    pub fn target_name(&self) -> &str {
        self.target_name.as_deref().unwrap_or(self.target.name())
    }

    /// True when `.target` names a target ptxkit models (gating applies).
    pub fn target_is_known(&self) -> bool {
        self.target_name.is_none()
    }

    /// Further `.target` entries (`debug`...).
    pub fn target_options(&self) -> &[String] {
        &self.target_options
    }

    /// `.address_size`, 64 where none is written. PTX ISA 11.1.3 defaults a module without the
    /// directive to 32-bit addresses; ptxas 13.0 compiles 64-bit only ("32-Bit compilation is no
    /// longer supported") and takes such a module's 64-bit addresses, so the validator reads 64.
    pub fn address_size(&self) -> u32 {
        self.address_size.unwrap_or(64)
    }

    /// `.address_size` as written (`None` where the module has no such directive).
    pub fn written_address_size(&self) -> Option<u32> {
        self.address_size
    }

    /// The `.version` set explicitly (by [`Module::set_version`] or the parsed text).
    pub fn explicit_version(&self) -> Option<PtxVersion> {
        self.version
    }
}

/// Checks a PTX identifier (PTX ISA 4.4 "Identifiers"): `[a-zA-Z][a-zA-Z0-9_$]*` or
/// `[_$%][a-zA-Z0-9_$]+`.
pub fn check_identifier(name: &str) -> Result<()> {
    let mut chars = name.chars();
    let ok = match chars.next() {
        Some(c) if c.is_ascii_alphabetic() => {
            chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
        }
        Some('_' | '$') => {
            let rest: Vec<char> = chars.collect();
            !rest.is_empty()
                && rest
                    .iter()
                    .all(|c| c.is_ascii_alphanumeric() || *c == '_' || *c == '$')
        }
        _ => false,
    };
    if ok && !RESERVED.contains(&name) {
        Ok(())
    } else {
        Err(Error::new(
            ErrorKind::BadName,
            format!("`{name}` is not a valid PTX identifier"),
        ))
    }
}

/// Names that would collide with PTX syntax if used as identifiers.
const RESERVED: &[&str] = &[
    "reg", "param", "global", "shared", "local", "const", "entry", "func",
];

#[cfg(test)]
mod tests {
    use super::*;

    /// A parsed module's size is its statements' (issue 33): an instruction's operands and
    /// words live in its function's lists, and a statement stays small.
    #[test]
    fn a_statement_is_40_bytes() {
        assert_eq!(std::mem::size_of::<Statement>(), 40);
        assert_eq!(std::mem::size_of::<BodyInstr>(), 40);
    }

    /// What [`Function::push_instruction`] keeps reads back as it was written, next to the
    /// instructions before it.
    #[test]
    fn an_instruction_reads_back_from_its_function() {
        let m = Module::new(Target::Sm90a);
        let mut f = m.entry("k").finish().unwrap();
        let a = Instruction::from_opcode("add.s32").operands((
            crate::Operand::Imm(crate::Imm::Int(1)),
            crate::Operand::Imm(crate::Imm::Int(2)),
            crate::Operand::Imm(crate::Imm::Int(3)),
        ));
        let mut b = Instruction::from_opcode("bar.sync").operand(crate::Imm::Int(0));
        b.comment = Some("wait".into());
        f.push_instruction(a.clone());
        f.body.push(Statement::Open);
        f.push_instruction(b.clone());
        let read: Vec<_> = f
            .instructions()
            .map(|(k, i)| (k, i.to_instruction()))
            .collect();
        assert_eq!(read, vec![(0, a), (2, b)]);
    }
}
