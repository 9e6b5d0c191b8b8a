//! [`KernelBuilder`]: one kernel entry under construction, its parameters and its variables.

use std::ops::{Deref, DerefMut};

use ptx_isa::builder::TensorMapRef;
use ptx_isa::{Directive, FunctionBuilder, Imm, Module, Reg, Src, StateSpace, Target, ty};
use smem::pool::SmemPool;

use super::buffer::{Buffer, Elem, Layout, Storage};
use super::built::{BuiltKernel, LaunchSpec};
use super::error::{KernelError, Result};
use super::expr::{Expr, Exprs, Facts, Var, VarFacts, bounds, divisibility, simplify};
use super::scope::LaunchState;
use crate::signature::{Extent, ExtentFacts, KernelSignature, Param};

/// What the builder knows of one variable.
#[derive(Debug, Clone)]
pub(crate) struct VarInfo {
    /// For messages.
    pub(crate) name: String,
    /// The register holding it on the device (none for a constant).
    pub(crate) reg: Option<Reg<ty::U32>>,
    /// What the simplifier may assume.
    pub(crate) facts: VarFacts,
    /// The symbolic extent it is, if it is one (its value is known on the host at launch).
    pub(crate) symbol: Option<String>,
    /// Whether its register is written again after its definition (a mutable scalar, a loop
    /// counter): a `let` of it takes a copy.
    pub(crate) changes: bool,
    /// Whether [`KernelBuilder::assign`] may write it (mutable scalars only).
    pub(crate) assignable: bool,
    /// For a loop counter, the nesting depth of its loop's body: the counter is written only
    /// after the body, so within one trip (at that depth or deeper) its value holds still.
    pub(crate) loop_body: Option<u32>,
}

impl Facts for [VarInfo] {
    fn facts(&self, v: Var) -> VarFacts {
        self.get(v.0 as usize)
            .map_or(VarFacts::UNKNOWN, |i| i.facts)
    }
}

/// A value computed once and reused while the region it was computed in is open: an index
/// expression's register, or an element address (`data + index * size`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) enum MemoKey {
    /// An index expression.
    Index(Expr),
    /// A global address: base register, index expression, element size.
    Global(Reg<ty::U64>, Expr, u32),
    /// A shared address: base register, index expression, element size (unswizzled buffers).
    Shared(Reg<ty::U32>, Expr, u32),
    /// The predicate `a < b` of a bounds check.
    Below(Expr, Expr),
    /// An index scaled to a 64-bit byte offset (`mul.wide.u32`): index expression, element size.
    Wide(Expr, u32),
    /// An L2 cache policy (`createpolicy.fractional` with this priority for every line).
    Policy(ptx_isa::builder::L2Evict),
}

/// A memoised value: the register holding it, and the nesting depth it was computed at (it
/// dominates everything after it at that depth or deeper, until its region closes).
#[derive(Debug, Clone)]
pub(crate) struct Memo {
    pub(crate) key: MemoKey,
    pub(crate) depth: u32,
    pub(crate) reg: ptx_isa::RegRef,
}

/// Options of a tensor parameter (the `match_buffer` descriptor fields beyond shape and dtype).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorOpts {
    /// Required alignment of the data pointer in bytes (the element size when `None`); the
    /// launcher refuses a tensor whose address is not aligned so.
    pub align: Option<u32>,
    /// How indices map to element offsets (row-major by default).
    pub layout: Layout,
    /// Elements between the data pointer and element `[0, ..]`.
    pub elem_offset: Expr,
}

impl Default for TensorOpts {
    fn default() -> TensorOpts {
        TensorOpts {
            align: None,
            layout: Layout::RowMajor,
            elem_offset: Expr::Const(0),
        }
    }
}

impl TensorOpts {
    /// With an alignment requirement.
    #[track_caller]
    pub fn align(mut self, bytes: u32) -> TensorOpts {
        self.align = Some(bytes);
        self
    }

