//! A byte bump allocator for one CTA's shared memory.
//!
//! Dynamic regions are offsets into the kernel's single `.extern .shared .align A .b8 name[]`
//! array (A = [`SmemPool::base_align`]); the launch passes [`SmemPool::dynamic_bytes`] as the
//! dynamic shared-memory size. Static regions stand for separate `.shared` variables: they count
//! against the same per-CTA limit but live outside the dynamic array. The pool knows nothing of
//! PTX: it hands out [`Region`]s that the kernel builder turns into addresses and comments.

use std::fmt;

use crate::mbarrier::{MbarrierArray, MbarrierError};
use crate::tile::CanonicalTile;
use ptx_isa::ScalarType;

/// Where a region lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Storage {
    /// In the dynamic `.extern .shared` array; `offset` is from its start.
    Dynamic,
    /// A separate static `.shared` variable; `offset` is its place in the static area.
    Static,
}

/// What a region holds, for comments and for checks downstream.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RegionKind {
    /// Raw bytes.
    Bytes,
    /// Row-major scratch of `dtype` with the given shape.
    Scratch {
        /// Element type.
        dtype: ScalarType,
        /// Extents, outermost first.
        shape: Vec<u32>,
    },
    /// A canonical tensor-core operand tile.
    Tile(CanonicalTile),
    /// An array of 8-byte mbarriers.
    Mbarriers {
        /// How many.
        count: u32,
    },
}

/// One named allocation.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Region {
    /// The name (unique in the pool).
    pub name: String,
    /// Byte offset within its storage.
    pub offset: u32,
    /// Size in bytes.
    pub bytes: u32,
    /// Alignment of `offset` in bytes (a power of two).
    pub align: u32,
    /// Dynamic or static.
    pub storage: Storage,
    /// What it holds.
    pub kind: RegionKind,
}

impl Region {
    /// One past the last byte.
    pub fn end(&self) -> u32 {
        self.offset + self.bytes
    }
}

impl fmt::Display for RegionKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RegionKind::Bytes => f.write_str("bytes"),
            RegionKind::Scratch { dtype, shape } => {
                let dims: Vec<String> = shape.iter().map(u32::to_string).collect();
                write!(f, "{}[{}] row-major", dtype.name(), dims.join("x"))
            }
            RegionKind::Tile(t) => write!(
                f,
                "{} tile {}x{} {}-major, swizzle {}",
                t.dtype().name(),
                t.shape().mn,
                t.shape().k,
                t.major(),
                t.swizzle()
            ),
            RegionKind::Mbarriers { count } => write!(f, "{count} mbarriers"),
        }
    }
}

impl fmt::Display for Region {
    /// One line for a PTX comment: `main.A[0]: dynamic +0x400, 16384 bytes, align 1024, bf16 tile ...`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let storage = match self.storage {
            Storage::Dynamic => "dynamic",
            Storage::Static => "static",
        };
        write!(
            f,
            "{}: {storage} +{:#x}, {} bytes, align {}, {}",
            self.name, self.offset, self.bytes, self.align, self.kind
        )
    }
}

/// Why an allocation failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PoolError {
    /// Alignments are powers of two.
    #[error("region `{name}`: alignment {align} is not a power of two")]
    BadAlignment {
        /// The region.
        name: String,
        /// The alignment asked for.
        align: u32,
    },
    /// Empty regions are almost always a bug in the caller's arithmetic.
    #[error("region `{name}` has zero bytes")]
    ZeroSize {
        /// The region.
        name: String,
    },
    /// Names identify regions in comments and look-ups.
    #[error("region `{name}` is already allocated")]
    DuplicateName {
        /// The region.
        name: String,
    },
    /// The CTA would need more shared memory than the device lets it opt into.
    #[error(
        "region `{name}` ({requested} bytes) brings the CTA to {total} bytes of shared memory, over the {limit}-byte limit"
    )]
    OutOfMemory {
        /// The region that did not fit.
        name: String,
        /// Its size.
        requested: u64,
        /// The total the CTA would need with it.
        total: u64,
        /// The limit.
        limit: u32,
    },
    /// A shape with a zero extent, or whose size overflows.
    #[error("region `{name}`: shape {shape:?} of {} is empty or too large", dtype.name())]
    BadShape {
        /// The region.
        name: String,
        /// The shape.
        shape: Vec<u32>,
        /// The element type.
        dtype: ScalarType,
    },
    /// Sub-byte element types have no byte size.
    #[error("region `{name}`: {} is narrower than a byte", dtype.name())]
    SubByte {
        /// The region.
        name: String,
        /// The element type.
        dtype: ScalarType,
    },
    /// A pipeline needs at least one stage and one tile.
    #[error("pipeline `{name}` needs at least one stage and one tile")]
    EmptyPipeline {
        /// The pipeline.
        name: String,
    },
    /// A barrier array was malformed.
    #[error(transparent)]
    Mbarrier(#[from] MbarrierError),
}

