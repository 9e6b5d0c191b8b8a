//! Tuning a GEMM problem on the GPU at hand: time the candidate configurations of a problem
//! ([`candidates`]), keep the fastest in an on-disk cache ([`TuneCache`]) keyed by the GPU (its
//! name and SM count), the driver and ptxkit's version, and pick configurations from the cache
//! first and [`GemmConfig::for_problem_typed`]'s rule second ([`config_for_device`]; by default,
//! from the file at [`TuneCache::default_path`], [`config_for_problem`], which
//! [`Gemm::for_problem`] and the Python package's `gemm` take).
//!
//! ```
//! use ptxkit::isa::ScalarType::Bf16;
//! use ptxkit::library::gemm::tune::{TuneCache, TuneKey, TuneProblem, candidates};
//! let problem = TuneProblem::new(4096, 4096, 4096, Bf16, Bf16);
//! let key = TuneKey { gpu: "NVIDIA H200".into(), sms: 132, driver: 13000, version: "0.1.0".into() };
//! let picks = candidates(&problem, key.sms);
//! assert_eq!(picks[0], problem.rule(key.sms)); // the rule's pick first
//! let mut cache = TuneCache::default();
//! cache.insert(&key, &problem, picks[1], 800.0);
//! assert_eq!(cache.lookup(&key, &problem), Some(picks[1]));
//! let text = cache.to_text();
//! assert_eq!(TuneCache::parse(&text).unwrap().lookup(&key, &problem), Some(picks[1]));
//! ```

use std::path::{Path, PathBuf};

use ptx_isa::ScalarType;

use half::bf16;

use super::check::{CheckError, random_values, rel_error};
use super::{Fp8Epilogue, Fp8Scales, Gemm, GemmConfig};
use crate::runtime::{Before, Device, DeviceTensor, E4m3, median_ms, medians_ms_interleaved};

/// What a cached choice is valid for: the GPU (name and SM count), the driver's CUDA version and
/// ptxkit's version (a new release builds different kernels).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TuneKey {
    /// The device's name (`NVIDIA H200`).
    pub gpu: String,
    /// Its streaming multiprocessors.
    pub sms: u32,
    /// The driver's CUDA version ([`crate::runtime::driver_version`]).
    pub driver: u32,
    /// ptxkit's version.
    pub version: String,
}

impl TuneKey {
    /// The key of `device` with this build of ptxkit.
    pub fn of(device: &Device) -> Result<TuneKey, TuneError> {
        let a = device.attributes();
        Ok(TuneKey {
            gpu: a.name.clone(),
            sms: a.sm_count,
            driver: crate::runtime::driver_version()?,
            version: env!("CARGO_PKG_VERSION").to_string(),
        })
    }
}

/// A problem to tune: `C[m, n] = A[m, k]·B[n, k]ᵀ` with these element types (8-bit inputs take
/// per-tensor scales, as [`GemmConfig::for_problem_typed`] gives them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TuneProblem {
    /// Rows of A and C.
    pub m: usize,
    /// Rows of B, columns of C.
    pub n: usize,
    /// The reduction.
    pub k: usize,
    /// A's and B's type.
    pub input: ScalarType,
    /// C's type.
    pub output: ScalarType,
}

impl TuneProblem {
    /// The problem `m x n x k` of `input` in and `output` out.
    pub fn new(m: usize, n: usize, k: usize, input: ScalarType, output: ScalarType) -> TuneProblem {
        TuneProblem {
            m,
            n,
            k,
            input,
            output,
        }
    }

    /// The configuration the rule picks on a GPU of `sms` multiprocessors.
    pub fn rule(&self, sms: u32) -> GemmConfig {
        GemmConfig::for_problem_typed(self.m, self.n, sms, self.input, self.output)
    }
}

/// The configurations worth timing for `problem` on `sms` multiprocessors: the rule's pick first,
/// then every tile width (64 to 256) with the consumers sharing each tile or taking turns
/// ([`GemmConfig::pingpong`]), alone or in CTA pairs, at the deepest ring that fits, and two band
/// heights, where the tiles are fewer than the SMs split-K in 2, 4 and 8 parts
/// ([`GemmConfig::split_k`]), and for an M of at most [`DECODE_M`] the decode kernels
/// ([`super::swap_ab::candidates`]); each once, each valid. A decode problem's splits are
/// summed in the kernel only (one launch, [`GemmConfig::launches`]): a decode step issues its
/// GEMMs back to back, where a second launch costs more than it does timed alone.
pub fn candidates(problem: &TuneProblem, sms: u32) -> Vec<GemmConfig> {
    let decode = problem.m <= DECODE_M;
    let rule = problem.rule(sms);
    let mut out = vec![rule];
    for bn in [64, 128, 192, 256] {
        for pingpong in [false, true] {
            for cluster_m in [1, 2] {
                for group_m in [8, 16] {
                    let c = GemmConfig {
                        bn,
                        pingpong,
                        cluster_m,
                        group_m,
                        ..rule
                    }
                    .deepest();
                    if !out.contains(&c) && c.validate().is_ok() {
                        out.push(c);
                    }
                }
            }
        }
    }
    let small_m = super::swap_ab::candidates(rule, (problem.m, problem.n), sms);
    // A decode problem's split takes one launch.
    let offered = |c: &GemmConfig| !decode || c.launches() == 1;
    for c in split_k_candidates(rule, (problem.m, problem.n), sms)
        .into_iter()
        .chain(small_m)
    {
        if !out.contains(&c) && offered(&c) {
            out.push(c);
        }
    }
    out
}

/// The most tokens (M) a problem has for [`candidates`] to treat it as a decode step: the
/// decode kernels ([`super::swap_ab::candidates`]), its splits in one launch.
pub const DECODE_M: usize = 128;

/// The split-K variants of `cfg` worth timing for a C of `m x n` on `sms` multiprocessors: none
/// where `cfg`'s tiles alone fill the SMs, else 2, 4 and 8 parts ([`GemmConfig::split_k`]), 128
/// and 256 wide, from registers, at the deepest ring that fits, summed by a second launch and
/// (128 wide) in the kernel ([`GemmConfig::split_fixup`]); each valid.
pub fn split_k_candidates(cfg: GemmConfig, (m, n): (usize, usize), sms: u32) -> Vec<GemmConfig> {
    let tiles = m.div_ceil(GemmConfig::BM as usize) * n.div_ceil(cfg.bn as usize);
    if tiles >= sms as usize {
        return Vec::new();
    }
    let mut out = Vec::new();
    for bn in [128, 256] {
        for split_k in [2, 4, 8] {
            for split_fixup in [false, true] {
                let c = GemmConfig {
                    bn,
                    split_k,
                    split_fixup,
                    tma_store: false,
                    ..cfg
                }
                .deepest();
                if c.validate().is_ok() {
                    out.push(c);
                }
            }
        }
    }
    out
}

