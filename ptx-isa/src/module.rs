//! Modules, functions, parameters, performance directives and shared variables (PTX ISA chapter 11
//! "Directives": 11.1 module directives `.version`/`.target`/`.address_size`, 11.2 `.entry`/`.func`,
//! 11.4 performance-tuning directives, 11.7 cluster dimension directives).

use crate::error::{Error, ErrorKind, Result};
use crate::forms::Form;
use crate::instr::Instruction;
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

/// A statement of a function body.
#[derive(Debug, Clone, PartialEq)]
pub enum Statement {
    /// An instruction.
    Instr(Instruction),
    /// A label placed here.
    Label(crate::instr::Label),
    /// A comment line.
    Comment(String),
    /// `{`: a nested scope (used around `call` sequences).
    Open,
    /// `}`
    Close,
    /// A `.param` declaration inside a nested scope: `.param .b32 param0;`.
    LocalParam {
        /// The name.
        name: String,
        /// Its type (scalar) or byte array.
        kind: ParamKind,
    },
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
}

impl Function {
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
        self.variables.push(Variable {
            name: name.to_string(),
            space,
            align,
            bytes,
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

    /// The function called `name`.
    pub fn function(&self, name: &str) -> Option<&Function> {
        self.functions.iter().find(|f| f.name == name)
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
