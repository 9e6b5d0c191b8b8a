//! Loading and launching a [`BuiltKernel`]: its launch configuration from the symbolic-extent
//! values of the arguments, and the loaded kernel that checks arguments and launches.

use std::sync::Arc;

use super::args::{ArgDesc, Symbols, check_and_pack};
use super::cuda::CudaStream;
use super::device::Device;
use super::error::{Result as RtResult, RuntimeError};
use super::jit::JitOptions;
use super::launch::{Kernel, LaunchConfig, StreamOrder};
use super::tensor::Arg;
use crate::kernel::expr::eval;
use crate::kernel::{BuiltKernel, PersistentUnit, Var};

/// How many CTAs of one kernel a device holds at once: what a persistent grid
/// ([`crate::kernel::PersistentGrid`]) is sized to. [`BuiltKernel::load`] reads it from the
/// device (its SM count) and the driver (`cuOccupancyMaxActiveBlocksPerMultiprocessor` for the
/// kernel's block and shared memory); a host-side test states one.
///
/// ```
/// use ptxkit::runtime::Residency;
///
/// let h100 = Residency { sm_count: 132, ctas_per_sm: 2, clusters: None };
/// assert_eq!(h100.resident_ctas(None), 264);
/// assert_eq!(h100.resident_ctas(Some(1)), 132); // the kernel asked for one CTA per SM
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Residency {
    /// Streaming multiprocessors ([`super::DeviceAttributes::sm_count`]).
    pub sm_count: u32,
    /// CTAs of the kernel one SM holds at once (its occupancy).
    pub ctas_per_sm: u32,
    /// For a kernel in clusters, how many of its clusters the device holds at once
    /// (`cuOccupancyMaxActiveClusters`, [`super::Kernel::max_active_clusters`]): what a persistent
    /// grid of clusters is sized to.
    pub clusters: Option<u32>,
}

impl Residency {
    /// CTAs resident at once with at most `cap` per SM: `sm_count x min(ctas_per_sm, cap)`, at
    /// least 1 (a kernel too large to be resident still gets one CTA, which the launch then
    /// refuses or runs).
    pub fn resident_ctas(&self, cap: Option<u32>) -> u32 {
        let per_sm = cap.map_or(self.ctas_per_sm, |c| c.min(self.ctas_per_sm));
        self.sm_count.saturating_mul(per_sm).max(1)
    }
}

impl BuiltKernel {
    /// The launch configuration for symbolic-extent values `symbols`: the grid evaluated, the
    /// block, cluster and dynamic shared memory as stated. A persistent kernel's grid depends on
    /// the device: it is [`RuntimeError::InvalidLaunch`] here, use
    /// [`BuiltKernel::launch_config_on`].
    pub fn launch_config(&self, symbols: &Symbols) -> RtResult<LaunchConfig> {
        self.launch_config_with(symbols, None)
    }

    /// [`BuiltKernel::launch_config`] on a device that holds `residency`: a persistent grid is
    /// `min(work, residency.resident_ctas(ctas_per_sm))` CTAs in x, at least 1; a persistent grid
    /// of clusters `min(work, residency.clusters)` clusters (at least 1) times the cluster's CTAs;
    /// any other grid is as stated.
    ///
    /// ```
    /// use ptxkit::isa::Target;
    /// use ptxkit::kernel::KernelBuilder;
    /// use ptxkit::runtime::Residency;
    ///
    /// let mut k = KernelBuilder::new("k", Target::Sm90a);
    /// k.persistent_cta_id(1 << 20, None)?;
    /// k.thread_id([128])?;
    /// let built = k.finish()?;
    /// let gpu = Residency { sm_count: 132, ctas_per_sm: 4, clusters: None };
    /// assert_eq!(built.launch_config_on(&Default::default(), gpu)?.grid, [528, 1, 1]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn launch_config_on(
        &self,
        symbols: &Symbols,
        residency: Residency,
    ) -> RtResult<LaunchConfig> {
        self.launch_config_with(symbols, Some(residency))
    }

    fn launch_config_with(
        &self,
        symbols: &Symbols,
        residency: Option<Residency>,
    ) -> RtResult<LaunchConfig> {
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
        if let Some(p) = &self.launch.persistent {
            let r = residency.ok_or_else(|| RuntimeError::InvalidLaunch {
                reason: format!(
                    "a persistent grid over {} is sized to the device: use launch_config_on",
                    p.work
                ),
            })?;
            grid[0] = match p.unit {
                PersistentUnit::Cta => grid[0].min(r.resident_ctas(p.ctas_per_sm)),
                PersistentUnit::Cluster => {
                    let size = self.launch.cluster.map_or(1, |c| c[0]).max(1);
                    let fit = r.clusters.ok_or_else(|| RuntimeError::InvalidLaunch {
                        reason: format!(
                            "a persistent grid of clusters over {} needs the clusters the device holds at once (Residency::clusters)",
                            p.work
                        ),
                    })?;
                    // `grid[0]` is the work's clusters times the cluster's CTAs, at least 1.
                    (grid[0] / size).clamp(1, fit.max(1)) * size
                }
            };
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
        self.config_on(args, device, None)
    }

    /// [`BuiltKernel::config_for`] on a device that holds `residency` (needed by a persistent
    /// kernel, ignored by others). Pure: no GPU needed.
    pub fn config_on(
        &self,
        args: &[ArgDesc],
        device: usize,
        residency: Option<Residency>,
    ) -> RtResult<(LaunchConfig, Symbols)> {
        let (_, symbols) = check_and_pack(&self.signature, args, device)?;
        Ok((self.launch_config_with(&symbols, residency)?, symbols))
    }

    /// The device's residency for `kernel` (this kernel loaded): its SM count, the driver's
    /// occupancy for the block and shared memory and, for a kernel in clusters, the clusters
    /// resident at once, probed with a grid of about one cluster per SM.
    fn residency_on(&self, device: &Device, kernel: &Kernel) -> RtResult<Residency> {
        let sm_count = device.attributes().sm_count;
        let (block, smem) = (self.launch.block, self.launch.dynamic_smem_bytes);
        let clusters = match self.launch.cluster {
            Some(c) => {
                let per = c[0].max(1);
                let mut probe =
                    LaunchConfig::new([(sm_count / per).max(1) * per, c[1], c[2]], block)
                        .with_cluster(c)
                        .with_dynamic_smem(smem);
                if let Some(p) = self.launch.preferred_cluster {
                    probe = probe.with_preferred_cluster(p);
                }
                Some(kernel.max_active_clusters(&probe)?)
            }
            None => None,
        };
        Ok(Residency {
            sm_count,
            ctas_per_sm: kernel.max_active_blocks_per_sm(block, smem)?,
            clusters,
        })
    }

    /// JIT-loads the kernel on `device` (through the device's module cache).
    pub fn load(&self, device: &Device, options: &JitOptions) -> RtResult<LoadedKernel> {
        let kernel = device.kernel(&self.ptx, options, self.signature.clone())?;
        let residency = match self.launch.persistent {
            Some(_) => Some(self.residency_on(device, &kernel)?),
            None => None,
        };
        Ok(LoadedKernel {
            kernel: Arc::new(kernel),
            built: self.clone(),
            device: device.ordinal(),
            residency,
        })
    }
}

