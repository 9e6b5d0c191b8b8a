//! The parser: text to an expression tree, never panicking, with the column of any error.

use super::CalcError;
use crate::layout::Layout;
use crate::shape::IntTuple;

/// Deeper nesting than this is refused rather than risking the stack.
const MAX_DEPTH: usize = 64;

/// An expression of the calculator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Expr {
    /// An integer or a tuple without a stride (a shape, a cotarget, a profile).
    Tuple(IntTuple),
    /// `shape:stride`.
    Layout(IntTuple, IntTuple, usize),
    /// `<e0, e1, ...>`.
    Tiler(Vec<Expr>),
    /// `name(args)`, with the column of the name.
    Call(String, Vec<Expr>, usize),
}

pub(crate) struct Parser {
    chars: Vec<char>,
    pos: usize,
    depth: usize,
}

impl Parser {
    pub(crate) fn new(text: &str) -> Parser {
        Parser {
            chars: text.chars().collect(),
            pos: 0,
            depth: 0,
        }
    }

    fn err<T>(&self, message: impl Into<String>) -> Result<T, CalcError> {
        Err(CalcError::Syntax {
            column: self.pos + 1,
            message: message.into(),
        })
    }

    fn skip_ws(&mut self) {
        while self.chars.get(self.pos).is_some_and(|c| c.is_whitespace()) {
            self.pos += 1;
        }
    }

    fn peek(&mut self) -> Option<char> {
        self.skip_ws();
        self.chars.get(self.pos).copied()
    }

    fn expect(&mut self, c: char) -> Result<(), CalcError> {
        match self.peek() {
            Some(x) if x == c => {
                self.pos += 1;
                Ok(())
            }
            Some(x) => self.err(format!("expected `{c}`, found `{x}`")),
            None => self.err(format!("expected `{c}`, found the end")),
        }
    }

    /// Parses the whole text as one expression.
    pub(crate) fn parse_all(&mut self) -> Result<Expr, CalcError> {
        let e = self.expr()?;
        match self.peek() {
            None => Ok(e),
            Some(c) => self.err(format!("unexpected `{c}` after the expression")),
        }
    }

    fn enter(&mut self) -> Result<(), CalcError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return self.err(format!("nested deeper than {MAX_DEPTH}"));
        }
        Ok(())
    }

    fn expr(&mut self) -> Result<Expr, CalcError> {
        self.enter()?;
        let e = match self.peek() {
            Some('<') => {
                self.pos += 1;
                let items = self.list('>')?;
                Expr::Tiler(items)
            }
            Some(c) if c.is_ascii_alphabetic() || c == '_' => {
                let column = self.pos + 1;
                let name = self.ident();
                self.expect('(')?;
                let args = self.list(')')?;
                Expr::Call(name, args, column)
            }
            Some(_) => {
                let column = self.pos + 1;
                let shape = self.tuple()?;
                if self.peek() == Some(':') {
                    self.pos += 1;
                    let stride = self.tuple()?;
                    Expr::Layout(shape, stride, column)
                } else {
                    Expr::Tuple(shape)
                }
            }
            None => return self.err("expected an expression, found the end"),
        };
        self.depth -= 1;
        Ok(e)
    }

    /// `e0, e1, ... close`, after the opening bracket.
    fn list(&mut self, close: char) -> Result<Vec<Expr>, CalcError> {
        self.separated(close, Self::expr)
    }

    /// `item, item, ... close` (at least one item), after the opening bracket.
    fn separated<T>(
        &mut self,
        close: char,
        item: fn(&mut Self) -> Result<T, CalcError>,
    ) -> Result<Vec<T>, CalcError> {
        let mut items = vec![item(self)?];
        loop {
            match self.peek() {
                Some(',') => {
                    self.pos += 1;
                    items.push(item(self)?);
                }
                Some(c) if c == close => {
                    self.pos += 1;
                    return Ok(items);
                }
                Some(c) => return self.err(format!("expected `,` or `{close}`, found `{c}`")),
                None => return self.err(format!("expected `{close}`, found the end")),
            }
        }
    }

    fn ident(&mut self) -> String {
        take_ident(&self.chars, &mut self.pos)
    }

    fn tuple(&mut self) -> Result<IntTuple, CalcError> {
        self.enter()?;
        let t = match self.peek() {
            Some('(') => {
                self.pos += 1;
                let items = self.separated(')', Self::tuple)?;
                // `(4)` is the integer 4, as CuTe prints a rank-1 tuple.
                IntTuple::Tuple(items).unwrap_single()
            }
            _ => IntTuple::Int(self.int()?),
        };
        self.depth -= 1;
        Ok(t)
    }

    fn int(&mut self) -> Result<i64, CalcError> {
        self.skip_ws();
        let start = self.pos;
        if self.chars.get(self.pos) == Some(&'-') {
            self.pos += 1;
        }
        let digits = self.pos;
        while self.chars.get(self.pos).is_some_and(char::is_ascii_digit) {
            self.pos += 1;
        }
        if self.pos == digits {
            self.pos = start;
            return match self.chars.get(start) {
                Some(c) => self.err(format!("expected an integer, found `{c}`")),
                None => self.err("expected an integer, found the end"),
            };
        }
        let text: String = self.chars[start..self.pos].iter().collect();
        match text.parse::<i64>() {
            Ok(v) => Ok(v),
            Err(_) => {
                self.pos = start;
                self.err(format!("integer `{text}` does not fit in 64 bits"))
            }
        }
    }
}

/// Parses CuTe notation `shape:stride`, or a bare shape taken column-major.
/// The identifier (ASCII letters, digits and `_`; possibly empty) at `chars[*pos..]`, with `pos`
/// moved past it. The layout calculator's names and the tile notation's axis names are read so.
pub(crate) fn take_ident(chars: &[char], pos: &mut usize) -> String {
    let start = *pos;
    while chars
        .get(*pos)
        .is_some_and(|c| c.is_ascii_alphanumeric() || *c == '_')
    {
        *pos += 1;
    }
    chars[start..*pos].iter().collect()
}

pub(crate) fn parse_layout(text: &str) -> Result<Layout, CalcError> {
    let mut p = Parser::new(text);
    let shape = p.tuple()?;
    let layout = if p.peek() == Some(':') {
        p.pos += 1;
        let stride = p.tuple()?;
        Layout::new(shape, stride)
    } else {
        Layout::column_major(shape)
    };
    if let Some(c) = p.peek() {
        return p.err(format!("unexpected `{c}` after the layout"));
    }
    layout.map_err(|source| CalcError::Layout {
        func: "notation",
        source,
    })
}
