//! Launch configuration, its checks, and the launch itself through `cuLaunchKernelEx`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use std::time::Duration;

use cudarc::driver::{CudaStream, DriverError, sys};

use super::args::{ArgDesc, ParamBuffer, Symbols, check_and_pack, tma_error};
use super::device::Device;
use super::error::{Result, RuntimeError};
use super::module::Module;
use super::tensor::Arg;
use super::tensor_map::{TensorMap, TensorMapDesc};
use super::watchdog::{PollOutcome, Watch, poll_until};
use crate::signature::{KernelSignature, MAX_CLUSTER_SIZE, PORTABLE_CLUSTER_SIZE};

/// How to launch a kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct LaunchConfig {
    /// Blocks in x, y, z.
    pub grid: [u32; 3],
    /// Threads per block in x, y, z.
    pub block: [u32; 3],
    /// Thread-block cluster dimensions (`CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION`).
    pub cluster: Option<[u32; 3]>,
    /// Preferred cluster dimensions (`CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION`, CUDA 12.8+
    /// drivers; a multiple of `cluster`).
    pub preferred_cluster: Option<[u32; 3]>,
    /// Dynamic shared memory per block, in bytes.
    pub dynamic_smem_bytes: u32,
    /// Programmatic dependent launch: let this kernel start before the previous one on the stream
    /// finishes (`CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION`); the kernel orders itself
    /// with `griddepcontrol.wait`.
    pub programmatic_dependent_launch: bool,
}

impl LaunchConfig {
    /// A launch of `grid` blocks of `block` threads, no cluster, no dynamic shared memory.
    pub fn new(grid: [u32; 3], block: [u32; 3]) -> LaunchConfig {
        LaunchConfig {
            grid,
            block,
            cluster: None,
            preferred_cluster: None,
            dynamic_smem_bytes: 0,
            programmatic_dependent_launch: false,
        }
    }

    /// A 1-D launch covering `n` threads with blocks of `block` threads.
    pub fn for_elements(n: usize, block: u32) -> LaunchConfig {
        let blocks = n.div_ceil(block.max(1) as usize).max(1);
        LaunchConfig::new(
            [u32::try_from(blocks).unwrap_or(u32::MAX), 1, 1],
            [block, 1, 1],
        )
    }

    /// With a thread-block cluster.
    pub fn with_cluster(mut self, cluster: [u32; 3]) -> LaunchConfig {
        self.cluster = Some(cluster);
        self
    }

    /// With a preferred cluster.
    pub fn with_preferred_cluster(mut self, preferred: [u32; 3]) -> LaunchConfig {
        self.preferred_cluster = Some(preferred);
        self
    }

    /// With `bytes` of dynamic shared memory.
    pub fn with_dynamic_smem(mut self, bytes: u32) -> LaunchConfig {
        self.dynamic_smem_bytes = bytes;
        self
    }

    /// With programmatic dependent launch.
    pub fn with_pdl(mut self) -> LaunchConfig {
        self.programmatic_dependent_launch = true;
        self
    }
}

/// When a launch may start, relative to the work before it on its stream
/// ([`crate::runtime::LoadedKernel::launch_within`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StreamOrder {
    /// Once the work before it has ended: an ordinary launch.
    #[default]
    After,
    /// As a programmatic dependent launch ([`LaunchConfig::with_pdl`]): the kernel may start
    /// before the one before it on the stream ends, and must order itself with
    /// `griddepcontrol.wait` (PTX ISA 9.7.13.13) before it reads what that one wrote.
    Dependent,
}

impl StreamOrder {
    /// [`StreamOrder::Dependent`] where `dependent` (a launcher's configuration asks for the
    /// programmatic dependent launch), else [`StreamOrder::After`].
    pub fn dependent_if(dependent: bool) -> StreamOrder {
        match dependent {
            true => StreamOrder::Dependent,
            false => StreamOrder::After,
        }
    }
}

