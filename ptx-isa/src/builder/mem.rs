//! Loads and stores (PTX ISA 9.7.9.8 "ld", 9.7.9.9 "ld.global.nc", 9.7.9.11 "st"), with vectors,
//! cache operators (PTX ISA 9.7.9.1 "Cache Operators"), eviction priorities and L2 hints, and the
//! memory-consistency orders `.relaxed`/`.acquire`/`.release` with scopes (chapter 8).

use super::FunctionBuilder;
use crate::error::{ErrorKind, Result};
use crate::forms::Form;
use crate::instr::{Instruction, Operand, Src};
use crate::reg::{Reg, ty};
use crate::space::spaces::{self, Space};
use crate::space::{Addr, SharedScope, StateSpace};
use crate::types::{ScalarType, VectorWidth};

/// A memory-consistency scope (PTX ISA 8.5 "Scope").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Scope {
    /// `.cta`
    Cta,
    /// `.cluster` (PTX 7.8, sm_90)
    Cluster,
    /// `.gpu`
    Gpu,
    /// `.sys`
    Sys,
}

impl Scope {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Scope::Cta => "cta",
            Scope::Cluster => "cluster",
            Scope::Gpu => "gpu",
            Scope::Sys => "sys",
        }
    }
}

/// The memory order of a load or store (PTX ISA 8.4 "Memory Operations", 9.7.9.8 `.sem`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum MemOrder {
    /// No qualifier (a weak access).
    #[default]
    Weak,
    /// `.volatile`
    Volatile,
    /// `.relaxed.scope`
    Relaxed(Scope),
    /// `.acquire.scope` (loads)
    Acquire(Scope),
    /// `.release.scope` (stores)
    Release(Scope),
}

/// A cache operator (PTX ISA 9.7.9.1 "Cache Operators": `.ca .cg .cs .lu .cv` for loads,
/// `.wb .cg .cs .wt` for stores).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum CacheOp {
    Ca,
    Cg,
    Cs,
    Lu,
    Cv,
    Wb,
    Wt,
}

impl CacheOp {
    fn name(self) -> &'static str {
        match self {
            CacheOp::Ca => "ca",
            CacheOp::Cg => "cg",
            CacheOp::Cs => "cs",
            CacheOp::Lu => "lu",
            CacheOp::Cv => "cv",
            CacheOp::Wb => "wb",
            CacheOp::Wt => "wt",
        }
    }
}

/// An L1 eviction priority (`.L1::evict_*`, PTX 7.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum Evict {
    Normal,
    Unchanged,
    First,
    Last,
    NoAllocate,
}

impl Evict {
    fn name(self) -> &'static str {
        match self {
            Evict::Normal => "L1::evict_normal",
            Evict::Unchanged => "L1::evict_unchanged",
            Evict::First => "L1::evict_first",
            Evict::Last => "L1::evict_last",
            Evict::NoAllocate => "L1::no_allocate",
        }
    }
}

/// The priority a `createpolicy` cache policy gives the L2 lines an access touches
/// (`.L2::evict_*`, PTX ISA 9.7.9.18 "createpolicy": `.level::primary_priority`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum L2Evict {
    /// `.L2::evict_normal`
    Normal,
    /// `.L2::evict_first`: the first lines to leave (data read once).
    First,
    /// `.L2::evict_last`: the last lines to leave (data read again soon).
    Last,
    /// `.L2::evict_unchanged`
    Unchanged,
}

impl L2Evict {
    /// The qualifier without its dot (`L2::evict_last`).
    pub fn name(self) -> &'static str {
        match self {
            L2Evict::Normal => "L2::evict_normal",
            L2Evict::First => "L2::evict_first",
            L2Evict::Last => "L2::evict_last",
            L2Evict::Unchanged => "L2::evict_unchanged",
        }
    }
}

/// An L2 prefetch size hint (`.L2::64B/128B/256B`, PTX 7.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[allow(missing_docs)]
pub enum PrefetchSize {
    B64,
    B128,
    B256,
}

impl PrefetchSize {
    /// The qualifier without its dot (`L2::128B`).
    pub fn name(self) -> &'static str {
        match self {
            PrefetchSize::B64 => "L2::64B",
            PrefetchSize::B128 => "L2::128B",
            PrefetchSize::B256 => "L2::256B",
        }
    }
}