    /// With a layout.
    #[track_caller]
    pub fn layout(mut self, layout: Layout) -> TensorOpts {
        self.layout = layout;
        self
    }

    /// With an element offset.
    #[track_caller]
    pub fn elem_offset(mut self, offset: impl Into<Expr>) -> TensorOpts {
        self.elem_offset = offset.into();
        self
    }
}

/// Builds one kernel: its parameters (recorded in a [`KernelSignature`] as they are declared),
/// its scope ids (which fix the launch's grid, block and cluster), its buffers, index arithmetic
/// and control flow. [`KernelBuilder::finish`] gives a [`BuiltKernel`]: PTX text, signature and
/// launch extents together.
///
/// A kernel specialises by being rebuilt: compile-time parameters are plain Rust values in the
/// function that builds it (the `T.jit` model).
///
/// The raw PTX builder is one `Deref` away (`k.add(x, x, y)?`, `k.tma_load(..)?`) for data
/// arithmetic and the instruction families this layer does not wrap.
#[derive(Debug)]
pub struct KernelBuilder {
    pub(crate) name: String,
    pub(crate) module: Module,
    pub(crate) f: FunctionBuilder,
    pub(crate) params: Vec<Param>,
    pub(crate) vars: Vec<VarInfo>,
    pub(crate) depth: u32,
    /// Index and address arithmetic already computed ([`MemoKey`]).
    pub(crate) memo: Vec<Memo>,
    /// Reductions written so far (each CTA-wide one has its own scratch words).
    pub(crate) reductions: u32,
    /// Whether a cluster barrier at the kernel's top level has shown that every CTA of the
    /// cluster has started (the condition for writing into a peer's shared memory).
    pub(crate) cluster_started: bool,
    /// Whether [`KernelBuilder::cluster_arrive_early`] arrived and no wait has matched it yet.
    pub(crate) cluster_arrived: bool,
    pub(crate) launch: LaunchState,
    pub(crate) pool: SmemPool,
    pub(crate) pool_symbol: String,
    pub(crate) pool_used: bool,
    pub(crate) deferred: Option<KernelError>,
    pub(crate) min_blocks_per_sm: Option<u32>,
    /// Tensor-memory tensors and their allocation (sm_100a; [`KernelBuilder::tmem_tensor`]).
    pub(crate) tmem: crate::tile::tmem::TmemState,
}

impl Deref for KernelBuilder {
    type Target = FunctionBuilder;
    fn deref(&self) -> &FunctionBuilder {
        &self.f
    }
}

impl DerefMut for KernelBuilder {
    fn deref_mut(&mut self) -> &mut FunctionBuilder {
        &mut self.f
    }
}

/// An instruction writing `d` from `a` and a second operand `B` (a register or a constant).
type U32Op<B> = fn(&mut FunctionBuilder, Reg<ty::U32>, Src<ty::U32>, B) -> ptx_isa::Result<()>;

impl KernelBuilder {
    /// Starts kernel `name` for `target`.
    #[track_caller]
    pub fn new(name: &str, target: Target) -> KernelBuilder {
        let module = Module::new(target);
        let f = module.entry(name);
        KernelBuilder {
            name: name.to_string(),
            module,
            f,
            params: Vec::new(),
            vars: Vec::new(),
            depth: 0,
            memo: Vec::new(),
            reductions: 0,
            cluster_started: false,
            cluster_arrived: false,
            launch: LaunchState::default(),
            pool: SmemPool::new(target),
            pool_symbol: "smem".to_string(),
            pool_used: false,
            deferred: None,
            min_blocks_per_sm: None,
            tmem: Default::default(),
        }
    }

    /// The kernel's name.
    #[track_caller]
    pub fn kernel_name(&self) -> &str {
        &self.name
    }

    /// The raw PTX builder.
    #[track_caller]
    pub fn isa(&mut self) -> &mut FunctionBuilder {
        &mut self.f
    }

