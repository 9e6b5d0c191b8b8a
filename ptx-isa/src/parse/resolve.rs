//! Finding a parsed instruction's row of the form table, through the table's own syntax patterns
//! (one source of truth): an index from mnemonic to candidate rows is built once, and each
//! candidate's [`Pattern`] is asked whether it matches the opcode and the operand count.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::OnceLock;

use crate::forms::Form;
use crate::forms::families::{covered, family_of, rows_of};
use crate::forms::syntax::{Difference, Pattern};
use crate::instr::{InstrRef, Instruction, Operand};
use crate::sreg::SpecialReg;
use crate::types::ScalarType;

/// What the table says about an instruction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolution {
    /// The row whose pattern matches the opcode and the operand count.
    Form(Form),
    /// No row has this mnemonic: a generic instruction.
    UnknownMnemonic,
    /// Rows have the mnemonic, but none matches these modifiers and the instruction's family (the
    /// manual's, [`crate::forms::families`]) has no rows: a generic instruction.
    UnknownModifiers,
    /// The table covers the instruction's family, but no row allows these modifiers: `form` is the
    /// nearest row and `difference` what differs from it.
    WrongModifier {
        /// The manual's family the opcode belongs to (`cp.async.bulk`), when it has one.
        family: Option<&'static str>,
        /// The nearest row of the family.
        form: Form,
        /// The first difference from it (none when only a rule of the row is broken).
        difference: Option<Difference>,
    },
    /// Rows match the modifiers except a type suffix: `token` is not a type this opcode takes.
    WrongType {
        /// The nearest row.
        form: Form,
        /// The type modifier as written.
        token: String,
    },
    /// A row matches the opcode but not the operand count.
    OperandCount {
        /// The row.
        form: Form,
        /// Its fewest and most operands.
        range: (usize, usize),
    },
}

struct Index {
    by_mnemonic: HashMap<&'static str, Vec<(Form, &'static Pattern)>>,
}

fn index() -> &'static Index {
    static INDEX: OnceLock<Index> = OnceLock::new();
    INDEX.get_or_init(|| {
        let mut by_mnemonic: HashMap<&'static str, Vec<(Form, &'static Pattern)>> = HashMap::new();
        for spec in Form::all() {
            // Feature rows are qualifiers of other rows, and directive rows are not instructions.
            if spec.feature || spec.name.starts_with("directive.") {
                continue;
            }
            // The row's mnemonic as its one pattern parser reads it (`cp` of `cp.async.bulk...`).
            let p = spec.form.pattern();
            by_mnemonic
                .entry(p.mnemonic())
                .or_default()
                .push((spec.form, p));
        }
        Index { by_mnemonic }
    })
}

/// The first dot-separated part of a mnemonic (`cp` of `cp.async`).
fn head(mnemonic: &str) -> &str {
    mnemonic.split('.').next().unwrap_or(mnemonic)
}

/// Resolves `mnemonic.modifiers` with `n` operands.
pub fn resolve(i: &InstrRef<'_>) -> Resolution {
    resolve_with(i, Resolution::clone)
}

/// `f` of [`resolve`]'s answer, borrowed: the parser and the validator read what they need of it
/// without copying a refusal's strings for every instruction (issue 33).
pub(crate) fn resolve_with<R>(i: &InstrRef<'_>, f: impl FnOnce(&Resolution) -> R) -> R {
    remembered(i).resolution_with(i, f)
}

/// What the parser keeps of the table's answer for `i`'s opcode and operand count: the row when
/// one takes them, before [`refine`] (which reads the operands), and whether the opcode is of no
/// form the table has (kept as written, with a warning). The same answer as [`resolve_with`]'s
/// for every instruction of this opcode and operand count.
pub(crate) fn opcode_answer(i: &InstrRef<'_>) -> (Option<Form>, bool) {
    match remembered(i).resolution {
        Resolution::Form(f) => (Some(f), false),
        Resolution::UnknownMnemonic | Resolution::UnknownModifiers => (None, true),
        Resolution::WrongModifier { .. }
        | Resolution::WrongType { .. }
        | Resolution::OperandCount { .. } => (None, false),
    }
}

