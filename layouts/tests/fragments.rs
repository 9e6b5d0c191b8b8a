//! Hardware fragments checked element by element against the per-register formulas of the PTX
//! ISA figures (an independent spelling of each layout from the CuTe layouts the crate builds).

use layouts::fragment::tcgen05::{self, LdShape};
use layouts::fragment::wgmma;
use layouts::fragment::{Operand, TvLayout, TvMismatch, ldmatrix, mma};
use layouts::tile::{Axis, TileLayout};
use ptx_isa::ScalarType;

/// Asserts `tv(t, v) == f(t, v)` for every thread and value, and that every element is held once.
fn check(tv: &TvLayout, f: impl Fn(i64, i64) -> (i64, i64)) {
    for t in 0..tv.threads() {
        for v in 0..tv.values() {
            assert_eq!(
                tv.coord(t, v).unwrap(),
                f(t, v),
                "{tv}: thread {t} value {v}"
            );
            // The flat evaluation `offset` uses agrees with the nested layout.
            assert_eq!(
                tv.offset(t, v).unwrap(),
                tv.layout().call(t + tv.threads() * v)
            );
        }
    }
    assert!(tv.is_bijective(), "{tv} is not a bijection onto its tile");
}

fn group(lane: i64) -> i64 {
    lane >> 2
}

fn tig(lane: i64) -> i64 {
    lane % 4
}

/// PTX ISA 9.7.14.5.8, "Matrix Fragments for mma.m16n8k16 with floating point type".
#[test]
fn mma_m16n8k16_matches_the_ptx_figures() {
    check(&mma::m16n8k16(Operand::A).unwrap(), |t, i| {
        let row = if i < 2 || (4..6).contains(&i) {
            group(t)
        } else {
            group(t) + 8
        };
        let col = if i < 4 {
            tig(t) * 2 + (i & 1)
        } else {
            tig(t) * 2 + (i & 1) + 8
        };
        (row, col)
    });
    check(&mma::m16n8k16(Operand::B).unwrap(), |t, i| {
        let row = if i < 2 {
            tig(t) * 2 + (i & 1)
        } else {
            tig(t) * 2 + (i & 1) + 8
        };
        (row, group(t))
    });
    check(&mma::m16n8k16(Operand::C).unwrap(), |t, i| {
        let row = if i < 2 { group(t) } else { group(t) + 8 };
        (row, tig(t) * 2 + (i & 1))
    });
    // Several accumulators side by side: block j is value 4j + i, shifted 8j columns; at 16
    // columns the A fragment of the k16 step over them.
    check(&mma::m16n8k16_c_wide(32).unwrap(), |t, i| {
        let row = if i % 4 < 2 { group(t) } else { group(t) + 8 };
        (row, 8 * (i / 4) + tig(t) * 2 + (i & 1))
    });
    assert!(
        mma::m16n8k16_c_wide(16)
            .unwrap()
            .compare(&mma::m16n8k16(Operand::A).unwrap())
            .is_ok()
    );
    assert!(mma::m16n8k16_c_wide(12).is_err());
    // CuTe's SM80_16x8x16 CLayout spells the same accumulator.
    assert_eq!(
        mma::m16n8k16(Operand::C).unwrap().layout().to_string(),
        "((4,8),(2,2)):((32,1),(16,8))"
    );
}

/// PTX ISA 9.7.15.5.1, "WGMMA .m64nNk16 register fragment layout for accumulator matrix D",
/// for every N and input type (the layout does not depend on the accumulator type).
#[test]
fn wgmma_accumulators_match_the_ptx_figure() {
    for dtype in wgmma::INPUTS {
        for n in (8..=256).step_by(8).filter(|&n| wgmma::valid_n(dtype, n)) {
            let d = wgmma::accumulator(n, dtype).unwrap();
            assert_eq!(
                (d.rows(), d.cols(), d.threads(), d.values()),
                (64, n, 128, n / 2)
            );
            check(&d, |t, i| {
                let (warp, lane) = (t / 32, t % 32);
                let row = 16 * warp + group(lane) + if i % 4 < 2 { 0 } else { 8 };
                (row, tig(lane) * 2 + (i & 1) + 8 * (i >> 2))
            });
        }
    }
    // m64n8k16 f32: the smallest, spelled out as CuTe's CLayout_64x8.
    let d = wgmma::accumulator(8, ScalarType::F16).unwrap();
    assert_eq!(
        d.layout().to_string(),
        "((4,8,4),(2,2)):((128,1,16),(64,8))"
    );
    assert!(wgmma::accumulator(40, ScalarType::S8).is_err());
    assert!(wgmma::accumulator(48, ScalarType::S8).is_ok());
    assert!(wgmma::accumulator(12, ScalarType::F16).is_err());
}

