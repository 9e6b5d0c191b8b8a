//! Where a register fragment's values sit, at run time: a thread's origin in the tile
//! ([`KernelBuilder::fragment_origin`]) and predicated fills by position
//! ([`KernelBuilder::mask_fragment`]), what an attention kernel needs for its causal and edge
//! masks on `S = Q·Kᵀ`.
//!
//! Both need the fragment to be *separable*: the element a thread holds in value `v` is the
//! thread's origin plus the value's offset, `coord(t, v) = coord(t, 0) + coord(0, v)` in rows and
//! columns alike (true of the wgmma and mma fragments, PTX ISA 9.7.15.5.1.1.1), and each thread
//! mode of the layout moves along rows only or along columns only. Then a condition on `(r, c)`
//! splits into a run-time part per thread and a constant per value.

use layouts::fragment::TvLayout;
use ptx_isa::builder::CmpOp;
use ptx_isa::{Reg, ty};

use super::KernelBuilder;
use super::buffer::Buffer;
use super::error::Result;
use super::expr::Expr;

/// [`thread_modes_of`], remembered per layout ([`super::memo`]).
fn thread_modes(tv: &TvLayout) -> std::result::Result<Vec<(i64, i64, i64)>, String> {
    thread_local! {
        static MODES: ThreadModes = const { std::cell::RefCell::new(Vec::new()) };
    }
    super::memo::memoized(&MODES, tv, || thread_modes_of(tv))
}

/// The per-layout table of [`thread_modes`].
type ThreadModes =
    std::cell::RefCell<Vec<(TvLayout, std::result::Result<Vec<(i64, i64, i64)>, String>)>>;

/// The thread part of a separable fragment: per thread mode `(extent, row stride, col stride)`,
/// or why it is not separable.
fn thread_modes_of(tv: &TvLayout) -> std::result::Result<Vec<(i64, i64, i64)>, String> {
    let rows = tv.rows();
    let (threads, values) = (tv.threads(), tv.values());
    let at = |t, v| tv.coord(t, v).map_err(|e| e.to_string());
    let base = at(0, 0)?;
    for t in 0..threads {
        let o = at(t, 0)?;
        for v in 0..values {
            let (c, d) = (at(t, v)?, at(0, v)?);
            if c != (o.0 + d.0 - base.0, o.1 + d.1 - base.1) {
                return Err(format!(
                    "thread {t} value {v} is at {c:?}, not its origin {o:?} plus {d:?}"
                ));
            }
        }
    }
    let Some(thread_mode) = tv.layout().mode(0) else {
        return Err("no thread mode".into());
    };
    thread_mode
        .flat_modes()
        .into_iter()
        .map(|(extent, stride)| {
            if stride < rows || stride % rows == 0 {
                Ok(if stride < rows {
                    (extent, stride, 0)
                } else {
                    (extent, 0, stride / rows)
                })
            } else {
                Err(format!(
                    "a thread mode of stride {stride} moves along rows and columns of a \
                     {rows}-row tile"
                ))
            }
        })
        .collect()
}

/// A register fragment's layout, its registers, and a thread's origin in it.
type FragmentParts = (TvLayout, Vec<Reg<ty::F32>>, (Expr, Expr));

impl KernelBuilder {
    /// The `(row, col)` of value 0 of thread `thread` (its index in the fragment's scope, e.g.
    /// `tid % 128` for a warpgroup's) of `frag`'s fragment, as index expressions. Every other
    /// value's element is this plus a constant ([`TvLayout::coord`]`(0, v)`). A fragment that is
    /// not separable (see the module) is an error.
    #[track_caller]
    pub fn fragment_origin<T: super::Elem>(
        &mut self,
        frag: &Buffer<T>,
        thread: impl Into<Expr>,
    ) -> Result<(Expr, Expr)> {
        let Some(tv) = frag.fragment().cloned() else {
            return Err(self.buffer_err(frag.name(), "not a register fragment (alloc_fragment)"));
        };
        let modes = thread_modes(&tv).map_err(|e| self.buffer_err(frag.name(), e))?;
        let t: Expr = thread.into();
        let (mut row, mut col) = (Expr::Const(0), Expr::Const(0));
        let mut below = 1i64;
        for (extent, dr, dc) in modes {
            let digit = (t.clone() / below as u32) % extent as u32;
            if dr != 0 {
                row = row + digit.clone() * dr as u32;
            }
            if dc != 0 {
                col = col + digit * dc as u32;
            }
            below *= extent;
        }
        Ok((self.simplify(&row), self.simplify(&col)))
    }

