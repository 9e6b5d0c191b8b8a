//! Shared by the kernel tests: assemble emitted PTX with ptxas when it is there (a failure when
//! `CI=true` and it is not).

#![allow(dead_code)]

use ptxkit::isa::{ScalarType, Target};
use ptxkit::library::gemm::GemmConfig;

/// Assembles `text` for `target` with ptxas when ptxas is there.
pub fn assemble(text: &str, target: Target) {
    if let Some(ptxas) = ptxkit::isa::ptxas::for_tests().unwrap() {
        let out = ptxas.assemble(text, target, &[]).unwrap();
        assert!(out.ok, "ptxas rejected:\n{}\n{text}", out.log);
    }
}

/// Finishes `k` and assembles its PTX for sm_90a ([`assemble`]), the kernel tests' target.
pub fn finish_sm90a(k: ptxkit::kernel::KernelBuilder) -> ptxkit::kernel::BuiltKernel {
    let b = k.finish().unwrap();
    assemble(b.ptx(), Target::Sm90a);
    b
}

/// A kernel `k` for sm_90a with a symbolic extent `n` and a u32 tensor `out` of `[n]`.
pub fn kernel_n_out() -> (
    ptxkit::kernel::KernelBuilder,
    ptxkit::kernel::Var,
    ptxkit::kernel::Buffer<ptxkit::isa::ty::U32>,
) {
    let mut k = ptxkit::kernel::KernelBuilder::new("k", Target::Sm90a);
    let n = k.symbol("n").unwrap();
    let out = k
        .tensor("out", [n], ptxkit::kernel::TensorOpts::default())
        .unwrap();
    (k, n, out)
}

/// Compares `text` with the golden file `tests/golden/REL`, or writes it there under `BLESS=1`.
/// The error names the file and the first line that differs.
pub fn golden(rel: &str, text: &str) -> Result<(), String> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(rel);
    if std::env::var_os("BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        return Ok(());
    }
    let want = std::fs::read_to_string(&path)
        .map_err(|e| format!("{}: {e} (BLESS=1 writes it)", path.display()))?;
    if want == text {
        return Ok(());
    }
    let line = want
        .lines()
        .zip(text.lines())
        .position(|(a, b)| a != b)
        .map_or(0, |l| l + 1);
    Err(format!(
        "{rel} differs from the golden file near line {line} (BLESS=1 re-blesses)"
    ))
}

/// Assembles kernel `name` for `target` with `ptxas -v` and checks that ptxas accepts it with no
/// register spills and no warning (C7515, C7520: wgmma serialized; C7508: `setmaxnreg` ignored);
/// prints its register line.
pub fn assemble_clean(ptxas: &ptxkit::isa::ptxas::Ptxas, name: &str, text: &str, target: Target) {
    assemble_clean_without(ptxas, name, text, target, &[]);
}

/// [`assemble_clean`], also refusing the ptxas messages `infos` (C7514: wgmma serialized
/// because other instructions read a wgmma's accumulators before its wait; C7517: a
/// `wgmma.wait_group` ptxas injected for the same reason).
pub fn assemble_clean_without(
    ptxas: &ptxkit::isa::ptxas::Ptxas,
    name: &str,
    text: &str,
    target: Target,
    infos: &[&str],
) {
    let out = ptxas.assemble(text, target, &["-v"]).unwrap();
    for info in infos {
        assert!(!out.log.contains(info), "{name}: {info}\n{}", out.log);
    }
    assert!(out.ok, "{name}: ptxas rejected it:\n{}", out.log);
    assert!(
        out.log
            .contains("0 bytes spill stores, 0 bytes spill loads"),
        "{name}: spills\n{}",
        out.log
    );
    // C7520 and its kin: "Potential Performance Loss: wgmma.mma_async instructions are
    // serialized ...".
    for warning in ["C7515", "C7508", "Potential Performance Loss", "warning"] {
        assert!(!out.log.contains(warning), "{name}: {warning}\n{}", out.log);
    }
    let regs = out.log.lines().find(|l| l.contains("Used")).unwrap_or("");
    eprintln!("{name}: {regs}");
}

/// Kernel `name` assembles clean for sm_90a ([`assemble_clean`]) and its pool of dynamic shared
/// memory fits the `smem_bytes` its configuration states.
pub fn assemble_clean_within(
    ptxas: &ptxkit::isa::ptxas::Ptxas,
    name: &str,
    built: &ptxkit::kernel::BuiltKernel,
    smem_bytes: u32,
) {
    assemble_clean(ptxas, name, built.ptx(), Target::Sm90a);
    let pool = built.launch_spec().dynamic_smem_bytes;
    assert!(
        pool <= smem_bytes,
        "{name}: the pool needs {pool} bytes, the configuration says {smem_bytes}"
    );
}

/// The lines of `text` holding `what`, trimmed.
pub fn lines_with<'a>(text: &'a str, what: &str) -> Vec<&'a str> {
    text.lines()
        .map(str::trim)
        .filter(|l| l.contains(what))
        .collect()
}

/// `items` without repeats, each at its first place: the GEMM tests list configurations by what
/// they cover, and two covers may name the same one.
pub fn unique<T: PartialEq>(items: impl IntoIterator<Item = T>) -> Vec<T> {
    let mut out: Vec<T> = Vec::new();
    for item in items {
        if !out.contains(&item) {
            out.push(item);
        }
    }
    out
}

