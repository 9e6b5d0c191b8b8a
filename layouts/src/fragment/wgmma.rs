//! `wgmma.mma_async.sync.aligned.m64nNk*` register fragments: the accumulator `D` and the
//! register-sourced `A` (PTX ISA 9.7.15.5.1 "Register Fragments", figures "WGMMA .m64nNk16
//! register fragment layout for accumulator matrix D" and "... for matrix A").
//!
//! The warpgroup's 128 threads split the 64 rows into four warps of 16 rows; inside a warp the
//! layout is the `mma.m16n8k*` one, with `groupID = laneid >> 2` and
//! `threadID_in_group = laneid % 4`.

use ptx_isa::ScalarType;

use super::{FragmentError, TvLayout};

/// The input types of a `wgmma` (`.f16`, `.bf16`: K = 16; `.tf32`: K = 8; `.e4m3`, `.e5m2`,
/// `.s8`, `.u8`: K = 32); the type fixes `K` and the element width of register `A`.
pub const INPUTS: [ScalarType; 7] = [
    ScalarType::F16,
    ScalarType::Bf16,
    ScalarType::Tf32,
    ScalarType::E4m3,
    ScalarType::E5m2,
    ScalarType::S8,
    ScalarType::U8,
];

/// `K` of `m64nNkK` for input type `dtype`: 256 bits of `A` per row (PTX ISA 9.7.15.5.2), or
/// `None` when `dtype` is not a wgmma input.
pub fn k(dtype: ScalarType) -> Option<i64> {
    INPUTS
        .contains(&dtype)
        .then(|| 256 / i64::from(dtype.bits()))
}

/// The valid `N` for this input type (PTX ISA 9.7.15.5 "wgmma.mma_async", the shapes table):
/// multiples of 8 up to 256; for the integer types 8, 16, 24, then multiples of 16. False for a
/// type that is no wgmma input.
pub fn valid_n(dtype: ScalarType, n: i64) -> bool {
    let in_range = (8..=256).contains(&n) && n % 8 == 0;
    match dtype {
        ScalarType::S8 | ScalarType::U8 => in_range && (n <= 32 || n % 16 == 0),
        _ => in_range && INPUTS.contains(&dtype),
    }
}

/// `K` for `dtype`, or the error naming the instruction.
fn k_of(dtype: ScalarType) -> Result<i64, FragmentError> {
    k(dtype).ok_or_else(|| FragmentError::Unsupported {
        instruction: "wgmma.mma_async",
        message: format!("{dtype} is not a wgmma input type"),
    })
}

/// The accumulator fragment of `m64nNk*`: 64×N over 128 threads, N/2 values per thread
/// (an `.f16` accumulator packs two values per register; the element layout is the same).
///
/// Value `i`: row `16 * warp + groupID + 8 * (i >> 1 & 1)`, column `8 * (i >> 2) +
/// 2 * threadID_in_group + (i & 1)`, so with thread modes (threadID_in_group, groupID, warp)
/// and value modes (i & 1, i >> 1 & 1, i >> 2): `((4,8,4),(2,2,N/8)):((128,1,16),(64,8,512))`.
pub fn accumulator(n: i64, dtype: ScalarType) -> Result<TvLayout, FragmentError> {
    let k = k_of(dtype)?;
    if !valid_n(dtype, n) {
        return Err(FragmentError::Unsupported {
            instruction: "wgmma.mma_async",
            message: format!("m64n{n}k{k} is not a shape for {dtype}"),
        });
    }
    TvLayout::from_modes(
        format!("wgmma m64n{n}k{k} D"),
        64,
        n,
        &[(4, 128), (8, 1), (4, 16)],
        &[(2, 64), (2, 8), (n / 8, 512)],
    )
}

/// One warp's 8-row band of a 16-bit `rows x n` block in the accumulator's column order:
/// `8 x n` over 32 threads, `n / 4` values, thread `t` (`groupID = t >> 2`,
/// `threadID_in_group = t % 4`) holding row `groupID`, columns `8 * (i >> 1) + 2 *
/// threadID_in_group + (i & 1)`: value `i`'s column is the accumulator's for its values with
/// row bit `i >> 1 & 1` clear ([`accumulator`]), and every eight columns are an 8 x 8 matrix of
/// `ldmatrix`/`stmatrix` (PTX ISA 9.7.9.26, 9.7.9.27: thread `t` holds row `t / 4`, columns
/// `2 (t % 4)` and `+1`). A warp that works through a block in shared memory eight rows at a
/// time (a GEMM's epilogue warp) holds this: `((4,8),(2,n/8)):((16,1),(8,64))`.
pub fn accumulator_band(n: i64) -> Result<TvLayout, FragmentError> {
    if n < 8 || n % 8 != 0 {
        return Err(FragmentError::Malformed(format!(
            "{n} columns: a multiple of 8"
        )));
    }
    TvLayout::from_modes(
        format!("8-row band of {n} columns"),
        8,
        n,
        &[(4, 16), (8, 1)],
        &[(2, 8), (n / 8, 64)],
    )
}

/// The register-sourced `A` fragment of `m64nNk*`: 64×K over 128 threads, K/2 values per thread,
/// `32 / bits` elements per 32-bit register.
///
/// With `e = 32 / bits` elements per register, value `i` is element `j = i % e` of register
/// `r = i / e`: row `16 * warp + groupID + 8 * (r & 1)`, column `e * (threadID_in_group +
/// 4 * (r >> 1)) + j` (for 16-bit types this is the `mma.m16n8k16` A fragment per warp).
pub fn register_a(dtype: ScalarType) -> Result<TvLayout, FragmentError> {
    let k = k_of(dtype)?;
    register_a_k(dtype, k)
}

/// The A operand of `cols / K` consecutive `m64nNk*` instructions held in registers: a 64×`cols`
/// tile, each K-wide block of columns in [`register_a`]'s fragment, the blocks' registers one
/// after another (block `s` in values `s * K/2 ..`). This is how an attention kernel keeps
/// `P = softmax(Q·Kᵀ)` for `P·V`: for 16-bit types the `m64n{cols}` accumulator fragment
/// ([`accumulator`]) holds the same elements in the same order, so the accumulator converted to
/// 16-bit pairs is the A operand of the next GEMM (PTX ISA 9.7.15.5.1.1.1, figures of D and A).
/// `cols` must be a positive multiple of K.
pub fn register_a_k(dtype: ScalarType, cols: i64) -> Result<TvLayout, FragmentError> {
    let k = k_of(dtype)?;
    if cols < k || cols % k != 0 {
        return Err(FragmentError::Unsupported {
            instruction: "wgmma.mma_async",
            message: format!("an A operand of {cols} columns is not a whole number of k{k} steps"),
        });
    }
    let e = 32 / i64::from(dtype.bits());
    let mut values = Vec::new();
    if e > 1 {
        values.push((e, 64));
    }
    // Registers 0-3 of a step (row + 8, column + 4e), then the next step K columns on.
    values.extend([(2, 8), (2, 256 * e), (cols / k, 64 * k)]);
    let name = match cols / k {
        1 => format!("wgmma m64nNk{k} A"),
        steps => format!("wgmma m64nNk{k} A x{steps}"),
    };
    TvLayout::from_modes(name, 64, cols, &[(4, 64 * e), (8, 1), (4, 16)], &values)
}
