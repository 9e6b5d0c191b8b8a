//! The syntax patterns of the form table: `add{.rn|.rz}{.ftz}.{f32|f64} d, a, b{, c}`.
//!
//! A pattern is the opcode, a space, and the operands. In the opcode, `.x` is a required modifier,
//! `.{x|y}` a required choice, `{.x|.y.z}` an optional choice (each choice one or more modifiers).
//! A `*` inside a modifier stands for a decimal number (`m64n*k16`, `x*`); the builder checks the
//! number's range.
//! In the operands, each comma-separated name is one operand and a trailing `{, x}` group is optional.
//! An operand written `[a]` is an address, `a` a value; `a/[a]` takes either (tcgen05.mma's `a`: a
//! descriptor or a tensor-memory address, PTX ISA 9.7.16.10.9). `d|p` is one operand, a pair.
//! The same patterns document the forms, let tests check that the builder writes what the table says,
//! and let the validator recognise parsed instructions.

/// One element of an opcode pattern: a choice among sequences of modifiers (a plain modifier is a
/// choice of one), required or optional.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Element {
    alts: Vec<Vec<String>>,
    optional: bool,
}

impl Element {
    /// The alternatives, each one or more modifiers without their dots (`["L2::cache_hint"]`).
    pub fn alternatives(&self) -> &[Vec<String>] {
        &self.alts
    }

    /// True for a `{...}` group, which may be left out.
    pub fn is_optional(&self) -> bool {
        self.optional
    }

    /// The alternatives as written: `.x1, .x2, .x4`.
    pub fn describe(&self) -> String {
        self.alts
            .iter()
            .map(|a| format!(".{}", a.join(".")))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// One operand slot of a pattern: its name as written (`[a]`, `p{|q}`, `{!}c`) and whether it sits
/// in an optional `{, x}` group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OperandSlot {
    /// The name as written in the pattern.
    pub name: String,
    /// True inside an optional `{, x}` group.
    pub optional: bool,
    /// What the kinds of `name` take, read once when the pattern is parsed: the validator asks
    /// of every operand (issue 33).
    takes: Takes,
}

/// The kinds an [`OperandSlot`] takes, from its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Takes {
    pair: bool,
    address: bool,
    value: bool,
}

impl Takes {
    fn of(name: &str) -> Takes {
        Takes {
            pair: name.split('/').any(|k| k.contains('|')),
            address: name.split('/').any(|k| k.starts_with('[')),
            value: name.split('/').any(|k| !k.starts_with('[')),
        }
    }
}

impl OperandSlot {
    /// The slot called `name`, in an optional group or not.
    fn new(name: String, optional: bool) -> OperandSlot {
        OperandSlot {
            takes: Takes::of(&name),
            name,
            optional,
        }
    }

    /// The kinds the slot takes, as written: `a/[a]` gives `a` and `[a]`.
    pub fn kinds(&self) -> Vec<&str> {
        self.name.split('/').collect()
    }

    /// True when the slot takes a pair `d|p` (written `d|p` or `d{|p}`).
    pub fn takes_pair(&self) -> bool {
        self.takes.pair
    }

    /// True when the slot takes an address (one of its kinds is written in brackets).
    pub fn takes_address(&self) -> bool {
        self.takes.address
    }

    /// True when the slot takes a value (one of its kinds is written without brackets).
    pub fn takes_value(&self) -> bool {
        self.takes.value
    }

    /// True when the slot takes an address and nothing else.
    pub fn is_address(&self) -> bool {
        self.takes_address() && !self.takes_value()
    }
}

/// A parsed syntax pattern. [`Form::pattern`](super::Form::pattern) gives each row's, parsed once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern {
    mnemonic: String,
    elements: Vec<Element>,
    operands: Vec<OperandSlot>,
}

/// Why a pattern string is malformed (a bug in the table; tests parse every row).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PatternError(pub String);

/// How a written opcode differs from a pattern, for the message that names the nearest row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Difference {
    /// The written modifier stands where the pattern takes one of `expected`.
    Replace {
        /// The modifier as written (without its dot).
        written: String,
        /// The pattern's choices there: `.x1, .x2, .x4`.
        expected: String,
    },
    /// The pattern takes no modifier `written` at all.
    Extra {
        /// The modifier as written.
        written: String,
    },
    /// A required choice is missing.
    Missing {
        /// The pattern's choices: `.x1, .x2, .x4`.
        expected: String,
    },
}