/// `wgmma::accumulator_band`: thread `t` holds row `t / 4` and the accumulator's columns of its
/// values with the row bit clear, each 8 columns one `ldmatrix` 8 x 8 matrix; odd widths refused.
#[test]
fn accumulator_bands_are_the_accumulators_first_rows() {
    for n in (8..=256).step_by(8) {
        let b = wgmma::accumulator_band(n).unwrap();
        assert_eq!(
            (b.rows(), b.cols(), b.threads(), b.values()),
            (8, n, 32, n / 4)
        );
        let d = wgmma::accumulator(n, ScalarType::Bf16).unwrap();
        check(&b, |t, i| {
            // The accumulator's value with the same column and the row bit clear.
            let v = (i & 1) + 4 * (i >> 1);
            d.coord(t, v).unwrap()
        });
        check(&b, |t, i| (group(t), tig(t) * 2 + (i & 1) + 8 * (i >> 1)));
    }
    assert_eq!(
        wgmma::accumulator_band(64).unwrap().layout().to_string(),
        "((4,8),(2,8)):((16,1),(8,64))"
    );
    assert!(wgmma::accumulator_band(12).is_err());
}

/// `TvLayout::transposed`'s contract over every wgmma accumulator (a swapped-operand GEMM's
/// store): each (thread, value) holds the mirrored element, the tile is `n x 64`, and
/// transposing twice gives the original function back.
#[test]
fn transposed_accumulators_mirror_every_element() {
    for dtype in wgmma::INPUTS {
        for n in (8..=256).step_by(8).filter(|&n| wgmma::valid_n(dtype, n)) {
            let d = wgmma::accumulator(n, dtype).unwrap();
            let t = d.transposed().unwrap();
            assert_eq!((t.rows(), t.cols()), (n, 64));
            check(&t, |th, v| {
                let (r, c) = d.coord(th, v).unwrap();
                (c, r)
            });
            t.transposed().unwrap().compare(&d).unwrap();
        }
    }
}

/// PTX ISA 9.7.15.5.1, "WGMMA .m64nNk* register fragment layout for matrix A": per warp the
/// `mma.m16n8k8` (tf32), `mma.m16n8k16` (16-bit) and `mma.m16n8k32` (8-bit) A fragments.
#[test]
fn wgmma_register_a_matches_the_ptx_figures() {
    let tf32 = wgmma::register_a(ScalarType::Tf32).unwrap();
    check(&tf32, |t, i| {
        let (warp, lane) = (t / 32, t % 32);
        let row = 16 * warp + group(lane) + if i % 2 == 0 { 0 } else { 8 };
        (row, tig(lane) + if i < 2 { 0 } else { 4 })
    });
    // 16- and 8-bit elements: `v` of them per 32-bit register; registers alternate rows
    // `group` and `group + 8`, the second pair of registers is `4 v` columns on.
    use ScalarType::{Bf16, E4m3, E5m2, F16, S8, U8};
    for (dtypes, v) in [(&[F16, Bf16][..], 2), (&[E4m3, E5m2, S8, U8][..], 4)] {
        for &dtype in dtypes {
            check(&wgmma::register_a(dtype).unwrap(), |t, i| {
                let (warp, lane) = (t / 32, t % 32);
                let row = 16 * warp + group(lane) + if (i / v) % 2 == 0 { 0 } else { 8 };
                (
                    row,
                    tig(lane) * v + i % v + if i < 2 * v { 0 } else { 4 * v },
                )
            });
        }
    }
}

