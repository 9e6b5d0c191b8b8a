//! Canonical tiles: the offset function is a permutation of the tile's element slots, and the
//! descriptor's LBO/SBO reproduce the layout through the PTX canonical-layout formulas.

use std::collections::HashSet;

use ptx_isa::ScalarType;
use smem::tile::{CanonicalTile, TileShape, umma_tile, wgmma_tile};
use smem::{Major, SwizzleMode};

fn shapes() -> Vec<(ScalarType, TileShape, Major)> {
    let mut v = Vec::new();
    for dtype in [ScalarType::E4m3, ScalarType::Bf16, ScalarType::Tf32] {
        let e = dtype.whole_bytes().unwrap_or(1);
        for major in [Major::K, Major::MN] {
            for strided in [8, 16, 64] {
                // Contiguous extents from one 16-byte chunk up to two 128-byte rows, and odd ones.
                for contig_bytes in [16, 32, 48, 64, 96, 128, 192, 256] {
                    let contig = contig_bytes / e;
                    let shape = match major {
                        Major::K => TileShape {
                            mn: strided,
                            k: contig,
                        },
                        Major::MN => TileShape {
                            mn: contig,
                            k: strided,
                        },
                    };
                    v.push((dtype, shape, major));
                }
            }
        }
    }
    v
}

#[test]
fn offsets_are_a_permutation_of_the_element_slots() {
    for (dtype, shape, major) in shapes() {
        let t = wgmma_tile(dtype, shape, major).unwrap();
        let e = u64::from(t.elem_bytes());
        let mut seen = HashSet::new();
        for mn in 0..shape.mn {
            for k in 0..shape.k {
                let o = t.offset(mn, k).unwrap();
                assert!(
                    o % e == 0 && o < u64::from(t.bytes()),
                    "{t:?} ({mn},{k}) -> {o}"
                );
                assert!(seen.insert(o), "{t:?}: ({mn},{k}) collides at {o}");
            }
        }
        assert!(t.offset(shape.mn, 0).is_err() && t.offset(0, shape.k).is_err());
    }
}

/// The PTX ISA canonical layouts (9.7.15.5.1.2.1; CuTe `make_gmma_desc` comments), as
/// functions of LBO and SBO: the unswizzled offset of element (mn, k).
fn canonical(t: &CanonicalTile, mn: u64, k: u64) -> u64 {
    let (lbo, sbo) = (u64::from(t.lbo()), u64::from(t.sbo()));
    let e = u64::from(t.elem_bytes());
    let span = u64::from(t.swizzle().span_bytes());
    match (t.major(), t.swizzle()) {
        // ((8,m),(T,2k)):((1T,SBO),(1,LBO)) in 16-byte units.
        (Major::K, SwizzleMode::None) => {
            (mn / 8) * sbo + (mn % 8) * 16 + (k * e / 16) * lbo + (k * e) % 16
        }
        // ((8,m),(T,2k)):((8T,SBO),(1,T)): K stays inside one atom row (what one descriptor
        // reaches; the caller limits k to the atom).
        (Major::K, _) => (mn / 8) * sbo + (mn % 8) * span + k * e,
        // ((T,1,m),(8,k)):((1,T,SBO),(1T,LBO)).
        (Major::MN, SwizzleMode::None) => {
            (mn * e / 16) * sbo + (mn * e) % 16 + (k / 8) * lbo + (k % 8) * 16
        }
        // ((T,8,m),(8,k)):((1,T,LBO),(8T,SBO)).
        (Major::MN, _) => (mn * e / span) * lbo + (mn * e) % span + (k / 8) * sbo + (k % 8) * span,
    }
}

#[test]
fn lbo_and_sbo_reproduce_the_layout() {
    for (dtype, shape, major) in shapes() {
        let t = wgmma_tile(dtype, shape, major).unwrap();
        // For swizzled K-major operands the formula covers one atom along K (what one
        // descriptor addresses); elsewhere the whole tile.
        let k_extent = match (major, t.swizzle()) {
            (Major::K, SwizzleMode::None) | (Major::MN, _) => shape.k,
            (Major::K, _) => t.atom().k,
        };
        for mn in 0..shape.mn {
            for k in 0..k_extent {
                assert_eq!(
                    t.unswizzled_offset(mn, k).unwrap(),
                    canonical(&t, u64::from(mn), u64::from(k)),
                    "{t:?} at ({mn},{k})"
                );
            }
        }
    }
}

#[test]
fn umma_tiles_match_wgmma_tiles_where_defined() {
    for (dtype, shape, major) in shapes() {
        let w = wgmma_tile(dtype, shape, major).unwrap();
        match umma_tile(dtype, shape, major) {
            Ok(u) => {
                assert_eq!(
                    (u.swizzle(), u.lbo(), u.sbo(), u.bytes()),
                    (w.swizzle(), w.lbo(), w.sbo(), w.bytes())
                );
            }
            Err(_) => assert!(major == Major::MN && dtype.bits() == 32),
        }
    }
}
