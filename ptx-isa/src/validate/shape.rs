//! The row checks of an instruction, remembered per instruction shape (issue 33): the target and
//! version gates of its row and of the features its modifiers imply ([`crate::forms::features`]),
//! the row's rules ([`crate::forms::rules`]) and the operands' kinds against the row's slots
//! (an address, a value, a pair). They read the row, the opcode's words, and of the operands
//! their count, their kinds, and what vectors, tensors and video operands hold (and immediates,
//! for a row whose rules read their values). An instruction whose operands are of the other kinds (registers, addresses,
//! names, sinks: nearly all of a module) gets the diagnostics the last instruction of its shape
//! got: on the 1.3 MB CUTLASS module, 31,000 instructions of a few hundred shapes, where the
//! checks were a seventh of `check`.

use std::borrow::Cow;
use std::sync::Arc;

use hashbrown::HashMap;

use super::Severity;
use crate::error::ErrorKind;
use crate::forms::Form;
use crate::instr::{InstrRef, Operand};

/// An instruction's shape, in numbers: the row, the counts and the mnemonic's length; the
/// mnemonic's bytes (at most 8); the operands' kinds, four bits each ([`tag`]); each modifier by
/// its address and length (a borrowed, `'static` text is never freed, so an address names one
/// text for good).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Shape([u64; 3 + MODIFIERS]);

impl std::hash::Hash for Shape {
    /// The numbers folded into one (equal shapes fold alike; the table compares whole shapes),
    /// hashed as one number rather than as 72 bytes.
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        let folded = self.0.iter().fold(0u64, |x, &w| {
            (x ^ w).wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(29)
        });
        h.write_u64(folded);
    }
}

/// The most modifiers of a [`Shape`].
const MODIFIERS: usize = 6;

/// The most operands of a [`Shape`].
const OPERANDS: usize = 16;

/// The most shapes a [`Shapes`] keeps (past them, instructions are checked without it).
const KEPT: usize = 1 << 12;

/// An operand's kind (1-11), for an operand that no row check of `form` reads more of than its
/// kind; `None` for the others (vectors, tensors, lists, video operands, elements and named
/// pairs, which may hold them, and immediates where a rule of the row reads their value).
fn tag(form: Form, o: &Operand) -> Option<u64> {
    Some(match o {
        Operand::Imm(_) if !crate::forms::rules::reads_immediates(form) => 11,
        Operand::Reg(_) => 1,
        Operand::NotPred(_) => 2,
        Operand::Sreg(_) => 3,
        Operand::Addr(_) => 4,
        Operand::Label(_) => 5,
        Operand::Symbol(_) => 6,
        Operand::Sink => 7,
        Operand::Pair(..) => 8,
        Operand::SinkPair(_) => 9,
        Operand::NotSymbol(_) => 10,
        Operand::Imm(_)
        | Operand::Vector(_)
        | Operand::Tensor { .. }
        | Operand::List(_)
        | Operand::NamedPair(..)
        | Operand::Element { .. }
        | Operand::Video { .. } => return None,
    })
}

impl Shape {
    /// `i`'s shape as an instruction of row `form`; `None` when `i` has more modifiers or
    /// operands than a shape holds, a mnemonic longer than 8 bytes, a modifier that is not
    /// borrowed, or an operand the checks read more of than its kind.
    pub(crate) fn of(form: Form, i: &InstrRef<'_>) -> Option<Shape> {
        let mnemonic = i.mnemonic.as_bytes();
        if i.modifiers.len() > MODIFIERS || i.operands.len() > OPERANDS || mnemonic.len() > 8 {
            return None;
        }
        let mut k = [0u64; 3 + MODIFIERS];
        k[0] = form as u64
            | (i.modifiers.len() as u64) << 16
            | (i.operands.len() as u64) << 24
            | (mnemonic.len() as u64) << 32;
        for (n, &b) in mnemonic.iter().enumerate() {
            k[1] |= u64::from(b) << (8 * n);
        }
        for (n, o) in i.operands.iter().enumerate() {
            k[2] |= tag(form, o)? << (4 * n);
        }
        for (m, slot) in i.modifiers.iter().zip(&mut k[3..]) {
            let Cow::Borrowed(m) = m else {
                return None;
            };
            // User-space addresses fit 48 bits; the length goes above them.
            let (at, len) = (m.as_ptr() as usize as u64, m.len() as u64);
            if at >> 48 != 0 || len >> 16 != 0 {
                return None;
            }
            *slot = at | len << 48;
        }
        Some(Shape(k))
    }
}

/// One diagnostic of a shape's checks, without its place.
type Said = (Severity, ErrorKind, Arc<str>);

/// The diagnostics the row checks gave each shape of one module's instructions.
#[derive(Debug, Default)]
pub(crate) struct Shapes {
    said: HashMap<Shape, Box<[Said]>>,
}

impl Shapes {
    /// What the checks said of an instruction of shape `s`, when one was checked.
    pub(crate) fn get(&self, s: &Shape) -> Option<&[Said]> {
        self.said.get(s).map(|d| &**d)
    }

    /// Keeps `said`, what the checks said of an instruction of shape `s`.
    pub(crate) fn keep(&mut self, s: Shape, said: impl Iterator<Item = Said>) {
        if self.said.len() < KEPT {
            self.said.insert(s, said.collect());
        }
    }
}
