//! The notation: `S[(4, 8):(1, 4)]`, `S[(128, 8):(1@tid_in_wg, 1)]`, nested groups
//! `S[((4, 16), 8):((32@TLane, 1@TLane), 1@TCol)]`, and the ptxkit extensions for replicas and
//! offsets: `S[...] + R[4:32@laneid] + 16@TCol`. A stride without `@axis` is on `m`.

use std::fmt;
use std::str::FromStr;

use super::{Axis, Iter, TileError, TileLayout};

fn stride_text(it: &Iter) -> String {
    if it.axis == Axis::M {
        it.stride.to_string()
    } else {
        format!("{}@{}", it.stride, it.axis)
    }
}

/// `(a, b)` for several items, `a` for one.
fn group(items: Vec<String>) -> String {
    if items.len() == 1 {
        items.into_iter().next().unwrap_or_default()
    } else {
        format!("({})", items.join(", "))
    }
}

fn iters_text(dims: &[Vec<Iter>]) -> (String, String) {
    let extents = dims
        .iter()
        .map(|d| group(d.iter().map(|i| i.extent.to_string()).collect()))
        .collect();
    let strides = dims
        .iter()
        .map(|d| group(d.iter().map(stride_text).collect()))
        .collect();
    // One dimension of several iterators keeps its own parentheses: `((4, 16)):(...)`, so it is
    // not read back as two dimensions.
    let top = |items: Vec<String>| {
        if dims.len() == 1 && dims[0].len() > 1 {
            format!("({})", items.join(", "))
        } else {
            group(items)
        }
    };
    (top(extents), top(strides))
}

impl fmt::Display for TileLayout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let (e, s) = iters_text(&self.dims);
        write!(f, "S[{e}:{s}]")?;
        if !self.replica.is_empty() {
            let dims: Vec<Vec<Iter>> = self.replica.iter().map(|i| vec![*i]).collect();
            let (e, s) = iters_text(&dims);
            write!(f, " + R[{e}:{s}]")?;
        }
        for (a, v) in &self.offset {
            if *a == Axis::M {
                write!(f, " + {v}")?
            } else {
                write!(f, " + {v}@{a}")?
            }
        }
        Ok(())
    }
}

/// A nested group of leaves as read: an extent or a stride with its axis.
enum Tree<T> {
    Leaf(T),
    Group(Vec<Tree<T>>),
}

struct Reader {
    chars: Vec<char>,
    pos: usize,
}

impl Reader {
    fn err<T>(&self, message: impl Into<String>) -> Result<T, TileError> {
        Err(TileError::Syntax {
            column: self.pos + 1,
            message: message.into(),
        })
    }

    fn peek(&mut self) -> Option<char> {
        while self.chars.get(self.pos).is_some_and(|c| c.is_whitespace()) {
            self.pos += 1;
        }
        self.chars.get(self.pos).copied()
    }

    fn eat(&mut self, s: &str) -> bool {
        self.peek();
        let n = s.chars().count();
        if self
            .chars
            .get(self.pos..self.pos + n)
            .is_some_and(|w| w.iter().copied().eq(s.chars()))
        {
            self.pos += n;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, s: &str) -> Result<(), TileError> {
        if self.eat(s) {
            Ok(())
        } else {
            self.err(format!("expected `{s}`"))
        }
    }

    fn int(&mut self) -> Result<i64, TileError> {
        self.peek();
        let start = self.pos;
        if self.chars.get(self.pos) == Some(&'-') {
            self.pos += 1;
        }
        while self.chars.get(self.pos).is_some_and(char::is_ascii_digit) {
            self.pos += 1;
        }
        let text: String = self.chars[start..self.pos].iter().collect();
        match text.parse() {
            Ok(v) => Ok(v),
            Err(_) => {
                self.pos = start;
                self.err("expected an integer")
            }
        }
    }

    fn stride(&mut self) -> Result<(i64, Axis), TileError> {
        let v = self.int()?;
        if !self.eat("@") {
            return Ok((v, Axis::M));
        }
        let start = self.pos;
        let name = crate::calc::parse::take_ident(&self.chars, &mut self.pos);
        match name.parse() {
            Ok(a) => Ok((v, a)),
            Err(e) => {
                self.pos = start;
                Err(e)
            }
        }
    }

    fn tree<T>(
        &mut self,
        leaf: &mut impl FnMut(&mut Reader) -> Result<T, TileError>,
        depth: usize,
    ) -> Result<Tree<T>, TileError> {
        if depth > 2 {
            return self.err("tile layouts nest at most two levels");
        }
        if !self.eat("(") {
            return Ok(Tree::Leaf(leaf(self)?));
        }
        let mut items = vec![self.tree(leaf, depth + 1)?];
        while self.eat(",") {
            items.push(self.tree(leaf, depth + 1)?);
        }
        self.expect(")")?;
        Ok(Tree::Group(items))
    }

    /// `extents:strides` as dimensions of iterators.
    fn iters(&mut self) -> Result<Vec<Vec<Iter>>, TileError> {
        let column = self.pos + 1;
        let extents = self.tree(&mut Reader::int, 0)?;
        self.expect(":")?;
        let strides = self.tree(&mut Reader::stride, 0)?;
        let mismatch = || TileError::Syntax {
            column,
            message: "extents and strides are not congruent".into(),
        };
        let (extents, strides) = (top_level(extents), top_level(strides));
        if extents.len() != strides.len() {
            return Err(mismatch());
        }
        let mut dims = Vec::new();
        for (e, s) in extents.into_iter().zip(strides) {
            let pairs = match (e, s) {
                (Tree::Leaf(e), Tree::Leaf(s)) => vec![(e, s)],
                (Tree::Group(e), Tree::Group(s)) if e.len() == s.len() => {
                    let mut v = Vec::new();
                    for (e, s) in e.into_iter().zip(s) {
                        match (e, s) {
                            (Tree::Leaf(e), Tree::Leaf(s)) => v.push((e, s)),
                            _ => return Err(mismatch()),
                        }
                    }
                    v
                }
                _ => return Err(mismatch()),
            };
            dims.push(
                pairs
                    .into_iter()
                    .map(|(e, (s, a))| Iter::new(e, s, a))
                    .collect(),
            );
        }
        Ok(dims)
    }
}

/// The top-level groups of a tree: a lone leaf is one group.
fn top_level<T>(t: Tree<T>) -> Vec<Tree<T>> {
    match t {
        Tree::Group(g) => g,
        leaf => vec![leaf],
    }
}

impl FromStr for TileLayout {
    type Err = TileError;

    fn from_str(s: &str) -> Result<TileLayout, TileError> {
        let mut r = Reader {
            chars: s.chars().collect(),
            pos: 0,
        };
        r.expect("S[")?;
        let dims = r.iters()?;
        r.expect("]")?;
        let mut replica = Vec::new();
        let mut offset = Vec::new();
        while r.eat("+") {
            if r.eat("R[") {
                replica.extend(r.iters()?.into_iter().flatten());
                r.expect("]")?;
            } else {
                offset.push(r.stride().map(|(v, a)| (a, v))?);
            }
        }
        if let Some(c) = r.peek() {
            return r.err(format!("unexpected `{c}`"));
        }
        TileLayout::new(dims, replica, offset)
    }
}
