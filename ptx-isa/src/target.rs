//! Compilation targets (`.target sm_XX`) and PTX ISA versions (`.version X.Y`).
//!
//! PTX ISA 11.1 "PTX Module Directives: .version" and 11.2 ".target"; the release notes (PTX ISA
//! chapter 13) say which version introduced each target:
//! sm_80 PTX 7.0, sm_86 PTX 7.1, sm_89 and sm_90 PTX 7.8, sm_90a PTX 8.0, sm_100/sm_100a PTX 8.6,
//! sm_120/sm_120a PTX 8.7.

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, ErrorKind};

/// A PTX ISA version, `.version major.minor`. ptxkit emits versions 7.0 to 9.0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PtxVersion {
    /// Major version.
    pub major: u8,
    /// Minor version.
    pub minor: u8,
}

/// Shorthand for a [`PtxVersion`] in tables.
pub const fn v(major: u8, minor: u8) -> PtxVersion {
    PtxVersion { major, minor }
}

impl PtxVersion {
    /// The lowest version ptxkit writes.
    pub const MIN: PtxVersion = v(7, 0);
    /// The highest version ptxkit writes: what the CUDA 13.0 driver JIT accepts.
    pub const MAX: PtxVersion = v(9, 0);

    /// Every version from 7.0 to 9.0, ascending (7.0-7.8, 8.0-8.8, 9.0).
    pub fn all() -> impl Iterator<Item = PtxVersion> {
        (0..=8)
            .map(|m| v(7, m))
            .chain((0..=8).map(|m| v(8, m)))
            .chain(std::iter::once(v(9, 0)))
    }

    /// True when this version is one ptxkit can emit.
    pub fn is_supported(self) -> bool {
        PtxVersion::all().any(|x| x == self)
    }
}

impl fmt::Display for PtxVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

impl FromStr for PtxVersion {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        let bad = || {
            Error::new(
                ErrorKind::BadVersion,
                format!("`{s}` is not a PTX ISA version"),
            )
        };
        let (a, b) = s.trim().split_once('.').ok_or_else(bad)?;
        let parsed = v(a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?);
        Ok(parsed)
    }
}

macro_rules! targets {
    ($($variant:ident = $name:literal, sm $sm:literal, arch $arch:literal, ptx ($maj:literal, $min:literal);)*) => {
        /// A compilation target, `.target sm_XX[a]`.
        ///
        /// The `a` targets add architecture-specific features (wgmma, setmaxnreg on sm_90a; tcgen05 on
        /// sm_100a) that are not forward compatible: sm_100a does not have sm_90a's features
        /// (PTX ISA 5.1 "Architecture-specific features").
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Target {
            $(
                #[doc = concat!("`", $name, "`")]
                $variant,
            )*
        }

        impl Target {
            /// Every target, in ascending order.
            pub const ALL: &'static [Target] = &[$(Target::$variant),*];

            /// The name written after `.target`.
            pub const fn name(self) -> &'static str {
                match self { $(Target::$variant => $name),* }
            }

            /// The SM version number (80 for sm_80, 100 for sm_100a).
            pub const fn sm(self) -> u32 {
                match self { $(Target::$variant => $sm),* }
            }

            /// True for the architecture-specific (`a`) targets.
            pub const fn is_arch_specific(self) -> bool {
                match self { $(Target::$variant => $arch),* }
            }

            /// The lowest PTX ISA version that knows this target.
            pub const fn min_ptx(self) -> PtxVersion {
                match self { $(Target::$variant => v($maj, $min)),* }
            }

            /// This target as a one-element [`TargetSet`].
            pub const fn set(self) -> TargetSet {
                match self { $(Target::$variant => TargetSet::$variant),* }
            }
        }

        bitflags::bitflags! {
            /// A set of targets: which targets have an instruction form.
            #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
            pub struct TargetSet: u16 {
                $(
                    #[doc = concat!("`", $name, "`")]
                    const $variant = 1 << (Target::$variant as u16);
                )*
            }
        }
    };
}

targets! {
    Sm80 = "sm_80", sm 80, arch false, ptx (7, 0);
    Sm86 = "sm_86", sm 86, arch false, ptx (7, 1);
    Sm89 = "sm_89", sm 89, arch false, ptx (7, 8);
    Sm90 = "sm_90", sm 90, arch false, ptx (7, 8);
    Sm90a = "sm_90a", sm 90, arch true, ptx (8, 0);
    Sm100 = "sm_100", sm 100, arch false, ptx (8, 6);
    Sm100a = "sm_100a", sm 100, arch true, ptx (8, 6);
    Sm120 = "sm_120", sm 120, arch false, ptx (8, 7);
    Sm120a = "sm_120a", sm 120, arch true, ptx (8, 7);
}

impl TargetSet {
    /// Every target whose SM version is at least `sm` (both plain and `a` targets): the set of a
    /// feature that is forward compatible.
    pub const fn sm_at_least(sm: u32) -> TargetSet {
        let mut bits = 0u16;
        let mut i = 0;
        while i < Target::ALL.len() {
            if Target::ALL[i].sm() >= sm {
                bits |= 1 << (Target::ALL[i] as u16);
            }
            i += 1;
        }
        TargetSet::from_bits_truncate(bits)
    }

    /// The targets in this set, ascending.
    pub fn targets(self) -> impl Iterator<Item = Target> {
        Target::ALL
            .iter()
            .copied()
            .filter(move |t| self.contains(t.set()))
    }

    /// True when `target` is in the set.
    pub fn has(self, target: Target) -> bool {
        self.contains(target.set())
    }

    /// The names of the targets, comma separated (for messages).
    pub fn names(self) -> String {
        let v: Vec<&str> = self.targets().map(Target::name).collect();
        if v.is_empty() {
            "no target".to_string()
        } else {
            v.join(", ")
        }
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Target {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self, Error> {
        Target::ALL
            .iter()
            .copied()
            .find(|t| t.name() == s)
            .ok_or_else(|| {
                let names: Vec<&str> = Target::ALL.iter().map(|t| t.name()).collect();
                Error::new(
                    ErrorKind::UnknownTarget,
                    format!("unknown target `{s}` (known: {})", names.join(", ")),
                )
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_cover_7_0_to_9_0() {
        let all: Vec<_> = PtxVersion::all().map(|v| v.to_string()).collect();
        assert_eq!(all.first().map(String::as_str), Some("7.0"));
        assert_eq!(all.last().map(String::as_str), Some("9.0"));
        assert_eq!(all.len(), 19);
        assert_eq!("8.6".parse::<PtxVersion>().unwrap(), v(8, 6));
        assert!("8".parse::<PtxVersion>().is_err());
    }

    #[test]
    fn targets_parse_and_order() {
        for t in Target::ALL {
            assert_eq!(t.name().parse::<Target>().unwrap(), *t);
            assert!(t.min_ptx() >= PtxVersion::MIN);
        }
        assert!("sm_91".parse::<Target>().is_err());
        let s = TargetSet::sm_at_least(90);
        assert!(s.has(Target::Sm90) && s.has(Target::Sm90a) && s.has(Target::Sm120a));
        assert!(!s.has(Target::Sm89));
        assert_eq!(TargetSet::Sm90a.names(), "sm_90a");
    }
}