/// The device's and the function's limits a launch is checked against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LaunchLimits {
    /// Threads per block at most (the lesser of the device's and the function's).
    pub max_threads_per_block: u32,
    /// Block extent in x, y, z at most (1024, 1024, 64).
    pub max_block_dims: [u32; 3],
    /// Grid extent in x, y, z at most (2^31 - 1, 65535, 65535).
    pub max_grid_dims: [u32; 3],
    /// The function's static shared memory.
    pub static_smem_bytes: u32,
    /// Shared memory per block with opt-in (static + dynamic).
    pub smem_optin_bytes: u32,
    /// The function's current dynamic shared-memory limit (48 KB - static until raised).
    pub dynamic_smem_limit: u32,
    /// Whether the device launches clusters.
    pub cluster_launch: bool,
}

impl LaunchLimits {
    /// An sm_90 device's limits (H100, H200) for a function with no static shared memory and the
    /// default dynamic limit: what a launch is checked against without a device (CUDA C
    /// Programming Guide, "Technical Specifications per Compute Capability").
    pub const SM90: LaunchLimits = LaunchLimits {
        max_threads_per_block: 1024,
        max_block_dims: [1024, 1024, 64],
        max_grid_dims: [i32::MAX as u32, 65535, 65535],
        static_smem_bytes: 0,
        smem_optin_bytes: smem::max_smem_optin(ptx_isa::Target::Sm90a),
        dynamic_smem_limit: 48 * 1024,
        cluster_launch: true,
    };
}

/// What a launch must change on the function before it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LaunchPlan {
    /// Raise `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES` to this.
    pub raise_dynamic_smem_to: Option<u32>,
    /// Set `CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED`.
    pub non_portable_cluster: bool,
}

fn invalid(reason: String) -> RuntimeError {
    RuntimeError::InvalidLaunch { reason }
}

/// Checks `cfg` against `limits` and says what the function needs changed first.
pub fn check_launch(cfg: &LaunchConfig, limits: &LaunchLimits) -> Result<LaunchPlan> {
    const AXES: [&str; 3] = ["x", "y", "z"];
    let mut plan = LaunchPlan::default();
    for (i, axis) in AXES.iter().enumerate() {
        if cfg.grid[i] == 0 || cfg.block[i] == 0 {
            return Err(invalid(format!(
                "zero extent: grid {:?}, block {:?}",
                cfg.grid, cfg.block
            )));
        }
        if cfg.block[i] > limits.max_block_dims[i] {
            return Err(invalid(format!(
                "block {axis} = {} exceeds {}",
                cfg.block[i], limits.max_block_dims[i]
            )));
        }
        if cfg.grid[i] > limits.max_grid_dims[i] {
            return Err(invalid(format!(
                "grid {axis} = {} exceeds {}",
                cfg.grid[i], limits.max_grid_dims[i]
            )));
        }
    }
    let threads: u64 = cfg.block.iter().map(|&b| b as u64).product();
    if threads > limits.max_threads_per_block as u64 {
        return Err(invalid(format!(
            "{threads} threads per block exceed the limit of {}",
            limits.max_threads_per_block
        )));
    }
    let total_smem = cfg.dynamic_smem_bytes as u64 + limits.static_smem_bytes as u64;
    if total_smem > limits.smem_optin_bytes as u64 {
        return Err(RuntimeError::SharedMemoryTooLarge {
            requested: cfg.dynamic_smem_bytes as usize,
            static_bytes: limits.static_smem_bytes as usize,
            limit: limits.smem_optin_bytes as usize,
        });
    }
    if cfg.dynamic_smem_bytes > limits.dynamic_smem_limit {
        plan.raise_dynamic_smem_to = Some(cfg.dynamic_smem_bytes);
    }
    if let Some(cluster) = cfg.cluster {
        if !limits.cluster_launch {
            return Err(invalid(
                "the device does not launch thread-block clusters".into(),
            ));
        }
        if cluster.contains(&0) {
            return Err(invalid(format!("zero cluster extent: {cluster:?}")));
        }
        let size: u64 = cluster.iter().map(|&c| c as u64).product();
        if size > MAX_CLUSTER_SIZE {
            return Err(RuntimeError::ClusterTooLarge {
                dims: cluster,
                size,
                limit: MAX_CLUSTER_SIZE,
            });
        }
        plan.non_portable_cluster = size > PORTABLE_CLUSTER_SIZE;
        for i in 0..3 {
            if cfg.grid[i] % cluster[i] != 0 {
                return Err(invalid(format!(
                    "grid {} = {} is not a multiple of the cluster's {}",
                    AXES[i], cfg.grid[i], cluster[i]
                )));
            }
        }
    }
    if let Some(pref) = cfg.preferred_cluster {
        let Some(cluster) = cfg.cluster else {
            return Err(invalid(
                "a preferred cluster needs a cluster dimension too".into(),
            ));
        };
        for i in 0..3 {
            if pref[i] == 0 || pref[i] % cluster[i] != 0 {
                return Err(invalid(format!(
                    "preferred cluster {pref:?} is not a multiple of the cluster {cluster:?}"
                )));
            }
        }
    }
    Ok(plan)
}

