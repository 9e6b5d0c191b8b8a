//! State spaces (PTX ISA 5.1 "State Spaces") and typed addresses (6.4 "Using Addresses, Arrays, and
//! Vectors"; 6.4.1 "Addresses as Operands").

use std::fmt;
use std::marker::PhantomData;

use crate::reg::{Reg, RegRef, ty};

/// The scope qualifier of `.shared` (PTX ISA 5.1.5 "Shared State Space"): `::cta` is the executing
/// CTA's window, `::cluster` any CTA's window in the cluster (PTX 7.8+, sm_90+).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SharedScope {
    /// Plain `.shared` (which means `.shared::cta`).
    Implicit,
    /// `.shared::cta`
    Cta,
    /// `.shared::cluster`
    Cluster,
}

/// A state space.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StateSpace {
    /// `.reg`
    Reg,
    /// `.sreg`
    Sreg,
    /// `.const`
    Const,
    /// `.global`
    Global,
    /// `.local`
    Local,
    /// `.param` (kernel parameters)
    Param,
    /// `.shared`, `.shared::cta` or `.shared::cluster`
    Shared(SharedScope),
    /// No space qualifier: a generic address (PTX ISA 6.4.1 "Generic Addressing").
    Generic,
}

impl StateSpace {
    /// The qualifier as written (empty for generic).
    pub const fn qualifier(self) -> &'static str {
        match self {
            StateSpace::Reg => ".reg",
            StateSpace::Sreg => ".sreg",
            StateSpace::Const => ".const",
            StateSpace::Global => ".global",
            StateSpace::Local => ".local",
            StateSpace::Param => ".param",
            StateSpace::Shared(SharedScope::Implicit) => ".shared",
            StateSpace::Shared(SharedScope::Cta) => ".shared::cta",
            StateSpace::Shared(SharedScope::Cluster) => ".shared::cluster",
            StateSpace::Generic => "",
        }
    }
}

impl StateSpace {
    /// The memory space an instruction modifier names (`global`, `shared::cta`, written without
    /// the dot), or `None` for any other modifier.
    pub fn of_modifier(m: &str) -> Option<StateSpace> {
        [
            StateSpace::Const,
            StateSpace::Global,
            StateSpace::Local,
            StateSpace::Param,
            StateSpace::Shared(SharedScope::Implicit),
            StateSpace::Shared(SharedScope::Cta),
            StateSpace::Shared(SharedScope::Cluster),
        ]
        .into_iter()
        .find(|s| s.qualifier().strip_prefix('.') == Some(m))
    }
}

impl fmt::Display for StateSpace {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.qualifier())
    }
}

/// Marker types for the space of an [`Addr`].
pub mod spaces {
    use super::{SharedScope, StateSpace};

    /// A state space an address can point into.
    pub trait Space: Copy + Default + std::fmt::Debug + 'static {
        /// The space.
        const SPACE: StateSpace;
    }

    macro_rules! space {
        ($($name:ident => $space:expr, $doc:literal;)*) => {$(
            #[doc = $doc]
            #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
            pub struct $name;
            impl Space for $name {
                const SPACE: StateSpace = $space;
            }
        )*};
    }

    space! {
        Global => StateSpace::Global, "`.global`";
        Shared => StateSpace::Shared(SharedScope::Implicit), "`.shared` (the executing CTA's window)";
        SharedCta => StateSpace::Shared(SharedScope::Cta), "`.shared::cta`";
        SharedCluster => StateSpace::Shared(SharedScope::Cluster), "`.shared::cluster`";
        Local => StateSpace::Local, "`.local`";
        Const => StateSpace::Const, "`.const`";
        Param => StateSpace::Param, "`.param`";
        Generic => StateSpace::Generic, "a generic address";
    }

    /// Spaces whose addresses may sit in a 32-bit register (the shared windows, PTX ISA 5.1.5).
    pub trait Window32: Space {}
    impl Window32 for Shared {}
    impl Window32 for SharedCta {}
    impl Window32 for SharedCluster {}

    /// The destinations of a tensor load and the spaces of its mbarrier (PTX ISA 9.7.9.27.1.2:
    /// `.shared::cluster`, and `.shared::cta` from PTX 8.6), written as the instruction's
    /// destination modifier.
    pub trait TensorDst: Window32 {}
    impl TensorDst for SharedCta {}
    impl TensorDst for SharedCluster {}
}

