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

    /// The lowest `.version` with which ptxas 13.0 reads `.target name`, for every target it
    /// names, modelled or not (`compute_XX` is `sm_XX`); `None` for a name it refuses
    /// ("Unsupported .target 'sm_99'"). Measured with ptxas 13.0 (".version 6.0 does not support
    /// .target sm_75"); the PTX ISA's release notes (chapter 13) list when each arrived.
    pub fn lowest_for_target(name: &str) -> Option<PtxVersion> {
        let sm = name
            .strip_prefix("compute_")
            .map_or(name.to_string(), |n| format!("sm_{n}"));
        TARGETS_READ_BY_PTXAS
            .iter()
            .find(|(n, _)| *n == sm)
            .map(|(_, v)| *v)
    }

    /// Every version ptxas 13.0 reads, ascending: the releases of the PTX ISA (chapter 13,
    /// "Release Notes"). Measured: ptxas 13.0 reads each of these and refuses every other `X.Y`
    /// from 1.0 to 9.9 ("Unsupported .version 5.2; current version is '9.0'").
    #[rustfmt::skip]
    pub const READ_BY_PTXAS: &'static [PtxVersion] = &[
        v(1, 0), v(1, 1), v(1, 2), v(1, 3), v(1, 4), v(1, 5),
        v(2, 0), v(2, 1), v(2, 2), v(2, 3),
        v(3, 0), v(3, 1), v(3, 2),
        v(4, 0), v(4, 1), v(4, 2), v(4, 3),
        v(5, 0), v(5, 1),
        v(6, 0), v(6, 1), v(6, 2), v(6, 3), v(6, 4), v(6, 5),
        v(7, 0), v(7, 1), v(7, 2), v(7, 3), v(7, 4), v(7, 5), v(7, 6), v(7, 7), v(7, 8),
        v(8, 0), v(8, 1), v(8, 2), v(8, 3), v(8, 4), v(8, 5), v(8, 6), v(8, 7), v(8, 8),
        v(9, 0),
    ];

    /// True when ptxas 13.0 reads `.version` with this number ([`Self::READ_BY_PTXAS`]).
    pub fn read_by_ptxas(self) -> bool {
        PtxVersion::READ_BY_PTXAS.contains(&self)
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

/// Every target ptxas 13.0 reads, with the lowest `.version` it reads it under (measured; see
/// [`PtxVersion::lowest_for_target`]).
#[rustfmt::skip]
const TARGETS_READ_BY_PTXAS: &[(&str, PtxVersion)] = &[
    ("sm_10", v(1, 0)), ("sm_11", v(1, 0)), ("sm_12", v(1, 2)), ("sm_13", v(1, 2)),
    ("sm_20", v(2, 0)), ("sm_21", v(2, 0)), ("sm_30", v(3, 0)), ("sm_32", v(4, 0)),
    ("sm_35", v(3, 1)), ("sm_37", v(4, 1)), ("sm_50", v(4, 0)), ("sm_52", v(4, 1)),
    ("sm_53", v(4, 2)), ("sm_60", v(5, 0)), ("sm_61", v(5, 0)), ("sm_62", v(5, 0)),
    ("sm_70", v(5, 1)), ("sm_72", v(6, 1)), ("sm_75", v(6, 3)), ("sm_80", v(7, 0)),
    ("sm_86", v(7, 1)), ("sm_87", v(7, 4)), ("sm_88", v(7, 3)), ("sm_89", v(7, 8)),
    ("sm_90", v(7, 8)), ("sm_90a", v(8, 0)),
    ("sm_100", v(8, 6)), ("sm_100a", v(8, 6)), ("sm_100f", v(8, 8)),
    ("sm_101", v(8, 6)), ("sm_101a", v(8, 6)), ("sm_101f", v(8, 8)),
    ("sm_103", v(8, 8)), ("sm_103a", v(8, 8)), ("sm_103f", v(8, 8)),
    ("sm_110", v(9, 0)), ("sm_110a", v(9, 0)), ("sm_110f", v(9, 0)),
    ("sm_120", v(8, 7)), ("sm_120a", v(8, 7)), ("sm_120f", v(8, 8)),
    ("sm_121", v(8, 8)), ("sm_121a", v(8, 8)), ("sm_121f", v(8, 8)),
];

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