    /// The module, for module-level declarations.
    #[track_caller]
    pub fn module_mut(&mut self) -> &mut Module {
        &mut self.module
    }

    /// The signature as declared so far.
    #[track_caller]
    pub fn signature(&self) -> KernelSignature {
        KernelSignature::new(self.name.clone(), self.params.clone())
    }

    // ---- errors ---------------------------------------------------------------------------------

    /// An error of this kernel, for a builder's own checks of its compile-time parameters.
    #[track_caller]
    pub fn error(&self, reason: impl Into<String>) -> KernelError {
        KernelError::Invalid {
            kernel: self.name.clone(),
            reason: reason.into(),
            at: super::error::CallSite::here(),
        }
    }

    #[track_caller]
    pub(crate) fn param_err(&self, param: &str, reason: impl Into<String>) -> KernelError {
        KernelError::Param {
            kernel: self.name.clone(),
            param: param.to_string(),
            reason: reason.into(),
            at: super::error::CallSite::here(),
        }
    }

    #[track_caller]
    pub(crate) fn scope_err(&self, reason: impl Into<String>) -> KernelError {
        KernelError::Scope {
            kernel: self.name.clone(),
            reason: reason.into(),
            at: super::error::CallSite::here(),
        }
    }

    #[track_caller]
    pub(crate) fn buffer_err(&self, buffer: &str, reason: impl Into<String>) -> KernelError {
        KernelError::Buffer {
            kernel: self.name.clone(),
            buffer: buffer.to_string(),
            reason: reason.into(),
            at: super::error::CallSite::here(),
        }
    }

    /// Records an error met where none can be returned (a dropped `if_`); `finish` returns it.
    #[track_caller]
    pub(crate) fn defer(&mut self, e: KernelError) {
        if self.deferred.is_none() {
            self.deferred = Some(e);
        }
    }

    #[track_caller]
    pub(crate) fn top_level(&self, param: &str) -> Result<()> {
        if self.depth > 0 {
            return Err(self.param_err(
                param,
                "parameters are declared at the top level, before any loop or branch",
            ));
        }
        Ok(())
    }

    // ---- variables and index arithmetic ---------------------------------------------------------

    #[track_caller]
    pub(crate) fn new_var(
        &mut self,
        name: &str,
        reg: Option<Reg<ty::U32>>,
        facts: VarFacts,
        symbol: Option<String>,
    ) -> Var {
        self.vars.push(VarInfo {
            name: name.to_string(),
            reg,
            facts,
            symbol,
            changes: false,
            assignable: false,
            loop_body: None,
        });
        Var(self.vars.len() as u32 - 1)
    }

    /// A fresh variable held in a register, nothing known of it.
    #[track_caller]
    pub(crate) fn reg_var(&mut self, name: &str, reg: Reg<ty::U32>) -> Var {
        self.new_var(name, Some(reg), VarFacts::UNKNOWN, None)
    }

    /// Names a register computed with the raw builder, so index expressions can use it. Nothing is
    /// assumed of its value; the register must not be written afterwards.
    #[track_caller]
    pub fn bind(&mut self, name: &str, reg: Reg<ty::U32>) -> Var {
        self.reg_var(name, reg)
    }

    /// The name a variable was declared with.
    #[track_caller]
    pub fn var_name(&self, v: Var) -> &str {
        self.vars.get(v.0 as usize).map_or("?", |i| i.name.as_str())
    }

    /// The register holding `v` (none for a constant `let`).
    #[track_caller]
    pub fn var_reg(&self, v: Var) -> Option<Reg<ty::U32>> {
        self.vars.get(v.0 as usize).and_then(|i| i.reg)
    }

    /// `e` as text with the kernel's variable names (`(row * cols) + tx`), for messages.
    pub fn show(&self, e: &Expr) -> String {
        let name = |v: Var| self.var_name(v).to_string();
        e.named(&name).to_string()
    }