use spaces::Space;

/// What an address is relative to.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum AddrBase {
    /// A register holding the address.
    Reg(RegRef),
    /// A variable or parameter name.
    Symbol(String),
    /// An absolute address (`[0x10]`).
    Absolute(u64),
}

/// An untyped address operand: `[base+offset]`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Address {
    /// The base.
    pub base: AddrBase,
    /// A byte offset added to the base.
    pub offset: i64,
    /// `[base+0]`: an offset of 0 the text wrote. ptxas 13.0 compiles `[%rd+0]` and `[%rd]` to
    /// different machine code (tinygrad's `cumsum` module on sm_120, measured: other registers
    /// and another order), so the printer keeps it; the builder never writes it (issue 33).
    pub plus_zero: bool,
}

impl AddrBase {
    /// Writes the base as PTX does (the printer's path: registers without the formatting
    /// machinery).
    pub(crate) fn write<W: fmt::Write + ?Sized>(&self, w: &mut W) -> fmt::Result {
        match self {
            AddrBase::Reg(r) => r.write_name(w),
            AddrBase::Symbol(s) => w.write_str(s),
            AddrBase::Absolute(a) => write!(w, "{a}"),
        }
    }
}

impl fmt::Display for AddrBase {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write(f)
    }
}

impl Address {
    /// `[base]`, no offset.
    pub fn at(base: AddrBase) -> Address {
        Address {
            base,
            offset: 0,
            plus_zero: false,
        }
    }

    /// Writes `[base+offset]` (PTX ISA 6.4.1), as [`AddrBase::write`] writes the base.
    pub(crate) fn write<W: fmt::Write + ?Sized>(&self, w: &mut W) -> fmt::Result {
        w.write_char('[')?;
        self.base.write(w)?;
        if self.offset != 0 || self.plus_zero {
            if matches!(self.base, AddrBase::Absolute(_)) {
                return Err(fmt::Error);
            }
            write!(w, "+{}", self.offset)?;
        }
        w.write_char(']')
    }
}

impl fmt::Display for Address {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write(f)
    }
}

/// An address into space `S`. The constructors only take registers that can hold an address of that
/// space: a 64-bit register for any space, a 32-bit one for the shared windows.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Addr<S: Space> {
    addr: Address,
    _space: PhantomData<S>,
}

impl<S: Space> Addr<S> {
    /// `[reg]` with a 64-bit register.
    pub fn reg<T: ty::Addr64>(r: Reg<T>) -> Addr<S> {
        Addr::from_address(Address::at(AddrBase::Reg(r.as_ref())))
    }

    /// `[name]`: a variable or parameter of this space.
    pub fn symbol(name: impl Into<String>) -> Addr<S> {
        Addr::from_address(Address::at(AddrBase::Symbol(name.into())))
    }

    /// Adds a byte offset: `[base+offset]`.
    pub fn offset(mut self, bytes: i64) -> Addr<S> {
        self.addr.offset = self.addr.offset.wrapping_add(bytes);
        self
    }

    /// The untyped address.
    pub fn address(&self) -> &Address {
        &self.addr
    }

    /// Unwraps the untyped address.
    pub fn into_address(self) -> Address {
        self.addr
    }

    fn from_address(addr: Address) -> Addr<S> {
        Addr {
            addr,
            _space: PhantomData,
        }
    }
}

impl<S: spaces::Window32> Addr<S> {
    /// `[reg]` with a 32-bit register: a shared-window address.
    pub fn reg32<T: ty::Addr32>(r: Reg<T>) -> Addr<S> {
        Addr::from_address(Address::at(AddrBase::Reg(r.as_ref())))
    }
}

impl<S: Space> fmt::Display for Addr<S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.addr.fmt(f)
    }
}
