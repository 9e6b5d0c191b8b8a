//! A built kernel: PTX text, the signature its arguments are checked against, and the launch
//! extents, some of them expressions of symbolic extents resolved from the arguments at launch.
//! Loading and launching it is the runtime's (`runtime::built`).

use ptx_isa::Module;

use super::expr::Expr;
use crate::signature::KernelSignature;

/// A grid the launcher sizes to the device ([`KernelBuilder::persistent_cta_id`]): `min(work,
/// SMs x CTAs per SM)` CTAs in x, each looping over the work items in steps of the grid size.
///
/// [`KernelBuilder::persistent_cta_id`]: super::KernelBuilder::persistent_cta_id
///
/// ```
/// use ptxkit::isa::Target;
/// use ptxkit::kernel::{Expr, KernelBuilder, PersistentGrid, PersistentUnit};
///
/// let mut k = KernelBuilder::new("k", Target::Sm90a);
/// k.persistent_cta_id(1000, Some(1))?;
/// k.thread_id([32])?;
/// let spec = k.finish()?.launch_spec().clone();
/// let want = PersistentGrid { work: Expr::Const(1000), unit: PersistentUnit::Cta, ctas_per_sm: Some(1) };
/// assert_eq!(spec.persistent, Some(want));
/// # Ok::<(), ptxkit::kernel::KernelError>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PersistentGrid {
    /// The work items (a constant or an expression of symbolic extents): the grid never has more
    /// units than it.
    pub work: Expr,
    /// What the launcher counts: CTAs, or whole clusters.
    pub unit: PersistentUnit,
    /// At most this many CTAs per SM (the driver's occupancy when `None`; CTAs only).
    pub ctas_per_sm: Option<u32>,
}

/// What a persistent grid is sized in ([`PersistentGrid`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PersistentUnit {
    /// Single CTAs: `min(work, SMs x CTAs per SM)` CTAs
    /// ([`KernelBuilder::persistent_cta_id`](super::KernelBuilder::persistent_cta_id)).
    Cta,
    /// Whole clusters: `min(work, clusters resident at once)` clusters
    /// ([`KernelBuilder::persistent_cluster_id`](super::KernelBuilder::persistent_cluster_id)).
    Cluster,
}

/// The launch extents a kernel's scope ids stated.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchSpec {
    /// Grid extents in x, y, z: constants or expressions of symbolic extents. For a persistent
    /// kernel, `[work, 1, 1]`: the most CTAs the launcher gives it.
    pub grid: [Expr; 3],
    /// Whether the launcher sizes the grid to the device ([`PersistentGrid`]).
    pub persistent: Option<PersistentGrid>,
    /// Block extents (also the kernel's `.maxntid`).
    pub block: [u32; 3],
    /// Cluster dimensions, if the kernel runs in clusters.
    pub cluster: Option<[u32; 3]>,
    /// Preferred cluster dimensions.
    pub preferred_cluster: Option<[u32; 3]>,
    /// Dynamic shared memory the pool needs, in bytes.
    pub dynamic_smem_bytes: u32,
    /// Static shared memory declared, in bytes.
    pub static_smem_bytes: u32,
    /// The second launch bound, if given.
    pub min_blocks_per_sm: Option<u32>,
}

/// A kernel ready to load: its PTX, its signature and its launch extents.
#[derive(Debug, Clone)]
pub struct BuiltKernel {
    pub(crate) module: Module,
    pub(crate) ptx: String,
    pub(crate) signature: KernelSignature,
    pub(crate) launch: LaunchSpec,
    /// Variable index -> symbolic-extent name, for evaluating the grid.
    pub(crate) symbols: Vec<(u32, String)>,
}

impl BuiltKernel {
    /// The PTX text.
    pub fn ptx(&self) -> &str {
        &self.ptx
    }

    /// The PTX module.
    pub fn module(&self) -> &Module {
        &self.module
    }

    /// The module, consumed.
    pub fn into_module(self) -> Module {
        self.module
    }

    /// The signature the launcher checks arguments against.
    pub fn signature(&self) -> &KernelSignature {
        &self.signature
    }

    /// The launch extents.
    pub fn launch_spec(&self) -> &LaunchSpec {
        &self.launch
    }
}
