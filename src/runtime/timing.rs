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
    f: impl FnMut() -> Result<(), E>,
) -> Result<f64, E> {
    timed(stream, || Ok(()), warmup, iters, f)
}

/// The bytes [`median_ms_cold`] writes before each run: more than any Hopper or Blackwell L2
/// (50 MB on an H100, 60 MB on a B200).
pub const L2_FLUSH_BYTES: usize = 256 << 20;

/// [`median_ms`] for memory-bound work, timed the way `triton.testing.do_bench` times it: before
/// each run the stream clears a [`L2_FLUSH_BYTES`] buffer, so the run starts with a cold L2 (no
/// input left over from the run before) and the GPU is still busy while the host enqueues the
/// launch (the host's launch cost stays out of the time, as it does in a model's stream of
/// kernels).
pub fn median_ms_cold<E: From<DriverError>>(
    stream: &Arc<CudaStream>,
    warmup: usize,
    iters: usize,
    f: impl FnMut() -> Result<(), E>,
) -> Result<f64, E> {
    let mut flush = stream.alloc_zeros::<u8>(L2_FLUSH_BYTES)?;
    let clear = || -> Result<(), E> { Ok(stream.memset_zeros(&mut flush)?) };
    timed(stream, clear, warmup, iters, f)
}

/// [`median_ms`] with `before` enqueued, untimed, ahead of each run: the GPU is busy with it
/// while the host enqueues the run (as in [`median_ms_cold`]), and the run finds what `before`
/// left (work of the same size on other memory: an L2 of another input's clean lines instead
/// of [`median_ms_cold`]'s cleared buffer).
pub fn median_ms_after<E: From<DriverError>>(
    stream: &Arc<CudaStream>,
    warmup: usize,
    iters: usize,
    before: impl FnMut() -> Result<(), E>,
    f: impl FnMut() -> Result<(), E>,
) -> Result<f64, E> {
    timed(stream, before, warmup, iters, f)
}

/// [`median_ms_cold`] of each of `fs`, their runs interleaved (the first's, the second's, ...,
/// then the first's again), so a drift of the GPU's clocks or of what else runs touches each
/// alike: a fairer ratio between two calls than two medians timed one after the other.
pub fn median_ms_cold_interleaved<E: From<DriverError>, const N: usize>(
    stream: &Arc<CudaStream>,
    warmup: usize,
    iters: usize,
    fs: [&mut dyn FnMut() -> Result<(), E>; N],
) -> Result<[f64; N], E> {
    let mut flush = stream.alloc_zeros::<u8>(L2_FLUSH_BYTES)?;
    let clear = || -> Result<(), E> { Ok(stream.memset_zeros(&mut flush)?) };
    timed_each(stream, clear, warmup, iters, fs)
}

fn timed<E: From<DriverError>>(
    stream: &Arc<CudaStream>,
    before: impl FnMut() -> Result<(), E>,
    warmup: usize,
    iters: usize,
    mut f: impl FnMut() -> Result<(), E>,
) -> Result<f64, E> {
    let [ms] = timed_each(stream, before, warmup, iters, [&mut f])?;
    Ok(ms)
}

/// The median of `iters` runs of each of `fs` (after `warmup` untimed runs of each), their
/// runs interleaved, `before` enqueued untimed ahead of each run.
fn timed_each<E: From<DriverError>, const N: usize>(
    stream: &Arc<CudaStream>,
    mut before: impl FnMut() -> Result<(), E>,
    warmup: usize,
    iters: usize,
    mut fs: [&mut dyn FnMut() -> Result<(), E>; N],
) -> Result<[f64; N], E> {
    for _ in 0..warmup {
        for f in fs.iter_mut() {
            f()?;
        }
    }
    let mut times: [Vec<f64>; N] = std::array::from_fn(|_| Vec::with_capacity(iters.max(1)));
    for _ in 0..iters.max(1) {
        for (f, t) in fs.iter_mut().zip(times.iter_mut()) {
            before()?;
            let start = stream.record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
            f()?;
            let end = stream.record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
            end.synchronize()?;
            t.push(f64::from(start.elapsed_ms(&end)?));
        }
    }
    Ok(times.map(|mut t| {
        t.sort_by(f64::total_cmp);
        t[t.len() / 2]
    }))
}

/// The milliseconds one run of `f` takes in a stream of runs, as a model's decode loop issues
/// them: `warmup` untimed runs, then `iters` runs back to back between two events (no clear and
/// no wait between them), the total over `iters`. `f` takes the run's index, so runs can
/// alternate between inputs (two caches, each larger than the L2, keep every run's reads cold
/// without [`median_ms_cold`]'s clear, whose dirty lines the timed run would write back).
pub fn mean_ms_back_to_back<E: From<DriverError>>(
    stream: &Arc<CudaStream>,
    warmup: usize,
    iters: usize,
    mut f: impl FnMut(usize) -> Result<(), E>,
) -> Result<f64, E> {
    for i in 0..warmup {
        f(i)?;
    }
    let iters = iters.max(1);
    let start = stream.record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
    for i in 0..iters {
        f(i)?;
    }
    let end = stream.record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
    end.synchronize()?;
    Ok(f64::from(start.elapsed_ms(&end)?) / iters as f64)
}
