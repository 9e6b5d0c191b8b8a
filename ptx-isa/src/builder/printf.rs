//! Device `printf` through the driver's `vprintf` system call.
//!
//! The call ABI (the PTX Writer's Guide to Interoperability, "System Calls: vprintf"; CUDA C
//! Programming Guide, "Formatted Output"; the call itself, PTX ISA 9.7.12.5 "call"): `.extern .func (.param .b32 status) vprintf (.param .b64 format, .param .b64 args)`.
//! `format` is the generic address of a NUL-terminated string in global memory; `args` the
//! generic address of a local buffer holding the arguments one after another, each at an offset
//! aligned to its own size, promoted as C variadic arguments are (C11 6.5.2.2p7, "default
//! argument promotions": `float` to `double`, integers narrower than `int` to `int`).
//!
//! [`Module::printf_format`] declares the string and the prototype and reads the format's
//! conversions; [`FunctionBuilder::printf`] checks the arguments against them, packs them and
//! calls `vprintf`.
//!
//! ```
//! use ptx_isa::builder::PrintfArg;
//! use ptx_isa::{Module, Target, ty};
//! let mut m = Module::new(Target::Sm80);
//! let fmt = m.printf_format("i=%d x=%f\n")?;
//! let mut k = m.entry("hello");
//! let (i, x) = (k.reg::<ty::S32>(), k.reg::<ty::F32>());
//! k.mov(i, 7i32)?;
//! k.mov(x, 0.5f32)?;
//! k.printf(&fmt, &[i.into(), x.into()])?; // x goes out as an f64 at offset 8
//! assert!(k.printf(&fmt, &[x.into(), i.into()]).is_err()); // %d takes an integer
//! k.ret()?;
//! m.add(k.finish()?)?;
//! let ptx = m.to_ptx()?;
//! assert!(ptx.contains(".extern .func (.param .b32 vprintf_status) vprintf"));
//! assert!(ptx.contains("cvt.f64.f32"));
//! # Ok::<(), ptx_isa::Error>(())
//! ```

use super::FunctionBuilder;
use crate::error::{Error, ErrorKind, Result};
use crate::module::{Function, Module, Param, ParamKind, Statement, Variable};
use crate::reg::{Reg, ty};
use crate::space::{Addr, StateSpace, spaces};
use crate::types::ScalarType;

/// One `printf` argument: a typed register.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PrintfArg {
    /// `.s16`, promoted to a 32-bit `int`.
    S16(Reg<ty::S16>),
    /// `.u16`, promoted to a 32-bit `int`.
    U16(Reg<ty::U16>),
    /// `.s32` (`%d`, `%i`).
    S32(Reg<ty::S32>),
    /// `.u32` (`%u`, `%x`, ...).
    U32(Reg<ty::U32>),
    /// `.s64` (`%lld`, `%ld`).
    S64(Reg<ty::S64>),
    /// `.u64` (`%llu`, `%llx`, ...).
    U64(Reg<ty::U64>),
    /// `.f32`, promoted to `double`.
    F32(Reg<ty::F32>),
    /// `.f64` (`%f`, `%e`, `%g`, `%a`).
    F64(Reg<ty::F64>),
    /// A generic address (`%p`).
    Ptr(Reg<ty::U64>),
}

macro_rules! printf_from {
    ($($t:ident => $v:ident),*) => {$(
        impl From<Reg<ty::$t>> for PrintfArg {
            fn from(r: Reg<ty::$t>) -> PrintfArg {
                PrintfArg::$v(r)
            }
        }
    )*};
}
printf_from!(S16 => S16, U16 => U16, S32 => S32, U32 => U32, S64 => S64, U64 => U64, F32 => F32, F64 => F64);

/// What a conversion of the format takes, after promotion.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PrintfClass {
    /// A 32-bit integer: `%d %i %u %o %x %X %c` (and `h`/`hh` lengths, which take a promoted int).
    Int32,
    /// A 64-bit integer: `%ld %lld %lu %llx ...` (`long` is 64-bit on the 64-bit ABI).
    Int64,
    /// A `double`: `%f %F %e %E %g %G %a %A` (`l` and `L` lengths are the same here).
    Double,
    /// A pointer: `%p`.
    Pointer,
}

