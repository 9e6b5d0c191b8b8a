//! Tensors a kernel launches on: an owned [`DeviceTensor`], or caller-owned cudarc memory
//! borrowed with a shape ([`TensorRef`], [`TensorMut`]); and the launch arguments built from them.

use std::sync::Arc;

use cudarc::driver::{
    CudaSlice, CudaStream, CudaView, CudaViewMut, DevicePtr, DevicePtrMut, SyncOnDrop, sys,
};

use super::args::{ArgDesc, TensorDesc, check_covers};
use super::dtype::{Element, Scalar};
use super::error::Result;
use super::tensor_map::TensorMap;

/// A dense row-major tensor in device memory: a [`CudaSlice`] and a shape whose product is the
/// slice's length.
#[derive(Debug)]
pub struct DeviceTensor<T> {
    slice: CudaSlice<T>,
    shape: Vec<usize>,
    addr: u64,
}

/// What the argument checker sees of `mem` (a slice or a view) read with `shape`: its own
/// address (a view's is its allocation's base plus its offset), its length, its device.
///
/// The address is read on `mem`'s own stream, as any cudarc user reads it: that stream waits
/// for the memory's last write and records a read, which orders nothing the launch would not.
fn desc_of<T: Element, S: DevicePtr<T>>(
    memory: &str,
    mem: &S,
    shape: Vec<usize>,
) -> Result<TensorDesc> {
    let (addr, _record) = mem.device_ptr(mem.stream());
    let device = mem.stream().context().ordinal();
    TensorDesc::of_memory(memory, T::DTYPE, addr, mem.len(), shape, device)
}

impl<T: Element> DeviceTensor<T> {
    /// Wraps `slice` with `shape` (outermost first); the shape must cover the slice exactly.
    pub fn new(slice: CudaSlice<T>, shape: Vec<usize>) -> Result<DeviceTensor<T>> {
        let addr = desc_of("DeviceTensor", &slice, shape.clone())?.addr;
        Ok(DeviceTensor { slice, shape, addr })
    }

    /// Copies `data` to the device on `stream`.
    pub fn from_host(stream: &Arc<CudaStream>, data: &[T], shape: Vec<usize>) -> Result<Self> {
        check_covers("DeviceTensor", &shape, data.len())?;
        let slice = stream.clone_htod(data)?;
        DeviceTensor::new(slice, shape)
    }

    /// Copies the tensor back to the host (synchronising `stream`).
    pub fn to_host(&self, stream: &Arc<CudaStream>) -> Result<Vec<T>> {
        Ok(stream.clone_dtoh(&self.slice)?)
    }

    /// The shape, outermost first.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The device address of the first element.
    pub fn addr(&self) -> u64 {
        self.addr
    }

    /// The cudarc slice.
    pub fn slice(&self) -> &CudaSlice<T> {
        &self.slice
    }

    /// The cudarc slice, writable.
    pub fn slice_mut(&mut self) -> &mut CudaSlice<T> {
        &mut self.slice
    }

    /// Gives the slice back.
    pub fn into_slice(self) -> CudaSlice<T> {
        self.slice
    }

    /// What the argument checker sees of this tensor.
    pub fn desc(&self) -> TensorDesc {
        TensorDesc {
            dtype: T::DTYPE,
            shape: self.shape.clone(),
            addr: self.addr,
            device: self.slice.ordinal(),
        }
    }
}

/// Device memory seen without its element type, read by the kernel.
trait RawRead {
    fn raw_ptr<'s>(&'s self, stream: &'s CudaStream) -> (sys::CUdeviceptr, SyncOnDrop<'s>);
}

/// Device memory seen without its element type, written by the kernel.
trait RawWrite {
    fn raw_ptr_mut<'s>(&'s mut self, stream: &'s CudaStream) -> (sys::CUdeviceptr, SyncOnDrop<'s>);
}

impl<T> RawRead for CudaSlice<T> {
    fn raw_ptr<'s>(&'s self, stream: &'s CudaStream) -> (sys::CUdeviceptr, SyncOnDrop<'s>) {
        self.device_ptr(stream)
    }
}

impl<T> RawRead for CudaView<'_, T> {
    fn raw_ptr<'s>(&'s self, stream: &'s CudaStream) -> (sys::CUdeviceptr, SyncOnDrop<'s>) {
        self.device_ptr(stream)
    }
}

