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

/// The braces of a text, each with how many statement ends come before it, counted as the
/// lexer goes (issue 33): the parser reserves a function body's statements from them, where it
/// read the body's tokens once more to count its statements (a pass over the token buffer, a
/// twentieth of `check`'s time on the 1.3 MB CUTLASS module).
///
/// A statement end is a token that ends or is a statement: `;`, `:`, `{`, `}`, a `//` comment
/// and `.loc` (which ends at its line's end).
#[derive(Debug, Clone, Default)]
pub(crate) struct Blocks {
    braces: Vec<Brace>,
    /// The statement ends of the whole text.
    ends: u32,
}

/// One `{` or `}` token of [`Blocks`].
#[derive(Debug, Clone, Copy)]
struct Brace {
    /// Its index among the tokens.
    token: u32,
    /// The statement ends before it.
    ends_before: u32,
    /// `{`, not `}`.
    open: bool,
}

impl Blocks {
    /// At most how many statements the block opened by token `open` (a `{`) holds: the
    /// statement ends after it up to its matching `}`, or to the end of the text when none
    /// matches. 0 when token `open` is no `{`.
    pub(crate) fn statements_in(&self, open: usize) -> usize {
        let k = self.braces.partition_point(|b| (b.token as usize) < open);
        let Some(first) = self
            .braces
            .get(k)
            .filter(|b| b.token as usize == open && b.open)
        else {
            return 0;
        };
        let after = first.ends_before + 1;
        let mut depth = 0usize;
        for b in self.braces.get(k + 1..).unwrap_or_default() {
            if b.open {
                depth += 1;
            } else if depth == 0 {
                return b.ends_before.saturating_sub(after) as usize;
            } else {
                depth -= 1;
            }
        }
        self.ends.saturating_sub(after) as usize
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
    let (lines, _) = lex_into(src, &mut out)?;
    Ok((out, lines))
}

/// [`lex`] into `out` (emptied first, its capacity kept): the parser lends it a buffer it keeps
/// between modules ([`with_tokens`]). Also gives the text's [`Blocks`].
pub(crate) fn lex_into(src: &str, out: &mut Vec<Token>) -> Result<(Lines, Blocks), ParseError> {
    let b = src.as_bytes();
    let mut lines = Lines { starts: vec![0] };
    let mut blocks = Blocks::default();
    let mut ends = 0u32;
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
                ends += 1;
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
                match c {
                    b';' | b':' => ends += 1,
                    b'{' | b'}' => {
                        // Fits: there are fewer tokens than bytes.
                        blocks.braces.push(Brace {
                            token: out.len() as u32,
                            ends_before: ends,
                            open: c == b'{',
                        });
                        ends += 1;
                    }
                    _ => {}
                }
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
                if &b[start..i] == b".loc" {
                    ends += 1;
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
    blocks.ends = ends;
    Ok((lines, blocks))
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The statement ends after token `open` up to its matching `}` (or the end), counted on the
    /// tokens one by one: what [`Blocks::statements_in`] must give.
    fn counted(src: &str, toks: &[Token], open: usize) -> usize {
        let mut depth = 0usize;
        let mut n = 0usize;
        for t in &toks[open + 1..] {
            match t.tok {
                Tok::Punct(b'{') => depth += 1,
                Tok::Punct(b'}') if depth == 0 => break,
                Tok::Punct(b'}') => depth -= 1,
                Tok::Punct(b';' | b':') | Tok::Comment => {}
                Tok::DotWord if &src[t.start as usize..t.end as usize] == ".loc" => {}
                _ => continue,
            }
            n += 1;
        }
        n
    }

    #[test]
    fn statements_in_blocks_match_a_count_of_their_tokens() {
        let src = ".entry k()\n{\n\t.reg .b32 %r<2>;\n\t.loc 1 2 3\n\t{ // inline asm\n\t\
                   mov.u32 %r1, 1; }\n$L0:\n\tret;\n}\n.func g() { ret; }\n.func h() { { ret;";
        let mut toks = Vec::new();
        let (_, blocks) = lex_into(src, &mut toks).unwrap();
        let mut opens = 0;
        for (k, t) in toks.iter().enumerate() {
            if t.tok == Tok::Punct(b'{') {
                opens += 1;
                assert_eq!(
                    blocks.statements_in(k),
                    counted(src, &toks, k),
                    "block at token {k}"
                );
            } else {
                // Not a `{`: nothing to reserve.
                assert_eq!(blocks.statements_in(k), 0, "token {k}");
            }
        }
        assert_eq!(opens, 5);
        // `k`'s body: `;` `.loc` `{` comment `;` `}` `:` `;`.
        let k_open = toks.iter().position(|t| t.tok == Tok::Punct(b'{')).unwrap();
        assert_eq!(blocks.statements_in(k_open), 8);
    }
}
