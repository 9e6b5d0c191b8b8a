//! Instructions and their operands (PTX ISA 4.3 "Statements", 4.3.2 "Instruction Statements",
//! chapter 6 "Instruction Operands").

use std::borrow::Cow;
use std::fmt;

use crate::forms::Form;
use crate::reg::RegRef;
use crate::space::Address;
use crate::sreg::SpecialReg;
use crate::types::ScalarType;

/// A label: a branch target inside a function (PTX ISA 4.3 "Statements"), rendered `$L__<n>`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Label(pub(crate) u32);

impl Label {
    /// The label's number within its function.
    pub fn index(self) -> u32 {
        self.0
    }
}

impl fmt::Display for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "$L__{}", self.0)
    }
}

/// A `.branchtargets` list of a function (PTX ISA 11.3.1), rendered `$T__<n>`: the labels
/// `brx.idx` indexes (9.7.12.4). [`crate::FunctionBuilder::branch_targets`] declares one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TargetList(pub(crate) u32);

impl fmt::Display for TargetList {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "$T__{}", self.0)
    }
}

impl From<TargetList> for Operand {
    fn from(t: TargetList) -> Operand {
        Operand::Symbol(Cow::Owned(t.to_string()))
    }
}

/// `a == b` for the short words of an opcode (mnemonics, modifiers: `s32`, `shared`), without a
/// call to `memcmp` for each: words of up to 8 bytes are compared byte by byte in place, and the same
/// text of the form table (what the parser borrows, [`crate::parse`]) by its address. Every
/// instruction's modifiers are compared to rows' and rules' words many times over (issue 33).
pub(crate) fn same_word(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    a.len() == b.len()
        && (std::ptr::eq(a.as_ptr(), b.as_ptr())
            || if a.len() <= 8 {
                a.iter().zip(b).all(|(x, y)| x == y)
            } else {
                a == b
            })
}

/// An immediate operand (PTX ISA 4.5 "Constants": integer, `0f` single and `0d` double hex floats).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Imm {
    /// A signed integer.
    Int(i64),
    /// An unsigned integer (written in hex when large).
    UInt(u64),
    /// A single-precision float, by its bits (`0f3F800000`).
    F32(u32),
    /// A double-precision float, by its bits (`0d3FF0000000000000`).
    F64(u64),
}

impl Imm {
    /// The `f32` immediate for `x`.
    pub fn f32(x: f32) -> Imm {
        Imm::F32(x.to_bits())
    }
    /// The `f64` immediate for `x`.
    pub fn f64(x: f64) -> Imm {
        Imm::F64(x.to_bits())
    }
}

impl fmt::Display for Imm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Imm::Int(i) => write!(f, "{i}"),
            Imm::UInt(u) if u > 0xFFFF => write!(f, "0x{u:X}"),
            Imm::UInt(u) => write!(f, "{u}"),
            Imm::F32(b) => write!(f, "0f{b:08X}"),
            Imm::F64(b) => write!(f, "0d{b:016X}"),
        }
    }
}

