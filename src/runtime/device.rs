//! The device: a CUDA context on one GPU, its attributes, and the entry to loading and launching.

use std::sync::Arc;

use cudarc::driver::{CudaContext, CudaStream, DriverError, result, sys};

use super::error::{Result, RuntimeError};
use super::jit::JitOptions;
use super::launch::Kernel;
use super::module::{Module, ModuleCache};
use super::tensor_map::{TensorMap, TensorMapDesc, TensorMapRule, check_tensor_map};
use crate::signature::KernelSignature;

/// Whether the CUDA driver library can be loaded on this machine. Every driver call through cudarc
/// panics when it cannot, so [`Device::new`] asks this first.
pub fn driver_available() -> bool {
    // SAFETY: only tries to open the library by its candidate names; no symbol is called.
    unsafe { sys::is_culib_present() }
}

/// The CUDA version the driver supports, as the driver reports it (`1000 · major + 10 · minor`:
/// 13000 for CUDA 13.0; `cuDriverGetVersion`). No driver is [`RuntimeError::NoDriver`].
pub fn driver_version() -> Result<u32> {
    if !driver_available() {
        return Err(RuntimeError::NoDriver);
    }
    let mut v: std::ffi::c_int = 0;
    // SAFETY: the library is present (checked above); the call writes one int through a valid
    // pointer and needs no initialised driver.
    unsafe { sys::cuDriverGetVersion(&mut v) }.result()?;
    Ok(v.max(0) as u32)
}

/// Initialises the driver and returns how many devices it sees (0 when none).
pub fn device_count() -> Result<usize> {
    if !driver_available() {
        return Err(RuntimeError::NoDriver);
    }
    match result::init() {
        Ok(()) => {}
        Err(DriverError(sys::CUresult::CUDA_ERROR_NO_DEVICE)) => return Ok(0),
        Err(e) => return Err(e.into()),
    }
    Ok(CudaContext::device_count()?.max(0) as usize)
}

/// What the launcher and the user need to know of a device.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceAttributes {
    /// The device's name, e.g. `NVIDIA H100 80GB HBM3`.
    pub name: String,
    /// Compute capability (major, minor): (9, 0) on Hopper.
    pub compute_capability: (u32, u32),
    /// Streaming multiprocessors.
    pub sm_count: u32,
    /// Threads per block at most.
    pub max_threads_per_block: u32,
    /// Shared memory a block gets without opting in (48 KB).
    pub max_shared_memory_per_block: u32,
    /// Shared memory a block may opt in to (227 KB on H100).
    pub max_shared_memory_per_block_optin: u32,
    /// Shared memory per SM.
    pub max_shared_memory_per_sm: u32,
    /// Whether thread-block clusters can be launched.
    pub cluster_launch: bool,
    /// Device memory in bytes.
    pub total_memory: usize,
}

impl DeviceAttributes {
    fn query(ctx: &CudaContext) -> Result<DeviceAttributes> {
        use sys::CUdevice_attribute::*;
        let get = |a| -> Result<u32> { Ok(ctx.attribute(a)?.max(0) as u32) };
        let (major, minor) = ctx.compute_capability()?;
        Ok(DeviceAttributes {
            name: ctx.name()?,
            compute_capability: (major.max(0) as u32, minor.max(0) as u32),
            sm_count: get(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
            max_threads_per_block: get(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?,
            max_shared_memory_per_block: get(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK)?,
            max_shared_memory_per_block_optin: get(
                CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
            )?,
            max_shared_memory_per_sm: get(
                CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR,
            )?,
            cluster_launch: get(CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH)? != 0,
            total_memory: ctx.total_mem()?,
        })
    }
}

struct DeviceInner {
    ctx: Arc<CudaContext>,
    attrs: DeviceAttributes,
    cache: ModuleCache,
}

/// A CUDA device with its primary context. Cheap to clone (shared).
#[derive(Clone)]
pub struct Device {
    inner: Arc<DeviceInner>,
}

impl std::fmt::Debug for Device {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Device")
            .field("ordinal", &self.ordinal())
            .field("name", &self.inner.attrs.name)
            .finish()
    }
}

impl Device {
    /// Opens device `ordinal`: [`RuntimeError::NoDriver`] when libcuda cannot be loaded,
    /// [`RuntimeError::NoDevice`] when there is no such GPU; never panics for either.
    pub fn new(ordinal: usize) -> Result<Device> {
        let count = device_count()?;
        if ordinal >= count {
            return Err(RuntimeError::NoDevice { ordinal, count });
        }
        Device::from_context(CudaContext::new(ordinal)?)
    }