/// How much faster than the fastest unsplit candidate a split-K one must time to be picked
/// ([`pick`]): 3 %, about the spread of a 10-run median of a cold decode GEMM on the H200.
pub const SPLIT_MARGIN: f64 = 0.03;

/// The candidate to keep from `timed` (each configuration with its milliseconds; NaN for one
/// not timed): the fastest unsplit one, unless a split-K one ([`GemmConfig::split_k`] over 1,
/// or stream-K, [`GemmConfig::stream_k`]) is faster by more than [`SPLIT_MARGIN`]. A split adds work the timing may not show at a few
/// runs: each part's partial sums go through L2 and back, and the second launch's sum or the
/// fixup's counters. Session 16's decode table picked the 2-part fixup at bf16 16x6144x4096 by
/// its 10-run median (21.6 µs, level with the unsplit kernel's), whose kernel ncu then timed
/// 11 % slower than the unsplit one (18.56 against 16.67 µs, 107.5 against 79.9 MB of L2
/// traffic). `None` when nothing was timed.
pub fn pick(timed: impl IntoIterator<Item = (GemmConfig, f64)>) -> Option<(GemmConfig, f64)> {
    let fastest = |best: Option<(GemmConfig, f64)>, (c, ms): (GemmConfig, f64)| match best {
        Some((_, b)) if b <= ms => best,
        _ => Some((c, ms)),
    };
    let (mut split, mut whole) = (None, None);
    for (c, ms) in timed.into_iter().filter(|(_, ms)| !ms.is_nan()) {
        match splits_k(&c) {
            true => split = fastest(split, (c, ms)),
            false => whole = fastest(whole, (c, ms)),
        }
    }
    match (split, whole) {
        (Some(s), Some(w)) if s.1 < w.1 * (1.0 - SPLIT_MARGIN) => Some(s),
        (s, None) => s,
        (_, w) => w,
    }
}

/// Whether `c` splits a tile's reduction among CTAs (split-K, or stream-K,
/// [`GemmConfig::stream_k`]): its partials go through L2, so [`pick`] takes it only by
/// [`SPLIT_MARGIN`].
fn splits_k(c: &GemmConfig) -> bool {
    c.split_k > 1 || c.stream_k
}

/// How many of the timed candidates [`finalists`] keeps.
pub const FINALISTS: usize = 3;

/// The candidates worth timing again before [`pick`] chooses among them: the [`FINALISTS`]
/// fastest of `timed` (each configuration with its milliseconds; NaN for one not timed), and
/// the fastest unsplit one where it is not among them (the split margin is measured against
/// it); fastest first. A first pass of a few runs each over some fifty candidates keeps the
/// luckiest median as well as the fastest kernel (session 16b's decode table: a row's two
/// medians of the same two calls differed by up to 9 %); timing the few fastest again, longer
/// and interleaved, picks among kernels rather than among draws.
pub fn finalists(timed: impl IntoIterator<Item = (GemmConfig, f64)>) -> Vec<GemmConfig> {
    let mut all: Vec<(GemmConfig, f64)> = timed.into_iter().filter(|t| !t.1.is_nan()).collect();
    all.sort_by(|a, b| a.1.total_cmp(&b.1));
    let mut out: Vec<GemmConfig> = all.iter().take(FINALISTS).map(|t| t.0).collect();
    if let Some(&(whole, _)) = all.iter().find(|t| !splits_k(&t.0)) {
        if !out.contains(&whole) {
            out.push(whole);
        }
    }
    out
}

/// How much faster than the rule's configuration ([`TuneProblem::rule`]) another candidate must
/// time, interleaved with it, to replace it ([`pick_over_rule`]): 2 %. Two interleaved medians
/// of one pair are a draw within about 1 %: session 19's large shapes put the same pick against
/// the same baseline at 1.009 and 0.999 (bf16 4096³), 1.028 and 1.016 (e4m3 4096³) in two
/// runs a second apart. And the tuner, timing its finalists one after another while the clocks
/// fell, took a 128x128 tile over the rule's 128x256 by 0.3 % (bf16 6144³) and 0.9 % (e4m3
/// 8192³), which then ran at 0.928 and 0.960 of the baseline where the rule's tile had timed
/// 1.01-1.02.
pub const RULE_MARGIN: f64 = 0.02;

/// [`finalists`] of `timed` with the rule's configuration `rule` added where the first pass
/// timed it (it passed its check) and did not keep it: the field [`pick_over_rule`] decides
/// among, once timed again, interleaved.
pub fn finalists_with_rule(
    rule: GemmConfig,
    timed: impl IntoIterator<Item = (GemmConfig, f64)>,
) -> Vec<GemmConfig> {
    let timed: Vec<(GemmConfig, f64)> = timed.into_iter().collect();
    let mut out = finalists(timed.iter().copied());
    if !out.contains(&rule) && timed.iter().any(|t| t.0 == rule && !t.1.is_nan()) {
        out.push(rule);
    }
    out
}

/// The choice among `timed` (each configuration with its milliseconds, all timed in one
/// interleaved measurement, the rule's configuration `rule` among them; NaN for one not timed):
/// [`pick`]'s where it is the rule's or faster than the rule's by more than [`RULE_MARGIN`],
/// else the rule's. Without a time of the rule's (it failed its check, or was not timed),
/// [`pick`]'s. `None` when nothing was timed.
pub fn pick_over_rule(
    rule: GemmConfig,
    timed: impl IntoIterator<Item = (GemmConfig, f64)>,
) -> Option<(GemmConfig, f64)> {
    let timed: Vec<(GemmConfig, f64)> = timed.into_iter().filter(|t| !t.1.is_nan()).collect();
    let best = pick(timed.iter().copied())?;
    match timed.iter().find(|t| t.0 == rule) {
        Some(&r) if best.1 >= r.1 * (1.0 - RULE_MARGIN) => Some(r),
        _ => Some(best),
    }
}

