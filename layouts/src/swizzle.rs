//! The CuTe swizzle functor `Swizzle<B, M, S>`, a bijection on offsets.
//!
//! `Swizzle<B, M, S>` keeps the low `M` bits of an offset and XORs the `B` bits found at
//! `[M + S, M + S + B)` into the bits at `[M, M + B)`. On byte offsets the modes of the
//! Hopper/Blackwell tensor-memory-accelerator and wgmma descriptors are
//! `Swizzle<1,4,3>` (32B), `Swizzle<2,4,3>` (64B) and `Swizzle<3,4,3>` (128B): 16-byte chunks
//! permuted inside an atom of 8 rows of 32/64/128 bytes (PTX ISA 9.7.9.27.1.2 "Shared memory
//! matrix layout", the swizzling modes figure; CuTe `include/cute/swizzle.hpp`).

use std::fmt;

/// Why a swizzle could not be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SwizzleError {
    /// `S` must be at least `B` (`|S| >= B` in CuTe), or the XOR source and target bit ranges overlap
    /// and the functor is not a bijection.
    #[error("Swizzle<{bits},{base},{shift}>: the shift must be at least the bit count (|S| >= B)")]
    Overlap {
        /// B
        bits: u32,
        /// M
        base: u32,
        /// S
        shift: u32,
    },
    /// `B + M + S` must fit in 32 bits of offset.
    #[error("Swizzle<{bits},{base},{shift}>: B + M + S = {} exceeds 32 bits", bits + base + shift)]
    TooWide {
        /// B
        bits: u32,
        /// M
        base: u32,
        /// S
        shift: u32,
    },
}

/// `Swizzle<B, M, S>`: XOR the `B` bits at `[M+S, M+S+B)` into the bits at `[M, M+B)`.
///
/// ```
/// use layouts::Swizzle;
/// let sw = Swizzle::B128; // Swizzle<3,4,3> on byte offsets
/// assert_eq!(sw.apply(0x80), 0x90); // row 1, chunk 0 lands in chunk 1
/// assert_eq!(sw.apply(sw.apply(0x1234)), 0x1234); // an involution
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Swizzle {
    bits: u32,
    base: u32,
    shift: u32,
}

impl Swizzle {
    /// The identity swizzle `Swizzle<0,4,3>` (no swizzle, "interleave" in descriptor terms).
    pub const NONE: Swizzle = Swizzle::bytes(0);
    /// 32-byte swizzle on byte offsets: `Swizzle<1,4,3>`.
    pub const B32: Swizzle = Swizzle::bytes(1);
    /// 64-byte swizzle on byte offsets: `Swizzle<2,4,3>`.
    pub const B64: Swizzle = Swizzle::bytes(2);
    /// 128-byte swizzle on byte offsets: `Swizzle<3,4,3>`.
    pub const B128: Swizzle = Swizzle::bytes(3);

    /// `Swizzle<bits,4,3>`: the swizzle of byte offsets that XORs `bits` bits of the 128-byte row
    /// into the 16-byte chunk index.
    const fn bytes(bits: u32) -> Swizzle {
        Swizzle {
            bits,
            base: 4,
            shift: 3,
        }
    }

    /// `Swizzle<bits, base, shift>`; errors when the ranges overlap (`shift < bits`) or exceed 32 bits.
    pub fn new(bits: u32, base: u32, shift: u32) -> Result<Swizzle, SwizzleError> {
        if bits > 0 && shift < bits {
            return Err(SwizzleError::Overlap { bits, base, shift });
        }
        if bits + base + shift > 32 {
            return Err(SwizzleError::TooWide { bits, base, shift });
        }
        Ok(Swizzle { bits, base, shift })
    }

    /// B: the number of bits XORed.
    pub const fn bits(self) -> u32 {
        self.bits
    }
    /// M: the number of low bits kept as they are.
    pub const fn base(self) -> u32 {
        self.base
    }
    /// S: the distance from the source bits down to the target bits.
    pub const fn shift(self) -> u32 {
        self.shift
    }
    /// True for `B == 0`, the identity.
    pub const fn is_identity(self) -> bool {
        self.bits == 0
    }
    /// The mask of the source bits `[M+S, M+S+B)`.
    pub const fn yyy_mask(self) -> u64 {
        ((1u64 << self.bits) - 1) << (self.base + self.shift)
    }
    /// The mask of the target bits `[M, M+B)`.
    pub const fn zzz_mask(self) -> u64 {
        ((1u64 << self.bits) - 1) << self.base
    }
    /// The span (in offset units) after which the pattern repeats: `2^(M+S+B)`.
    pub const fn span(self) -> u64 {
        1u64 << (self.base + self.shift + self.bits)
    }

    /// Apply the swizzle: `offset ^ ((offset & yyy_mask) >> S)`.
    pub const fn apply(self, offset: u64) -> u64 {
        offset ^ ((offset & self.yyy_mask()) >> self.shift)
    }
}

impl fmt::Display for Swizzle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Sw<{},{},{}>", self.bits, self.base, self.shift)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_modes_match_the_tma_formula() {
        // phys = logical ^ ((logical & (((1<<B)-1) << 7)) >> 3), PTX-FACTS.md "Swizzle".
        for (sw, b) in [(Swizzle::B32, 1u64), (Swizzle::B64, 2), (Swizzle::B128, 3)] {
            for x in 0..4096u64 {
                assert_eq!(sw.apply(x), x ^ ((x & (((1 << b) - 1) << 7)) >> 3));
            }
        }
    }

    #[test]
    fn overlap_is_rejected() {
        assert!(matches!(
            Swizzle::new(3, 4, 2),
            Err(SwizzleError::Overlap { .. })
        ));
        assert!(Swizzle::new(3, 4, 3).is_ok());
    }
}
