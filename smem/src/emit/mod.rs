//! The emitted-PTX forms of the host side: the [`crate::alu::AluProgram`]s of the swizzle, the
//! 2-D offsets and the descriptor addresses lowered onto a [`ptx_isa::FunctionBuilder`], and the
//! pool's dynamic shared array declared on a [`ptx_isa::Module`] with its regions as comments
//! and addresses.
//!
//! Lowering chooses, the builder writes: [`lower`] maps each [`crate::alu::AluStep`] to one
//! builder call (`and`, `or`, `xor`, `shl`, `shr`, `add`, `mul_lo`, `cvt`), so every
//! instruction is checked against ptx-isa's form table like any other. The helpers return
//! [`ptx_isa::Result`]; a host-side error (a descriptor field that does not fit, a pitch that is
//! not a multiple of 16) becomes an [`ptx_isa::ErrorKind::Invalid`] error naming the helper, the
//! target and the function.
//!
//! [`DynamicSmem::init_mbarriers`] initialises a barrier array with its counts;
//! [`DynamicSmem::mbarrier_addr_from`] gives one barrier's address for the builder's mbarrier
//! methods (`mbarrier_arrive_with`, `mbarrier_wait_parity`, ...).
//!
//! ```
//! use ptx_isa::{Module, Target, ty};
//! use smem::emit::{DynamicSmem, emit_desc, emit_swizzle};
//! use smem::pool::SmemPool;
//! use smem::tile::{wgmma_tile, TileShape};
//! use ptx_isa::ScalarType;
//! use smem::{Major, SwizzleMode};
//!
//! let a = wgmma_tile(ScalarType::Bf16, TileShape { mn: 64, k: 64 }, Major::K)?;
//! let mut pool = SmemPool::new(Target::Sm90a);
//! let region = pool.alloc_tile("A", &a)?;
//!
//! let mut m = Module::new(Target::Sm90a);
//! let smem = DynamicSmem::declare(&mut m, "smem", &pool)?;
//! let mut k = m.entry("k");
//! smem.comment_regions(&mut k, &pool);
//! let base = smem.region_addr(&mut k, &region)?; // mov.u32 %r0, smem;
//! let desc = emit_desc(&mut k, &a.sm90_desc(0, 0, 0)?, base)?; // 4 instructions
//! let off = k.reg::<ty::U32>();
//! k.mov(off, 0x80u32)?;
//! let swizzled = emit_swizzle(&mut k, SwizzleMode::B128, off)?; // and, shr, xor
//! # let _ = (desc, swizzled);
//! k.ret()?;
//! m.add(k.finish()?)?;
//! let ptx = m.to_ptx()?;
//! assert!(ptx.contains(".extern .shared .align 1024 .b8 smem[];"));
//! assert!(ptx.contains("cvt.u64.u32"));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod desc;
mod lower;
mod pool;
mod swizzle;

pub use desc::emit_desc;
pub use lower::{AluReg, lower, lower_u32, lower_u32_to_u64};
pub use pool::DynamicSmem;
pub use swizzle::{emit_offset_2d, emit_swizzle, emit_tile_offset};

use std::fmt::Display;

use ptx_isa::{Error, ErrorKind, FunctionBuilder};

/// A host-side error met while emitting `what`, as a ptx-isa error with its place.
fn host_error(k: &FunctionBuilder, what: &str, e: impl Display) -> Error {
    Error::new(ErrorKind::Invalid, e.to_string())
        .at_instruction(what)
        .on_target(k.target())
        .in_function(k.name())
}