/// A kernel ready to launch: an entry point of a loaded module, with the signature its arguments
/// are checked against.
pub struct Kernel {
    device: Device,
    module: Arc<Module>,
    func: sys::CUfunction,
    signature: KernelSignature,
    static_smem: u32,
    max_threads: u32,
    dynamic_smem_limit: AtomicU32,
    non_portable_set: std::sync::atomic::AtomicBool,
    /// The last map encoded for each TMA tensor parameter, with the description it was encoded
    /// from: a launch on the same tensors (the common case: a loop over fixed buffers) reuses the
    /// bytes instead of calling `cuTensorMapEncodeTiled` again.
    encoded: std::sync::Mutex<Vec<(usize, TensorMapDesc, TensorMap)>>,
}

// SAFETY: a CUfunction may be used from any thread with its context current (every use binds it);
// the mutable state is atomic.
unsafe impl Send for Kernel {}
// SAFETY: as above.
unsafe impl Sync for Kernel {}

impl std::fmt::Debug for Kernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kernel")
            .field("signature", &self.signature)
            .finish()
    }
}

fn func_attr(f: sys::CUfunction, a: sys::CUfunction_attribute) -> Result<u32> {
    let mut v = 0i32;
    // SAFETY: `f` is a live function handle of the current context.
    unsafe { sys::cuFuncGetAttribute(&mut v, a, f) }.result()?;
    Ok(v.max(0) as u32)
}

