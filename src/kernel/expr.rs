//! Index expressions: the arithmetic that buffer indexing, loop bounds and launch extents are
//! written in.
//!
//! An [`Expr`] is a small tree over 32-bit unsigned integers: constants, variables ([`Var`]: scope
//! ids, loop counters, `let` bindings, symbolic extents) and `+ - * / %`. [`simplify`] folds
//! constants and uses what is known of each variable (a constant value, a divisibility) before
//! [`crate::kernel::KernelBuilder`] lowers the tree to PTX, where multiplication and division by
//! a power of two become shifts and `%` by one becomes an `and` (PTX ISA 9.7.1 "Integer
//! Arithmetic Instructions", 9.7.8 "Logic and Shift Instructions").
//!
//! ```
//! use ptxkit::kernel::{Expr, Var};
//! // `(n + 255) / 256`, the block count of a launch over `n` elements.
//! let n = Var::from_index(0);
//! let blocks = Expr::ceil_div(n, 256);
//! assert_eq!(blocks.to_string(), "((v0 + 255) / 256)");
//! ```

use std::fmt;
use std::ops;

/// A variable of a kernel under construction: a handle into its builder's variable table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Var(pub(crate) u32);

impl Var {
    /// The variable with table index `i` (for tests and printing; a kernel's builder hands out
    /// its variables).
    pub fn from_index(i: u32) -> Var {
        Var(i)
    }

    /// Its index in the builder's table.
    pub fn index(self) -> u32 {
        self.0
    }
}

/// An integer index expression (32-bit unsigned on the device, evaluated in `i64` on the host).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Expr {
    /// A constant.
    Const(i64),
    /// A variable.
    Var(Var),
    /// `a + b`.
    Add(Box<Expr>, Box<Expr>),
    /// `a - b`.
    Sub(Box<Expr>, Box<Expr>),
    /// `a * b`.
    Mul(Box<Expr>, Box<Expr>),
    /// `a / b`, rounding down.
    Div(Box<Expr>, Box<Expr>),
    /// `a % b`.
    Rem(Box<Expr>, Box<Expr>),
}

impl Expr {
    /// `ceil(a / b)` as `(a + b - 1) / b`, for a positive constant `b`.
    pub fn ceil_div(a: impl Into<Expr>, b: u32) -> Expr {
        (a.into() + (i64::from(b) - 1)) / b
    }

    /// The constant value, if this is a constant.
    pub fn as_const(&self) -> Option<i64> {
        match self {
            Expr::Const(c) => Some(*c),
            _ => None,
        }
    }

    /// Every variable the expression reads, in order of first appearance.
    pub fn vars(&self) -> Vec<Var> {
        let mut out = Vec::new();
        self.collect_vars(&mut out);
        out
    }

    fn collect_vars(&self, out: &mut Vec<Var>) {
        match self {
            Expr::Const(_) => {}
            Expr::Var(v) => {
                if !out.contains(v) {
                    out.push(*v);
                }
            }
            Expr::Add(a, b)
            | Expr::Sub(a, b)
            | Expr::Mul(a, b)
            | Expr::Div(a, b)
            | Expr::Rem(a, b) => {
                a.collect_vars(out);
                b.collect_vars(out);
            }
        }
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let bin =
            |f: &mut fmt::Formatter<'_>, a: &Expr, op: &str, b: &Expr| write!(f, "({a} {op} {b})");
        match self {
            Expr::Const(c) => write!(f, "{c}"),
            Expr::Var(v) => write!(f, "v{}", v.0),
            Expr::Add(a, b) => bin(f, a, "+", b),
            Expr::Sub(a, b) => bin(f, a, "-", b),
            Expr::Mul(a, b) => bin(f, a, "*", b),
            Expr::Div(a, b) => bin(f, a, "/", b),
            Expr::Rem(a, b) => bin(f, a, "%", b),
        }
    }
}

impl Expr {
    /// The expression printed with each variable's name from `name` (`(row * cols) + tx`,
    /// where [`fmt::Display`] prints `(v1 * v0) + v3`).
    pub fn named<'a>(&'a self, name: &'a dyn Fn(Var) -> String) -> Named<'a> {
        Named { e: self, name }
    }
}

