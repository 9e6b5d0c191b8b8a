//! Typed virtual registers (PTX ISA 5.1.1 "Register State Space"; 5.4.6 "Parameterized Variable
//! Names" for the `%r<N>` declaration blocks).
//!
//! The builder hands out [`Reg<T>`] values whose `T` is a marker type from [`ty`]; an operand of the
//! wrong type does not compile. Each register type belongs to a [`RegClass`]: one `.reg` declaration
//! block (`.reg .f32 %f<12>;`) per class and function.

use std::fmt;
use std::marker::PhantomData;

use crate::types::ScalarType;

/// A register declaration class: its declared type and its name prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RegClass {
    /// `.pred %p`
    Pred,
    /// `.b16 %rs`: 16-bit integers and bits.
    B16,
    /// `.b16 %h`: 16-bit floats (`.f16`, `.bf16`) and packed 8-bit floats.
    H16,
    /// `.b32 %r`: 32-bit integers and bits.
    B32,
    /// `.b32 %hh`: packed 16-bit float pairs (`.f16x2`, `.bf16x2`).
    H32,
    /// `.f32 %f`
    F32,
    /// `.b64 %rd`: 64-bit integers, bits and addresses.
    B64,
    /// `.f64 %fd`
    F64,
    /// `.b128 %q` (PTX 8.3+).
    B128,
}

impl RegClass {
    /// Every class, in declaration order.
    pub const ALL: [RegClass; 9] = [
        RegClass::Pred,
        RegClass::B16,
        RegClass::H16,
        RegClass::B32,
        RegClass::H32,
        RegClass::F32,
        RegClass::B64,
        RegClass::F64,
        RegClass::B128,
    ];

    /// The declared type of the class.
    pub const fn decl_type(self) -> ScalarType {
        match self {
            RegClass::Pred => ScalarType::Pred,
            RegClass::B16 | RegClass::H16 => ScalarType::B16,
            RegClass::B32 | RegClass::H32 => ScalarType::B32,
            RegClass::F32 => ScalarType::F32,
            RegClass::B64 => ScalarType::B64,
            RegClass::F64 => ScalarType::F64,
            RegClass::B128 => ScalarType::B128,
        }
    }

    /// The register name prefix (after `%`).
    pub const fn prefix(self) -> &'static str {
        match self {
            RegClass::Pred => "p",
            RegClass::B16 => "rs",
            RegClass::H16 => "h",
            RegClass::B32 => "r",
            RegClass::H32 => "hh",
            RegClass::F32 => "f",
            RegClass::B64 => "rd",
            RegClass::F64 => "fd",
            RegClass::B128 => "q",
        }
    }

    /// The class whose prefix is `prefix`. Every register operand of a parsed module is asked
    /// (issue 33): the prefixes, of one or two bytes, are compared as numbers, the classes' own
    /// computed once at compile time from [`RegClass::prefix`].
    pub fn from_prefix(prefix: &str) -> Option<RegClass> {
        /// A prefix of at most two bytes as one number (its length in the high bits), or 0.
        const fn key(p: &[u8]) -> u32 {
            match p {
                [a] => 1 << 16 | *a as u32,
                [a, b] => 2 << 16 | (*a as u32) << 8 | *b as u32,
                _ => 0,
            }
        }
        const KEYS: [u32; RegClass::ALL.len()] = {
            let mut k = [0; RegClass::ALL.len()];
            let mut c = 0;
            while c < k.len() {
                k[c] = key(RegClass::ALL[c].prefix().as_bytes());
                // A longer prefix would need a wider key: this fails to compile.
                assert!(k[c] != 0, "a register prefix of one or two bytes");
                c += 1;
            }
            k
        };
        let want = key(prefix.as_bytes());
        if want == 0 {
            return None;
        }
        let c = KEYS.iter().position(|&k| k == want)?;
        RegClass::ALL.get(c).copied()
    }

    /// The class a value of type `t` lives in, if registers of that type exist.
    pub const fn for_type(t: ScalarType) -> Option<RegClass> {
        use ScalarType::*;
        Some(match t {
            Pred => RegClass::Pred,
            B16 | U16 | S16 => RegClass::B16,
            F16 | Bf16 | E4m3x2 | E5m2x2 | E2m3x2 | E3m2x2 => RegClass::H16,
            B32 | U32 | S32 => RegClass::B32,
            F16x2 | Bf16x2 => RegClass::H32,
            F32 | Tf32 => RegClass::F32,
            B64 | U64 | S64 => RegClass::B64,
            F64 => RegClass::F64,
            B128 => RegClass::B128,
            // `.f32x2` is an instruction type only: its operands are `.b64` registers.
            B8 | U8 | S8 | E4m3 | E5m2 | E2m1 | E2m3 | E3m2 | E2m1x2 | F32x2 => return None,
        })
    }
}

/// An untyped register reference: a class and an index within it (`%f3`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RegRef {
    /// The declaration class.
    pub class: RegClass,
    /// The index within the class's `%x<N>` block.
    pub index: u32,
}

