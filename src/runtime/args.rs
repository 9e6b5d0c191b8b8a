//! Checking launch arguments against a [`KernelSignature`] and packing the parameter buffer.
//!
//! Everything here is pure: it works on [`ArgDesc`]riptions (dtype, shape, address, device of each
//! argument), so every check runs without a GPU. The launcher builds the descriptions from the live
//! arguments, calls [`check_and_pack`], and launches only when it returns `Ok`.

use std::collections::BTreeMap;
use std::ffi::c_void;

use super::dtype::Scalar;
use super::error::{Result, RuntimeError, SymbolSource};
use super::tensor_map::{TensorMap, TensorMapDType, TensorMapDesc, check_tensor_map};
#[cfg(test)]
use crate::signature::ExtentFacts;
use crate::signature::{Extent, KernelSignature, Param, SignatureError, TmaBox, shape_text};
use ptx_isa::ScalarType;

/// What the launcher knows of a device tensor argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TensorDesc {
    /// Element type.
    pub dtype: ScalarType,
    /// Shape, outermost first.
    pub shape: Vec<usize>,
    /// Device address of the first element.
    pub addr: u64,
    /// Ordinal of the device that holds it.
    pub device: usize,
}

impl TensorDesc {
    /// What the checker sees of `len` elements of `dtype` at device address `addr` on device
    /// `device`, read as a dense row-major tensor of `shape` (outermost first). The shape must
    /// cover the `len` elements exactly; `memory` names what holds them in the error
    /// (`DeviceTensor`, `CudaSlice`, `CudaView`, `CudaViewMut`).
    ///
    /// `addr` is the address of the first element, so for a view at an element offset into a
    /// larger allocation it is `base + offset * size`, not the allocation's base: the alignment
    /// check of [`check_and_pack`] sees the view's own address.
    ///
    /// ```
    /// use ptxkit::isa::ScalarType;
    /// use ptxkit::runtime::{ArgDesc, KernelSignature, Param, RuntimeError, TensorDesc, check_and_pack};
    ///
    /// // A bf16 view 3 elements into an allocation at 0x7f00_0000_0000, for a 16-byte aligned parameter.
    /// let sig = KernelSignature::new("k", vec![Param::tensor_aligned("x", ScalarType::Bf16, vec![4.into(), 8.into()], 16)]);
    /// let view = TensorDesc::of_memory("CudaView", ScalarType::Bf16, 0x7f00_0000_0000 + 3 * 2, 32, vec![4, 8], 0)?;
    /// let err = check_and_pack(&sig, &[ArgDesc::Tensor(view)], 0).unwrap_err();
    /// assert!(matches!(err, RuntimeError::Misaligned { align: 16, addr: 0x7f00_0000_0006, .. }));
    /// # Ok::<(), RuntimeError>(())
    /// ```
    pub fn of_memory(
        memory: &str,
        dtype: ScalarType,
        addr: u64,
        len: usize,
        shape: Vec<usize>,
        device: usize,
    ) -> Result<TensorDesc> {
        check_covers(memory, &shape, len)?;
        Ok(TensorDesc {
            dtype,
            shape,
            addr,
            device,
        })
    }
}

/// `Ok` when `shape` (row-major, dense) covers exactly `len` elements; else an
/// [`RuntimeError::ArgShape`] naming `memory`. A shape whose product overflows covers nothing.
pub(crate) fn check_covers(memory: &str, shape: &[usize], len: usize) -> Result<()> {
    let elements = shape.iter().try_fold(1usize, |n, &d| n.checked_mul(d));
    if elements == Some(len) {
        return Ok(());
    }
    Err(RuntimeError::ArgShape {
        param: memory.to_string(),
        expected: match elements {
            Some(n) => format!("{n} elements"),
            None => "a shape whose element count fits in usize".to_string(),
        },
        got: shape.to_vec(),
        reason: format!("the memory holds {len} elements"),
    })
}

/// A description of one launch argument.
#[derive(Debug, Clone, PartialEq)]
pub enum ArgDesc {
    /// A device tensor.
    Tensor(TensorDesc),
    /// A scalar.
    Scalar(Scalar),
    /// An encoded tensor map.
    TensorMap(TensorMap),
}

impl ArgDesc {
    /// A dense tensor of `dtype` and `shape` at device address `addr` on device `device` (what
    /// the checker sees of it).
    pub fn tensor(dtype: ScalarType, shape: &[usize], addr: u64, device: usize) -> ArgDesc {
        ArgDesc::Tensor(TensorDesc {
            dtype,
            shape: shape.to_vec(),
            addr,
            device,
        })
    }