    /// A device over a context the caller already holds: a framework's (candle, burn), so that
    /// ptxkit loads its kernels into that context and launches them on the framework's streams
    /// and memory ([`TensorRef`](super::TensorRef), [`TensorMut`](super::TensorMut)).
    pub fn from_context(ctx: Arc<CudaContext>) -> Result<Device> {
        let attrs = DeviceAttributes::query(&ctx)?;
        Ok(Device {
            inner: Arc::new(DeviceInner {
                ctx,
                attrs,
                cache: ModuleCache::new(),
            }),
        })
    }

    /// The PTX target to build kernels for on this device: its own architecture, with the
    /// architecture-specific features (`sm_90a`, `sm_100a`) where the device has them; the newest
    /// target ptxkit knows that is not above the device for an unlisted one.
    pub fn target(&self) -> ptx_isa::Target {
        let (major, minor) = self.attributes().compute_capability;
        let sm = major * 10 + minor;
        let fits = |t: &&ptx_isa::Target| t.sm() <= sm;
        let arch = ptx_isa::Target::ALL
            .iter()
            .filter(fits)
            .rfind(|t| t.sm() == sm && t.is_arch_specific());
        let plain = ptx_isa::Target::ALL
            .iter()
            .filter(fits)
            .rfind(|t| !t.is_arch_specific());
        arch.or(plain).copied().unwrap_or(ptx_isa::Target::Sm80)
    }

    /// The device ordinal.
    pub fn ordinal(&self) -> usize {
        self.inner.ctx.ordinal()
    }

    /// The device's attributes, read once when it was opened.
    pub fn attributes(&self) -> &DeviceAttributes {
        &self.inner.attrs
    }

    /// The cudarc context, for allocation and streams.
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.inner.ctx
    }

    /// The context's default stream.
    pub fn default_stream(&self) -> Arc<CudaStream> {
        self.inner.ctx.default_stream()
    }

    /// A new stream.
    pub fn new_stream(&self) -> Result<Arc<CudaStream>> {
        Ok(self.inner.ctx.new_stream()?)
    }

    /// Loads PTX through the driver JIT, or returns the module already loaded for the same text and
    /// options on this device.
    pub fn load_ptx(&self, ptx: &str, options: &JitOptions) -> Result<Arc<Module>> {
        self.inner.cache.get_or_load(self, ptx, options)
    }

    /// Loads PTX through the driver JIT, bypassing the cache.
    pub fn load_ptx_uncached(&self, ptx: &str, options: &JitOptions) -> Result<Arc<Module>> {
        Module::load(self.inner.ctx.clone(), ptx, options).map(Arc::new)
    }

    /// The device's module cache.
    pub fn module_cache(&self) -> &ModuleCache {
        &self.inner.cache
    }

    /// Loads `ptx` (cached) and returns the kernel named by `signature`, ready to launch.
    pub fn kernel(
        &self,
        ptx: &str,
        options: &JitOptions,
        signature: KernelSignature,
    ) -> Result<Kernel> {
        let module = self.load_ptx(ptx, options)?;
        Kernel::new(self.clone(), module, signature)
    }

    /// Encodes a tiled tensor map after checking the driver's rules ([`super::check_tensor_map`])
    /// and that the device has compute capability 9.0 or more.
    pub fn encode_tensor_map(&self, desc: &TensorMapDesc) -> Result<TensorMap> {
        let (major, minor) = self.inner.attrs.compute_capability;
        if major < 9 {
            return Err(RuntimeError::TensorMapRule {
                rule: TensorMapRule::ComputeCapability,
                value: format!("compute capability {major}.{minor}"),
            });
        }
        self.inner.ctx.bind_to_thread()?;
        check_tensor_map(desc)?;
        TensorMap::encode_tiled_unchecked(desc)
    }

    /// Encodes a tiled tensor map with no host-side rule check: the driver's own validation is
    /// all there is (its answer to a broken rule is a bare `CUDA_ERROR_INVALID_VALUE`). For
    /// comparing the host rules with the driver; use [`Device::encode_tensor_map`] otherwise.
    pub fn encode_tensor_map_unchecked(&self, desc: &TensorMapDesc) -> Result<TensorMap> {
        self.inner.ctx.bind_to_thread()?;
        TensorMap::encode_tiled_unchecked(desc)
    }
}
