//! Canonical tensor-core operand tiles in shared memory: the layouts wgmma (sm_90a) and
//! tcgen05.mma (sm_100a) read through a matrix descriptor, chosen the way CuTe's
//! `ss_smem_selector` / `sm100_smem_selector` choose them.
//!
//! A tile is `mn x k` elements of one operand (M x K of A, N x K of B). Its contiguous
//! dimension is K ([`Major::K`]) or MN ([`Major::MN`]). The tile is built from atoms of 8 rows
//! (along the strided dimension) of `span` bytes (along the contiguous dimension), where `span`
//! is 16 bytes without swizzle and 32/64/128 bytes for the swizzled modes: CuTe's
//! `Layout_{K,MN}_{INTER,SW32,SW64,SW128}_Atom` (`cute/atom/mma_traits_sm90_gmma.hpp`). The
//! chooser takes the widest swizzle whose span divides the contiguous extent in bytes. Atoms
//! repeat MN-first, then K (CuTe `tile_to_shape` with its default column-major order).
//!
//! The descriptor offsets follow from that order (PTX ISA 9.7.15.5.1.2.1 "Shared Memory Matrix
//! Layout"; CuTe `make_gmma_desc`):
//!
//! | major | swizzle | LBO                          | SBO                          |
//! |-------|---------|------------------------------|------------------------------|
//! | K     | none    | K-adjacent core matrices     | MN-adjacent 8-row groups (128) |
//! | K     | 32-128B | unused (16)                  | MN-adjacent atoms (8 x span) |
//! | MN    | none    | K-adjacent 8-row groups      | MN-adjacent core matrices (128) |
//! | MN    | 32-128B | MN-adjacent atoms (8 x span) | K-adjacent atoms             |

use crate::alu::{AluError, AluProgram, Value, Width};
use crate::desc::DescError;
use crate::desc::sm90::WgmmaDesc;
use crate::desc::sm100::UmmaDesc;
use crate::major::Major;
use crate::swizzle::{SwizzleMode, append_swizzle};
use ptx_isa::ScalarType;

/// The extent of a tile in elements: `mn` rows of M (or N) and `k` along K.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct TileShape {
    /// Extent along M (operand A) or N (operand B).
    pub mn: u32,
    /// Extent along K.
    pub k: u32,
}

/// Which instruction family reads the tile.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MmaFamily {
    /// sm_90a `wgmma.mma_async`.
    Wgmma,
    /// sm_100a `tcgen05.mma`.
    Umma,
}