impl<T> RawWrite for CudaSlice<T> {
    fn raw_ptr_mut<'s>(&'s mut self, stream: &'s CudaStream) -> (sys::CUdeviceptr, SyncOnDrop<'s>) {
        self.device_ptr_mut(stream)
    }
}

impl<T> RawWrite for CudaViewMut<'_, T> {
    fn raw_ptr_mut<'s>(&'s mut self, stream: &'s CudaStream) -> (sys::CUdeviceptr, SyncOnDrop<'s>) {
        self.device_ptr_mut(stream)
    }
}

/// Device memory the kernel reads, with a shape: a borrowed [`CudaSlice`], [`CudaView`] (a
/// range of a larger allocation, at any offset) or [`DeviceTensor`]. Nothing is copied: the
/// kernel gets the memory's own address, checked against the parameter (dtype, shape, the
/// alignment of that address, device) exactly as a [`DeviceTensor`] is. The memory may belong
/// to another framework (candle, burn) and have been written on another stream: the launch makes
/// its stream wait for that write (cudarc's event tracking) and records its read.
///
/// ```no_run
/// use ptxkit::runtime::cuda::CudaContext;
/// use ptxkit::runtime::{Device, JitOptions, TensorMut, TensorRef};
///
/// // The framework's context, stream and memory.
/// let ctx = CudaContext::new(0)?;
/// let stream = ctx.new_stream()?;
/// let x = stream.clone_htod(&vec![1.0f32; 4096])?;
/// let mut y = stream.alloc_zeros::<f32>(8192)?;
///
/// // vector_add(a, b, c: f32[n]) on a = x[..1024], b = x[1024..2048], c = y[4096..5120].
/// let device = Device::from_context(ctx.clone())?;
/// let kernel = ptxkit::library::vector_add::build(device.target())?
///     .load(&device, &JitOptions::default())?;
/// let (a, b) = (x.slice(..1024), x.slice(1024..2048));
/// let mut c = y.slice_mut(4096..5120);
/// kernel.launch(&stream, &mut [
///     TensorRef::view(&a, [1024])?.into(),
///     TensorRef::view(&b, [1024])?.into(),
///     TensorMut::view(&mut c, [1024])?.into(),
/// ])?;
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct TensorRef<'a> {
    desc: TensorDesc,
    /// The cudarc memory, or `None` for memory known by its address alone
    /// ([`TensorRef::foreign`]), whose ordering is the caller's.
    mem: Option<&'a dyn RawRead>,
}

/// Device memory the kernel writes, with a shape: a mutably borrowed [`CudaSlice`],
/// [`CudaViewMut`] or [`DeviceTensor`]; checked as [`TensorRef`] is. The launch makes its stream
/// wait for earlier reads and writes of the memory and records its write, so later users on any
/// stream wait for the kernel.
///
/// Only a mutable borrow makes one, so the borrow checker keeps the caller's other views of the
/// memory out of the launch. The launcher cannot refuse a [`TensorRef`] for a parameter the
/// kernel writes: a [`KernelSignature`](super::KernelSignature) does not record which tensors a
/// kernel stores to.
pub struct TensorMut<'a> {
    desc: TensorDesc,
    /// The cudarc memory, or `None` for memory known by its address alone
    /// ([`TensorMut::foreign`]).
    mem: Option<&'a mut dyn RawWrite>,
}

impl<'a> TensorRef<'a> {
    /// All of `slice`, read as `shape` (outermost first; it must cover the slice exactly).
    pub fn slice<T: Element>(
        slice: &'a CudaSlice<T>,
        shape: impl Into<Vec<usize>>,
    ) -> Result<TensorRef<'a>> {
        Ok(TensorRef {
            desc: desc_of("CudaSlice", slice, shape.into())?,
            mem: Some(slice),
        })
    }

    /// `view` (from [`CudaSlice::slice`], at any element offset), read as `shape` (it must cover
    /// the view exactly).
    pub fn view<T: Element>(
        view: &'a CudaView<'_, T>,
        shape: impl Into<Vec<usize>>,
    ) -> Result<TensorRef<'a>> {
        Ok(TensorRef {
            desc: desc_of("CudaView", view, shape.into())?,
            mem: Some(view),
        })
    }

    /// What the argument checker sees: dtype, shape, the first element's address, device.
    pub fn desc(&self) -> &TensorDesc {
        &self.desc
    }

    /// Memory no cudarc allocation stands for, known by its description alone: another
    /// framework's tensor (torch's, through DLPack), dense row-major, `desc.addr` its first
    /// element. It is checked against the parameter as any other tensor is; the launch orders
    /// nothing for it (no cudarc events), so launch it on the stream its owner orders it on.
    ///
    /// # Safety
    ///
    /// `desc.addr` must point to `desc.shape`'s element count of `desc.dtype` on device
    /// `desc.device`, alive until the kernels launched on it have finished, and written by
    /// nothing that the launch's stream does not wait for.
    pub unsafe fn foreign(desc: TensorDesc) -> TensorRef<'static> {
        TensorRef { desc, mem: None }
    }
}

