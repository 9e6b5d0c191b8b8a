//! What a warp-specialised kernel does to a whole warpgroup: move registers between warpgroups
//! (`setmaxnreg`, PTX ISA 9.7.19.5), so a producer that only issues copies gives its registers
//! to the consumers that hold accumulators.

use super::KernelBuilder;
use super::error::Result;

impl KernelBuilder {
    /// Sets this warpgroup's per-thread register budget to `regs` (24 to 256, a multiple of 8):
    /// `setmaxnreg.dec` when `regs` is below what the warpgroup holds (`increase` false, the
    /// registers go back to the CTA's pool), `setmaxnreg.inc` when above (it waits until the pool
    /// has them). Every warp of the warpgroup must run it (`.sync.aligned`), and the kernel needs
    /// a block of whole warpgroups; the budget at entry is the launch bounds' cap, which
    /// `thread_id` (`.maxntid`) and [`KernelBuilder::min_blocks_per_sm`] fix.
    ///
    /// ```
    /// use ptxkit::isa::Target;
    /// use ptxkit::kernel::KernelBuilder;
    ///
    /// let mut k = KernelBuilder::new("ws", Target::Sm90a);
    /// k.thread_id([384])?;
    /// let wg = k.warpgroup_id([3])?;
    /// let producer = k.cmp(ptxkit::isa::builder::CmpOp::Eq, wg, 0u32)?;
    /// k.if_(producer, |k| k.warpgroup_registers(false, 24))
    ///     .else_(|k| k.warpgroup_registers(true, 240))?;
    /// let ptx = k.finish()?.ptx().to_string();
    /// assert!(ptx.contains("setmaxnreg.dec.sync.aligned.u32 24;"));
    /// assert!(ptx.contains("setmaxnreg.inc.sync.aligned.u32 240;"));
    /// # Ok::<(), ptxkit::kernel::KernelError>(())
    /// ```
    #[track_caller]
    pub fn warpgroup_registers(&mut self, increase: bool, regs: u32) -> Result<()> {
        // PTX ISA 9.7.19.5: "imm-reg-count ... in the range 24 to 256 (both inclusive) and ...
        // a multiple of 8".
        if !(24..=256).contains(&regs) || regs % 8 != 0 {
            return Err(self.scope_err(format!(
                "a warpgroup register budget of {regs}: setmaxnreg takes 24 to 256 in steps of 8"
            )));
        }
        self.need_warpgroups();
        self.f.setmaxnreg(increase, regs)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::KernelError;
    use ptx_isa::Target;

    #[test]
    fn budgets_outside_the_instruction_range_are_refused_and_need_warpgroups() {
        let mut k = KernelBuilder::new("ws", Target::Sm90a);
        k.thread_id([384]).unwrap();
        for bad in [16, 100, 264] {
            let e = k.warpgroup_registers(true, bad).unwrap_err();
            assert!(matches!(e, KernelError::Scope { .. }), "{e}");
            assert!(e.to_string().contains("24 to 256"), "{e}");
        }
        k.warpgroup_registers(false, 24).unwrap();
        assert!(k.finish().is_ok());
        // 96 threads are not whole warpgroups: the budget belongs to a warpgroup.
        let mut k = KernelBuilder::new("ws", Target::Sm90a);
        k.thread_id([96]).unwrap();
        k.warpgroup_registers(false, 24).unwrap();
        let e = k.finish().unwrap_err();
        assert!(e.to_string().contains("whole warpgroups"), "{e}");
    }
}