impl std::fmt::Display for Difference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Difference::Replace { written, expected } => {
                write!(f, "`.{written}` is not one it takes there: {expected}")
            }
            Difference::Extra { written } => write!(f, "it takes no `.{written}`"),
            Difference::Missing { expected } => write!(f, "it needs one of {expected}"),
        }
    }
}

fn choices(body: &str) -> Result<Vec<Vec<String>>, PatternError> {
    body.split('|')
        .map(|alt| {
            let alt = alt.trim();
            let parts: Vec<String> = alt
                .strip_prefix('.')
                .unwrap_or(alt)
                .split('.')
                .map(str::to_string)
                .collect();
            if parts.iter().any(String::is_empty) {
                Err(PatternError(format!("empty modifier in `{body}`")))
            } else {
                Ok(parts)
            }
        })
        .collect()
}

impl Pattern {
    /// Parses a pattern.
    pub fn parse(syntax: &str) -> Result<Pattern, PatternError> {
        let (opcode, operands) = match syntax.split_once(' ') {
            Some((o, rest)) => (o, rest.trim()),
            None => (syntax, ""),
        };
        let mnemonic_end = opcode.find(['.', '{']).unwrap_or(opcode.len());
        let mnemonic = opcode[..mnemonic_end].to_string();
        if mnemonic.is_empty() {
            return Err(PatternError(format!("no mnemonic in `{syntax}`")));
        }
        let mut elements = Vec::new();
        let mut rest = &opcode[mnemonic_end..];
        let unclosed = || PatternError(format!("unclosed `{{` in `{syntax}`"));
        while !rest.is_empty() {
            // `{.x|.y}` may be left out; `.{x|y}` is a required choice.
            let group = match rest.strip_prefix('{') {
                Some(r) => Some((r, true)),
                None => rest.strip_prefix(".{").map(|r| (r, false)),
            };
            if let Some((r, optional)) = group {
                let end = r.find('}').ok_or_else(unclosed)?;
                elements.push(Element {
                    alts: choices(&r[..end])?,
                    optional,
                });
                rest = &r[end + 1..];
            } else if let Some(r) = rest.strip_prefix('.') {
                let end = r.find(['.', '{']).unwrap_or(r.len());
                if end == 0 {
                    return Err(PatternError(format!("empty modifier in `{syntax}`")));
                }
                elements.push(Element {
                    alts: vec![vec![r[..end].to_string()]],
                    optional: false,
                });
                rest = &r[end..];
            } else {
                return Err(PatternError(format!("unexpected `{rest}` in `{syntax}`")));
            }
        }
        Ok(Pattern {
            mnemonic,
            elements,
            operands: operand_slots(operands)?,
        })
    }

    /// The mnemonic (the opcode's first part).
    pub fn mnemonic(&self) -> &str {
        &self.mnemonic
    }

    /// The opcode's elements after the mnemonic.
    pub fn elements(&self) -> &[Element] {
        &self.elements
    }

    /// The operand slots, in order.
    pub fn operands(&self) -> &[OperandSlot] {
        &self.operands
    }

    /// How many operands come before the first optional group (their positions are fixed).
    pub fn fixed_operands(&self) -> usize {
        self.operands
            .iter()
            .position(|o| o.optional)
            .unwrap_or(self.operands.len())
    }

    /// The fewest and most operands.
    pub fn operand_range(&self) -> (usize, usize) {
        let required = self.operands.iter().filter(|o| !o.optional).count();
        (required, self.operands.len())
    }