/// An [`Expr`] printed with variable names ([`Expr::named`]).
pub struct Named<'a> {
    e: &'a Expr,
    name: &'a dyn Fn(Var) -> String,
}

impl fmt::Display for Named<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let name = self.name;
        let bin = |f: &mut fmt::Formatter<'_>, a: &Expr, op: &str, b: &Expr| {
            write!(f, "({} {op} {})", a.named(name), b.named(name))
        };
        match self.e {
            Expr::Const(c) => write!(f, "{c}"),
            Expr::Var(v) => f.write_str(&(self.name)(*v)),
            Expr::Add(a, b) => bin(f, a, "+", b),
            Expr::Sub(a, b) => bin(f, a, "-", b),
            Expr::Mul(a, b) => bin(f, a, "*", b),
            Expr::Div(a, b) => bin(f, a, "/", b),
            Expr::Rem(a, b) => bin(f, a, "%", b),
        }
    }
}

impl From<Var> for Expr {
    fn from(v: Var) -> Expr {
        Expr::Var(v)
    }
}

impl From<&Expr> for Expr {
    fn from(e: &Expr) -> Expr {
        e.clone()
    }
}

macro_rules! expr_from_int {
    ($($t:ty),*) => {$(
        impl From<$t> for Expr {
            fn from(x: $t) -> Expr {
                Expr::Const(x as i64)
            }
        }
    )*};
}
expr_from_int!(u8, u16, u32, i32, i64, usize);

macro_rules! expr_ops {
    ($($tr:ident $method:ident $variant:ident;)*) => {$(
        impl<R: Into<Expr>> ops::$tr<R> for Expr {
            type Output = Expr;
            fn $method(self, rhs: R) -> Expr {
                Expr::$variant(Box::new(self), Box::new(rhs.into()))
            }
        }
        impl<R: Into<Expr>> ops::$tr<R> for &Expr {
            type Output = Expr;
            fn $method(self, rhs: R) -> Expr {
                Expr::$variant(Box::new(self.clone()), Box::new(rhs.into()))
            }
        }
        impl<R: Into<Expr>> ops::$tr<R> for Var {
            type Output = Expr;
            fn $method(self, rhs: R) -> Expr {
                Expr::$variant(Box::new(Expr::Var(self)), Box::new(rhs.into()))
            }
        }
    )*};
}
expr_ops! {
    Add add Add;
    Sub sub Sub;
    Mul mul Mul;
    Div div Div;
    Rem rem Rem;
}

/// A list of index expressions: a shape, an index, strides. Arrays and vectors of anything that
/// converts to [`Expr`] are lists (`[i, j]`, `[n]`, `[m.into(), 64.into()]`, `vec![..]`).
pub trait Exprs {
    /// The expressions, in order.
    fn exprs(self) -> Vec<Expr>;
}

impl<E: Into<Expr>, const N: usize> Exprs for [E; N] {
    fn exprs(self) -> Vec<Expr> {
        self.into_iter().map(Into::into).collect()
    }
}

impl<E: Into<Expr>> Exprs for Vec<E> {
    fn exprs(self) -> Vec<Expr> {
        self.into_iter().map(Into::into).collect()
    }
}

impl Exprs for &[Expr] {
    fn exprs(self) -> Vec<Expr> {
        self.to_vec()
    }
}

/// What the simplifier may assume about a variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VarFacts {
    /// Its value, when known when the kernel is built (a constant `let`).
    pub value: Option<i64>,
    /// A number that always divides it (1 when nothing is known).
    pub divisor: i64,
    /// The least value it can take (0 when nothing is known: index values are unsigned).
    pub min: i64,
    /// The largest value it can take, when known (a thread index below its extent, a symbol
    /// declared `at_most`).
    pub max: Option<i64>,
}

impl VarFacts {
    /// Nothing known: any unsigned value.
    pub const UNKNOWN: VarFacts = VarFacts {
        value: None,
        divisor: 1,
        min: 0,
        max: None,
    };

