//! Register scopes (PTX ISA 5.1.1 "Register State Space", 4.4 "Identifiers": a `{ }` block opens a
//! scope whose declarations shadow outer ones). Parameterized declarations `%r<N>` are kept as
//! ranges and never expanded, so a huge `N` costs nothing.

use std::borrow::Cow;

// foldhash (hashbrown's default): every register operand is looked up here.
use hashbrown::HashMap;

use crate::module::RegName;
use crate::reg::{RegClass, RegRef};
use crate::space::AddrBase;

use crate::types::{ScalarType, VectorWidth};

/// A declared register's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RegInfo {
    /// The declared type.
    pub ty: ScalarType,
    /// A vector width, for `.reg .v4 .f32 v`.
    pub vector: Option<VectorWidth>,
}

/// The declarations of one scope. Their names are borrowed from the module: nvcc's inline-asm
/// blocks each declare a register or two, and a name copied per declaration was a tenth of the
/// allocations of a `check` of the 1.3 MB CUTLASS module (issue 33).
#[derive(Debug, Default)]
struct Scope<'a> {
    names: HashMap<Cow<'a, str>, RegInfo>,
    ranges: HashMap<Cow<'a, str>, (u32, RegInfo)>,
    /// The ranges named as the builder names registers (`%rd<N>`, `%p<N>`), by [`RegClass`]: a
    /// [`RegRef`] operand is found without writing its name (issue 33).
    by_class: [Option<(u32, RegInfo)>; RegClass::ALL.len()],
    /// The classes (bit `class as usize`) with a name in `names` written as the builder names a
    /// register of the class (`%r5`): only those can shadow a [`RegRef`] (issue 33: nvcc's
    /// inline-asm blocks declare `%rx`, `%px`, which shadow none).
    named_classes: u32,
}

/// `%r12` as prefix `%r` and index 12 (no leading zeros).
fn split_indexed(name: &str) -> Option<(&str, u32)> {
    let digits = name.len() - name.bytes().rev().take_while(u8::is_ascii_digit).count();
    let (prefix, idx) = name.split_at(digits);
    if prefix.is_empty() || idx.is_empty() || idx.len() > 1 && idx.starts_with('0') {
        return None;
    }
    idx.parse().ok().map(|i| (prefix, i))
}

impl Scope<'_> {
    /// Forgets every declaration, keeping the room (a closed scope, kept for the next block).
    fn clear(&mut self) {
        self.names.clear();
        self.ranges.clear();
        self.by_class = Default::default();
        self.named_classes = 0;
    }

    /// [`Scope::lookup`] of `r`'s name.
    fn lookup_reg(&self, r: RegRef) -> Option<RegInfo> {
        if self.named_classes & (1 << r.class as usize) != 0 {
            if let Some(i) = self.names.get(r.name_in(&mut [0; 16])) {
                return Some(*i);
            }
        }
        match self.by_class[r.class as usize] {
            Some((n, info)) if r.index < n => Some(info),
            _ => None,
        }
    }

    fn lookup(&self, name: &str) -> Option<RegInfo> {
        if let Some(i) = self.names.get(name) {
            return Some(*i);
        }
        let (prefix, idx) = split_indexed(name)?;
        match self.ranges.get(prefix) {
            Some((n, info)) if idx < *n => Some(*info),
            _ => None,
        }
    }
}

/// A register declared twice in one scope (PTX ISA 5.1.1 "Register State Space": a name is
/// declared once per block; an inner block may shadow it): the declaration that clashed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redeclared(pub RegName);

impl std::fmt::Display for Redeclared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (what, verb) = match self.0.count {
            None => ("register", "is"),
            Some(_) => ("registers", "are"),
        };
        write!(f, "{what} `{}` {verb} declared twice in one scope", self.0)
    }
}

impl std::error::Error for Redeclared {}