/// A built kernel loaded on a device.
#[derive(Debug, Clone)]
pub struct LoadedKernel {
    kernel: Arc<Kernel>,
    built: BuiltKernel,
    device: usize,
    /// The device's residency for this kernel, read at load for a persistent one.
    residency: Option<Residency>,
}

impl LoadedKernel {
    /// The runtime kernel (for launches with a hand-made configuration: [`Kernel::launch`],
    /// checked by the runtime like any other).
    pub fn kernel(&self) -> &Kernel {
        &self.kernel
    }

    /// The built kernel.
    pub fn built(&self) -> &BuiltKernel {
        &self.built
    }

    /// The CTAs the device holds at once, read when a persistent kernel was loaded (`None` for
    /// any other kernel): its grid is at most `residency.resident_ctas(..)`.
    pub fn residency(&self) -> Option<Residency> {
        self.residency
    }

    /// Checks the arguments, derives the launch configuration from them (grid from the symbolic
    /// extents, a persistent grid sized to the device's residency, block, cluster and dynamic shared memory from the kernel) and launches on
    /// `stream`. Returns the symbolic-extent values passed. Nothing runs when a check fails.
    pub fn launch(&self, stream: &CudaStream, args: &mut [Arg<'_>]) -> RtResult<Symbols> {
        self.launch_within(stream, args, None, StreamOrder::After)
    }

    /// [`LoadedKernel::launch`], then waits for `stream` as `watch` says
    /// ([`Kernel::launch_watched`]): with a timeout, a kernel that has not finished by then is
    /// [`RuntimeError::Timeout`] naming it, instead of a wait for ever (a check that may hang
    /// reports and lets its process end, which ends the kernel).
    pub fn launch_watched(
        &self,
        stream: &CudaStream,
        args: &mut [Arg<'_>],
        watch: &super::Watch<'_>,
    ) -> RtResult<Symbols> {
        let descs: Vec<ArgDesc> = args.iter().map(Arg::desc).collect();
        let (cfg, _) = self.built.config_on(&descs, self.device, self.residency)?;
        self.kernel.launch_watched(stream, &cfg, args, watch)
    }

    /// [`LoadedKernel::launch`] ordered on `stream` as `order` says, or with a `limit`
    /// [`LoadedKernel::launch_watched`] with that timeout and no hang records: how a library
    /// launcher with an optional limit (the GPU check's) launches each of its kernels. With a
    /// limit (a check that waits for each launch anyway) a [`StreamOrder::Dependent`] kernel is
    /// launched as usual; its `griddepcontrol.wait` then returns at once.
    pub fn launch_within(
        &self,
        stream: &CudaStream,
        args: &mut [Arg<'_>],
        limit: Option<std::time::Duration>,
        order: StreamOrder,
    ) -> RtResult<Symbols> {
        if let Some(limit) = limit {
            let watch = super::Watch {
                timeout: Some(limit),
                hang: None,
            };
            return self.launch_watched(stream, args, &watch);
        }
        // One check: the packed parameters and the extents that size the grid come from it.
        let descs: Vec<ArgDesc> = args.iter().map(Arg::desc).collect();
        let packed = check_and_pack(&self.built.signature, &descs, self.device)?;
        let cfg = self.built.launch_config_with(&packed.1, self.residency)?;
        let cfg = match order {
            StreamOrder::After => cfg,
            StreamOrder::Dependent => cfg.with_pdl(),
        };
        self.kernel.launch_packed(stream, &cfg, packed, args)
    }
}