/// PTX ISA, `ldmatrix` fragment figure: thread t holds row t/4, elements 2(t%4) and +1 of each
/// 8x8 matrix; `.trans` transposes.
#[test]
fn ldmatrix_matches_the_ptx_figure() {
    for num in [1, 2, 4] {
        check(&ldmatrix::ldmatrix(num, false).unwrap(), |t, v| {
            (8 * (v / 2) + t / 4, 2 * (t % 4) + v % 2)
        });
        check(&ldmatrix::ldmatrix(num, true).unwrap(), |t, v| {
            (8 * (v / 2) + 2 * (t % 4) + v % 2, t / 4)
        });
        ldmatrix::stmatrix(num, false)
            .unwrap()
            .compare(&ldmatrix::ldmatrix(num, false).unwrap())
            .unwrap();
    }
    assert!(ldmatrix::ldmatrix(3, false).is_err());
}

/// PTX ISA 9.7.16.8, the `tcgen05.ld/st` matrix-fragment figures for each shape.
#[test]
fn tcgen05_atoms_match_the_ptx_figures() {
    for num in [1, 2, 4, 8, 16, 32] {
        check(&tcgen05::atom(LdShape::B32x32, num).unwrap(), |l, r| (l, r));
        check(&tcgen05::atom(LdShape::B16x64, num).unwrap(), |l, r| {
            (l / 4 + 8 * (l % 2), (l / 2) % 2 + 2 * r)
        });
        check(&tcgen05::atom(LdShape::B16x128, num).unwrap(), |l, r| {
            (l / 4 + 8 * (r % 2), l % 4 + 4 * (r / 2))
        });
        check(&tcgen05::atom(LdShape::B16x256, num).unwrap(), |l, r| {
            (l / 4 + 8 * ((r / 2) % 2), r % 2 + 2 * (l % 4) + 8 * (r / 4))
        });
    }
    assert!(tcgen05::atom(LdShape::B16x256, 64).is_err()); // 256 registers
    assert!(tcgen05::atom(LdShape::B32x32, 3).is_err());
}

/// The warpgroup view: warp w on lanes 32w.., a 16-lane shape issued at lane bases 0 and 16.
#[test]
fn tcgen05_warpgroup_atoms() {
    let wg = tcgen05::warpgroup_atom(LdShape::B32x32, 4).unwrap();
    check(&wg, |t, r| (t, r));
    let wg = tcgen05::warpgroup_atom(LdShape::B16x64, 2).unwrap();
    let per_issue = LdShape::B16x64.registers() * 2;
    check(&wg, |t, v| {
        let (w, l) = (t / 32, t % 32);
        let (issue, r) = (v / per_issue, v % per_issue);
        (
            32 * w + 16 * issue + l / 4 + 8 * (l % 2),
            (l / 2) % 2 + 2 * r,
        )
    });
}

/// Compares `atom` with the register tile `tile`, its threads counted along `axis`.
fn against(tile: &str, axis: Axis, atom: TvLayout) -> Result<(), TvMismatch> {
    let regs: TileLayout = tile.parse().unwrap();
    atom.compare(&regs.thread_value(axis).unwrap())
}

/// The seed's demonstration: a 128xW register tile `S[(128, W):(1@tid_in_wg, 1)]` is the
/// `.32x32b.xW` warpgroup atom, and no 16-lane atom.
#[test]
fn register_layouts_match_atoms() {
    let wg_tile = "S[(128, 8):(1@tid_in_wg, 1)]";
    let wg_atom = |shape, num| tcgen05::warpgroup_atom(shape, num).unwrap();
    against(wg_tile, Axis::TidInWg, wg_atom(LdShape::B32x32, 8)).unwrap();
    let miss = against(wg_tile, Axis::TidInWg, wg_atom(LdShape::B16x256, 1)).unwrap_err();
    assert!(matches!(miss, TvMismatch::Element { .. }), "{miss}");

    // The mma-style register tile of one warp over 16x8 is the .16x256b atom.
    let warp_tile = "S[((2, 8), (4, 2)):((2, 4@laneid), (1@laneid, 1))]";
    let warp_atom = |shape, num| tcgen05::atom(shape, num).unwrap();
    against(warp_tile, Axis::LaneId, warp_atom(LdShape::B16x256, 1)).unwrap();
    let miss = against(warp_tile, Axis::LaneId, warp_atom(LdShape::B16x128, 2)).unwrap_err();
    assert!(matches!(
        miss,
        TvMismatch::Extent { .. } | TvMismatch::Element { .. }
    ));
}