    /// `e` simplified with what is known of the kernel's variables ([`simplify`]).
    #[track_caller]
    pub fn simplify(&self, e: &Expr) -> Expr {
        simplify(e, self.vars.as_slice())
    }

    /// The largest number known to divide `e` ([`divisibility`]).
    #[track_caller]
    pub fn divisibility(&self, e: &Expr) -> i64 {
        divisibility(e, self.vars.as_slice())
    }

    /// Lowers a simplified expression to an operand: a constant stays an immediate, a variable is
    /// its register, anything else is computed into a fresh register.
    #[track_caller]
    pub(crate) fn lower(&mut self, e: &Expr) -> Result<Src<ty::U32>> {
        if matches!(e, Expr::Const(_) | Expr::Var(_)) {
            return self.lower_uncached(e);
        }
        let key = MemoKey::Index(e.clone());
        if let Some(r) = self.recall::<ty::U32>(&key) {
            return Ok(Src::Reg(r));
        }
        let src = self.lower_uncached(e)?;
        if let Src::Reg(r) = src {
            self.remember(key, e, r);
        }
        Ok(src)
    }

    /// A memoised register for `key`, if one is live here.
    #[track_caller]
    pub(crate) fn recall<T: ty::RegType>(&self, key: &MemoKey) -> Option<Reg<T>> {
        self.memo
            .iter()
            .rev()
            .find(|m| &m.key == key)
            .and_then(|m| m.reg.retype::<T>().ok())
    }

    /// Remembers that `reg` holds `key` (computed from `e`), unless `e` reads a variable whose
    /// register may change before the memo's region closes: a mutable scalar (assigned
    /// anywhere), or the counter of a loop whose body is not around this point (its value could
    /// be stale on a later trip). A loop counter read inside its own body is stable for the rest
    /// of the trip, and the memo, made at the body's depth or deeper, ends with the body: a row
    /// loop's `row * cols` is computed once a row, not once an access.
    #[track_caller]
    pub(crate) fn remember<T: ty::RegType>(&mut self, key: MemoKey, e: &Expr, reg: Reg<T>) {
        let depth = self.depth;
        let stable = e.vars().iter().all(|v| {
            self.vars
                .get(v.0 as usize)
                .is_some_and(|i| !i.changes || i.loop_body.is_some_and(|body| body <= depth))
        });
        if stable {
            self.memo.push(Memo {
                key,
                depth: self.depth,
                reg: reg.as_ref(),
            });
        }
    }

    #[track_caller]
    fn lower_uncached(&mut self, e: &Expr) -> Result<Src<ty::U32>> {
        let imm = |c: i64| Src::Imm(Imm::UInt(u64::from(c as u32)));
        Ok(match e {
            Expr::Const(c) => imm(*c),
            Expr::Var(v) => match self.vars.get(v.0 as usize) {
                Some(VarInfo { reg: Some(r), .. }) => Src::Reg(*r),
                Some(VarInfo {
                    facts: VarFacts { value: Some(c), .. },
                    ..
                }) => imm(*c),
                _ => {
                    return Err(self.scope_err(format!(
                        "variable `{}` has no value on the device",
                        self.var_name(*v)
                    )));
                }
            },
            Expr::Add(a, b) => self.lower_binary(a, b, |f, d, a, b| f.add(d, a, b))?,
            Expr::Sub(a, b) => self.lower_binary(a, b, |f, d, a, b| f.sub(d, a, b))?,
            Expr::Mul(a, b) => self.lower_by_const(
                (a, b),
                |f, d, a, c| f.shl(d, a, c.trailing_zeros()),
                |f, d, a, b| f.mul_lo(d, a, b),
            )?,
            Expr::Div(a, b) => self.lower_by_const(
                (a, b),
                |f, d, a, c| f.shr(d, a, c.trailing_zeros()),
                |f, d, a, b| f.div(d, a, b),
            )?,
            Expr::Rem(a, b) => self.lower_by_const(
                (a, b),
                |f, d, a, c| f.and(d, a, (c - 1) as u32),
                |f, d, a, b| f.rem(d, a, b),
            )?,
        })
    }

