//! The PTX lexer (PTX ISA 4.1 "Source Format", 4.2 "Comments", 4.4 "Identifiers", 4.5
//! "Constants"): identifiers (`%r1`, `$L__BB0_2`, `_`), dot-words (`.reg`, `.f32`,
//! `.shared::cluster`), numbers (`0f3F800000`, `0x10`, `1.5`), strings, punctuation and `//`
//! comments. Block comments are skipped. Every byte either starts a token or is an error; the lexer
//! never panics.

use super::error::{ParseError, ParseErrorKind, Pos};

/// What a token is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tok {
    /// An identifier: `[A-Za-z_$%][A-Za-z0-9_$]*`.
    Ident,
    /// A dot and a word: `.reg`, `.f32`, `.L2::cache_hint`, `.16x64b`.
    DotWord,
    /// A number as written: `42`, `0x1F`, `0f3F800000`, `1.5e-3`.
    Number,
    /// A string literal, quotes included.
    Str,
    /// One punctuation byte: `{ } [ ] ( ) , ; : @ ! | + - < > =`, and the operators of constant
    /// expressions (PTX ISA 4.6.1): `* / & ^ ~`.
    Punct(u8),
    /// A `//` comment (its text after the slashes).
    Comment,
}

/// A token: its kind, its byte range and its line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token {
    /// The kind.
    pub tok: Tok,
    /// The first byte.
    pub start: u32,
    /// One past the last byte.
    pub end: u32,
    /// The 1-based line of the first byte: the parser places every statement, so the lexer counts
    /// lines as it goes rather than the parser searching the line table (issue 33).
    pub line: u32,
}

/// Line starts, for turning offsets into line and column.
#[derive(Debug, Clone)]
pub struct Lines {
    starts: Vec<usize>,
}

impl Lines {
    /// The line table of `src`.
    pub fn new(src: &str) -> Lines {
        let mut lines = Lines { starts: vec![0] };
        lines.scan(src.as_bytes(), 0);
        lines
    }

    /// Notes the line starts among `bytes`, which begin at offset `at`.
    fn scan(&mut self, bytes: &[u8], at: usize) {
        self.starts.extend(
            bytes
                .iter()
                .enumerate()
                .filter(|(_, b)| **b == b'\n')
                .map(|(i, _)| at + i + 1),
        );
    }

    /// How many lines have begun so far.
    fn count(&self) -> usize {
        self.starts.len()
    }

    /// The place of byte `offset` on 1-based line `line` (a token's, [`Token::line`]): no search.
    pub fn pos_on(&self, offset: usize, line: u32) -> Pos {
        let start = self
            .starts
            .get((line as usize).saturating_sub(1))
            .copied()
            .unwrap_or(0);
        Pos {
            offset,
            line,
            column: u32::try_from(offset.saturating_sub(start) + 1).unwrap_or(u32::MAX),
        }
    }

    /// The place of byte `offset`.
    pub fn pos(&self, offset: usize) -> Pos {
        let line = self.starts.partition_point(|&s| s <= offset).max(1);
        let start = self.starts.get(line - 1).copied().unwrap_or(0);
        Pos {
            offset,
            line: u32::try_from(line).unwrap_or(u32::MAX),
            column: u32::try_from(offset.saturating_sub(start) + 1).unwrap_or(u32::MAX),
        }
    }

    /// The 1-based line of byte `offset`.
    pub fn line(&self, offset: usize) -> usize {
        self.starts.partition_point(|&s| s <= offset).max(1)
    }
}

fn ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || matches!(b, b'_' | b'$' | b'%')
}

/// Bytes that continue an identifier (`[A-Za-z0-9_$]`), by value: a table read, not a chain of
/// comparisons, for the bytes of most of a module (issue 33).
const IDENT_CONTINUE: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = c.is_ascii_alphanumeric() || c == b'_' || c == b'$';
        b += 1;
    }
    t
};

fn ident_continue(b: u8) -> bool {
    IDENT_CONTINUE[b as usize]
}