/// Options of a load.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LdOpts {
    /// The memory order.
    pub order: MemOrder,
    /// A cache operator.
    pub cache: Option<CacheOp>,
    /// `.nc`: through the non-coherent (read-only) path (`ld.global.nc`).
    pub nc: bool,
    /// An L1 eviction priority.
    pub evict: Option<Evict>,
    /// `.L2::cache_hint` with a 64-bit cache policy (from `createpolicy`).
    pub cache_hint: Option<Reg<ty::B64>>,
    /// An L2 prefetch size.
    pub prefetch: Option<PrefetchSize>,
    /// The type in memory when narrower than the register (`ld.global.u8` into a 32-bit register).
    pub mem_type: Option<ScalarType>,
}

/// Options of a store.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct StOpts {
    /// The memory order.
    pub order: MemOrder,
    /// A cache operator.
    pub cache: Option<CacheOp>,
    /// An L1 eviction priority.
    pub evict: Option<Evict>,
    /// `.L2::cache_hint` with a 64-bit cache policy.
    pub cache_hint: Option<Reg<ty::B64>>,
    /// The type in memory when narrower than the register.
    pub mem_type: Option<ScalarType>,
}

struct Access<'a> {
    load: bool,
    order: MemOrder,
    cache: Option<CacheOp>,
    nc: bool,
    evict: Option<Evict>,
    cache_hint: Option<Reg<ty::B64>>,
    prefetch: Option<PrefetchSize>,
    mem_type: Option<ScalarType>,
    reg_type: ScalarType,
    space: StateSpace,
    values: &'a [Operand],
    addr: Operand,
}

impl FunctionBuilder {
    /// `ld.SPACE.T d, [a]`.
    pub fn ld<S: Space, T: ty::RegType>(&mut self, d: Reg<T>, a: Addr<S>) -> Result<()> {
        self.ld_with(&LdOpts::default(), &[d], a)
    }

    /// `ld.SPACE.vN.T {d...}, [a]`: a vector load of 2 or 4 registers (at most 16 bytes).
    pub fn ld_v<S: Space, T: ty::RegType>(&mut self, d: &[Reg<T>], a: Addr<S>) -> Result<()> {
        self.ld_with(&LdOpts::default(), d, a)
    }

    /// `ld.global.nc.T d, [a]`: a load through the read-only data path.
    pub fn ld_global_nc<T: ty::RegType>(
        &mut self,
        d: &[Reg<T>],
        a: Addr<crate::space::spaces::Global>,
    ) -> Result<()> {
        self.ld_with(
            &LdOpts {
                nc: true,
                ..LdOpts::default()
            },
            d,
            a,
        )
    }

    /// A load with every option: one register, or 2 or 4 for a vector load.
    pub fn ld_with<S: Space, T: ty::RegType>(
        &mut self,
        o: &LdOpts,
        d: &[Reg<T>],
        a: Addr<S>,
    ) -> Result<()> {
        let values: Vec<Operand> = d.iter().map(|r| Operand::Reg(r.as_ref())).collect();
        self.access(Access {
            load: true,
            order: o.order,
            cache: o.cache,
            nc: o.nc,
            evict: o.evict,
            cache_hint: o.cache_hint,
            prefetch: o.prefetch,
            mem_type: o.mem_type,
            reg_type: T::TYPE,
            space: S::SPACE,
            values: &values,
            addr: a.into(),
        })
    }

    /// `st.SPACE.T [a], b`.
    pub fn st<S: Space, T: ty::RegType>(&mut self, a: Addr<S>, b: impl Into<Src<T>>) -> Result<()> {
        self.st_with(&StOpts::default(), a, &[b.into()])
    }

    /// `st.SPACE.vN.T [a], {b...}`: a vector store of 2 or 4 values.
    pub fn st_v<S: Space, T: ty::RegType>(&mut self, a: Addr<S>, b: &[Reg<T>]) -> Result<()> {
        let v: Vec<Src<T>> = b.iter().map(|r| Src::Reg(*r)).collect();
        self.st_with(&StOpts::default(), a, &v)
    }