    /// The opcode's tokens after this pattern's mnemonic, or `None` when the mnemonic differs. A
    /// mnemonic like `cp.async` may be split between mnemonic and modifiers by the caller.
    fn rest<'a, S: AsRef<str>>(
        &self,
        mnemonic: &'a str,
        modifiers: &'a [S],
    ) -> Option<Vec<&'a str>> {
        let mut tokens: Vec<&str> = mnemonic.split('.').collect();
        tokens.extend(modifiers.iter().map(AsRef::as_ref));
        let want: Vec<&str> = self.mnemonic.split('.').collect();
        if tokens.len() < want.len() || tokens[..want.len()] != want[..] {
            return None;
        }
        Some(tokens.split_off(want.len()))
    }

    /// True when `mnemonic.modifiers...` is an opcode of this pattern. Allocates nothing for an
    /// opcode of up to `INLINE_TOKENS` parts: the builder asks this of every instruction it
    /// writes, and the validator of every instruction it reads (issue 33).
    pub fn matches_opcode<S: AsRef<str>>(&self, mnemonic: &str, modifiers: &[S]) -> bool {
        let mut buf = [""; INLINE_TOKENS];
        let mut n = 0;
        let mut spill: Vec<&str> = Vec::new();
        for t in mnemonic
            .split('.')
            .chain(modifiers.iter().map(AsRef::as_ref))
        {
            if n < INLINE_TOKENS {
                buf[n] = t;
                n += 1;
            } else {
                if spill.is_empty() {
                    spill.extend_from_slice(&buf);
                }
                spill.push(t);
            }
        }
        let tokens = if spill.is_empty() {
            &buf[..n]
        } else {
            &spill[..]
        };
        let want = self.mnemonic.split('.');
        let mut skip = 0;
        for w in want {
            if tokens.get(skip) != Some(&w) {
                return false;
            }
            skip += 1;
        }
        assign(&self.elements, &tokens[skip..], None)
    }

    /// Which alternative of each element the opcode takes (`None`: an optional element left out),
    /// or `None` when the opcode is not one of this pattern's.
    pub fn choices_of<S: AsRef<str>>(
        &self,
        mnemonic: &str,
        modifiers: &[S],
    ) -> Option<Vec<Option<usize>>> {
        let rest = self.rest(mnemonic, modifiers)?;
        let mut chosen = Vec::with_capacity(self.elements.len());
        assign(&self.elements, &rest, Some(&mut chosen)).then_some(chosen)
    }

    /// True when the operand count fits.
    pub fn matches_operand_count(&self, n: usize) -> bool {
        let (lo, hi) = self.operand_range();
        (lo..=hi).contains(&n)
    }

    /// The smallest edit that turns the written opcode into one of this pattern's: its cost (how
    /// many modifiers differ) and the first difference. `None` when the mnemonic differs.
    pub fn difference<S: AsRef<str>>(
        &self,
        mnemonic: &str,
        modifiers: &[S],
    ) -> Option<(usize, Option<Difference>)> {
        let rest = self.rest(mnemonic, modifiers)?;
        let mut memo = std::collections::HashMap::new();
        Some(edit(&self.elements, &rest, 0, 0, &mut memo))
    }
}

/// Modifiers ptxas 13.0 takes written more than once, as if written once (flags: set twice is
/// set). Measured: `add.sat.sat.f32`, `ex2.approx.approx.f32`, `wgmma.fence.sync.sync`,
/// `cvt.rn.relu.relu.f16x2.f32`, `bra.uni.uni`, `min.NaN.NaN.f32` assemble; ptxas refuses every
/// other repeat it was tried with ("Duplicate .ftz modifier", "Multiple rounding modifiers
/// specified", "Multiple .aligned modifiers specified", a second state space, vector or type).
/// The PTX ISA grammar writes each modifier once.
const REPEATABLE: &[&str] = &["sat", "satfinite", "approx", "sync", "relu", "uni", "NaN"];

/// Mnemonics whose `.aligned` ptxas 13.0 does not require although the PTX ISA writes it
/// (`wgmma.fence.sync`, `tcgen05.ld.sync.32x32b.x1.b32` assemble). `ldmatrix`, `mma`,
/// `barrier`, `tcgen05.alloc`/`dealloc`/`wait`/`relinquish_alloc_permit` do require it (".aligned
/// modifier required for instruction ...").
const ALIGNED_OPTIONAL: &[&str] = &["wgmma", "tcgen05.ld", "tcgen05.st"];

/// Modifiers ptxas 13.0 ignores on some instructions: (instructions, modifiers). The `tcgen05.cp`
/// decompression formats (PTX ISA 9.7.16.8.1: `.b8x16`, `.b6x16_p32`, `.b4x16_p64`) written on
/// any other tcgen05 instruction assemble, in any position after its name and any number
/// (measured: `tcgen05.ld.sync.aligned.b8x16.b6x16_p32.16x256b.x2.b32`,
/// `tcgen05.alloc.b8x16.cta_group::1...`, `tcgen05.mma.b8x16.cta_group::1.kind::f16`,
/// `tcgen05.fence::before_thread_sync.b8x16`); `tcgen05.cp` counts them ("Unexpected number of
/// 'format conversion' modifiers").
const IGNORED: &[(&[&str], &[&str])] = &[(
    &[
        "tcgen05.alloc",
        "tcgen05.dealloc",
        "tcgen05.relinquish_alloc_permit",
        "tcgen05.ld",
        "tcgen05.st",
        "tcgen05.wait::ld",
        "tcgen05.wait::st",
        "tcgen05.shift",
        "tcgen05.mma",
        "tcgen05.commit",
        "tcgen05.fence::before_thread_sync",
        "tcgen05.fence::after_thread_sync",
    ],
    &["b8x16", "b6x16_p32", "b4x16_p64"],
)];