/// The bump allocator. See the module documentation.
///
/// ```
/// use smem::pool::SmemPool;
/// use ptx_isa::Target;
/// let mut pool = SmemPool::new(Target::Sm90a);
/// let a = pool.alloc_bytes("a", 100, 16).unwrap();
/// let b = pool.alloc_bytes("b", 4096, 1024).unwrap();
/// assert_eq!((a.offset, b.offset), (0, 1024));
/// assert_eq!(pool.dynamic_bytes(), 1024 + 4096);
/// assert!(pool.alloc_bytes("huge", 300_000, 16).is_err());
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SmemPool {
    limit: u32,
    dynamic_end: u32,
    static_end: u32,
    base_align: u32,
    regions: Vec<Region>,
}

impl SmemPool {
    /// A pool limited to what one CTA can opt into on `target` ([`crate::max_smem_optin`]).
    pub fn new(target: ptx_isa::Target) -> SmemPool {
        SmemPool::with_limit(crate::max_smem_optin(target))
    }

    /// A pool with an explicit byte limit.
    pub fn with_limit(limit: u32) -> SmemPool {
        SmemPool {
            limit,
            dynamic_end: 0,
            static_end: 0,
            base_align: 16,
            regions: Vec::new(),
        }
    }

    /// The byte limit.
    pub fn limit(&self) -> u32 {
        self.limit
    }

    /// Every region, in allocation order.
    pub fn regions(&self) -> &[Region] {
        &self.regions
    }

    /// The region called `name`.
    pub fn region(&self, name: &str) -> Option<&Region> {
        self.regions.iter().find(|r| r.name == name)
    }

    /// The dynamic shared-memory size the launch must request.
    pub fn dynamic_bytes(&self) -> u32 {
        self.dynamic_end
    }

    /// Bytes of static `.shared` variables.
    pub fn static_bytes(&self) -> u32 {
        self.static_end
    }

    /// The alignment to declare on the dynamic array: the largest any dynamic region needs
    /// (at least 16).
    pub fn base_align(&self) -> u32 {
        self.base_align
    }

    /// What the CTA needs in all: the static area, padded to the dynamic array's alignment
    /// (the dynamic array follows the static variables), plus the dynamic bytes.
    pub fn total_bytes(&self) -> u64 {
        total(self.static_end, self.dynamic_end, self.base_align)
    }

    /// Allocates `bytes` aligned to `align` in the dynamic array.
    pub fn alloc_bytes(&mut self, name: &str, bytes: u32, align: u32) -> Result<Region, PoolError> {
        self.place(name, bytes, align, Storage::Dynamic, RegionKind::Bytes)
    }

    /// Allocates a static `.shared` variable of `bytes` aligned to `align`.
    pub fn alloc_static(
        &mut self,
        name: &str,
        bytes: u32,
        align: u32,
    ) -> Result<Region, PoolError> {
        self.place(name, bytes, align, Storage::Static, RegionKind::Bytes)
    }

    /// Allocates row-major scratch of `dtype` with `shape` (outermost first), aligned to 16
    /// bytes so vector loads work. Element `[i, j]` of a 2-D scratch is at
    /// `offset + (i * shape[1] + j) * size`; no swizzle.
    pub fn alloc(
        &mut self,
        name: &str,
        dtype: ScalarType,
        shape: &[u32],
    ) -> Result<Region, PoolError> {
        let size = dtype.whole_bytes().ok_or_else(|| PoolError::SubByte {
            name: name.to_string(),
            dtype,
        })?;
        let bad = || PoolError::BadShape {
            name: name.to_string(),
            shape: shape.to_vec(),
            dtype,
        };
        if shape.is_empty() || shape.contains(&0) {
            return Err(bad());
        }
        let bytes = shape
            .iter()
            .try_fold(u64::from(size), |acc, &d| acc.checked_mul(u64::from(d)))
            .and_then(|b| u32::try_from(b).ok())
            .ok_or_else(bad)?;
        let align = size.max(16);
        self.place(
            name,
            bytes,
            align,
            Storage::Dynamic,
            RegionKind::Scratch {
                dtype,
                shape: shape.to_vec(),
            },
        )
    }

    /// Allocates a canonical operand tile at its required alignment (1024 bytes for 128B swizzle).
    pub fn alloc_tile(&mut self, name: &str, tile: &CanonicalTile) -> Result<Region, PoolError> {
        self.place(
            name,
            tile.bytes(),
            tile.align(),
            Storage::Dynamic,
            RegionKind::Tile(*tile),
        )
    }

    /// Allocates one 8-byte, 8-byte-aligned mbarrier per entry of `counts`, each to be
    /// initialised with that expected arrival count.
    pub fn mbarriers(&mut self, name: &str, counts: &[u32]) -> Result<MbarrierArray, PoolError> {
        MbarrierArray::check_counts(name, counts)?;
        let wide = (counts.len() as u64).saturating_mul(8);
        let (Ok(n), Ok(bytes)) = (u32::try_from(counts.len()), u32::try_from(wide)) else {
            return Err(PoolError::OutOfMemory {
                name: name.to_string(),
                requested: wide,
                total: wide,
                limit: self.limit,
            });
        };
        let region = self.place(
            name,
            bytes,
            8,
            Storage::Dynamic,
            RegionKind::Mbarriers { count: n },
        )?;
        Ok(MbarrierArray::new(region, counts.to_vec())?)
    }