    fn kind_text(&self) -> String {
        match self {
            ArgDesc::Tensor(t) => format!("tensor {}{:?}", t.dtype, t.shape),
            ArgDesc::Scalar(s) => format!("scalar {}", s.dtype()),
            ArgDesc::TensorMap(_) => "tensor map".to_string(),
        }
    }
}

/// The largest parameter buffer a kernel may take on Volta and later with CUDA 12.1+ (CUDA C++
/// Programming Guide, "Function Parameters": 32,764 bytes).
pub const MAX_PARAM_BYTES: usize = 32_764;

/// A 64-byte aligned chunk: the storage unit of [`ParamBuffer`], so that a tensor map inside it
/// keeps the 64-byte alignment `.param .align 64` asks for.
#[derive(Debug, Clone, Copy)]
#[repr(C, align(64))]
struct Chunk([u8; 64]);

/// The packed kernel parameters, laid out as the PTX `.param` space lays them out: each parameter
/// at the next offset aligned to its alignment (PTX ISA 5.1.6.1).
#[derive(Debug, Clone)]
pub struct ParamBuffer {
    chunks: Vec<Chunk>,
    offsets: Vec<usize>,
    sizes: Vec<usize>,
    len: usize,
    maps: Vec<(usize, TensorMapDesc)>,
}

impl ParamBuffer {
    fn with_layout(layout: &[(usize, usize)]) -> ParamBuffer {
        let mut offsets = Vec::with_capacity(layout.len());
        let mut sizes = Vec::with_capacity(layout.len());
        let mut len = 0usize;
        for &(size, align) in layout {
            let off = len.div_ceil(align) * align;
            offsets.push(off);
            sizes.push(size);
            len = off + size;
        }
        let chunks = vec![Chunk([0; 64]); len.div_ceil(64).max(1)];
        ParamBuffer {
            chunks,
            offsets,
            sizes,
            len,
            maps: Vec::new(),
        }
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        let n = self.chunks.len() * 64;
        // SAFETY: `Chunk` is `repr(C)` over `[u8; 64]` with no padding, so the chunks are `n`
        // contiguous initialised bytes.
        unsafe { std::slice::from_raw_parts_mut(self.chunks.as_mut_ptr().cast::<u8>(), n) }
    }

    /// The packed bytes (`len()` of them).
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: as in `bytes_mut`.
        let all = unsafe {
            std::slice::from_raw_parts(self.chunks.as_ptr().cast::<u8>(), self.chunks.len() * 64)
        };
        &all[..self.len]
    }

    fn write(&mut self, index: usize, value: &[u8]) {
        let off = self.offsets[index];
        debug_assert_eq!(value.len(), self.sizes[index]);
        self.bytes_mut()[off..off + value.len()].copy_from_slice(value);
    }

    /// The tensor maps of the TMA tensor parameters ([`Param::TmaTensor`]), by parameter index:
    /// built from the tensors passed and checked against the driver's rules
    /// ([`check_tensor_map`]). Their bytes in the buffer stay zero until the launcher encodes
    /// them through the driver ([`ParamBuffer::write_tensor_map`]).
    pub fn tensor_maps(&self) -> &[(usize, TensorMapDesc)] {
        &self.maps
    }

    /// Writes the encoded map of the TMA tensor parameter `index` (one of
    /// [`ParamBuffer::tensor_maps`]); `false`, writing nothing, for any other index.
    pub fn write_tensor_map(&mut self, index: usize, map: &TensorMap) -> bool {
        if !self.maps.iter().any(|(i, _)| *i == index) {
            return false;
        }
        self.write(index, map.as_bytes());
        true
    }

    /// Byte offset of each parameter.
    pub fn offsets(&self) -> &[usize] {
        &self.offsets
    }

    /// Total size in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the kernel takes no parameters.
    pub fn is_empty(&self) -> bool {
        self.offsets.is_empty()
    }

    /// The `kernelParams` array for `cuLaunchKernelEx`: one pointer per parameter, into this
    /// buffer. Valid while the buffer lives and is not moved.
    pub fn kernel_params(&mut self) -> Vec<*mut c_void> {
        let base = self.chunks.as_mut_ptr().cast::<u8>();
        // SAFETY: every offset is < len <= chunks.len() * 64.
        self.offsets
            .iter()
            .map(|&o| unsafe { base.add(o) }.cast::<c_void>())
            .collect()
    }
}