/// Spellings ptxas 13.0 takes for a modifier the PTX ISA spells otherwise: (instruction, written,
/// the manual's). PTX ISA 9.7.9.12 gives `st.async` the `.shared::cluster` window only; ptxas
/// 13.0 accepts `.shared::cta` and `.shared` there too (sm_90 to sm_120a).
const SPELLINGS: &[(&str, &str, &str)] = &[
    ("st.async", "shared::cta", "shared::cluster"),
    ("st.async", "shared", "shared::cluster"),
];

/// Instructions ptxas 13.0 names by two parts, the second written right after the mnemonic:
/// `st.release.sys.async.u32` is refused ("Illegal modifier '.async' for instruction 'st'"), as
/// is `red.relaxed.cluster.async...`.
const NAMED: &[&str] = &["st.async", "red.async"];

/// Mnemonics whose modifiers ptxas 13.0 reads in the written order: it reads `bar.arrive` and
/// `barrier.arrive` as instruction names, so `barrier.arrive.cta` is refused ("Illegal modifier
/// '.cta' for instruction 'barrier.arrive'") where `barrier.cta.arrive` assembles.
const IN_ORDER: &[&str] = &["bar", "barrier"];

impl Pattern {
    /// The modifiers of `mnemonic.modifiers` in this pattern's order, when the written ones are
    /// this pattern's written in another order, with a flag of `REPEATABLE` written twice,
    /// without an `.aligned` that `ALIGNED_OPTIONAL` mnemonics may leave out, with modifiers
    /// ptxas ignores (`IGNORED`) or another spelling of one (`SPELLINGS`): what ptxas 13.0
    /// takes beyond the manual's grammar (it reads the modifiers as a set; `ld.global.f32.volatile`
    /// assembles). Type names keep their written order (`cvt.f16.f32` is not `cvt.f32.f16`).
    /// `None` when the modifiers are not this pattern's in any order, or when they already match
    /// as written.
    pub fn reordered<S: AsRef<str>>(&self, mnemonic: &str, modifiers: &[S]) -> Option<Vec<String>> {
        let rest = self.rest(mnemonic, modifiers)?;
        let name = self.name();
        let is = |m: &str| name == m || name.starts_with(&format!("{m}."));
        let ignored: Vec<&str> = IGNORED
            .iter()
            .filter(|(on, _)| on.iter().any(|m| is(m)))
            .flat_map(|(_, tokens)| tokens.iter().copied())
            .collect();
        let mut tokens: Vec<&str> = Vec::new();
        for t in rest {
            let t = SPELLINGS
                .iter()
                .find(|(on, written, manual)| is(on) && *written == t && self.has_token(manual))
                .map_or(t, |(_, _, manual)| *manual);
            let repeated = REPEATABLE.contains(&t) && tokens.contains(&t);
            if !repeated && !ignored.contains(&t) {
                tokens.push(t);
            }
        }
        if let Some(second) = NAMED
            .iter()
            .find(|m| is(m))
            .and_then(|m| m.split('.').nth(1))
        {
            if tokens.first() != Some(&second) {
                return None;
            }
        }
        let aligned_optional = ALIGNED_OPTIONAL.iter().any(|m| is(m));
        let mut search = Unordered {
            tokens: &tokens,
            used: vec![false; tokens.len()],
            out: Vec::new(),
            aligned_optional,
            in_order: IN_ORDER.contains(&self.mnemonic.as_str()),
        };
        if !search.run(&self.elements) {
            return None;
        }
        let mut all: Vec<String> = self
            .mnemonic
            .split('.')
            .skip(1)
            .map(str::to_string)
            .collect();
        all.extend(search.modifiers().map(str::to_string));
        let same =
            all.len() == modifiers.len() && all.iter().zip(modifiers).all(|(a, m)| a == m.as_ref());
        (!same).then_some(all)
    }
}

