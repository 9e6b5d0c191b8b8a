//! Shared by the kernel tests: assemble emitted PTX with ptxas when it is there (a failure when
//! `CI=true` and it is not).

#![allow(dead_code)]

use ptxkit::isa::Target;

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
/// register spills and no warning (C7515: wgmma serialized; C7508: `setmaxnreg` ignored); prints
/// its register line.
pub fn assemble_clean(ptxas: &ptxkit::isa::ptxas::Ptxas, name: &str, text: &str, target: Target) {
    let out = ptxas.assemble(text, target, &["-v"]).unwrap();
    assert!(out.ok, "{name}: ptxas rejected it:\n{}", out.log);
    assert!(
        out.log
            .contains("0 bytes spill stores, 0 bytes spill loads"),
        "{name}: spills\n{}",
        out.log
    );
    for warning in ["C7515", "C7508", "warning"] {
        assert!(!out.log.contains(warning), "{name}: {warning}\n{}", out.log);
    }
    let regs = out.log.lines().find(|l| l.contains("Used")).unwrap_or("");
    eprintln!("{name}: {regs}");
}