/// Why tuning failed.
#[derive(Debug, thiserror::Error)]
pub enum TuneError {
    /// A GPU step failed (no GPU or driver among them).
    #[error(transparent)]
    Check(#[from] CheckError),
    /// The runtime failed (no driver).
    #[error(transparent)]
    Runtime(#[from] crate::runtime::RuntimeError),
    /// A driver call failed.
    #[error("CUDA: {0}")]
    Driver(#[from] cudarc::driver::DriverError),
    /// The cache file could not be read or written.
    #[error("tuning cache {path}: {message}")]
    Cache {
        /// The file.
        path: PathBuf,
        /// What went wrong.
        message: String,
    },
    /// A line of the cache file is not an entry.
    #[error("tuning cache line {line}: {message}")]
    Parse {
        /// The 1-based line.
        line: usize,
        /// What is wrong with it.
        message: String,
    },
    /// Element types tuning does not take (bf16 or e4m3 in, bf16 out).
    #[error("tuning takes bf16 or e4m3 inputs with a bf16 output, not {} -> {}", input.name(), output.name())]
    Types {
        /// A's and B's type.
        input: ScalarType,
        /// C's type.
        output: ScalarType,
    },
    /// No candidate ran correctly (each failed its comparison with the rule's result).
    #[error("no configuration of {m}x{n}x{k} passed its check")]
    NoneCorrect {
        /// The problem's extents.
        m: usize,
        /// .
        n: usize,
        /// .
        k: usize,
    },
}

/// One cached choice.
#[derive(Debug, Clone, PartialEq)]
struct Entry {
    key: TuneKey,
    problem: TuneProblem,
    config: GemmConfig,
    tflops: f64,
}

/// The tuning cache: the fastest configuration measured for each (GPU, driver, version,
/// problem). Its file holds one entry a line, tab-separated: GPU name, SMs, driver, version, m,
/// n, k, input, output, then the knobs a candidate varies (bn, stages, group_m, cluster_m,
/// pingpong, tma_store, split_k, swap_ab, split_fixup, cluster_n, stream_k) and the TFLOP/s
/// measured. A line of 19 fields (written before `cluster_n` was a knob) reads as `cluster_n`
/// 1, one of 20 (before `stream_k`) as no stream-K.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct TuneCache {
    entries: Vec<Entry>,
}

impl TuneCache {
    /// Where the cache lives, for `ptxkit tune` and the library's reads
    /// ([`config_for_problem`]): the file `$PTXKIT_TUNE_CACHE` ([`CACHE_ENV`]), else
    /// `$PTXKIT_CACHE_DIR/tune.tsv`, else `$XDG_CACHE_HOME/ptxkit/tune.tsv`, else
    /// `$HOME/.cache/ptxkit/tune.tsv`; `None` without any of them.
    pub fn default_path() -> Option<PathBuf> {
        path_from(|v| std::env::var_os(v))
    }

    /// The cache in `path` (empty when the file does not exist).
    pub fn load(path: &Path) -> Result<TuneCache, TuneError> {
        match std::fs::read_to_string(path) {
            Ok(text) => TuneCache::parse(&text),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(TuneCache::default()),
            Err(e) => Err(TuneError::Cache {
                path: path.to_path_buf(),
                message: e.to_string(),
            }),
        }
    }

    /// Writes the cache to `path` (its folder made if needed).
    pub fn save(&self, path: &Path) -> Result<(), TuneError> {
        let io = |e: std::io::Error| TuneError::Cache {
            path: path.to_path_buf(),
            message: e.to_string(),
        };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        std::fs::write(path, self.to_text()).map_err(io)
    }

    /// The configuration cached for `problem` under `key`.
    pub fn lookup(&self, key: &TuneKey, problem: &TuneProblem) -> Option<GemmConfig> {
        self.entries
            .iter()
            .find(|e| &e.key == key && &e.problem == problem)
            .map(|e| e.config)
    }

    /// Records `config` (measured at `tflops`) as the choice for `problem` under `key`, replacing
    /// an earlier one.
    pub fn insert(
        &mut self,
        key: &TuneKey,
        problem: &TuneProblem,
        config: GemmConfig,
        tflops: f64,
    ) {
        self.entries
            .retain(|e| !(&e.key == key && &e.problem == problem));
        self.entries.push(Entry {
            key: key.clone(),
            problem: *problem,
            config,
            tflops,
        });
    }

    /// The file's text.
    pub fn to_text(&self) -> String {
        let mut out = String::new();
        for e in &self.entries {
            let (k, p, c) = (&e.key, &e.problem, &e.config);
            out.push_str(&format!(
                "{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{}\t{:.1}\n",
                k.gpu.replace(['\t', '\n'], " "),
                k.sms,
                k.driver,
                k.version,
                p.m,
                p.n,
                p.k,
                p.input.name(),
                p.output.name(),
                c.bn,
                c.stages,
                c.group_m,
                c.cluster_m,
                u8::from(c.pingpong),
                u8::from(c.tma_store),
                c.split_k,
                u8::from(c.swap_ab),
                u8::from(c.split_fixup),
                c.cluster_n,
                u8::from(c.stream_k),
                e.tflops
            ));
        }
        out
    }

    /// The cache of a file's text; a malformed line is [`TuneError::Parse`] with its number.
    pub fn parse(text: &str) -> Result<TuneCache, TuneError> {
        let mut cache = TuneCache::default();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let bad = |message: String| TuneError::Parse {
                line: i + 1,
                message,
            };
            let f: Vec<&str> = line.split('\t').collect();
            if !matches!(f.len(), 19..=21) {
                return Err(bad(format!("{} fields, expected 21", f.len())));
            }
            // The TFLOP/s last; `cluster_n` and `stream_k` before it where the line has them.
            let last = f.len() - 1;
            let num = |j: usize| -> Result<u64, TuneError> {
                f[j].parse::<u64>()
                    .map_err(|_| bad(format!("field {} `{}` is not a number", j + 1, f[j])))
            };
            let small = |j: usize| -> Result<u32, TuneError> {
                u32::try_from(num(j)?).map_err(|_| bad(format!("field {} is too large", j + 1)))
            };
            let size = |j: usize| -> Result<usize, TuneError> {
                usize::try_from(num(j)?).map_err(|_| bad(format!("field {} is too large", j + 1)))
            };
            let ty = |j: usize| -> Result<ScalarType, TuneError> {
                ScalarType::from_name(f[j])
                    .ok_or_else(|| bad(format!("field {} `{}` is not a type", j + 1, f[j])))
            };
            let key = TuneKey {
                gpu: f[0].to_string(),
                sms: small(1)?,
                driver: small(2)?,
                version: f[3].to_string(),
            };
            let problem = TuneProblem::new(size(4)?, size(5)?, size(6)?, ty(7)?, ty(8)?);
            let config = GemmConfig {
                bn: small(9)?,
                stages: small(10)?,
                group_m: small(11)?,
                cluster_m: small(12)?,
                pingpong: num(13)? != 0,
                tma_store: num(14)? != 0,
                split_k: small(15)?,
                swap_ab: num(16)? != 0,
                split_fixup: num(17)? != 0,
                cluster_n: if last >= 19 { small(18)? } else { 1 },
                stream_k: last == 20 && num(19)? != 0,
                ..problem.rule(key.sms)
            };
            config
                .validate()
                .map_err(|e| bad(format!("the configuration is not a kernel: {e}")))?;
            let tflops = f[last]
                .parse::<f64>()
                .map_err(|_| bad(format!("field {} `{}` is not a number", last + 1, f[last])))?;
            cache.insert(&key, &problem, config, tflops);
        }
        Ok(cache)
    }
}

/// The environment variable naming the tuning cache's file ([`TuneCache::default_path`]), before
/// the cache folders.
pub const CACHE_ENV: &str = "PTXKIT_TUNE_CACHE";

/// [`TuneCache::default_path`] with the environment read through `var`.
fn path_from(var: impl Fn(&str) -> Option<std::ffi::OsString>) -> Option<PathBuf> {
    let var = |v: &str| var(v).filter(|s| !s.is_empty()).map(PathBuf::from);
    var(CACHE_ENV).or_else(|| {
        var("PTXKIT_CACHE_DIR")
            .or_else(|| var("XDG_CACHE_HOME").map(|d| d.join("ptxkit")))
            .or_else(|| var("HOME").map(|d| d.join(".cache").join("ptxkit")))
            .map(|d| d.join("tune.tsv"))
    })
}

/// The configuration the library's device-aware entry points give `problem` on `device`
/// ([`Gemm::for_problem`], the Python package's `gemm`): the tuning cache's choice under the
/// device's key ([`TuneKey::of`]) from the file at [`TuneCache::default_path`] (`ptxkit tune`'s
/// default, or `$PTXKIT_TUNE_CACHE`), else the rule ([`TuneProblem::rule`]). No cache file, an
/// unreadable or malformed one, or a key the driver cannot give is the rule, never an error
/// ([`TuneCache::load`] says what is wrong with a file). [`GemmConfig::for_problem`] and
/// [`GemmConfig::for_problem_typed`] stay the rule alone.
pub fn config_for_problem(device: &Device, problem: &TuneProblem) -> GemmConfig {
    let key = TuneKey::of(device).ok();
    let path = TuneCache::default_path();
    let sms = device.attributes().sm_count;
    config_from_file(path.as_deref(), key.as_ref(), sms, problem)
}

/// [`config_for_problem`] with its inputs given: the choice cached for `problem` under `key` in
/// the file at `path`, else the rule on `sms` multiprocessors. The file is read once and again
/// when its modification time or length changes, so a lookup a call costs one `stat`.
pub fn config_from_file(
    path: Option<&Path>,
    key: Option<&TuneKey>,
    sms: u32,
    problem: &TuneProblem,
) -> GemmConfig {
    let cache = match (path, key) {
        (Some(path), Some(_)) => shared_cache(path),
        _ => None,
    };
    cached_or_rule(cache.as_deref(), key, sms, problem)
}

/// The choice `cache` holds for `problem` under `key`, else the rule on `sms` multiprocessors.
fn cached_or_rule(
    cache: Option<&TuneCache>,
    key: Option<&TuneKey>,
    sms: u32,
    problem: &TuneProblem,
) -> GemmConfig {
    cache
        .zip(key)
        .and_then(|(cache, key)| cache.lookup(key, problem))
        .unwrap_or_else(|| problem.rule(sms))
}

/// A cache file as read: its path, modification time and length when read, and its entries.
type ReadCache = (
    PathBuf,
    std::time::SystemTime,
    u64,
    std::sync::Arc<TuneCache>,
);

/// The cache in the file at `path` as last read, read again when the file's modification time
/// or length changed; `None` without a file. A file that does not parse is an empty cache
/// (remembered, so it is not parsed again at every call until it changes).
fn shared_cache(path: &Path) -> Option<std::sync::Arc<TuneCache>> {
    static READ: std::sync::Mutex<Vec<ReadCache>> = std::sync::Mutex::new(Vec::new());
    let meta = std::fs::metadata(path).ok()?;
    let (modified, len) = (meta.modified().ok()?, meta.len());
    // A run that panicked while holding the lock left whole entries: use them.
    let mut read = READ.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, _, _, c)) = read
        .iter()
        .find(|(p, t, l, _)| p == path && *t == modified && *l == len)
    {
        return Some(c.clone());
    }
    let cache = std::sync::Arc::new(TuneCache::load(path).unwrap_or_default());
    read.retain(|(p, ..)| p != path);
    read.push((path.to_path_buf(), modified, len, cache.clone()));
    Some(cache)
}