/// An operand.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Operand {
    /// A register.
    Reg(RegRef),
    /// A negated predicate, `!p` (as a source, e.g. `setp`'s `c` operand).
    NotPred(RegRef),
    /// An immediate.
    Imm(Imm),
    /// A special register.
    Sreg(SpecialReg),
    /// A memory address `[...]`.
    Addr(Address),
    /// A vector in braces `{a, b, c, d}`.
    Vector(Vec<Operand>),
    /// A label.
    Label(Label),
    /// A symbol: a function, variable or parameter name.
    Symbol(Cow<'static, str>),
    /// The sink `_`.
    Sink,
    /// Two destinations written `p|q` (`setp`'s predicates; `d|p` of `shfl.sync`, `elect.sync`).
    Pair(RegRef, RegRef),
    /// `_|p`: a discarded first destination and a predicate (`elect.sync _|p, mask`).
    SinkPair(RegRef),
    /// A tensor-map reference with coordinates, `[tmap, {c0, c1}]` (PTX ISA 9.7.9.27).
    Tensor {
        /// The tensor map: a `.param` symbol or a register holding its generic address. Boxed:
        /// few operands are tensors, and an operand is 40 bytes, not 48 (issue 33).
        map: Box<crate::space::AddrBase>,
        /// The coordinates, innermost first.
        coords: Vec<Operand>,
    },
    /// A parenthesised list `(a, b)`: the return and argument lists of `call`.
    List(Vec<Operand>),
    // ---- parsed text (issue 9): registers declared by name (`.reg .pred p;` in nvcc's inline-asm
    // blocks) are `Symbol`s; these hold the shapes that take a register and met a name. -----------
    /// `!name`: a negated predicate declared by name.
    NotSymbol(Cow<'static, str>),
    /// `a|b` where either side is a register declared by name (or `_`).
    NamedPair(Box<Operand>, Box<Operand>),
    /// An array element's address, `a[2]` (PTX ISA 6.4.2 "Arrays as Operands": `mov.u32 s, a[1];`
    /// moves the address of `a[1]`; `ld.global.u32 s, a[0];` reads it). The index is a constant
    /// expression, kept as its value.
    Element {
        /// The array variable.
        array: Cow<'static, str>,
        /// The index.
        index: i64,
    },
    /// A video instruction's operand (PTX ISA 9.7.18) with a byte or half-word selector and/or
    /// negation: `%r1.b0`, `%r2.h10`, `-%r3`, `-%r1.b2`. Which selectors an operand takes is a
    /// rule of the row ([`crate::forms::rules`]).
    Video {
        /// `-a` (vmad's sources, PTX ISA 9.7.18.1.3).
        negated: bool,
        /// The register (a [`Operand::Reg`], or a [`Operand::Symbol`] in parsed text).
        value: Box<Operand>,
        /// The selector without its dot (`b0`, `h10`, `b3210`), if one is written.
        select: Option<Cow<'static, str>>,
    },
}

impl fmt::Display for Operand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Operand::Reg(r) => r.fmt(f),
            Operand::NotPred(r) => write!(f, "!{r}"),
            Operand::Imm(i) => i.fmt(f),
            Operand::Sreg(s) => s.fmt(f),
            Operand::Addr(a) => a.fmt(f),
            Operand::Vector(v) => crate::emit::write_list(f, "{", v, "}"),
            Operand::Label(l) => l.fmt(f),
            Operand::Symbol(s) => f.write_str(s),
            Operand::Sink => f.write_str("_"),
            Operand::Pair(p, q) => write!(f, "{p}|{q}"),
            Operand::SinkPair(p) => write!(f, "_|{p}"),
            Operand::Tensor { map, coords } => {
                write!(f, "[{map}")?;
                crate::emit::write_list(f, ", {", coords, "}]")
            }
            Operand::NotSymbol(s) => write!(f, "!{s}"),
            Operand::NamedPair(a, b) => write!(f, "{a}|{b}"),
            Operand::List(v) => crate::emit::write_list(f, "(", v, ")"),
            Operand::Element { array, index } => write!(f, "{array}[{index}]"),
            Operand::Video {
                negated,
                value,
                select,
            } => {
                if *negated {
                    f.write_str("-")?;
                }
                value.fmt(f)?;
                match select {
                    Some(s) => write!(f, ".{s}"),
                    None => Ok(()),
                }
            }
        }
    }
}

/// An instruction's opcode, `add.rn.f32`, written when formatted ([`InstrRef::opcode_text`]).
#[derive(Debug, Clone, Copy)]
pub struct OpcodeText<'a> {
    mnemonic: &'a str,
    modifiers: &'a [Cow<'static, str>],
}

impl<'a> OpcodeText<'a> {
    /// The mnemonic (`bra` of `bra.uni`).
    pub fn mnemonic(self) -> &'a str {
        self.mnemonic
    }
}

impl fmt::Display for OpcodeText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.mnemonic)?;
        for m in self.modifiers {
            write!(f, ".{m}")?;
        }
        Ok(())
    }
}

/// A predicate guard, `@p` or `@!p` (PTX ISA 9.3 "Predicated Execution").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Guard {
    /// The predicate register.
    pub pred: RegRef,
    /// True for `@!p`.
    pub negated: bool,
}

impl Guard {
    /// Writes `@p` / `@!p` without the formatting machinery (the printer writes every guard).
    pub(crate) fn write<W: fmt::Write + ?Sized>(&self, w: &mut W) -> fmt::Result {
        w.write_str(if self.negated { "@!" } else { "@" })?;
        self.pred.write_name(w)
    }
}