/// True when the remembered answer for `i`'s opcode and operand count is row `form`: that row's
/// pattern then matches both (the table's first row whose pattern does, [`resolve_opcode`]).
/// False says nothing: another row may come first. The builder's check of the row it writes
/// asks this first, a lookup where matching the pattern again was a tenth of building a GEMM
/// (issue 33).
pub(crate) fn resolves_to(form: Form, i: &InstrRef<'_>) -> bool {
    matches!(remembered(i).resolution, Resolution::Form(f) if f == form)
}

/// What a thread remembers of an opcode and its operand count ([`remembered`]): the table's
/// answer and, for an opcode no row takes, the lenient reading and the refusal, each worked out
/// at its first need. One lookup gives all three, so that an instruction no row takes costs the
/// validator no more lookups than one a row takes (issue 33).
pub(crate) struct Remembered {
    resolution: Resolution,
    lenient: std::cell::OnceCell<Option<(Form, &'static Pattern, Vec<String>)>>,
    refusal: std::cell::OnceCell<(crate::error::ErrorKind, std::sync::Arc<str>)>,
}

impl Remembered {
    /// `f` of the table's answer for `i` (an instruction of this opcode), borrowed.
    pub(crate) fn resolution_with<R>(
        &self,
        i: &InstrRef<'_>,
        f: impl FnOnce(&Resolution) -> R,
    ) -> R {
        match &self.resolution {
            Resolution::Form(form) => f(&Resolution::Form(refine(*form, i))),
            other => f(other),
        }
    }

    /// [`lenient`] of `i`, an instruction of this opcode: the search over every order of the
    /// modifiers is made once per opcode.
    pub(crate) fn lenient(&self, i: &InstrRef<'_>) -> Option<(Form, Instruction)> {
        let (form, p, mods) = self
            .lenient
            .get_or_init(|| {
                let candidates = index().by_mnemonic.get(head(i.mnemonic))?;
                let n = i.operands.len();
                candidates.iter().find_map(|(form, p)| {
                    let mods = p.reordered(i.mnemonic, i.modifiers)?;
                    p.matches_operand_count(n).then_some((*form, *p, mods))
                })
            })
            .as_ref()?;
        let mut fixed = i.to_instruction();
        fixed.mnemonic = p.mnemonic().to_string().into();
        fixed.modifiers = mods.iter().map(|m| m.clone().into()).collect();
        let form = refine(*form, &fixed.view());
        fixed.form = Some(form);
        Some((form, fixed))
    }

    /// The validator's error for an instruction of this opcode no row takes: `refuse` of the
    /// table's answer, formatted once per opcode and shared by every line that repeats it.
    pub(crate) fn refusal(
        &self,
        refuse: impl FnOnce(&Resolution) -> (crate::error::ErrorKind, String),
    ) -> &(crate::error::ErrorKind, std::sync::Arc<str>) {
        self.refusal.get_or_init(|| {
            let (kind, message) = refuse(&self.resolution);
            (kind, message.into())
        })
    }
}

/// How many opcodes [`remembered`] keeps per thread before it starts over: far more than a real
/// module's distinct opcodes (a 1 MB CUTLASS module has a few hundred), few enough that fuzzed
/// input cannot grow the memory without bound.
const REMEMBERED: usize = 1 << 14;

/// An opcode and its operand count, as [`remember`] keeps it: the mnemonic and the modifiers
/// (borrowed from the form table when a row spells them, [`crate::parse`]'s interning).
#[derive(Debug, PartialEq, Eq)]
struct Opcode {
    parts: Vec<std::borrow::Cow<'static, str>>,
    operands: usize,
}

/// An instruction's [`Opcode`] without copying it: looked up with no key built (issue 33).
struct OpcodeOf<'a>(&'a InstrRef<'a>);

impl OpcodeOf<'_> {
    fn parts(&self) -> impl Iterator<Item = &str> {
        std::iter::once(self.0.mnemonic).chain(self.0.modifiers.iter().map(|m| m.as_ref()))
    }
}