/// One candidate's measurement.
#[derive(Debug, Clone, PartialEq)]
pub struct Timing {
    /// The configuration.
    pub config: GemmConfig,
    /// Its TFLOP/s (median of the first pass's runs), `None` when it failed its check.
    pub tflops: Option<f64>,
}

/// What [`tune`] measured: each candidate, and the winner (stored in the cache).
#[derive(Debug, Clone, PartialEq)]
pub struct TuneReport {
    /// Every candidate, in [`candidates`]' order.
    pub timings: Vec<Timing>,
    /// The pick ([`pick_over_rule`] among the finalists and the rule's configuration timed
    /// again, [`finalists_with_rule`]), which passed its check.
    pub best: GemmConfig,
    /// Its TFLOP/s when timed again.
    pub best_tflops: f64,
    /// Seconds spent building the candidates' PTX (a small part of the whole).
    pub build_seconds: f64,
    /// Seconds the driver spent compiling and loading them (its JIT, the larger part).
    pub load_seconds: f64,
    /// Seconds the whole tuning took.
    pub total_seconds: f64,
}

/// Times every candidate of `problem` on `device` and stores the fastest in `cache` under the
/// device's key. On fresh random operands of the problem's size each candidate runs once on a
/// poisoned C, which must match the rule's C (the first candidate, itself checked against cuBLAS
/// by the GEMM's tests) to a relative error of 1e-2, then is timed (the median of `iters` runs
/// after 3 warm-ups, each from a cold L2 ([`median_ms`] after [`Before::ColdL2`]), as the decode
/// table times them;
/// a warm L2 would hold the whole weight of most decode problems, 16.8 MB at e4m3 4096x4096,
/// and time another kernel than a model's step runs). The [`finalists`] and the rule's
/// configuration ([`finalists_with_rule`]) are timed again, `2 · iters` runs each, their runs
/// interleaved ([`medians_ms_interleaved`]), and [`pick_over_rule`] chooses among those times:
/// another candidate replaces the rule's only by [`RULE_MARGIN`]. bf16 in with bf16 out, or e4m3 in
/// (per-tensor scales) with bf16 out; other types are [`TuneError::Types`].
pub fn tune(
    device: &Device,
    problem: &TuneProblem,
    cache: &mut TuneCache,
    iters: usize,
) -> Result<TuneReport, TuneError> {
    let start = std::time::Instant::now();
    let key = TuneKey::of(device)?;
    let stream = device.default_stream();
    let (m, n, k) = (problem.m, problem.n, problem.k);
    let flops = 2.0 * m as f64 * n as f64 * k as f64;
    let mut ops = Operands::new(device, problem)?;
    let (mut build_seconds, mut load_seconds) = (0.0, 0.0);
    let mut reference: Option<Vec<f32>> = None;
    let mut timings = Vec::new();
    let mut correct_ones: Vec<(GemmConfig, Gemm)> = Vec::new();
    for cfg in candidates(problem, key.sms) {
        // The PTX alone, then the kernel built again and loaded (the driver's JIT).
        let t = std::time::Instant::now();
        super::build_with(&cfg, smem::pipeline::sync::WaitMode::Spin)
            .map_err(|e| CheckError::from(super::GemmError::from(e)))?;
        build_seconds += t.elapsed().as_secs_f64();
        let t = std::time::Instant::now();
        let gemm = Gemm::new(device, cfg).map_err(CheckError::from)?;
        load_seconds += t.elapsed().as_secs_f64();
        ops.poison()?;
        ops.run(&gemm)?;
        let c = ops.c()?;
        let correct = match &reference {
            None => c.iter().all(|x| x.is_finite()),
            Some(r) => rel_error(&c, r) < 1e-2,
        };
        if reference.is_none() {
            reference = Some(c);
        }
        let tflops = match correct {
            false => None,
            true => {
                let ms = median_ms::<TuneError>(&stream, 3, iters.max(1), Before::ColdL2, || {
                    ops.run(&gemm)
                })?;
                correct_ones.push((cfg, gemm));
                Some(flops / ms / 1e9)
            }
        };
        timings.push(Timing {
            config: cfg,
            tflops,
        });
    }
    // The finalists and the rule's configuration timed again, their runs interleaved (a drift
    // of the clocks touches each alike), then the pick by time ([`pick_over_rule`]):
    // milliseconds are `flops / tflops / 1e9`.
    let first = timings
        .iter()
        .filter_map(|t| t.tflops.map(|f| (t.config, flops / f / 1e9)));
    let rule = problem.rule(key.sms);
    let finals: Vec<&(GemmConfig, Gemm)> = finalists_with_rule(rule, first)
        .into_iter()
        .filter_map(|cfg| correct_ones.iter().find(|(c, _)| *c == cfg))
        .collect();
    let ms = medians_ms_interleaved::<TuneError>(
        &stream,
        1,
        2 * iters.max(1),
        Before::ColdL2,
        finals.len(),
        |i| ops.run(&finals[i].1),
    )?;
    let again = finals.iter().map(|f| f.0).zip(ms);
    let (best, best_ms) = pick_over_rule(rule, again).ok_or(TuneError::NoneCorrect { m, n, k })?;
    let best_tflops = flops / best_ms / 1e9;
    cache.insert(&key, problem, best, best_tflops);
    Ok(TuneReport {
        timings,
        best,
        best_tflops,
        build_seconds,
        load_seconds,
        total_seconds: start.elapsed().as_secs_f64(),
    })
}

