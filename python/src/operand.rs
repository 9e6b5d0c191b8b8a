//! Tensors from Python through DLPack: each operand's element type, shape, address and device,
//! checked and named before any launch, and the stream the caller's framework works on.
//!
//! A producer with the DLPack C Exchange API (torch 2.10 and later) lends a borrowed `DLTensor`
//! view and its current work stream with no Python call and no allocation; the kernels then run
//! on that stream (torch's current stream), where the data is already ready. Any other producer
//! goes through the standard `__dlpack__` protocol with the legacy default stream, which the
//! producer orders after its own work; the kernels then run on that stream.

use dlpark::ffi::{DLDataType, DLDataTypeCode, DLDevice, DLDeviceType, DLTensor};
use dlpark::python::consumer::exchange::ExchangeApi;
use dlpark::python::consumer::stream::{DlpackStream, StreamArg, cuda};
use dlpark::python::{ImportRequest, ImportedDlpack};
use ptx_isa::ScalarType;
use ptxkit::runtime::TensorDesc;
use pyo3::prelude::*;

use crate::errors::ArgumentError;

/// What one operand's DLPack description says, before it is checked.
pub struct Described<'s> {
    /// Where it lives.
    pub device: DLDevice,
    /// Its element type.
    pub dtype: DLDataType,
    /// Its shape, outermost first.
    pub shape: &'s [i64],
    /// Its strides in elements, or `None` for a dense row-major tensor.
    pub strides: Option<&'s [i64]>,
    /// The address of its first element.
    pub addr: u64,
}

/// The element type ptxkit reads a DLPack type as: the 16- and 32-bit floats, the 8-bit floats
/// (`e4m3fn`, `e5m2`), int32 and uint8; `None` for any other.
pub fn scalar_type(t: DLDataType) -> Option<ScalarType> {
    if t.lanes != 1 {
        return None;
    }
    Some(match (t.code, t.bits) {
        (DLDataTypeCode::FLOAT, 32) => ScalarType::F32,
        (DLDataTypeCode::FLOAT, 16) => ScalarType::F16,
        (DLDataTypeCode::BFLOAT, 16) => ScalarType::Bf16,
        (DLDataTypeCode::FLOAT8_E4M3FN, 8) => ScalarType::E4m3,
        (DLDataTypeCode::FLOAT8_E5M2, 8) => ScalarType::E5m2,
        (DLDataTypeCode::INT, 32) => ScalarType::S32,
        (DLDataTypeCode::UINT, 8) => ScalarType::U8,
        _ => return None,
    })
}

/// Checks one operand's element type and layout as a launch takes them: an element type ptxkit
/// knows, dense row-major strides (a dimension of extent 1 may have any stride); every refusal
/// names `name`. Returns what the launch's own checks then see, on the device [`place`] reads.
pub fn check(name: &str, d: &Described<'_>) -> Result<TensorDesc, String> {
    let dtype = scalar_type(d.dtype).ok_or_else(|| {
        format!(
            "argument `{name}`: DLPack type (code {}, {} bits, {} lanes) is not one ptxkit's \
             kernels take (float32, float16, bfloat16, float8_e4m3fn, float8_e5m2, int32, uint8)",
            d.dtype.code.0, d.dtype.bits, d.dtype.lanes
        )
    })?;
    let shape: Vec<usize> = d
        .shape
        .iter()
        .map(|&e| usize::try_from(e))
        .collect::<Result<_, _>>()
        .map_err(|_| {
            format!(
                "argument `{name}`: shape {:?} has a negative extent",
                d.shape
            )
        })?;
    if let Some(strides) = d.strides {
        let mut want = 1i64;
        for (i, (&extent, &stride)) in d.shape.iter().zip(strides).enumerate().rev() {
            if extent != 1 && stride != want {
                return Err(format!(
                    "argument `{name}`: strides {strides:?} of shape {:?} are not dense \
                     row-major (dimension {i} has stride {stride}, not {want}); pass a \
                     contiguous tensor (`.contiguous()`)",
                    d.shape
                ));
            }
            want = want.saturating_mul(extent);
        }
    }
    Ok(TensorDesc {
        dtype,
        shape,
        addr: d.addr,
        device: 0,
    })
}

