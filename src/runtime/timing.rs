//! Timing GPU work with CUDA events on the stream it runs on (`cuEventRecord` before and after,
//! `cuEventElapsedTime`): what benchmarks and examples report, so every ratio against a peer is
//! measured the same way.

use std::sync::Arc;

use cudarc::driver::sys::CUevent_flags;
use cudarc::driver::{CudaStream, DriverError};

/// What the stream runs, untimed, ahead of each timed run of [`median_ms`] and
/// [`median_ms_interleaved`].
pub enum Before<'a, E> {
    /// Nothing: each run finds the L2 as the run before it left it, and the host enqueues it on
    /// an idle GPU.
    Nothing,
    /// A clear of a [`L2_FLUSH_BYTES`] buffer, for memory-bound work, timed the way
    /// `triton.testing.do_bench` times it: each run starts with a cold L2 (no input left over
    /// from the run before) and the GPU is still busy while the host enqueues the launch (the
    /// host's launch cost stays out of the time, as it does in a model's stream of kernels).
    ColdL2,
    /// This work: the GPU is busy with it while the host enqueues the run (as with
    /// [`Before::ColdL2`]), and the run finds what it left (work of the same size on other
    /// memory: an L2 of another input's clean lines instead of a cleared buffer).
    Run(&'a mut dyn FnMut() -> Result<(), E>),
}

/// The median milliseconds of `iters` runs of `f` on `stream`, after `warmup` untimed runs, with
/// `before` enqueued untimed ahead of each timed run. Each run is bracketed by two events and
/// waited for, so the time is the GPU's, not the host's.
///
/// `f` enqueues the work (a launch); its error type only needs to take the driver's.
pub fn median_ms<E: From<DriverError>>(
    stream: &Arc<CudaStream>,
    warmup: usize,
    iters: usize,
    before: Before<'_, E>,
    mut f: impl FnMut() -> Result<(), E>,
) -> Result<f64, E> {
    let [ms] = median_ms_interleaved(stream, warmup, iters, before, [&mut f])?;
    Ok(ms)
}

/// The bytes [`Before::ColdL2`] clears before each run: more than any Hopper or Blackwell L2
/// (50 MB on an H100, 60 MB on a B200).
pub const L2_FLUSH_BYTES: usize = 256 << 20;

/// [`median_ms`] of each of `fs`, their runs interleaved (the first's, the second's, ..., then
/// the first's again, `before` ahead of each), so a drift of the GPU's clocks or of what else
/// runs touches each alike: a fairer ratio between two calls than two medians timed one after
/// the other.
pub fn median_ms_interleaved<E: From<DriverError>, const N: usize>(
    stream: &Arc<CudaStream>,
    warmup: usize,
    iters: usize,
    before: Before<'_, E>,
    mut fs: [&mut dyn FnMut() -> Result<(), E>; N],
) -> Result<[f64; N], E> {
    let ms = medians_ms_interleaved(stream, warmup, iters, before, N, |i| fs[i]())?;
    Ok(std::array::from_fn(|i| ms[i]))
}

/// [`median_ms_interleaved`] of `count` calls chosen by index: `f(i)` enqueues the `i`-th (so a
/// number of candidates known only at run time, sharing one output, can be timed interleaved);
/// the medians in index order.
pub fn medians_ms_interleaved<E: From<DriverError>>(
    stream: &Arc<CudaStream>,
    warmup: usize,
    iters: usize,
    mut before: Before<'_, E>,
    count: usize,
    mut f: impl FnMut(usize) -> Result<(), E>,
) -> Result<Vec<f64>, E> {
    let mut flush = match before {
        Before::ColdL2 => Some(stream.alloc_zeros::<u8>(L2_FLUSH_BYTES)?),
        Before::Nothing | Before::Run(_) => None,
    };
    let mut before = || -> Result<(), E> {
        match (&mut before, &mut flush) {
            (Before::Run(work), _) => work(),
            (_, Some(flush)) => Ok(stream.memset_zeros(flush)?),
            _ => Ok(()),
        }
    };
    for _ in 0..warmup {
        for i in 0..count {
            f(i)?;
        }
    }
    let mut times: Vec<Vec<f64>> = vec![Vec::with_capacity(iters.max(1)); count];
    for _ in 0..iters.max(1) {
        for (i, t) in times.iter_mut().enumerate() {
            before()?;
            let start = stream.record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
            f(i)?;
            let end = stream.record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
            end.synchronize()?;
            t.push(f64::from(start.elapsed_ms(&end)?));
        }
    }
    Ok(times
        .into_iter()
        .map(|mut t| {
            t.sort_by(f64::total_cmp);
            t[t.len() / 2]
        })
        .collect())
}

/// The milliseconds one run of `f` takes in a stream of runs, as a model's decode loop issues
/// them: `warmup` untimed runs, then `iters` runs back to back between two events (no clear and
/// no wait between them), the total over `iters`. `f` takes the run's index, so runs can
/// alternate between inputs (two caches, each larger than the L2, keep every run's reads cold
/// without [`Before::ColdL2`]'s clear, whose dirty lines the timed run would write back).
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
