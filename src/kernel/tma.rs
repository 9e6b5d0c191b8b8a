//! A global tensor a kernel moves through TMA, declared once: its element type, shape (constants
//! or symbolic extents) and box ([`TmaBox`]: extents, element strides, swizzle) go into the
//! kernel's signature as a [`Param::TmaTensor`]. The caller passes the device tensor itself; the
//! launcher builds, checks and encodes the `CUtensorMap` from it, so the host never restates the
//! box, the swizzle or the element type.

use std::marker::PhantomData;

use ptx_isa::builder::TensorMapRef;
use smem::SwizzleMode;

use super::buffer::{Buffer, Elem};
use super::builder::KernelBuilder;
use super::error::Result;
use super::expr::{Expr, Exprs};
use crate::signature::{KernelSignature, Param, TmaBox};

/// A TMA tensor parameter of a kernel being built ([`KernelBuilder::tma_tensor`]): the tensor map
/// the TMA instructions name, with the shape and box it was declared with.
#[derive(Debug, Clone)]
pub struct TmaTensor<T: Elem> {
    name: String,
    map: TensorMapRef,
    shape: Vec<Expr>,
    tma: TmaBox,
    elem: PhantomData<T>,
}

impl<T: Elem> TmaTensor<T> {
    /// The parameter's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The tensor map, as `cp.async.bulk.tensor` names it (the `.param` holding it).
    pub fn map(&self) -> &TensorMapRef {
        &self.map
    }

    /// The tensor's shape, outermost first.
    pub fn shape(&self) -> &[Expr] {
        &self.shape
    }

    /// The box, its element strides and swizzle.
    pub fn tma(&self) -> &TmaBox {
        &self.tma
    }

    /// The box's extents, outermost first: the shape of the shared-memory tile one copy fills.
    pub fn box_shape(&self) -> &[u32] {
        &self.tma.shape
    }

    /// The swizzle the box lands in shared memory with.
    pub fn swizzle(&self) -> SwizzleMode {
        self.tma.swizzle
    }

    /// Bytes one copy of the box moves: the transaction count an mbarrier expects
    /// (`mbarrier.expect_tx`, PTX ISA 9.7.13.15.11).
    pub fn box_bytes(&self) -> u64 {
        self.tma.elements() * u64::from(T::DTYPE.bytes())
    }
}

impl KernelBuilder {
    /// A global tensor the kernel moves through TMA: a `.param .align 64 .b8 name[128]` holding
    /// its tensor map, and a [`Param::TmaTensor`] in the signature recording `T`, `shape`
    /// (constants or symbolic extents, outermost first) and `tma`. Launch it with the device
    /// tensor itself (`Arg::tensor`, `Arg::tensor_mut`): the launcher checks its dtype and shape
    /// as for [`KernelBuilder::tensor`], builds the map from its address and shape with `tma`,
    /// checks the driver's rules and encodes it, naming this parameter in any error.
    ///
    /// ```
    /// use ptxkit::isa::{Target, ty};
    /// use ptxkit::kernel::{Expr, KernelBuilder};
    /// use ptxkit::runtime::{ExtentFacts, TmaBox};
    /// use ptxkit::smem::SwizzleMode;
    /// let mut k = KernelBuilder::new("tma", Target::Sm90a);
    /// let rows = k.symbol_with("rows", ExtentFacts::NONE.multiple_of(32))?;
    /// let src = k.tma_tensor::<ty::F32>(
    ///     "src",
    ///     [Expr::from(rows), Expr::from(64u32)],
    ///     TmaBox::new([32, 32]).swizzle(SwizzleMode::B128),
    /// )?;
    /// assert_eq!(src.box_bytes(), 32 * 32 * 4);
    /// let tile = k.tma_box_buffer("tile", &src)?; // 32 x 32 f32 in shared memory, 128B-swizzled
    /// assert_eq!(tile.shape().len(), 2);
    /// # Ok::<(), ptxkit::kernel::KernelError>(())
    /// ```
    #[track_caller]
    pub fn tma_tensor<T: Elem>(
        &mut self,
        name: &str,
        shape: impl Exprs,
        tma: TmaBox,
    ) -> Result<TmaTensor<T>> {
        self.top_level(name)?;
        let (shape, extents) = self.param_shape(name, shape)?;
        let param = Param::tma_tensor(name, T::DTYPE, extents, tma.clone());
        // The signature's own rules (rank, box and strides of that rank), checked here so the
        // error points at this call rather than at `finish`.
        KernelSignature::new(self.name.clone(), vec![param.clone()])
            .validate()
            .map_err(|e| self.param_err(name, e.to_string()))?;
        let p = self.f.param_bytes(name, 64, 128)?;
        self.params.push(param);
        Ok(TmaTensor {
            name: name.to_string(),
            map: TensorMapRef::from(&p),
            shape,
            tma,
            elem: PhantomData,
        })
    }

