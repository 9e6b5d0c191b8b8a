//! The operands of the video instructions (PTX ISA 9.7.18): which byte or half-word selector each
//! operand takes (`%r1.b0`, `%r2.h10`) and which may be negated (`-%r1`, vmad only). What ptxas
//! 13.0 takes, measured (`tests/forms_agreement.rs` writes every selector on every operand):
//!
//! - scalar (9.7.18.1.1/2/4): `a` and `b` take `.b0`..`.b3`, `.h0`, `.h1`; `d` takes one of
//!   those only in the merge form, with `c` and no secondary operation ("Video instruction cannot
//!   have destination selector and secondary operation"); `c` takes none;
//! - vmad (9.7.18.1.3): `a` and `b` as above, `d` and `c` none; `a`, `b` and `c` may be negated,
//!   but not the product (`a` xor `b`) and `c` both ("Operand negation limited to either (source A
//!   xor source B) or source C"); the other video instructions take `-a, -b` together (the two
//!   negations cancel) and no other negation ("Operand negation not allowed");
//! - SIMD on half-words (9.7.18.2.1/2): `d` takes the mask `.h0`, `.h1` or `.h10`; `a` and `b`
//!   `.hxy` with x, y in 0..=3; `c` none;
//! - SIMD on bytes (9.7.18.2.3/4): `d` takes a mask `.b` with digits of 0..=3 in descending order
//!   (`.b3210`, `.b31`, `.b0`); `a` and `b` `.bxyzw` with x, y, z, w in 0..=7; `c` none.
//!
//! No operand of any other instruction takes a selector or a negation ("Video selector is not
//! allowed on source operand for instruction 'add'").

use crate::instr::{InstrRef, Operand};

/// How a video row's operands take selectors and negation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VideoShape {
    /// vadd, vsub, vabsdiff, vmin, vmax, vshl, vshr, vset.
    Scalar,
    /// vmad.
    Mad,
    /// The SIMD instructions on half-words (vadd2 ... vset2).
    Simd2,
    /// The SIMD instructions on bytes (vadd4 ... vset4).
    Simd4,
}

/// The scalar instructions' selectors of one source.
const SCALAR: &[&str] = &["b0", "b1", "b2", "b3", "h0", "h1"];

/// The digits of a selector `prefix` + digits, each at most `max`.
fn digits(sel: &str, prefix: char, max: u8) -> Option<&[u8]> {
    let d = sel.strip_prefix(prefix)?.as_bytes();
    (!d.is_empty() && d.iter().all(|b| (b'0'..=b'0' + max).contains(b))).then_some(d)
}

impl VideoShape {
    /// True when operand `k` of an instruction of this shape may carry selector `sel`; `merge`
    /// says the instruction is a scalar merge form (`d.dsel`, `c`, no secondary operation).
    fn takes(self, k: usize, sel: &str, merge: bool) -> bool {
        match (self, k) {
            (VideoShape::Scalar, 0) => merge && SCALAR.contains(&sel),
            (VideoShape::Scalar | VideoShape::Mad, 1 | 2) => SCALAR.contains(&sel),
            (VideoShape::Simd2, 0) => matches!(sel, "h0" | "h1" | "h10"),
            (VideoShape::Simd2, 1 | 2) => digits(sel, 'h', 3).is_some_and(|d| d.len() == 2),
            (VideoShape::Simd4, 0) => {
                digits(sel, 'b', 3).is_some_and(|d| d.windows(2).all(|w| w[0] > w[1]))
            }
            (VideoShape::Simd4, 1 | 2) => digits(sel, 'b', 7).is_some_and(|d| d.len() == 4),
            _ => false,
        }
    }

    /// What operand `k` takes, for the message.
    fn describe(self, k: usize) -> &'static str {
        match (self, k) {
            (VideoShape::Scalar, 0) => ".b0-.b3, .h0, .h1, only with c and no secondary operation",
            (VideoShape::Scalar | VideoShape::Mad, 1 | 2) => ".b0, .b1, .b2, .b3, .h0, .h1",
            (VideoShape::Simd2, 0) => ".h0, .h1, .h10",
            (VideoShape::Simd2, 1 | 2) => ".hxy with x, y in 0..=3",
            (VideoShape::Simd4, 0) => ".b and digits of 0..=3 in descending order",
            (VideoShape::Simd4, 1 | 2) => ".bxyzw with x, y, z, w in 0..=7",
            _ => "no selector",
        }
    }
}

/// What is wrong with the selectors and negations of `i`, an instruction of a row of `shape`
/// (`None` for a row that is no video instruction), if anything.
pub(super) fn check(shape: Option<VideoShape>, i: &InstrRef<'_>) -> Option<String> {
    // Asked only of a selector (nearly no instruction has one: issue 33).
    let merge = || {
        i.operands.len() == 4
            && !i
                .modifiers
                .iter()
                .any(|m| matches!(m.as_ref(), "add" | "min" | "max"))
    };
    let mut negated = [false; 4];
    for (k, o) in i.operands.iter().enumerate() {
        let Operand::Video {
            negated: neg,
            select,
            ..
        } = o
        else {
            continue;
        };
        let Some(shape) = shape else {
            return Some(format!(
                "operand {k} (`{o}`): only video instructions take selectors and negation"
            ));
        };
        if let Some(sel) = select {
            if !shape.takes(k, sel, merge()) {
                return Some(format!(
                    "operand {k} (`{o}`): `.{sel}` is not a selector it takes: {}",
                    shape.describe(k)
                ));
            }
        }
        if *neg {
            if k == 0 {
                return Some(format!("operand {k} (`{o}`) cannot be negated"));
            }
            if let Some(n) = negated.get_mut(k) {
                *n = true;
            }
        }
    }
    // ptxas 13.0 reads `-a` and `-b` as one negation of the pair (both cancel, on every video
    // instruction): vmad takes it or `-c`, the others neither.
    let pair = negated[1] != negated[2];
    match shape {
        Some(VideoShape::Mad) if pair && negated[3] => {
            Some("the product (a or b negated) and c cannot both be negated".to_string())
        }
        Some(VideoShape::Mad) | None => None,
        Some(_) if pair || negated[3] => {
            Some("only vmad negates its operands (`-a, -b` together cancel)".to_string())
        }
        Some(_) => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_as_ptxas_takes_them() {
        use VideoShape::*;
        assert!(Scalar.takes(1, "h1", false) && !Scalar.takes(1, "h2", false));
        assert!(Scalar.takes(0, "b1", true) && !Scalar.takes(0, "b1", false));
        assert!(!Mad.takes(0, "b0", true) && !Scalar.takes(3, "b0", true));
        assert!(Simd2.takes(1, "h33", false) && !Simd2.takes(1, "h333", false));
        assert!(!Simd2.takes(1, "h0", false) && Simd2.takes(0, "h10", false));
        assert!(!Simd2.takes(0, "h01", false));
        assert!(Simd4.takes(0, "b31", false) && Simd4.takes(0, "b3210", false));
        assert!(!Simd4.takes(0, "b0123", false) && !Simd4.takes(0, "b33", false));
        assert!(Simd4.takes(2, "b7654", false) && !Simd4.takes(2, "b765", false));
        assert!(!Simd4.takes(2, "b8888", false));
    }
}