/// The ordinal of the CUDA device `device` names, or a refusal naming `name`.
pub fn place(name: &str, device: DLDevice) -> Result<usize, String> {
    if device.device_type != DLDeviceType::CUDA {
        let place = match device.device_type {
            DLDeviceType::CPU => "the CPU".to_string(),
            other => format!("DLPack device type {}", other.0),
        };
        return Err(format!(
            "argument `{name}`: a tensor on {place}; ptxkit's kernels take CUDA tensors"
        ));
    }
    usize::try_from(device.device_id)
        .map_err(|_| format!("argument `{name}`: device id {}", device.device_id))
}

/// [`check`], then [`place`] kept for [`Operand::placed`].
fn checked(name: &str, d: &Described<'_>) -> Result<(TensorDesc, Result<usize, String>), String> {
    Ok((check(name, d)?, place(name, d.device)))
}

/// A checked operand: what the launch sees, the producer's stream when it lent one, and the
/// imported tensor that keeps a standard-protocol import alive for the call.
pub struct Operand {
    /// Element type, shape, address, device (once [`Operand::placed`]).
    pub desc: TensorDesc,
    /// The device ordinal, or why the operand is on none ptxkit launches on.
    place: Result<usize, String>,
    /// The producer's current work stream (C Exchange API), or `None` (legacy default stream).
    pub stream: Option<usize>,
    _owner: Option<ImportedDlpack>,
}

/// The legacy default stream as the consumer stream of a standard `__dlpack__` import: the
/// producer makes it wait for the tensor's last write.
struct LegacyDefault;

// SAFETY: the null handle is CUDA's legacy default stream, live for the process.
unsafe impl DlpackStream for LegacyDefault {
    fn as_python_arg(&self, _py: Python<'_>, _device: DLDevice) -> PyResult<StreamArg> {
        Ok(cuda(std::ptr::null_mut()))
    }
}

fn describe(t: &DLTensor) -> Described<'_> {
    let ndim = usize::try_from(t.ndim).unwrap_or(0);
    let part = |p: *mut i64| {
        if p.is_null() || ndim == 0 {
            None
        } else {
            // SAFETY: DLPack: a non-null `shape`/`strides` holds `ndim` extents, alive while the
            // producer's view or managed tensor is.
            Some(unsafe { std::slice::from_raw_parts(p, ndim) })
        }
    };
    Described {
        device: t.device,
        dtype: t.dtype,
        shape: part(t.shape).unwrap_or(&[]),
        strides: part(t.strides),
        addr: (t.data as u64).wrapping_add(t.byte_offset),
    }
}

fn refuse(msg: String) -> PyErr {
    ArgumentError::new_err(msg)
}

/// Reads and checks the operand `name` from `obj` (any DLPack producer).
pub fn import(name: &str, obj: &Bound<'_, PyAny>) -> PyResult<Operand> {
    if let Some(api) = ExchangeApi::from_object(obj.as_borrowed())? {
        let (checked, stream) = api.with_tensor_view_no_sync(obj.as_borrowed(), |t, stream| {
            (checked(name, &describe(t)), stream as usize)
        })?;
        let (desc, place) = checked.map_err(refuse)?;
        return Ok(Operand {
            desc,
            place,
            stream: Some(stream),
            _owner: None,
        });
    }
    let request = ImportRequest::new(obj.as_borrowed())?;
    // A CPU tensor is refused before the producer is asked for a CUDA stream it cannot take.
    let device = request.device().ok();
    let cuda_stream: Option<&dyn DlpackStream> = match device {
        Some(d) if d.device_type == DLDeviceType::CUDA => Some(&LegacyDefault),
        _ => None,
    };
    let imported = request.import(cuda_stream, Some(false))?;
    let (desc, place) = {
        let view = imported
            .validate()
            .map_err(|e| refuse(format!("argument `{name}`: {e}")))?;
        let described = Described {
            device: view.device(),
            dtype: view.dtype(),
            shape: view.shape(),
            strides: view.strides(),
            addr: (view.data_ptr() as u64).wrapping_add(view.byte_offset()),
        };
        checked(name, &described).map_err(refuse)?
    };
    Ok(Operand {
        desc,
        place,
        stream: None,
        _owner: Some(imported),
    })
}

impl Operand {
    /// Checks that every operand is on a CUDA device (in order, naming the first that is not)
    /// and records each one's ordinal in its description: after every operand's type and
    /// layout were checked, so a wrong type is named before a wrong place.
    pub fn placed(operands: &mut [&mut Operand]) -> PyResult<()> {
        for o in operands.iter_mut() {
            o.desc.device = o.place.clone().map_err(refuse)?;
        }
        Ok(())
    }
}
