//! `wgmma.mma_async.sync.aligned.m64nNk*` register fragments: the accumulator `D` and the
//! register-sourced `A` (PTX ISA 9.7.15.5.1 "Register Fragments", figures "WGMMA .m64nNk16
//! register fragment layout for accumulator matrix D" and "... for matrix A").
//!
//! The warpgroup's 128 threads split the 64 rows into four warps of 16 rows; inside a warp the
//! layout is the `mma.m16n8k*` one, with `groupID = laneid >> 2` and
//! `threadID_in_group = laneid % 4`.

use super::{FragmentError, TvLayout};

/// The input type of a `wgmma`; it fixes `K` and the element width of register `A`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dtype {
    /// `.f16`: K = 16.
    F16,
    /// `.bf16`: K = 16.
    Bf16,
    /// `.tf32`: K = 8.
    Tf32,
    /// `.e4m3`: K = 32.
    E4m3,
    /// `.e5m2`: K = 32.
    E5m2,
    /// `.s8`: K = 32, integer accumulators.
    S8,
    /// `.u8`: K = 32, integer accumulators.
    U8,
}

impl Dtype {
    /// Every input type.
    pub const ALL: [Dtype; 7] = [
        Dtype::F16,
        Dtype::Bf16,
        Dtype::Tf32,
        Dtype::E4m3,
        Dtype::E5m2,
        Dtype::S8,
        Dtype::U8,
    ];

    /// The element width in bits.
    pub const fn bits(self) -> i64 {
        match self {
            Dtype::Tf32 => 32,
            Dtype::F16 | Dtype::Bf16 => 16,
            Dtype::E4m3 | Dtype::E5m2 | Dtype::S8 | Dtype::U8 => 8,
        }
    }

    /// `K` of `m64nNkK`: 256 bits of `A` per row.
    pub const fn k(self) -> i64 {
        256 / self.bits()
    }

    /// The valid `N` for this input type (PTX ISA 9.7.15.5 "wgmma.mma_async", the shapes
    /// table): multiples of 8 up to 256; for the integer types 8, 16, 24, then multiples of 16.
    pub fn valid_n(self, n: i64) -> bool {
        let in_range = (8..=256).contains(&n) && n % 8 == 0;
        match self {
            Dtype::S8 | Dtype::U8 => in_range && (n <= 32 || n % 16 == 0),
            _ => in_range,
        }
    }
}

/// The accumulator fragment of `m64nNk*`: 64×N over 128 threads, N/2 values per thread
/// (an `.f16` accumulator packs two values per register; the element layout is the same).
///
/// Value `i`: row `16 * warp + groupID + 8 * (i >> 1 & 1)`, column `8 * (i >> 2) +
/// 2 * threadID_in_group + (i & 1)`, so with thread modes (threadID_in_group, groupID, warp)
/// and value modes (i & 1, i >> 1 & 1, i >> 2): `((4,8,4),(2,2,N/8)):((128,1,16),(64,8,512))`.
pub fn accumulator(n: i64, dtype: Dtype) -> Result<TvLayout, FragmentError> {
    if !dtype.valid_n(n) {
        return Err(FragmentError::Unsupported {
            instruction: "wgmma.mma_async",
            message: format!("m64n{n}k{} is not a shape for {dtype:?}", dtype.k()),
        });
    }
    TvLayout::from_modes(
        format!("wgmma m64n{n}k{} D", dtype.k()),
        64,
        n,
        &[(4, 128), (8, 1), (4, 16)],
        &[(2, 64), (2, 8), (n / 8, 512)],
    )
}

/// The register-sourced `A` fragment of `m64nNk*`: 64×K over 128 threads, K/2 values per thread,
/// `32 / bits` elements per 32-bit register.
///
/// With `e = 32 / bits` elements per register, value `i` is element `j = i % e` of register
/// `r = i / e`: row `16 * warp + groupID + 8 * (r & 1)`, column `e * (threadID_in_group +
/// 4 * (r >> 1)) + j` (for 16-bit types this is the `mma.m16n8k16` A fragment per warp).
pub fn register_a(dtype: Dtype) -> Result<TvLayout, FragmentError> {
    let e = 32 / dtype.bits();
    let mut values = Vec::new();
    if e > 1 {
        values.push((e, 64));
    }
    values.extend([(2, 8), (2, 256 * e)]);
    TvLayout::from_modes(
        format!("wgmma m64nNk{} A", dtype.k()),
        64,
        dtype.k(),
        &[(4, 64 * e), (8, 1), (4, 16)],
        &values,
    )
}
