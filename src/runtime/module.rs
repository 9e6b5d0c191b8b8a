//! Loading PTX through the driver JIT (`cuModuleLoadDataEx`) with its logs captured, and a cache of
//! loaded modules keyed by device, JIT options and PTX text.

use std::collections::HashMap;
use std::ffi::{CString, c_void};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use cudarc::driver::{CudaContext, DriverError, sys};

use super::device::Device;
use super::error::{Result, RuntimeError};
use super::jit::{JitOptions, jit_error};

/// Size of each JIT log buffer. Logs longer than this are cut (the driver stops writing).
const LOG_BYTES: usize = 64 * 1024;

/// A PTX module loaded into a device's context. Unloaded when dropped.
pub struct Module {
    ctx: Arc<CudaContext>,
    raw: sys::CUmodule,
    info_log: String,
}

// SAFETY: a CUmodule handle may be used from any thread once its context is made current, which
// every use here does first (`bind_to_thread`).
unsafe impl Send for Module {}
// SAFETY: as above; the module is never mutated through a shared reference.
unsafe impl Sync for Module {}

impl std::fmt::Debug for Module {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Module")
            .field("device", &self.ctx.ordinal())
            .finish()
    }
}

/// An integer JIT option value, which travels in the pointer itself (CUDA Driver API,
/// `cuModuleLoadDataEx`: "option values ... cast to void*").
fn option_int(v: usize) -> *mut c_void {
    std::ptr::without_provenance_mut(v)
}

fn log_text(buf: &[u8]) -> String {
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).trim_end().to_string()
}

impl Module {
    /// JIT-compiles `ptx` for `ctx`'s device. On failure, the error log is parsed and the error
    /// names the PTX line ([`RuntimeError::Jit`]).
    pub fn load(ctx: Arc<CudaContext>, ptx: &str, options: &JitOptions) -> Result<Module> {
        options.check()?;
        let image = CString::new(ptx).map_err(|e| RuntimeError::InvalidPtx {
            reason: format!("NUL byte at offset {}", e.nul_position()),
        })?;
        let mut info = vec![0u8; LOG_BYTES];
        let mut error = vec![0u8; LOG_BYTES];

        use sys::CUjit_option::*;
        let mut opts: Vec<sys::CUjit_option> = vec![
            CU_JIT_INFO_LOG_BUFFER,
            CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
            CU_JIT_ERROR_LOG_BUFFER,
            CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
        ];
        let mut values: Vec<*mut c_void> = vec![
            info.as_mut_ptr().cast(),
            option_int(LOG_BYTES),
            error.as_mut_ptr().cast(),
            option_int(LOG_BYTES),
        ];
        if let Some(level) = options.opt_level {
            opts.push(CU_JIT_OPTIMIZATION_LEVEL);
            values.push(option_int(level as usize));
        }
        if let Some(regs) = options.max_registers {
            opts.push(CU_JIT_MAX_REGISTERS);
            values.push(option_int(regs as usize));
        }
        if options.line_info {
            opts.push(CU_JIT_GENERATE_LINE_INFO);
            values.push(option_int(1));
        }
        if options.verbose {
            opts.push(CU_JIT_LOG_VERBOSE);
            values.push(option_int(1));
        }

        ctx.bind_to_thread()?;
        let mut raw: sys::CUmodule = std::ptr::null_mut();
        // SAFETY: `image` is NUL-terminated PTX; `opts` and `values` have the same length; the log
        // buffers outlive the call and their sizes are the ones given.
        let status = unsafe {
            sys::cuModuleLoadDataEx(
                &mut raw,
                image.as_ptr().cast(),
                opts.len() as u32,
                opts.as_mut_ptr(),
                values.as_mut_ptr(),
            )
        };
        let info_log = log_text(&info);
        if let Err(e) = status.result() {
            let name = e.error_name().map(|s| s.to_string_lossy().into_owned());
            let name = name.unwrap_or_else(|_| format!("{:?}", e.0));
            let mut log = log_text(&error);
            if !info_log.is_empty() {
                log = format!("{log}\n{info_log}");
            }
            return Err(jit_error(ptx, &log, &name));
        }
        Ok(Module { ctx, raw, info_log })
    }

