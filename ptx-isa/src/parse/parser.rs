//! The recursive-descent parser over the lexer's tokens. Every loop consumes a token or returns an
//! error, and recursion (operands, initializers) is bounded by [`limits::MAX_OPERAND_DEPTH`], so
//! the parser always ends.

use std::borrow::Cow;

use super::error::{ParseError, ParseErrorKind, Pos, Warning};
use super::lexer::{Blocks, Lines, Tok, Token, lex_into, with_tokens};
use super::literal::{self, Number};
use super::resolve;
use super::{FunctionSpans, Parsed, SourceMap, limits};
use crate::forms::Form;
use crate::instr::{Guard, Imm, Label, NamedGuard, Operand};
use crate::module::{
    BranchTargets, Directive, Function, FunctionDecl, FunctionKind, Init, InstrArena, Item,
    Linkage, Module, Opaque, Param, ParamKind, RegDecl, RegName, Statement, Variable,
};
use crate::reg::{RegClass, RegRef};
use crate::space::{AddrBase, Address, SharedScope, StateSpace};
use crate::sreg::SpecialReg;
use crate::target::{PtxVersion, Target};
use crate::types::{ScalarType, VectorWidth};

type PResult<T> = Result<T, ParseError>;

struct Parser<'a> {
    src: &'a str,
    toks: Vec<Token>,
    pos: usize,
    lines: Lines,
    /// The text's braces and statement ends, for reserving each body's statements.
    blocks: Blocks,
    warnings: Vec<Warning>,
    /// Emptied function bodies to read the next bodies into ([`KeptBodies`]; `check` only).
    bodies: Vec<BodyBuffers>,
    /// The table's answer for each opcode as written and operand count this module has
    /// ([`resolve::opcode_answer`]): looked up by the opcode's number ([`Parser::opcode_words`])
    /// and the count, where the thread's table hashes and compares the opcode word by word
    /// (issue 33).
    opcodes: hashbrown::HashMap<(u32, usize), (Option<Form>, bool)>,
    /// The words no row spells and the register and symbol names this module has, as
    /// [`kept_text`] kept them: a module repeating one (`f32x4` of `add.rn.f32x4`, the `p` of
    /// each of nvcc's inline-asm blocks) takes the process's lock for it once, not per use
    /// (issue 33: an instruction no row takes costs no more than one a row takes).
    kept: hashbrown::HashMap<&'a str, Cow<'static, str>>,
    /// Each opcode as written this module has (`ld.shared.u32`): where its words lie in
    /// `words_seen` ([`Parser::opcode_words`]).
    opcode_words: hashbrown::HashMap<&'a str, (u32, u32)>,
    /// The words of the opcodes in `opcode_words`, one run each.
    words_seen: Vec<Cow<'static, str>>,
    /// The elements of the vector or call list being read ([`Parser::list`]).
    scratch: Vec<Operand>,
}

/// The buffers of one function body, emptied: its statements, their places, its opcode words
/// and operands.
#[derive(Default)]
struct BodyBuffers {
    body: Vec<Statement>,
    spans: Vec<Pos>,
    words: Vec<Cow<'static, str>>,
    operands: Vec<Operand>,
}

impl BodyBuffers {
    /// The bytes the buffers hold.
    fn bytes(&self) -> usize {
        use std::mem::size_of;
        self.body.capacity() * size_of::<Statement>()
            + self.spans.capacity() * size_of::<Pos>()
            + self.words.capacity() * size_of::<Cow<'static, str>>()
            + self.operands.capacity() * size_of::<Operand>()
    }
}

/// The most bytes of emptied bodies [`KeptBodies`] keeps a thread (as the kept token buffer,
/// 32 MiB).
const KEPT_BODY_BYTES: usize = 32 << 20;

/// The function bodies a thread keeps from the modules `check` read, emptied, to read the next
/// module's bodies into: a module's bodies allocated for each module and freed after it are
/// fresh pages each time, and grow by copying (issue 33: on the 1.3 MB CUTLASS module, the page
/// faults and the copies of its growing bodies were a sixth of `check`).
pub(crate) struct KeptBodies;

thread_local! {
    static KEPT_BODIES: std::cell::Cell<Vec<BodyBuffers>> = const { std::cell::Cell::new(Vec::new()) };
}

impl KeptBodies {
    /// Keeps the bodies of `parsed`'s functions for the thread's next [`parse_module`] with
    /// `kept` set, at most [`KEPT_BODY_BYTES`] of them; the rest is freed.
    pub(crate) fn keep(parsed: Parsed) {
        let mut kept = KEPT_BODIES.take();
        let mut bytes: usize = kept.iter().map(BodyBuffers::bytes).sum();
        let spans = parsed.source_map.functions;
        let functions = parsed.module.functions;
        // Taken back from the end: the next module's first function gets this one's first
        // function's buffers.
        for (f, s) in functions.into_iter().zip(spans).rev() {
            let mut b = BodyBuffers {
                body: f.body,
                spans: s.body,
                words: f.arena.words,
                operands: f.arena.operands,
            };
            // A declaration's body holds nothing to keep; kept, it would be the next module's
            // first body, and each body after it would get the buffers of the one before it
            // (issue 33: on the CUTLASS module, whose first function is `.extern .func
            // __assertfail`, its first kernel's body grew from nothing in every `check`, and
            // the last one's buffers piled up until the bound freed them).
            if b.bytes() == 0 || bytes + b.bytes() > KEPT_BODY_BYTES {
                continue;
            }
            bytes += b.bytes();
            b.body.clear();
            b.spans.clear();
            b.words.clear();
            b.operands.clear();
            kept.push(b);
        }
        KEPT_BODIES.set(kept);
    }
}

/// The special register named `name` (`%tid.x`), found by name once a table is built.
fn sreg_named(name: &str) -> Option<SpecialReg> {
    static BY_NAME: std::sync::LazyLock<hashbrown::HashMap<String, SpecialReg>> =
        std::sync::LazyLock::new(|| {
            SpecialReg::all()
                .into_iter()
                .map(|s| (s.to_string(), s))
                .collect()
        });
    BY_NAME.get(name).copied()
}

/// Parses `src`. `kept`: lex into this thread's kept token buffer ([`with_tokens`]) and read the
/// function bodies into the bodies it kept ([`KeptBodies`]), for a caller that reads many modules
/// and keeps none (`check`, which gives the bodies back); otherwise into buffers of its own.
pub(super) fn parse_module(src: &str, kept: bool) -> PResult<Parsed> {
    if src.len() > limits::MAX_INPUT_BYTES {
        let lines = Lines::new(src);
        return Err(ParseError {
            kind: ParseErrorKind::LimitExceeded,
            message: format!(
                "input of {} bytes exceeds the limit of {} (limits::MAX_INPUT_BYTES)",
                src.len(),
                limits::MAX_INPUT_BYTES
            ),
            pos: lines.pos(0),
        });
    }
    let read = |toks: &mut Vec<Token>| {
        let (lines, blocks) = lex_into(src, toks)?;
        let mut p = Parser {
            src,
            toks: std::mem::take(toks),
            pos: 0,
            lines,
            blocks,
            warnings: Vec::new(),
            bodies: if kept { KEPT_BODIES.take() } else { Vec::new() },
            opcodes: hashbrown::HashMap::new(),
            kept: hashbrown::HashMap::new(),
            opcode_words: hashbrown::HashMap::new(),
            words_seen: Vec::new(),
            scratch: Vec::new(),
        };
        let parsed = p.module();
        *toks = p.toks;
        if kept {
            // Those this module had no function for.
            KEPT_BODIES.set(p.bodies);
        }
        parsed
    };
    if kept {
        with_tokens(read)
    } else {
        read(&mut Vec::new())
    }
}

/// A canonical register name `%<prefix><index>` (`%rd3`) as the builder writes it.
fn canonical_reg(name: &str) -> Option<RegRef> {
    // `%`, a prefix of one or two letters ([`RegClass::prefix`]), the digits: where the digits
    // begin is read off the second and third bytes (every register operand is read here,
    // issue 33).
    let b = name.as_bytes();
    let split = match b {
        [b'%', _, d, ..] if d.is_ascii_digit() => 2,
        [b'%', _, _, d, ..] if d.is_ascii_digit() => 3,
        _ => return None,
    };
    let (prefix, digits) = (name.get(1..split)?, b.get(split..)?);
    let class = RegClass::from_prefix(prefix)?;
    if digits.len() > 1 && digits[0] == b'0' {
        return None;
    }
    // Past nine digits the value may not fit: `parse::<u32>` says.
    if digits.len() > 9 {
        let digits = name.get(split..)?;
        return digits.parse().ok().map(|index| RegRef { class, index });
    }
    // The digits' value in the pass that checks them, with no overflow to check (what
    // `parse::<u32>` gives, without its second pass).
    let mut index = 0u32;
    for &d in digits {
        if !d.is_ascii_digit() {
            return None;
        }
        index = index * 10 + u32::from(d - b'0');
    }
    Some(RegRef { class, index })
}

