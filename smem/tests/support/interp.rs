//! A small PTX interpreter for the straight-line integer code smem emits: it runs the
//! `ptx_isa::Instruction`s of a `Function` body over a register file, independently of
//! `AluProgram::eval`, so the property tests compare two implementations.
//!
//! Semantics (PTX ISA 9.7.1 integer arithmetic (unsigned `div` and `rem` too), 9.7.8 logic and shift, 9.7.9.21 cvt):
//! results wrap to the instruction's width; `shl` and `shr.u` clamp the `.u32` amount to the
//! width, so an amount of the width or more gives 0. Register classes are checked against the
//! instruction's type (`%r` for 32 bits, `%rd` for 64), and reading a register nothing wrote is an
//! error: a lowering that mixes widths or uses an undefined value fails here.
//!
//! Besides the ALU ops it knows what the test kernels around them need: `ld.param`, `mov` of a
//! shared symbol's address, `cvta.to.global`, `st.global` and `ret`.

use std::collections::HashMap;

use ptx_isa::module::Statement;
use ptx_isa::space::AddrBase;
use ptx_isa::{Function, Imm, InstrRef, Operand, RegClass, RegRef};

/// The machine state: registers, kernel parameters, symbol addresses and stored memory.
#[derive(Debug, Default)]
pub struct Interp {
    regs: HashMap<RegRef, u64>,
    params: HashMap<String, u64>,
    symbols: HashMap<String, u64>,
    /// Every `st.global`: address to value.
    pub memory: HashMap<u64, u64>,
    /// Instructions executed.
    pub executed: usize,
}

fn width_of(ty: &str) -> Result<u32, String> {
    match ty {
        "b32" | "u32" | "s32" => Ok(32),
        "b64" | "u64" | "s64" => Ok(64),
        t => Err(format!("type .{t} is not handled")),
    }
}