/// The values of the symbolic extents, by name, as read from the tensor arguments.
pub type Symbols = BTreeMap<String, u64>;

/// Checks `args` against `sig` for a launch on device `device` and packs the parameter buffer.
///
/// Checks, in order: the argument count; then for each argument its kind, dtype, device, rank,
/// fixed extents and alignment, and for a TMA tensor the tensor map built from it and the
/// parameter's box (the driver's rules, [`check_tensor_map`]); then that every symbolic extent has
/// one value across all tensors and fits the type of its [`Param::SymbolicExtent`]. The first
/// failure is returned. The TMA tensors' maps are left in [`ParamBuffer::tensor_maps`] for the
/// launcher to encode.
pub fn check_and_pack(
    sig: &KernelSignature,
    args: &[ArgDesc],
    device: usize,
) -> Result<(ParamBuffer, Symbols)> {
    let expected = sig.argument_count();
    if args.len() != expected {
        let params: Vec<String> = sig
            .params
            .iter()
            .filter(|p| p.takes_argument())
            .map(|p| format!("{}: {}", p.name(), p.kind_text()))
            .collect();
        return Err(RuntimeError::ArgCount {
            kernel: sig.name.clone(),
            expected,
            got: args.len(),
            params: params.join(", "),
        });
    }

    // Each caller argument, matched to its parameter index.
    let taking: Vec<usize> = sig
        .params
        .iter()
        .enumerate()
        .filter(|(_, p)| p.takes_argument())
        .map(|(i, _)| i)
        .collect();

    let mut sources: BTreeMap<String, Vec<SymbolSource>> = BTreeMap::new();
    let mut maps = Vec::new();
    for (arg, &pi) in args.iter().zip(&taking) {
        if let Some(map) = check_one(&sig.params[pi], arg, device, &mut sources)? {
            maps.push((pi, map));
        }
    }

    let mut symbols = Symbols::new();
    for (symbol, values) in &sources {
        let first = values[0].value;
        if values.iter().any(|v| v.value != first) {
            return Err(RuntimeError::SymbolMismatch {
                symbol: symbol.clone(),
                values: values.clone(),
            });
        }
        symbols.insert(symbol.clone(), first as u64);
    }

    let layout: Vec<(usize, usize)> = sig.params.iter().map(Param::layout).collect();
    let mut buf = ParamBuffer::with_layout(&layout);
    buf.maps = maps;
    if buf.len() > MAX_PARAM_BYTES {
        return Err(RuntimeError::InvalidLaunch {
            reason: format!(
                "the parameters take {} bytes; a kernel takes at most {MAX_PARAM_BYTES}",
                buf.len()
            ),
        });
    }

    let mut next_arg = args.iter();
    for (pi, param) in sig.params.iter().enumerate() {
        match param {
            Param::SymbolicExtent { name, dtype, facts } => {
                let value = *symbols
                    .get(name)
                    .ok_or_else(|| SignatureError::UnboundSymbol {
                        symbol: name.clone(),
                    })?;
                check_fact(sig, name, facts, value)?;
                let bytes = extent_bytes(name, value, *dtype)?;
                buf.write(pi, &bytes);
            }
            Param::ExtentScalar { name, facts } => {
                let value = symbols.get(name).copied().unwrap_or(0);
                check_fact(sig, name, facts, value)?;
                // Its argument (checked to be a `u32` scalar) is written below.
                if let Some(ArgDesc::Scalar(s)) = next_arg.next() {
                    buf.write(pi, &s.to_le_bytes());
                }
            }
            _ => {
                // The count check above guarantees one argument per taking parameter.
                let Some(arg) = next_arg.next() else {
                    unreachable!("argument count was checked");
                };
                match arg {
                    // The map's bytes come from the driver, written by the launcher.
                    ArgDesc::Tensor(_) if matches!(param, Param::TmaTensor { .. }) => {}
                    ArgDesc::Tensor(t) => buf.write(pi, &t.addr.to_le_bytes()),
                    ArgDesc::Scalar(s) => buf.write(pi, &s.to_le_bytes()),
                    ArgDesc::TensorMap(m) => buf.write(pi, m.as_bytes()),
                }
            }
        }
    }
    Ok((buf, symbols))
}

/// The facts symbol `name` was built assuming, held against its value at this launch.
fn check_fact(
    sig: &KernelSignature,
    name: &str,
    facts: &crate::signature::ExtentFacts,
    value: u64,
) -> Result<()> {
    facts.check(value).map_err(|fact| RuntimeError::ExtentFact {
        kernel: sig.name.clone(),
        symbol: name.to_string(),
        value,
        fact,
    })
}