impl Pattern {
    /// The mnemonic and the required one-token modifiers that follow it (`tcgen05.ld.sync.aligned`
    /// for `tcgen05.ld.sync.aligned.{16x64b|...}`): the instruction's name as ptxas reads it.
    fn name(&self) -> String {
        let mut name = self.mnemonic.clone();
        for e in self
            .elements
            .iter()
            .take_while(|e| !e.optional && e.alts.len() == 1)
        {
            for m in &e.alts[0] {
                name.push('.');
                name.push_str(m);
            }
        }
        name
    }

    /// True when some alternative of the pattern writes `token`.
    fn has_token(&self, token: &str) -> bool {
        self.elements
            .iter()
            .any(|e| e.alts.iter().flatten().any(|m| m == token))
    }
}

/// [`Pattern::reordered`]'s search: each element takes tokens from anywhere in `tokens` (each
/// token once), type names in their written order.
struct Unordered<'a> {
    tokens: &'a [&'a str],
    used: Vec<bool>,
    /// The tokens taken, by index; `None` for a supplied `.aligned`.
    out: Vec<Option<usize>>,
    aligned_optional: bool,
    /// Every token in its written order (the [`IN_ORDER`] mnemonics).
    in_order: bool,
}

impl Unordered<'_> {
    /// Tokens ptxas reads by position, each class in its written order: type names
    /// (`cvt.f16.f32` is not `cvt.f32.f16`) and state spaces (`cp.async.bulk.global.shared::cta`
    /// is a store, `.shared::cta.global` a load), or every token for the [`IN_ORDER`] mnemonics.
    /// `mbarrier.arrive.b64.shared` assembles: a type and a space may swap.
    fn class(&self, token: &str) -> Option<u8> {
        if self.in_order {
            Some(0)
        } else if token.parse::<crate::ScalarType>().is_ok() {
            Some(1)
        } else if crate::StateSpace::of_modifier(token).is_some() {
            Some(2)
        } else {
            None
        }
    }
}

impl Unordered<'_> {
    /// The opcode's modifiers after the mnemonic, in the pattern's order.
    fn modifiers(&self) -> impl Iterator<Item = &str> {
        self.out
            .iter()
            .map(|k| k.map_or("aligned", |k| self.tokens[k]))
    }

    fn run(&mut self, elements: &[Element]) -> bool {
        let Some((first, rest)) = elements.split_first() else {
            return self.used.iter().all(|u| *u);
        };
        for alt in &first.alts {
            let mut picked: Vec<usize> = Vec::with_capacity(alt.len());
            for a in alt {
                let k = (0..self.tokens.len()).find(|&k| {
                    let t = self.tokens[k];
                    !self.used[k]
                        && !picked.contains(&k)
                        && token_matches(a, t)
                        && self.class(t).is_none_or(|c| {
                            // After every token of its class taken so far.
                            self.out
                                .iter()
                                .flatten()
                                .chain(&picked)
                                .all(|&j| self.class(self.tokens[j]) != Some(c) || j < k)
                        })
                });
                match k {
                    Some(k) => picked.push(k),
                    None => break,
                }
            }
            if picked.len() != alt.len() {
                continue;
            }
            for &k in &picked {
                self.used[k] = true;
                self.out.push(Some(k));
            }
            if self.run(rest) {
                return true;
            }
            for &k in &picked {
                self.used[k] = false;
                self.out.pop();
            }
        }
        if first.optional {
            return self.run(rest);
        }
        // A required `.aligned` left out is supplied where ptxas does not require it.
        if self.aligned_optional && first.alts == [vec!["aligned".to_string()]] {
            self.out.push(None);
            if self.run(rest) {
                return true;
            }
            self.out.pop();
        }
        false
    }
}

/// How many parts of an opcode [`Pattern::matches_opcode`] holds without allocating (the longest
/// rows, tcgen05.mma's and the bulk tensor copies', have fewer).
const INLINE_TOKENS: usize = 24;

/// Assigns `tokens` to `elements` in order; `chosen` (when asked for) receives which alternative
/// each element took.
fn assign(
    elements: &[Element],
    tokens: &[&str],
    mut chosen: Option<&mut Vec<Option<usize>>>,
) -> bool {
    let Some((first, rest)) = elements.split_first() else {
        return tokens.is_empty();
    };
    for (k, alt) in first.alts.iter().enumerate() {
        if tokens.len() >= alt.len() && alt.iter().zip(tokens).all(|(a, t)| token_matches(a, t)) {
            if let Some(c) = chosen.as_deref_mut() {
                c.push(Some(k));
            }
            if assign(rest, &tokens[alt.len()..], chosen.as_deref_mut()) {
                return true;
            }
            if let Some(c) = chosen.as_deref_mut() {
                c.pop();
            }
        }
    }
    if first.optional {
        if let Some(c) = chosen.as_deref_mut() {
            c.push(None);
        }
        if assign(rest, tokens, chosen.as_deref_mut()) {
            return true;
        }
        if let Some(c) = chosen {
            c.pop();
        }
    }
    false
}