/// The stack of register scopes of one function, whose declarations' names live for `'a`.
#[derive(Debug, Default)]
pub struct Scopes<'a> {
    stack: Vec<Scope<'a>>,
    /// Closed scopes, emptied, for the next blocks: a block's tables are allocated once per
    /// function, not once per block (issue 33: the CUTLASS module's kernels open a block for each
    /// of their 4,700 inline-asm statements).
    spare: Vec<Scope<'a>>,
}

impl<'a> Scopes<'a> {
    /// One (function) scope.
    pub fn new() -> Scopes<'a> {
        Scopes {
            stack: vec![Scope::default()],
            spare: Vec::new(),
        }
    }

    /// Opens a `{ }` scope.
    pub fn open(&mut self) {
        let s = self.spare.pop().unwrap_or_default();
        self.stack.push(s);
    }

    /// Closes the innermost scope (never the function's).
    pub fn close(&mut self) {
        if self.stack.len() > 1 {
            if let Some(mut s) = self.stack.pop() {
                s.clear();
                self.spare.push(s);
            }
        }
    }

    /// The register called `name`, innermost first.
    pub fn lookup(&self, name: &str) -> Option<RegInfo> {
        if let Some(i) = self.stack.iter().rev().find_map(|s| s.lookup(name)) {
            return Some(i);
        }
        // A component of a vector register, `%v.x` ... `%v.w` or `%v.r` ... `%v.a` (PTX ISA 5.4.2
        // "Vectors"): one value of the element type.
        let (base, c) = name.rsplit_once('.')?;
        let lane = match c {
            "x" | "r" => 0,
            "y" | "g" => 1,
            "z" | "b" => 2,
            "w" | "a" => 3,
            _ => return None,
        };
        let info = self.stack.iter().rev().find_map(|s| s.lookup(base))?;
        (lane < info.vector?.len()).then_some(RegInfo {
            ty: info.ty,
            vector: None,
        })
    }

    /// The register `r`, innermost first: [`Scopes::lookup`] of its name, without writing it.
    pub fn lookup_reg(&self, r: RegRef) -> Option<RegInfo> {
        self.stack.iter().rev().find_map(|s| s.lookup_reg(r))
    }

    /// The register an address is based on, when it is one.
    pub fn lookup_base(&self, b: &AddrBase) -> Option<RegInfo> {
        match b {
            AddrBase::Reg(r) => self.lookup_reg(*r),
            AddrBase::Symbol(s) => self.lookup(s),
            AddrBase::Absolute(_) => None,
        }
    }

    /// Declares `name` (`count`: `name<count>`) in the innermost scope; `Err` names the clash
    /// when the same scope already declares it.
    pub fn declare(
        &mut self,
        name: Cow<'a, str>,
        count: Option<u32>,
        info: RegInfo,
    ) -> Result<(), Redeclared> {
        let Some(s) = self.stack.last_mut() else {
            return Ok(());
        };
        let clash = |name: Cow<'a, str>| {
            Err(Redeclared(RegName {
                name: Cow::Owned(name.into_owned()),
                count,
            }))
        };
        match count {
            None => {
                if s.lookup(&name).is_some() {
                    return clash(name);
                }
                let class = split_indexed(&name)
                    .and_then(|(prefix, _)| prefix.strip_prefix('%'))
                    .and_then(RegClass::from_prefix);
                if let Some(class) = class {
                    s.named_classes |= 1 << class as usize;
                }
                s.names.insert(name, info);
            }
            Some(n) => {
                if s.ranges.contains_key(name.as_ref())
                    || s.names
                        .keys()
                        .any(|k| split_indexed(k).is_some_and(|(p, i)| p == name && i < n))
                {
                    return clash(name);
                }
                if let Some(class) = name.strip_prefix('%').and_then(RegClass::from_prefix) {
                    s.by_class[class as usize] = Some((n, info));
                }
                s.ranges.insert(name, (n, info));
            }
        }
        Ok(())
    }
}