    /// A value in `min..=max` that `divisor` divides.
    pub fn range(min: i64, max: Option<i64>, divisor: i64) -> VarFacts {
        VarFacts {
            value: None,
            divisor: divisor.max(1),
            min,
            max,
        }
    }

    /// A value known when the kernel is built.
    pub fn constant(c: i64) -> VarFacts {
        VarFacts {
            value: Some(c),
            divisor: c.abs(),
            min: c,
            max: Some(c),
        }
    }
}

impl Default for VarFacts {
    fn default() -> VarFacts {
        VarFacts::UNKNOWN
    }
}

/// Looks up the facts of a variable.
pub trait Facts {
    /// The facts of `v`.
    fn facts(&self, v: Var) -> VarFacts;
}

impl<F: Fn(Var) -> VarFacts> Facts for F {
    fn facts(&self, v: Var) -> VarFacts {
        self(v)
    }
}

fn gcd(a: i64, b: i64) -> i64 {
    let (mut a, mut b) = (a.unsigned_abs(), b.unsigned_abs());
    while b != 0 {
        (a, b) = (b, a % b);
    }
    i64::try_from(a).unwrap_or(i64::MAX)
}

/// The largest number known to divide `e`'s value (0 when `e` is known to be 0, which every
/// number divides).
///
/// Post-condition: for every assignment consistent with `facts`, `divisibility(e)` divides the
/// value of `e` (exact integer arithmetic, no 32-bit wrap-around).
pub fn divisibility(e: &Expr, facts: &(impl Facts + ?Sized)) -> i64 {
    match e {
        Expr::Const(c) => c.abs(),
        Expr::Var(v) => {
            let f = facts.facts(*v);
            match f.value {
                Some(c) => c.abs(),
                None => f.divisor.max(1),
            }
        }
        Expr::Add(a, b) | Expr::Sub(a, b) => gcd(divisibility(a, facts), divisibility(b, facts)),
        Expr::Mul(a, b) => {
            let (x, y) = (divisibility(a, facts), divisibility(b, facts));
            if x == 0 || y == 0 {
                0
            } else {
                x.checked_mul(y).unwrap_or(1)
            }
        }
        Expr::Div(..) | Expr::Rem(..) => 1,
    }
}

/// The least and (when known) largest value of `e` for every assignment consistent with `facts`
/// (interval arithmetic over exact integers; `None` for an unbounded or unknown maximum).
///
/// Post-condition: for every assignment consistent with `facts`, `lo <= eval(e)` and, when `hi`
/// is `Some`, `eval(e) <= hi`.
pub fn bounds(e: &Expr, facts: &(impl Facts + ?Sized)) -> (i64, Option<i64>) {
    match e {
        Expr::Const(c) => (*c, Some(*c)),
        Expr::Var(v) => {
            let f = facts.facts(*v);
            match f.value {
                Some(c) => (c, Some(c)),
                None => (f.min, f.max),
            }
        }
        Expr::Add(a, b) => {
            let ((al, ah), (bl, bh)) = (bounds(a, facts), bounds(b, facts));
            (
                al.saturating_add(bl),
                ah.zip(bh).and_then(|(x, y)| x.checked_add(y)),
            )
        }
        Expr::Sub(a, b) => {
            let ((al, ah), (bl, bh)) = (bounds(a, facts), bounds(b, facts));
            // Index values are unsigned: a difference is at least 0 only when a >= b is known;
            // otherwise nothing is known of its low end beyond what wraps.
            match bh {
                Some(bh) if al >= bh => (al - bh, ah.map(|ah| ah - bl)),
                _ => (i64::MIN, None),
            }
        }
        Expr::Mul(a, b) => {
            let ((al, ah), (bl, bh)) = (bounds(a, facts), bounds(b, facts));
            if al < 0 || bl < 0 {
                return (i64::MIN, None);
            }
            (
                al.saturating_mul(bl),
                ah.zip(bh).and_then(|(x, y)| x.checked_mul(y)),
            )
        }
        Expr::Div(a, b) => match (bounds(a, facts), b.as_const()) {
            ((al, ah), Some(c)) if c > 0 && al >= 0 => (al / c, ah.map(|h| h / c)),
            _ => (0, None),
        },
        Expr::Rem(a, b) => match (bounds(a, facts), b.as_const()) {
            ((al, Some(ah)), Some(c)) if c > 0 && al >= 0 && ah < c => (al, Some(ah)),
            ((al, _), Some(c)) if c > 0 && al >= 0 => (0, Some(c - 1)),
            _ => (0, None),
        },
    }
}