impl fmt::Display for Guard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.write(f)
    }
}

/// A guard on a predicate declared by name, `@p` / `@!p` (parsed text: nvcc's inline-asm blocks
/// declare `.reg .pred p;`). [`Guard`] holds numbered registers; this holds the rest.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NamedGuard {
    /// The predicate's name as written. Borrowed when the parser keeps the text for the process
    /// (a short name it met before, the `p` of nvcc's inline-asm blocks: issue 33).
    pub name: Cow<'static, str>,
    /// True for `@!p`.
    pub negated: bool,
}

impl fmt::Display for NamedGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let bang = if self.negated { "!" } else { "" };
        write!(f, "@{bang}{}", self.name)
    }
}

/// One instruction: guard, opcode (mnemonic and dot-modifiers in order), operands.
///
/// The typed builder methods make these, and a function body keeps each one's parts in the
/// function's lists ([`crate::module::BodyInstr`]); [`Instruction::view`] and
/// [`crate::Function::instruction`] read either as an [`InstrRef`]. `form` links the instruction
/// to its row of the form table, which says which targets and PTX versions have it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Instruction {
    /// `@p` / `@!p`.
    pub guard: Option<Guard>,
    /// The mnemonic: `add`, `cp.async.bulk.tensor` is `cp` with modifiers `async`, `bulk`...
    pub mnemonic: Cow<'static, str>,
    /// The dot-modifiers after the mnemonic, without dots, in order (type suffixes included).
    pub modifiers: Vec<Cow<'static, str>>,
    /// The operands.
    pub operands: Vec<Operand>,
    /// The form-table row, when known.
    pub form: Option<Form>,
    /// A comment written after the instruction (boxed text: a smaller instruction, issue 33).
    pub comment: Option<Box<str>>,
    /// A guard on a predicate declared by name (parsed text only; `guard` is `None` then). Boxed:
    /// few instructions have one, and every instruction is moved as it is built or read, so it
    /// is kept small (issue 33).
    pub named_guard: Option<Box<NamedGuard>>,
}

impl Instruction {
    /// An instruction with no operands yet.
    pub fn new(mnemonic: impl Into<Cow<'static, str>>) -> Instruction {
        Instruction {
            guard: None,
            mnemonic: mnemonic.into(),
            modifiers: Vec::new(),
            operands: Vec::new(),
            form: None,
            comment: None,
            named_guard: None,
        }
    }

    /// An instruction from its opcode as PTX writes it, mnemonic and modifiers joined by dots
    /// (`Instruction::from_opcode("cp.async.bulk")` is `cp` with modifiers `async`, `bulk`; PTX ISA
    /// 4.3.2 "Instruction Statements"). A `::` inside a modifier (`shared::cta`) stays in it.
    pub fn from_opcode(opcode: &'static str) -> Instruction {
        let mut parts = opcode.split('.');
        let mut i = Instruction::new(parts.next().unwrap_or_default());
        for m in parts {
            i = i.modifier(m);
        }
        i
    }

    /// Appends a modifier (without its dot).
    pub fn modifier(mut self, m: impl Into<Cow<'static, str>>) -> Instruction {
        self.modifiers.push(m.into());
        self
    }

    /// Appends a modifier when `cond` holds.
    pub fn modifier_if(self, cond: bool, m: impl Into<Cow<'static, str>>) -> Instruction {
        if cond { self.modifier(m) } else { self }
    }

    /// Appends a type suffix.
    pub fn ty(self, t: ScalarType) -> Instruction {
        self.modifier(t.name())
    }

    /// Appends an operand.
    pub fn operand(mut self, o: impl Into<Operand>) -> Instruction {
        self.operands.push(o.into());
        self
    }

    /// Appends operands in order: `.operands((d, a, b))` writes `d, a, b`.
    pub fn operands(mut self, ops: impl IntoOperands) -> Instruction {
        ops.push_onto(&mut self.operands);
        self
    }