/// The shape of a per-tensor scale: one f32, as the kernel's `scale_a` and `scale_b` declare it.
const PER_TENSOR_SCALE: [usize; 1] = [1];

/// A tuning problem's device operands: random A and B (values in [-1, 1)), a bf16 C, and an
/// 8-bit input's per-tensor scales (1.0).
struct Operands {
    stream: std::sync::Arc<cudarc::driver::CudaStream>,
    inputs: Inputs,
    c: DeviceTensor<bf16>,
}

/// A and B in their type (and an 8-bit input's scales).
enum Inputs {
    Bf16([DeviceTensor<bf16>; 2]),
    E4m3([DeviceTensor<E4m3>; 2], [DeviceTensor<f32>; 2]),
}

impl Operands {
    fn new(device: &Device, p: &TuneProblem) -> Result<Operands, TuneError> {
        let stream = device.default_stream();
        fn upload<T: crate::runtime::Element>(
            stream: &std::sync::Arc<cudarc::driver::CudaStream>,
            values: Vec<f32>,
            shape: &[usize],
            to: impl Fn(f32) -> T,
        ) -> Result<DeviceTensor<T>, TuneError> {
            let host: Vec<T> = values.into_iter().map(to).collect();
            Ok(DeviceTensor::from_host(stream, &host, shape.to_vec()).map_err(CheckError::from)?)
        }
        let (a, b) = (random_values(p.m * p.k, 1), random_values(p.n * p.k, 2));
        let inputs = match (p.input, p.output) {
            (ScalarType::Bf16, ScalarType::Bf16) => Inputs::Bf16([
                upload(&stream, a, &[p.m, p.k], bf16::from_f32)?,
                upload(&stream, b, &[p.n, p.k], bf16::from_f32)?,
            ]),
            (ScalarType::E4m3, ScalarType::Bf16) => Inputs::E4m3(
                [
                    upload(&stream, a, &[p.m, p.k], E4m3::from_f32)?,
                    upload(&stream, b, &[p.n, p.k], E4m3::from_f32)?,
                ],
                [
                    upload(&stream, vec![1.0], &PER_TENSOR_SCALE, |x| x)?,
                    upload(&stream, vec![1.0], &PER_TENSOR_SCALE, |x| x)?,
                ],
            ),
            (input, output) => return Err(TuneError::Types { input, output }),
        };
        let c = upload(&stream, vec![0.0; p.m * p.n], &[p.m, p.n], bf16::from_f32)?;
        Ok(Operands { stream, inputs, c })
    }

    /// NaN into C, where a run that skips an element leaves it.
    fn poison(&mut self) -> Result<(), TuneError> {
        let nan = vec![bf16::from_bits(0xFFFF); self.c.slice_mut().len()];
        self.stream.memcpy_htod(&nan, self.c.slice_mut())?;
        Ok(())
    }

    fn run(&mut self, gemm: &Gemm) -> Result<(), TuneError> {
        let (stream, c) = (&self.stream, &mut self.c);
        let r = match &self.inputs {
            Inputs::Bf16([a, b]) => gemm.run(stream, a, b, c, None),
            Inputs::E4m3([a, b], [sa, sb]) => {
                let scales = Fp8Scales::per_tensor([sa, sb]);
                gemm.run_fp8(stream, a, b, c, scales, &Fp8Epilogue::NONE)
            }
        };
        Ok(r.map_err(CheckError::from)?)
    }

    fn c(&self) -> Result<Vec<f32>, TuneError> {
        let host = self.c.to_host(&self.stream).map_err(CheckError::from)?;
        Ok(host.iter().map(|x| x.to_f32()).collect())
    }
}

