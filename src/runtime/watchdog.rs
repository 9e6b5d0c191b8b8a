//! The host watchdog: wait for a launch with a time limit instead of blocking for ever.
//!
//! A kernel that hangs never returns from `cuStreamSynchronize`. [`poll_until`] polls instead
//! (`cuStreamQuery`: `CUDA_SUCCESS` when the stream's work is done, `CUDA_ERROR_NOT_READY` while
//! it runs; CUDA Driver API, "Stream Management") and gives up after the limit, so
//! [`super::Kernel::launch_watched`] can return an error naming the kernel. The kernel itself
//! keeps running: the driver offers no way to stop one, and the context stays busy until it
//! ends or the process exits.

use std::time::{Duration, Instant};

use super::hang::HangBuffer;

/// How a watched launch waits.
#[derive(Debug, Clone, Copy, Default)]
pub struct Watch<'a> {
    /// Give up after this long (`None`: wait for ever, as a plain synchronize does).
    pub timeout: Option<Duration>,
    /// The record buffer of a debug build, armed before the launch and read after a failure.
    pub hang: Option<&'a HangBuffer>,
}

impl<'a> Watch<'a> {
    /// A watchdog of `timeout`.
    pub fn timeout(timeout: Duration) -> Watch<'a> {
        Watch {
            timeout: Some(timeout),
            hang: None,
        }
    }

    /// With a debug build's record buffer.
    pub fn with_hang(mut self, hang: &'a HangBuffer) -> Watch<'a> {
        self.hang = Some(hang);
        self
    }
}

/// How a poll ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PollOutcome {
    /// `done` said so.
    Done,
    /// The limit passed first; how long was waited.
    TimedOut(Duration),
}

/// Calls `done` until it returns true or fails, sleeping between calls (from 10 µs, doubling
/// up to `max_interval`, so a short kernel is seen at once and a long one costs few polls), for
/// at most `timeout`.
pub fn poll_until<E>(
    mut done: impl FnMut() -> Result<bool, E>,
    timeout: Duration,
    max_interval: Duration,
) -> Result<PollOutcome, E> {
    let start = Instant::now();
    let mut interval = Duration::from_micros(10).min(max_interval);
    loop {
        if done()? {
            return Ok(PollOutcome::Done);
        }
        let waited = start.elapsed();
        if waited >= timeout {
            return Ok(PollOutcome::TimedOut(waited));
        }
        std::thread::sleep(interval.min(timeout - waited));
        interval = (interval * 2).min(max_interval);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn done_after_some_polls() {
        let mut calls = 0;
        let out = poll_until(
            || -> Result<bool, ()> {
                calls += 1;
                Ok(calls == 5)
            },
            Duration::from_secs(10),
            Duration::from_millis(1),
        );
        assert_eq!(out, Ok(PollOutcome::Done));
        assert_eq!(calls, 5);
    }

    #[test]
    fn a_hang_times_out_near_the_limit() {
        let limit = Duration::from_millis(30);
        let start = Instant::now();
        let out = poll_until(|| Ok::<_, ()>(false), limit, Duration::from_millis(5)).unwrap();
        let PollOutcome::TimedOut(waited) = out else {
            panic!("{out:?}")
        };
        assert!(waited >= limit, "{waited:?}");
        assert!(start.elapsed() < limit * 10, "{:?}", start.elapsed());
    }

    #[test]
    fn the_timeout_error_names_the_kernel() {
        let e = crate::runtime::RuntimeError::Timeout {
            kernel: "gemm_bf16".into(),
            waited: Duration::from_millis(2500),
        };
        assert!(
            e.to_string()
                .starts_with("`gemm_bf16` did not finish within 2.5s (host watchdog)"),
            "{e}"
        );
    }

    #[test]
    fn an_error_stops_the_poll() {
        let mut calls = 0;
        let out = poll_until(
            || {
                calls += 1;
                if calls == 3 {
                    Err("launch failed")
                } else {
                    Ok(false)
                }
            },
            Duration::from_secs(10),
            Duration::from_millis(1),
        );
        assert_eq!(out, Err("launch failed"));
    }
}