impl PrintfArg {
    /// The class of the argument after promotion.
    pub fn class(self) -> PrintfClass {
        match self {
            PrintfArg::S16(_) | PrintfArg::U16(_) | PrintfArg::S32(_) | PrintfArg::U32(_) => {
                PrintfClass::Int32
            }
            PrintfArg::S64(_) | PrintfArg::U64(_) => PrintfClass::Int64,
            PrintfArg::F32(_) | PrintfArg::F64(_) => PrintfClass::Double,
            PrintfArg::Ptr(_) => PrintfClass::Pointer,
        }
    }
}

impl PrintfClass {
    /// Bytes in the argument buffer, which is also the alignment.
    pub fn bytes(self) -> u32 {
        match self {
            PrintfClass::Int32 => 4,
            PrintfClass::Int64 | PrintfClass::Double | PrintfClass::Pointer => 8,
        }
    }
}

/// A format string declared in a module: its `.global` symbol, its conversions and the
/// `vprintf` prototype to call.
#[derive(Debug, Clone, PartialEq)]
pub struct PrintfFormat {
    symbol: String,
    text: String,
    conversions: Vec<PrintfClass>,
    vprintf: Function,
}

impl PrintfFormat {
    /// The format text.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The global symbol holding it.
    pub fn symbol(&self) -> &str {
        &self.symbol
    }

    /// What each conversion takes, in order.
    pub fn conversions(&self) -> &[PrintfClass] {
        &self.conversions
    }
}

fn format_error(text: &str, msg: impl Into<String>) -> Error {
    Error::new(ErrorKind::Invalid, msg).at_instruction(format!("printf {text:?}"))
}

/// Reads the conversions of a printf format (C11 7.21.6.1: `%[flags][width][.precision]
/// [length]conversion`). `*` widths, `%s` and `%n` are refused: the device passes no strings and
/// the builder cannot check a width taken from the arguments.
pub fn printf_conversions(text: &str) -> Result<Vec<PrintfClass>> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] != b'%' {
            i += 1;
            continue;
        }
        i += 1;
        if b.get(i) == Some(&b'%') {
            i += 1;
            continue;
        }
        while matches!(b.get(i), Some(b'-' | b'+' | b' ' | b'#' | b'0')) {
            i += 1;
        }
        while matches!(b.get(i), Some(c) if c.is_ascii_digit() || *c == b'.') {
            i += 1;
        }
        if b.get(i) == Some(&b'*') {
            return Err(format_error(
                text,
                "a `*` width or precision is not supported",
            ));
        }
        let mut long = 0;
        while let Some(c @ (b'h' | b'l' | b'L' | b'z' | b'j' | b't')) = b.get(i) {
            if matches!(c, b'l' | b'z' | b'j' | b't') {
                long += 1;
            }
            i += 1;
        }
        let class = match b.get(i) {
            Some(b'd' | b'i' | b'u' | b'o' | b'x' | b'X' | b'c') if long > 0 => PrintfClass::Int64,
            Some(b'd' | b'i' | b'u' | b'o' | b'x' | b'X' | b'c') => PrintfClass::Int32,
            Some(b'f' | b'F' | b'e' | b'E' | b'g' | b'G' | b'a' | b'A') => PrintfClass::Double,
            Some(b'p') => PrintfClass::Pointer,
            Some(c) => {
                return Err(format_error(
                    text,
                    format!(
                        "conversion `%{}` is not supported on the device",
                        *c as char
                    ),
                ));
            }
            None => return Err(format_error(text, "the format ends inside a conversion")),
        };
        out.push(class);
        i += 1;
    }
    Ok(out)
}

impl Module {
    /// Declares `text` as a NUL-terminated `.global` string and the `vprintf` prototype (once
    /// per module), and reads the format's conversions.
    pub fn printf_format(&mut self, text: &str) -> Result<PrintfFormat> {
        let conversions = printf_conversions(text)?;
        if text.as_bytes().contains(&0) {
            return Err(format_error(text, "the format holds a NUL byte"));
        }
        let vprintf = self.extern_func(
            "vprintf",
            vec![
                Param {
                    name: "vprintf_format".into(),
                    kind: ParamKind::Scalar(ScalarType::B64),
                },
                Param {
                    name: "vprintf_args".into(),
                    kind: ParamKind::Scalar(ScalarType::B64),
                },
            ],
            Some(Param {
                name: "vprintf_status".into(),
                kind: ParamKind::Scalar(ScalarType::B32),
            }),
        )?;
        let n = self
            .variables()
            .iter()
            .filter(|v| v.name.starts_with("printf_fmt_"))
            .count();
        let mut bytes = text.as_bytes().to_vec();
        bytes.push(0);
        let symbol = self.global_bytes(&format!("printf_fmt_{n}"), 1, &bytes, None)?;
        Ok(PrintfFormat {
            symbol,
            text: text.to_string(),
            conversions,
            vprintf,
        })
    }
}