fn extent_bytes(symbol: &str, value: u64, dtype: ScalarType) -> Result<Vec<u8>> {
    let overflow = || RuntimeError::ExtentOverflow {
        symbol: symbol.to_string(),
        value,
        dtype,
    };
    match dtype.int_max() {
        Some(max) if value <= max => {}
        Some(_) => return Err(overflow()),
        None => {
            return Err(RuntimeError::ArgKind {
                param: symbol.to_string(),
                expected: "integer type for a symbolic extent".to_string(),
                got: dtype.to_string(),
            });
        }
    }
    // Little-endian truncation to the declared width: the value fits, checked above.
    Ok(value.to_le_bytes()[..dtype.bytes() as usize].to_vec())
}

/// Checks one argument against its parameter; for a TMA tensor, returns the tensor map built from
/// the argument.
fn check_one(
    param: &Param,
    arg: &ArgDesc,
    device: usize,
    sources: &mut BTreeMap<String, Vec<SymbolSource>>,
) -> Result<Option<TensorMapDesc>> {
    let kind_err = || RuntimeError::ArgKind {
        param: param.name().to_string(),
        expected: param.kind_text(),
        got: arg.kind_text(),
    };
    match (param, arg) {
        (
            Param::Tensor {
                name,
                dtype,
                shape,
                align,
            },
            ArgDesc::Tensor(t),
        ) => {
            check_tensor(name, *dtype, shape, t, device, sources)?;
            let align = (*align).max(1) as u64;
            if t.addr % align != 0 {
                return Err(RuntimeError::Misaligned {
                    param: name.clone(),
                    align: align as usize,
                    addr: t.addr,
                });
            }
            Ok(None)
        }
        (
            Param::TmaTensor {
                name,
                dtype,
                shape,
                tma,
            },
            ArgDesc::Tensor(t),
        ) => {
            check_tensor(name, *dtype, shape, t, device, sources)?;
            tma_map_desc(name, *dtype, tma, t).map(Some)
        }
        (Param::Scalar { name, dtype }, ArgDesc::Scalar(s)) => {
            if s.dtype() != *dtype {
                return Err(RuntimeError::ArgDtype {
                    param: name.clone(),
                    expected: *dtype,
                    got: s.dtype(),
                });
            }
            Ok(None)
        }
        (Param::ExtentScalar { name, .. }, ArgDesc::Scalar(s)) => {
            let Scalar::U32(value) = *s else {
                return Err(RuntimeError::ArgDtype {
                    param: name.clone(),
                    expected: ScalarType::U32,
                    got: s.dtype(),
                });
            };
            // Its facts are checked with the other symbols' values (`check_and_pack`).
            sources.entry(name.clone()).or_default().push(SymbolSource {
                param: name.clone(),
                dim: 0,
                value: value as usize,
            });
            Ok(None)
        }
        (Param::TensorMap { .. }, ArgDesc::TensorMap(_)) => Ok(None),
        _ => Err(kind_err()),
    }
}

/// The dtype, device, rank and fixed extents of tensor `t` passed for parameter `name`; the
/// values its symbolic extents take are added to `sources`.
fn check_tensor(
    name: &str,
    dtype: ScalarType,
    shape: &[Extent],
    t: &TensorDesc,
    device: usize,
    sources: &mut BTreeMap<String, Vec<SymbolSource>>,
) -> Result<()> {
    if !super::dtype::host_holds(dtype, t.dtype) {
        return Err(RuntimeError::ArgDtype {
            param: name.to_string(),
            expected: dtype,
            got: t.dtype,
        });
    }
    if t.device != device {
        return Err(RuntimeError::WrongDevice {
            param: name.to_string(),
            expected: device,
            got: t.device,
        });
    }
    let shape_err = |reason: String| RuntimeError::ArgShape {
        param: name.to_string(),
        expected: shape_text(shape),
        got: t.shape.clone(),
        reason,
    };
    if t.shape.len() != shape.len() {
        return Err(shape_err(format!(
            "rank {} where the parameter has rank {}",
            t.shape.len(),
            shape.len()
        )));
    }
    for (dim, (want, &got)) in shape.iter().zip(&t.shape).enumerate() {
        match want {
            Extent::Fixed(n) if *n != got => {
                return Err(shape_err(format!("dimension {dim} is {got}, not {n}")));
            }
            Extent::Fixed(_) => {}
            Extent::Symbol(s) => sources.entry(s.clone()).or_default().push(SymbolSource {
                param: name.to_string(),
                dim,
                value: got,
            }),
        }
    }
    Ok(())
}