    /// An f32 register fragment's layout and registers, and thread `thread`'s origin in it
    /// ([`KernelBuilder::fragment_origin`]): what the masks start from.
    #[track_caller]
    fn fragment_parts(
        &mut self,
        frag: &Buffer<ty::F32>,
        thread: impl Into<Expr>,
    ) -> Result<FragmentParts> {
        let (Some(tv), Some(regs)) = (frag.fragment().cloned(), frag.regs().map(<[_]>::to_vec))
        else {
            return Err(self.buffer_err(frag.name(), "not a register fragment (alloc_fragment)"));
        };
        let origin = self.fragment_origin(frag, thread)?;
        Ok((tv, regs, origin))
    }

    /// Sets to `fill` every value of the f32 fragment `frag` whose element `(r, c)` has
    /// `c - slope * r >= limit` (signed), for thread `thread` of the fragment's scope: the
    /// causal mask of an attention tile (`slope` 1, `limit` the diagonal's offset) and its edge
    /// mask (`slope` 0, `limit` the key columns that exist). The thread's part of the condition
    /// is computed once (`limit - c0 + slope * r0`, [`KernelBuilder::fragment_origin`]); each
    /// distinct value offset is one `setp.le.s32` against it and each value one predicated
    /// `mov`, so the fragment's registers stay in place (a wgmma accumulator can feed the next
    /// op without copies).
    #[track_caller]
    pub fn mask_fragment(
        &mut self,
        frag: &Buffer<ty::F32>,
        thread: impl Into<Expr>,
        slope: u32,
        limit: Reg<ty::S32>,
        fill: f32,
    ) -> Result<()> {
        let slope = i32::try_from(slope)
            .map_err(|_| self.buffer_err(frag.name(), format!("a slope of {slope}")))?;
        self.mask_fragment_linear(frag, thread, [1, -slope], limit, fill)
    }

    /// Sets to `fill` every value of the f32 fragment `frag` whose element `(r, c)` has
    /// `a * c + b * r >= limit` (signed; `[a, b]` is `coef`, `a` one of -1, 0 and 1), for
    /// thread `thread` of the fragment's scope: [`KernelBuilder::mask_fragment`]'s masks, and
    /// those of a transposed score tile (rows the keys, columns the queries, as an attention
    /// backward's `Sᵀ = K·Qᵀ`: the causal mask `r - c >= limit`, `[-1, 1]`, and the keys past
    /// the sequence `r >= limit`, `[0, 1]`). The thread's part (`limit - a * c0 - b * r0`) is
    /// computed once, then one `setp.le.s32` per distinct value offset and one predicated
    /// `mov` per value, as there.
    #[track_caller]
    pub fn mask_fragment_linear(
        &mut self,
        frag: &Buffer<ty::F32>,
        thread: impl Into<Expr>,
        coef: [i32; 2],
        limit: Reg<ty::S32>,
        fill: f32,
    ) -> Result<()> {
        let [a, b] = coef;
        if !(-1..=1).contains(&a) {
            return Err(self.buffer_err(frag.name(), format!("a column coefficient of {a}")));
        }
        let (tv, regs, (r0, c0)) = self.fragment_parts(frag, thread)?;
        let (r0, c0) = (self.eval(r0)?, self.eval(c0)?);
        // Both are below the tile's extents, far below 2^31: reading them as .s32 is exact.
        let as_s32 = |k: &KernelBuilder, r: Reg<ty::U32>| {
            r.retype::<ty::S32>()
                .map_err(|e| k.buffer_err(frag.name(), e.to_string()))
        };
        let (r0, c0) = (as_s32(self, r0)?, as_s32(self, c0)?);
        let bound = self.f.reg::<ty::S32>();
        match a {
            1 => self.f.sub(bound, limit, c0)?,
            -1 => self.f.add(bound, limit, c0)?,
            _ => self.f.mov(bound, limit)?,
        }
        if b != 0 {
            self.f.mad_lo(bound, r0, -b, bound)?;
        }
        let (base_r, base_c) = tv
            .coord(0, 0)
            .map_err(|e| self.buffer_err(frag.name(), e.to_string()))?;
        let mut preds: Vec<(i64, ptx_isa::Pred)> = Vec::new();
        for (v, reg) in regs.iter().enumerate() {
            let (r, c) = tv
                .coord(0, v as i64)
                .map_err(|e| self.buffer_err(frag.name(), e.to_string()))?;
            let d = i64::from(a) * (c - base_c) + i64::from(b) * (r - base_r);
            let p = match preds.iter().find(|(x, _)| *x == d) {
                Some(&(_, p)) => p,
                None => {
                    let p = self.f.pred();
                    // a * c + b * r >= limit  <=>  limit - a * c0 - b * r0 <= d.
                    self.f.setp::<ty::S32>(CmpOp::Le, p, bound, d as i32)?;
                    preds.push((d, p));
                    p
                }
            };
            self.f.when(p).mov(*reg, fill)?;
        }
        Ok(())
    }