/// One hash for both shapes: each part's length and its first, middle and last bytes, and the
/// operand count, folded into one word and hashed once (issue 33: two lookups an instruction,
/// where hashing each part's text apart was most of a lookup's cost). Equal opcodes fold
/// equally; the few that fold alike (`rn`/`rp`... differ in a byte that is read) are told apart
/// by comparing their parts.
fn hash_opcode<'p>(parts: impl Iterator<Item = &'p str>, operands: usize, h: &mut impl Hasher) {
    let mut x = operands as u64;
    for p in parts {
        let b = p.as_bytes();
        let (first, middle, last) = match b {
            [] => (0, 0, 0),
            [first, .., last] => (*first, b[b.len() / 2], *last),
            [only] => (*only, *only, *only),
        };
        let part =
            u64::from_le_bytes([first, middle, last, 0, 0, 0, 0, 0]) | (b.len() as u64) << 32;
        x = (x.rotate_left(23) ^ part).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
    h.write_u64(x);
}

impl Hash for Opcode {
    fn hash<H: Hasher>(&self, h: &mut H) {
        hash_opcode(self.parts.iter().map(|p| p.as_ref()), self.operands, h);
    }
}

impl Hash for OpcodeOf<'_> {
    fn hash<H: Hasher>(&self, h: &mut H) {
        hash_opcode(self.parts(), self.0.operands.len(), h);
    }
}

impl hashbrown::Equivalent<Opcode> for OpcodeOf<'_> {
    fn equivalent(&self, key: &Opcode) -> bool {
        key.operands == self.0.operands.len()
            && key.parts.len() == 1 + self.0.modifiers.len()
            && self
                .parts()
                .zip(&key.parts)
                .all(|(a, b)| crate::instr::same_word(a, b))
    }
}

/// What one thread remembers about opcodes: answers by opcode and operand count.
type Seen<T> = std::cell::RefCell<hashbrown::HashMap<Opcode, T>>;

/// `compute(i)`, remembered in `seen` by `i`'s opcode and operand count (what `compute` reads).
fn remember<T: Clone + 'static>(
    seen: &'static std::thread::LocalKey<Seen<T>>,
    i: &InstrRef<'_>,
    compute: impl FnOnce(&InstrRef<'_>) -> T,
) -> T {
    seen.with_borrow_mut(|seen| {
        if let Some(r) = seen.get(&OpcodeOf(i)) {
            return r.clone();
        }
        let r = compute(i);
        if seen.len() >= REMEMBERED {
            seen.clear();
        }
        let key = Opcode {
            parts: std::iter::once(std::borrow::Cow::Owned(i.mnemonic.to_string()))
                .chain(i.modifiers.iter().cloned())
                .collect(),
            operands: i.operands.len(),
        };
        seen.insert(key, r.clone());
        r
    })
}

/// [`resolve_opcode`] of `i`, remembered per thread by opcode and operand count: the parser and
/// the validator each resolve every instruction, a module repeats a few hundred opcodes, and the
/// nearest-row search for an opcode no row takes is costly (issue 33).
pub(crate) fn remembered(i: &InstrRef<'_>) -> std::rc::Rc<Remembered> {
    thread_local! {
        static SEEN: Seen<std::rc::Rc<Remembered>> = Seen::default();
    }
    remember(&SEEN, i, |i| {
        std::rc::Rc::new(Remembered {
            resolution: resolve_opcode(i),
            lenient: std::cell::OnceCell::new(),
            refusal: std::cell::OnceCell::new(),
        })
    })
}

