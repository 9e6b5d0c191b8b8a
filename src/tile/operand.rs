//! Tile operands: a region of a buffer (its storage, element type, shape, layout, swizzle and where
//! it starts) and the execution scope of the threads that run an op.

use std::fmt;

use layouts::Layout;
use layouts::fragment::TvLayout;
use ptx_isa::builder::TensorMapRef;
use ptx_isa::{Reg, RegRef, ScalarType, Src, ty};
use smem::SwizzleMode;

/// Where a tile lives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Storage {
    /// Global memory.
    Global,
    /// The CTA's shared memory.
    Shared,
    /// Another CTA's shared memory in the cluster (a `shared::cluster` address from `mapa`).
    SharedCluster,
    /// Registers ("local" in TIRx terms).
    Local,
    /// Blackwell tensor memory.
    Tmem,
}

impl fmt::Display for Storage {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Storage::Global => "global",
            Storage::Shared => "shared",
            Storage::SharedCluster => "shared::cluster",
            Storage::Local => "local",
            Storage::Tmem => "tmem",
        })
    }
}

/// The (destination, source) storages of a two-operand op: what a variant moves between.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct StoragePair {
    /// The destination's storage.
    pub dst: Storage,
    /// The source's storage.
    pub src: Storage,
}

impl StoragePair {
    /// `src -> dst`.
    pub const fn new(dst: Storage, src: Storage) -> StoragePair {
        StoragePair { dst, src }
    }

    /// The pair of a destination and a source tile.
    pub fn of(dst: &TileRef, src: &TileRef) -> StoragePair {
        StoragePair::new(dst.storage, src.storage)
    }

    /// True when the destination is registers (the op loads into them).
    pub const fn loads_registers(self) -> bool {
        matches!(self.dst, Storage::Local)
    }
}

impl fmt::Display for StoragePair {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}->{}", self.src, self.dst)
    }
}

/// The kind of an execution scope, without its sizes: what a variant accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScopeKind {
    /// [`ExecScope::Thread`].
    Thread,
    /// [`ExecScope::Warp`].
    Warp,
    /// [`ExecScope::Warpgroup`].
    Warpgroup,
    /// [`ExecScope::Cta`].
    Cta,
    /// [`ExecScope::Cluster`].
    Cluster,
}

impl fmt::Display for ScopeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ScopeKind::Thread => "thread",
            ScopeKind::Warp => "warp",
            ScopeKind::Warpgroup => "warpgroup",
            ScopeKind::Cta => "cta",
            ScopeKind::Cluster => "cluster",
        })
    }
}

/// The threads that run an op together.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ExecScope {
    /// One thread.
    Thread,
    /// A warp (32 threads).
    Warp,
    /// A warpgroup (4 consecutive warps, 128 threads).
    Warpgroup,
    /// The whole CTA (`threads` threads).
    Cta {
        /// Threads in the CTA.
        threads: u32,
    },
    /// A cluster of CTAs.
    Cluster {
        /// CTAs in the cluster.
        ctas: u32,
    },
}

impl ExecScope {
    /// The scope's kind.
    pub const fn kind(self) -> ScopeKind {
        match self {
            ExecScope::Thread => ScopeKind::Thread,
            ExecScope::Warp => ScopeKind::Warp,
            ExecScope::Warpgroup => ScopeKind::Warpgroup,
            ExecScope::Cta { .. } => ScopeKind::Cta,
            ExecScope::Cluster { .. } => ScopeKind::Cluster,
        }
    }

    /// Threads that share the work (per CTA for a cluster: each CTA's threads do their part).
    pub fn threads(self) -> u32 {
        match self {
            ExecScope::Thread => 1,
            ExecScope::Warp => 32,
            ExecScope::Warpgroup => 128,
            ExecScope::Cta { threads } => threads,
            ExecScope::Cluster { .. } => 1,
        }
    }
}

impl fmt::Display for ExecScope {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExecScope::Thread => f.write_str("thread"),
            ExecScope::Warp => f.write_str("warp"),
            ExecScope::Warpgroup => f.write_str("warpgroup"),
            ExecScope::Cta { threads } => write!(f, "cta({threads})"),
            ExecScope::Cluster { ctas } => write!(f, "cluster({ctas})"),
        }
    }
}