/// The tensor map of TMA tensor parameter `name` of element type `dtype` over tensor `t` (dense,
/// row-major): its address and shape with the parameter's box, element strides and swizzle,
/// checked against the driver's rules. The map's type is the parameter's (a tf32 parameter over
/// f32 data is a `TFLOAT32` map). A broken rule or an element type with no encoding is
/// [`RuntimeError::TmaTensor`]. The launcher builds the maps of [`Param::TmaTensor`]s with it; a
/// host launcher builds the raw map of a kernel's TMA view of a tensor it also passes
/// (`KernelBuilder::tma_view_of`) with it, then encodes it ([`super::Device::encode_tensor_map`]).
pub fn tma_map_desc(
    name: &str,
    dtype: ScalarType,
    tma: &TmaBox,
    t: &TensorDesc,
) -> Result<TensorMapDesc> {
    let dtype = TensorMapDType::try_from(dtype).map_err(|e| RuntimeError::TmaTensor {
        param: name.to_string(),
        rule: None,
        value: e.to_string(),
    })?;
    let desc = TensorMapDesc::row_major(dtype, t.addr, &t.shape, tma);
    check_tensor_map(&desc).map_err(|e| tma_error(name, e))?;
    Ok(desc)
}

/// A tensor-map rule error, named with the TMA tensor parameter it is about; other errors as
/// they are.
pub(crate) fn tma_error(param: &str, e: RuntimeError) -> RuntimeError {
    match e {
        RuntimeError::TensorMapRule { rule, value } => RuntimeError::TmaTensor {
            param: param.to_string(),
            rule: Some(rule),
            value,
        },
        e => e,
    }
}

/// The hand-written test kernels' signatures, shared with `tests/runtime_gpu.rs`.
#[cfg(test)]
#[path = "../../tests/ptx/signatures.rs"]
mod test_signatures;

#[cfg(test)]
mod tests {
    use super::test_signatures::vadd;
    use super::*;

    fn t(dtype: ScalarType, shape: &[usize], addr: u64) -> ArgDesc {
        ArgDesc::tensor(dtype, shape, addr, 0)
    }

    /// vadd's f32 tensors of lengths `n` at 0x1000, 0x2000 and 0x3000.
    fn vadd_args(n: [usize; 3]) -> [ArgDesc; 3] {
        [(n[0], 0x1000), (n[1], 0x2000), (n[2], 0x3000)].map(|(n, a)| t(ScalarType::F32, &[n], a))
    }

    /// The error of `$result` (a `check_and_pack`), asserted to match the pattern.
    macro_rules! refused {
        ($result:expr, $($pattern:tt)+) => {{
            let e = $result.unwrap_err();
            assert!(matches!(e, $($pattern)+), "{e}");
            e
        }};
    }

    #[test]
    fn good_arguments_pack_pointers_and_the_extent() {
        let (buf, symbols) = check_and_pack(&vadd(), &vadd_args([100; 3]), 0).unwrap();
        assert_eq!(symbols.get("n"), Some(&100));
        assert_eq!(buf.offsets(), &[0, 8, 16, 24]);
        assert_eq!(buf.len(), 28);
        let b = buf.bytes();
        assert_eq!(u64::from_le_bytes(b[0..8].try_into().unwrap()), 0x1000);
        assert_eq!(u64::from_le_bytes(b[16..24].try_into().unwrap()), 0x3000);
        assert_eq!(u32::from_le_bytes(b[24..28].try_into().unwrap()), 100);
    }

    #[test]
    fn wrong_count() {
        let args = [t(ScalarType::F32, &[4], 0x1000)];
        let e = refused!(
            check_and_pack(&vadd(), &args, 0),
            RuntimeError::ArgCount {
                expected: 3,
                got: 1,
                ..
            }
        );
        assert!(e.to_string().contains("a: tensor f32[n]"), "{e}");
    }

    #[test]
    fn wrong_dtype_and_kind() {
        let mut args = vadd_args([4; 3]);
        args[1] = t(ScalarType::F16, &[4], 0x2000);
        refused!(
            check_and_pack(&vadd(), &args, 0),
            RuntimeError::ArgDtype { ref param, expected: ScalarType::F32, got: ScalarType::F16 }
                if param == "b"
        );
        args[1] = ArgDesc::Scalar(Scalar::F32(1.0));
        refused!(
            check_and_pack(&vadd(), &args, 0),
            RuntimeError::ArgKind { ref param, .. } if param == "b"
        );
    }