type Memo = std::collections::HashMap<(usize, usize), (usize, Option<Difference>)>;

/// Edit distance of `tokens[t..]` against `elements[e..]`: a substituted, extra or missing modifier
/// costs one. Keeps the first difference for the message.
fn edit(
    elements: &[Element],
    tokens: &[&str],
    e: usize,
    t: usize,
    memo: &mut Memo,
) -> (usize, Option<Difference>) {
    if let Some(v) = memo.get(&(e, t)) {
        return v.clone();
    }
    let mut best: (usize, Option<Difference>) = (usize::MAX, None);
    // The message is built only for a better cost: building it for every cell was most of the
    // validator's time on wrong opcodes.
    let consider = |cost: usize,
                    diff: &dyn Fn() -> Option<Difference>,
                    best: &mut (usize, Option<Difference>)| {
        if cost < best.0 {
            *best = (cost, diff());
        }
    };
    match elements.get(e) {
        None => {
            // Every remaining token is extra.
            let diff = tokens.get(t).map(|w| Difference::Extra {
                written: w.to_string(),
            });
            best = (tokens.len() - t, diff);
        }
        Some(el) => {
            for alt in &el.alts {
                if t + alt.len() <= tokens.len() {
                    let here = &tokens[t..t + alt.len()];
                    let wrong: Vec<&&str> = alt
                        .iter()
                        .zip(here)
                        .filter(|(a, w)| !token_matches(a, w))
                        .map(|(_, w)| w)
                        .collect();
                    let (c, d) = edit(elements, tokens, e + 1, t + alt.len(), memo);
                    let diff = || match wrong.first() {
                        Some(w) => Some(Difference::Replace {
                            written: w.to_string(),
                            expected: el.describe(),
                        }),
                        None => d.clone(),
                    };
                    consider(wrong.len().saturating_add(c), &diff, &mut best);
                }
            }
            // Left out: free for an optional element, one for a required one.
            let (c, d) = edit(elements, tokens, e + 1, t, memo);
            if el.optional {
                consider(c, &|| d.clone(), &mut best);
            } else {
                let diff = || {
                    Some(Difference::Missing {
                        expected: el.describe(),
                    })
                };
                consider(c.saturating_add(1), &diff, &mut best);
            }
            // An extra token here.
            if let Some(w) = tokens.get(t) {
                let (c, _) = edit(elements, tokens, e, t + 1, memo);
                let diff = || {
                    Some(Difference::Extra {
                        written: w.to_string(),
                    })
                };
                consider(c.saturating_add(1), &diff, &mut best);
            }
        }
    }
    memo.insert((e, t), best.clone());
    best
}

/// A pattern modifier against a written one; `*` matches one or more decimal digits.
pub(crate) fn token_matches(pattern: &str, token: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == token,
        Some((pre, post)) => {
            token.len() > pre.len() + post.len()
                && token.starts_with(pre)
                && token.ends_with(post)
                && token[pre.len()..token.len() - post.len()]
                    .bytes()
                    .all(|b| b.is_ascii_digit())
        }
    }
}