    /// A store with every option.
    pub fn st_with<S: Space, T: ty::RegType>(
        &mut self,
        o: &StOpts,
        a: Addr<S>,
        b: &[Src<T>],
    ) -> Result<()> {
        let values: Vec<Operand> = b.iter().map(|s| (*s).into()).collect();
        self.access(Access {
            load: false,
            order: o.order,
            cache: o.cache,
            nc: false,
            evict: o.evict,
            cache_hint: o.cache_hint,
            prefetch: None,
            mem_type: o.mem_type,
            reg_type: T::TYPE,
            space: S::SPACE,
            values: &values,
            addr: a.into(),
        })
    }

    /// `createpolicy.fractional.PRIORITY.b64 d, fraction;`: a cache policy for loads and stores
    /// with `.L2::cache_hint` ([`LdOpts::cache_hint`]) that gives `fraction` of the lines they
    /// touch the priority `primary` (the rest `.L2::evict_unchanged`). PTX ISA 9.7.9.18: the
    /// fraction lies in (0.0, 1.0]; introduced in PTX ISA 7.4, sm_80 and later.
    pub fn createpolicy_fractional(
        &mut self,
        d: Reg<ty::B64>,
        primary: L2Evict,
        fraction: f32,
    ) -> Result<()> {
        if !(fraction > 0.0 && fraction <= 1.0) {
            return Err(self.err(
                ErrorKind::ImmediateRange,
                "createpolicy",
                format!("a fraction of {fraction}: it lies in (0.0, 1.0] (PTX ISA 9.7.9.18)"),
            ));
        }
        let i = Instruction::from_opcode("createpolicy.fractional")
            .modifier(primary.name())
            .ty(ScalarType::B64)
            .operands((d, crate::instr::Imm::f32(fraction)));
        self.emit(Form::CreatepolicyFractional, i)
    }

    /// `prefetch.global.L2 [a]`, or with an eviction priority `prefetch.global.L2::evict_last
    /// [a]` / `prefetch.global.L2::evict_normal [a]`: brings the line holding `a` into L2 (and
    /// takes its address translation), writes no register and waits for nothing (PTX ISA
    /// 9.7.9.15 `prefetch`; the `.level::eviction_priority` forms PTX ISA 7.4, sm_80 and later,
    /// only `evict_last` and `evict_normal`, and only with `.global`).
    pub fn prefetch_l2(
        &mut self,
        a: Addr<spaces::Global>,
        priority: Option<L2Evict>,
    ) -> Result<()> {
        let (level, form) = match priority {
            None => ("L2", Form::Prefetch),
            Some(p @ (L2Evict::Last | L2Evict::Normal)) => (p.name(), Form::PrefetchEvict),
            Some(p) => {
                return Err(self.err(
                    ErrorKind::InvalidModifier,
                    "prefetch",
                    format!(
                        ".{}: a prefetch's priority is evict_last or evict_normal (PTX ISA 9.7.9.15)",
                        p.name()
                    ),
                ));
            }
        };
        let i = Instruction::new("prefetch")
            .modifier("global")
            .modifier(level)
            .operand(a);
        self.emit(form, i)
    }