impl RegRef {
    /// Writes the register's name, `%f12`: a byte at a time, with no formatting machinery and no
    /// copy, as the printer writes every register operand (issue 33).
    pub fn write_name<W: fmt::Write + ?Sized>(self, w: &mut W) -> fmt::Result {
        w.write_char('%')?;
        w.write_str(self.class.prefix())?;
        let mut digits = [0u8; 10];
        let mut n = self.index;
        let mut k = digits.len();
        loop {
            k -= 1;
            digits[k] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        digits[k..]
            .iter()
            .try_for_each(|&d| w.write_char(char::from(d)))
    }

    /// The register's name, `%f12`, written into `buf` without allocating: what the validator's
    /// scope lookups use for a register operand (issue 33).
    pub fn name_in(self, buf: &mut [u8; 16]) -> &str {
        /// A fixed buffer as a `fmt::Write` (a name is at most 1 + 2 + 10 bytes).
        struct Fixed<'a>(&'a mut [u8; 16], usize);
        impl fmt::Write for Fixed<'_> {
            fn write_str(&mut self, s: &str) -> fmt::Result {
                let end = self.1 + s.len();
                self.0
                    .get_mut(self.1..end)
                    .ok_or(fmt::Error)?
                    .copy_from_slice(s.as_bytes());
                self.1 = end;
                Ok(())
            }
        }
        let mut w = Fixed(buf, 0);
        let _ = self.write_name(&mut w);
        let end = w.1;
        // Only ASCII was written.
        std::str::from_utf8(&buf[..end]).unwrap_or("%")
    }
}

impl fmt::Display for RegRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write_name(f)
    }
}

/// Marker types for typed registers: `Reg<ty::F32>` holds an `.f32` value.
pub mod ty {
    use super::RegClass;
    use crate::types::ScalarType;

    /// A type that registers can hold.
    pub trait RegType: Copy + Eq + std::fmt::Debug + Default + Send + Sync + 'static {
        /// The PTX type of the values.
        const TYPE: ScalarType;
        /// The declaration class the registers belong to.
        const CLASS: RegClass;
    }

    macro_rules! marker {
        ($($name:ident => $st:ident, $class:ident;)*) => {$(
            #[doc = concat!("Marker for registers holding `.", stringify!($st), "` values (PTX type ", stringify!($st), ").")]
            #[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
            pub struct $name;
            impl RegType for $name {
                const TYPE: ScalarType = ScalarType::$st;
                const CLASS: RegClass = RegClass::$class;
            }
        )*};
    }

    marker! {
        Pred => Pred, Pred;
        B16 => B16, B16;
        U16 => U16, B16;
        S16 => S16, B16;
        F16 => F16, H16;
        Bf16 => Bf16, H16;
        B32 => B32, B32;
        U32 => U32, B32;
        S32 => S32, B32;
        F16x2 => F16x2, H32;
        Bf16x2 => Bf16x2, H32;
        E4m3x2 => E4m3x2, H16;
        E5m2x2 => E5m2x2, H16;
        E2m3x2 => E2m3x2, H16;
        E3m2x2 => E3m2x2, H16;
        F32 => F32, F32;
        Tf32 => Tf32, F32;
        // One FP8 value has no register type of its own (PTX ISA 5.2.5.1: `.e4m3` and `.e5m2`
        // appear in `cvt` and the MMA instructions, in registers as `.e4m3x2`/`.e5m2x2` pairs),
        // so `RegClass::for_type` names none. These markers are the element type of FP8 data in
        // memory (a kernel tensor `Buffer<ty::E4m3>`); one value read into a register is the low
        // byte of a `.b16` one (`ld.b8`/`st.b8`: a register wider than the memory type, 9.7.9.8).
        E4m3 => E4m3, B16;
        E5m2 => E5m2, B16;
        B64 => B64, B64;
        U64 => U64, B64;
        S64 => S64, B64;
        F64 => F64, F64;
        B128 => B128, B128;
    }

    /// Integer register types (`.uN`, `.sN`, `.bN` of 16, 32, 64 bits).
    pub trait Int: RegType {}
    impl Int for B16 {}
    impl Int for U16 {}
    impl Int for S16 {}
    impl Int for B32 {}
    impl Int for U32 {}
    impl Int for S32 {}
    impl Int for B64 {}
    impl Int for U64 {}
    impl Int for S64 {}

    /// Floating-point register types, packed ones included.
    pub trait Float: RegType {}
    impl Float for F16 {}
    impl Float for Bf16 {}
    impl Float for F16x2 {}
    impl Float for Bf16x2 {}
    impl Float for F32 {}
    impl Float for F64 {}

    /// Types of 32 or 64 bits, the operands of the bit-manipulation instructions (`popc`, `brev`...).
    pub trait Bits32Or64: RegType {}
    impl Bits32Or64 for B32 {}
    impl Bits32Or64 for U32 {}
    impl Bits32Or64 for S32 {}
    impl Bits32Or64 for B64 {}
    impl Bits32Or64 for U64 {}
    impl Bits32Or64 for S64 {}

    /// Types that hold a 64-bit address.
    pub trait Addr64: RegType {}
    impl Addr64 for B64 {}
    impl Addr64 for U64 {}
    impl Addr64 for S64 {}

    /// Types that hold a 32-bit (shared-window) address.
    pub trait Addr32: RegType {}
    impl Addr32 for B32 {}
    impl Addr32 for U32 {}
    impl Addr32 for S32 {}
}