    /// The instruction read through an [`InstrRef`], the shape the validator, the rules and the
    /// printer read, whether it is held alone (here) or in a function body
    /// ([`crate::Function::instruction`]).
    pub fn view(&self) -> InstrRef<'_> {
        InstrRef {
            guard: self.guard,
            mnemonic: &self.mnemonic,
            modifiers: &self.modifiers,
            operands: &self.operands,
            form: self.form,
            comment: self.comment.as_deref(),
            named_guard: self.named_guard.as_deref(),
            resolved: false,
        }
    }

    /// The opcode as written: `add.rn.f32`.
    pub fn opcode(&self) -> String {
        self.view().opcode()
    }

    /// The opcode as written, formatted only when shown: what messages hold, so that an
    /// instruction that breaks no rule costs no string (issue 33).
    pub fn opcode_text(&self) -> OpcodeText<'_> {
        self.view().opcode_text()
    }

    /// The type suffixes among the modifiers, in order (`cvt.rn.f32.s32` gives f32, s32).
    pub fn types(&self) -> impl Iterator<Item = ScalarType> + '_ {
        self.modifiers
            .iter()
            .filter_map(|m| ScalarType::from_name(m))
    }
}

/// An instruction borrowed: its parts as [`Instruction`] holds them, from an [`Instruction`]
/// ([`Instruction::view`]) or from a function body, whose instructions keep their opcode words
/// and operands in two lists per function ([`crate::Function::instruction`], issue 33: a parsed
/// module a third the size it was). What the validator, the form rules and the printer read.
#[derive(Debug, Clone, Copy)]
pub struct InstrRef<'a> {
    /// `@p` / `@!p`.
    pub guard: Option<Guard>,
    /// The mnemonic: `add`, `cp.async.bulk.tensor` is `cp` with modifiers `async`, `bulk`...
    pub mnemonic: &'a str,
    /// The dot-modifiers after the mnemonic, without dots, in order (type suffixes included).
    pub modifiers: &'a [Cow<'static, str>],
    /// The operands.
    pub operands: &'a [Operand],
    /// The form-table row, when known.
    pub form: Option<Form>,
    /// A comment written after the instruction.
    pub comment: Option<&'a str>,
    /// A guard on a predicate declared by name (parsed text only; `guard` is `None` then).
    pub named_guard: Option<&'a NamedGuard>,
    /// `form` is the form table's answer for this opcode and operand count, as the parser
    /// looked it up ([`crate::parse::resolve::resolve`]); the validator does not look it up
    /// again (issue 33). False for an instruction the builder wrote, whose row may be another
    /// that also matches.
    pub(crate) resolved: bool,
}

impl<'a> InstrRef<'a> {
    /// The instruction as an owned [`Instruction`] (its operands and words copied).
    pub fn to_instruction(&self) -> Instruction {
        Instruction {
            guard: self.guard,
            mnemonic: Cow::Owned(self.mnemonic.to_string()),
            modifiers: self.modifiers.to_vec(),
            operands: self.operands.to_vec(),
            form: self.form,
            comment: self.comment.map(Box::from),
            named_guard: self.named_guard.map(|g| Box::new(g.clone())),
        }
    }

    /// The opcode as written: `add.rn.f32`.
    pub fn opcode(&self) -> String {
        self.opcode_text().to_string()
    }

    /// The opcode as written, formatted only when shown: what messages hold, so that an
    /// instruction that breaks no rule costs no string (issue 33).
    pub fn opcode_text(&self) -> OpcodeText<'a> {
        OpcodeText {
            mnemonic: self.mnemonic,
            modifiers: self.modifiers,
        }
    }

    /// The type suffixes among the modifiers, in order (`cvt.rn.f32.s32` gives f32, s32).
    pub fn types(&self) -> impl Iterator<Item = ScalarType> + use<'a> {
        self.modifiers
            .iter()
            .filter_map(|m| ScalarType::from_name(m))
    }

    /// [`InstrRef::types`] read once into a list on the stack: the validator asks for them
    /// by position for every instruction (issue 33).
    pub(crate) fn type_list(&self) -> TypeList {
        let mut list = TypeList {
            types: [ScalarType::Pred; TypeList::CAPACITY],
            len: 0,
        };
        for t in self.types().take(TypeList::CAPACITY) {
            list.types[list.len] = t;
            list.len += 1;
        }
        list
    }
}

/// An instruction's type suffixes in order ([`InstrRef::type_list`]): the first
/// [`TypeList::CAPACITY`], more than any row names (PTX ISA 9.7: at most four, `mma`'s
/// `.dtype.atype.btype.ctype`).
#[derive(Debug, Clone, Copy)]
pub(crate) struct TypeList {
    types: [ScalarType; TypeList::CAPACITY],
    len: usize,
}