/// Decides `a < b` from what is known (`Some(true)`: always, `Some(false)`: never, `None`: only
/// at run time).
pub fn decide_lt(a: &Expr, b: &Expr, facts: &(impl Facts + ?Sized)) -> Option<bool> {
    let ((al, ah), (bl, bh)) = (bounds(a, facts), bounds(b, facts));
    if ah.is_some_and(|ah| ah < bl) && al >= 0 {
        Some(true)
    } else if bh.is_some_and(|bh| al >= bh) && bl >= 0 {
        Some(false)
    } else {
        None
    }
}

/// Simplifies `e`: folds constants, substitutes variables of known value, keeps constants on the
/// right of `+` and `*` (and a sum's constant outermost), drops `+ 0`, `* 1`, `/ 1`, and uses
/// divisibility to remove `(x * c) / c`, `(x / c) * c` and `x % c` where `c` divides `x`, and
/// `(x + y) % c` where `c` divides `x`.
///
/// Post-condition: the result has the value of `e` for every assignment consistent with `facts`
/// (exact arithmetic), and is never larger.
pub fn simplify(e: &Expr, facts: &(impl Facts + ?Sized)) -> Expr {
    match e {
        Expr::Const(_) => e.clone(),
        Expr::Var(v) => match facts.facts(*v).value {
            Some(c) => Expr::Const(c),
            None => e.clone(),
        },
        Expr::Add(a, b) => add(simplify(a, facts), simplify(b, facts)),
        Expr::Sub(a, b) => {
            let (a, b) = (simplify(a, facts), simplify(b, facts));
            match (&a, &b) {
                (Expr::Const(x), Expr::Const(y)) => Expr::Const(x - y),
                (_, Expr::Const(0)) => a,
                _ if a == b => Expr::Const(0),
                _ => Expr::Sub(Box::new(a), Box::new(b)),
            }
        }
        Expr::Mul(a, b) => match (simplify(a, facts), simplify(b, facts)) {
            // (x / c) * c is x when c divides x.
            (Expr::Div(x, c1), Expr::Const(c2))
                if c1.as_const() == Some(c2) && c2 > 0 && divisibility(&x, facts) % c2 == 0 =>
            {
                *x
            }
            // (x + c1) * c2 is x * c2 + c1 * c2: the constant joins the sum's constant (and an
            // address's immediate offset).
            (Expr::Add(x, c1), Expr::Const(c2)) if c1.as_const().is_some() => add(
                mul(*x, Expr::Const(c2)),
                Expr::Const(c1.as_const().unwrap_or(0) * c2),
            ),
            (a, b) => mul(a, b),
        },
        Expr::Div(a, b) => {
            let (a, b) = (simplify(a, facts), simplify(b, facts));
            div(a, b, facts)
        }
        Expr::Rem(a, b) => {
            let (a, b) = (simplify(a, facts), simplify(b, facts));
            rem(a, b, facts)
        }
    }
}

fn add(a: Expr, b: Expr) -> Expr {
    match (a, b) {
        (Expr::Const(x), Expr::Const(y)) => Expr::Const(x + y),
        (x, Expr::Const(0)) | (Expr::Const(0), x) => x,
        (Expr::Const(c), x) => add(x, Expr::Const(c)),
        (Expr::Add(x, c1), Expr::Const(c2)) if c1.as_const().is_some() => {
            Expr::Add(x, Box::new(Expr::Const(c1.as_const().unwrap_or(0) + c2)))
        }
        (x, Expr::Add(y, c)) if c.as_const().is_some() => add(add(x, *y), *c),
        (Expr::Add(x, c), y) if c.as_const().is_some() => add(add(*x, y), *c),
        // Products before bare variables: `j*4 + i`, as the index is usually read.
        (Expr::Var(v), y @ Expr::Mul(..)) => Expr::Add(Box::new(y), Box::new(Expr::Var(v))),
        (x, y) => Expr::Add(Box::new(x), Box::new(y)),
    }
}

