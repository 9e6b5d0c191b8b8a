//! Control flow (PTX ISA 9.7.12 "Control Flow Instructions") and `nanosleep` (9.7.19).

use std::borrow::Cow;

use super::FunctionBuilder;
use crate::error::{ErrorKind, Result};
use crate::forms::Form;
use crate::instr::{Instruction, Label, Operand, Src, TargetList};
use crate::module::{BranchTargets, Function, FunctionKind, Param, ParamKind, Statement};
use crate::reg::{RegRef, ty};
use crate::space::{AddrBase, Address};
use crate::types::ScalarType;

impl FunctionBuilder {
    /// `bra target`.
    pub fn bra(&mut self, target: Label) -> Result<()> {
        self.use_label(target)?;
        self.emit(Form::Bra, Instruction::new("bra").operand(target))
    }

    /// `bra.uni target`: a branch every thread of the warp takes the same way.
    pub fn bra_uni(&mut self, target: Label) -> Result<()> {
        self.use_label(target)?;
        self.emit(
            Form::Bra,
            Instruction::from_opcode("bra.uni").operand(target),
        )
    }

    /// Declares a list of branch targets here, `$T__n: .branchtargets L0, L1, ...;` (PTX ISA
    /// 11.3.1), for [`FunctionBuilder::brx_idx`], which must come after it. The labels are this
    /// function's, placed anywhere in it (at the function's top level: a label inside a `{ }`
    /// scope is not visible to the list).
    pub fn branch_targets(&mut self, labels: &[Label]) -> Result<TargetList> {
        if labels.is_empty() {
            return Err(self.err(
                ErrorKind::OperandCount,
                ".branchtargets",
                "a list of branch targets names at least one label",
            ));
        }
        for l in labels {
            self.use_label(*l)?;
        }
        self.gate(Form::DirBranchTargets, ".branchtargets")?;
        let list = TargetList(self.target_lists);
        self.target_lists += 1;
        self.push_statement(Statement::BranchTargets(Box::new(BranchTargets {
            name: list.to_string(),
            labels: labels.iter().map(|l| Operand::Label(*l)).collect(),
        })));
        Ok(list)
    }

    /// `brx.idx index, list`: branches to label number `index` (from 0) of `list` (PTX ISA
    /// 9.7.12.4; an index past the list's end is undefined behaviour).
    pub fn brx_idx(&mut self, index: impl Into<Src<ty::U32>>, list: TargetList) -> Result<()> {
        self.brx(Instruction::from_opcode("brx.idx"), index.into(), list)
    }

    /// `brx.idx.uni index, list`: as [`FunctionBuilder::brx_idx`], where every active thread of the
    /// warp has the same index and guard.
    pub fn brx_idx_uni(&mut self, index: impl Into<Src<ty::U32>>, list: TargetList) -> Result<()> {
        self.brx(Instruction::from_opcode("brx.idx.uni"), index.into(), list)
    }

    fn brx(&mut self, i: Instruction, index: Src<ty::U32>, list: TargetList) -> Result<()> {
        if list.0 >= self.target_lists {
            return Err(self.err(
                ErrorKind::UndefinedLabel,
                "brx.idx",
                format!("{list} is not a list of branch targets of this function"),
            ));
        }
        self.emit(Form::BrxIdx, i.operand(index).operand(list))
    }

    /// `ret`.
    pub fn ret(&mut self) -> Result<()> {
        self.emit(Form::Ret, Instruction::new("ret"))
    }

    /// `exit`: ends the thread.
    pub fn exit(&mut self) -> Result<()> {
        self.emit(Form::Exit, Instruction::new("exit"))
    }

    /// `trap`: aborts the kernel with an error.
    pub fn trap(&mut self) -> Result<()> {
        self.emit(Form::Trap, Instruction::new("trap"))
    }

    /// `nanosleep.u32 t`: suspends the thread for about `t` nanoseconds (at most 1 ms).
    pub fn nanosleep(&mut self, t: impl Into<Src<ty::U32>>) -> Result<()> {
        self.emit(
            Form::Nanosleep,
            Instruction::new("nanosleep")
                .ty(ScalarType::U32)
                .operand(t.into()),
        )
    }

