//! Device tensors: a cudarc slice with a shape, and the launch arguments built from them.

use std::sync::Arc;

use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut, SyncOnDrop, sys};

use super::args::{ArgDesc, TensorDesc};
use super::dtype::{Element, Scalar};
use super::error::{Result, RuntimeError};
use super::tensor_map::TensorMap;

/// A dense row-major tensor in device memory: a [`CudaSlice`] and a shape whose product is the
/// slice's length.
#[derive(Debug)]
pub struct DeviceTensor<T> {
    slice: CudaSlice<T>,
    shape: Vec<usize>,
    addr: u64,
}

fn shape_len_error(shape: &[usize], len: usize) -> RuntimeError {
    RuntimeError::ArgShape {
        param: "DeviceTensor".to_string(),
        expected: format!("{} elements", shape.iter().product::<usize>()),
        got: shape.to_vec(),
        reason: format!("the slice holds {len} elements"),
    }
}

impl<T: Element> DeviceTensor<T> {
    /// Wraps `slice` with `shape` (outermost first); the shape must cover the slice exactly.
    pub fn new(slice: CudaSlice<T>, shape: Vec<usize>) -> Result<DeviceTensor<T>> {
        if shape.iter().product::<usize>() != slice.len() {
            return Err(shape_len_error(&shape, slice.len()));
        }
        // Reading the address on the slice's own stream orders nothing new.
        let addr = {
            let (ptr, _sync) = slice.device_ptr(slice.stream());
            ptr
        };
        Ok(DeviceTensor { slice, shape, addr })
    }

    /// Copies `data` to the device on `stream`.
    pub fn from_host(stream: &Arc<CudaStream>, data: &[T], shape: Vec<usize>) -> Result<Self> {
        if shape.iter().product::<usize>() != data.len() {
            return Err(shape_len_error(&shape, data.len()));
        }
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

/// A cudarc slice seen without its element type, read-only.
trait RawRead {
    fn raw_ptr<'s>(&'s self, stream: &'s CudaStream) -> (sys::CUdeviceptr, SyncOnDrop<'s>);
}

/// A cudarc slice seen without its element type, written by the kernel.
trait RawWrite {
    fn raw_ptr_mut<'s>(&'s mut self, stream: &'s CudaStream) -> (sys::CUdeviceptr, SyncOnDrop<'s>);
}

impl<T> RawRead for CudaSlice<T> {
    fn raw_ptr<'s>(&'s self, stream: &'s CudaStream) -> (sys::CUdeviceptr, SyncOnDrop<'s>) {
        self.device_ptr(stream)
    }
}

impl<T> RawWrite for CudaSlice<T> {
    fn raw_ptr_mut<'s>(&'s mut self, stream: &'s CudaStream) -> (sys::CUdeviceptr, SyncOnDrop<'s>) {
        self.device_ptr_mut(stream)
    }
}

enum Access<'a> {
    Read(&'a dyn RawRead),
    Write(&'a mut dyn RawWrite),
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
        Arg::Tensor(TensorArg {
            desc: t.desc(),
            access: Access::Read(&t.slice),
        })
    }

    /// A tensor the kernel writes (the launch orders later uses of it after the kernel).
    pub fn tensor_mut<T: Element>(t: &'a mut DeviceTensor<T>) -> Arg<'a> {
        let desc = t.desc();
        Arg::Tensor(TensorArg {
            desc,
            access: Access::Write(&mut t.slice),
        })
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
                access: Access::Read(r),
                ..
            }) => Some(r.raw_ptr(stream).1),
            Arg::Tensor(TensorArg {
                access: Access::Write(w),
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
