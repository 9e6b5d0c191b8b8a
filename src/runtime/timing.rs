//! Timing GPU work with CUDA events on the stream it runs on (`cuEventRecord` before and after,
//! `cuEventElapsedTime`): what benchmarks and examples report, so every ratio against a peer is
//! measured the same way.

use std::sync::Arc;

use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{CudaStream, DriverError};

/// The median milliseconds of `iters` runs of `f` on `stream`, after `warmup` untimed runs. Each
/// run is bracketed by two events and waited for, so the time is the GPU's, not the host's.
///
/// `f` enqueues the work (a launch); its error type only needs to take the driver's.
pub fn median_ms<E: From<DriverError>>(
    stream: &Arc<CudaStream>,
    warmup: usize,
    iters: usize,
    mut f: impl FnMut() -> Result<(), E>,
) -> Result<f64, E> {
    for _ in 0..warmup {
        f()?;
    }
    let mut times = Vec::with_capacity(iters.max(1));
    for _ in 0..iters.max(1) {
        let start = stream.record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
        f()?;
        let end = stream.record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
        end.synchronize()?;
        times.push(f64::from(start.elapsed_ms(&end)?));
    }
    times.sort_by(f64::total_cmp);
    Ok(times[times.len() / 2])
}