/// Builds every GEMM configuration in `configs` and assembles it for sm_90a with
/// [`assemble_clean`] (no spills, no C7515 / C7508 warning) when ptxas is there.
pub fn gemm_configs_assemble_clean(configs: impl IntoIterator<Item = GemmConfig>) {
    gemm_configs_assemble_clean_without(configs, &[]);
}

/// [`gemm_configs_assemble_clean`], also refusing the ptxas messages `infos`
/// ([`assemble_clean_without`]).
pub fn gemm_configs_assemble_clean_without(
    configs: impl IntoIterator<Item = GemmConfig>,
    infos: &[&str],
) {
    let Some(ptxas) = ptxkit::isa::ptxas::for_tests().unwrap() else {
        return;
    };
    for cfg in configs {
        let text = ptxkit::library::gemm::build(&cfg)
            .and_then(|m| m.to_ptx())
            .unwrap_or_else(|e| panic!("{}: {e}", cfg.name()));
        assemble_clean_without(&ptxas, &cfg.name(), &text, Target::Sm90a, infos);
    }
}

/// `cfg` with the register epilogue (no TMA store) and as a CTA pair (`cluster_m = 2`): the two
/// variants each GEMM test list holds of its family's default configuration.
pub fn epilogue_and_pair(cfg: GemmConfig) -> [GemmConfig; 2] {
    [
        GemmConfig {
            tma_store: false,
            ..cfg
        },
        GemmConfig {
            cluster_m: 2,
            ..cfg
        },
    ]
}

/// An FP8 GEMM family's test configurations from its constructor `make` (`GemmConfig::fp8` or
/// `GemmConfig::fp8_block`, for a 132-SM H100): e4m3 -> bf16 at each of `shapes` (the first is
/// the family's default), each `(a, c)` of `types` at the default shape, each `(m, n, a, b, c)`
/// of `mixed` (B in another format than A), and the default's register epilogue and CTA pair
/// ([`epilogue_and_pair`]).
pub fn fp8_family(
    make: fn(usize, usize, u32, ScalarType, ScalarType) -> GemmConfig,
    shapes: &[(usize, usize)],
    types: &[(ScalarType, ScalarType)],
    mixed: &[(usize, usize, ScalarType, ScalarType, ScalarType)],
) -> Vec<GemmConfig> {
    use ScalarType::{Bf16, E4m3};
    let (m, n) = shapes[0];
    let mut configs: Vec<GemmConfig> = shapes
        .iter()
        .map(|&(m, n)| make(m, n, 132, E4m3, Bf16))
        .collect();
    configs.extend(types.iter().map(|&(a, c)| make(m, n, 132, a, c)));
    configs.extend(mixed.iter().map(|&(m, n, a, b, c)| GemmConfig {
        input_b: Some(b),
        ..make(m, n, 132, a, c)
    }));
    configs.extend(epilogue_and_pair(configs[0]));
    configs
}

/// A kernel `name` for sm_90a with one tensor `tensor` of `shape` declared with `opts`.
pub fn kernel_with<T: ptxkit::kernel::Elem>(
    name: &str,
    tensor: &str,
    shape: impl ptxkit::kernel::Exprs,
    opts: ptxkit::kernel::TensorOpts,
) -> (ptxkit::kernel::KernelBuilder, ptxkit::kernel::Buffer<T>) {
    let mut k = ptxkit::kernel::KernelBuilder::new(name, Target::Sm90a);
    let x = k.tensor::<T>(tensor, shape, opts).unwrap();
    (k, x)
}

/// Asserts that `text` (a kernel's PTX or part of it) contains `want`, showing `text` when not.
#[track_caller]
pub fn assert_contains(text: &str, want: &str) {
    assert!(text.contains(want), "{want:?} not in:\n{text}");
}

/// Asserts that `result` is an error matching `pattern` (with an `if` guard if need be), showing
/// the error when it does not match; evaluates to the error, for further checks of its text.
#[allow(unused_macros)]
macro_rules! assert_err {
    ($result:expr, $pattern:pat $(if $guard:expr)? $(,)?) => {
        match $result {
            Ok(_) => panic!("{} succeeded; expected {}", stringify!($result), stringify!($pattern)),
            Err(e) => {
                assert!(matches!(&e, $pattern $(if $guard)?), "{e}");
                e
            }
        }
    };
}
#[allow(unused_imports)]
pub(crate) use assert_err;

/// A kernel `name` for sm_90a over an f32 tensor `x` of `len` (16-byte aligned) and `threads`
/// threads, each thread `t` loading its four values `x[4t..4t + 4]` (0 past the end).
pub fn four_per_thread(
    name: &str,
    len: u32,
    threads: u32,
) -> (
    ptxkit::kernel::KernelBuilder,
    ptxkit::kernel::Buffer<ptxkit::isa::ty::F32>,
    ptxkit::kernel::Var,
    Vec<ptxkit::isa::Reg<ptxkit::isa::ty::F32>>,
) {
    let opts = ptxkit::kernel::TensorOpts::default().align(16);
    let (mut k, x) = kernel_with::<ptxkit::isa::ty::F32>(name, "x", [len], opts);
    let [t] = k.thread_id([threads]).unwrap();
    let v = k.load_n(&x, [t * 4], 4, 0.0f32).unwrap();
    (k, x, t, v)
}
