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

/// What a byte starts, by value: one table read chooses the token for every byte of a module
/// (issue 33), where a chain of comparisons and guards did.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    /// `\n`.
    Newline,
    /// Other white space.
    Space,
    /// `/`: a comment, or the division operator.
    Slash,
    /// `"`.
    Quote,
    /// `.`.
    Dot,
    /// `0-9`.
    Digit,
    /// `[A-Za-z_$%]`.
    IdentStart,
    /// A punctuation byte of [`Tok::Punct`] (other than `/`).
    Punct,
    /// Anything else: an error.
    Other,
}

const CLASS: [Class; 256] = {
    let mut t = [Class::Other; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = match c {
            b'\n' => Class::Newline,
            b' ' | b'\t' | b'\r' | 0x0b | 0x0c => Class::Space,
            b'/' => Class::Slash,
            b'"' => Class::Quote,
            b'.' => Class::Dot,
            b'0'..=b'9' => Class::Digit,
            b'A'..=b'Z' | b'a'..=b'z' | b'_' | b'$' | b'%' => Class::IdentStart,
            b'{' | b'}' | b'[' | b']' | b'(' | b')' | b',' | b';' | b':' | b'@' | b'!' | b'|'
            | b'+' | b'-' | b'<' | b'>' | b'=' | b'*' | b'&' | b'^' | b'~' => Class::Punct,
            _ => Class::Other,
        };
        b += 1;
    }
    t
};

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

/// The end of the run of bytes from `i` on that `more` takes.
fn run(b: &[u8], mut i: usize, more: impl Fn(u8) -> bool) -> usize {
    while let Some(&c) = b.get(i) {
        if !more(c) {
            break;
        }
        i += 1;
    }
    i
}

/// Splits `src` into tokens, and gives the line table (counted in the same pass).
pub fn lex(src: &str) -> Result<(Vec<Token>, Lines), ParseError> {
    let mut out = Vec::new();
    let lines = lex_into(src, &mut out)?;
    Ok((out, lines))
}

/// [`lex`] into `out` (emptied first, its capacity kept): the parser lends it a buffer it keeps
/// between modules ([`with_tokens`]).
pub(crate) fn lex_into(src: &str, out: &mut Vec<Token>) -> Result<Lines, ParseError> {
    let b = src.as_bytes();
    let mut lines = Lines { starts: vec![0] };
    let err = |lines: &Lines, kind, offset: usize, message: String| ParseError {
        kind,
        message,
        pos: lines.pos(offset),
    };
    // Every offset fits the tokens' 32 bits (`parse` reads at most `limits::MAX_INPUT_BYTES`).
    if u32::try_from(b.len()).is_err() {
        let lines = Lines::new(src);
        return Err(err(
            &lines,
            ParseErrorKind::LimitExceeded,
            u32::MAX as usize,
            "input too large".into(),
        ));
    }
    out.clear();
    out.reserve(src.len() / 4);
    let mut i = 0usize;
    while let Some(&c) = b.get(i) {
        let start = i;
        // The token's line, before a string's escaped line ends are counted.
        let line = lines.count();
        let tok = match CLASS[c as usize] {
            Class::Newline => {
                i += 1;
                lines.starts.push(i);
                continue;
            }
            Class::Space => {
                i = run(b, i + 1, |c| CLASS[c as usize] == Class::Space);
                continue;
            }
            Class::Slash if b.get(i + 1) == Some(&b'/') => {
                i = b[i..]
                    .iter()
                    .position(|&c| c == b'\n')
                    .map_or(b.len(), |n| i + n);
                Tok::Comment
            }
            Class::Slash if b.get(i + 1) == Some(&b'*') => {
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
            Class::Slash | Class::Punct => {
                i += 1;
                Tok::Punct(c)
            }
            Class::Quote => {
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
            Class::Dot => {
                i = run(b, i + 1, |c| ident_continue(c) || c == b':');
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
            Class::Digit => {
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
            Class::IdentStart => {
                i = run(b, i + 1, ident_continue);
                Tok::Ident
            }
            Class::Other => {
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
        // Fits: the text's length was checked above.
        out.push(Token {
            tok,
            start: start as u32,
            end: i as u32,
            line: line as u32,
        });
    }
    Ok(lines)
}

/// The most tokens [`with_tokens`] keeps a thread's buffer for (16 bytes each: 32 MiB).
const KEPT_TOKENS: usize = 1 << 21;

/// `f` with this thread's token buffer: a module of a megabyte is some 300,000 tokens, and a
/// buffer allocated for each module and freed after it is a fresh mapping of pages each time
/// (issue 33: a third of the page faults of `check` on a 1.3 MB CUTLASS module). A buffer of
/// more than [`KEPT_TOKENS`] is freed after use.
pub(crate) fn with_tokens<R>(f: impl FnOnce(&mut Vec<Token>) -> R) -> R {
    thread_local! {
        static TOKENS: std::cell::Cell<Vec<Token>> = const { std::cell::Cell::new(Vec::new()) };
    }
    let mut toks = TOKENS.take();
    let r = f(&mut toks);
    if toks.capacity() <= KEPT_TOKENS {
        toks.clear();
        TOKENS.set(toks);
    }
    r
}
