//! Loading and launching a [`BuiltKernel`]: its launch configuration from the symbolic-extent
//! values of the arguments, and the loaded kernel that checks arguments and launches.

use std::sync::Arc;

use super::args::{ArgDesc, Symbols, check_and_pack};
use super::cuda::CudaStream;
use super::device::Device;
use super::error::{Result as RtResult, RuntimeError};
use super::jit::JitOptions;
use super::launch::{Kernel, LaunchConfig};
use super::tensor::Arg;
use crate::kernel::expr::eval;
use crate::kernel::{BuiltKernel, Var};

impl BuiltKernel {
    /// The launch configuration for symbolic-extent values `symbols`: the grid evaluated, the
    /// block, cluster and dynamic shared memory as stated.
    pub fn launch_config(&self, symbols: &Symbols) -> RtResult<LaunchConfig> {
        let value = |v: Var| {
            let name = self
                .symbols
                .iter()
                .find(|(i, _)| *i == v.0)
                .map(|(_, s)| s)?;
            symbols.get(name).and_then(|&x| i64::try_from(x).ok())
        };
        let mut grid = [1u32; 3];
        for (d, e) in self.launch.grid.iter().enumerate() {
            let g = eval(e, &value).ok_or_else(|| RuntimeError::InvalidLaunch {
                reason: format!("grid extent {e} cannot be evaluated from {symbols:?}"),
            })?;
            grid[d] = u32::try_from(g.max(1)).map_err(|_| RuntimeError::InvalidLaunch {
                reason: format!("grid extent {e} = {g} does not fit in 32 bits"),
            })?;
        }
        let mut cfg = LaunchConfig::new(grid, self.launch.block)
            .with_dynamic_smem(self.launch.dynamic_smem_bytes);
        if let Some(c) = self.launch.cluster {
            cfg = cfg.with_cluster(c);
        }
        if let Some(p) = self.launch.preferred_cluster {
            cfg = cfg.with_preferred_cluster(p);
        }
        Ok(cfg)
    }

    /// Checks `args` against the signature (dtype, shape, alignment, device) and returns the
    /// launch configuration they imply with the symbolic-extent values. Pure: no GPU needed.
    pub fn config_for(&self, args: &[ArgDesc], device: usize) -> RtResult<(LaunchConfig, Symbols)> {
        let (_, symbols) = check_and_pack(&self.signature, args, device)?;
        Ok((self.launch_config(&symbols)?, symbols))
    }

    /// JIT-loads the kernel on `device` (through the device's module cache).
    pub fn load(&self, device: &Device, options: &JitOptions) -> RtResult<LoadedKernel> {
        let kernel = device.kernel(&self.ptx, options, self.signature.clone())?;
        Ok(LoadedKernel {
            kernel: Arc::new(kernel),
            built: self.clone(),
            device: device.ordinal(),
        })
    }
}

/// A built kernel loaded on a device.
#[derive(Debug, Clone)]
pub struct LoadedKernel {
    kernel: Arc<Kernel>,
    built: BuiltKernel,
    device: usize,
}

impl LoadedKernel {
    /// The runtime kernel (for launches with a hand-made configuration).
    pub fn kernel(&self) -> &Kernel {
        &self.kernel
    }

    /// The built kernel.
    pub fn built(&self) -> &BuiltKernel {
        &self.built
    }

    /// Checks the arguments, derives the launch configuration from them (grid from the symbolic
    /// extents, block, cluster and dynamic shared memory from the kernel) and launches on
    /// `stream`. Returns the symbolic-extent values passed. Nothing runs when a check fails.
    pub fn launch(&self, stream: &CudaStream, args: &mut [Arg<'_>]) -> RtResult<Symbols> {
        let descs: Vec<ArgDesc> = args.iter().map(Arg::desc).collect();
        let (cfg, _) = self.built.config_for(&descs, self.device)?;
        self.kernel.launch(stream, &cfg, args)
    }

    /// Launches with an explicit configuration (checked by the runtime like any other).
    pub fn launch_with(
        &self,
        stream: &CudaStream,
        cfg: &LaunchConfig,
        args: &mut [Arg<'_>],
    ) -> RtResult<Symbols> {
        self.kernel.launch(stream, cfg, args)
    }
}