impl<'a> TensorMut<'a> {
    /// All of `slice`, written as `shape` (outermost first; it must cover the slice exactly).
    pub fn slice<T: Element>(
        slice: &'a mut CudaSlice<T>,
        shape: impl Into<Vec<usize>>,
    ) -> Result<TensorMut<'a>> {
        Ok(TensorMut {
            desc: desc_of("CudaSlice", &*slice, shape.into())?,
            mem: Some(slice),
        })
    }

    /// `view` (from [`CudaSlice::slice_mut`], at any element offset), written as `shape` (it
    /// must cover the view exactly).
    pub fn view<T: Element>(
        view: &'a mut CudaViewMut<'_, T>,
        shape: impl Into<Vec<usize>>,
    ) -> Result<TensorMut<'a>> {
        Ok(TensorMut {
            desc: desc_of("CudaViewMut", &*view, shape.into())?,
            mem: Some(view),
        })
    }

    /// What the argument checker sees: dtype, shape, the first element's address, device.
    pub fn desc(&self) -> &TensorDesc {
        &self.desc
    }

    /// Memory no cudarc allocation stands for, written by the kernel: as
    /// [`TensorRef::foreign`].
    ///
    /// # Safety
    ///
    /// As [`TensorRef::foreign`]; besides, nothing else may read or write the memory while the
    /// kernel runs but what the launch's stream orders after it.
    pub unsafe fn foreign(desc: TensorDesc) -> TensorMut<'static> {
        TensorMut { desc, mem: None }
    }

    /// The same memory, borrowed for a shorter time: to pass to one launch (an [`Arg`] takes its
    /// tensor by value) and keep this one for the next.
    pub fn reborrow(&mut self) -> TensorMut<'_> {
        TensorMut {
            desc: self.desc.clone(),
            mem: match &mut self.mem {
                Some(m) => Some(&mut **m),
                None => None,
            },
        }
    }
}

impl<'a, T: Element> From<&'a DeviceTensor<T>> for TensorRef<'a> {
    fn from(t: &'a DeviceTensor<T>) -> TensorRef<'a> {
        TensorRef {
            desc: t.desc(),
            mem: Some(&t.slice),
        }
    }
}

impl<'a, T: Element> From<&'a mut DeviceTensor<T>> for TensorMut<'a> {
    fn from(t: &'a mut DeviceTensor<T>) -> TensorMut<'a> {
        TensorMut {
            desc: t.desc(),
            mem: Some(&mut t.slice),
        }
    }
}

/// How a tensor argument is accessed; `None` is foreign memory, which the launch does not order.
enum Access<'a> {
    Read(Option<&'a dyn RawRead>),
    Write(Option<&'a mut dyn RawWrite>),
}

/// A tensor passed to a launch, read-only or written.
pub struct TensorArg<'a> {
    desc: TensorDesc,
    access: Access<'a>,
}