/// Why a canonical tile could not be built or addressed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TileError {
    /// Sub-byte formats are stored unpacked or packed depending on the kind; not handled here.
    #[error("{} is narrower than a byte; canonical tiles need whole-byte elements", .0.name())]
    SubByte(ScalarType),
    /// The strided dimension must hold whole 8-row core matrices.
    #[error(
        "the {dim} extent {extent} is not a multiple of 8 (it is the strided dimension of a {major}-major tile)"
    )]
    StridedExtent {
        /// "MN" or "K".
        dim: &'static str,
        /// The extent in elements.
        extent: u32,
        /// The tile's major.
        major: Major,
    },
    /// The contiguous dimension must hold whole 16-byte core-matrix rows.
    #[error("the contiguous extent of {bytes} bytes is not a positive multiple of 16")]
    ContiguousExtent {
        /// The extent in bytes.
        bytes: u64,
    },
    /// The tile is larger than 4 GiB (far beyond any shared memory).
    #[error("the tile of {mn} x {k} elements overflows")]
    TooLarge {
        /// MN extent.
        mn: u32,
        /// K extent.
        k: u32,
    },
    /// A combination this crate does not lay out (yet).
    #[error("unsupported: {0}")]
    Unsupported(&'static str),
    /// The element is outside the tile.
    #[error("element ({mn}, {k}) is outside the {shape_mn} x {shape_k} tile")]
    OutOfTile {
        /// MN index.
        mn: u32,
        /// K index.
        k: u32,
        /// The tile's MN extent.
        shape_mn: u32,
        /// The tile's K extent.
        shape_k: u32,
    },
    /// A descriptor can only start at a core-matrix (K-major) or atom (MN-major) boundary.
    #[error("a descriptor cannot start at element ({mn}, {k}): not on a core-matrix/atom boundary")]
    SliceStart {
        /// MN index.
        mn: u32,
        /// K index.
        k: u32,
    },
    /// The tile's base address is not aligned to its swizzle pattern.
    #[error("tile base {addr:#x} is not aligned to {align} bytes")]
    MisalignedBase {
        /// The address.
        addr: u32,
        /// The required alignment.
        align: u32,
    },
    /// The descriptor fields do not fit.
    #[error(transparent)]
    Desc(#[from] DescError),
    /// An offset program could not be built (a constant too wide for its width).
    #[error(transparent)]
    Alu(#[from] AluError),
}

/// A canonical operand tile: the layout as data, its byte-offset function, its swizzle and the
/// descriptor offsets. Built by [`wgmma_tile`] or [`umma_tile`].
///
/// ```
/// use smem::tile::{wgmma_tile, TileShape};
/// use ptx_isa::ScalarType;
/// use smem::{Major, SwizzleMode};
/// let t = wgmma_tile(ScalarType::Bf16, TileShape { mn: 64, k: 64 }, Major::K).unwrap();
/// assert_eq!(t.swizzle(), SwizzleMode::B128);
/// assert_eq!(t.atom(), TileShape { mn: 8, k: 64 });
/// assert_eq!((t.lbo(), t.sbo()), (16, 1024));
/// assert_eq!(t.offset(1, 0), Ok(128 + 16)); // row 1's first chunk is swizzled into chunk 1
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CanonicalTile {
    family: MmaFamily,
    dtype: ScalarType,
    elem_bytes: u32,
    shape: TileShape,
    major: Major,
    swizzle: SwizzleMode,
}

/// The canonical wgmma layout for an `mn x k` tile of `dtype` with the given major.
///
/// Picks the widest of 128B / 64B / 32B swizzle whose row divides the contiguous extent in
/// bytes, else no swizzle (16-byte rows); the strided extent must be a multiple of 8 (CuTe
/// `ss_smem_selector`, `cute/atom/mma_traits_sm90_gmma.hpp`).
pub fn wgmma_tile(
    dtype: ScalarType,
    shape: TileShape,
    major: Major,
) -> Result<CanonicalTile, TileError> {
    CanonicalTile::choose(MmaFamily::Wgmma, dtype, shape, major)
}

/// The canonical tcgen05 layout: the same atoms as [`wgmma_tile`] (CuTe's `UMMA::Layout_*_Atom`
/// are the GMMA ones), except that 32-bit MN-major operands need CuTe's
/// `Layout_MN_SW128_32B_Atom` (128B swizzle with 32-byte atomicity, `sm100_smem_selector`),
/// which this crate does not lay out yet: they are an error.
pub fn umma_tile(
    dtype: ScalarType,
    shape: TileShape,
    major: Major,
) -> Result<CanonicalTile, TileError> {
    if major == Major::MN && dtype.bits() == 32 {
        return Err(TileError::Unsupported(
            "32-bit MN-major tcgen05 operands need the 128B-with-32B-atom swizzle (CuTe Layout_MN_SW128_32B_Atom)",
        ));
    }
    CanonicalTile::choose(MmaFamily::Umma, dtype, shape, major)
}

impl CanonicalTile {
    fn choose(
        family: MmaFamily,
        dtype: ScalarType,
        shape: TileShape,
        major: Major,
    ) -> Result<CanonicalTile, TileError> {
        let elem_bytes = dtype.whole_bytes().ok_or(TileError::SubByte(dtype))?;
        let (strided, strided_dim, contig) = match major {
            Major::K => (shape.mn, "MN", shape.k),
            Major::MN => (shape.k, "K", shape.mn),
        };
        if strided == 0 || strided % 8 != 0 {
            return Err(TileError::StridedExtent {
                dim: strided_dim,
                extent: strided,
                major,
            });
        }
        let contig_bytes = u64::from(contig) * u64::from(elem_bytes);
        let swizzle =
            SwizzleMode::widest_dividing(contig_bytes).ok_or(TileError::ContiguousExtent {
                bytes: contig_bytes,
            })?;
        let bytes = u64::from(shape.mn) * u64::from(shape.k) * u64::from(elem_bytes);
        if bytes > u64::from(u32::MAX) {
            return Err(TileError::TooLarge {
                mn: shape.mn,
                k: shape.k,
            });
        }
        Ok(CanonicalTile {
            family,
            dtype,
            elem_bytes,
            shape,
            major,
            swizzle,
        })
    }

    /// The instruction family the tile was chosen for.
    pub fn family(&self) -> MmaFamily {
        self.family
    }

    /// The element type.
    pub fn dtype(&self) -> ScalarType {
        self.dtype
    }

    /// Bytes per element.
    pub fn elem_bytes(&self) -> u32 {
        self.elem_bytes
    }

    /// The tile's extent in elements.
    pub fn shape(&self) -> TileShape {
        self.shape
    }

    /// The contiguous dimension.
    pub fn major(&self) -> Major {
        self.major
    }

    /// The swizzle mode (also the TMA swizzle of a box that fills one atom row).
    pub fn swizzle(&self) -> SwizzleMode {
        self.swizzle
    }

    /// The `CUtensorMapSwizzle` value a TMA load into this tile must use.
    pub fn tma_swizzle(&self) -> u32 {
        self.swizzle.tma_code()
    }

    /// One atom's extent in elements: 8 x (span / elem) for K-major, (span / elem) x 8 for
    /// MN-major.
    pub fn atom(&self) -> TileShape {
        let per_row = self.swizzle.span_bytes() / self.elem_bytes;
        match self.major {
            Major::K => TileShape { mn: 8, k: per_row },
            Major::MN => TileShape { mn: per_row, k: 8 },
        }
    }

    /// How many atoms the tile holds along MN and along K.
    pub fn repeat(&self) -> TileShape {
        let atom = self.atom();
        TileShape {
            mn: self.shape.mn / atom.mn,
            k: self.shape.k / atom.k,
        }
    }

    /// Bytes in the tile.
    pub fn bytes(&self) -> u32 {
        // Checked against u32::MAX when the tile was built.
        self.shape.mn * self.shape.k * self.elem_bytes
    }

    /// The alignment the tile's base needs: the swizzle pattern's period (1024 for 128B), and at
    /// least 128 bytes, the TMA destination alignment.
    pub fn align(&self) -> u32 {
        self.swizzle.alignment().max(128)
    }

    /// Byte distance between atoms adjacent along MN (atoms are laid out MN-first).
    fn mn_atom_stride(&self) -> u32 {
        self.swizzle.atom_bytes()
    }

    /// Byte distance between atoms adjacent along K.
    fn k_atom_stride(&self) -> u32 {
        self.repeat().mn * self.swizzle.atom_bytes()
    }

    /// The leading-dimension byte offset the descriptor needs (see the module table); 16 (the
    /// conventional "1" in the field) where the hardware ignores it.
    pub fn lbo(&self) -> u32 {
        match (self.major, self.swizzle) {
            (Major::K, SwizzleMode::None) => self.k_atom_stride(),
            (Major::K, _) => 16,
            (Major::MN, SwizzleMode::None) => self.k_atom_stride(),
            (Major::MN, _) => self.mn_atom_stride(),
        }
    }

    /// The stride-dimension byte offset the descriptor needs (see the module table).
    pub fn sbo(&self) -> u32 {
        match (self.major, self.swizzle) {
            (Major::K, _) => self.mn_atom_stride(),
            (Major::MN, SwizzleMode::None) => self.mn_atom_stride(),
            (Major::MN, _) => self.k_atom_stride(),
        }
    }

    fn check(&self, mn: u32, k: u32) -> Result<(), TileError> {
        if mn >= self.shape.mn || k >= self.shape.k {
            return Err(TileError::OutOfTile {
                mn,
                k,
                shape_mn: self.shape.mn,
                shape_k: self.shape.k,
            });
        }
        Ok(())
    }

    /// The byte offset of element `(mn, k)` before the swizzle: atom index x atom bytes + row x
    /// span + column x element size.
    pub fn unswizzled_offset(&self, mn: u32, k: u32) -> Result<u64, TileError> {
        self.check(mn, k)?;
        let span = u64::from(self.swizzle.span_bytes());
        let elem = u64::from(self.elem_bytes);
        let per_row = span / elem;
        let (strided, contig) = match self.major {
            Major::K => (u64::from(mn), u64::from(k)),
            Major::MN => (u64::from(k), u64::from(mn)),
        };
        let (atom_s, row) = (strided / 8, strided % 8);
        let (atom_c, col) = (contig / per_row, contig % per_row);
        let (atom_mn, atom_k) = match self.major {
            Major::K => (atom_s, atom_c),
            Major::MN => (atom_c, atom_s),
        };
        let atom = atom_mn + atom_k * u64::from(self.repeat().mn);
        Ok(atom * u64::from(self.swizzle.atom_bytes()) + row * span + col * elem)
    }

    /// The byte offset of element `(mn, k)` in shared memory, swizzle applied (valid for a tile
    /// whose base is aligned to [`CanonicalTile::align`]).
    pub fn offset(&self, mn: u32, k: u32) -> Result<u64, TileError> {
        Ok(self.swizzle.swizzle().apply(self.unswizzled_offset(mn, k)?))
    }

    /// [`CanonicalTile::offset`] as an ALU program of two inputs, `mn` (`%v0`) and `k` (`%v1`):
    /// the same atom, row and column arithmetic as [`CanonicalTile::unswizzled_offset`] (atoms
    /// and rows by `shr`/`and`, since 8 and `span / elem` are powers of two; the products by
    /// [`AluProgram::mul_const`]), then the swizzle.
    ///
    /// Contract: for every `(mn, k)` inside the tile, the program's
    /// [`AluProgram::eval_inputs`] equals `offset(mn, k)`. Indices outside the tile are not
    /// checked at run time.
    ///
    /// ```
    /// use smem::alu::Width;
    /// use smem::tile::{wgmma_tile, TileShape};
    /// use ptx_isa::ScalarType;
    /// use smem::Major;
    /// let t = wgmma_tile(ScalarType::Bf16, TileShape { mn: 64, k: 128 }, Major::K).unwrap();
    /// let p = t.offset_program(Width::U32).unwrap();
    /// assert_eq!(p.eval_inputs(&[9, 70]), Ok(t.offset(9, 70).unwrap()));
    /// ```
    pub fn offset_program(&self, width: Width) -> Result<AluProgram, TileError> {
        let span = self.swizzle.span_bytes();
        let per_row = span / self.elem_bytes;
        if !per_row.is_power_of_two() {
            return Err(TileError::Unsupported(
                "an element size that does not divide the swizzle span into a power of two",
            ));
        }
        let mut p = AluProgram::with_inputs(&[width, width])?;
        let (mn, k) = (p.input(), Value(1));
        let (strided, contig) = match self.major {
            Major::K => (mn, k),
            Major::MN => (k, mn),
        };
        let atom_s = p.shr(strided, 3)?;
        let row = p.and(strided, 7)?;
        let atom_c = p.shr(contig, u64::from(per_row.trailing_zeros()))?;
        let col = p.and(contig, u64::from(per_row - 1))?;
        let (atom_mn, atom_k) = match self.major {
            Major::K => (atom_s, atom_c),
            Major::MN => (atom_c, atom_s),
        };
        let k_atoms = p.mul_const(atom_k, u64::from(self.repeat().mn))?;
        let atom = p.add_value(atom_mn, k_atoms)?;
        let atom_bytes = p.mul_const(atom, u64::from(self.swizzle.atom_bytes()))?;
        let row_bytes = p.mul_const(row, u64::from(span))?;
        let col_bytes = p.mul_const(col, u64::from(self.elem_bytes))?;
        let in_atom = p.add_value(row_bytes, col_bytes)?;
        let logical = p.add_value(atom_bytes, in_atom)?;
        append_swizzle(&mut p, self.swizzle.swizzle(), logical)?;
        Ok(p)
    }

    /// The (unswizzled) offset at which a descriptor for the sub-matrix starting at `(mn, k)`
    /// starts: the usual way to step wgmma / tcgen05.mma along K is to add this to the start
    /// address and keep LBO, SBO and a zero base offset. `(mn, k)` must start an 8-row group
    /// and a 16-byte chunk (K-major), or an atom column and an 8-row group (MN-major).
    pub fn slice_offset(&self, mn: u32, k: u32) -> Result<u64, TileError> {
        let elem = self.elem_bytes;
        let atom = self.atom();
        let aligned = match self.major {
            Major::K => mn % 8 == 0 && (k * elem) % 16 == 0,
            Major::MN => k % 8 == 0 && mn % atom.mn == 0,
        };
        if !aligned {
            return Err(TileError::SliceStart { mn, k });
        }
        self.unswizzled_offset(mn, k)
    }

    fn slice_start(&self, base: u32, mn: u32, k: u32) -> Result<u32, TileError> {
        if base % self.align() != 0 {
            return Err(TileError::MisalignedBase {
                addr: base,
                align: self.align(),
            });
        }
        let start = u64::from(base) + self.slice_offset(mn, k)?;
        // Larger than any descriptor start address: report it as the descriptor would.
        u32::try_from(start).map_err(|_| {
            TileError::Desc(DescError::OutOfRange {
                field: crate::desc::DescField::StartAddress,
                value: start,
                max: crate::desc::MAX_FIELD_BYTES,
            })
        })
    }

    /// The wgmma descriptor for the sub-matrix at `(mn, k)` of this tile placed at shared
    /// address `base`.
    pub fn sm90_desc(&self, base: u32, mn: u32, k: u32) -> Result<WgmmaDesc, TileError> {
        let d = WgmmaDesc {
            start_addr: self.slice_start(base, mn, k)?,
            lbo: self.lbo(),
            sbo: self.sbo(),
            base_offset: 0,
            swizzle: self.swizzle,
        };
        d.encode()?;
        Ok(d)
    }

    /// The tcgen05 shared-memory descriptor for the sub-matrix at `(mn, k)` of this tile placed
    /// at shared address `base`.
    pub fn sm100_desc(&self, base: u32, mn: u32, k: u32) -> Result<UmmaDesc, TileError> {
        let d = UmmaDesc::relative(self.lbo(), self.sbo(), self.swizzle.into())
            .with_start(self.slice_start(base, mn, k)?);
        d.encode()?;
        Ok(d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tile(dtype: ScalarType, mn: u32, k: u32, major: Major) -> CanonicalTile {
        wgmma_tile(dtype, TileShape { mn, k }, major).unwrap()
    }

    #[test]
    fn choice_follows_the_contiguous_bytes() {
        let k = |dtype, k| tile(dtype, 64, k, Major::K).swizzle();
        assert_eq!(k(ScalarType::Bf16, 8), SwizzleMode::None);
        assert_eq!(k(ScalarType::Bf16, 16), SwizzleMode::B32);
        assert_eq!(k(ScalarType::Bf16, 24), SwizzleMode::None);
        assert_eq!(k(ScalarType::Bf16, 32), SwizzleMode::B64);
        assert_eq!(k(ScalarType::Bf16, 64), SwizzleMode::B128);
        assert_eq!(k(ScalarType::Bf16, 192), SwizzleMode::B128);
        assert_eq!(k(ScalarType::F32, 16), SwizzleMode::B64);
        assert_eq!(k(ScalarType::E4m3, 128), SwizzleMode::B128);
        let mn = |dtype, mn| tile(dtype, mn, 16, Major::MN).swizzle();
        assert_eq!(mn(ScalarType::Bf16, 128), SwizzleMode::B128);
        assert_eq!(mn(ScalarType::Bf16, 8), SwizzleMode::None);
    }

    #[test]
    fn shape_errors() {
        let t = |dtype, mn, k, major| wgmma_tile(dtype, TileShape { mn, k }, major);
        assert_eq!(
            t(ScalarType::Bf16, 60, 64, Major::K),
            Err(TileError::StridedExtent {
                dim: "MN",
                extent: 60,
                major: Major::K
            })
        );
        assert_eq!(
            t(ScalarType::Bf16, 64, 12, Major::MN),
            Err(TileError::StridedExtent {
                dim: "K",
                extent: 12,
                major: Major::MN
            })
        );
        assert_eq!(
            t(ScalarType::Bf16, 64, 4, Major::K),
            Err(TileError::ContiguousExtent { bytes: 8 })
        );
        assert_eq!(
            t(ScalarType::E2m1, 64, 64, Major::K),
            Err(TileError::SubByte(ScalarType::E2m1))
        );
        assert!(matches!(
            umma_tile(ScalarType::Tf32, TileShape { mn: 128, k: 32 }, Major::MN),
            Err(TileError::Unsupported(_))
        ));
        assert!(umma_tile(ScalarType::Tf32, TileShape { mn: 128, k: 32 }, Major::K).is_ok());
    }

    #[test]
    fn descriptors_step_along_k() {
        let t = tile(ScalarType::Bf16, 64, 64, Major::K);
        let d0 = t.sm90_desc(0x400, 0, 0).unwrap();
        let d1 = t.sm90_desc(0x400, 0, 16).unwrap();
        assert_eq!(d1.start_addr - d0.start_addr, 32);
        assert_eq!(d0.encode().unwrap(), 0x4000_0040_0001_0040);
        assert_eq!(
            t.sm90_desc(0x410, 0, 0),
            Err(TileError::MisalignedBase {
                addr: 0x410,
                align: 1024
            })
        );
        assert_eq!(
            t.sm90_desc(0x400, 0, 4),
            Err(TileError::SliceStart { mn: 0, k: 4 })
        );
        let u = t.sm100_desc(0x400, 0, 0).unwrap();
        assert_eq!(u.encode().unwrap(), 0x4000_4040_0001_0040);
    }
}