fn mask(bits: u32) -> u64 {
    if bits == 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

fn class_bits(c: RegClass) -> Option<u32> {
    match c {
        RegClass::B32 => Some(32),
        RegClass::B64 => Some(64),
        _ => None,
    }
}

impl Interp {
    /// An empty machine.
    pub fn new() -> Interp {
        Interp::default()
    }

    /// Sets kernel parameter `name`.
    pub fn param(mut self, name: &str, value: u64) -> Interp {
        self.params.insert(name.to_string(), value);
        self
    }

    /// Places symbol `name` (a shared variable) at `addr`.
    pub fn symbol(mut self, name: &str, addr: u64) -> Interp {
        self.symbols.insert(name.to_string(), addr);
        self
    }

    /// A register's value, if something wrote it.
    pub fn get(&self, r: RegRef) -> Option<u64> {
        self.regs.get(&r).copied()
    }

    /// Runs the body of `f` to its end or its `ret`.
    pub fn run(&mut self, f: &Function) -> Result<(), String> {
        for s in &f.body {
            match s {
                Statement::Instr(i) => {
                    let i = &f.instruction(i);
                    if i.mnemonic == "ret" {
                        return Ok(());
                    }
                    self.step(i).map_err(|e| format!("{}: {e}", i.opcode()))?;
                }
                Statement::Comment(_) | Statement::Label(_) => {}
                other => return Err(format!("statement {other:?} is not handled")),
            }
        }
        Ok(())
    }

    fn read(&self, o: &Operand, bits: u32) -> Result<u64, String> {
        let v = match o {
            Operand::Reg(r) => {
                if class_bits(r.class) != Some(bits) {
                    return Err(format!("{r} is not a {bits}-bit register"));
                }
                self.get(*r)
                    .ok_or(format!("{r} is read before it is written"))?
            }
            Operand::Imm(Imm::UInt(u)) => *u,
            Operand::Imm(Imm::Int(i)) => *i as u64,
            o => return Err(format!("operand {o} is not handled")),
        };
        // An immediate wider than the type is an error in PTX; keep it visible here too.
        if v & !mask(bits) != 0 {
            return Err(format!("{o} does not fit {bits} bits"));
        }
        Ok(v)
    }

    fn write(&mut self, o: &Operand, bits: u32, v: u64) -> Result<(), String> {
        match o {
            Operand::Reg(r) if class_bits(r.class) == Some(bits) => {
                self.regs.insert(*r, v & mask(bits));
                Ok(())
            }
            o => Err(format!("destination {o} is not a {bits}-bit register")),
        }
    }

    fn operands<'a, const N: usize>(i: &InstrRef<'a>) -> Result<&'a [Operand; N], String> {
        i.operands
            .try_into()
            .map_err(|_| format!("{} operands, expected {N}", i.operands.len()))
    }

    /// Executes one instruction.
    pub fn step(&mut self, i: &InstrRef<'_>) -> Result<(), String> {
        if i.guard.is_some() {
            return Err("guards are not handled".into());
        }
        self.executed += 1;
        let mods: Vec<&str> = i.modifiers.iter().map(|m| m.as_ref()).collect();
        match (i.mnemonic, mods.as_slice()) {
            (op @ ("div" | "rem"), [ty @ ("u32" | "u64")]) => {
                let bits = width_of(ty)?;
                let [d, a, b] = Self::operands(i)?;
                let (a, b) = (self.read(a, bits)?, self.read(b, bits)?);
                if b == 0 {
                    return Err(format!("{op} by zero"));
                }
                let r = if op == "div" { a / b } else { a % b };
                self.write(d, bits, r)
            }
            (op @ ("and" | "or" | "xor" | "add"), [ty]) | (op @ "mul", ["lo", ty]) => {
                let bits = width_of(ty)?;
                let [d, a, b] = Self::operands(i)?;
                let (a, b) = (self.read(a, bits)?, self.read(b, bits)?);
                let r = match op {
                    "and" => a & b,
                    "or" => a | b,
                    "xor" => a ^ b,
                    "add" => a.wrapping_add(b),
                    _ => a.wrapping_mul(b),
                };
                self.write(d, bits, r)
            }
            (op @ ("shl" | "shr"), [ty]) => {
                if op == "shr" && ty.starts_with('s') {
                    return Err("arithmetic shifts are not handled".into());
                }
                if op == "shl" && !ty.starts_with('b') {
                    return Err(format!("shl takes .bN, not .{ty}"));
                }
                let bits = width_of(ty)?;
                let [d, a, b] = Self::operands(i)?;
                let a = self.read(a, bits)?;
                let amount = self.read(b, 32)?;
                let r = match (amount >= u64::from(bits), op) {
                    (true, _) => 0,
                    (false, "shl") => a << amount,
                    (false, _) => a >> amount,
                };
                self.write(d, bits, r)
            }
            ("cvt", ["u64", "u32"]) => {
                let [d, a] = Self::operands(i)?;
                let a = self.read(a, 32)?;
                self.write(d, 64, a)
            }
            ("mov", [ty]) => {
                let bits = width_of(ty)?;
                let [d, a] = Self::operands(i)?;
                let v = match a {
                    Operand::Symbol(s) => *self
                        .symbols
                        .get(s.as_ref())
                        .ok_or(format!("symbol {s} has no address"))?,
                    a => self.read(a, bits)?,
                };
                self.write(d, bits, v)
            }
            ("ld", ["param", ty]) => {
                let bits = width_of(ty)?;
                let [d, Operand::Addr(a)] = Self::operands(i)? else {
                    return Err("ld.param needs an address".into());
                };
                let AddrBase::Symbol(name) = &a.base else {
                    return Err("ld.param needs a parameter name".into());
                };
                let v = *self
                    .params
                    .get(name)
                    .ok_or(format!("parameter {name} is not set"))?;
                self.write(d, bits, v)
            }
            ("cvta", ["to", "global", "u64"]) => {
                let [d, a] = Self::operands(i)?;
                let a = self.read(a, 64)?;
                self.write(d, 64, a)
            }
            ("st", ["global", ty]) => {
                let bits = width_of(ty)?;
                let [Operand::Addr(a), v] = Self::operands(i)? else {
                    return Err("st.global needs an address".into());
                };
                let AddrBase::Reg(r) = a.base else {
                    return Err("st.global needs a register address".into());
                };
                let addr = self
                    .read(&Operand::Reg(r), 64)?
                    .wrapping_add(a.offset as u64);
                let v = self.read(v, bits)?;
                self.memory.insert(addr, v);
                Ok(())
            }
            _ => Err("instruction not handled".into()),
        }
    }
}