/// The dispatch question: the widest atom a warpgroup register layout matches, or every shape
/// with its reason.
#[test]
fn atom_dispatch_picks_the_widest_match() {
    for shape in LdShape::ALL {
        for num in [1, 2, 4] {
            let tv = tcgen05::warpgroup_atom(shape, num).unwrap();
            let (found, n) = tcgen05::match_warpgroup_atom(&tv).unwrap();
            // A narrower shape can coincide only if it is the same function; the widest wins.
            tcgen05::warpgroup_atom(found, n)
                .unwrap()
                .compare(&tv)
                .unwrap();
            assert!(
                LdShape::ALL.iter().position(|&s| s == found)
                    <= LdShape::ALL.iter().position(|&s| s == shape)
            );
        }
    }
    // Rows dealt to threads out of order: a valid thread-value layout that no atom matches;
    // the miss lists all four shapes with their reasons.
    let regs: TileLayout = "S[((4, 32), 8):((1@tid_in_wg, 4@tid_in_wg), 1)]"
        .parse()
        .unwrap();
    let tv = regs.thread_value(Axis::TidInWg).unwrap();
    let miss = tcgen05::match_warpgroup_atom(&tv).unwrap_err();
    assert_eq!(miss.declined.len(), 4, "{miss}");
    assert!(miss.to_string().contains(".32x32b"), "{miss}");
    // Registers that are not a compact range are no thread-value layout at all.
    let regs: TileLayout = "S[(128, 4):(1@tid_in_wg, 2)]".parse().unwrap();
    assert!(regs.thread_value(Axis::TidInWg).is_err());
}

/// The accumulator of `wgmma m64nNk16` spelled as a TIRx register tile (rows split into warp,
/// half and group; columns into block, thread-in-group and pair) is the PTX fragment.
#[test]
fn wgmma_accumulator_as_a_register_tile() {
    for n in [8, 64, 256] {
        let regs: TileLayout = format!(
            "S[((4, 2, 8), ({}, 4, 2)):((32@tid_in_wg, 2, 4@tid_in_wg), (4, 1@tid_in_wg, 1))]",
            n / 8
        )
        .parse()
        .unwrap();
        let tv = regs.thread_value(Axis::TidInWg).unwrap();
        wgmma::accumulator(n, ScalarType::F16)
            .unwrap()
            .compare(&tv)
            .unwrap();
        assert!(
            wgmma::accumulator(n, ScalarType::F16)
                .unwrap()
                .compare(&mma::m16n8k16(Operand::C).unwrap())
                .is_err()
        );
    }
}

/// The A operand of several k16 steps in registers is the m64n(cols) accumulator's element order
/// (16-bit inputs), and one step of it is `register_a`.
#[test]
fn wgmma_register_a_k_is_the_accumulator_order() {
    for dtype in [ScalarType::Bf16, ScalarType::F16] {
        for cols in [16, 64, 128, 256] {
            let a = wgmma::register_a_k(dtype, cols).unwrap();
            a.compare(&wgmma::accumulator(cols, dtype).unwrap())
                .unwrap();
            assert!(a.is_bijective());
        }
        wgmma::register_a_k(dtype, 16)
            .unwrap()
            .compare(&wgmma::register_a(dtype).unwrap())
            .unwrap();
        assert!(wgmma::register_a_k(dtype, 24).is_err());
        assert!(wgmma::register_a_k(dtype, 0).is_err());
    }
}
