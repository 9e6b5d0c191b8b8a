//! Swizzle properties over whole domains: bijection on every span, atoms stay put, the ALU
//! program equals the host function, the 2-D offsets of a tile are a permutation of its chunks.

use std::collections::HashSet;

use proptest::prelude::*;
use smem::alu::Width;
use smem::swizzle::swizzle_program;
use smem::{Swizzle, SwizzleMode};

/// Every valid `Swizzle<B,M,S>` with B + M + S <= 12 (small enough to enumerate spans).
fn small_swizzles() -> Vec<Swizzle> {
    let mut v = Vec::new();
    for b in 0..=4 {
        for m in 0..=4 {
            for s in 0..=6 {
                if b + m + s <= 12 {
                    if let Ok(sw) = Swizzle::new(b, m, s) {
                        v.push(sw);
                    }
                }
            }
        }
    }
    v
}

#[test]
fn bijection_on_every_span_and_stays_in_its_span() {
    for sw in small_swizzles() {
        let span = sw.span();
        for base in [0, span, 7 * span] {
            let image: HashSet<u64> = (base..base + span).map(|x| sw.apply(x)).collect();
            assert_eq!(
                image.len() as u64,
                span,
                "{sw} not injective on [{base}, +{span})"
            );
            assert!(
                image.iter().all(|&y| y / span == base / span),
                "{sw} leaves its span"
            );
        }
    }
}

#[test]
fn byte_modes_keep_16_byte_chunks_whole_and_stay_in_their_atom() {
    for mode in SwizzleMode::ALL {
        let sw = mode.swizzle();
        let atom = u64::from(mode.atom_bytes());
        for x in 0..4 * atom {
            let y = sw.apply(x);
            assert_eq!(y / atom, x / atom, "{mode}: {x} leaves its atom");
            assert_eq!(y % 16, x % 16, "{mode}: {x} moves within its chunk");
            // Rows stay rows: only the chunk index inside a span-wide row changes.
            let row = u64::from(mode.span_bytes());
            assert_eq!(y / row, x / row, "{mode}: {x} changes row");
        }
    }
}

#[test]
fn tile_offsets_permute_the_chunks() {
    for mode in SwizzleMode::ALL {
        let pitch = u64::from(mode.span_bytes());
        for elem in [1u64, 2, 4, 8] {
            let rows = 16u64;
            let cols = pitch / elem;
            let offs: HashSet<u64> = (0..rows)
                .flat_map(|r| (0..cols).map(move |c| (r, c)))
                .map(|(r, c)| mode.offset_2d(r, c, elem, pitch).unwrap())
                .collect();
            assert_eq!(offs.len() as u64, rows * cols);
            assert!(offs.iter().all(|&o| o < rows * pitch && o % elem == 0));
        }
    }
}

proptest! {
    #[test]
    fn alu_program_equals_apply_u32(x in any::<u32>(), i in 0usize..64) {
        let sws = small_swizzles();
        let sw = sws[i % sws.len()];
        let p = swizzle_program(sw, Width::U32).unwrap();
        prop_assert_eq!(p.eval(u64::from(x)), sw.apply(u64::from(x)));
    }

    #[test]
    fn alu_program_equals_apply_u64(x in any::<u64>(), b in 0u32..=5, m in 0u32..=8, extra in 0u32..=6) {
        let sw = Swizzle::new(b, m, b + extra).unwrap();
        let p = swizzle_program(sw, Width::U64).unwrap();
        prop_assert_eq!(p.eval(x), sw.apply(x));
        let steps = if b == 0 { 0 } else { 3 };
        prop_assert_eq!(p.steps().len(), steps);
    }

    #[test]
    fn byte_mode_programs(x in 0u64..(1 << 18)) {
        for mode in SwizzleMode::ALL {
            let p = mode.program(Width::U32).unwrap();
            prop_assert_eq!(p.eval(x), mode.swizzle().apply(x));
        }
    }

    #[test]
    fn offset_2d_is_the_swizzled_row_major_offset(row in 0u64..4096, chunk in 0u64..8, pitch_chunks in 1u64..32) {
        let pitch = 16 * pitch_chunks;
        let col = (chunk % pitch_chunks) * 8;
        for mode in SwizzleMode::ALL {
            let off = mode.offset_2d(row, col, 2, pitch).unwrap();
            prop_assert_eq!(off, mode.swizzle().apply(row * pitch + col * 2));
        }
    }
}