/// Splits `src` into tokens, and gives the line table (counted in the same pass).
pub fn lex(src: &str) -> Result<(Vec<Token>, Lines), ParseError> {
    let b = src.as_bytes();
    let mut lines = Lines { starts: vec![0] };
    let err = |lines: &Lines, kind, offset: usize, message: String| ParseError {
        kind,
        message,
        pos: lines.pos(offset),
    };
    let mut out = Vec::with_capacity(src.len() / 4);
    let mut i = 0usize;
    while i < b.len() {
        let c = b[i];
        let start = i;
        // The token's line, before a string's escaped line ends are counted.
        let line = lines.count();
        let tok = match c {
            b'\n' => {
                i += 1;
                lines.starts.push(i);
                continue;
            }
            b' ' | b'\t' | b'\r' | 0x0b | 0x0c => {
                i += 1;
                continue;
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                i = b[i..]
                    .iter()
                    .position(|&c| c == b'\n')
                    .map_or(b.len(), |n| i + n);
                Tok::Comment
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                match src.get(i + 2..).and_then(|r| r.find("*/")) {
                    Some(end) => {
                        i += 2 + end + 2;
                        lines.scan(&b[start..i], start);
                    }
                    None => {
                        return Err(err(
                            &lines,
                            ParseErrorKind::Unterminated,
                            start,
                            "`/*` comment never ends".into(),
                        ));
                    }
                }
                continue;
            }
            b'"' => {
                i += 1;
                loop {
                    match b.get(i) {
                        None | Some(b'\n') => {
                            return Err(err(
                                &lines,
                                ParseErrorKind::Unterminated,
                                start,
                                "string never ends".into(),
                            ));
                        }
                        Some(b'\\') => i += 2,
                        Some(b'"') => {
                            i += 1;
                            break;
                        }
                        Some(_) => i += 1,
                    }
                }
                // `\` takes the byte after it, a line end too.
                lines.scan(&b[start..i.min(b.len())], start);
                if i > b.len() {
                    return Err(err(
                        &lines,
                        ParseErrorKind::Unterminated,
                        start,
                        "string never ends".into(),
                    ));
                }
                Tok::Str
            }
            b'.' => {
                i += 1;
                while i < b.len() && (ident_continue(b[i]) || b[i] == b':') {
                    i += 1;
                }
                if i == start + 1 {
                    return Err(err(
                        &lines,
                        ParseErrorKind::UnexpectedChar,
                        start,
                        "`.` with no word after it".into(),
                    ));
                }
                Tok::DotWord
            }
            c if c.is_ascii_digit() => {
                i += 1;
                let hexlike =
                    matches!(b.get(i), Some(b'x' | b'X' | b'f' | b'F' | b'd' | b'D')) && c == b'0';
                while i < b.len() {
                    let d = b[i];
                    // A sign belongs to the number only as a decimal exponent's (`2.5e-3`).
                    let exponent_sign =
                        matches!(d, b'+' | b'-') && !hexlike && matches!(b[i - 1], b'e' | b'E');
                    if d.is_ascii_alphanumeric() || d == b'.' || d == b'_' || exponent_sign {
                        i += 1;
                    } else {
                        break;
                    }
                }
                Tok::Number
            }
            c if ident_start(c) => {
                i += 1;
                while i < b.len() && ident_continue(b[i]) {
                    i += 1;
                }
                Tok::Ident
            }
            b'{' | b'}' | b'[' | b']' | b'(' | b')' | b',' | b';' | b':' | b'@' | b'!' | b'|'
            | b'+' | b'-' | b'<' | b'>' | b'=' | b'*' | b'/' | b'&' | b'^' | b'~' => {
                i += 1;
                Tok::Punct(c)
            }
            _ => {
                let shown = src
                    .get(start..)
                    .and_then(|r| r.chars().next())
                    .unwrap_or('?');
                return Err(err(
                    &lines,
                    ParseErrorKind::UnexpectedChar,
                    start,
                    format!("unexpected character {shown:?}"),
                ));
            }
        };
        let (Ok(s), Ok(e)) = (u32::try_from(start), u32::try_from(i)) else {
            return Err(err(
                &lines,
                ParseErrorKind::LimitExceeded,
                start,
                "input too large".into(),
            ));
        };
        out.push(Token {
            tok,
            start: s,
            end: e,
            line: u32::try_from(line).unwrap_or(u32::MAX),
        });
    }
    Ok((out, lines))
}