    #[test]
    fn symbols_must_agree() {
        let e = check_and_pack(&vadd(), &vadd_args([4, 5, 4]), 0).unwrap_err();
        match &e {
            RuntimeError::SymbolMismatch { symbol, values } => {
                assert_eq!(symbol, "n");
                let got: Vec<(&str, usize)> =
                    values.iter().map(|v| (v.param.as_str(), v.value)).collect();
                assert_eq!(got, [("a", 4), ("b", 5), ("c", 4)]);
            }
            e => panic!("{e}"),
        }
        assert!(e.to_string().contains("b.shape[0] = 5"), "{e}");
    }

    #[test]
    fn rank_and_fixed_extents() {
        let sig = KernelSignature::new(
            "scale",
            vec![
                Param::tensor("x", ScalarType::F32, vec!["m".into(), 64.into()]),
                Param::scalar("s", ScalarType::F32),
            ],
        );
        let scale = |shape: &[usize], s: Scalar| {
            check_and_pack(
                &sig,
                &[t(ScalarType::F32, shape, 0x100), ArgDesc::Scalar(s)],
                0,
            )
        };
        let e = refused!(scale(&[8], Scalar::F32(2.0)), RuntimeError::ArgShape { .. });
        assert!(e.to_string().contains("rank 1"), "{e}");
        let e = scale(&[8, 32], Scalar::F32(2.0)).unwrap_err();
        assert!(e.to_string().contains("dimension 1 is 32, not 64"), "{e}");
        refused!(
            scale(&[8, 64], Scalar::F64(2.0)),
            RuntimeError::ArgDtype {
                expected: ScalarType::F32,
                got: ScalarType::F64,
                ..
            }
        );
        let (buf, _) = scale(&[8, 64], Scalar::F32(2.0)).unwrap();
        assert_eq!(&buf.bytes()[8..12], &2.0f32.to_le_bytes());
    }

    #[test]
    fn misaligned() {
        let args = [0x1004, 0x2000, 0x3004].map(|a| t(ScalarType::F32, &[4], a));
        refused!(
            check_and_pack(&vadd(), &args, 0),
            RuntimeError::Misaligned { ref param, align: 16, addr: 0x3004 } if param == "c"
        );
    }

    #[test]
    fn wrong_device() {
        let mut args = vadd_args([4; 3]);
        if let ArgDesc::Tensor(d) = &mut args[1] {
            d.device = 1;
        }
        refused!(
            check_and_pack(&vadd(), &args, 0),
            RuntimeError::WrongDevice {
                expected: 0,
                got: 1,
                ..
            }
        );
    }

    #[test]
    fn unbound_and_overflowing_symbols() {
        let sig = KernelSignature::new(
            "k",
            vec![
                Param::tensor("a", ScalarType::U8, vec!["n".into()]),
                Param::extent_u32("m"),
            ],
        );
        refused!(
            check_and_pack(&sig, &[t(ScalarType::U8, &[4], 0)], 0),
            RuntimeError::Signature(SignatureError::UnboundSymbol { ref symbol }) if symbol == "m"
        );

        let sig = KernelSignature::new(
            "k",
            vec![
                Param::tensor("a", ScalarType::U8, vec!["n".into()]),
                Param::SymbolicExtent {
                    name: "n".into(),
                    dtype: ScalarType::U16,
                    facts: ExtentFacts::NONE,
                },
            ],
        );
        refused!(
            check_and_pack(&sig, &[t(ScalarType::U8, &[70_000], 0)], 0),
            RuntimeError::ExtentOverflow { value: 70_000, .. }
        );
    }