    /// `op(d, a, b)` into a fresh register `d`, `a` and `b` lowered first.
    fn lower_binary(
        &mut self,
        a: &Expr,
        b: &Expr,
        op: U32Op<Src<ty::U32>>,
    ) -> Result<Src<ty::U32>> {
        let (a, b) = (self.lower(a)?, self.lower(b)?);
        let d = self.f.reg::<ty::U32>();
        op(&mut self.f, d, a, b)?;
        Ok(Src::Reg(d))
    }

    /// `a * b`, `a / b` or `a % b` into a fresh register `d`: `by_power_of_two(d, a, c)` (a
    /// shift or a mask) when `b` is a constant power of two `c`, else `op(d, a, b)`.
    fn lower_by_const(
        &mut self,
        (a, b): (&Expr, &Expr),
        by_power_of_two: U32Op<i64>,
        op: U32Op<Src<ty::U32>>,
    ) -> Result<Src<ty::U32>> {
        let a = self.lower(a)?;
        let d = self.f.reg::<ty::U32>();
        match b.as_const() {
            Some(c) if c > 0 && (c as u64).is_power_of_two() => {
                by_power_of_two(&mut self.f, d, a, c)?
            }
            _ => {
                let b = self.lower(b)?;
                op(&mut self.f, d, a, b)?;
            }
        }
        Ok(Src::Reg(d))
    }

    /// Computes `e` (simplified) into a register: `mov` for a constant, the variable's own
    /// register for a variable.
    #[track_caller]
    pub fn eval(&mut self, e: impl Into<Expr>) -> Result<Reg<ty::U32>> {
        let e = self.simplify(&e.into());
        match self.lower(&e)? {
            Src::Reg(r) => Ok(r),
            Src::Imm(i) => {
                let d = self.f.reg::<ty::U32>();
                self.f.mov(d, Src::Imm(i))?;
                Ok(d)
            }
        }
    }

    /// An immutable binding, `let name = e`: a constant stays a constant (and folds into every
    /// use), anything else is computed once into a register; either way what is known of `e`
    /// (its value, its divisibility) is known of the binding.
    #[track_caller]
    pub fn let_(&mut self, name: &str, e: impl Into<Expr>) -> Result<Var> {
        let e = self.simplify(&e.into());
        let (min, max) = bounds(&e, self.vars.as_slice());
        let facts = VarFacts {
            value: e.as_const(),
            divisor: self.divisibility(&e),
            min: min.max(0),
            max,
        };
        if e.as_const().is_some() {
            return Ok(self.new_var(name, None, facts, None));
        }
        let r = match &e {
            // A binding of a variable whose register changes later is a copy of its value now.
            Expr::Var(v) if self.vars.get(v.0 as usize).is_some_and(|i| i.changes) => {
                let src = self.lower(&e)?;
                let d = self.f.reg::<ty::U32>();
                self.f.mov(d, src)?;
                d
            }
            _ => self.eval(e)?,
        };
        Ok(self.new_var(name, Some(r), facts, None))
    }

    /// A mutable index scalar (a one-element register buffer, read by name): starts at `init`;
    /// [`KernelBuilder::assign`] changes it. Nothing is assumed of its value.
    #[track_caller]
    pub fn index_var(&mut self, name: &str, init: impl Into<Expr>) -> Result<Var> {
        let r = self.f.reg::<ty::U32>();
        let v = self.reg_var(name, r);
        if let Some(info) = self.vars.last_mut() {
            info.changes = true;
            info.assignable = true;
        }
        self.assign(v, init)?;
        Ok(v)
    }