/// Appends what `make` builds to `v`, built where `v` keeps it once there is room (issue 33).
/// `v.push(make())` builds the value first, on the stack (where it is dropped should growing `v`
/// fail), a few bytes at a time, and copies it from there in wider reads that wait for those
/// writes: on the 1.3 MB CUTLASS module such copies of operands, words and statements were half
/// of the time `Parser::body` spent outside its calls.
#[inline(always)]
fn push_built<T>(v: &mut Vec<T>, make: impl FnOnce() -> T) {
    v.extend(std::iter::once_with(make));
}

/// A builder label `$L__<n>`.
fn canonical_label(name: &str) -> Option<Label> {
    let digits = name.strip_prefix("$L__")?;
    if digits.is_empty()
        || digits.len() > 1 && digits.starts_with('0')
        || !digits.bytes().all(|b| b.is_ascii_digit())
    {
        return None;
    }
    digits.parse::<u32>().ok().map(Label)
}

/// True for the shape of a video operand selector (PTX ISA 9.7.18): `b` or `h` and digits
/// (`b0`, `h1`, `h10`, `b3210`). Which ones an operand takes is a rule of the row.
fn video_selector(sel: &str) -> bool {
    sel.strip_prefix(['b', 'h'])
        .is_some_and(|d| !d.is_empty() && d.len() <= 4 && d.bytes().all(|b| b.is_ascii_digit()))
}

fn space_of(word: &str) -> Option<StateSpace> {
    Some(match word {
        ".global" => StateSpace::Global,
        ".shared" => StateSpace::Shared(SharedScope::Implicit),
        ".shared::cta" => StateSpace::Shared(SharedScope::Cta),
        ".shared::cluster" => StateSpace::Shared(SharedScope::Cluster),
        ".const" => StateSpace::Const,
        ".local" => StateSpace::Local,
        ".param" => StateSpace::Param,
        _ => return None,
    })
}

fn vector_of(word: &str) -> Option<VectorWidth> {
    Some(match word {
        ".v2" => VectorWidth::V2,
        ".v4" => VectorWidth::V4,
        ".v8" => VectorWidth::V8,
        _ => return None,
    })
}

fn linkage_of(word: &str) -> Option<Linkage> {
    Some(match word {
        ".visible" => Linkage::Visible,
        ".extern" => Linkage::Extern,
        ".weak" => Linkage::Weak,
        ".common" => Linkage::Common,
        _ => return None,
    })
}

/// A written mnemonic or modifier as the model holds it, borrowed from the form table when a row
/// spells it (nearly always), so that reading an instruction allocates nothing for its opcode
/// (issue 33); `None` for a word no row spells ([`kept_text`] keeps those).
fn known_word(written: &str) -> Option<&'static str> {
    /// The words rows spell: those of at most 8 bytes (nearly all) by their bytes as one
    /// integer, found without comparing text; the longer ones by their text.
    struct Known {
        short: hashbrown::HashMap<u64, &'static str>,
        long: hashbrown::HashSet<&'static str>,
    }
    static KNOWN: std::sync::LazyLock<Known> = std::sync::LazyLock::new(|| {
        let mut known = Known {
            short: hashbrown::HashMap::new(),
            long: hashbrown::HashSet::new(),
        };
        let mut add = |w: &'static str| match packed_word(w.as_bytes()) {
            Some(x) => {
                known.short.insert(x, w);
            }
            None => {
                known.long.insert(w);
            }
        };
        for spec in crate::forms::Form::all() {
            let p = spec.form.pattern();
            p.mnemonic().split('.').for_each(&mut add);
            for e in p.elements() {
                e.alternatives()
                    .iter()
                    .flatten()
                    .for_each(|w| add(w.as_str()));
            }
        }
        known
    });
    match packed_word(written.as_bytes()) {
        Some(x) => KNOWN.short.get(&x).copied(),
        None => KNOWN.long.get(written).copied(),
    }
}

/// The bytes of a word of at most 8 bytes as one integer (zero-padded: PTX words hold no NUL,
/// PTX ISA 4.4 "Identifiers"), `None` for a longer one.
fn packed_word(w: &[u8]) -> Option<u64> {
    if w.len() > 8 {
        return None;
    }
    let mut x = 0u64;
    for (k, &c) in w.iter().enumerate() {
        x |= u64::from(c) << (8 * k);
    }
    Some(x)
}

/// A modifier no row spells (`f32x4` of `add.rn.f32x4`), or a register or symbol name (`p`,
/// `%rx`): kept once for the process, so that a module repeating an opcode the table lacks
/// allocates nothing for it after the first (an instruction no row takes costs no more than one
/// a row takes, issue 33), nor for the names of nvcc's inline-asm blocks, 2,184 `.reg .pred p;`
/// and its two uses in the 1.3 MB CUTLASS module. Bounded: at most [`KEPT_TEXTS`] texts of at
/// most [`KEPT_TEXT_LEN`] bytes are kept (64 KiB in all), so fuzzed input cannot grow it; past
/// that each is allocated as written.
fn kept_text(written: &str) -> Cow<'static, str> {
    static KEPT: std::sync::LazyLock<std::sync::Mutex<hashbrown::HashSet<&'static str>>> =
        std::sync::LazyLock::new(Default::default);
    let Ok(mut kept) = KEPT.lock() else {
        return Cow::Owned(written.to_string());
    };
    if let Some(k) = kept.get(written) {
        return Cow::Borrowed(*k);
    }
    if kept.len() >= KEPT_TEXTS || written.len() > KEPT_TEXT_LEN {
        return Cow::Owned(written.to_string());
    }
    let k: &'static str = Box::leak(written.into());
    kept.insert(k);
    Cow::Borrowed(k)
}

/// How many texts [`kept_text`] keeps.
const KEPT_TEXTS: usize = 1024;

/// The longest text [`kept_text`] keeps.
const KEPT_TEXT_LEN: usize = 64;

/// The longest register or symbol name [`Parser::name`] keeps.
const KEPT_NAME_LEN: usize = 8;

/// A comment line's text as the model holds it: borrowed when it is one nvcc writes around every
/// inline-asm block (15,000 of the 1.3 MB CUTLASS module's 52,000 lines), so that reading those
/// allocates nothing (issue 33).
fn comment(text: &str) -> Cow<'static, str> {
    const NVCC: [&str; 2] = ["begin inline asm", "end inline asm"];
    match NVCC.iter().find(|c| **c == text) {
        Some(c) => Cow::Borrowed(*c),
        None => Cow::Owned(text.to_string()),
    }
}

/// Directives that begin a module-scope item (PTX ISA 11.1-11.4): one after a function's header
/// ends the header, a prototype without `;`.
const MODULE_SCOPE: &[&str] = &[
    ".visible",
    ".extern",
    ".weak",
    ".common",
    ".entry",
    ".func",
    ".global",
    ".const",
    ".shared",
    ".local",
    ".file",
    ".section",
    ".alias",
    ".version",
    ".target",
    ".address_size",
    ".texref",
    ".samplerref",
    ".surfref",
];

impl<'a> Parser<'a> {
    // ---- tokens ----------------------------------------------------------------------------------

    fn peek(&self) -> Option<Token> {
        self.toks.get(self.pos).copied()
    }

    fn peek_at(&self, k: usize) -> Option<Token> {
        self.toks.get(self.pos + k).copied()
    }

    /// Pushes `written`, a mnemonic or modifier of this module's text, onto `words` as the
    /// model holds it: [`known_word`], else [`kept_text`] once per module. The word is
    /// written into the list where it lies, not returned through the stack and copied (issue 33:
    /// the copy of each word read back was a tenth of the parser's own time on the CUTLASS module).
    #[inline]
    fn push_word(&mut self, words: &mut Vec<Cow<'static, str>>, written: &'a str) {
        match known_word(written) {
            Some(w) => push_built(words, || Cow::Borrowed(w)),
            None => words.push(self.kept(written)),
        }
    }

    /// Pushes the words of `opcode`, a mnemonic `t` and the modifiers from token `first` to
    /// the current one, onto `words` ([`Parser::push_word`] each): looked up once per opcode of
    /// the module, and copied from there for each later instruction of it, one hash of the
    /// opcode's text in place of one per word (issue 33). Gives the opcode's number in this
    /// module, where its words begin in `words_seen` (distinct: each opcode has a word, and
    /// `words_seen`, of fewer words than the text's bytes, fits 32 bits).
    fn opcode_words(
        &mut self,
        opcode: &'a str,
        t: Token,
        first: usize,
        words: &mut Vec<Cow<'static, str>>,
    ) -> u32 {
        if let Some(&(at, n)) = self.opcode_words.get(opcode) {
            if let Some(seen) = self.words_seen.get(at as usize..at as usize + n as usize) {
                words.extend_from_slice(seen);
                return at;
            }
        }
        let before = words.len();
        self.push_word(words, self.text(t));
        for k in first..self.pos {
            if let Some(m) = self.toks.get(k).copied() {
                self.push_word(words, self.text(m).get(1..).unwrap_or(""));
            }
        }
        let read = words.get(before..).unwrap_or_default();
        let at = crate::module::index32(self.words_seen.len());
        self.words_seen.extend_from_slice(read);
        let n = crate::module::index32(read.len());
        self.opcode_words.insert(opcode, (at, n));
        at
    }