    /// A symbol passed as a scalar argument: its value is the argument's, written in its
    /// place, held against the symbol's facts and against the same symbol in a shape; a
    /// scalar of another type is refused.
    #[test]
    fn extent_scalars_bind_their_symbol() {
        let sig = KernelSignature::new(
            "k",
            vec![
                Param::tensor("a", ScalarType::U8, vec!["m".into()]),
                Param::ExtentScalar {
                    name: "m".into(),
                    facts: ExtentFacts::NONE.at_least(2),
                },
                Param::ExtentScalar {
                    name: "longest".into(),
                    facts: ExtentFacts::NONE.at_least(1),
                },
            ],
        );
        let a = t(ScalarType::U8, &[4], 0x1000);
        let s = |v: u32| ArgDesc::Scalar(Scalar::U32(v));
        let (buf, symbols) = check_and_pack(&sig, &[a.clone(), s(4), s(300)], 0).unwrap();
        assert_eq!((symbols["m"], symbols["longest"]), (4, 300));
        assert_eq!(&buf.bytes()[8..12], &4u32.to_le_bytes());
        assert_eq!(&buf.bytes()[12..16], &300u32.to_le_bytes());
        refused!(
            check_and_pack(&sig, &[a.clone(), s(5), s(300)], 0),
            RuntimeError::SymbolMismatch { .. }
        );
        refused!(
            check_and_pack(&sig, &[a.clone(), s(4), s(0)], 0),
            RuntimeError::ExtentFact { ref symbol, value: 0, .. } if symbol == "longest"
        );
        refused!(
            check_and_pack(&sig, &[a, s(4), ArgDesc::Scalar(Scalar::I32(3))], 0),
            RuntimeError::ArgDtype {
                expected: ScalarType::U32,
                got: ScalarType::S32,
                ..
            }
        );
        assert_eq!(
            sig.params[2].kind_text(),
            "extent longest: scalar u32 (at least 1)"
        );
    }

    #[test]
    fn tensor_map_is_64_aligned_in_the_buffer() {
        let sig = KernelSignature::new(
            "tma",
            vec![
                Param::scalar("flag", ScalarType::U32),
                Param::tensor_map("map"),
                Param::tensor("out", ScalarType::U8, vec![16.into()]),
            ],
        );
        let mut map = TensorMap::zeroed();
        map.as_bytes_mut()[0] = 0xab;
        map.as_bytes_mut()[127] = 0xcd;
        let args = [
            ArgDesc::Scalar(Scalar::U32(3)),
            ArgDesc::TensorMap(map),
            t(ScalarType::U8, &[16], 0x40),
        ];
        let (mut buf, _) = check_and_pack(&sig, &args, 0).unwrap();
        assert_eq!(buf.offsets(), &[0, 64, 192]);
        assert_eq!(buf.bytes()[64], 0xab);
        assert_eq!(buf.bytes()[191], 0xcd);
        let ptrs = buf.kernel_params();
        assert_eq!(ptrs[1] as usize % 64, 0);
        assert!(!sig.params[0].kind_text().is_empty());
        let args = [
            ArgDesc::Scalar(Scalar::U32(3)),
            ArgDesc::Scalar(Scalar::U32(3)),
            t(ScalarType::U8, &[16], 0),
        ];
        refused!(
            check_and_pack(&sig, &args, 0),
            RuntimeError::ArgKind { ref param, .. } if param == "map"
        );
    }

    #[test]
    fn of_memory_covers_the_shape_exactly() {
        let d =
            TensorDesc::of_memory("CudaView", ScalarType::F32, 0x1000, 12, vec![3, 4], 2).unwrap();
        assert_eq!(
            d,
            TensorDesc {
                dtype: ScalarType::F32,
                shape: vec![3, 4],
                addr: 0x1000,
                device: 2,
            }
        );
        let e = refused!(
            TensorDesc::of_memory("CudaView", ScalarType::F32, 0x1000, 12, vec![3, 5], 0),
            RuntimeError::ArgShape { ref param, ref got, .. }
                if param == "CudaView" && got == &[3, 5]
        );
        assert!(e.to_string().contains("15 elements"), "{e}");
        assert!(e.to_string().contains("holds 12 elements"), "{e}");
        // A product past usize is refused, not wrapped around to a length that happens to match.
        let huge = vec![1usize << 40, 1 << 40];
        let e = TensorDesc::of_memory("CudaSlice", ScalarType::U8, 0, 0, huge, 0).unwrap_err();
        assert!(e.to_string().contains("fits in usize"), "{e}");
    }

    /// A view at element offset `o` into an allocation at `base` has the address `base + o *
    /// size` (cudarc's `CudaSlice::slice`); the checker sees that address. For every offset into
    /// a 256-byte aligned allocation (what `cuMemAlloc` returns), a 16-byte aligned bf16
    /// parameter takes exactly the offsets that are multiples of 8 elements, and names the
    /// view's address when it refuses one.
    #[test]
    fn a_view_is_checked_at_its_own_address() {
        let sig = KernelSignature::new(
            "k",
            vec![
                Param::tensor_aligned("x", ScalarType::Bf16, vec!["n".into()], 16),
                Param::extent_u32("n"),
            ],
        );
        let base = 0x7f3a_0000_0100u64;
        let len = 4096usize;
        for offset in 0..256usize {
            let addr = base + (offset * ScalarType::Bf16.bytes() as usize) as u64;
            let view = TensorDesc::of_memory(
                "CudaView",
                ScalarType::Bf16,
                addr,
                len - offset,
                vec![len - offset],
                0,
            )
            .unwrap();
            let got = check_and_pack(&sig, &[ArgDesc::Tensor(view)], 0);
            if offset % 8 == 0 {
                let (buf, symbols) = got.unwrap();
                assert_eq!(
                    u64::from_le_bytes(buf.bytes()[..8].try_into().unwrap()),
                    addr
                );
                assert_eq!(symbols["n"], (len - offset) as u64);
            } else {
                let e = got.unwrap_err();
                assert!(
                    matches!(e, RuntimeError::Misaligned { ref param, align: 16, addr: a } if param == "x" && a == addr),
                    "offset {offset}: {e}"
                );
            }
        }
    }