/// What the table says about the opcode of `i` and its operand count (a `mov` of a special
/// register is not told apart yet: [`refine`] does that).
fn resolve_opcode(i: &InstrRef<'_>) -> Resolution {
    let Some(candidates) = index().by_mnemonic.get(head(i.mnemonic)) else {
        return Resolution::UnknownMnemonic;
    };
    let n = i.operands.len();
    let mut count_miss = None;
    for (form, p) in candidates {
        if p.matches_opcode(i.mnemonic, i.modifiers) {
            if p.matches_operand_count(n) {
                return Resolution::Form(*form);
            }
            count_miss.get_or_insert((*form, p.operand_range()));
        }
    }
    if let Some((form, range)) = count_miss {
        return Resolution::OperandCount { form, range };
    }
    // A type suffix the opcode does not take: would another type make it match?
    for (k, m) in i.modifiers.iter().enumerate() {
        if ScalarType::from_name(m).is_none() && !looks_like_type(m) {
            continue;
        }
        for (form, p) in candidates {
            let mut mods: Vec<&str> = i.modifiers.iter().map(|m| m.as_ref()).collect();
            // Only a type the row names can make its pattern match.
            for t in form.types() {
                mods[k] = t.name();
                if p.matches_opcode(i.mnemonic, &mods) {
                    return Resolution::WrongType {
                        form: *form,
                        token: m.to_string(),
                    };
                }
            }
        }
    }
    // A family the table covers: the nearest row and how the opcode differs from it. An opcode
    // of no family of the manual at all, under a mnemonic the table has (`tcgen05.frob`), is no
    // instruction: the nearest row under the mnemonic.
    let family = family_of(i.mnemonic, i.modifiers);
    let rows = match family {
        Some(family) if covered(family) => Some(rows_of(family)),
        Some(_) => None,
        None => Some(candidates.iter().map(|(f, _)| *f).collect()),
    };
    if let Some(rows) = rows {
        let nearest = rows
            .into_iter()
            .filter_map(|f| {
                let (cost, d) = f.pattern().difference(i.mnemonic, i.modifiers)?;
                Some((cost, f, d))
            })
            .min_by_key(|(cost, f, _)| (*cost, *f));
        if let Some((_, form, difference)) = nearest {
            return Resolution::WrongModifier {
                family: family.map(|f| f.name),
                form,
                difference,
            };
        }
    }
    Resolution::UnknownModifiers
}

/// The row an instruction matches once its modifiers are put in the row's order, a modifier
/// written twice is written once, or a missing `.aligned` is supplied: ptxas 13.0 takes these
/// (`cos.approx.approx.f32`, `ld.global.volatile.u32`, `wgmma.fence.sync`) although the PTX ISA
/// grammar does not. Gives the row and the opcode as the row writes it; `None` when no row takes
/// the modifiers in any order.
pub fn lenient(i: &InstrRef<'_>) -> Option<(Form, Instruction)> {
    remembered(i).lenient(i)
}

/// `u33`, `f8`, `b7`: shaped like a type name.
fn looks_like_type(m: &str) -> bool {
    let mut c = m.chars();
    matches!(c.next(), Some('u' | 's' | 'b' | 'f')) && {
        let rest = c.as_str();
        !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit())
    }
}

/// `mov` of a special register gates by the register (cluster registers need sm_90).
pub(crate) fn refine(form: Form, i: &InstrRef<'_>) -> Form {
    if !matches!(
        form,
        Form::Mov | Form::MovSreg | Form::MovSregCluster | Form::MovSregTotalSmem
    ) {
        return form;
    }
    match i.operands.get(1) {
        Some(Operand::Sreg(s)) => {
            use SpecialReg::*;
            match s {
                IsExplicitCluster | ClusterId(_) | NClusterId(_) | ClusterCtaId(_)
                | ClusterNCtaId(_) | ClusterCtaRank | ClusterNCtaRank => Form::MovSregCluster,
                TotalSmemSize => Form::MovSregTotalSmem,
                _ => Form::MovSreg,
            }
        }
        _ => form,
    }
}