    /// Calls device function `f` with `args` (one register per parameter, types matching) and stores
    /// its result in `ret` if it has one. Written as nvcc does: a `{ }` scope declaring one `.param`
    /// per argument, `st.param` each, `call (retval), f, (params)`, `ld.param` the result
    /// (PTX ISA 9.7.12.5 and the ABI's parameter passing).
    pub fn call(
        &mut self,
        f: &Function,
        args: &[(RegRef, ScalarType)],
        ret: Option<(RegRef, ScalarType)>,
    ) -> Result<()> {
        if f.kind != FunctionKind::Func {
            return Err(self.err(
                ErrorKind::OperandKind,
                "call",
                format!("`{}` is a kernel; only device functions are called", f.name),
            ));
        }
        if args.len() != f.params.len() {
            return Err(self.err(
                ErrorKind::OperandCount,
                "call",
                format!(
                    "`{}` takes {} arguments, not {}",
                    f.name,
                    f.params.len(),
                    args.len()
                ),
            ));
        }
        let ptype = |k: &ParamKind| match k {
            ParamKind::Scalar(t) | ParamKind::Reg(t) => Some(*t),
            ParamKind::Ptr { .. } => Some(ScalarType::U64),
            ParamKind::Bytes { .. } | ParamKind::Opaque(_) => None,
        };
        for (n, ((_, t), p)) in args.iter().zip(&f.params).enumerate() {
            match ptype(&p.kind) {
                Some(pt) if pt.agrees_with(*t) => {}
                _ => {
                    return Err(self
                        .err(
                            ErrorKind::OperandType,
                            "call",
                            format!(
                                "argument {n} of `{}` is {t}; the parameter is {:?}",
                                f.name, p.kind
                            ),
                        )
                        .at_operand(n));
                }
            }
        }
        let ret_ty = match (&f.ret, ret) {
            (None, None) => None,
            (Some(p), Some((_, t))) => match ptype(&p.kind) {
                Some(pt) if pt.agrees_with(t) => Some(pt),
                _ => {
                    return Err(self.err(
                        ErrorKind::OperandType,
                        "call",
                        format!("`{}` returns {:?}, not {t}", f.name, p.kind),
                    ));
                }
            },
            (Some(_), None) => None,
            (None, Some(_)) => {
                return Err(self.err(
                    ErrorKind::OperandCount,
                    "call",
                    format!("`{}` returns nothing", f.name),
                ));
            }
        };
        let guard = self.guard.take();
        self.push_statement(Statement::Open);
        let mut names = Vec::new();
        for (r, _) in args.iter() {
            let name = self.next_local_param();
            let t = ptype(&f.params[names.len()].kind).unwrap_or(ScalarType::B64);
            self.push_statement(Statement::LocalParam(Box::new(Param {
                name: name.clone(),
                kind: ParamKind::Scalar(t),
            })));
            let st = Instruction::from_opcode("st.param")
                .ty(t)
                .operands((sym_addr(&name), *r));
            self.emit(Form::St, st)?;
            names.push(name);
        }
        let ret_name = match (ret_ty, f.ret.as_ref()) {
            (Some(t), _) => {
                let name = self.next_local_param();
                self.push_statement(Statement::LocalParam(Box::new(Param {
                    name: name.clone(),
                    kind: ParamKind::Scalar(t),
                })));
                Some((name, t))
            }
            _ => None,
        };
        let mut call = Instruction::from_opcode("call.uni");
        if let Some((n, _)) = &ret_name {
            call = call.operand(Operand::List(vec![Operand::Symbol(Cow::Owned(n.clone()))]));
        }
        call = call.operand(Operand::Symbol(Cow::Owned(f.name.clone())));
        if !names.is_empty() {
            call = call.operand(Operand::List(
                names
                    .iter()
                    .map(|n| Operand::Symbol(Cow::Owned(n.clone())))
                    .collect(),
            ));
        }
        self.guard = guard;
        self.emit(Form::Call, call)?;
        if let (Some((n, t)), Some((r, _))) = (ret_name, ret) {
            let ld = Instruction::from_opcode("ld.param")
                .ty(t)
                .operands((r, sym_addr(&n)));
            self.emit(Form::Ld, ld)?;
        }
        self.push_statement(Statement::Close);
        Ok(())
    }
}

fn sym_addr(name: &str) -> Operand {
    Operand::Addr(Address::at(AddrBase::Symbol(name.to_string())))
}