/// One launch argument.
pub enum Arg<'a> {
    /// A device tensor.
    Tensor(TensorArg<'a>),
    /// A scalar by value.
    Scalar(Scalar),
    /// An encoded tensor map by value.
    TensorMap(&'a TensorMap),
}

impl<'a> Arg<'a> {
    /// A tensor the kernel only reads.
    pub fn tensor<T: Element>(t: &'a DeviceTensor<T>) -> Arg<'a> {
        TensorRef::from(t).into()
    }

    /// A tensor the kernel writes (the launch orders later uses of it after the kernel).
    pub fn tensor_mut<T: Element>(t: &'a mut DeviceTensor<T>) -> Arg<'a> {
        TensorMut::from(t).into()
    }

    /// A scalar.
    pub fn scalar(s: impl Into<Scalar>) -> Arg<'a> {
        Arg::Scalar(s.into())
    }

    /// A tensor map.
    pub fn tensor_map(m: &'a TensorMap) -> Arg<'a> {
        Arg::TensorMap(m)
    }

    /// The description the argument checker works on.
    pub fn desc(&self) -> ArgDesc {
        match self {
            Arg::Tensor(t) => ArgDesc::Tensor(t.desc.clone()),
            Arg::Scalar(s) => ArgDesc::Scalar(*s),
            Arg::TensorMap(m) => ArgDesc::TensorMap(**m),
        }
    }

    /// For a tensor: its device pointer on `stream`, with the guard that records the access once
    /// dropped (after the launch). cudarc makes `stream` wait for earlier writes here.
    pub(crate) fn bind<'s>(&'s mut self, stream: &'s CudaStream) -> Option<SyncOnDrop<'s>> {
        match self {
            Arg::Tensor(TensorArg {
                access: Access::Read(Some(r)),
                ..
            }) => Some(r.raw_ptr(stream).1),
            Arg::Tensor(TensorArg {
                access: Access::Write(Some(w)),
                ..
            }) => Some(w.raw_ptr_mut(stream).1),
            _ => None,
        }
    }
}

impl<'a, T: Element> From<&'a DeviceTensor<T>> for Arg<'a> {
    fn from(t: &'a DeviceTensor<T>) -> Arg<'a> {
        Arg::tensor(t)
    }
}

impl<'a, T: Element> From<&'a mut DeviceTensor<T>> for Arg<'a> {
    fn from(t: &'a mut DeviceTensor<T>) -> Arg<'a> {
        Arg::tensor_mut(t)
    }
}

impl<'a> From<TensorRef<'a>> for Arg<'a> {
    fn from(t: TensorRef<'a>) -> Arg<'a> {
        Arg::Tensor(TensorArg {
            desc: t.desc,
            access: Access::Read(t.mem),
        })
    }
}

impl<'a> From<TensorMut<'a>> for Arg<'a> {
    fn from(t: TensorMut<'a>) -> Arg<'a> {
        Arg::Tensor(TensorArg {
            desc: t.desc,
            access: Access::Write(t.mem),
        })
    }
}

impl<'a> From<&'a TensorMap> for Arg<'a> {
    fn from(m: &'a TensorMap) -> Arg<'a> {
        Arg::TensorMap(m)
    }
}

impl From<Scalar> for Arg<'_> {
    fn from(s: Scalar) -> Self {
        Arg::Scalar(s)
    }
}

macro_rules! arg_from_scalar {
    ($($t:ty),*) => { $(impl From<$t> for Arg<'_> { fn from(x: $t) -> Self { Arg::Scalar(x.into()) } })* };
}

arg_from_scalar!(i32, i64, u32, u64, f32, f64, half::f16, half::bf16);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::{KernelSignature, Param, RuntimeError, check_and_pack};
    use ptx_isa::ScalarType;

    fn desc(addr: u64, shape: Vec<usize>) -> TensorDesc {
        TensorDesc {
            dtype: ScalarType::Bf16,
            shape,
            addr,
            device: 0,
        }
    }

    /// Foreign memory is checked as cudarc memory is: its description reaches the checker
    /// unchanged, and a misaligned or misshapen one is refused by name.
    #[test]
    fn foreign_memory_is_checked_like_any_tensor() {
        let sig = KernelSignature::new(
            "k",
            vec![
                Param::tensor_aligned("x", ScalarType::Bf16, vec!["n".into()], 16),
                Param::tensor_aligned("y", ScalarType::Bf16, vec!["n".into()], 16),
            ],
        );
        // SAFETY: descriptions only; nothing is launched.
        let (x, mut y) = unsafe {
            (
                TensorRef::foreign(desc(0x1000, vec![64])),
                TensorMut::foreign(desc(0x2000, vec![64])),
            )
        };
        let args: [Arg<'_>; 2] = [x.clone().into(), y.reborrow().into()];
        let descs: Vec<ArgDesc> = args.iter().map(Arg::desc).collect();
        assert_eq!(descs[0], ArgDesc::Tensor(desc(0x1000, vec![64])));
        let (_, symbols) = check_and_pack(&sig, &descs, 0).expect("aligned, equal shapes");
        assert_eq!(symbols["n"], 64);

        // SAFETY: as above.
        let bad = unsafe { TensorMut::foreign(desc(0x2002, vec![64])) };
        let descs = [x.clone().into(), bad.into()].map(|a: Arg<'_>| a.desc());
        let err = check_and_pack(&sig, &descs, 0).unwrap_err();
        assert!(
            matches!(&err, RuntimeError::Misaligned { param, .. } if param == "y"),
            "{err}"
        );
    }
}