    /// A TMA view of the global tensor `of` (declared with [`KernelBuilder::tensor`]), for a kernel
    /// that both addresses a tensor directly and moves boxes of it by TMA (a grouped GEMM stores
    /// whole tiles of C by TMA and the rows of a tile that ends inside C from registers). The
    /// view's tensor map is the raw parameter `name` ([`Param::TensorMap`],
    /// `.param .align 64 .b8 name[128]`): the caller encodes it over the memory it passes for `of`,
    /// with `of`'s shape and this `tma` box (`runtime::tma_map_desc` builds that map), since one
    /// tensor argument cannot fill two parameters.
    ///
    /// ```
    /// use ptxkit::isa::{Target, ty};
    /// use ptxkit::kernel::{Expr, KernelBuilder, TensorOpts};
    /// use ptxkit::runtime::TmaBox;
    /// let mut k = KernelBuilder::new("view", Target::Sm90a);
    /// let m = k.symbol("m")?;
    /// let c = k.tensor::<ty::Bf16>("c", [Expr::from(m), Expr::from(64u32)], TensorOpts::default().align(16))?;
    /// let c_map = k.tma_view_of("c_map", &c, TmaBox::new([64, 64]))?;
    /// assert_eq!(c_map.box_shape(), &[64, 64]);
    /// k.thread_id([32])?;
    /// assert_eq!(k.finish()?.signature().params.len(), 3); // m, c, c_map
    /// # Ok::<(), ptxkit::kernel::KernelError>(())
    /// ```
    #[track_caller]
    pub fn tma_view_of<T: Elem>(
        &mut self,
        name: &str,
        of: &Buffer<T>,
        tma: TmaBox,
    ) -> Result<TmaTensor<T>> {
        if tma.shape.len() != of.shape().len() {
            return Err(self.param_err(
                name,
                format!(
                    "a rank-{} box for the rank-{} tensor `{}`",
                    tma.shape.len(),
                    of.shape().len(),
                    of.name()
                ),
            ));
        }
        let map = self.tensor_map(name)?;
        Ok(TmaTensor {
            name: name.to_string(),
            map,
            shape: of.shape().to_vec(),
            tma,
            elem: PhantomData,
        })
    }

    /// `t` with its tensor map named by a generic address computed here, once (`mov` of the
    /// parameter's address and `cvta.param`, PTX ISA 9.7.9.27: a tensor map may be named by its
    /// generic address): the TMA copies written after it, in a loop say, read that register
    /// instead of converting the parameter's address at each copy.
    ///
    /// ```
    /// use ptxkit::isa::{Target, ty};
    /// use ptxkit::kernel::{Expr, KernelBuilder};
    /// use ptxkit::runtime::TmaBox;
    /// let mut k = KernelBuilder::new("tma", Target::Sm90a);
    /// let src = k.tma_tensor::<ty::F32>("src", [Expr::from(64u32), Expr::from(64u32)], TmaBox::new([32, 32]))?;
    /// let here = k.tma_generic(&src)?;
    /// assert_eq!(here.box_shape(), src.box_shape());
    /// assert_ne!(here.map(), src.map()); // a register now, not the parameter
    /// # Ok::<(), ptxkit::kernel::KernelError>(())
    /// ```
    #[track_caller]
    pub fn tma_generic<T: Elem>(&mut self, t: &TmaTensor<T>) -> Result<TmaTensor<T>> {
        let addr = self.f.tensor_map_address(&t.map)?;
        Ok(TmaTensor {
            map: TensorMapRef::Generic(addr),
            ..t.clone()
        })
    }

    /// A shared-memory buffer the shape of `t`'s box, aligned and swizzled as its swizzle asks
    /// (1024 bytes for the 128-byte swizzle): the destination of a TMA load of `t` and the
    /// source of a TMA store, read and written through the swizzle.
    #[track_caller]
    pub fn tma_box_buffer<T: Elem>(&mut self, name: &str, t: &TmaTensor<T>) -> Result<Buffer<T>> {
        let swizzle = t.swizzle();
        // TMA writes shared memory at 128-byte aligned addresses at the least (CUDA C++
        // Programming Guide, "Tensor Memory Access"); a swizzled box needs its pattern's period.
        let buf = self.pool_alloc::<T>(name, t.box_shape(), swizzle.alignment().max(128))?;
        if swizzle == SwizzleMode::None {
            return Ok(buf);
        }
        buf.swizzled(swizzle)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::KernelError;
    use ptx_isa::{Target, ty};

    #[test]
    fn the_signature_records_the_box_and_errors_name_the_parameter() {
        let mut k = KernelBuilder::new("t", Target::Sm90a);
        let n = k.symbol("n").unwrap();
        let tma = TmaBox::new([64, 64]).swizzle(SwizzleMode::B128);
        let a = k
            .tma_tensor::<ty::Bf16>("a", [n.into(), Expr::from(128u32)], tma.clone())
            .unwrap();
        assert_eq!(a.box_bytes(), 64 * 64 * 2);
        assert_eq!(a.box_shape(), [64, 64]);
        assert_eq!(
            k.params.last(),
            Some(&Param::tma_tensor(
                "a",
                ptx_isa::ScalarType::Bf16,
                vec!["n".into(), 128.into()],
                tma
            ))
        );
        let e = k
            .tma_tensor::<ty::F32>("b", [n], TmaBox::new([32, 32]))
            .unwrap_err();
        assert!(
            matches!(&e, KernelError::Param { param, .. } if param == "b"),
            "{e}"
        );
        assert!(
            e.to_string().contains("rank 1 has a 2-dimensional box"),
            "{e}"
        );
        let buf = k.tma_box_buffer("tile", &a).unwrap();
        assert_eq!(buf.align(), 1024);
    }
}