impl TypeList {
    /// How many types the list keeps.
    pub(crate) const CAPACITY: usize = 8;
}

impl std::ops::Deref for TypeList {
    type Target = [ScalarType];
    fn deref(&self) -> &[ScalarType] {
        &self.types[..self.len]
    }
}

/// An operand list written at once by [`Instruction::operands`]: a tuple of two to six values
/// that each convert into an [`Operand`].
pub trait IntoOperands {
    /// Appends the operands to `out`, in order.
    fn push_onto(self, out: &mut Vec<Operand>);
}

macro_rules! tuple_operands {
    ($(($($t:ident),+))*) => {$(
        impl<$($t: Into<Operand>),+> IntoOperands for ($($t,)+) {
            #[allow(non_snake_case)]
            fn push_onto(self, out: &mut Vec<Operand>) {
                let ($($t,)+) = self;
                $(out.push($t.into());)+
            }
        }
    )*};
}

tuple_operands! {
    (A, B)
    (A, B, C)
    (A, B, C, D)
    (A, B, C, D, E)
    (A, B, C, D, E, F)
}

/// `From` for the operand kinds that wrap one value as it is.
macro_rules! operand_from {
    ($($from:ty => $variant:ident,)*) => {$(
        impl From<$from> for Operand {
            fn from(x: $from) -> Operand {
                Operand::$variant(x)
            }
        }
    )*};
}

operand_from! {
    RegRef => Reg,
    Imm => Imm,
    SpecialReg => Sreg,
    Address => Addr,
    Label => Label,
}

impl<T: crate::reg::ty::RegType> From<crate::reg::Reg<T>> for Operand {
    fn from(r: crate::reg::Reg<T>) -> Operand {
        Operand::Reg(r.as_ref())
    }
}
impl<T: crate::reg::ty::RegType> From<crate::reg::Sinkable<T>> for Operand {
    fn from(r: crate::reg::Sinkable<T>) -> Operand {
        match r {
            crate::reg::Sinkable::Reg(r) => Operand::Reg(r.as_ref()),
            crate::reg::Sinkable::Sink => Operand::Sink,
        }
    }
}
impl<S: crate::space::spaces::Space> From<crate::space::Addr<S>> for Operand {
    fn from(a: crate::space::Addr<S>) -> Operand {
        Operand::Addr(a.into_address())
    }
}

/// A source operand of type `T`: a register or an immediate. Rust literals convert:
/// `1u32` for `U32`/`B32`, `1i32` for `S32`, `1.0f32` for `F32`...
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Src<T: crate::reg::ty::RegType> {
    /// A register.
    Reg(crate::reg::Reg<T>),
    /// An immediate.
    Imm(Imm),
}

impl<T: crate::reg::ty::RegType> From<Src<T>> for Operand {
    fn from(s: Src<T>) -> Operand {
        match s {
            Src::Reg(r) => Operand::Reg(r.as_ref()),
            Src::Imm(i) => Operand::Imm(i),
        }
    }
}

impl<T: crate::reg::ty::RegType> From<crate::reg::Reg<T>> for Src<T> {
    fn from(r: crate::reg::Reg<T>) -> Src<T> {
        Src::Reg(r)
    }
}

macro_rules! src_from {
    ($($rust:ty => $marker:ident, $imm:expr;)*) => {$(
        impl From<$rust> for Src<crate::reg::ty::$marker> {
            fn from(x: $rust) -> Self {
                #[allow(clippy::redundant_closure_call)]
                Src::Imm(($imm)(x))
            }
        }
    )*};
}

src_from! {
    u16 => U16, |x: u16| Imm::UInt(x as u64);
    u16 => B16, |x: u16| Imm::UInt(x as u64);
    i16 => S16, |x: i16| Imm::Int(x as i64);
    u32 => U32, |x: u32| Imm::UInt(x as u64);
    u32 => B32, |x: u32| Imm::UInt(x as u64);
    i32 => S32, |x: i32| Imm::Int(x as i64);
    u64 => U64, |x: u64| Imm::UInt(x);
    u64 => B64, |x: u64| Imm::UInt(x);
    i64 => S64, |x: i64| Imm::Int(x);
    f32 => F32, Imm::f32;
    f64 => F64, Imm::f64;
}