    fn place(
        &mut self,
        name: &str,
        bytes: u32,
        align: u32,
        storage: Storage,
        kind: RegionKind,
    ) -> Result<Region, PoolError> {
        if !align.is_power_of_two() {
            return Err(PoolError::BadAlignment {
                name: name.to_string(),
                align,
            });
        }
        if bytes == 0 {
            return Err(PoolError::ZeroSize {
                name: name.to_string(),
            });
        }
        if self.region(name).is_some() {
            return Err(PoolError::DuplicateName {
                name: name.to_string(),
            });
        }
        let end = match storage {
            Storage::Dynamic => self.dynamic_end,
            Storage::Static => self.static_end,
        };
        let offset = u64::from(end).next_multiple_of(u64::from(align));
        let new_end = offset + u64::from(bytes);
        let (static_end, dynamic_end, base_align) = match storage {
            Storage::Dynamic => (
                u64::from(self.static_end),
                new_end,
                self.base_align.max(align),
            ),
            Storage::Static => (new_end, u64::from(self.dynamic_end), self.base_align),
        };
        let total = static_end.next_multiple_of(u64::from(base_align)) + dynamic_end;
        if total > u64::from(self.limit) {
            return Err(PoolError::OutOfMemory {
                name: name.to_string(),
                requested: u64::from(bytes),
                total,
                limit: self.limit,
            });
        }
        // total <= limit <= u32::MAX, so both ends and the offset fit in u32.
        let (offset, new_end) = (offset as u32, new_end as u32);
        match storage {
            Storage::Dynamic => {
                self.dynamic_end = new_end;
                self.base_align = base_align;
            }
            Storage::Static => self.static_end = new_end,
        }
        let region = Region {
            name: name.to_string(),
            offset,
            bytes,
            align,
            storage,
            kind,
        };
        self.regions.push(region.clone());
        Ok(region)
    }
}

fn total(static_end: u32, dynamic_end: u32, base_align: u32) -> u64 {
    u64::from(static_end).next_multiple_of(u64::from(base_align)) + u64::from(dynamic_end)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::major::Major;
    use crate::tile::{TileShape, wgmma_tile};

    #[test]
    fn alignment_and_names() {
        let mut p = SmemPool::with_limit(1 << 16);
        assert_eq!(
            p.alloc_bytes("x", 10, 3),
            Err(PoolError::BadAlignment {
                name: "x".into(),
                align: 3
            })
        );
        assert_eq!(
            p.alloc_bytes("x", 0, 16),
            Err(PoolError::ZeroSize { name: "x".into() })
        );
        p.alloc_bytes("x", 10, 16).unwrap();
        assert_eq!(
            p.alloc_bytes("x", 10, 16),
            Err(PoolError::DuplicateName { name: "x".into() })
        );
        let t = wgmma_tile(ScalarType::Bf16, TileShape { mn: 128, k: 64 }, Major::K).unwrap();
        let r = p.alloc_tile("A", &t).unwrap();
        assert_eq!((r.offset, r.bytes, r.align), (1024, 16384, 1024));
        assert_eq!(
            r.to_string(),
            "A: dynamic +0x400, 16384 bytes, align 1024, bf16 tile 128x64 k-major, swizzle 128B"
        );
        assert_eq!(p.base_align(), 1024);
    }

    #[test]
    fn scratch_shapes() {
        let mut p = SmemPool::new(ptx_isa::Target::Sm90a);
        let r = p.alloc("s", ScalarType::F32, &[64, 16]).unwrap();
        assert_eq!((r.bytes, r.align), (4096, 16));
        assert!(matches!(
            p.alloc("z", ScalarType::F32, &[64, 0]),
            Err(PoolError::BadShape { .. })
        ));
        assert!(matches!(
            p.alloc("o", ScalarType::F32, &[u32::MAX, 4]),
            Err(PoolError::BadShape { .. })
        ));
        assert!(matches!(
            p.alloc("f4", ScalarType::E2m1, &[64]),
            Err(PoolError::SubByte { .. })
        ));
    }

    #[test]
    fn the_limit_counts_static_and_dynamic() {
        let mut p = SmemPool::new(ptx_isa::Target::Sm90a);
        p.alloc_bytes("big", 232_448 - 1024, 1024).unwrap();
        p.alloc_static("s", 16, 16).unwrap();
        // 16 static bytes pad to the 1024-byte base alignment: exactly at the limit.
        assert_eq!(p.total_bytes(), 232_448);
        let err = p.alloc_bytes("one", 1, 1).unwrap_err();
        assert_eq!(
            err,
            PoolError::OutOfMemory {
                name: "one".into(),
                requested: 1,
                total: 232_449,
                limit: 232_448
            }
        );
        // A failed allocation leaves the pool as it was.
        assert_eq!(p.regions().len(), 2);
        assert_eq!(p.dynamic_bytes(), 232_448 - 1024);
    }
}