    /// A TMA tensor parameter takes the device tensor: its 128 bytes stay zero (no address is
    /// written) until the launcher writes the encoded map, which lands only at that parameter.
    #[test]
    fn a_tma_tensors_map_is_written_at_its_own_offset() {
        let sig = KernelSignature::new(
            "tma",
            vec![
                Param::scalar("flag", ScalarType::U32),
                Param::tma_tensor(
                    "x",
                    ScalarType::F32,
                    vec![64.into(), 64.into()],
                    TmaBox::new([16, 16]),
                ),
            ],
        );
        let args = [
            ArgDesc::Scalar(Scalar::U32(7)),
            t(ScalarType::F32, &[64, 64], 0x7f00_0000_0000),
        ];
        let (mut buf, _) = check_and_pack(&sig, &args, 0).unwrap();
        assert_eq!(buf.offsets(), &[0, 64]);
        assert_eq!(buf.tensor_maps().len(), 1);
        assert_eq!(buf.tensor_maps()[0].0, 1);
        assert_eq!(buf.tensor_maps()[0].1.global_address, 0x7f00_0000_0000);
        assert!(buf.bytes()[64..].iter().all(|&b| b == 0));
        let mut map = TensorMap::zeroed();
        map.as_bytes_mut().fill(0x5a);
        assert!(
            !buf.write_tensor_map(0, &map),
            "the scalar is no TMA tensor"
        );
        assert_eq!(&buf.bytes()[..4], &7u32.to_le_bytes());
        assert!(buf.write_tensor_map(1, &map));
        assert!(buf.bytes()[64..192].iter().all(|&b| b == 0x5a));
    }

    /// The tensor-core element types: f32 data passes for a tf32 TMA tensor and its map is a
    /// `TFLOAT32` one; FP8 data moves as bytes (`UINT8`) and must be declared as FP8.
    #[test]
    fn tma_maps_of_tf32_and_fp8_parameters() {
        let tma = |dtype| {
            KernelSignature::new(
                "tma",
                vec![Param::tma_tensor(
                    "x",
                    dtype,
                    vec![64.into(), 32.into()],
                    TmaBox::new([64, 32]),
                )],
            )
        };
        let addr = 0x7f00_0000_0000;
        let (buf, _) = check_and_pack(
            &tma(ScalarType::Tf32),
            &[t(ScalarType::F32, &[64, 32], addr)],
            0,
        )
        .unwrap();
        assert_eq!(buf.tensor_maps()[0].1.dtype, TensorMapDType::TF32);
        let fp8 = tma(ScalarType::E4m3);
        let (buf, _) = check_and_pack(&fp8, &[t(ScalarType::E4m3, &[64, 32], addr)], 0).unwrap();
        assert_eq!(buf.tensor_maps()[0].1.dtype, TensorMapDType::U8);
        for wrong in [ScalarType::U8, ScalarType::E5m2] {
            refused!(
                check_and_pack(&fp8, &[t(wrong, &[64, 32], addr)], 0),
                RuntimeError::ArgDtype { .. }
            );
        }
        refused!(
            check_and_pack(
                &tma(ScalarType::F32),
                &[t(ScalarType::Tf32, &[64, 32], addr)],
                0,
            ),
            RuntimeError::ArgDtype { .. }
        );
    }

    #[test]
    fn oversize_parameter_list() {
        let params = (0..300)
            .map(|i| Param::tensor_map(format!("m{i}")))
            .collect();
        let sig = KernelSignature::new("big", params);
        let args: Vec<ArgDesc> = (0..300)
            .map(|_| ArgDesc::TensorMap(TensorMap::zeroed()))
            .collect();
        refused!(
            check_and_pack(&sig, &args, 0),
            RuntimeError::InvalidLaunch { .. }
        );
    }
}