fn mul(a: Expr, b: Expr) -> Expr {
    match (a, b) {
        (Expr::Const(x), Expr::Const(y)) => Expr::Const(x * y),
        (_, Expr::Const(0)) | (Expr::Const(0), _) => Expr::Const(0),
        (x, Expr::Const(1)) | (Expr::Const(1), x) => x,
        (Expr::Const(c), x) => mul(x, Expr::Const(c)),
        (Expr::Mul(x, c1), Expr::Const(c2)) if c1.as_const().is_some() => {
            Expr::Mul(x, Box::new(Expr::Const(c1.as_const().unwrap_or(1) * c2)))
        }
        (x, y) => Expr::Mul(Box::new(x), Box::new(y)),
    }
}

fn div(a: Expr, b: Expr, facts: &(impl Facts + ?Sized)) -> Expr {
    match (&a, &b) {
        (_, Expr::Const(1)) => a,
        (Expr::Const(x), Expr::Const(y)) if *y > 0 && *x >= 0 => Expr::Const(x / y),
        (Expr::Mul(x, c1), Expr::Const(c))
            if *c > 0 && c1.as_const().is_some_and(|k| k % c == 0) =>
        {
            mul((**x).clone(), Expr::Const(c1.as_const().unwrap_or(0) / c))
        }
        (Expr::Add(x, y), Expr::Const(c))
            if *c > 0 && divisibility(x, facts) % c == 0 && divisibility(y, facts) % c == 0 =>
        {
            add(
                div((**x).clone(), b.clone(), facts),
                div((**y).clone(), b.clone(), facts),
            )
        }
        _ => Expr::Div(Box::new(a), Box::new(b)),
    }
}

fn rem(a: Expr, b: Expr, facts: &(impl Facts + ?Sized)) -> Expr {
    match (&a, &b) {
        (_, Expr::Const(1)) => Expr::Const(0),
        (Expr::Const(x), Expr::Const(y)) if *y > 0 && *x >= 0 => Expr::Const(x % y),
        (_, Expr::Const(c)) if *c > 0 && divisibility(&a, facts) % c == 0 => Expr::Const(0),
        (Expr::Add(x, y), Expr::Const(c)) if *c > 0 && divisibility(x, facts) % c == 0 => {
            rem((**y).clone(), b.clone(), facts)
        }
        (Expr::Add(x, y), Expr::Const(c)) if *c > 0 && divisibility(y, facts) % c == 0 => {
            rem((**x).clone(), b.clone(), facts)
        }
        _ => Expr::Rem(Box::new(a), Box::new(b)),
    }
}