/// Where a tile starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Base {
    /// A global address in a register.
    Global(Reg<ty::U64>),
    /// A shared-window address in a register.
    Shared(Reg<ty::U32>),
    /// Registers: each thread's values of the tile, in the order of the register layout's values.
    Registers(Vec<RegRef>),
    /// A tensor-memory address (lane in bits 16-31, column in 0-15).
    Tmem(Reg<ty::U32>),
    /// A global tensor known through its TMA tensor map, the tile at these coordinates
    /// (innermost first).
    TensorMap {
        /// The tensor map.
        map: TensorMapRef,
        /// The tile's origin in the tensor, innermost dimension first.
        coords: Vec<Src<ty::S32>>,
        /// An L2 cache policy (from `createpolicy`) a load of the tile carries
        /// (`.L2::cache_hint`, PTX ISA 9.7.9.27 `cp.async.bulk.tensor`); none when `None`.
        l2_hint: Option<Reg<ty::B64>>,
    },
}

/// A count known only when the kernel runs (a matrix's row pitch, how many rows of a tile exist),
/// held in a register or an immediate of the kernel being built, with the multiple known of it.
///
/// This is not a second extent type: a tensor's dimensions are [`Extent`](crate::signature::Extent)s
/// with their [`ExtentFacts`](crate::signature::ExtentFacts); a `RunCount` is what an expression
/// of them evaluates to in the kernel (`cols - 64 * bj` left of a block's origin), and its
/// `multiple_of` is what those facts prove of that expression.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RunCount {
    /// The count.
    pub value: Src<ty::U32>,
    /// A number the count is always a multiple of (1 when nothing is known). Variants read it to
    /// decide how wide an access may be: a vector never straddles a bound, and a row start is
    /// aligned only as far as the pitch allows.
    pub multiple_of: u32,
}

impl RunCount {
    /// A run-time count that is a multiple of `multiple_of` (0 is taken as 1).
    pub fn new(value: impl Into<Src<ty::U32>>, multiple_of: u32) -> RunCount {
        RunCount {
            value: value.into(),
            multiple_of: multiple_of.max(1),
        }
    }
}

impl fmt::Display for RunCount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.value {
            Src::Imm(i) => write!(f, "{i}"),
            _ if self.multiple_of > 1 => write!(f, "{}k", self.multiple_of),
            _ => f.write_str("n"),
        }
    }
}

/// A tile operand.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TileRef {
    /// Where it lives.
    pub storage: Storage,
    /// The element type.
    pub dtype: ScalarType,
    /// The logical shape, outermost first (`[rows, cols]` for 2-D tiles).
    pub shape: Vec<u32>,
    /// Memory tiles: logical coordinate (colexicographic over `shape` reversed: column-fastest
    /// index `c + cols * r`) → element offset from the base. `None` for register tiles.
    pub layout: Option<Layout>,
    /// Register tiles: (thread, value) → (row, col) over the scope's threads.
    pub fragment: Option<TvLayout>,
    /// A byte swizzle applied after the layout (shared-memory tiles).
    pub swizzle: SwizzleMode,
    /// Where it starts.
    pub base: Base,
    /// The alignment of the base in bytes.
    pub align: u32,
    /// Global tiles cut from a larger row-major matrix: elements from one row to the next, known
    /// at run time. Element `(r, c)` is at `base + (r * pitch + c) * size`; `layout` is `None`.
    pub pitch: Option<RunCount>,
    /// The rows and columns of the tile that exist, counted from its origin (a count past the
    /// shape means all): stores outside are skipped and loads outside read zero. A GEMM's edge
    /// tiles are the use.
    pub bounds: Option<[RunCount; 2]>,
}

impl TileRef {
    /// A dense row-major `rows x cols` tile in global memory at `base`.
    pub fn global_row_major(
        dtype: ScalarType,
        rows: u32,
        cols: u32,
        base: Reg<ty::U64>,
        align: u32,
    ) -> TileRef {
        TileRef::row_major(
            Storage::Global,
            dtype,
            rows,
            cols,
            Base::Global(base),
            align,
        )
    }

    /// A dense row-major `rows x cols` tile in shared memory at `base`.
    pub fn shared_row_major(
        dtype: ScalarType,
        rows: u32,
        cols: u32,
        base: Reg<ty::U32>,
        align: u32,
    ) -> TileRef {
        TileRef::row_major(
            Storage::Shared,
            dtype,
            rows,
            cols,
            Base::Shared(base),
            align,
        )
    }