    fn access(&mut self, x: Access<'_>) -> Result<()> {
        let mn = if x.load { "ld" } else { "st" };
        let bad = |s: &mut Self, kind, msg: String| Err(s.err(kind, mn, msg));

        // The type in memory: the register's, or its bit type for the half types ld/st lack.
        // The types are the row's (PTX ISA 9.7.9.8, 9.7.9.11).
        let row_types = if x.load { Form::Ld } else { Form::St }.types();
        let default_type = if row_types.contains(&x.reg_type) {
            x.reg_type
        } else {
            x.reg_type.bits_type()
        };
        let mem_type = x.mem_type.unwrap_or(default_type);
        if !row_types.contains(&mem_type) {
            return bad(
                self,
                ErrorKind::OperandType,
                format!("{mn} has no type {mem_type}"),
            );
        }
        // PTX ISA 6.1 / 9.7.9.8: the register may be wider than the memory type for integer
        // accesses; otherwise the types must agree.
        let relaxed_ok =
            mem_type.bits() < x.reg_type.bits() && !mem_type.is_float() && !x.reg_type.is_float();
        if !(mem_type.agrees_with(x.reg_type) || relaxed_ok || mem_type == default_type) {
            return bad(
                self,
                ErrorKind::OperandType,
                format!("{mn}{mem_type} with a {} register", x.reg_type),
            );
        }
        if x.reg_type == ScalarType::Pred {
            return bad(
                self,
                ErrorKind::OperandType,
                format!("{mn} cannot move predicates"),
            );
        }
        let vec = match VectorWidth::for_len(x.values.len()) {
            Ok(v) => v,
            Err(n) => {
                return bad(
                    self,
                    ErrorKind::VectorWidth,
                    format!("{mn} takes 1, 2 or 4 values, not {n}"),
                );
            }
        };
        if vec == Some(VectorWidth::V8) {
            return bad(
                self,
                ErrorKind::VectorWidth,
                format!("{mn}.v8 is not supported; use two .v4 accesses"),
            );
        }
        if x.values.len() as u32 * mem_type.bytes() > 16 {
            return bad(
                self,
                ErrorKind::VectorWidth,
                format!(
                    "{mn}.v{}{mem_type} moves {} bytes; at most 16",
                    x.values.len(),
                    x.values.len() as u32 * mem_type.bytes()
                ),
            );
        }

        let ordered = matches!(
            x.order,
            MemOrder::Relaxed(_) | MemOrder::Acquire(_) | MemOrder::Release(_)
        );
        let space_name: Option<&'static str> = match x.space {
            StateSpace::Generic => None,
            StateSpace::Global => Some("global"),
            StateSpace::Local => Some("local"),
            StateSpace::Shared(SharedScope::Implicit | SharedScope::Cta) => Some("shared"),
            StateSpace::Shared(SharedScope::Cluster) => Some("shared::cluster"),
            StateSpace::Const if x.load => Some("const"),
            StateSpace::Param => Some("param"),
            other => {
                return bad(
                    self,
                    ErrorKind::OperandKind,
                    format!("{mn} cannot access {other:?}"),
                );
            }
        };
        // Which orders, spaces, cache operators and `.nc` go together is the rows' to say
        // (`ld`, `ld.ordered`, `ld.global.nc`, `st`, `st.ordered` and their rules, PTX ISA
        // 9.7.9.8, 9.7.9.9, 9.7.9.11): `emit` checks what is written here against them.
        // Eviction priorities, cache hints and prefetch sizes on global (and generic) accesses
        // only: a rule of the rows, checked by `emit`.
        let mut i = Instruction::new(mn);
        match x.order {
            MemOrder::Weak => {}
            MemOrder::Volatile => i = i.modifier("volatile"),
            MemOrder::Relaxed(s) => i = i.modifier("relaxed").modifier(s.name()),
            MemOrder::Acquire(s) => i = i.modifier("acquire").modifier(s.name()),
            MemOrder::Release(s) => i = i.modifier("release").modifier(s.name()),
        }
        if let Some(s) = space_name {
            i = i.modifier(s);
        }
        if let Some(c) = x.cache {
            i = i.modifier(c.name());
        }
        i = i.modifier_if(x.nc, "nc");
        if let Some(e) = x.evict {
            i = i.modifier(e.name());
        }
        i = i.modifier_if(x.cache_hint.is_some(), "L2::cache_hint");
        if let Some(p) = x.prefetch {
            i = i.modifier(p.name());
        }
        if let Some(v) = vec {
            i = i.modifier(v.name());
        }
        i = i.ty(mem_type);
        let value = if x.values.len() == 1 {
            x.values[0].clone()
        } else {
            Operand::Vector(x.values.to_vec())
        };
        i = if x.load {
            i.operands((value, x.addr))
        } else {
            i.operands((x.addr, value))
        };
        if let Some(h) = x.cache_hint {
            i = i.operand(h);
        }
        let form = if x.nc {
            Form::LdGlobalNc
        } else if ordered {
            if x.load {
                Form::LdOrdered
            } else {
                Form::StOrdered
            }
        } else if x.load {
            Form::Ld
        } else {
            Form::St
        };
        self.emit(form, i)
    }
}