    /// A word no row spells, or a register or symbol name, as [`kept_text`] kept it, asked
    /// once per module.
    fn kept(&mut self, written: &'a str) -> Cow<'static, str> {
        self.kept
            .entry(written)
            .or_insert_with(|| kept_text(written))
            .clone()
    }

    /// A register or symbol name as the model holds it: kept ([`Parser::kept`]) when at most
    /// [`KEPT_NAME_LEN`] bytes long, as the names nvcc's inline-asm blocks declare and use
    /// (`p`, `%rx`) are; longer ones (labels, mangled names), mostly met once, are allocated and
    /// leave the process's bounded set to the short ones.
    fn name(&mut self, written: &'a str) -> Cow<'static, str> {
        if written.len() <= KEPT_NAME_LEN {
            self.kept(written)
        } else {
            Cow::Owned(written.to_string())
        }
    }

    fn text(&self, t: Token) -> &'a str {
        self.src.get(t.start as usize..t.end as usize).unwrap_or("")
    }

    fn here(&self) -> Pos {
        match self.peek() {
            Some(t) => self.lines.pos_on(t.start as usize, t.line),
            None => self.lines.pos(self.src.len()),
        }
    }

    fn error<T>(&self, kind: ParseErrorKind, message: impl Into<String>) -> PResult<T> {
        Err(ParseError {
            kind,
            message: message.into(),
            pos: self.here(),
        })
    }

    fn unexpected<T>(&self, wanted: &str) -> PResult<T> {
        match self.peek() {
            Some(t) => self.error(
                ParseErrorKind::UnexpectedToken,
                format!("expected {wanted}, found `{}`", self.shown(t)),
            ),
            None => self.error(
                ParseErrorKind::UnexpectedEof,
                format!("expected {wanted}, found the end of the text"),
            ),
        }
    }

    fn shown(&self, t: Token) -> String {
        let s = self.text(t);
        if s.len() > 40 {
            let mut end = 40;
            while !s.is_char_boundary(end) {
                end -= 1;
            }
            format!("{}...", &s[..end])
        } else {
            s.to_string()
        }
    }

    fn bump(&mut self) -> Option<Token> {
        let t = self.peek();
        if t.is_some() {
            self.pos += 1;
        }
        t
    }

    fn is_punct(&self, c: u8) -> bool {
        matches!(self.peek(), Some(Token { tok: Tok::Punct(p), .. }) if p == c)
    }

    fn eat_punct(&mut self, c: u8) -> bool {
        if self.is_punct(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect_punct(&mut self, c: u8) -> PResult<()> {
        if self.eat_punct(c) {
            Ok(())
        } else {
            self.unexpected(&format!("`{}`", c as char))
        }
    }

    /// The next token's text when it is a dot-word (`.reg`, `.v4`, `.align`), without taking it.
    fn peek_dot_word(&self) -> Option<&'a str> {
        self.peek()
            .filter(|t| t.tok == Tok::DotWord)
            .map(|t| self.text(t))
    }

    fn is_word(&self, w: &str) -> bool {
        matches!(self.peek(), Some(t) if t.tok == Tok::DotWord && self.text(t) == w)
    }

    fn ident(&mut self) -> PResult<&'a str> {
        match self.peek() {
            Some(t) if t.tok == Tok::Ident => {
                self.pos += 1;
                Ok(self.text(t))
            }
            _ => self.unexpected("a name"),
        }
    }

    fn number(&mut self) -> PResult<Number> {
        match self.peek() {
            Some(t) if t.tok == Tok::Number => match literal::number(self.text(t)) {
                Some(n) => {
                    self.pos += 1;
                    Ok(n)
                }
                None => self.error(
                    ParseErrorKind::BadNumber,
                    format!("`{}` is not a PTX number", self.shown(t)),
                ),
            },
            _ => self.unexpected("a number"),
        }
    }

    fn u32_value(&mut self) -> PResult<u32> {
        let at = self.here();
        match self.number()? {
            Number::Int(v) => u32::try_from(v).map_err(|_| ParseError {
                kind: ParseErrorKind::BadNumber,
                message: format!("{v} does not fit 32 bits"),
                pos: at,
            }),
            _ => Err(ParseError {
                kind: ParseErrorKind::BadNumber,
                message: "expected an integer".into(),
                pos: at,
            }),
        }
    }

    fn skip_comments(&mut self) {
        while matches!(self.peek(), Some(t) if t.tok == Tok::Comment) {
            self.pos += 1;
        }
    }

    fn warn(&mut self, pos: Pos, message: String) {
        if self.warnings.len() < limits::MAX_WARNINGS {
            self.warnings.push(Warning { message, pos });
        }
    }

    fn line_of(&self, t: Token) -> usize {
        t.line as usize
    }

    /// The tokens left on the line of the previous token, as written with single spaces; stops at
    /// a comment (`.loc`, `.file` and `.target` end at the end of their line).
    fn rest_of_line(&mut self, line: usize) -> String {
        let start = self.pos;
        while let Some(t) = self.peek() {
            if t.tok == Tok::Comment || self.line_of(t) != line {
                break;
            }
            self.pos += 1;
        }
        self.span_text(start, self.pos)
    }

    /// The text of tokens `a..b`, whitespace runs made single spaces and `//` comments left out
    /// (a kept comment would swallow what follows it when printed on one line).
    fn span_text(&self, a: usize, b: usize) -> String {
        let mut out = String::new();
        let mut k = a;
        while k < b {
            let Some(first) = self.toks.get(k) else { break };
            if first.tok == Tok::Comment {
                k += 1;
                continue;
            }
            let mut last = *first;
            while k + 1 < b {
                match self.toks.get(k + 1) {
                    Some(t) if t.tok != Tok::Comment => {
                        last = *t;
                        k += 1;
                    }
                    _ => break,
                }
            }
            k += 1;
            let raw = self
                .src
                .get(first.start as usize..last.end as usize)
                .unwrap_or("");
            // The common case (`.loc 1 42 7`): single spaces already.
            let plain =
                !raw.contains("  ") && !raw.bytes().any(|b| b.is_ascii_control() || !b.is_ascii());
            if plain {
                if !out.is_empty() {
                    out.push(' ');
                }
                out.push_str(raw);
                continue;
            }
            let mut space = !out.is_empty();
            for c in raw.chars() {
                if c.is_whitespace() {
                    space = true;
                } else {
                    if space && !out.is_empty() {
                        out.push(' ');
                    }
                    space = false;
                    out.push(c);
                }
            }
        }
        out
    }

    /// Tokens up to and including the next `;`, as text without the `;`.
    fn until_semicolon(&mut self) -> PResult<String> {
        let start = self.pos;
        loop {
            match self.peek() {
                None => return self.unexpected("`;`"),
                Some(t) if t.tok == Tok::Punct(b';') => {
                    let s = self.span_text(start, self.pos);
                    self.pos += 1;
                    return Ok(s);
                }
                Some(_) => self.pos += 1,
            }
        }
    }

    // ---- module ----------------------------------------------------------------------------------

    fn module(&mut self) -> PResult<Parsed> {
        let mut m = Module::new(Target::Sm80);
        m.address_size = None;
        let mut map = SourceMap::default();
        let mut saw_target = false;
        loop {
            self.skip_comments();
            let Some(t) = self.peek() else { break };
            let at = self.here();
            if t.tok != Tok::DotWord {
                return self.unexpected("a directive");
            }
            match self.text(t) {
                ".version" if m.version.is_some() => {
                    return self.error(ParseErrorKind::BadValue, "`.version` is given twice");
                }
                ".target" if saw_target => {
                    return self.error(ParseErrorKind::BadValue, "`.target` is given twice");
                }
                ".version" => {
                    self.pos += 1;
                    map.version = at;
                    let vt = self.peek();
                    let v = match vt {
                        Some(vt) if vt.tok == Tok::Number => {
                            self.pos += 1;
                            self.text(vt).parse::<PtxVersion>().ok()
                        }
                        _ => None,
                    };
                    match v {
                        Some(v) => m.version = Some(v),
                        None => {
                            return Err(ParseError {
                                kind: ParseErrorKind::BadValue,
                                message: "`.version` needs MAJOR.MINOR".into(),
                                pos: at,
                            });
                        }
                    }
                }
                ".target" => {
                    self.pos += 1;
                    map.target = at;
                    saw_target = true;
                    let mut names = Vec::new();
                    loop {
                        names.push(self.ident()?.to_string());
                        if !self.eat_punct(b',') {
                            break;
                        }
                    }
                    let mut first = true;
                    for n in names {
                        match n.parse::<Target>() {
                            Ok(t) if first => m.target = t,
                            _ if first && n.starts_with("sm_") => {
                                self.warn(
                                    at,
                                    format!(
                                        "target `{n}` is not one ptxkit models: target gating is not checked"
                                    ),
                                );
                                m.target_name = Some(n);
                            }
                            _ if first => {
                                return Err(ParseError {
                                    kind: ParseErrorKind::BadValue,
                                    message: format!("`{n}` is not a target"),
                                    pos: at,
                                });
                            }
                            _ => m.target_options.push(n),
                        }
                        first = false;
                    }
                }
                ".address_size" => {
                    self.pos += 1;
                    let n = self.u32_value()?;
                    if n != 32 && n != 64 {
                        return Err(ParseError {
                            kind: ParseErrorKind::BadValue,
                            message: format!(".address_size {n}: only 32 and 64 exist"),
                            pos: at,
                        });
                    }
                    m.address_size = Some(n);
                    map.address_size = Some(at);
                }
                ".file" => {
                    self.pos += 1;
                    let line = self.line_of(t);
                    let rest = self.rest_of_line(line);
                    m.layout.push(Item::Directive(format!(".file {rest}")));
                }
                ".section" => {
                    let start = t.start as usize;
                    self.pos += 1;
                    while !self.is_punct(b'{') {
                        if self.bump().is_none() {
                            return self.unexpected("`{`");
                        }
                    }
                    let mut depth = 0usize;
                    let end = loop {
                        match self.bump() {
                            None => return self.unexpected("`}`"),
                            Some(x) if x.tok == Tok::Punct(b'{') => depth += 1,
                            Some(x) if x.tok == Tok::Punct(b'}') => {
                                depth -= 1;
                                if depth == 0 {
                                    break x.end as usize;
                                }
                            }
                            Some(_) => {}
                        }
                    };
                    let raw = self.src.get(start..end).unwrap_or("").to_string();
                    m.layout.push(Item::Directive(raw));
                }
                // Kept as written, up to the `;`.
                ".pragma" | ".alias" => {
                    let start = self.pos;
                    self.pos += 1;
                    self.until_semicolon()?;
                    let s = self.span_text(start, self.pos.saturating_sub(1));
                    m.layout.push(Item::Directive(format!("{s};")));
                }
                _ => {
                    let mut linkage = None;
                    while let Some(l) = self.peek().and_then(|t| linkage_of(self.text(t))) {
                        linkage = Some(l);
                        self.pos += 1;
                    }
                    if self.is_word(".entry") || self.is_word(".func") {
                        let (f, decl, spans) = self.function(m.target, linkage)?;
                        m.layout.push(Item::Function(m.functions.len(), decl));
                        m.functions.push(f);
                        map.functions.push(spans);
                    } else if self
                        .peek()
                        .is_some_and(|t| space_of(self.text(t)).is_some())
                    {
                        let v = self.variable(linkage)?;
                        m.layout.push(Item::Variable(m.variables.len()));
                        m.variables.push(v);
                        map.variables.push(at);
                    } else {
                        return self.error(
                            ParseErrorKind::UnsupportedDirective,
                            format!("`{}` is not a module directive ptxkit reads", self.shown(t)),
                        );
                    }
                }
            }
        }
        if m.version.is_none() {
            return self.error(
                ParseErrorKind::UnexpectedEof,
                "the module has no `.version` (PTX ISA 11.1.1: every module starts with one)",
            );
        }
        if !saw_target {
            return self.error(ParseErrorKind::UnexpectedEof, "the module has no `.target`");
        }
        for f in &mut m.functions {
            f.target = m.target;
            f.required_ptx = (m.target.min_ptx(), format!("target {}", m.target));
        }
        Ok(Parsed {
            module: m,
            warnings: std::mem::take(&mut self.warnings),
            source_map: map,
        })
    }

    // ---- variables ---------------------------------------------------------------------------------

    /// `space [.align N] [.vN] .type name[dims] [= init];` (after any linkage directive).
    fn variable(&mut self, linkage: Option<Linkage>) -> PResult<Variable> {
        let mut space = None;
        let mut align = None;
        let mut vector = None;
        let mut elem = None;
        let mut opaque = None;
        while let Some(w) = self.peek_dot_word() {
            let twice = |x: bool| -> PResult<()> {
                if x {
                    self.error(
                        ParseErrorKind::UnexpectedToken,
                        format!(
                            "`{w}`: a variable has one state space, alignment, vector and type"
                        ),
                    )
                } else {
                    Ok(())
                }
            };
            if let Some(s) = space_of(w) {
                twice(space.is_some())?;
                if s == StateSpace::Param {
                    return self.error(
                        ParseErrorKind::UnsupportedDirective,
                        "a `.param` variable is declared only as a parameter or in a call scope",
                    );
                }
                space = Some(s);
                self.pos += 1;
            } else if w == ".align" {
                twice(align.is_some())?;
                self.pos += 1;
                let a = self.u32_value()?;
                if !a.is_power_of_two() {
                    return self.error(
                        ParseErrorKind::BadValue,
                        format!(".align {a} is not a power of two"),
                    );
                }
                align = Some(a);
            } else if let Some(v) = vector_of(w) {
                twice(vector.is_some())?;
                vector = Some(v);
                self.pos += 1;
            } else if let Ok(ty) = w.parse::<ScalarType>() {
                twice(elem.is_some())?;
                elem = Some(ty);
                self.pos += 1;
            } else if let Some(o) = Opaque::from_directive(w) {
                // PTX ISA 5.3: a texture, sampler or surface handle, 64 bits.
                twice(elem.is_some())?;
                elem = Some(ScalarType::B64);
                opaque = Some(o);
                self.pos += 1;
            } else {
                return self.error(
                    ParseErrorKind::UnsupportedDirective,
                    format!("`{w}` in a variable declaration is not read by ptxkit"),
                );
            }
        }
        let (Some(space), Some(elem)) = (space, elem) else {
            return self.unexpected("a state space and a type");
        };
        let name = self.ident()?.to_string();
        let mut dims = Vec::new();
        while self.eat_punct(b'[') {
            if self.eat_punct(b']') {
                dims.push(None);
            } else {
                dims.push(Some(self.u32_value()?));
                self.expect_punct(b']')?;
            }
            if dims.len() > limits::MAX_OPERAND_DEPTH {
                return self.error(
                    ParseErrorKind::LimitExceeded,
                    "too many array dimensions (limits::MAX_OPERAND_DEPTH)",
                );
            }
        }
        let init = if self.eat_punct(b'=') {
            let mut count = 0usize;
            Some(self.init(0, &mut count)?)
        } else {
            None
        };
        self.expect_punct(b';')?;
        let lanes = vector.map_or(1u64, |v| v.len() as u64);
        let mut bytes = Some(u64::from(elem.bytes()) * lanes);
        for d in &dims {
            bytes = match (bytes, d) {
                (Some(b), Some(n)) => Some(b.saturating_mul(u64::from(*n))),
                _ => None,
            };
        }
        let bytes = match bytes {
            Some(b) => Some(u32::try_from(b).map_err(|_| ParseError {
                kind: ParseErrorKind::LimitExceeded,
                message: format!("`{name}` is larger than 4 GiB"),
                pos: self.here(),
            })?),
            None => None,
        };
        Ok(Variable {
            name,
            space,
            align: align.unwrap_or_else(|| elem.bytes() * lanes as u32),
            bytes,
            elem,
            vector,
            dims,
            linkage,
            init,
            opaque,
        })
    }

    fn init(&mut self, depth: usize, count: &mut usize) -> PResult<Init> {
        *count += 1;
        if depth > limits::MAX_OPERAND_DEPTH || *count > limits::MAX_INIT_ELEMENTS {
            return self.error(
                ParseErrorKind::LimitExceeded,
                "initializer too deep or too long (limits::MAX_OPERAND_DEPTH, MAX_INIT_ELEMENTS)",
            );
        }
        if self.eat_punct(b'{') {
            let mut v = Vec::new();
            if !self.is_punct(b'}') {
                loop {
                    v.push(self.init(depth + 1, count)?);
                    if !self.eat_punct(b',') {
                        break;
                    }
                }
            }
            self.expect_punct(b'}')?;
            return Ok(Init::List(v));
        }
        let negative = self.eat_punct(b'-');
        match self.peek() {
            Some(t) if t.tok == Tok::Number => {
                let n = self.number()?;
                match literal::imm(n, negative) {
                    Some(i) => Ok(Init::Imm(i)),
                    None => {
                        self.error(ParseErrorKind::BadNumber, "the number does not fit 64 bits")
                    }
                }
            }
            Some(t) if t.tok == Tok::Ident && !negative => {
                let name = self.ident()?;
                if name == "generic" && self.eat_punct(b'(') {
                    let inner = self.ident()?.to_string();
                    self.expect_punct(b')')?;
                    Ok(Init::Generic(inner))
                } else {
                    Ok(Init::Symbol(name.to_string()))
                }
            }
            _ => self.unexpected("an initializer"),
        }
    }

    // ---- functions ---------------------------------------------------------------------------------

    fn function(
        &mut self,
        target: Target,
        linkage: Option<Linkage>,
    ) -> PResult<(Function, FunctionDecl, FunctionSpans)> {
        let header = self.here();
        let kind = if self.is_word(".entry") {
            FunctionKind::Entry
        } else {
            FunctionKind::Func
        };
        self.pos += 1;
        self.skip_comments();
        let mut ret = None;
        if self.is_punct(b'(') {
            self.pos += 1;
            self.skip_comments();
            ret = Some(self.param(false)?);
            self.skip_comments();
            self.expect_punct(b')')?;
        }
        self.skip_comments();
        let name = self.ident()?.to_string();
        let mut params = Vec::new();
        self.skip_comments();
        if self.eat_punct(b'(') {
            self.skip_comments();
            if !self.eat_punct(b')') {
                loop {
                    self.skip_comments();
                    params.push(self.param(kind == FunctionKind::Entry)?);
                    if params.len() > limits::MAX_OPERANDS {
                        return self.error(
                            ParseErrorKind::LimitExceeded,
                            "too many parameters (limits::MAX_OPERANDS)",
                        );
                    }
                    self.skip_comments();
                    if !self.eat_punct(b',') {
                        break;
                    }
                }
                self.skip_comments();
                self.expect_punct(b')')?;
            }
        }
        let mut decl = FunctionDecl {
            linkage,
            defined: true,
            noreturn: false,
        };
        let mut directives = Vec::new();
        // A prototype may end without `;` where the next module-scope item or the end of the
        // text follows (nvcc's `.extern .func` declarations; ptxas 13.0 reads them).
        let mut bodiless = false;
        loop {
            self.skip_comments();
            let Some(t) = self.peek() else {
                bodiless = true;
                break;
            };
            if t.tok != Tok::DotWord {
                break;
            }
            let w = self.text(t);
            if MODULE_SCOPE.contains(&w) {
                bodiless = true;
                break;
            }
            self.pos += 1;
            let d = match w {
                ".noreturn" => {
                    decl.noreturn = true;
                    continue;
                }
                ".maxntid" => Directive::MaxNtid(self.dims3()?),
                ".reqntid" => Directive::ReqNtid(self.dims3()?),
                ".reqnctapercluster" => Directive::ReqNctaPerCluster(self.dims3()?),
                ".minnctapersm" => Directive::MinNctaPerSm(self.u32_value()?),
                ".maxnreg" => Directive::MaxNreg(self.u32_value()?),
                ".maxclusterrank" => Directive::MaxClusterRank(self.u32_value()?),
                ".explicitcluster" => Directive::ExplicitCluster,
                _ => {
                    self.pos -= 1;
                    return self.error(
                        ParseErrorKind::UnsupportedDirective,
                        format!("`{w}` is not a function directive ptxkit reads"),
                    );
                }
            };
            if directives.len() >= limits::MAX_MODIFIERS {
                return self.error(ParseErrorKind::LimitExceeded, "too many directives");
            }
            directives.push(d);
        }
        let mut spans = FunctionSpans {
            header,
            ..FunctionSpans::default()
        };
        let mut f = Function {
            name,
            kind,
            params,
            ret,
            directives,
            reg_counts: [0; 9],
            body: Vec::new(),
            target,
            required_ptx: (target.min_ptx(), String::new()),
            arena: InstrArena::default(),
        };
        if bodiless || self.eat_punct(b';') {
            decl.defined = false;
            return Ok((f, decl, spans));
        }
        self.expect_punct(b'{')?;
        if let Some(b) = self.bodies.pop() {
            f.body = b.body;
            spans.body = b.spans;
            f.arena.words = b.words;
            f.arena.operands = b.operands;
        }
        // At most how many statements the body holds (the lexer counted them, issue 33): reserved
        // up front so that a large function's statements are not moved as its body grows. Its
        // words and operands are not reserved so: measured on the 1.3 MB CUTLASS module, blocks
        // that large are mapped and unmapped for each module, four times the page faults of a
        // `check`. Bounded, so that text of nothing but `;` cannot reserve more than it could fill.
        let statements = self.blocks.statements_in(self.pos - 1).min(1 << 16);
        f.body.reserve(statements);
        spans.body.reserve(statements);
        self.body(&mut f, &mut spans)?;
        Ok((f, decl, spans))
    }

    fn dims3(&mut self) -> PResult<[u32; 3]> {
        let mut v = [1u32; 3];
        v[0] = self.u32_value()?;
        for slot in v.iter_mut().skip(1) {
            if !self.eat_punct(b',') {
                break;
            }
            *slot = self.u32_value()?;
        }
        Ok(v)
    }

    /// `.param [attributes] name[[N]]`.
    fn param(&mut self, kernel: bool) -> PResult<Param> {
        // PTX ISA 11.1.5: a device function's parameters may be registers, `.reg .b32 a`.
        if !kernel && self.is_word(".reg") {
            self.pos += 1;
            let ty = match self.peek_dot_word().map(str::parse::<ScalarType>) {
                Some(Ok(t)) => t,
                _ => return self.unexpected("a register type"),
            };
            self.pos += 1;
            let name = self.ident()?.to_string();
            return Ok(Param {
                name,
                kind: ParamKind::Reg(ty),
            });
        }
        if !self.is_word(".param") {
            return self.unexpected("`.param`");
        }
        self.pos += 1;
        let mut ty = None;
        let mut ptr = false;
        let mut space = StateSpace::Generic;
        let mut align = None;
        while let Some(w) = self.peek_dot_word() {
            self.pos += 1;
            if w == ".ptr" {
                if !kernel {
                    self.pos -= 1;
                    return self.error(
                        ParseErrorKind::UnsupportedDirective,
                        "`.ptr` applies to kernel parameters only (PTX ISA 5.1.6.2)",
                    );
                }
                ptr = true;
            } else if w == ".align" {
                align = Some(self.u32_value()?);
            } else if let Some(s) = space_of(w).filter(|s| *s != StateSpace::Param) {
                space = s;
            } else if let Ok(t) = w.parse::<ScalarType>() {
                ty = Some(t);
            } else if let Some(o) = Opaque::from_directive(w) {
                // PTX ISA 5.3: `.param .texref t`, a handle passed to a kernel.
                let name = self.ident()?.to_string();
                return Ok(Param {
                    name,
                    kind: ParamKind::Opaque(o),
                });
            } else {
                self.pos -= 1;
                return self.error(
                    ParseErrorKind::UnsupportedDirective,
                    format!("`{w}` in a parameter is not read by ptxkit"),
                );
            }
        }
        let Some(ty) = ty else {
            return self.unexpected("a parameter type");
        };
        let name = self.ident()?.to_string();
        let kind = if self.eat_punct(b'[') {
            let size = self.u32_value()?;
            self.expect_punct(b']')?;
            if ty != ScalarType::B8 {
                return self.error(
                    ParseErrorKind::UnsupportedDirective,
                    "ptxkit reads array parameters of `.b8` only",
                );
            }
            ParamKind::Bytes {
                align: align.unwrap_or(1),
                size,
            }
        } else if ptr {
            ParamKind::Ptr { space, align }
        } else {
            ParamKind::Scalar(ty)
        };
        Ok(Param { name, kind })
    }

    // ---- bodies ------------------------------------------------------------------------------------

    fn body(&mut self, f: &mut Function, spans: &mut FunctionSpans) -> PResult<()> {
        let mut depth = 0usize;
        // The line of the `;` that ended the last instruction, for trailing comments.
        let mut last_instr_line = None;
        loop {
            let Some(t) = self.peek() else {
                return self.unexpected("`}`");
            };
            let at = self.here();
            let text = self.text(t);
            match t.tok {
                Tok::Comment => {
                    self.pos += 1;
                    let c = text.strip_prefix("//").unwrap_or(text);
                    let c = c.strip_prefix(' ').unwrap_or(c).trim_end();
                    if last_instr_line == Some(self.line_of(t)) {
                        if let Some(Statement::Instr(i)) = f.body.last_mut() {
                            if i.comment().is_none() {
                                i.set_comment(c.into());
                                last_instr_line = None;
                                continue;
                            }
                        }
                    }
                    self.push(f, spans, at, || Statement::Comment(comment(c)));
                }
                Tok::Punct(b'{') => {
                    self.pos += 1;
                    depth += 1;
                    if depth > limits::MAX_BLOCK_DEPTH {
                        return self.error(
                            ParseErrorKind::LimitExceeded,
                            "blocks nested too deeply (limits::MAX_BLOCK_DEPTH)",
                        );
                    }
                    self.push(f, spans, at, || Statement::Open);
                }
                Tok::Punct(b'}') => {
                    self.pos += 1;
                    if depth == 0 {
                        return Ok(());
                    }
                    depth -= 1;
                    self.push(f, spans, at, || Statement::Close);
                }
                Tok::DotWord => match text {
                    ".reg" => {
                        self.pos += 1;
                        let d = self.reg_decl()?;
                        if let Some(class) = self.absorbable(f, &d, depth) {
                            f.reg_counts[class as usize] = d.names[0].count.unwrap_or(0);
                            spans.reg_blocks[class as usize] = Some(at);
                        } else {
                            self.push(f, spans, at, || Statement::RegDecl(d));
                        }
                    }
                    ".param" => {
                        let p = self.param(false)?;
                        self.expect_punct(b';')?;
                        self.push(f, spans, at, || Statement::LocalParam(Box::new(p)));
                    }
                    ".loc" => {
                        self.pos += 1;
                        let rest = self.rest_of_line(self.line_of(t));
                        self.push(f, spans, at, || Statement::Loc(rest));
                    }
                    ".pragma" => {
                        self.pos += 1;
                        let mut v = Vec::new();
                        loop {
                            match self.peek() {
                                Some(s) if s.tok == Tok::Str => {
                                    self.pos += 1;
                                    let raw = self.text(s);
                                    v.push(raw[1..raw.len() - 1].to_string());
                                }
                                _ => return self.unexpected("a string"),
                            }
                            if !self.eat_punct(b',') {
                                break;
                            }
                        }
                        self.expect_punct(b';')?;
                        self.push(f, spans, at, || Statement::Pragma(v));
                    }
                    w if space_of(w).is_some() => {
                        let v = self.variable(None)?;
                        self.push(f, spans, at, || Statement::Var(Box::new(v)));
                    }
                    // PTX ISA 11: a body holds variables, `.loc`, `.pragma` and labelled
                    // `.callprototype`/`.branchtargets` lists; any other directive there is
                    // refused (ptxas 13.0: "Parsing error near '.abi_preserve'").
                    w => {
                        return self.error(
                            ParseErrorKind::UnsupportedDirective,
                            format!("`{w}` is no directive a function body takes"),
                        );
                    }
                },
                Tok::Ident if matches!(self.peek_at(1), Some(x) if x.tok == Tok::Punct(b':')) => {
                    if matches!(self.peek_at(2), Some(x) if self.text(x) == ".callprototype") {
                        let s = self.until_semicolon()?;
                        self.push(f, spans, at, || Statement::Other(s));
                        continue;
                    }
                    // `name: .branchtargets L0, L1;` (PTX ISA 11.3.1).
                    if matches!(self.peek_at(2), Some(x) if self.text(x) == ".branchtargets") {
                        self.pos += 3;
                        let labels =
                            self.comma_list(b';', "labels in one `.branchtargets`", |p| {
                                let name = p.ident()?;
                                Ok(match canonical_label(name) {
                                    Some(l) => Operand::Label(l),
                                    None => Operand::Symbol(Cow::Owned(name.to_string())),
                                })
                            })?;
                        let b = BranchTargets {
                            name: text.to_string(),
                            labels,
                        };
                        self.push(f, spans, at, || Statement::BranchTargets(Box::new(b)));
                        continue;
                    }
                    self.pos += 2;
                    let s = match canonical_label(text) {
                        Some(l) => Statement::Label(l),
                        None => Statement::NamedLabel(text.to_string()),
                    };
                    self.push(f, spans, at, || s);
                }
                Tok::Ident | Tok::Punct(b'@') => {
                    // Its words and operands are read into the function's lists (issue 33).
                    self.instruction(at, f, spans)?;
                    last_instr_line = self
                        .toks
                        .get(self.pos.wrapping_sub(1))
                        .map(|x| self.line_of(*x));
                }
                _ => return self.unexpected("a statement"),
            }
        }
    }

    /// Appends the statement `make` gives, written at `at`. Not inlined, and `make` builds the
    /// statement here: inlined in [`Parser::body`], every kind of statement was built in one
    /// place on the stack, a few bytes at a time, and copied from there in wider reads that
    /// wait for those writes (issue 33: the copies were a sixth of `body`'s time on the 1.3 MB
    /// CUTLASS module).
    #[inline(never)]
    fn push(
        &mut self,
        f: &mut Function,
        spans: &mut FunctionSpans,
        at: Pos,
        make: impl FnOnce() -> Statement,
    ) {
        push_built(&mut f.body, make);
        spans.body.push(at);
    }

    /// The class whose `reg_counts` block a top-level `.reg .T %x<N>;` is (the builder's shape).
    fn absorbable(&self, f: &Function, d: &RegDecl, depth: usize) -> Option<RegClass> {
        if depth != 0 || d.vector.is_some() || d.names.len() != 1 {
            return None;
        }
        let n = &d.names[0];
        n.count?;
        let class = RegClass::from_prefix(n.name.strip_prefix('%')?)?;
        (class.decl_type() == d.ty && f.reg_counts[class as usize] == 0).then_some(class)
    }

    /// `.reg [.vN] .T name[<N>], ...;` after `.reg`.
    fn reg_decl(&mut self) -> PResult<RegDecl> {
        let mut vector = None;
        let mut ty = None;
        while let Some(w) = self.peek_dot_word() {
            if let Some(v) = vector_of(w) {
                vector = Some(v);
            } else if let Ok(x) = w.parse::<ScalarType>() {
                ty = Some(x);
            } else {
                return self.error(
                    ParseErrorKind::BadValue,
                    format!("`{w}` is not a register type"),
                );
            }
            self.pos += 1;
        }
        let Some(ty) = ty else {
            return self.unexpected("a register type");
        };
        let names = self.comma_list(b';', "names in one `.reg`", |p| {
            let name = p.ident()?;
            let count = if p.eat_punct(b'<') {
                let n = p.u32_value()?;
                if n > limits::MAX_PARAMETERIZED_REGS {
                    return p.error(
                        ParseErrorKind::LimitExceeded,
                        format!("`{name}<{n}>` exceeds limits::MAX_PARAMETERIZED_REGS"),
                    );
                }
                p.expect_punct(b'>')?;
                Some(n)
            } else {
                None
            };
            Ok(RegName {
                name: p.name(name),
                count,
            })
        })?;
        Ok(RegDecl { ty, vector, names })
    }

    // ---- instructions -------------------------------------------------------------------------------

    /// Reads an instruction written at `at` and appends it to `f`'s body: its words and operands
    /// into the function's lists. Not inlined, and the statement is appended here, for the
    /// reason [`Parser::push`] gives.
    #[inline(never)]
    fn instruction(&mut self, at: Pos, f: &mut Function, spans: &mut FunctionSpans) -> PResult<()> {
        let arena = &mut f.arena;
        let mut guard = None;
        let mut named_guard = None;
        if self.eat_punct(b'@') {
            let negated = self.eat_punct(b'!');
            let name = self.ident()?;
            match canonical_reg(name) {
                Some(r) => guard = Some(Guard { pred: r, negated }),
                None => {
                    named_guard = Some(NamedGuard {
                        name: self.name(name),
                        negated,
                    })
                }
            }
        }
        let Some(t) = self.peek().filter(|t| t.tok == Tok::Ident) else {
            return self.unexpected("an instruction");
        };
        self.pos += 1;
        let words = arena.words.len();
        let operands = arena.operands.len();
        // The mnemonic and its modifiers are written together: `ld.shared.u32`.
        let first = self.pos;
        let mut end = t.end;
        while let Some(m) = self.peek() {
            if m.tok != Tok::DotWord || m.start != end {
                break;
            }
            self.pos += 1;
            end = m.end;
            // The mnemonic and the modifiers.
            if self.pos - first + 1 > limits::MAX_MODIFIERS + 1 {
                return self.error(
                    ParseErrorKind::LimitExceeded,
                    "too many modifiers (limits::MAX_MODIFIERS)",
                );
            }
        }
        let opcode = self.src.get(t.start as usize..end as usize).unwrap_or("");
        let number = self.opcode_words(opcode, t, first, &mut arena.words);
        if !self.eat_punct(b';') {
            // A register standing alone, most operands, is built where the list keeps it; the
            // rest through `operand`, whose result comes back through the stack (issue 33).
            self.comma_list_into(b';', "operands", &mut arena.operands, |p, out| {
                p.operand_into(0, out)
            })?;
        }
        let mut i = arena.read(guard, named_guard, words, operands);
        let view = arena.get(&i);
        // Instructions of a family the table covers are the validator's to judge (errors);
        // those of none are kept as written.
        let (form, unknown) = *self
            .opcodes
            .entry((number, view.operands.len()))
            .or_insert_with(|| resolve::opcode_answer(&view));
        let form = form.map(|f| resolve::refine(f, &view));
        if unknown {
            let op = view.opcode();
            self.warn(
                at,
                format!("`{op}` is not a form in ptxkit's table: kept as written"),
            );
        }
        i.set_resolved_form(form);
        push_built(&mut f.body, || Statement::Instr(i));
        spans.body.push(at);
        Ok(())
    }

    /// The elements of a vector or call list, after its opening brace, to `close`. Read into
    /// the parser's scratch list and moved out in one allocation of the list's size: a wgmma's
    /// 128-register vector grew by doubling, six reallocations and copies of up to 5 KB each
    /// (issue 33: the 2,184 wgmma statements of the 1.3 MB CUTLASS module, most of its bytes).
    fn list(&mut self, close: u8, depth: usize) -> PResult<Vec<Operand>> {
        if self.eat_punct(close) {
            return Ok(Vec::new());
        }
        // A list inside this one finds the scratch list taken and reads into one of its own.
        let mut scratch = std::mem::take(&mut self.scratch);
        scratch.clear();
        let read = self.comma_list_into(close, "elements", &mut scratch, |p, out| {
            p.operand_into(depth + 1, out)
        });
        // Moved into a list of their number (the scratch list keeps its room for the next).
        let v = read.map(|()| {
            let mut v = Vec::with_capacity(scratch.len());
            v.append(&mut scratch);
            v
        });
        self.scratch = scratch;
        v
    }

    /// Reads `item{, item}` and then `close`: the lists of PTX ISA 4.3 (an instruction's operands,
    /// a `.reg` declaration's names, a vector or call list), at most `limits::MAX_OPERANDS` items;
    /// `what` names the items in the error.
    fn comma_list<T>(
        &mut self,
        close: u8,
        what: &str,
        mut item: impl FnMut(&mut Self) -> PResult<T>,
    ) -> PResult<Vec<T>> {
        let mut v = Vec::new();
        self.comma_list_into(close, what, &mut v, |p, out| {
            out.push(item(p)?);
            Ok(())
        })?;
        Ok(v)
    }

    /// [`Parser::comma_list`] into `out`, each item pushed by `item` itself: an instruction's
    /// operands are read into the function's list, and a register standing alone is built
    /// where the list keeps it rather than returned through the stack and copied (issue 33).
    fn comma_list_into<T>(
        &mut self,
        close: u8,
        what: &str,
        out: &mut Vec<T>,
        mut item: impl FnMut(&mut Self, &mut Vec<T>) -> PResult<()>,
    ) -> PResult<()> {
        let mut n = 0usize;
        loop {
            item(self, out)?;
            n += 1;
            if n > limits::MAX_OPERANDS {
                return self.error(
                    ParseErrorKind::LimitExceeded,
                    format!("too many {what} (limits::MAX_OPERANDS)"),
                );
            }
            if !self.eat_punct(b',') {
                break;
            }
        }
        self.expect_punct(close)?;
        Ok(())
    }

    /// Refuses nesting past `limits::MAX_OPERAND_DEPTH` (operands in braces, expressions in
    /// parentheses): what `what` names is nested too deeply.
    #[inline]
    fn nesting(&self, depth: usize, what: &str) -> PResult<()> {
        if depth > limits::MAX_OPERAND_DEPTH {
            return self.too_deep(what);
        }
        Ok(())
    }

    /// [`Parser::nesting`]'s error, apart: the check is inlined for every operand (issue 33).
    #[cold]
    #[inline(never)]
    fn too_deep(&self, what: &str) -> PResult<()> {
        self.error(
            ParseErrorKind::LimitExceeded,
            format!("{what} nested too deeply (limits::MAX_OPERAND_DEPTH)"),
        )
    }

    /// Reads an operand onto `out`. A register standing alone, most operands, is built where
    /// the list keeps it; the rest through [`Parser::operand`], whose result comes back through
    /// the stack (issue 33).
    #[inline]
    fn operand_into(&mut self, depth: usize, out: &mut Vec<Operand>) -> PResult<()> {
        match self.register_alone() {
            Some(r) => {
                self.nesting(depth, "operands")?;
                self.pos += 1;
                push_built(out, || Operand::Reg(r));
            }
            None => out.push(self.operand(depth)?),
        }
        Ok(())
    }

    fn operand(&mut self, depth: usize) -> PResult<Operand> {
        self.nesting(depth, "operands")?;
        let Some(t) = self.peek() else {
            return self.unexpected("an operand");
        };
        match t.tok {
            Tok::Punct(b'{') => {
                self.pos += 1;
                let v = self.list(b'}', depth)?;
                if v.is_empty() {
                    return self.unexpected("a vector element");
                }
                Ok(Operand::Vector(v))
            }
            // `((128 >> 4) << 16)`: a constant expression (PTX ISA 4.6.1), else a call's list.
            Tok::Punct(b'(') => {
                let start = self.pos;
                // `(1)` stays a one-element list (a call's arguments).
                if let Ok(v) = self.const_expr(depth) {
                    if self.at_operand_end() && self.pos - start > 3 {
                        return Ok(Operand::Imm(expr_imm(v)));
                    }
                }
                self.pos = start;
                self.pos += 1;
                Ok(Operand::List(self.list(b')', depth)?))
            }
            Tok::Punct(b'[') => {
                self.pos += 1;
                self.address(depth)
            }
            Tok::Punct(b'!') => {
                self.pos += 1;
                let name = self.ident()?;
                Ok(match canonical_reg(name) {
                    Some(r) => Operand::NotPred(r),
                    None => Operand::NotSymbol(self.name(name)),
                })
            }
            // `-%r1`, `-%r1.b2`: a negated video source (PTX ISA 9.7.18.1.3).
            Tok::Punct(b'-') if matches!(self.peek_at(1), Some(x) if x.tok == Tok::Ident) => {
                self.pos += 1;
                Ok(match self.named_operand()? {
                    Operand::Video { value, select, .. } => Operand::Video {
                        negated: true,
                        value,
                        select,
                    },
                    value => Operand::Video {
                        negated: true,
                        value: Box::new(value),
                        select: None,
                    },
                })
            }
            // `288*2`, `-(4 << 2)`: a constant expression (PTX ISA 4.6.1) where an integer is.
            Tok::Punct(b'-' | b'~') | Tok::Number if self.starts_expression() => {
                let v = self.const_expr(depth)?;
                Ok(Operand::Imm(expr_imm(v)))
            }
            Tok::Punct(b'-') | Tok::Number => {
                let negative = self.eat_punct(b'-');
                let n = self.number()?;
                match literal::imm(n, negative) {
                    Some(i) => Ok(Operand::Imm(i)),
                    None => {
                        self.error(ParseErrorKind::BadNumber, "the number does not fit 64 bits")
                    }
                }
            }
            Tok::Ident => {
                if let Some(r) = self.register_alone() {
                    self.pos += 1;
                    return Ok(Operand::Reg(r));
                }
                let first = self.named_operand()?;
                if !self.eat_punct(b'|') {
                    return Ok(first);
                }
                let second = self.named_operand()?;
                Ok(match (first, second) {
                    (Operand::Reg(a), Operand::Reg(b)) => Operand::Pair(a, b),
                    (Operand::Sink, Operand::Reg(b)) => Operand::SinkPair(b),
                    (a, b) => Operand::NamedPair(Box::new(a), Box::new(b)),
                })
            }
            _ => self.unexpected("an operand"),
        }
    }

    /// The common operand (issue 33): a numbered register standing alone (`%r12,`), with no
    /// selector, element or pair after it, is what [`Parser::named_operand`] would read. Not
    /// taken.
    #[inline]
    fn register_alone(&self) -> Option<RegRef> {
        let t = self.peek().filter(|t| t.tok == Tok::Ident)?;
        let alone = matches!(
            self.peek_at(1),
            Some(Token {
                tok: Tok::Punct(b',' | b';' | b'}' | b')' | b']'),
                ..
            })
        );
        alone.then(|| canonical_reg(self.text(t))).flatten()
    }

    /// A register, special register, label or symbol, or a register with a video selector
    /// (`%r1.b0`, PTX ISA 9.7.18; ptxas 13.0 also takes it written after a space, `%r1 .b0`).
    fn named_operand(&mut self) -> PResult<Operand> {
        let o = self.plain_named_operand()?;
        let (base, select) = match &o {
            Operand::Symbol(s) => match s.split_once('.') {
                Some((b, sel)) if video_selector(sel) => (b.to_string(), sel.to_string()),
                _ => return Ok(o),
            },
            Operand::Reg(_) => match self.peek() {
                Some(m) if m.tok == Tok::DotWord && video_selector(&self.text(m)[1..]) => {
                    self.pos += 1;
                    (o.to_string(), self.text(m)[1..].to_string())
                }
                _ => return Ok(o),
            },
            _ => return Ok(o),
        };
        let value = match canonical_reg(&base) {
            Some(r) => Operand::Reg(r),
            None => Operand::Symbol(Cow::Owned(base)),
        };
        Ok(Operand::Video {
            negated: false,
            value: Box::new(value),
            select: Some(Cow::Owned(select)),
        })
    }

    fn plain_named_operand(&mut self) -> PResult<Operand> {
        let o = self.name_operand()?;
        // PTX ISA 6.4.2 "Arrays as Operands": `a[2]`, the address of an element.
        if let Operand::Symbol(array) = &o {
            let adjacent = matches!(
                (self.toks.get(self.pos.wrapping_sub(1)), self.peek()),
                (Some(a), Some(b)) if a.end == b.start && b.tok == Tok::Punct(b'[')
            );
            if adjacent && !array.starts_with('%') {
                self.pos += 1;
                let index = self.const_expr(0)?;
                self.expect_punct(b']')?;
                return Ok(Operand::Element {
                    array: array.clone(),
                    index,
                });
            }
        }
        Ok(o)
    }

    fn name_operand(&mut self) -> PResult<Operand> {
        let Some(t) = self.peek().filter(|t| t.tok == Tok::Ident) else {
            return self.unexpected("a name");
        };
        self.pos += 1;
        let name = self.text(t);
        if name == "_" {
            return Ok(Operand::Sink);
        }
        // PTX ISA 4.4 "Identifiers": `WARP_SZ`, the one predefined constant (the warp size, 32;
        // nvcc writes it, `mov.u32 %r1, WARP_SZ;`). Read as its value.
        if name == "WARP_SZ" {
            return Ok(Operand::Imm(crate::instr::Imm::UInt(32)));
        }
        let suffixed = matches!(self.peek(), Some(m) if m.tok == Tok::DotWord && m.start == t.end);
        if !suffixed {
            // The common case: a numbered register or label, no allocation beyond the model's.
            if let Some(r) = canonical_reg(name) {
                return Ok(Operand::Reg(r));
            }
            if let Some(l) = canonical_label(name) {
                return Ok(Operand::Label(l));
            }
        }
        // `%tid.x`: a component written straight after the name (adjacent tokens, so the name
        // is one slice of the text).
        let mut end = t.end;
        while let Some(m) = self.peek() {
            if m.tok != Tok::DotWord || m.start != end || end - t.start > 256 {
                break;
            }
            self.pos += 1;
            end = m.end;
        }
        let full = self.src.get(t.start as usize..end as usize).unwrap_or(name);
        if full.starts_with('%') {
            if let Some(s) = sreg_named(full) {
                return Ok(Operand::Sreg(s));
            }
        }
        Ok(Operand::Symbol(self.name(full)))
    }

    /// After `[`: `base`, `base+imm`, `imm`, or a tensor map with coordinates `tmap, {c...}`.
    fn address(&mut self, depth: usize) -> PResult<Operand> {
        let base = match self.peek() {
            Some(t) if t.tok == Tok::Ident => {
                self.pos += 1;
                let name = self.text(t);
                match canonical_reg(name) {
                    Some(r) => AddrBase::Reg(r),
                    None => AddrBase::Symbol(name.to_string()),
                }
            }
            Some(t) if t.tok == Tok::Number => match self.number()? {
                Number::Int(v) => AddrBase::Absolute(v),
                _ => return self.unexpected("an integer address"),
            },
            _ => return self.unexpected("an address"),
        };
        if self.eat_punct(b',') {
            if !self.is_punct(b'{') {
                return self.unexpected("`{` (tensor coordinates)");
            }
            let Operand::Vector(coords) = self.operand(depth + 1)? else {
                return self.unexpected("tensor coordinates");
            };
            self.expect_punct(b']')?;
            return Ok(Operand::Tensor {
                map: Box::new(base),
                coords,
            });
        }
        let mut offset = 0i64;
        let written = self.is_punct(b'+') || self.is_punct(b'-');
        if written {
            let mut negative = self.eat_punct(b'-');
            if !negative {
                self.pos += 1;
                negative = self.eat_punct(b'-');
            }
            if matches!(base, AddrBase::Absolute(_)) {
                return self.unexpected("`]` (an absolute address takes no offset)");
            }
            // `[%r+288*2]`: the offset is a constant expression (PTX ISA 4.6.1, 6.4.1).
            let v = self.const_expr(depth)?;
            offset = if negative { v.wrapping_neg() } else { v };
        }
        self.expect_punct(b']')?;
        Ok(Operand::Addr(Address {
            base,
            offset,
            plus_zero: written && offset == 0,
        }))
    }

    // ---- constant expressions (PTX ISA 4.6.1 "Constant Expressions") --------------------------

    /// Whether the operand here is an integer constant expression rather than a plain literal: an
    /// integer followed by a binary operator, or a `-`/`~` before a `(` or before such an integer.
    fn starts_expression(&self) -> bool {
        let mut k = 0;
        while let Some(Token {
            tok: Tok::Punct(b'-' | b'~'),
            ..
        }) = self.peek_at(k)
        {
            k += 1;
        }
        match self.peek_at(k) {
            Some(t) if t.tok == Tok::Punct(b'(') => k > 0,
            Some(t) if t.tok == Tok::Number => {
                matches!(literal::number(self.text(t)), Some(Number::Int(_)))
                    && self.binary_operator_at(k + 1).is_some()
            }
            _ => false,
        }
    }

    /// Whether the token after an operand ends it (`,`, `;`, `}`, `)`, `]`).
    fn at_operand_end(&self) -> bool {
        matches!(
            self.peek(),
            Some(Token {
                tok: Tok::Punct(b',' | b';' | b'}' | b')' | b']'),
                ..
            })
        )
    }

    /// The binary operator starting `k` tokens ahead, with its precedence (C's, as PTX ISA 4.6.1
    /// Table 5 lists them) and how many tokens it spans.
    fn binary_operator_at(&self, k: usize) -> Option<(BinOp, u8, usize)> {
        let p = |j: usize| match self.peek_at(k + j) {
            Some(Token {
                tok: Tok::Punct(c),
                start,
                ..
            }) => Some((c, start)),
            _ => None,
        };
        let (c, at) = p(0)?;
        let next = p(1).filter(|(_, s)| *s == at + 1).map(|(c, _)| c);
        Some(match (c, next) {
            (b'*', _) => (BinOp::Mul, 10, 1),
            (b'/', _) => (BinOp::Div, 10, 1),
            (b'+', _) => (BinOp::Add, 9, 1),
            (b'-', _) => (BinOp::Sub, 9, 1),
            (b'<', Some(b'<')) => (BinOp::Shl, 8, 2),
            (b'>', Some(b'>')) => (BinOp::Shr, 8, 2),
            (b'<', Some(b'=')) => (BinOp::Le, 7, 2),
            (b'>', Some(b'=')) => (BinOp::Ge, 7, 2),
            (b'<', _) => (BinOp::Lt, 7, 1),
            (b'>', _) => (BinOp::Gt, 7, 1),
            (b'=', Some(b'=')) => (BinOp::Eq, 6, 2),
            (b'!', Some(b'=')) => (BinOp::Ne, 6, 2),
            (b'&', Some(b'&')) => (BinOp::And, 2, 2),
            (b'&', _) => (BinOp::BitAnd, 5, 1),
            (b'^', _) => (BinOp::BitXor, 4, 1),
            (b'|', Some(b'|')) => (BinOp::Or, 1, 2),
            (b'|', _) => (BinOp::BitOr, 3, 1),
            _ => return None,
        })
    }

    /// An integer constant expression, evaluated in 64 bits as PTX ISA 4.6.1 says (`.s64`
    /// arithmetic, wrapping); a division by zero or a shift past 63 is an error.
    fn const_expr(&mut self, depth: usize) -> PResult<i64> {
        self.binary(0, depth)
    }

    fn binary(&mut self, min: u8, depth: usize) -> PResult<i64> {
        let mut lhs = self.unary(depth)?;
        while let Some((op, prec, width)) = self.binary_operator_at(0) {
            // Left to right within a precedence: the right operand binds only tighter operators.
            if prec <= min {
                break;
            }
            self.pos += width;
            let rhs = self.binary(prec, depth)?;
            lhs = match op.apply(lhs, rhs) {
                Some(v) => v,
                None => {
                    return self.error(
                        ParseErrorKind::BadNumber,
                        "a division by zero or a shift past 63 bits in a constant expression",
                    );
                }
            };
        }
        Ok(lhs)
    }

    fn unary(&mut self, depth: usize) -> PResult<i64> {
        self.nesting(depth, "an expression")?;
        if self.eat_punct(b'-') {
            return Ok(self.unary(depth + 1)?.wrapping_neg());
        }
        if self.eat_punct(b'+') {
            return self.unary(depth + 1);
        }
        if self.eat_punct(b'~') {
            return Ok(!self.unary(depth + 1)?);
        }
        if self.eat_punct(b'!') {
            return Ok(i64::from(self.unary(depth + 1)? == 0));
        }
        if self.eat_punct(b'(') {
            let v = self.binary(0, depth + 1)?;
            self.expect_punct(b')')?;
            return Ok(v);
        }
        match self.number()? {
            // An integer past i64::MAX is its two's-complement bits (`.u64` constants).
            Number::Int(v) => Ok(v as i64),
            _ => self.unexpected("an integer in a constant expression"),
        }
    }
}

/// A binary operator of a constant expression (PTX ISA 4.6.1).
#[derive(Debug, Clone, Copy)]
enum BinOp {
    Mul,
    Div,
    Add,
    Sub,
    Shl,
    Shr,
    Lt,
    Gt,
    Le,
    Ge,
    Eq,
    Ne,
    BitAnd,
    BitXor,
    BitOr,
    And,
    Or,
}

impl BinOp {
    /// `a op b` in 64-bit signed arithmetic; `None` for a division by zero or a shift past 63.
    fn apply(self, a: i64, b: i64) -> Option<i64> {
        let shift = u32::try_from(b).ok().filter(|s| *s < 64);
        Some(match self {
            BinOp::Mul => a.wrapping_mul(b),
            BinOp::Div => a.checked_div(b)?,
            BinOp::Add => a.wrapping_add(b),
            BinOp::Sub => a.wrapping_sub(b),
            BinOp::Shl => a.wrapping_shl(shift?),
            BinOp::Shr => a.wrapping_shr(shift?),
            BinOp::Lt => i64::from(a < b),
            BinOp::Gt => i64::from(a > b),
            BinOp::Le => i64::from(a <= b),
            BinOp::Ge => i64::from(a >= b),
            BinOp::Eq => i64::from(a == b),
            BinOp::Ne => i64::from(a != b),
            BinOp::BitAnd => a & b,
            BinOp::BitXor => a ^ b,
            BinOp::BitOr => a | b,
            BinOp::And => i64::from(a != 0 && b != 0),
            BinOp::Or => i64::from(a != 0 || b != 0),
        })
    }
}

/// The immediate a constant expression's value is written as: negative values signed.
fn expr_imm(v: i64) -> Imm {
    if v < 0 {
        Imm::Int(v)
    } else {
        Imm::UInt(v as u64)
    }
}
