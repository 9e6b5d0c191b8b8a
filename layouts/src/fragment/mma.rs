//! `mma.sync.aligned.m16n8k16` fragments for `.f16`/`.bf16` inputs and `.f32`/`.f16`
//! accumulators (PTX ISA 9.7.14.5.8 "Matrix Fragments for mma.m16n8k16 with floating point
//! type").
//!
//! In the PTX figures `groupID = laneid >> 2` and `threadID_in_group = laneid % 4`.

use super::{FragmentError, Operand, TvLayout};

/// The warp's fragment of operand `A` (16×16, 8 values), `B` (16×8 as K×N, 4 values) or `C`/`D`
/// (16×8, 4 values).
///
/// Thread `t = threadID_in_group + 4 * groupID`, modes ordered (threadID_in_group, groupID):
/// * A: `a_i` is row `groupID + 8 * (i >> 1 & 1)`, column `2 * threadID_in_group + (i & 1) +
///   8 * (i >> 2)`: offsets `((4,8),(2,2,2)):((32,1),(16,8,128))` in the 16-row tile
/// * B: `b_i` is row (k) `2 * threadID_in_group + (i & 1) + 8 * (i >> 1)`, column (n)
///   `groupID`: `((4,8),(2,2)):((2,16),(1,8))`
/// * C/D: `c_i` is row `groupID + 8 * (i >> 1)`, column `2 * threadID_in_group + (i & 1)`:
///   `((4,8),(2,2)):((32,1),(16,8))`
pub fn m16n8k16(operand: Operand) -> Result<TvLayout, FragmentError> {
    let warp = |gid_stride: i64, tig_stride: i64| [(4, tig_stride), (8, gid_stride)];
    match operand {
        Operand::A => TvLayout::from_modes(
            "mma.m16n8k16 A",
            16,
            16,
            &warp(1, 32),
            &[(2, 16), (2, 8), (2, 128)],
        ),
        Operand::B => {
            TvLayout::from_modes("mma.m16n8k16 B", 16, 8, &warp(16, 2), &[(2, 1), (2, 8)])
        }
        Operand::C => {
            TvLayout::from_modes("mma.m16n8k16 C", 16, 8, &warp(1, 32), &[(2, 16), (2, 8)])
        }
    }
}

/// The C/D fragment of `n / 8` `mma.m16n8k16` side by side along N (16×n, `4 · n / 8` values):
/// block `j`'s `c_i` is value `4 j + i`, at row `groupID + 8 * (i >> 1)`, column
/// `8 j + 2 * threadID_in_group + (i & 1)` (PTX ISA 9.7.14.5.8): the accumulator of a warp's
/// `16 × n` product done as `n / 8` MMAs. At `n = 16` it is also the A fragment of a k16 step
/// over those 16 columns (the two blocks' `c0 c1 c2 c3` are `a0..a3` and `a4..a7`), as an
/// attention's `P` feeds `P·V`.
pub fn m16n8k16_c_wide(n: i64) -> Result<TvLayout, FragmentError> {
    if n < 8 || n % 8 != 0 {
        return Err(FragmentError::Malformed(format!(
            "{n} columns: a multiple of 8"
        )));
    }
    TvLayout::from_modes(
        format!("mma.m16n8k16 C x{}", n / 8),
        16,
        n,
        &[(4, 32), (8, 1)],
        &[(2, 16), (2, 8), (n / 8, 128)],
    )
}