impl Kernel {
    /// The entry point `signature.name` of `module`, after [`KernelSignature::validate`].
    pub fn new(device: Device, module: Arc<Module>, signature: KernelSignature) -> Result<Kernel> {
        use sys::CUfunction_attribute::*;
        signature.validate()?;
        let func = module.function(&signature.name)?;
        let static_smem = func_attr(func, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)?;
        let max_threads = func_attr(func, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?;
        let dyn_limit = func_attr(func, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES)?;
        Ok(Kernel {
            device,
            module,
            func,
            signature,
            static_smem,
            max_threads,
            dynamic_smem_limit: AtomicU32::new(dyn_limit),
            non_portable_set: std::sync::atomic::AtomicBool::new(false),
            encoded: std::sync::Mutex::new(Vec::new()),
        })
    }

    /// The device the kernel is loaded on.
    pub fn device(&self) -> &Device {
        &self.device
    }

    /// The signature.
    pub fn signature(&self) -> &KernelSignature {
        &self.signature
    }

    /// The module the kernel lives in.
    pub fn module(&self) -> &Arc<Module> {
        &self.module
    }

    /// The function's static shared memory in bytes.
    pub fn static_smem_bytes(&self) -> u32 {
        self.static_smem
    }

    /// The limits a launch of this kernel is checked against.
    pub fn limits(&self) -> LaunchLimits {
        let a = self.device.attributes();
        LaunchLimits {
            max_threads_per_block: a.max_threads_per_block.min(self.max_threads),
            max_block_dims: [1024, 1024, 64],
            max_grid_dims: [i32::MAX as u32, 65535, 65535],
            static_smem_bytes: self.static_smem,
            smem_optin_bytes: a.max_shared_memory_per_block_optin,
            dynamic_smem_limit: self.dynamic_smem_limit.load(Ordering::Relaxed),
            cluster_launch: a.cluster_launch,
        }
    }

    /// Checks the arguments and the configuration without launching: what the launch would change
    /// on the function, and the symbolic-extent values, on success.
    pub fn check(&self, cfg: &LaunchConfig, args: &[ArgDesc]) -> Result<(LaunchPlan, Symbols)> {
        let (_, symbols) = check_and_pack(&self.signature, args, self.device.ordinal())?;
        let plan = check_launch(cfg, &self.limits())?;
        Ok((plan, symbols))
    }

    /// Sets the function attributes a launch plan needs (dynamic shared memory above 48 KB,
    /// non-portable cluster sizes), once each.
    fn apply_plan(&self, plan: &LaunchPlan) -> Result<()> {
        use sys::CUfunction_attribute::*;
        self.device.context().bind_to_thread()?;
        if let Some(bytes) = plan.raise_dynamic_smem_to {
            // SAFETY: live function of the current context; the value was checked against the
            // device's opt-in limit.
            unsafe {
                sys::cuFuncSetAttribute(
                    self.func,
                    CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    bytes as i32,
                )
            }
            .result()?;
            self.dynamic_smem_limit.store(bytes, Ordering::Relaxed);
        }
        if plan.non_portable_cluster && !self.non_portable_set.load(Ordering::Relaxed) {
            // SAFETY: as above.
            unsafe {
                sys::cuFuncSetAttribute(
                    self.func,
                    CU_FUNC_ATTRIBUTE_NON_PORTABLE_CLUSTER_SIZE_ALLOWED,
                    1,
                )
            }
            .result()?;
            self.non_portable_set.store(true, Ordering::Relaxed);
        }
        Ok(())
    }

    /// How many CTAs of `block` threads with `dynamic_smem_bytes` of dynamic shared memory one SM
    /// holds at once (`cuOccupancyMaxActiveBlocksPerMultiprocessor`): the occupancy a persistent
    /// grid is sized by. Raises the function's dynamic shared-memory limit first where needed.
    pub fn max_active_blocks_per_sm(
        &self,
        block: [u32; 3],
        dynamic_smem_bytes: u32,
    ) -> Result<u32> {
        let probe = LaunchConfig::new([1, 1, 1], block).with_dynamic_smem(dynamic_smem_bytes);
        let plan = check_launch(&probe, &self.limits())?;
        self.apply_plan(&plan)?;
        let threads: u32 = block.iter().product();
        let mut n: std::ffi::c_int = 0;
        // SAFETY: `self.func` is a live function of the context `apply_plan` bound; `n` outlives
        // the call.
        unsafe {
            sys::cuOccupancyMaxActiveBlocksPerMultiprocessor(
                &mut n,
                self.func,
                threads as std::ffi::c_int,
                dynamic_smem_bytes as usize,
            )
        }
        .result()?;
        Ok(n.max(0) as u32)
    }

    /// How many clusters of `cfg`'s shape can be resident at once
    /// (`cuOccupancyMaxActiveClusters`): a persistent kernel launched with more clusters than this
    /// runs a second, partial wave.
    pub fn max_active_clusters(&self, cfg: &LaunchConfig) -> Result<u32> {
        let plan = check_launch(cfg, &self.limits())?;
        self.apply_plan(&plan)?;
        let mut attrs = launch_attributes(cfg);
        let config = launch_config(cfg, std::ptr::null_mut(), &mut attrs);
        let mut n: std::ffi::c_int = 0;
        // SAFETY: `config` and `attrs` live across the call; `self.func` is a live function of
        // the bound context.
        unsafe { sys::cuOccupancyMaxActiveClusters(&mut n, self.func, &config) }.result()?;
        Ok(n.max(0) as u32)
    }

    /// The encoded map of TMA tensor parameter `index` for `desc`: the one encoded last for it
    /// when `desc` is the same (a map depends on nothing else), else a fresh encoding, kept.
    fn tensor_map(&self, index: usize, desc: &TensorMapDesc) -> Result<TensorMap> {
        let mut cache = self
            .encoded
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some((_, _, map)) = cache.iter().find(|(i, d, _)| *i == index && d == desc) {
            return Ok(*map);
        }
        let name = self.signature.params[index].name();
        let map = self
            .device
            .encode_tensor_map(desc)
            .map_err(|e| tma_error(name, e))?;
        cache.retain(|(i, _, _)| *i != index);
        cache.push((index, desc.clone(), map));
        Ok(map)
    }

    /// Checks every argument against the signature and the configuration against the device,
    /// encodes the tensor map of each TMA tensor parameter from the tensor passed for it (one
    /// `cuTensorMapEncodeTiled` call each), then launches on `stream` through `cuLaunchKernelEx`.
    /// Nothing is launched when a check fails. Returns the symbolic-extent values passed.
    pub fn launch(
        &self,
        stream: &CudaStream,
        cfg: &LaunchConfig,
        args: &mut [Arg<'_>],
    ) -> Result<Symbols> {
        let descs: Vec<ArgDesc> = args.iter().map(Arg::desc).collect();
        let packed = check_and_pack(&self.signature, &descs, self.device.ordinal())?;
        self.launch_packed(stream, cfg, packed, args)
    }

    /// [`Kernel::launch`] of arguments `check_and_pack` already checked and packed against
    /// this kernel's signature on its device (`packed`), so a caller that derives the
    /// configuration from the same check ([`super::LoadedKernel::launch`]) checks once.
    pub(crate) fn launch_packed(
        &self,
        stream: &CudaStream,
        cfg: &LaunchConfig,
        (mut params, symbols): (ParamBuffer, Symbols),
        args: &mut [Arg<'_>],
    ) -> Result<Symbols> {
        let ordinal = self.device.ordinal();
        if stream.context().ordinal() != ordinal {
            return Err(RuntimeError::WrongDevice {
                param: "<stream>".into(),
                expected: ordinal,
                got: stream.context().ordinal(),
            });
        }
        let plan = check_launch(cfg, &self.limits())?;
        // The TMA tensors' maps, built from the tensors passed and checked by `check_and_pack`,
        // encoded by the driver for this launch.
        let maps = params.tensor_maps().to_vec();
        for (index, desc) in &maps {
            params.write_tensor_map(*index, &self.tensor_map(*index, desc)?);
        }

        self.apply_plan(&plan)?;

        let mut attrs = launch_attributes(cfg);
        let config = launch_config(cfg, stream.cu_stream(), &mut attrs);
        let mut kernel_params = params.kernel_params();
        // Order the launch after earlier writes of the tensors; the guards record this launch's
        // accesses when dropped, after it is enqueued.
        let guards: Vec<_> = args.iter_mut().filter_map(|a| a.bind(stream)).collect();
        // SAFETY: `config` and `attrs` are valid for the call; `kernel_params` holds one pointer
        // per `.param` into `params`, packed to the signature, which the caller vouches matches
        // the PTX entry; the tensors outlive the enqueue and the guards order later uses.
        let status = unsafe {
            sys::cuLaunchKernelEx(
                &config,
                self.func,
                kernel_params.as_mut_ptr(),
                std::ptr::null_mut(),
            )
        };
        drop(guards);
        status.result().map_err(|source| RuntimeError::Launch {
            kernel: self.signature.name.clone(),
            source,
        })?;
        Ok(symbols)
    }
}

impl Kernel {
    /// [`Kernel::launch`], then waits for the stream as `watch` says: with a timeout, an error
    /// naming the kernel ([`RuntimeError::Timeout`]) instead of blocking for ever; with a debug
    /// build's [`super::HangBuffer`] (armed here before the launch), a failed or timed-out launch whose
    /// kernel wrote a hang record becomes [`RuntimeError::Hang`], naming the barrier, phase and
    /// thread.
    pub fn launch_watched(
        &self,
        stream: &CudaStream,
        cfg: &LaunchConfig,
        args: &mut [Arg<'_>],
        watch: &Watch<'_>,
    ) -> Result<Symbols> {
        if let Some(h) = watch.hang {
            h.arm(&self.module)?;
        }
        let symbols = self.launch(stream, cfg, args)?;
        let query = || {
            // SAFETY: a live stream of the kernel's context (checked by `launch`).
            match unsafe { sys::cuStreamQuery(stream.cu_stream()) } {
                sys::CUresult::CUDA_SUCCESS => Ok(true),
                sys::CUresult::CUDA_ERROR_NOT_READY => Ok(false),
                e => Err(DriverError(e)),
            }
        };
        let outcome = match watch.timeout {
            Some(t) => poll_until(query, t, Duration::from_millis(10)),
            None => stream.synchronize().map(|()| PollOutcome::Done),
        };
        let recorded = || -> Result<Option<RuntimeError>> {
            match watch.hang {
                Some(h) => Ok(h.report()?.map(|r| RuntimeError::Hang(Box::new(r)))),
                None => Ok(None),
            }
        };
        match outcome {
            Ok(PollOutcome::Done) => Ok(symbols),
            Ok(PollOutcome::TimedOut(waited)) => {
                Err(recorded()?.unwrap_or(RuntimeError::Timeout {
                    kernel: self.signature.name.clone(),
                    waited,
                }))
            }
            Err(source) => Err(recorded()?.unwrap_or(RuntimeError::Launch {
                kernel: self.signature.name.clone(),
                source,
            })),
        }
    }
}

/// The driver's description of a launch of `cfg` on `stream` with `attrs`; it points into
/// `attrs`, which must outlive its use.
fn launch_config(
    cfg: &LaunchConfig,
    stream: sys::CUstream,
    attrs: &mut [sys::CUlaunchAttribute],
) -> sys::CUlaunchConfig {
    sys::CUlaunchConfig {
        gridDimX: cfg.grid[0],
        gridDimY: cfg.grid[1],
        gridDimZ: cfg.grid[2],
        blockDimX: cfg.block[0],
        blockDimY: cfg.block[1],
        blockDimZ: cfg.block[2],
        sharedMemBytes: cfg.dynamic_smem_bytes,
        hStream: stream,
        attrs: if attrs.is_empty() {
            std::ptr::null_mut()
        } else {
            attrs.as_mut_ptr()
        },
        numAttrs: attrs.len() as u32,
    }
}

fn launch_attributes(cfg: &LaunchConfig) -> Vec<sys::CUlaunchAttribute> {
    use sys::CUlaunchAttributeID::*;
    let mut attrs = Vec::new();
    // SAFETY (all `zeroed`): the attribute value union is plain data; zero is a valid pattern.
    if let Some([x, y, z]) = cfg.cluster {
        let mut a: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
        a.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
        a.value.clusterDim = sys::CUlaunchAttributeValue_union__bindgen_ty_1 { x, y, z };
        attrs.push(a);
    }
    if let Some([x, y, z]) = cfg.preferred_cluster {
        let mut a: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
        a.id = CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION;
        a.value.preferredClusterDim = sys::CUlaunchAttributeValue_union__bindgen_ty_4 { x, y, z };
        attrs.push(a);
    }
    if cfg.programmatic_dependent_launch {
        let mut a: sys::CUlaunchAttribute = unsafe { std::mem::zeroed() };
        a.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
        a.value.programmaticStreamSerializationAllowed = 1;
        attrs.push(a);
    }
    attrs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_launch_needs_nothing() {
        let plan =
            check_launch(&LaunchConfig::for_elements(1000, 256), &LaunchLimits::SM90).unwrap();
        assert_eq!(plan, LaunchPlan::default());
        assert_eq!(LaunchConfig::for_elements(1000, 256).grid, [4, 1, 1]);
    }

    #[test]
    fn dynamic_smem_above_48k_raises_the_limit() {
        let cfg = LaunchConfig::new([1, 1, 1], [256, 1, 1]).with_dynamic_smem(200 * 1024);
        let plan = check_launch(&cfg, &LaunchLimits::SM90).unwrap();
        assert_eq!(plan.raise_dynamic_smem_to, Some(200 * 1024));
        let cfg = cfg.with_dynamic_smem(48 * 1024);
        assert_eq!(
            check_launch(&cfg, &LaunchLimits::SM90)
                .unwrap()
                .raise_dynamic_smem_to,
            None
        );
    }

    #[test]
    fn too_much_smem() {
        let cfg = LaunchConfig::new([1, 1, 1], [32, 1, 1]).with_dynamic_smem(232_448);
        check_launch(&cfg, &LaunchLimits::SM90).unwrap();
        let mut limits = LaunchLimits::SM90;
        limits.static_smem_bytes = 16;
        let e = check_launch(&cfg, &limits).unwrap_err();
        assert!(
            matches!(
                e,
                RuntimeError::SharedMemoryTooLarge {
                    requested: 232_448,
                    static_bytes: 16,
                    limit: 232_448
                }
            ),
            "{e}"
        );
    }

    #[test]
    fn cluster_rules() {
        let base = LaunchConfig::new([8, 1, 1], [32, 1, 1]);
        assert_eq!(
            check_launch(&base.with_cluster([2, 1, 1]), &LaunchLimits::SM90).unwrap(),
            LaunchPlan::default()
        );
        let e = check_launch(&base.with_cluster([3, 1, 1]), &LaunchLimits::SM90).unwrap_err();
        assert!(e.to_string().contains("not a multiple"), "{e}");
        let big = LaunchConfig::new([32, 1, 1], [32, 1, 1]);
        let plan = check_launch(&big.with_cluster([16, 1, 1]), &LaunchLimits::SM90).unwrap();
        assert!(plan.non_portable_cluster);
        let e = check_launch(&big.with_cluster([32, 1, 1]), &LaunchLimits::SM90).unwrap_err();
        assert!(
            matches!(
                e,
                RuntimeError::ClusterTooLarge {
                    size: 32,
                    limit: 16,
                    ..
                }
            ),
            "{e}"
        );
        let e = check_launch(&base.with_cluster([0, 1, 1]), &LaunchLimits::SM90).unwrap_err();
        assert!(matches!(e, RuntimeError::InvalidLaunch { .. }), "{e}");
        let mut old = LaunchLimits::SM90;
        old.cluster_launch = false;
        assert!(check_launch(&base.with_cluster([2, 1, 1]), &old).is_err());
        // Preferred cluster: needs a cluster and is a multiple of it.
        assert!(
            check_launch(&base.with_preferred_cluster([4, 1, 1]), &LaunchLimits::SM90).is_err()
        );
        check_launch(
            &base
                .with_cluster([2, 1, 1])
                .with_preferred_cluster([4, 1, 1]),
            &LaunchLimits::SM90,
        )
        .unwrap();
        assert!(
            check_launch(
                &base
                    .with_cluster([2, 1, 1])
                    .with_preferred_cluster([3, 1, 1]),
                &LaunchLimits::SM90
            )
            .is_err()
        );
    }

    #[test]
    fn block_and_grid_limits() {
        for (grid, block, want) in [
            ([1, 1, 1], [1025, 1, 1], "block x = 1025"),
            ([1, 1, 1], [64, 32, 1], "2048 threads"),
            ([1, 70000, 1], [1, 1, 1], "grid y"),
            ([0, 1, 1], [1, 1, 1], "zero"),
        ] {
            let cfg = LaunchConfig::new(grid, block);
            let e = check_launch(&cfg, &LaunchLimits::SM90).unwrap_err();
            assert!(e.to_string().contains(want), "{e}");
        }
    }

    #[test]
    fn attributes_for_cluster_and_pdl() {
        let cfg = LaunchConfig::new([8, 1, 1], [32, 1, 1])
            .with_cluster([2, 1, 1])
            .with_preferred_cluster([4, 1, 1])
            .with_pdl();
        let attrs = launch_attributes(&cfg);
        let ids: Vec<_> = attrs.iter().map(|a| a.id).collect();
        use sys::CUlaunchAttributeID::*;
        assert_eq!(
            ids,
            [
                CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION,
                CU_LAUNCH_ATTRIBUTE_PREFERRED_CLUSTER_DIMENSION,
                CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
            ]
        );
        // SAFETY: reading the fields just written.
        unsafe {
            assert_eq!(attrs[0].value.clusterDim.x, 2);
            assert_eq!(attrs[1].value.preferredClusterDim.x, 4);
            assert_eq!(attrs[2].value.programmaticStreamSerializationAllowed, 1);
        }
        assert!(launch_attributes(&LaunchConfig::new([1, 1, 1], [1, 1, 1])).is_empty());
    }
}
