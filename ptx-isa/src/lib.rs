//! The PTX instruction set as Rust types: a typed instruction builder gated by target and PTX
//! version against one table of instruction forms ([`forms`]), PTX text emission, a parser of PTX
//! as nvcc, Triton and LLVM write it ([`parse`]), and an offline validator ([`validate`]) that
//! checks a module against the same table. ptxas is the tests' oracle ([`ptxas`]), never a
//! dependency.
//!
//! Building a kernel: registers are typed (`Reg<F32>`, `Pred`), addresses know their state space,
//! and every builder call returns a `Result` whose error names the instruction, the operand and
//! the target.
//!
//! ```
//! use ptx_isa::{Addr, Module, Target, ty, spaces::Global, space::StateSpace, SpecialReg, Dim};
//!
//! let mut m = Module::new(Target::Sm90a);
//! let mut k = m.entry("scale");
//! let x = k.param_ptr("x", StateSpace::Global, Some(4)).unwrap();
//! let px = k.load_param(&x).unwrap();
//! let g = k.reg::<ty::U64>();
//! k.cvta_to(StateSpace::Global, g, px).unwrap();
//! let tid = k.sreg_u32(SpecialReg::Tid(Dim::X)).unwrap();
//! let off = k.reg::<ty::U64>();
//! k.mul_wide(off, tid, 4u32).unwrap();
//! let p = k.reg::<ty::U64>();
//! k.add(p, g, off).unwrap();
//! let v = k.reg::<ty::F32>();
//! k.ld(v, Addr::<Global>::reg(p)).unwrap();
//! k.mul(v, v, 2.0f32).unwrap();
//! k.st(Addr::<Global>::reg(p), v).unwrap();
//! k.ret().unwrap();
//! m.add(k.finish().unwrap()).unwrap();
//! let ptx = m.to_ptx().unwrap();
//! assert!(ptx.contains("mul.f32 %f0, %f0, 0f40000000;"));
//!
//! // Read it back: the parser gives the same model, the validator finds nothing to say.
//! let parsed = ptx_isa::parse::parse(&ptx).unwrap();
//! assert!(parsed.warnings.is_empty());
//! let opts = ptx_isa::validate::Options::default();
//! let found = ptx_isa::validate::validate(&parsed.module, Some(&parsed.source_map), &opts);
//! assert!(found.is_empty(), "{found:?}");
//! ```
#![deny(missing_docs)]

pub mod builder;
pub mod catalog;
pub mod emit;
pub mod error;
pub mod forms;
pub mod instr;
pub mod module;
pub mod parse;
pub mod ptxas;
pub mod reg;
pub mod space;
pub mod sreg;
pub mod target;
pub mod types;
pub mod validate;

pub use builder::FunctionBuilder;
pub use error::{Error, ErrorKind, Place, Result};
pub use forms::{Form, FormSpec};
pub use instr::{Imm, InstrRef, Instruction, Label, Operand, Src, TargetList};
pub use module::{Directive, Function, Module};
pub use reg::{Pred, Reg, RegClass, RegRef, RetypeError, Sinkable, ty};
pub use space::{Addr, StateSpace, spaces};
pub use sreg::{Dim, SpecialReg};
pub use target::{PtxVersion, Target, TargetSet};
pub use types::ScalarType;