use ty::RegType;

/// A typed virtual register handed out by the builder.
pub struct Reg<T: RegType> {
    index: u32,
    _ty: PhantomData<T>,
}

/// A predicate register (`.pred`).
pub type Pred = Reg<ty::Pred>;

impl<T: RegType> Reg<T> {
    /// The register with this index in its class. Registers are normally handed out by the builder;
    /// a hand-made one must have been allocated, or the module will not validate.
    pub const fn from_index(index: u32) -> Reg<T> {
        Reg {
            index,
            _ty: PhantomData,
        }
    }

    /// The index within the class.
    pub const fn index(self) -> u32 {
        self.index
    }

    /// The untyped reference.
    pub const fn as_ref(self) -> RegRef {
        RegRef {
            class: T::CLASS,
            index: self.index,
        }
    }

    /// The same register read as `U` (`Reg<U32>` as `Reg<S32>`, a `%hh` pair as `.bf16x2` or
    /// `.f16x2`): no instruction. See [`RegRef::retype`] for the rule.
    pub fn retype<U: RegType>(self) -> Result<Reg<U>, RetypeError> {
        self.as_ref().retype()
    }
}

impl RegRef {
    /// The register read as `U`, where PTX allows it without a conversion: `U` lives in the same
    /// declaration class (a register of another class is another register: `%r3` is not `%hh3`)
    /// and `U` agrees with the class's declared type (PTX ISA 5.2.1 "Fundamental Types": a
    /// register is declared with one type; 6.1 "Operand Type Information": a `.bN` register is
    /// read as any type of N bits, a `.uN` or `.sN` one as either signedness, a floating-point one
    /// only as its own type). So a `.b32 %r` register reads as `.u32`/`.s32`, a `.b16 %h`
    /// register as `.f16`/`.bf16`, a `.b32 %hh` one as `.f16x2`/`.bf16x2`; an `.f32 %f` register
    /// reads only as `.f32`, and `%f` as `.b32` is refused (that is a `mov`).
    pub fn retype<U: RegType>(self) -> Result<Reg<U>, RetypeError> {
        if U::CLASS == self.class && U::TYPE.agrees_with(self.class.decl_type()) {
            Ok(Reg {
                index: self.index,
                _ty: PhantomData,
            })
        } else {
            Err(RetypeError {
                reg: self,
                to: U::TYPE,
            })
        }
    }
}

/// A register read as a type PTX does not allow without a conversion ([`RegRef::retype`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetypeError {
    /// The register.
    pub reg: RegRef,
    /// The type it was to be read as.
    pub to: ScalarType,
}

impl fmt::Display for RetypeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} (declared {}) cannot be read as {} (PTX ISA 6.1: same class and agreeing type)",
            self.reg,
            self.reg.class.decl_type(),
            self.to
        )
    }
}

impl std::error::Error for RetypeError {}

impl From<RetypeError> for crate::Error {
    fn from(e: RetypeError) -> crate::Error {
        crate::Error::new(crate::ErrorKind::OperandType, e.to_string())
    }
}

impl<T: RegType> Clone for Reg<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T: RegType> Copy for Reg<T> {}
impl<T: RegType> PartialEq for Reg<T> {
    fn eq(&self, other: &Self) -> bool {
        self.index == other.index
    }
}
impl<T: RegType> Eq for Reg<T> {}
impl<T: RegType> std::hash::Hash for Reg<T> {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.index.hash(state)
    }
}
impl<T: RegType> fmt::Debug for Reg<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.as_ref(), T::TYPE)
    }
}
impl<T: RegType> fmt::Display for Reg<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.as_ref().fmt(f)
    }
}

/// The `_` sink or a register of type `T`: destinations that may be discarded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sinkable<T: RegType> {
    /// A register.
    Reg(Reg<T>),
    /// `_`: the result is discarded.
    Sink,
}

impl<T: RegType> From<Reg<T>> for Sinkable<T> {
    fn from(r: Reg<T>) -> Self {
        Sinkable::Reg(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn from_prefix_finds_every_class_by_its_prefix_and_nothing_else() {
        for c in RegClass::ALL {
            assert_eq!(RegClass::from_prefix(c.prefix()), Some(c), "{c:?}");
        }
        for p in ["", "x", "r1", "rdd", "%r", "R", "pp", "fdx"] {
            assert_eq!(RegClass::from_prefix(p), None, "{p:?}");
        }
    }
}