    /// `v = e` for a mutable index scalar (from [`KernelBuilder::index_var`]).
    #[track_caller]
    pub fn assign(&mut self, v: Var, e: impl Into<Expr>) -> Result<()> {
        let Some(info) = self.vars.get(v.0 as usize) else {
            return Err(self.scope_err(format!("v{} is not a variable of this kernel", v.0)));
        };
        let (Some(r), true) = (info.reg, info.assignable) else {
            return Err(self.scope_err(format!(
                "`{}` is immutable (a let, symbol, scope id or loop counter)",
                info.name
            )));
        };
        let e = self.simplify(&e.into());
        let src = self.lower(&e)?;
        self.f.mov(r, src)?;
        Ok(())
    }

    // ---- parameters -----------------------------------------------------------------------------

    /// A free symbolic extent, such as `n`: a `.param .u32` whose value the launcher reads from
    /// the shapes of the tensors that name it, checked equal across them (the caller passes
    /// nothing for it).
    #[track_caller]
    pub fn symbol(&mut self, name: &str) -> Result<Var> {
        self.symbol_with(name, ExtentFacts::NONE)
    }

    /// A symbolic extent with what is known of it (`ExtentFacts::NONE.multiple_of(4).at_most(8192)`):
    /// index arithmetic and vector widths use the facts (a row of a multiple of 4 `f32`s starts
    /// 16-byte aligned; a guard `i < cols` that the bounds decide is dropped), and the launcher
    /// refuses a launch whose value breaks them.
    ///
    /// ```
    /// use ptxkit::isa::{Target, ty};
    /// use ptxkit::kernel::{KernelBuilder, TensorOpts};
    /// use ptxkit::runtime::ExtentFacts;
    /// let mut k = KernelBuilder::new("rows", Target::Sm90a);
    /// let n = k.symbol_with("n", ExtentFacts::NONE.multiple_of(4).at_least(4))?;
    /// let x = k.tensor::<ty::F32>("x", [n], TensorOpts::default().align(16))?;
    /// let [t] = k.thread_id([32])?;
    /// let v = k.load_vec(&x, [t * 4])?; // one ld.global.v4.f32: 4 divides t * 4 and x is 16-aligned
    /// assert_eq!(v.len(), 4);
    /// # Ok::<(), ptxkit::kernel::KernelError>(())
    /// ```
    #[track_caller]
    pub fn symbol_with(&mut self, name: &str, facts: ExtentFacts) -> Result<Var> {
        self.symbol_param(name, facts, false)
    }

    /// A symbolic extent the caller passes as a `u32` scalar argument
    /// ([`Param::ExtentScalar`]), for a length no tensor's shape carries (the longest sequence
    /// of a packed batch, which sizes the grid): the same variable and facts as
    /// [`KernelBuilder::symbol_with`], checked by the launcher against the argument.
    #[track_caller]
    pub fn symbol_arg(&mut self, name: &str, facts: ExtentFacts) -> Result<Var> {
        self.symbol_param(name, facts, true)
    }

    #[track_caller]
    fn symbol_param(&mut self, name: &str, facts: ExtentFacts, passed: bool) -> Result<Var> {
        self.top_level(name)?;
        if !facts.satisfiable()
            || facts.multiple_of > u64::from(u32::MAX)
            || facts.min > u64::from(u32::MAX)
        {
            return Err(self.param_err(name, format!("no 32-bit value is {facts}")));
        }
        let p = self.f.param::<ty::U32>(name)?;
        let r = self.f.load_param(&p)?;
        self.params.push(if passed {
            Param::ExtentScalar {
                name: name.to_string(),
                facts,
            }
        } else {
            Param::SymbolicExtent {
                name: name.to_string(),
                dtype: ptx_isa::ScalarType::U32,
                facts,
            }
        });
        let max = facts
            .max
            .map_or(i64::from(u32::MAX), |m| m.min(u64::from(u32::MAX)) as i64);
        Ok(self.new_var(
            name,
            Some(r),
            VarFacts::range(facts.min as i64, Some(max), facts.multiple_of as i64),
            Some(name.to_string()),
        ))
    }