impl FunctionBuilder {
    /// `printf(format, args...)`: checks each argument against its conversion, stores the
    /// promoted arguments into a `.local` buffer at offsets aligned to their sizes, and calls
    /// `vprintf` with the generic addresses of the string and the buffer. Every thread that
    /// reaches it prints: guard it with a branch for one thread.
    pub fn printf(&mut self, format: &PrintfFormat, args: &[PrintfArg]) -> Result<()> {
        let mn = "printf";
        if args.len() != format.conversions.len() {
            return Err(self.err(
                ErrorKind::OperandCount,
                mn,
                format!(
                    "{:?} has {} conversion(s), {} argument(s) given",
                    format.text,
                    format.conversions.len(),
                    args.len()
                ),
            ));
        }
        let mut layout = Vec::with_capacity(args.len());
        let mut offset = 0u32;
        for (n, (a, want)) in args.iter().zip(&format.conversions).enumerate() {
            if a.class() != *want {
                return Err(self
                    .err(
                        ErrorKind::OperandType,
                        mn,
                        format!(
                            "conversion {n} of {:?} takes {want:?}, the argument is {a:?}",
                            format.text
                        ),
                    )
                    .at_operand(n));
            }
            let size = want.bytes();
            offset = offset.next_multiple_of(size);
            layout.push(offset);
            offset += size;
        }
        let buffer = self.reg::<ty::U64>();
        if args.is_empty() {
            self.mov(buffer, 0u64)?;
        } else {
            let name = format!("{}_{}", format.symbol, self.next_local_param());
            self.push_statement(Statement::Var(Box::new(Variable {
                name: name.clone(),
                space: StateSpace::Local,
                align: 8,
                bytes: Some(offset.next_multiple_of(8)),
                elem: ScalarType::B8,
                vector: None,
                dims: vec![Some(offset.next_multiple_of(8))],
                linkage: None,
                init: None,
                opaque: None,
            })));
            for (a, at) in args.iter().zip(layout) {
                let to = Addr::<spaces::Local>::symbol(name.clone()).offset(i64::from(at));
                match *a {
                    PrintfArg::S16(r) => {
                        let w = self.reg::<ty::S32>();
                        self.cvt(w, r)?;
                        self.st(to, w)?;
                    }
                    PrintfArg::U16(r) => {
                        let w = self.reg::<ty::U32>();
                        self.cvt(w, r)?;
                        self.st(to, w)?;
                    }
                    PrintfArg::S32(r) => self.st(to, r)?,
                    PrintfArg::U32(r) => self.st(to, r)?,
                    PrintfArg::S64(r) => self.st(to, r)?,
                    PrintfArg::U64(r) | PrintfArg::Ptr(r) => self.st(to, r)?,
                    PrintfArg::F32(r) => {
                        let w = self.reg::<ty::F64>();
                        self.cvt(w, r)?;
                        self.st(to, w)?;
                    }
                    PrintfArg::F64(r) => self.st(to, r)?,
                }
            }
            self.mov_symbol_addr(buffer, &name)?;
            self.cvta_from(StateSpace::Local, buffer, buffer)?;
        }
        let fmt = self.reg::<ty::U64>();
        self.mov_symbol_addr(fmt, &format.symbol)?;
        self.cvta_from(StateSpace::Global, fmt, fmt)?;
        let status = self.reg::<ty::B32>();
        self.call(
            &format.vprintf,
            &[
                (fmt.as_ref(), ScalarType::B64),
                (buffer.as_ref(), ScalarType::B64),
            ],
            Some((status.as_ref(), ScalarType::B32)),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions() {
        use PrintfClass::*;
        assert_eq!(
            printf_conversions("%d %5.2f %% %llx %p %-08u %hhd %lf %c\n").unwrap(),
            [Int32, Double, Int64, Pointer, Int32, Int32, Double, Int32]
        );
        assert!(printf_conversions("%s").is_err());
        assert!(printf_conversions("%*d").is_err());
        assert!(printf_conversions("x=%").is_err());
        assert_eq!(printf_conversions("plain").unwrap(), []);
    }
}