/// The operand slots of a pattern's operand list: top-level commas separate operands; a `{, x}`
/// group holds optional ones; brackets, parentheses and other braces (`{a, b}` vectors, `{!}c`,
/// `p{|q}`) belong to the operand that holds them.
fn operand_slots(ops: &str) -> Result<Vec<OperandSlot>, PatternError> {
    let mut out = Vec::new();
    let mut cur = String::new();
    // One entry per open bracket: true for an optional `{, x}` group.
    let mut stack: Vec<bool> = Vec::new();
    let chars: Vec<char> = ops.chars().collect();
    let mut push = |cur: &mut String, optional: bool| {
        let name = std::mem::take(cur).trim().to_string();
        if !name.is_empty() {
            out.push(OperandSlot::new(name, optional));
        }
    };
    let mut k = 0;
    while k < chars.len() {
        let c = chars[k];
        let in_optional = stack.iter().any(|&o| o);
        match c {
            '{' if chars.get(k + 1) == Some(&',') => {
                push(&mut cur, in_optional);
                stack.push(true);
                k += 1; // the comma
            }
            '{' | '[' | '(' => {
                stack.push(false);
                cur.push(c);
            }
            '}' if stack.last() == Some(&true) => {
                push(&mut cur, true);
                stack.pop();
            }
            '}' | ']' | ')' => {
                if stack.pop().is_none() {
                    return Err(PatternError(format!("unbalanced `{c}` in `{ops}`")));
                }
                cur.push(c);
            }
            ',' if stack.iter().all(|&o| o) => push(&mut cur, in_optional),
            _ => cur.push(c),
        }
        k += 1;
    }
    if !stack.is_empty() {
        return Err(PatternError(format!("unclosed bracket in `{ops}`")));
    }
    push(&mut cur, false);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operand_kinds() {
        let p = Pattern::parse("x.y [d], a/[a], p{|q}, [dst]/dst").unwrap();
        let o = p.operands();
        assert!(o[0].is_address() && !o[0].takes_value());
        assert!(o[1].takes_address() && o[1].takes_value() && !o[1].is_address());
        assert_eq!(o[1].kinds(), ["a", "[a]"]);
        assert!(!o[1].takes_pair() && o[2].takes_pair());
        assert!(!o[2].takes_address());
        assert!(o[3].takes_address() && o[3].takes_value());
    }

    #[test]
    fn opcode_patterns_match() {
        let p = Pattern::parse("add{.rn|.rz|.rm|.rp}{.ftz}{.sat}.f32 d, a, b").unwrap();
        assert!(p.matches_opcode("add", &["f32"]));
        assert!(p.matches_opcode("add", &["rn", "ftz", "f32"]));
        assert!(!p.matches_opcode("add", &["ftz", "rn", "f32"]));
        assert!(!p.matches_opcode("add", &["f64"]));
        assert_eq!(p.operand_range(), (3, 3));
        let p = Pattern::parse("setp.{eq|ne}{.and|.or}.{s32|u32} p{|q}, a, b{, {!}c}").unwrap();
        assert!(p.matches_opcode("setp", &["eq", "s32"]));
        assert!(p.matches_opcode("setp", &["ne", "and", "u32"]));
        assert_eq!(p.operand_range(), (3, 4));
        let p = Pattern::parse("ld{.relaxed.cta|.relaxed.gpu}.global.{u32} d, [a]").unwrap();
        assert!(p.matches_opcode("ld", &["relaxed", "gpu", "global", "u32"]));
        assert!(!p.matches_opcode("ld", &["relaxed", "global", "u32"]));
        let p = Pattern::parse("cp.async.bulk.commit_group").unwrap();
        assert!(p.matches_opcode("cp", &["async", "bulk", "commit_group"]));
        assert_eq!(p.operand_range(), (0, 0));
        let p = Pattern::parse("wgmma.mma_async.sync.aligned.m64n*k16.f32.bf16.bf16 d, a").unwrap();
        assert!(p.matches_opcode(
            "wgmma",
            &[
                "mma_async",
                "sync",
                "aligned",
                "m64n256k16",
                "f32",
                "bf16",
                "bf16"
            ]
        ));
        assert!(!p.matches_opcode(
            "wgmma",
            &[
                "mma_async",
                "sync",
                "aligned",
                "m64nk16",
                "f32",
                "bf16",
                "bf16"
            ]
        ));
        let p = Pattern::parse("cp.async.bulk.tensor.2d [dst], [tmap, coords], [mbar]{, mask}")
            .unwrap();
        assert_eq!(p.operand_range(), (3, 4));
        let p = Pattern::parse("mov.b32 d, {a, b}").unwrap();
        assert_eq!(p.operand_range(), (2, 2));
    }

    fn names(syntax: &str) -> (Vec<String>, usize) {
        let p = Pattern::parse(syntax).unwrap();
        let names = p.operands().iter().map(|o| o.name.clone()).collect();
        (names, p.fixed_operands())
    }

    #[test]
    fn operand_slots() {
        assert_eq!(
            names("ld.global.u32 d, [a]{, policy}"),
            (vec!["d".into(), "[a]".into(), "policy".into()], 2)
        );
        assert_eq!(
            names("setp.eq.s32 p{|q}, a, b{, {!}c}"),
            (
                vec!["p{|q}".into(), "a".into(), "b".into(), "{!}c".into()],
                3
            )
        );
        assert_eq!(
            names("cp.async.bulk.tensor.2d [dst], [tmap, coords], [mbar]{, mask}").0,
            vec!["[dst]", "[tmap, coords]", "[mbar]", "mask"]
        );
        assert_eq!(names("mov.b32 d, {a, b}").0, vec!["d", "{a, b}"]);
        assert_eq!(names("ret").0, Vec::<String>::new());
        let p =
            Pattern::parse("fence.proxy.tensormap::generic.acquire.gpu {, addr}{, size}").unwrap();
        assert_eq!(p.operand_range(), (0, 2));
        assert!(Pattern::parse("ld.u32 d, [a").is_err());
    }

    #[test]
    fn differences_name_the_modifier() {
        let p = Pattern::parse("ldmatrix.sync.aligned.m8n8.{x1|x2|x4}{.trans}.shared.b16 d, [p]")
            .unwrap();
        let (cost, d) = p
            .difference(
                "ldmatrix",
                &["sync", "aligned", "m8n8", "x3", "shared", "b16"],
            )
            .unwrap();
        assert_eq!(cost, 1);
        assert_eq!(
            d.unwrap().to_string(),
            "`.x3` is not one it takes there: .x1, .x2, .x4"
        );
        let p = Pattern::parse("mbarrier.init{.shared|.shared::cta}.b64 [addr], count").unwrap();
        let (cost, d) = p.difference("mbarrier.init", &["local", "b64"]).unwrap();
        assert_eq!(cost, 1);
        assert_eq!(
            d.unwrap().to_string(),
            "`.local` is not one it takes there: .shared, .shared::cta"
        );
        assert_eq!(p.difference("mbarrier.init", &["b64"]).unwrap(), (0, None));
        let p = Pattern::parse("add.{sat.s32|u32|s32} d, a, b").unwrap();
        assert_eq!(p.choices_of("add", &["sat", "s32"]), Some(vec![Some(0)]));
        assert_eq!(p.choices_of("add", &["sat", "u32"]), None);
    }

    /// What ptxas 13.0 takes beyond the grammar, measured: modifiers in another order, a flag
    /// twice, wgmma's `.aligned` left out; and what it refuses: `.ftz` twice, types or state
    /// spaces swapped, `barrier.arrive.cta`.
    #[test]
    fn reordered_follows_ptxas() {
        let re = |syntax: &str, op: &str| {
            let p = Pattern::parse(syntax).unwrap();
            let mut parts = op.split('.');
            let m = parts.next().unwrap();
            let mods: Vec<&str> = parts.collect();
            p.reordered(m, &mods).map(|v| v.join("."))
        };
        let add = "add{.rn|.rz}{.ftz}{.sat}.f32 d, a, b";
        assert_eq!(re(add, "add.f32.rn"), Some("rn.f32".into()));
        assert_eq!(re(add, "add.sat.ftz.sat.f32"), Some("ftz.sat.f32".into()));
        assert_eq!(re(add, "add.ftz.ftz.f32"), None);
        assert_eq!(re(add, "add.rn.f32"), None, "already in order");
        let ld = "ld{.weak|.volatile}{.global|.shared}{.v2|.v4}.{f32|u32} d, [a]";
        assert_eq!(
            re(ld, "ld.global.f32.volatile"),
            Some("volatile.global.f32".into())
        );
        let cvt = "cvt{.rn|.rz}.{f16|f32}.{f16|f32} d, a";
        assert_eq!(re(cvt, "cvt.f16.f32.rn"), Some("rn.f16.f32".into()));
        let bulk = "cp.async.bulk.{shared::cta|global}.{global|shared::cta}.bulk_group [d], [s], n";
        assert_eq!(
            re(bulk, "cp.async.bulk.bulk_group.global.shared::cta"),
            Some("async.bulk.global.shared::cta.bulk_group".into())
        );
        let fence = "wgmma.fence.sync.aligned";
        assert_eq!(
            re(fence, "wgmma.fence.sync"),
            Some("fence.sync.aligned".into())
        );
        assert_eq!(
            re(fence, "wgmma.fence.sync.sync"),
            Some("fence.sync.aligned".into())
        );
        let ldm = "ldmatrix.sync.aligned.m8n8.{x1|x2|x4}.shared.b16 d, [p]";
        assert_eq!(re(ldm, "ldmatrix.sync.m8n8.x4.shared.b16"), None);
        let bar = "barrier{.cta}.arrive{.aligned} a, b";
        assert_eq!(re(bar, "barrier.arrive.cta"), None);
    }
}