    /// A `rows x cols` shared tile stored as TMA boxes of one swizzle span's width lay it out:
    /// the columns cut into slabs of `swizzle.span_bytes()` bytes, each slab `slab_rows` rows
    /// (at least `rows`: a tile may be the first rows of taller slabs) of one span, the swizzle
    /// over each. Element `(r, c)` is at `c % w + r * w + (c / w) * slab_rows * w`, `w` the span
    /// in elements. With `cols` one span wide it is a dense row-major tile. `cols` must be a
    /// multiple of the span (else the tile is dense rows of `cols`, as `shared_row_major`).
    pub fn shared_slabs(
        dtype: ScalarType,
        [rows, cols]: [u32; 2],
        slab_rows: u32,
        base: Reg<ty::U32>,
        align: u32,
        swizzle: SwizzleMode,
    ) -> TileRef {
        let w = swizzle.span_bytes() / dtype.bytes().max(1);
        let mut t = TileRef::shared_row_major(dtype, rows, cols, base, align).with_swizzle(swizzle);
        if w > 0 && cols > w && cols % w == 0 {
            use layouts::IntTuple as T;
            let (w, slabs, slab, rows) = (
                i64::from(w),
                i64::from(cols / w),
                i64::from(slab_rows.max(rows)) * i64::from(w),
                i64::from(rows),
            );
            t.layout = Layout::new(
                T::tuple([T::tuple([T::Int(w), T::Int(slabs)]), T::Int(rows)]),
                T::tuple([T::tuple([T::Int(1), T::Int(slab)]), T::Int(w)]),
            )
            .ok();
        }
        t
    }

    /// The `cols x rows` transpose of a 2-D memory tile: element `(c, r)` of the result is
    /// element `(r, c)` of this one (the same memory). An attention kernel's `V` (`[n, d]`,
    /// d-contiguous) transposed is the MN-major `B` (`[d, n]`) of `O = P·V`. `None` for a tile
    /// without a layout or not 2-D.
    pub fn transposed(&self) -> Option<TileRef> {
        let (&[rows, cols], Some(l)) = (&self.shape[..], &self.layout) else {
            return None;
        };
        let (r, c) = (i64::from(rows), i64::from(cols));
        // The new index r + rows * c is the old index c + cols * r.
        let swap = Layout::new(
            layouts::IntTuple::tuple([layouts::IntTuple::Int(r), layouts::IntTuple::Int(c)]),
            layouts::IntTuple::tuple([layouts::IntTuple::Int(c), layouts::IntTuple::Int(1)]),
        )
        .ok()?;
        let layout = layouts::composition(l, &swap).ok()?;
        Some(TileRef {
            shape: vec![cols, rows],
            layout: Some(layout),
            ..self.clone()
        })
    }

    /// A tile with no layout, fragment, swizzle, pitch or bounds: the fields every constructor
    /// starts from.
    fn unlaid(
        storage: Storage,
        dtype: ScalarType,
        shape: Vec<u32>,
        base: Base,
        align: u32,
    ) -> TileRef {
        TileRef {
            storage,
            dtype,
            shape,
            layout: None,
            fragment: None,
            swizzle: SwizzleMode::None,
            base,
            align,
            pitch: None,
            bounds: None,
        }
    }

    fn row_major(
        storage: Storage,
        dtype: ScalarType,
        rows: u32,
        cols: u32,
        base: Base,
        align: u32,
    ) -> TileRef {
        // Index i = c + cols * r (column fastest) maps to offset r * cols + c: the identity.
        let layout = Layout::new(
            layouts::IntTuple::Int(rows as i64 * cols as i64),
            layouts::IntTuple::Int(1),
        )
        .ok();
        TileRef {
            layout,
            ..TileRef::unlaid(storage, dtype, vec![rows, cols], base, align)
        }
    }

    /// A register tile: the values of `fragment` held in `regs` by each thread of the scope.
    pub fn registers(dtype: ScalarType, fragment: TvLayout, regs: Vec<RegRef>) -> TileRef {
        let shape = vec![fragment.rows() as u32, fragment.cols() as u32];
        TileRef {
            fragment: Some(fragment),
            ..TileRef::unlaid(Storage::Local, dtype, shape, Base::Registers(regs), 4)
        }
    }

