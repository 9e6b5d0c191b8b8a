//! Cache hints on global loads and stores: an L1 eviction priority (`.L1::evict_*`) and an L2
//! priority carried by a cache policy (`createpolicy.fractional`, then `.L2::cache_hint` with the
//! policy as the access's last operand). PTX ISA 9.7.9.8 "ld", 9.7.9.11 "st", 9.7.9.18
//! "createpolicy"; both qualifiers since PTX ISA 7.4, the cache hint on sm_80 and later.

use ptx_isa::builder::{Evict, L2Evict};
use ptx_isa::{Reg, ty};

use super::KernelBuilder;
use super::builder::MemoKey;
use super::error::Result;
use super::expr::Expr;

/// How a global access asks the caches to treat the lines it touches (the default asks nothing:
/// a plain `ld.global`/`st.global`).
///
/// ```
/// use ptxkit::isa::{Target, ty};
/// use ptxkit::kernel::{Caching, KernelBuilder, TensorOpts};
/// use ptxkit::runtime::ExtentFacts;
/// let mut k = KernelBuilder::new("hinted", Target::Sm90a);
/// let n = k.symbol_with("n", ExtentFacts::NONE.multiple_of(4))?;
/// let x = k.tensor::<ty::F32>("x", [n], TensorOpts::default().align(16))?;
/// let [t] = k.thread_id([64])?;
/// let v = k.load_n_with(&x, [t * 4], 4, 0.0f32, Caching::KEEP)?;
/// k.store_n_with(&x, [t * 4], &v, Caching::STREAM)?;
/// let ptx = k.finish()?.ptx().to_string();
/// assert!(ptx.contains("createpolicy.fractional.L2::evict_last.b64"));
/// assert!(ptx.contains("ld.global.L1::evict_last.L2::cache_hint.v4.f32"));
/// assert!(ptx.contains("st.global.L1::evict_first.L2::cache_hint.v4.f32"));
/// # Ok::<(), ptxkit::kernel::KernelError>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub struct Caching {
    /// The L1 eviction priority (`.L1::evict_last`...), none when `None`.
    pub l1: Option<Evict>,
    /// The L2 priority, through a cache policy that covers every line (fraction 1.0); none when
    /// `None`.
    pub l2: Option<L2Evict>,
}

impl Caching {
    /// No hint.
    pub const NONE: Caching = Caching { l1: None, l2: None };
    /// Data read again soon (a row's second pass, a weight every row reads): evicted last in L1
    /// and L2.
    pub const KEEP: Caching = Caching {
        l1: Some(Evict::Last),
        l2: Some(L2Evict::Last),
    };
    /// Data touched once (a row's last read, an output): evicted first in L1 and L2, leaving
    /// room for what is kept.
    pub const STREAM: Caching = Caching {
        l1: Some(Evict::First),
        l2: Some(L2Evict::First),
    };

    /// Whether this asks nothing of the caches.
    pub fn is_none(&self) -> bool {
        *self == Caching::NONE
    }
}

impl KernelBuilder {
    /// A register holding the L2 cache policy that gives every line an access touches the
    /// priority `priority` (`createpolicy.fractional.L2::evict_*.b64 p, 1.0`, PTX ISA 9.7.9.18),
    /// for `.L2::cache_hint` accesses. Made once and reused while the region it was made in is
    /// open: make it before a loop to have one for the whole loop.
    #[track_caller]
    pub fn l2_policy(&mut self, priority: L2Evict) -> Result<Reg<ty::B64>> {
        let key = MemoKey::Policy(priority);
        if let Some(r) = self.recall::<ty::B64>(&key) {
            return Ok(r);
        }
        let p = self.f.reg::<ty::B64>();
        self.f.createpolicy_fractional(p, priority, 1.0)?;
        self.remember(key, &Expr::Const(0), p);
        Ok(p)
    }
}