    /// A runtime scalar parameter `.param .T name`, loaded into a register.
    #[track_caller]
    pub fn scalar<T: Elem>(&mut self, name: &str) -> Result<Reg<T>> {
        self.top_level(name)?;
        let p = self.f.param::<T>(name)?;
        let r = self.f.load_param(&p)?;
        self.params.push(Param::scalar(name, T::DTYPE));
        Ok(r)
    }

    /// A TMA tensor map passed by value (`.param .align 64 .b8 name[128]`).
    #[track_caller]
    pub fn tensor_map(&mut self, name: &str) -> Result<TensorMapRef> {
        self.top_level(name)?;
        let p = self.f.param_bytes(name, 64, 128)?;
        self.params.push(Param::tensor_map(name));
        Ok(TensorMapRef::from(&p))
    }

    /// A tensor parameter's shape, simplified, and its signature extents: each a positive
    /// constant or a symbolic extent ([`KernelBuilder::symbol`]), else an error naming `name`.
    #[track_caller]
    pub(crate) fn param_shape(
        &self,
        name: &str,
        shape: impl Exprs,
    ) -> Result<(Vec<Expr>, Vec<Extent>)> {
        let shape: Vec<Expr> = shape.exprs().iter().map(|e| self.simplify(e)).collect();
        if shape.is_empty() {
            return Err(self.param_err(name, "a tensor has at least one dimension"));
        }
        let mut extents = Vec::with_capacity(shape.len());
        for e in &shape {
            extents.push(match e {
                Expr::Const(c) if *c > 0 => Extent::Fixed(*c as usize),
                Expr::Var(v) => match self.vars.get(v.0 as usize).and_then(|i| i.symbol.clone()) {
                    Some(s) => Extent::Symbol(s),
                    None => {
                        return Err(self.param_err(
                            name,
                            format!("extent `{}` is not a symbolic extent", self.var_name(*v)),
                        ));
                    }
                },
                e => {
                    return Err(self.param_err(
                        name,
                        format!(
                            "extent {} is neither a positive constant nor a symbol",
                            self.show(e)
                        ),
                    ));
                }
            });
        }
        Ok((shape, extents))
    }

    /// A tensor parameter (`match_buffer`): a global pointer with a shape whose extents are
    /// constants or symbolic extents ([`KernelBuilder::symbol`]), a dtype, an alignment, a layout
    /// and an element offset. The launcher checks dtype, shape and alignment of what is passed.
    #[track_caller]
    pub fn tensor<T: Elem>(
        &mut self,
        name: &str,
        shape: impl Exprs,
        opts: TensorOpts,
    ) -> Result<Buffer<T>> {
        self.top_level(name)?;
        let (shape, extents) = self.param_shape(name, shape)?;
        let size = T::DTYPE.bytes();
        let align = opts.align.unwrap_or(size);
        if !align.is_power_of_two() || align < size {
            return Err(self.param_err(
                name,
                format!("alignment {align} is not a power of two at least the element size {size}"),
            ));
        }
        let strides = opts
            .layout
            .strides_for(&shape)
            .map_err(|r| self.param_err(name, r.to_string()))?;
        let p = self.f.param_ptr(name, StateSpace::Global, Some(align))?;
        let generic = self.f.load_param(&p)?;
        let global = self.f.reg::<ty::U64>();
        self.f.cvta_to(StateSpace::Global, global, generic)?;
        self.params.push(Param::tensor_aligned(
            name,
            T::DTYPE,
            extents,
            align as usize,
        ));
        let elem_offset = self.simplify(&opts.elem_offset);
        Ok(Buffer {
            kernel: self.name.clone(),
            name: name.to_string(),
            storage: Storage::Global(global),
            shape,
            strides: strides.iter().map(|s| self.simplify(s)).collect(),
            elem_offset,
            align,
            swizzle: None,
            fragment: None,
        })
    }