    /// The JIT's info log (with [`JitOptions::verbose`], registers and shared memory per kernel).
    pub fn info_log(&self) -> &str {
        &self.info_log
    }

    /// The context the module lives in.
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// The device address and size of the module-scope variable `name` (`cuModuleGetGlobal`).
    pub(crate) fn global(&self, name: &str) -> Result<(sys::CUdeviceptr, usize)> {
        let not_found = || RuntimeError::HangConfig {
            reason: format!("the module has no global `{name}`"),
        };
        let cname = CString::new(name).map_err(|_| not_found())?;
        self.ctx.bind_to_thread()?;
        let (mut at, mut bytes): (sys::CUdeviceptr, usize) = (0, 0);
        // SAFETY: `self.raw` is a loaded module and `cname` is NUL-terminated.
        let status =
            unsafe { sys::cuModuleGetGlobal_v2(&mut at, &mut bytes, self.raw, cname.as_ptr()) };
        match status.result() {
            Ok(()) => Ok((at, bytes)),
            Err(DriverError(sys::CUresult::CUDA_ERROR_NOT_FOUND)) => Err(not_found()),
            Err(e) => Err(e.into()),
        }
    }

    /// The handle of entry point `name`.
    pub(crate) fn function(&self, name: &str) -> Result<sys::CUfunction> {
        let cname = CString::new(name).map_err(|_| RuntimeError::KernelNotFound {
            name: name.to_string(),
        })?;
        self.ctx.bind_to_thread()?;
        let mut f: sys::CUfunction = std::ptr::null_mut();
        // SAFETY: `self.raw` is a loaded module and `cname` is NUL-terminated.
        let status = unsafe { sys::cuModuleGetFunction(&mut f, self.raw, cname.as_ptr()) };
        match status.result() {
            Ok(()) => Ok(f),
            Err(DriverError(sys::CUresult::CUDA_ERROR_NOT_FOUND)) => {
                Err(RuntimeError::KernelNotFound {
                    name: name.to_string(),
                })
            }
            Err(e) => Err(e.into()),
        }
    }
}

impl Drop for Module {
    fn drop(&mut self) {
        self.ctx.record_err(self.ctx.bind_to_thread());
        // SAFETY: the module was loaded in this context and is unloaded once.
        self.ctx
            .record_err(unsafe { sys::cuModuleUnload(self.raw) }.result());
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct CacheKey {
    device: usize,
    options: JitOptions,
    ptx: String,
}

/// Loaded modules by (device, JIT options, PTX text). The full text is the key, so two different
/// texts never share a module.
#[derive(Debug, Default)]
pub struct ModuleCache {
    map: Mutex<HashMap<CacheKey, Arc<Module>>>,
    hits: AtomicU64,
    misses: AtomicU64,
}

impl ModuleCache {
    /// An empty cache.
    pub fn new() -> ModuleCache {
        ModuleCache::default()
    }

    /// The module for `ptx` on `device`, loading it on a miss. A failed load is not cached. The
    /// cache's lock is held during a load, so concurrent loads are serialised.
    pub fn get_or_load(
        &self,
        device: &Device,
        ptx: &str,
        options: &JitOptions,
    ) -> Result<Arc<Module>> {
        let key = CacheKey {
            device: device.ordinal(),
            options: *options,
            ptx: ptx.to_string(),
        };
        let mut map = self.map.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(m) = map.get(&key) {
            self.hits.fetch_add(1, Ordering::Relaxed);
            return Ok(m.clone());
        }
        self.misses.fetch_add(1, Ordering::Relaxed);
        let module = Arc::new(Module::load(device.context().clone(), ptx, options)?);
        map.insert(key, module.clone());
        Ok(module)
    }

    /// (hits, misses) so far.
    pub fn stats(&self) -> (u64, u64) {
        (
            self.hits.load(Ordering::Relaxed),
            self.misses.load(Ordering::Relaxed),
        )
    }

    /// How many modules are cached.
    pub fn len(&self) -> usize {
        self.map.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    /// Whether the cache is empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Drops every cached module (each is unloaded once nothing else holds it).
    pub fn clear(&self) {
        self.map.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }
}
