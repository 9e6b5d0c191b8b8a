//! Golden PTX of the emitted forms, for review: the exact kernel text of each helper in
//! `tests/golden/`. `BLESS=1 cargo test -p smem --test emit_golden` rewrites them; otherwise a
//! difference fails. Every golden kernel also assembles with ptxas for its target.

mod support;

use std::path::PathBuf;

use ptx_isa::ScalarType;
use ptx_isa::{FunctionBuilder, Module, Reg, Target, ty};
use smem::desc::MatrixDesc;
use smem::emit::{self, AluReg, DynamicSmem};
use smem::pipeline::TileSpec;
use smem::pool::SmemPool;
use smem::tile::{TileShape, umma_tile, wgmma_tile};
use smem::{Major, SwizzleMode};
use support::{assemble, body_lines, kernel};

/// Compares the PTX of `m` with `tests/golden/<name>` (or writes it under `BLESS=1`) and
/// assembles it.
fn golden(name: &str, m: &Module) {
    let text = m.to_ptx().unwrap();
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden")
        .join(name);
    if std::env::var_os("BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, &text).unwrap();
    } else {
        let want = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{name}: {e} (BLESS=1 writes it)"));
        if let Some(line) = want.lines().zip(text.lines()).position(|(a, b)| a != b) {
            panic!(
                "{name} differs from the golden file at line {} (BLESS=1 re-blesses):\n{text}",
                line + 1
            );
        }
        assert_eq!(
            want, text,
            "{name}: the length differs (BLESS=1 re-blesses)"
        );
    }
    assemble(m);
}

/// The golden file `name` of the kernel [`kernel`] makes of `inputs` and `body` for `target`
/// ([`golden`]); the kernel, for further checks.
fn golden_kernel(
    name: &str,
    target: Target,
    inputs: &[&str],
    body: impl FnOnce(&mut Module, &mut FunctionBuilder, &[Reg<ty::U32>]) -> ptx_isa::Result<AluReg>,
) -> Module {
    let m = kernel(target, inputs, body).unwrap();
    golden(name, &m);
    m
}

/// The 128B swizzle is three instructions on the offset register, after a comment naming it.
#[test]
fn swizzle_128b() {
    let m = golden_kernel(
        "swizzle_128b.sm_90a.ptx",
        Target::Sm90a,
        &["x"],
        |_, k, r| emit::emit_swizzle(k, SwizzleMode::B128, r[0]).map(AluReg::U32),
    );
    let lines = body_lines(&m);
    let at = lines.iter().position(|l| l.starts_with("//")).unwrap();
    assert_eq!(
        lines[at..at + 4],
        [
            "// swizzle Sw<3,4,3>: x ^ ((x & 0x380) >> 3)",
            "and.b32 %r1, %r0, 896;",
            "shr.u32 %r2, %r1, 3;",
            "xor.b32 %r3, %r0, %r2;",
        ]
    );
}

/// Element (row, col) of a bf16 tile with 128-byte rows, 128B-swizzled.
#[test]
fn offset_2d_bf16_128b() {
    golden_kernel(
        "offset_2d_bf16_128b.sm_90a.ptx",
        Target::Sm90a,
        &["row", "col"],
        |_, k, r| emit::emit_offset_2d(k, SwizzleMode::B128, 2, 128, r[0], r[1]).map(AluReg::U32),
    );
}

/// A pitch that is not a power of two takes a `mul.lo`.
#[test]
fn offset_2d_pitch_48() {
    golden_kernel(
        "offset_2d_pitch_48.sm_90a.ptx",
        Target::Sm90a,
        &["row", "col"],
        |_, k, r| emit::emit_offset_2d(k, SwizzleMode::B32, 2, 48, r[0], r[1]).map(AluReg::U32),
    );
}

/// Element (mn, k) of a 64x128 bf16 K-major tile: two 128B-swizzled atoms along K.
#[test]
fn tile_offset_bf16_k_sw128() {
    let t = wgmma_tile(ScalarType::Bf16, TileShape { mn: 64, k: 128 }, Major::K).unwrap();
    golden_kernel(
        "tile_offset_bf16_k_sw128.sm_90a.ptx",
        Target::Sm90a,
        &["mn", "k"],
        |_, k, r| emit::emit_tile_offset(k, &t, r[0], r[1]).map(AluReg::U32),
    );
}

/// The wgmma descriptor of a K-major 128B-swizzled bf16 tile from a run-time address, and the
/// tcgen05 descriptor of the same tile on sm_100a.
#[test]
fn matrix_descs_k_sw128() {
    let shape = |mn| TileShape { mn, k: 64 };
    let a = wgmma_tile(ScalarType::Bf16, shape(64), Major::K).unwrap();
    let d = a.sm90_desc(0, 0, 0).unwrap();
    desc_golden("wgmma_desc_k_sw128.sm_90a.ptx", Target::Sm90a, &d);
    let a = umma_tile(ScalarType::Bf16, shape(128), Major::K).unwrap();
    let d = a.sm100_desc(0, 0, 0).unwrap();
    desc_golden("umma_desc_k_sw128.sm_100a.ptx", Target::Sm100a, &d);
}

/// The golden file `name` of `desc` completed for `target` from a run-time address `addr`
/// ([`emit::emit_desc`]).
fn desc_golden(name: &str, target: Target, desc: &impl MatrixDesc) {
    golden_kernel(name, target, &["addr"], |_, k, r| {
        emit::emit_desc(k, desc, r[0]).map(AluReg::U64)
    });
}

/// A two-stage pipeline's pool: the array, the region comments, a stage-1 tile's address.
#[test]
fn pool_regions() {
    let a = wgmma_tile(ScalarType::Bf16, TileShape { mn: 64, k: 64 }, Major::K).unwrap();
    let mut pool = SmemPool::new(Target::Sm90a);
    let pipe = pool
        .pipeline("main", 2, &[TileSpec::of("A", &a)], 1, 1)
        .unwrap();
    let stage1 = pipe.tile(1, 0).unwrap().clone();
    let m = kernel(Target::Sm90a, &[], |m, k, _| {
        let smem = DynamicSmem::declare(m, "smem", &pool)?;
        smem.comment_regions(k, &pool);
        smem.region_addr(k, &stage1).map(AluReg::U32)
    })
    .unwrap();
    golden("pool_regions.sm_90a.ptx", &m);
}