    // ---- device printf ---------------------------------------------------------------------------

    /// `printf(format, args...)` through the driver's `vprintf` (ptx-isa's
    /// [`FunctionBuilder::printf`](ptx_isa::FunctionBuilder::printf): typed arguments checked
    /// against the format's conversions, promoted and packed as the driver expects), by the
    /// threads where `when` holds (every thread with `None`). The driver prints when the host
    /// next synchronizes.
    pub fn printf(
        &mut self,
        when: Option<ptx_isa::Pred>,
        format: &str,
        args: &[ptx_isa::builder::PrintfArg],
    ) -> Result<()> {
        let format = self.module.printf_format(format)?;
        let skip = self.f.label();
        if let Some(p) = when {
            self.f.unless(p).bra(skip)?;
        }
        self.f.printf(&format, args)?;
        self.f.place(skip)?;
        Ok(())
    }

    // ---- launch bounds and finishing ----------------------------------------------------------

    /// The second launch bound: at least `n` blocks per SM (`.minnctapersm`, PTX ISA 11.4.4). The
    /// first, the maximum threads per block (`.maxntid`), is the thread extent.
    #[track_caller]
    pub fn min_blocks_per_sm(&mut self, n: u32) -> Result<()> {
        if n == 0 {
            return Err(self.scope_err("min blocks per SM must be positive"));
        }
        self.min_blocks_per_sm = Some(n);
        Ok(())
    }

    /// Finishes the kernel: resolves and checks the launch extents, writes the launch bounds,
    /// `ret`, the dynamic shared-memory array if the pool was used, and the PTX text.
    #[track_caller]
    pub fn finish(mut self) -> Result<BuiltKernel> {
        if let Some(e) = self.deferred.take() {
            return Err(e);
        }
        if let Some(why) = self.tmem.unfinished() {
            return Err(self.error(why));
        }
        if self.cluster_arrived {
            // An arrive no wait matches: the barrier's phase would be left open at exit.
            self.f.barrier_cluster_wait(false, true)?;
        }
        let (grid, block, cluster, preferred) = self.resolve_launch()?;
        let persistent = self.persistent_grid();
        self.f.directive(Directive::MaxNtid(block))?;
        if let Some(n) = self.min_blocks_per_sm {
            self.f.directive(Directive::MinNctaPerSm(n))?;
        }
        self.f.ret()?;
        let mut module = self.module;
        let dynamic_smem_bytes = if self.pool_used {
            module.dynamic_shared(&self.pool_symbol, self.pool.base_align())?;
            self.pool.dynamic_bytes()
        } else {
            0
        };
        let static_bytes = self.pool.static_bytes();
        if self.pool.total_bytes() > u64::from(self.pool.limit()) {
            return Err(KernelError::SharedMemory {
                kernel: self.name,
                reason: format!(
                    "{} bytes (static {static_bytes}) exceed the {}-byte limit",
                    self.pool.total_bytes(),
                    self.pool.limit()
                ),
                at: super::error::CallSite::here(),
            });
        }
        module.add(self.f.finish()?)?;
        let ptx = module.to_ptx()?;
        let signature = KernelSignature::new(self.name.clone(), self.params);
        signature.validate().map_err(|e| KernelError::Param {
            kernel: self.name.clone(),
            param: String::new(),
            reason: e.to_string(),
            at: super::error::CallSite::here(),
        })?;
        Ok(BuiltKernel {
            module,
            ptx,
            signature,
            launch: LaunchSpec {
                grid,
                persistent,
                block,
                cluster,
                preferred_cluster: preferred,
                dynamic_smem_bytes,
                static_smem_bytes: static_bytes,
                min_blocks_per_sm: self.min_blocks_per_sm,
            },
            symbols: self
                .vars
                .iter()
                .enumerate()
                .filter_map(|(i, v)| v.symbol.clone().map(|s| (i as u32, s)))
                .collect(),
        })
    }
}