    /// A tile of a TMA-described global tensor: `rows x cols` at `coords`.
    pub fn tensor_map(
        dtype: ScalarType,
        rows: u32,
        cols: u32,
        map: TensorMapRef,
        coords: Vec<Src<ty::S32>>,
    ) -> TileRef {
        let base = Base::TensorMap {
            map,
            coords,
            l2_hint: None,
        };
        TileRef::unlaid(Storage::Global, dtype, vec![rows, cols], base, 16)
    }

    /// A tensor-memory tile of `rows` lanes x `cols` 32-bit columns at `taddr`.
    pub fn tmem(dtype: ScalarType, rows: u32, cols: u32, taddr: Reg<ty::U32>) -> TileRef {
        TileRef::unlaid(Storage::Tmem, dtype, vec![rows, cols], Base::Tmem(taddr), 4)
    }

    /// A `rows x cols` tile of a row-major global matrix whose rows are `pitch` elements apart
    /// (known at run time), starting at `base` (aligned to `align` bytes).
    pub fn global_pitched(
        dtype: ScalarType,
        rows: u32,
        cols: u32,
        base: Reg<ty::U64>,
        align: u32,
        pitch: RunCount,
    ) -> TileRef {
        TileRef {
            pitch: Some(pitch),
            ..TileRef::unlaid(
                Storage::Global,
                dtype,
                vec![rows, cols],
                Base::Global(base),
                align,
            )
        }
    }

    /// The same tile of which only the first `rows` rows and `cols` columns exist.
    pub fn with_bounds(mut self, rows: RunCount, cols: RunCount) -> TileRef {
        self.bounds = Some([rows, cols]);
        self
    }

    /// True when the tile has a run-time pitch or bounds (only variants that say they honour them
    /// may take it).
    pub fn is_view(&self) -> bool {
        self.pitch.is_some() || self.bounds.is_some()
    }

    /// The same tile with a byte swizzle.
    pub fn with_swizzle(mut self, swizzle: SwizzleMode) -> TileRef {
        self.swizzle = swizzle;
        self
    }

    /// The same tile, its TMA loads and stores carrying the L2 cache policy `policy`
    /// (`.L2::cache_hint`, PTX ISA 9.7.9.27, from [`crate::kernel::KernelBuilder::l2_policy`]:
    /// `evict_first` for data read or written once);
    /// a tile not described by a tensor map is returned unchanged.
    pub fn with_l2_hint(mut self, policy: Reg<ty::B64>) -> TileRef {
        if let Base::TensorMap { l2_hint, .. } = &mut self.base {
            *l2_hint = Some(policy);
        }
        self
    }

    /// Elements in the tile.
    pub fn elements(&self) -> u64 {
        self.shape.iter().map(|&x| x as u64).product()
    }

    /// Bytes of the tile's elements.
    pub fn bytes(&self) -> u64 {
        self.elements() * self.dtype.bytes() as u64
    }

    /// True when the layout is the identity (element `i` of the row-major order is at offset `i`):
    /// every flat mode's stride is the product of the extents before it (extent-1 modes aside).
    pub fn is_contiguous(&self) -> bool {
        let Some(l) = &self.layout else { return false };
        let mut expect = 1i64;
        for (extent, stride) in l.flat_modes() {
            if extent != 1 && stride != expect {
                return false;
            }
            expect *= extent;
        }
        expect == self.elements() as i64
    }
}

impl fmt::Display for TileRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let shape: Vec<String> = self.shape.iter().map(u32::to_string).collect();
        write!(f, "{}{} [{}]", self.storage, self.dtype, shape.join("x"))?;
        if let Some(l) = &self.layout {
            write!(f, " {l}")?;
        }
        if let Some(tv) = &self.fragment {
            write!(f, " regs {}", tv.name())?;
        }
        if self.swizzle != SwizzleMode::None {
            write!(f, " swizzle {:?}", self.swizzle)?;
        }
        if matches!(self.base, Base::TensorMap { .. }) {
            write!(f, " (tensor map)")?;
        }
        if let Some(p) = &self.pitch {
            write!(f, " pitch {p}")?;
        }
        if let Some([r, c]) = &self.bounds {
            write!(f, " bounds {r}x{c}")?;
        }
        write!(f, " align {}", self.align)
    }
}