/// The configuration for `problem` on `device`: the cached choice under the device's key when
/// `cache` has one, else the rule's ([`TuneProblem::rule`]); [`config_for_problem`] with a
/// cache already loaded.
pub fn config_for_device(device: &Device, problem: &TuneProblem, cache: &TuneCache) -> GemmConfig {
    let key = TuneKey::of(device).ok();
    cached_or_rule(
        Some(cache),
        key.as_ref(),
        device.attributes().sm_count,
        problem,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use ScalarType::{Bf16, E4m3};

    /// The scales an 8-bit problem's operands upload have the shape its kernels declare (a
    /// rank-2 `[1, 1]` was refused at the first launch on the H200, session 18).
    #[test]
    fn per_tensor_scales_have_the_kernels_shape() {
        let rule = TuneProblem::new(4096, 2112, 7168, E4m3, Bf16).rule(132);
        let gemm = super::super::build_with(&rule, smem::pipeline::sync::WaitMode::Spin).unwrap();
        for name in ["scale_a", "scale_b"] {
            let param = gemm.built.signature().param(name);
            let shape = param.and_then(|p| p.shape()).map(<[_]>::len);
            assert_eq!(shape, Some(PER_TENSOR_SCALE.len()), "{name}");
        }
    }

    fn key() -> TuneKey {
        TuneKey {
            gpu: "NVIDIA H200".into(),
            sms: 132,
            driver: 13000,
            version: "0.1.0".into(),
        }
    }

    /// The pick takes a split-K candidate only when it is faster than every unsplit one by
    /// more than the margin: session 16's bf16 16x6144x4096, whose 2-part fixup timed level
    /// with the unsplit kernel (its kernel 11 % slower under ncu), keeps the unsplit one.
    #[test]
    fn pick_takes_a_split_only_by_a_margin() {
        let base = GemmConfig::for_problem_typed(16, 6144, 132, Bf16, Bf16);
        let whole = base.decode_tile(16, 1, true);
        let split = base.decode_tile(16, 2, true);
        let fixup = GemmConfig {
            split_fixup: true,
            ..split
        };
        let slower = base.decode_tile(32, 1, true);
        // Level within the margin: the unsplit kernel.
        let row = [
            (slower, 0.0240),
            (fixup, 0.0216),
            (whole, 0.0219),
            (split, f64::NAN),
        ];
        assert_eq!(pick(row), Some((whole, 0.0219)));
        // Faster by more than the margin: the split.
        assert_eq!(
            pick([(whole, 0.0219), (fixup, 0.0200)]),
            Some((fixup, 0.0200))
        );
        // Only splits timed, or nothing.
        assert_eq!(pick([(split, 0.03), (fixup, 0.02)]), Some((fixup, 0.02)));
        assert_eq!(pick([(whole, f64::NAN)]), None);
    }

    /// A decode problem's candidates run in one launch each (their splits summed in the
    /// kernel), at every M of the decode table and both input types; a larger M still gets
    /// the second launch's sum among its splits.
    #[test]
    fn decode_candidates_take_one_launch() {
        for input in [Bf16, E4m3] {
            for m in [1, 16, 64, 100, 128] {
                for (n, k) in [(4096, 4096), (2112, 7168), (7168, 2048)] {
                    let c = candidates(&TuneProblem::new(m, n, k, input, Bf16), 132);
                    assert!(c.iter().all(|x| x.launches() == 1), "{m}x{n}x{k}");
                    assert!(c.iter().any(|x| x.split_k > 1 && x.split_fixup), "{m}x{n}");
                }
            }
        }
        let tall = candidates(&TuneProblem::new(256, 2112, 7168, Bf16, Bf16), 132);
        assert!(tall.iter().any(|x| x.launches() == 2));
    }

    /// The finalists: the three fastest, fastest first, and the fastest unsplit one where a
    /// split crowds it out; NaN (not timed) left out.
    #[test]
    fn finalists_are_the_fastest_and_the_fastest_unsplit() {
        let base = GemmConfig::for_problem_typed(1, 4096, 132, E4m3, Bf16);
        let split = |parts| GemmConfig {
            split_fixup: true,
            ..base.swapped(16, parts)
        };
        let (whole, wide) = (base.swapped(16, 1), base.swapped(32, 1));
        let timed = [
            (whole, 0.0130),
            (split(2), 0.0110),
            (split(4), 0.0105),
            (split(8), 0.0120),
            (wide, f64::NAN),
        ];
        assert_eq!(finalists(timed), vec![split(4), split(2), split(8), whole]);
        let timed = [(wide, 0.0140), (whole, 0.0100), (split(2), 0.0120)];
        assert_eq!(finalists(timed), vec![whole, split(2), wide]);
        assert!(finalists([(whole, f64::NAN)]).is_empty());
    }

    /// The rule's configuration stays unless another finalist times faster than it by more
    /// than [`RULE_MARGIN`]: session 19's finalists (bf16 6144³: the 128x128 tile 0.3 % under
    /// the rule's 128x256; e4m3 8192³: 0.9 %) keep the rule; a win of 3 % replaces it; without
    /// a time of the rule's, the fastest.
    #[test]
    fn the_rule_stays_unless_beaten_by_the_margin() {
        for (input, n, base_ms, narrow_ms) in [
            (Bf16, 6144, 0.67382, 0.67194),
            (E4m3, 8192, 0.83002, 0.82269),
        ] {
            let p = TuneProblem::new(n, n, n, input, Bf16);
            let rule = p.rule(132);
            assert_eq!(rule.bn, 256);
            let narrow = GemmConfig { bn: 128, ..rule }.deepest();
            let c2 = GemmConfig {
                cluster_m: 2,
                ..narrow
            };
            let timed = [(rule, base_ms), (narrow, narrow_ms), (c2, base_ms * 1.04)];
            assert_eq!(pick(timed), Some((narrow, narrow_ms)));
            assert_eq!(pick_over_rule(rule, timed), Some((rule, base_ms)));
            // 3 % faster: the candidate.
            let faster = base_ms * 0.97;
            assert_eq!(
                pick_over_rule(rule, [(rule, base_ms), (narrow, faster)]),
                Some((narrow, faster))
            );
            // The rule not timed (failed its check) or NaN: the fastest of the others.
            assert_eq!(
                pick_over_rule(rule, [(narrow, 0.7), (c2, 0.69)]),
                Some((c2, 0.69))
            );
            assert_eq!(
                pick_over_rule(rule, [(rule, f64::NAN), (narrow, 0.7)]),
                Some((narrow, 0.7))
            );
            assert_eq!(pick_over_rule(rule, [(rule, f64::NAN)]), None);
        }
        // A split must beat the fastest unsplit one by the split margin and the rule by the
        // rule's: 2.5 % under the rule, 1 % under the fastest unsplit: the rule.
        let p = TuneProblem::new(16, 4096, 4096, E4m3, Bf16);
        let rule = p.rule(132);
        let whole = rule.swapped(16, 1);
        let split = GemmConfig {
            split_fixup: true,
            ..rule.swapped(16, 4)
        };
        let timed = [(rule, 0.0100), (whole, 0.00985), (split, 0.00975)];
        assert_eq!(pick_over_rule(rule, timed), Some((rule, 0.0100)));
        // The split 4 % under the unsplit one, 5 % under the rule: the split.
        let timed = [(rule, 0.0100), (whole, 0.0099), (split, 0.0095)];
        assert_eq!(pick_over_rule(rule, timed), Some((split, 0.0095)));
    }

    /// The rule's configuration joins the finalists where the first pass timed it and did not
    /// keep it, once; not where it was not timed.
    #[test]
    fn the_rule_joins_the_finalists() {
        let p = TuneProblem::new(8192, 8192, 8192, E4m3, Bf16);
        let rule = p.rule(132);
        let others: Vec<GemmConfig> = candidates(&p, 132)
            .into_iter()
            .filter(|c| *c != rule)
            .take(3)
            .collect();
        let timed = [
            (others[0], 0.820),
            (others[1], 0.821),
            (others[2], 0.822),
            (rule, 0.830),
        ];
        let f = finalists_with_rule(rule, timed);
        assert_eq!(f, vec![others[0], others[1], others[2], rule]);
        let timed = [(rule, 0.810), (others[0], 0.820), (others[1], 0.821)];
        assert_eq!(
            finalists_with_rule(rule, timed),
            vec![rule, others[0], others[1]]
        );
        let untimed = [(others[0], 0.820), (rule, f64::NAN)];
        assert_eq!(finalists_with_rule(rule, untimed), vec![others[0]]);
        assert_eq!(
            finalists_with_rule(rule, [(others[1], 0.9)]),
            vec![others[1]]
        );
    }

    /// The candidates are valid, distinct, led by the rule's pick, and include the ping-pong
    /// consumers and the narrow tiles a decode shape wants.
    #[test]
    fn candidates_lead_with_the_rule_and_are_valid() {
        for p in [
            TuneProblem::new(64, 7168, 2048, E4m3, Bf16),
            TuneProblem::new(4096, 4096, 4096, Bf16, Bf16),
        ] {
            let c = candidates(&p, 132);
            assert_eq!(c[0], p.rule(132));
            assert!(c.iter().all(|x| x.validate().is_ok()));
            for (i, x) in c.iter().enumerate() {
                assert!(!c[..i].contains(x));
            }
            assert!(c.iter().any(|x| x.pingpong) && c.iter().any(|x| x.bn == 64));
        }
        // A decode shape's 28 tiles on 132 SMs: split-K candidates too; 4096³ has none.
        let decode = candidates(&TuneProblem::new(64, 7168, 16384, E4m3, Bf16), 132);
        assert!(decode.iter().any(|x| x.split_k == 8));
        // N = 2112 swapped: 17 tiles, split in 7 to fill the 132 SMs once (8 would leave a
        // second wave of 4), with the in-kernel fixup too.
        let narrow = candidates(&TuneProblem::new(128, 2112, 7168, E4m3, Bf16), 132);
        assert!(
            narrow
                .iter()
                .any(|x| x.swap_ab && x.bn == 128 && x.split_k == 7 && x.split_fixup)
        );
        let square = candidates(&TuneProblem::new(4096, 4096, 4096, Bf16, Bf16), 132);
        assert!(
            square
                .iter()
                .all(|x| x.split_k == 1 && !x.swap_ab && !x.stream_k)
        );
        // M = 16: the swapped kernels 16 and 32 wide, unsplit and split.
        let tokens = candidates(&TuneProblem::new(16, 4096, 4096, Bf16, Bf16), 132);
        for bn in [16, 32] {
            assert!(
                tokens
                    .iter()
                    .any(|x| x.swap_ab && x.bn == bn && x.split_k == 1)
            );
            assert!(
                tokens
                    .iter()
                    .any(|x| x.swap_ab && x.bn == bn && x.split_k == 4)
            );
        }
    }

    /// Stream-K ([`GemmConfig::stream_k`]) is offered where a decode shape's tiles leave SMs
    /// idle (bf16 and e4m3, swapped and unswapped), not where the tiles fill them; the pick
    /// takes it only by the split margin; a stream-K choice survives the cache's text.
    #[test]
    fn stream_k_is_a_decode_candidate_picked_by_the_margin() {
        for input in [Bf16, E4m3] {
            for m in [1, 16, 64, 128] {
                let p = TuneProblem::new(m, 7168, 2048, input, Bf16);
                let c = candidates(&p, 132);
                assert!(c.iter().any(|x| x.stream_k && x.swap_ab), "{m}");
                assert!(c.iter().all(|x| !x.stream_k || x.validate().is_ok()));
                if m > 32 {
                    assert!(c.iter().any(|x| x.stream_k && !x.swap_ab), "{m}");
                }
            }
        }
        let big = candidates(&TuneProblem::new(4096, 8192, 8192, Bf16, Bf16), 132);
        assert!(big.iter().all(|x| !x.stream_k));
        let base = GemmConfig::for_problem_typed(16, 7168, 132, Bf16, Bf16);
        let whole = base.swapped(16, 1);
        let stream = GemmConfig {
            stream_k: true,
            ..whole
        };
        assert_eq!(
            pick([(whole, 0.0100), (stream, 0.0099)]),
            Some((whole, 0.0100))
        );
        assert_eq!(
            pick([(whole, 0.0100), (stream, 0.0090)]),
            Some((stream, 0.0090))
        );
        let p = TuneProblem::new(16, 7168, 2048, Bf16, Bf16);
        assert_eq!(round_trip(&p, stream), Some(stream));
    }

    /// `cfg` cached for `p`, written as text, read back and looked up.
    fn round_trip(p: &TuneProblem, cfg: GemmConfig) -> Option<GemmConfig> {
        let mut cache = TuneCache::default();
        cache.insert(&key(), p, cfg, 20.0);
        TuneCache::parse(&cache.to_text())
            .unwrap()
            .lookup(&key(), p)
    }

    /// A swapped, split choice survives the cache's text (its knobs are among the fields).
    #[test]
    fn swapped_choices_round_trip() {
        let p = TuneProblem::new(16, 4096, 4096, E4m3, Bf16);
        let cfg = GemmConfig {
            split_fixup: true,
            ..p.rule(132).swapped(32, 4)
        };
        assert_eq!(round_trip(&p, cfg), Some(cfg));
    }

    /// A choice in a cluster along N survives the cache's text; a line written before
    /// `cluster_n` was a field (19 fields) reads as one CTA along N.
    #[test]
    fn cluster_choices_round_trip_and_old_lines_read() {
        let p = TuneProblem::new(128, 2112, 7168, Bf16, Bf16);
        let cfg = p.rule(132).decode_cluster(16, 4);
        let mut cache = TuneCache::default();
        cache.insert(&key(), &p, cfg, 30.0);
        let text = cache.to_text();
        assert_eq!(
            TuneCache::parse(&text).unwrap().lookup(&key(), &p),
            Some(cfg)
        );
        let mut fields: Vec<&str> = text.trim_end().split('\t').collect();
        assert_eq!(fields.len(), 21);
        fields.remove(19);
        fields.remove(18);
        let old = TuneCache::parse(&fields.join("\t")).unwrap();
        assert_eq!(
            old.lookup(&key(), &p),
            Some(GemmConfig {
                cluster_n: 1,
                ..cfg
            })
        );
    }

    /// Entries are per key and problem; a second insert replaces the first; the text round-trips,
    /// and another GPU, driver or version does not see them.
    #[test]
    fn the_cache_is_keyed_and_round_trips() {
        let p = TuneProblem::new(128, 8192, 8192, Bf16, Bf16);
        let c = candidates(&p, 132);
        let mut cache = TuneCache::default();
        cache.insert(&key(), &p, c[1], 500.0);
        cache.insert(&key(), &p, c[2], 510.0);
        assert_eq!(cache.lookup(&key(), &p), Some(c[2]));
        let back = TuneCache::parse(&cache.to_text()).unwrap();
        assert_eq!(back, cache);
        for other in [
            TuneKey { sms: 114, ..key() },
            TuneKey {
                driver: 12080,
                ..key()
            },
            TuneKey {
                version: "0.2.0".into(),
                ..key()
            },
        ] {
            assert_eq!(back.lookup(&other, &p), None);
        }
        assert_eq!(back.lookup(&key(), &TuneProblem { k: 4096, ..p }), None);
    }

    /// A cache file of its own for a test (no test shares one: the reads are remembered by
    /// path).
    fn temp_cache(name: &str, text: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("ptxkit-tune-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("{name}.tsv"));
        std::fs::write(&path, text).unwrap();
        path
    }

    /// The default path's lookup reads the cache file first: a hit is the cached choice; a
    /// miss (another problem), another GPU's key, no key, no file, a malformed file and no
    /// path are the rule, never an error; an edited file is read again.
    #[test]
    fn the_default_entry_reads_the_cache_file_then_the_rule() {
        let p = TuneProblem::new(16, 4096, 7168, E4m3, Bf16);
        let rule = p.rule(132);
        let tuned = GemmConfig {
            split_fixup: true,
            ..rule.swapped(16, 4)
        };
        assert_ne!(tuned, rule);
        let mut cache = TuneCache::default();
        cache.insert(&key(), &p, tuned, 30.0);
        let path = temp_cache("hit", &cache.to_text());
        let at = |path: Option<&Path>, key: Option<&TuneKey>, p: &TuneProblem| {
            config_from_file(path, key, 132, p)
        };
        assert_eq!(at(Some(&path), Some(&key()), &p), tuned);
        let other = TuneProblem { k: 2048, ..p };
        assert_eq!(at(Some(&path), Some(&key()), &other), other.rule(132));
        let h100 = TuneKey {
            gpu: "NVIDIA H100 80GB HBM3".into(),
            ..key()
        };
        assert_eq!(at(Some(&path), Some(&h100), &p), rule);
        assert_eq!(at(Some(&path), None, &p), rule);
        assert_eq!(at(None, Some(&key()), &p), rule);
        let missing = path.with_file_name("missing.tsv");
        assert_eq!(at(Some(&missing), Some(&key()), &p), rule);
        let bad = temp_cache("malformed", &cache.to_text().replace("\t4096\t", "\tx\t"));
        assert_eq!(at(Some(&bad), Some(&key()), &p), rule);
        // The file rewritten (another length): read again.
        let mut longer = TuneCache::default();
        longer.insert(&key(), &other, tuned, 31.0);
        longer.insert(&key(), &p, rule.swapped(32, 1), 29.0);
        std::fs::write(&path, longer.to_text()).unwrap();
        assert_eq!(at(Some(&path), Some(&key()), &p), rule.swapped(32, 1));
        assert_eq!(at(Some(&path), Some(&key()), &other), tuned);
    }

    /// `$PTXKIT_TUNE_CACHE` names the file before the cache folders; empty variables are unset.
    #[test]
    fn the_default_path_takes_the_tune_cache_variable_first() {
        fn env<'a>(
            vars: &'a [(&'a str, &'a str)],
        ) -> impl Fn(&str) -> Option<std::ffi::OsString> + 'a {
            move |v| {
                vars.iter()
                    .find(|(k, _)| *k == v)
                    .map(|(_, x)| std::ffi::OsString::from(x))
            }
        }
        let all = [
            (CACHE_ENV, "/t/mine.tsv"),
            ("PTXKIT_CACHE_DIR", "/c"),
            ("HOME", "/h"),
        ];
        assert_eq!(path_from(env(&all)), Some(PathBuf::from("/t/mine.tsv")));
        let dir = [(CACHE_ENV, ""), ("PTXKIT_CACHE_DIR", "/c"), ("HOME", "/h")];
        assert_eq!(path_from(env(&dir)), Some(PathBuf::from("/c/tune.tsv")));
        let home = [("HOME", "/h")];
        assert_eq!(
            path_from(env(&home)),
            Some(PathBuf::from("/h/.cache/ptxkit/tune.tsv"))
        );
        assert_eq!(path_from(env(&[])), None);
    }

    /// A malformed line is refused with its number and what is wrong.
    #[test]
    fn malformed_lines_are_refused_with_their_number() {
        let p = TuneProblem::new(64, 256, 128, Bf16, Bf16);
        let mut cache = TuneCache::default();
        cache.insert(&key(), &p, p.rule(132), 1.0);
        let good = cache.to_text();
        let cases = [
            (good.replace("\t256\t", "\tx\t"), "not a number"),
            (good.replace("\tbf16\t", "\tq7\t"), "not a type"),
            (
                format!("\n{}", good.replacen("\t132\t", "\t132\t\t", 1)),
                "22 fields",
            ),
        ];
        for (text, what) in cases {
            let e = TuneCache::parse(&text).unwrap_err().to_string();
            assert!(e.contains(what), "{e}");
        }
        // A tile width the GEMM does not take is not a kernel.
        let fields: Vec<&str> = good.trim_end().split('\t').collect();
        let mut bad = fields.clone();
        bad[9] = "96";
        let e = TuneCache::parse(&bad.join("\t")).unwrap_err().to_string();
        assert!(e.contains("line 1") && e.contains("not a kernel"), "{e}");
        let e = TuneCache::parse(&format!("\n{}", good.replace("\t256\t", "\tx\t")))
            .unwrap_err()
            .to_string();
        assert!(e.contains("line 2"), "{e}");
    }
}