    /// Sets to `fill` every value of the f32 fragment `frag` whose element `(r, c)` has
    /// `c >= limit(r)` (signed), for thread `thread` of the fragment's scope: a mask whose
    /// bound is any function of the row (decode attention's causal mask over rows that hold
    /// several query heads of one token: the bound moves by one every `group` rows).
    /// `limit` is called once per distinct row the thread holds (with the row's index
    /// expression) and each value is one `setp.le.s32` and one predicated `mov`, as in
    /// [`KernelBuilder::mask_fragment`].
    #[track_caller]
    pub fn mask_fragment_rows(
        &mut self,
        frag: &Buffer<ty::F32>,
        thread: impl Into<Expr>,
        mut limit: impl FnMut(&mut KernelBuilder, Expr) -> Result<Reg<ty::S32>>,
        fill: f32,
    ) -> Result<()> {
        let (tv, regs, (r0, c0)) = self.fragment_parts(frag, thread)?;
        let c0 = self.eval(c0)?;
        // Below the tile's extent, far below 2^31: exact as .s32.
        let c0 = c0
            .retype::<ty::S32>()
            .map_err(|e| self.buffer_err(frag.name(), e.to_string()))?;
        let (base_r, base_c) = tv
            .coord(0, 0)
            .map_err(|e| self.buffer_err(frag.name(), e.to_string()))?;
        // Per distinct row: `limit(r) - c0`, the column offset from which values are masked.
        let mut bounds: Vec<(i64, Reg<ty::S32>)> = Vec::new();
        for (v, reg) in regs.iter().enumerate() {
            let (r, c) = tv
                .coord(0, v as i64)
                .map_err(|e| self.buffer_err(frag.name(), e.to_string()))?;
            let dr = r - base_r;
            let bound = match bounds.iter().find(|(x, _)| *x == dr) {
                Some(&(_, b)) => b,
                None => {
                    let lim = limit(self, r0.clone() + dr as u32)?;
                    let b = self.f.reg::<ty::S32>();
                    self.f.sub(b, lim, c0)?;
                    bounds.push((dr, b));
                    b
                }
            };
            // c >= limit  <=>  limit - c0 <= c - c0.
            let p = self.f.pred();
            self.f
                .setp::<ty::S32>(CmpOp::Le, p, bound, (c - base_c) as i32)?;
            self.f.when(p).mov(*reg, fill)?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ptx_isa::{ScalarType, Target};

    #[test]
    fn the_wgmma_accumulator_is_separable_and_masks_by_quad_lane() {
        let mut k = KernelBuilder::new("mask", Target::Sm90a);
        let [t] = k.thread_id([128]).unwrap();
        let acc = layouts::fragment::wgmma::accumulator(64, ScalarType::Bf16).unwrap();
        let s = k.alloc_fragment::<ty::F32>("s", acc.clone()).unwrap();
        let (r, c) = k.fragment_origin(&s, t).unwrap();
        // Thread t: row 16 * (t / 32) + (t % 32) / 4, column 2 * (t % 4).
        for th in [0i64, 5, 37, 127] {
            let val = |e: &Expr| crate::kernel::expr::eval(e, &|v| (v == t).then_some(th)).unwrap();
            assert_eq!((val(&r), val(&c)), acc.coord(th, 0).unwrap());
        }
        let limit = k.reg::<ty::S32>();
        k.mov(limit, 3i32).unwrap();
        k.mask_fragment(&s, t, 1, limit, f32::NEG_INFINITY).unwrap();
        let ptx = k.finish().unwrap().ptx().to_string();
        // 32 values, each one predicated move; value offsets c - r (c in 0, 1, 8, 9 .. 57, r in
        // 0 and 8) take 18 distinct values.
        assert_eq!(ptx.matches("mov.f32").count(), 32, "{ptx}");
        assert_eq!(ptx.matches("setp.le.s32").count(), 18, "{ptx}");
    }

    /// The transposed score tile's masks: `r - c >= limit` (`[-1, 1]`) takes one `setp` per
    /// distinct `r - c` of the thread's values (18, as `c - r` for the causal mask), `r >=
    /// limit` (`[0, 1]`) one per distinct row (2); a column coefficient outside -1..=1 is
    /// refused.
    #[test]
    fn linear_masks_take_one_predicate_per_distinct_offset() {
        for (coef, setps) in [([-1, 1], 18), ([0, 1], 2)] {
            let mut k = KernelBuilder::new("mask", Target::Sm90a);
            let [t] = k.thread_id([128]).unwrap();
            let acc = layouts::fragment::wgmma::accumulator(64, ScalarType::Bf16).unwrap();
            let s = k.alloc_fragment::<ty::F32>("s", acc).unwrap();
            let limit = k.reg::<ty::S32>();
            k.mov(limit, 3i32).unwrap();
            k.mask_fragment_linear(&s, t, coef, limit, f32::NEG_INFINITY)
                .unwrap();
            let ptx = k.finish().unwrap().ptx().to_string();
            assert_eq!(ptx.matches("mov.f32").count(), 32, "{coef:?}");
            assert_eq!(ptx.matches("setp.le.s32").count(), setps, "{coef:?}");
        }
        let mut k = KernelBuilder::new("mask", Target::Sm90a);
        let [t] = k.thread_id([128]).unwrap();
        let acc = layouts::fragment::wgmma::accumulator(64, ScalarType::Bf16).unwrap();
        let s = k.alloc_fragment::<ty::F32>("s", acc).unwrap();
        let limit = k.reg::<ty::S32>();
        assert!(k.mask_fragment_linear(&s, t, [2, 0], limit, 0.0).is_err());
    }

    #[test]
    fn a_fragment_whose_thread_modes_mix_rows_and_columns_is_refused() {
        let mut k = KernelBuilder::new("mask", Target::Sm90a);
        let [t] = k.thread_id([32]).unwrap();
        // Thread t holds element t of a 4 x 8 tile stored column-major but walked in row order
        // with stride 3: not separable.
        // A 4 x 8 thread-value layout `(threads, values):(stride, stride)`.
        let tv = |name, [t, v]: [i64; 2], [dt, dv]: [i64; 2]| {
            use layouts::IntTuple;
            let pair = |a, b| IntTuple::tuple([IntTuple::Int(a), IntTuple::Int(b)]);
            let l = layouts::Layout::new(pair(t, v), pair(dt, dv));
            TvLayout::new(name, 4, 8, l.unwrap()).unwrap()
        };
        let s = k
            .alloc_fragment::<ty::F32>("s", tv("odd", [32, 1], [1, 0]))
            .unwrap();
        assert!(k.fragment_origin(&s, t).is_ok());
        let s2 = k
            .alloc_fragment::<ty::F32>("s2", tv("mixed", [8, 2], [3, 1]))
            .unwrap();
        assert!(k.fragment_origin(&s2, t).is_err());
    }
}
