//! The size of one dimension of a tensor, [`Extent`], and what a kernel is built assuming of a
//! symbolic one, [`ExtentFacts`]: the one extent type of ptxkit. Kernel definition writes it into
//! signatures (`KernelBuilder::tensor` turns each dimension of a shape into one), the launcher reads
//! each launch's values against it, and the tile layer's run-time counts
//! ([`crate::tile::RunCount`]) are the lowered values of extents, carrying the facts' multiple.

use std::fmt;

/// One extent of a tensor parameter's shape: a fixed number, or a named symbol whose value is read
/// from the arguments at launch (all tensors that name it must agree).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Extent {
    /// A fixed extent.
    Fixed(usize),
    /// A symbolic extent, such as `n`.
    Symbol(String),
}

impl Extent {
    /// A symbolic extent.
    pub fn sym(name: impl Into<String>) -> Extent {
        Extent::Symbol(name.into())
    }
}

impl From<usize> for Extent {
    fn from(n: usize) -> Extent {
        Extent::Fixed(n)
    }
}

impl From<&str> for Extent {
    fn from(name: &str) -> Extent {
        Extent::Symbol(name.to_string())
    }
}

impl fmt::Display for Extent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Extent::Fixed(n) => write!(f, "{n}"),
            Extent::Symbol(s) => f.write_str(s),
        }
    }
}

/// What a kernel is built assuming of a symbolic extent: a number it is a multiple of, and bounds.
/// The lowering uses them (vector widths from the multiple, guards dropped where the bounds decide
/// them); the launcher checks every launch's value against them
/// ([`RuntimeError::ExtentFact`](crate::runtime::RuntimeError::ExtentFact)).
///
/// ```
/// use ptxkit::runtime::ExtentFacts;
/// let cols = ExtentFacts::NONE.multiple_of(4).at_least(1).at_most(8192);
/// assert!(cols.check(4096).is_ok());
/// assert_eq!(cols.check(4098).unwrap_err().to_string(), "a multiple of 4");
/// assert_eq!(cols.check(8196).unwrap_err().to_string(), "at most 8192");
/// assert_eq!(cols.to_string(), "a multiple of 4, at least 1, at most 8192");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ExtentFacts {
    /// A number the value is always a multiple of (1: nothing known).
    pub multiple_of: u64,
    /// The least value (0: nothing known).
    pub min: u64,
    /// The largest value, when bounded.
    pub max: Option<u64>,
}

impl ExtentFacts {
    /// Nothing known.
    pub const NONE: ExtentFacts = ExtentFacts {
        multiple_of: 1,
        min: 0,
        max: None,
    };

    /// Also a multiple of `n` (a value of 0 is taken as 1).
    pub const fn multiple_of(mut self, n: u64) -> ExtentFacts {
        self.multiple_of = if n == 0 { 1 } else { n };
        self
    }

    /// Also at least `n`.
    pub const fn at_least(mut self, n: u64) -> ExtentFacts {
        self.min = n;
        self
    }

    /// Also at most `n`.
    pub const fn at_most(mut self, n: u64) -> ExtentFacts {
        self.max = Some(n);
        self
    }

    /// `Ok` when `value` keeps every fact, else the first fact it breaks.
    pub fn check(&self, value: u64) -> std::result::Result<(), Fact> {
        if value % self.multiple_of != 0 {
            return Err(Fact::MultipleOf(self.multiple_of));
        }
        if value < self.min {
            return Err(Fact::AtLeast(self.min));
        }
        match self.max {
            Some(m) if value > m => Err(Fact::AtMost(m)),
            _ => Ok(()),
        }
    }

    /// Whether the facts can all hold (some value keeps them).
    pub fn satisfiable(&self) -> bool {
        let first = self
            .min
            .div_ceil(self.multiple_of)
            .saturating_mul(self.multiple_of);
        self.max.is_none_or(|m| first <= m)
    }
}

/// One fact of an [`ExtentFacts`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Fact {
    /// A multiple of this number.
    MultipleOf(u64),
    /// At least this number.
    AtLeast(u64),
    /// At most this number.
    AtMost(u64),
}

impl fmt::Display for Fact {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Fact::MultipleOf(n) => write!(f, "a multiple of {n}"),
            Fact::AtLeast(n) => write!(f, "at least {n}"),
            Fact::AtMost(n) => write!(f, "at most {n}"),
        }
    }
}

impl Default for ExtentFacts {
    fn default() -> ExtentFacts {
        ExtentFacts::NONE
    }
}

impl fmt::Display for ExtentFacts {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        if self.multiple_of > 1 {
            parts.push(Fact::MultipleOf(self.multiple_of).to_string());
        }
        if self.min > 0 {
            parts.push(Fact::AtLeast(self.min).to_string());
        }
        if let Some(m) = self.max {
            parts.push(Fact::AtMost(m).to_string());
        }
        if parts.is_empty() {
            f.write_str("any value")
        } else {
            f.write_str(&parts.join(", "))
        }
    }
}

/// Writes a shape as `[n, 64]`.
pub(crate) fn shape_text(shape: &[Extent]) -> String {
    let parts: Vec<String> = shape.iter().map(ToString::to_string).collect();
    format!("[{}]", parts.join(", "))
}
