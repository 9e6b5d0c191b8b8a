//! Work held ahead of a `wgmma.wait_group`: arithmetic a warpgroup does while its wgmma runs,
//! kept there in the machine code.
//!
//! A `wgmma.wait_group` (PTX ISA 9.7.15.7.3) has no register inputs, and ptxas 13.0 schedules
//! it as early as it may: arithmetic written between a wgmma's issue and its wait but read only
//! after the wait is sunk past it, so the warpgroup waits first and computes after, with the
//! tensor cores idle (the attention backward's `Pᵀ = 2^(…)` before the wait for `dPᵀ`: 4 of 32
//! `ex2` were left ahead of the wait, `library::attention::backward`). ptxas keeps the wait
//! behind an earlier store to shared memory (a wgmma may read shared memory until its wait),
//! so [`keep_before_wait`] stores one value that depends on every register it is given: their
//! sum, into a scratch word nothing reads. The registers' producers then stay ahead of the
//! next wait, at the price of `n − 1` adds and one `st.shared.f32` a thread.
//!
//! ```
//! use ptxkit::isa::{Target, ty};
//! use ptxkit::kernel::KernelBuilder;
//! use ptxkit::parts::order::keep_before_wait;
//!
//! let mut k = KernelBuilder::new("kept", Target::Sm90a);
//! let scratch = k.pool_bytes("keep", 4, 4)?;
//! let x: Vec<_> = (0..4).map(|_| k.reg::<ty::F32>()).collect();
//! for &r in &x {
//!     k.mov(r, 1.0f32)?;
//!     k.ex2(r, r)?;
//! }
//! keep_before_wait(&mut k, &x, scratch)?;
//! k.wgmma_wait_group(0)?;
//! let ptx = k.finish()?.ptx().to_string();
//! assert_eq!(ptx.matches("add.f32").count(), 3);
//! assert!(ptx.contains("st.shared.f32"));
//! # Ok::<(), ptxkit::kernel::KernelError>(())
//! ```

use ptx_isa::spaces::Shared;
use ptx_isa::{Addr, Reg, ty};

use crate::kernel::{KernelBuilder, Result};

/// Keeps the computation of `values` ahead of the next `wgmma.wait_group` (the module's
/// documentation): their sum, added in pairs (a tree: `log2 n` adds deep), stored to the
/// 4-byte shared word at `scratch` (every thread to the same word: the value is never read).
/// Nothing for no values.
pub fn keep_before_wait(
    k: &mut KernelBuilder,
    values: &[Reg<ty::F32>],
    scratch: Reg<ty::U32>,
) -> Result<()> {
    let mut level: Vec<Reg<ty::F32>> = values.to_vec();
    while level.len() > 1 {
        let mut next = Vec::with_capacity(level.len().div_ceil(2));
        for pair in level.chunks(2) {
            match pair {
                [a, b] => {
                    let sum = k.reg::<ty::F32>();
                    k.add(sum, *a, *b)?;
                    next.push(sum);
                }
                [a] => next.push(*a),
                _ => {}
            }
        }
        level = next;
    }
    if let Some(&sum) = level.first() {
        k.isa().st(Addr::<Shared>::reg32(scratch), sum)?;
    }
    Ok(())
}
