//! Numeric literals (PTX ISA 4.5 "Constants"): integers in decimal, hex (`0x`), octal (`0`) and
//! binary (`0b`) with an optional `U` suffix; `0f`/`0d` hex floats of exactly 8 and 16 digits;
//! decimal floats (`1.0`, `2.5e-3`). Written with nom combinators over one number token.

use nom::{
    IResult, Parser,
    branch::alt,
    bytes::complete::{tag, tag_no_case, take_while_m_n, take_while1},
    character::complete::{char, digit0, digit1, one_of},
    combinator::{all_consuming, map_res, opt, recognize},
    sequence::{pair, preceded, terminated},
};

use crate::instr::Imm;

/// A number as read, before a sign is applied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Number {
    /// An integer.
    Int(u64),
    /// `0f` bits.
    F32(u32),
    /// `0d` bits.
    F64(u64),
    /// A decimal float, by its f64 bits.
    Decimal(u64),
}

fn u_suffix(i: &str) -> IResult<&str, Option<char>> {
    opt(one_of("uU")).parse(i)
}

fn hex_float(i: &str) -> IResult<&str, Number> {
    alt((
        map_res(
            preceded(
                tag_no_case("0f"),
                take_while_m_n(8, 8, |c: char| c.is_ascii_hexdigit()),
            ),
            |h| u32::from_str_radix(h, 16).map(Number::F32),
        ),
        map_res(
            preceded(
                tag_no_case("0d"),
                take_while_m_n(16, 16, |c: char| c.is_ascii_hexdigit()),
            ),
            |h| u64::from_str_radix(h, 16).map(Number::F64),
        ),
    ))
    .parse(i)
}

fn decimal_float(i: &str) -> IResult<&str, Number> {
    let exponent = (one_of("eE"), opt(one_of("+-")), digit1);
    map_res(
        recognize(alt((
            recognize((digit1, char('.'), digit0, opt(exponent))),
            recognize((digit1, one_of("eE"), opt(one_of("+-")), digit1)),
        ))),
        // A literal too large for a double is an error, not an infinity.
        |s: &str| match s.parse::<f64>() {
            Ok(x) if x.is_finite() => Ok(Number::Decimal(x.to_bits())),
            _ => Err(()),
        },
    )
    .parse(i)
}

fn integer(i: &str) -> IResult<&str, Number> {
    terminated(
        alt((
            map_res(
                preceded(
                    tag_no_case("0x"),
                    take_while1(|c: char| c.is_ascii_hexdigit()),
                ),
                |h| u64::from_str_radix(h, 16),
            ),
            map_res(
                preceded(
                    tag_no_case("0b"),
                    take_while1(|c: char| c == '0' || c == '1'),
                ),
                |h| u64::from_str_radix(h, 2),
            ),
            map_res(
                recognize(pair(
                    tag("0"),
                    take_while1(|c: char| ('0'..='7').contains(&c)),
                )),
                |h: &str| u64::from_str_radix(&h[1..], 8),
            ),
            map_res(digit1, |d: &str| d.parse::<u64>()),
        )),
        u_suffix,
    )
    .map(Number::Int)
    .parse(i)
}

/// Reads one number token.
pub fn number(text: &str) -> Option<Number> {
    // The common case first: a plain decimal integer (`0` or no leading zero, which is octal).
    let b = text.as_bytes();
    // Up to 19 digits fit `u64` whatever they are: their value in the pass that checks them
    // (the 1.3 MB CUTLASS module's initializers are 52,000 such numbers, issue 33).
    if !b.is_empty() && b.len() <= 19 && (b[0] != b'0' || b.len() == 1) {
        let mut v = 0u64;
        let mut digits = true;
        for &d in b {
            digits &= d.is_ascii_digit();
            v = v
                .wrapping_mul(10)
                .wrapping_add(u64::from(d.wrapping_sub(b'0')));
        }
        if digits {
            return Some(Number::Int(v));
        }
    }
    if !b.is_empty() && b.iter().all(u8::is_ascii_digit) && (b[0] != b'0' || b.len() == 1) {
        return text.parse().ok().map(Number::Int);
    }
    all_consuming(alt((hex_float, decimal_float, integer)))
        .parse(text)
        .ok()
        .map(|(_, n)| n)
}

/// The immediate for a number, negated when `negative`. `None` when a negative integer does not
/// fit `i64`.
pub fn imm(n: Number, negative: bool) -> Option<Imm> {
    Some(match (n, negative) {
        (Number::Int(v), false) => Imm::UInt(v),
        (Number::Int(0), true) => Imm::UInt(0),
        (Number::Int(v), true) => {
            if v > 1u64 << 63 {
                return None;
            }
            Imm::Int((v as i128).wrapping_neg() as i64)
        }
        (Number::F32(b), neg) => Imm::F32(if neg { b ^ 0x8000_0000 } else { b }),
        (Number::F64(b), neg) => Imm::F64(if neg { b ^ (1 << 63) } else { b }),
        // PTX ISA 4.5.1: a decimal literal is a double, the same value as its `0d` form.
        (Number::Decimal(b), neg) => Imm::F64(if neg { b ^ (1 << 63) } else { b }),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals() {
        assert_eq!(number("42"), Some(Number::Int(42)));
        assert_eq!(number("42U"), Some(Number::Int(42)));
        assert_eq!(number("0x1F"), Some(Number::Int(31)));
        assert_eq!(number("017"), Some(Number::Int(15)));
        assert_eq!(number("0"), Some(Number::Int(0)));
        assert_eq!(number("0b101"), Some(Number::Int(5)));
        assert_eq!(number("0f3F800000"), Some(Number::F32(0x3F80_0000)));
        assert_eq!(
            number("0d3FF0000000000000"),
            Some(Number::F64(0x3FF0_0000_0000_0000))
        );
        assert_eq!(number("1.0"), Some(Number::Decimal(1.0f64.to_bits())));
        assert_eq!(number("2.5e-3"), Some(Number::Decimal(2.5e-3f64.to_bits())));
        assert_eq!(number("0f3F80"), None);
        assert_eq!(number("1e999"), None);
        assert_eq!(number("99999999999999999999999"), None);
        assert_eq!(number("12ab"), None);
        assert_eq!(imm(Number::Int(1 << 63), true), Some(Imm::Int(i64::MIN)));
        assert_eq!(imm(Number::Int((1 << 63) + 1), true), None);
    }
}