/// Evaluates `e` on the host, reading each variable with `value` (`None`: not known on the host).
/// `None` also for a division by zero or an overflow.
pub fn eval(e: &Expr, value: &impl Fn(Var) -> Option<i64>) -> Option<i64> {
    match e {
        Expr::Const(c) => Some(*c),
        Expr::Var(v) => value(*v),
        Expr::Add(a, b) => eval(a, value)?.checked_add(eval(b, value)?),
        Expr::Sub(a, b) => eval(a, value)?.checked_sub(eval(b, value)?),
        Expr::Mul(a, b) => eval(a, value)?.checked_mul(eval(b, value)?),
        Expr::Div(a, b) => eval(a, value)?.checked_div_euclid(eval(b, value)?),
        Expr::Rem(a, b) => eval(a, value)?.checked_rem_euclid(eval(b, value)?),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn none(_: Var) -> VarFacts {
        VarFacts::UNKNOWN
    }

    #[test]
    fn folds_and_orders() {
        let (i, j) = (Var(0), Var(1));
        let e = (Expr::from(64) + i * 8) + j * 1;
        assert_eq!(simplify(&e, &none).to_string(), "(((v0 * 8) + v1) + 64)");
        let e = Expr::from(2) * (i * 4) * 1 + 0;
        assert_eq!(simplify(&e, &none).to_string(), "(v0 * 8)");
        assert_eq!(simplify(&(Expr::from(6) * 7 - 2), &none), Expr::Const(40));
        assert_eq!(simplify(&(i - i), &none), Expr::Const(0));
    }

    #[test]
    fn uses_known_values_and_divisibility() {
        let facts = |v: Var| match v.0 {
            0 => VarFacts::range(0, None, 4),
            1 => VarFacts::constant(3),
            _ => none(v),
        };
        let (x, c, y) = (Var(0), Var(1), Var(2));
        assert_eq!(simplify(&(x % 4), &facts), Expr::Const(0));
        assert_eq!(simplify(&(x % 2), &facts), Expr::Const(0));
        assert_eq!(simplify(&((x + y) % 4), &facts).to_string(), "(v2 % 4)");
        assert_eq!(simplify(&(y * c + 1), &facts).to_string(), "((v2 * 3) + 1)");
        assert_eq!(simplify(&((y * 8) / 4), &facts).to_string(), "(v2 * 2)");
        assert_eq!(simplify(&((x / 4) * 4), &facts).to_string(), "v0");
        assert_eq!(
            simplify(&((y / 4) * 4), &facts).to_string(),
            "((v2 / 4) * 4)"
        );
        assert_eq!(
            simplify(&((x + y * 4) / 4), &facts).to_string(),
            "(v2 + (v0 / 4))"
        );
        assert_eq!(divisibility(&(x * 2 + y * 8), &facts), 8);
        assert_eq!(divisibility(&(x + y * 2), &facts), 2);
    }

    /// The simplifier keeps the value: every expression over small values of three variables.
    #[test]
    fn simplify_preserves_value() {
        let facts = |v: Var| VarFacts::range(0, None, if v.0 == 0 { 4 } else { 1 });
        let (x, y, z) = (Var(0), Var(1), Var(2));
        let exprs = [
            (x + y * 4) / 4,
            (x + y) % 4,
            (x * 8 + y + 64) % 8,
            (Expr::from(3) + x) * 2 + (y - 0) * 1,
            (z * 6) / 3 + (x * 12) / 4,
            (x / 4) * 4 + (y / 2) * 2,
            Expr::ceil_div(y * 4 + x, 8),
            (x + 3) * 4 + (y + z + 1) * 2,
        ];
        for e in &exprs {
            let s = simplify(e, &facts);
            for xv in (0..32).step_by(4) {
                for yv in 0..9 {
                    for zv in 0..5 {
                        let val = |v: Var| Some([xv, yv, zv][v.0 as usize]);
                        assert_eq!(eval(e, &val), eval(&s, &val), "{e} vs {s}");
                    }
                }
            }
        }
    }

    /// `bounds` holds every value: every expression over small bounded values of three variables.
    #[test]
    fn bounds_hold_every_value() {
        let facts = |v: Var| match v.0 {
            0 => VarFacts::range(0, Some(31), 4),
            1 => VarFacts::range(2, Some(8), 1),
            _ => VarFacts::range(1, Some(4), 1),
        };
        let (x, y, z) = (Var(0), Var(1), Var(2));
        let exprs = [
            x + y * 4,
            (x + y) % 4,
            (x * 8 + y + 64) % 256,
            x / 4 + z,
            y - z,
            x - z,
            y * z * 3,
        ];
        for e in &exprs {
            let (lo, hi) = bounds(e, &facts);
            for xv in (0..32).step_by(4) {
                for yv in 2..=8 {
                    for zv in 1..=4 {
                        let val = |v: Var| Some([xv, yv, zv][v.0 as usize]);
                        let got = eval(e, &val).unwrap();
                        assert!(
                            got >= lo && hi.is_none_or(|h| got <= h),
                            "{e}: {got} outside {lo}..{hi:?}"
                        );
                    }
                }
            }
        }
        assert_eq!(decide_lt(&(x + 0), &Expr::from(32), &facts), Some(true));
        assert_eq!(decide_lt(&Expr::from(40), &(y * 4), &facts), Some(false));
        assert_eq!(decide_lt(&(x + y), &(z * 8), &facts), None);
    }
}
