//! TMA tensor maps: a description, the driver's rules checked on the host, and the encoded
//! 128-byte object a kernel takes by value.
//!
//! The rules are those of `cuTensorMapEncodeTiled` in the CUDA Driver API reference, section 6.30
//! "Tensor Map Object Management"
//! (<https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__TENSOR__MEMORY.html>). The driver
//! answers a broken rule with a bare `CUDA_ERROR_INVALID_VALUE`; [`check_tensor_map`] names the
//! rule and the value instead. The packed sub-byte types (`16U4_ALIGN8B` and friends) are not
//! offered, so their extra rules are not needed.

use std::fmt;

use cudarc::driver::sys;
use smem::SwizzleMode;

use super::error::{Result, RuntimeError};
use ptx_isa::ScalarType;

/// Element type of a tensor map (`CUtensorMapDataType`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum TensorMapDType {
    /// `CU_TENSOR_MAP_DATA_TYPE_UINT8`.
    U8,
    /// `..._UINT16`.
    U16,
    /// `..._UINT32`.
    U32,
    /// `..._INT32`.
    I32,
    /// `..._UINT64`.
    U64,
    /// `..._INT64`.
    I64,
    /// `..._FLOAT16`.
    F16,
    /// `..._FLOAT32`.
    F32,
    /// `..._FLOAT64`.
    F64,
    /// `..._BFLOAT16`.
    BF16,
    /// `..._FLOAT32_FTZ`.
    F32Ftz,
    /// `..._TFLOAT32`.
    TF32,
    /// `..._TFLOAT32_FTZ`.
    TF32Ftz,
}

impl TensorMapDType {
    /// Element size in bytes.
    pub const fn size_bytes(self) -> u64 {
        match self {
            TensorMapDType::U8 => 1,
            TensorMapDType::U16 | TensorMapDType::F16 | TensorMapDType::BF16 => 2,
            TensorMapDType::U32
            | TensorMapDType::I32
            | TensorMapDType::F32
            | TensorMapDType::F32Ftz
            | TensorMapDType::TF32
            | TensorMapDType::TF32Ftz => 4,
            TensorMapDType::U64 | TensorMapDType::I64 | TensorMapDType::F64 => 8,
        }
    }

    /// Whether it is a floating-point type (the NaN out-of-bounds fill needs one).
    pub const fn is_float(self) -> bool {
        matches!(
            self,
            TensorMapDType::F16
                | TensorMapDType::F32
                | TensorMapDType::F64
                | TensorMapDType::BF16
                | TensorMapDType::F32Ftz
                | TensorMapDType::TF32
                | TensorMapDType::TF32Ftz
        )
    }
}

/// A tensor element type the driver's tensor maps cannot describe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NoTensorMapType(pub ScalarType);

impl fmt::Display for NoTensorMapType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "no tensor-map data type holds {} elements",
            self.0.name()
        )
    }
}

impl std::error::Error for NoTensorMapType {}

/// The driver's encoding of a tensor element type (`CUtensorMapDataType`). The 8-bit floats move
/// as bytes (`UINT8`: a copy does not look at the values); `.s8`, `.s16`, the packed and sub-byte
/// types have none.
impl TryFrom<ScalarType> for TensorMapDType {
    type Error = NoTensorMapType;

    fn try_from(d: ScalarType) -> std::result::Result<TensorMapDType, NoTensorMapType> {
        Ok(match d {
            ScalarType::U8 | ScalarType::E4m3 | ScalarType::E5m2 => TensorMapDType::U8,
            ScalarType::U16 => TensorMapDType::U16,
            ScalarType::U32 => TensorMapDType::U32,
            ScalarType::S32 => TensorMapDType::I32,
            ScalarType::U64 => TensorMapDType::U64,
            ScalarType::S64 => TensorMapDType::I64,
            ScalarType::F16 => TensorMapDType::F16,
            ScalarType::Bf16 => TensorMapDType::BF16,
            ScalarType::F32 => TensorMapDType::F32,
            ScalarType::Tf32 => TensorMapDType::TF32,
            ScalarType::F64 => TensorMapDType::F64,
            other => return Err(NoTensorMapType(other)),
        })
    }
}

/// The most bytes a box's inner dimension may take under `swizzle` (the swizzle's row span;
/// no limit without a swizzle), a `cuTensorMapEncodeTiled` rule (CUDA driver API).
fn box_inner_limit(swizzle: SwizzleMode) -> Option<u64> {
    match swizzle {
        SwizzleMode::None => None,
        s => Some(u64::from(s.span_bytes())),
    }
}

/// The driver's encoding of a swizzle mode (`CUtensorMapSwizzle`).
fn driver_swizzle(swizzle: SwizzleMode) -> sys::CUtensorMapSwizzle {
    match swizzle {
        SwizzleMode::None => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_NONE,
        SwizzleMode::B32 => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_32B,
        SwizzleMode::B64 => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_64B,
        SwizzleMode::B128 => sys::CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_128B,
    }
}

/// Interleaved layout (`CUtensorMapInterleave`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Interleave {
    /// Not interleaved.
    #[default]
    None,
    /// 16-byte interleave (NC/8HWC8 with 2-byte channels).
    B16,
    /// 32-byte interleave.
    B32,
}

/// L2 promotion (`CUtensorMapL2promotion`): declared with a TMA tensor's box, so defined there.
pub use crate::signature::L2Promotion;
use crate::signature::TmaBox;

/// Out-of-bounds fill (`CUtensorMapFloatOOBfill`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum OobFill {
    /// Zeros.
    #[default]
    Zero,
    /// A NaN that requests zero from FMA (floating-point types only).
    NanRequestZeroFma,
}

/// A tiled tensor map, as `cuTensorMapEncodeTiled` takes it. Dimension 0 is the innermost
/// (contiguous) one, as in the driver API.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TensorMapDesc {
    /// Element type.
    pub dtype: TensorMapDType,
    /// Global address of the first element.
    pub global_address: u64,
    /// Extent of each dimension, innermost first (the rank is its length).
    pub global_dims: Vec<u64>,
    /// Byte stride of dimensions 1..rank (rank - 1 values; dimension 0 is contiguous).
    pub global_strides: Vec<u64>,
    /// Box (tile) extent of each dimension, innermost first.
    pub box_dims: Vec<u32>,
    /// Traversal step of each dimension (1 for a dense box).
    pub element_strides: Vec<u32>,
    /// Interleave.
    pub interleave: Interleave,
    /// Swizzle (the one the shared-memory tile is read with).
    pub swizzle: SwizzleMode,
    /// L2 promotion.
    pub l2_promotion: L2Promotion,
    /// Out-of-bounds fill.
    pub oob_fill: OobFill,
}

impl TensorMapDesc {
    /// A dense row-major tensor of shape `shape` (outermost first, as a [`super::DeviceTensor`]'s
    /// shape) at `global_address`, loaded in boxes of `tma` (its shape, element strides, swizzle
    /// and L2 promotion, as a kernel's [`TmaBox`] declares them). Dimensions are reversed into
    /// the driver's innermost-first order here.
    pub fn row_major(
        dtype: TensorMapDType,
        global_address: u64,
        shape: &[usize],
        tma: &TmaBox,
    ) -> TensorMapDesc {
        let global_dims: Vec<u64> = shape.iter().rev().map(|&d| d as u64).collect();
        let mut global_strides = Vec::with_capacity(global_dims.len().saturating_sub(1));
        let mut stride = dtype.size_bytes();
        for d in global_dims.iter().take(global_dims.len().saturating_sub(1)) {
            stride = stride.saturating_mul(*d);
            global_strides.push(stride);
        }
        TensorMapDesc {
            dtype,
            global_address,
            global_dims,
            global_strides,
            box_dims: tma.shape.iter().rev().copied().collect(),
            element_strides: tma.element_strides.iter().rev().copied().collect(),
            interleave: Interleave::None,
            swizzle: tma.swizzle,
            l2_promotion: tma.l2_promotion,
            oob_fill: OobFill::Zero,
        }
    }

    /// The same map with `fill`.
    pub fn with_oob_fill(mut self, fill: OobFill) -> TensorMapDesc {
        self.oob_fill = fill;
        self
    }

    /// The rank.
    pub fn rank(&self) -> usize {
        self.global_dims.len()
    }

    /// Bytes one box occupies in shared memory (dense box: element strides ignored).
    pub fn box_bytes(&self) -> u64 {
        self.box_dims.iter().map(|&b| b as u64).product::<u64>() * self.dtype.size_bytes()
    }
}

/// A rule of `cuTensorMapEncodeTiled` (CUDA Driver API 6.30); its text quotes or condenses the
/// reference's wording.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum TensorMapRule {
    /// "tensorRank must be non-zero and less than or equal to the maximum supported
    /// dimensionality of 5."
    Rank,
    /// "If interleave is not CU_TENSOR_MAP_INTERLEAVE_NONE, then tensorRank must additionally be
    /// greater than or equal to 3."
    InterleaveRank,
    /// Every per-dimension array has the length the rank gives it (rank - 1 strides).
    ArrayLength,
    /// "globalAddress ... must be 16 byte aligned", 32 with `CU_TENSOR_MAP_INTERLEAVE_32B`.
    GlobalAddressAlign,
    /// "globalDim ... must be non-zero and less than or equal to 2^32."
    GlobalDim,
    /// "globalStrides ... must be a multiple of 16 and less than 2^40", a multiple of 32 with
    /// `CU_TENSOR_MAP_INTERLEAVE_32B`.
    GlobalStride,
    /// "boxDim ... must be non-zero and less than or equal to 256."
    BoxDim,
    /// "When interleave is CU_TENSOR_MAP_INTERLEAVE_NONE, { boxDim\[0\] *
    /// elementSizeInBytes(tensorDataType) } must be a multiple of 16 bytes."
    BoxInnerBytesMultiple,
    /// "When interleave is CU_TENSOR_MAP_INTERLEAVE_NONE and swizzle is not
    /// CU_TENSOR_MAP_SWIZZLE_NONE, the bounding box inner dimension ... must be less than or
    /// equal to the swizzle size."
    BoxInnerBytesSwizzle,
    /// "elementStrides ... must be non-zero and less than or equal to 8."
    ElementStride,
    /// "When interleave is CU_TENSOR_MAP_INTERLEAVE_32B, swizzle must be
    /// CU_TENSOR_MAP_SWIZZLE_32B."
    InterleaveSwizzle,
    /// "CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA can only be used when tensorDataType
    /// represents a floating-point data type."
    OobFillFloat,
    /// "Tensor map objects are only supported on devices of compute capability 9.0 or higher."
    ComputeCapability,
}

impl fmt::Display for TensorMapRule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            TensorMapRule::Rank => "the rank must be 1 to 5",
            TensorMapRule::InterleaveRank => "an interleaved map must have rank 3 or more",
            TensorMapRule::ArrayLength => {
                "dims, box and element strides need rank entries, global strides rank - 1"
            }
            TensorMapRule::GlobalAddressAlign => {
                "the global address must be 16-byte aligned (32-byte with 32B interleave)"
            }
            TensorMapRule::GlobalDim => "every global dimension must be 1 to 2^32",
            TensorMapRule::GlobalStride => {
                "every global stride must be a multiple of 16 bytes (32 with 32B interleave) and \
                 less than 2^40"
            }
            TensorMapRule::BoxDim => "every box dimension must be 1 to 256",
            TensorMapRule::BoxInnerBytesMultiple => {
                "the box's inner dimension in bytes (boxDim[0] * element size) must be a multiple \
                 of 16 when not interleaved"
            }
            TensorMapRule::BoxInnerBytesSwizzle => {
                "the box's inner dimension in bytes (boxDim[0] * element size) must not exceed the \
                 swizzle span (32, 64 or 128 bytes)"
            }
            TensorMapRule::ElementStride => "every element stride must be 1 to 8",
            TensorMapRule::InterleaveSwizzle => "32B interleave requires 32B swizzle",
            TensorMapRule::OobFillFloat => {
                "the NaN out-of-bounds fill needs a floating-point element type"
            }
            TensorMapRule::ComputeCapability => "tensor maps need compute capability 9.0 or higher",
        };
        f.write_str(s)
    }
}

fn broken(rule: TensorMapRule, value: impl fmt::Display) -> RuntimeError {
    RuntimeError::TensorMapRule {
        rule,
        value: value.to_string(),
    }
}

/// Checks `desc` against every rule of `cuTensorMapEncodeTiled` that applies to the types offered
/// here, so the caller learns which rule and which value, not just `CUDA_ERROR_INVALID_VALUE`.
pub fn check_tensor_map(desc: &TensorMapDesc) -> Result<()> {
    check_lengths(desc)?;
    let rank = desc.rank();
    if desc.interleave != Interleave::None && rank < 3 {
        return Err(broken(
            TensorMapRule::InterleaveRank,
            format!("rank {rank} with interleave {:?}", desc.interleave),
        ));
    }
    check_values(desc)
}

/// The rank is 1..=5 and every array has the length the rank gives it: what the driver call
/// needs to read its arrays safely.
fn check_lengths(desc: &TensorMapDesc) -> Result<()> {
    let rank = desc.rank();
    if !(1..=5).contains(&rank) {
        return Err(broken(TensorMapRule::Rank, format!("rank {rank}")));
    }
    let lengths = [
        ("global_strides", desc.global_strides.len(), rank - 1),
        ("box_dims", desc.box_dims.len(), rank),
        ("element_strides", desc.element_strides.len(), rank),
    ];
    for (what, got, want) in lengths {
        if got != want {
            return Err(broken(
                TensorMapRule::ArrayLength,
                format!("{what} has {got} entries, rank {rank} needs {want}"),
            ));
        }
    }
    Ok(())
}

/// Holds every value of the array `field` of a descriptor to `rule`: the first that `ok` refuses
/// is the error, named `field[i] = value` and `unit`.
fn each_within(
    rule: TensorMapRule,
    field: &str,
    unit: &str,
    values: &[u64],
    ok: &dyn Fn(u64) -> bool,
) -> Result<()> {
    match values.iter().position(|&v| !ok(v)) {
        Some(i) => Err(broken(rule, format!("{field}[{i}] = {}{unit}", values[i]))),
        None => Ok(()),
    }
}

/// A rule on each element of an array of a descriptor: the rule, the array's name, the unit its
/// values are given in, the values, and whether the rule allows a value.
type ArrayRule<'a> = (
    TensorMapRule,
    &'a str,
    &'a str,
    &'a [u64],
    &'a dyn Fn(u64) -> bool,
);

fn check_values(desc: &TensorMapDesc) -> Result<()> {
    let (addr_align, stride_multiple) = if desc.interleave == Interleave::B32 {
        (32, 32)
    } else {
        (16, 16)
    };
    if desc.global_address % addr_align != 0 {
        return Err(broken(
            TensorMapRule::GlobalAddressAlign,
            format!(
                "address {:#x} (needs {addr_align}-byte alignment)",
                desc.global_address
            ),
        ));
    }
    // The rules on each element of the arrays (CUDA Driver API 6.30), in the order they are
    // checked.
    let widen = |v: &[u32]| v.iter().map(|&x| u64::from(x)).collect::<Vec<u64>>();
    let box_dims = widen(&desc.box_dims);
    let arrays: [ArrayRule; 3] = [
        (
            TensorMapRule::GlobalDim,
            "global_dims",
            "",
            &desc.global_dims,
            &|d| d != 0 && d <= 1 << 32,
        ),
        (
            TensorMapRule::GlobalStride,
            "global_strides",
            " bytes",
            &desc.global_strides,
            &|s| s % stride_multiple == 0 && s < 1 << 40,
        ),
        (TensorMapRule::BoxDim, "box_dims", "", &box_dims, &|b| {
            b != 0 && b <= 256
        }),
    ];
    for (rule, field, unit, values, ok) in arrays {
        each_within(rule, field, unit, values, ok)?;
    }
    let inner_bytes = desc.box_dims[0] as u64 * desc.dtype.size_bytes();
    if desc.interleave == Interleave::None {
        if inner_bytes % 16 != 0 {
            return Err(broken(
                TensorMapRule::BoxInnerBytesMultiple,
                format!(
                    "box_dims[0] = {} x {} bytes = {inner_bytes} bytes",
                    desc.box_dims[0],
                    desc.dtype.size_bytes()
                ),
            ));
        }
        if let Some(span) = box_inner_limit(desc.swizzle).filter(|&span| inner_bytes > span) {
            return Err(broken(
                TensorMapRule::BoxInnerBytesSwizzle,
                format!(
                    "{inner_bytes} bytes with {:?} ({span}-byte span)",
                    desc.swizzle
                ),
            ));
        }
    }
    let element_strides = widen(&desc.element_strides);
    each_within(
        TensorMapRule::ElementStride,
        "element_strides",
        "",
        &element_strides,
        &|e| e != 0 && e <= 8,
    )?;
    if desc.interleave == Interleave::B32 && desc.swizzle != SwizzleMode::B32 {
        return Err(broken(
            TensorMapRule::InterleaveSwizzle,
            format!("swizzle {:?}", desc.swizzle),
        ));
    }
    if desc.oob_fill == OobFill::NanRequestZeroFma && !desc.dtype.is_float() {
        return Err(broken(
            TensorMapRule::OobFillFloat,
            format!("dtype {:?}", desc.dtype),
        ));
    }
    Ok(())
}

/// An encoded tensor map: the opaque 128-byte, 64-byte aligned `CUtensorMap` a kernel takes as
/// `.param .align 64 .b8 name[128]`.
#[derive(Clone, Copy, PartialEq, Eq)]
#[repr(C, align(64))]
pub struct TensorMap {
    bytes: [u8; 128],
}

impl TensorMap {
    /// All zero bytes (not a valid map; for tests and as a placeholder).
    pub const fn zeroed() -> TensorMap {
        TensorMap { bytes: [0; 128] }
    }

    /// The encoded bytes.
    pub fn as_bytes(&self) -> &[u8; 128] {
        &self.bytes
    }

    /// The encoded bytes, writable (for callers that patch a map, as `tensormap.replace` does).
    pub fn as_bytes_mut(&mut self) -> &mut [u8; 128] {
        &mut self.bytes
    }

    /// Encodes `desc` through the driver's `cuTensorMapEncodeTiled`. The driver must be loaded
    /// (any [`super::Device`] proves it). The array lengths are checked here because the driver
    /// reads `rank` entries of each; the other rules are left to the caller.
    pub(crate) fn encode_tiled_unchecked(desc: &TensorMapDesc) -> Result<TensorMap> {
        check_lengths(desc)?;
        let dtype = match desc.dtype {
            TensorMapDType::U8 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_UINT8,
            TensorMapDType::U16 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_UINT16,
            TensorMapDType::U32 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_UINT32,
            TensorMapDType::I32 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_INT32,
            TensorMapDType::U64 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_UINT64,
            TensorMapDType::I64 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_INT64,
            TensorMapDType::F16 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
            TensorMapDType::F32 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
            TensorMapDType::F64 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_FLOAT64,
            TensorMapDType::BF16 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
            TensorMapDType::F32Ftz => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_FLOAT32_FTZ,
            TensorMapDType::TF32 => sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_TFLOAT32,
            TensorMapDType::TF32Ftz => {
                sys::CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_TFLOAT32_FTZ
            }
        };
        let interleave = match desc.interleave {
            Interleave::None => sys::CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
            Interleave::B16 => sys::CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_16B,
            Interleave::B32 => sys::CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_32B,
        };
        let swizzle = driver_swizzle(desc.swizzle);
        let l2 = match desc.l2_promotion {
            L2Promotion::None => sys::CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_NONE,
            L2Promotion::B64 => sys::CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_64B,
            L2Promotion::B128 => sys::CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
            L2Promotion::B256 => sys::CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
        };
        let fill = match desc.oob_fill {
            OobFill::Zero => sys::CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
            OobFill::NanRequestZeroFma => {
                sys::CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA
            }
        };
        let mut raw = sys::CUtensorMap { opaque: [0; 16] };
        // SAFETY: the arrays have the lengths the rank asks for (checked above), `raw` is a
        // 64-byte aligned `CUtensorMap`, and the driver only reads the address (no dereference).
        unsafe {
            sys::cuTensorMapEncodeTiled(
                &mut raw,
                dtype,
                desc.rank() as u32,
                desc.global_address as *mut std::ffi::c_void,
                desc.global_dims.as_ptr(),
                desc.global_strides.as_ptr(),
                desc.box_dims.as_ptr(),
                desc.element_strides.as_ptr(),
                interleave,
                swizzle,
                l2,
                fill,
            )
            .result()?;
        }
        let mut map = TensorMap::zeroed();
        for (i, word) in raw.opaque.iter().enumerate() {
            map.bytes[i * 8..i * 8 + 8].copy_from_slice(&word.to_le_bytes());
        }
        Ok(map)
    }
}

impl fmt::Debug for TensorMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TensorMap(")?;
        for b in &self.bytes[..16] {
            write!(f, "{b:02x}")?;
        }
        write!(f, "..)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// bf16 [256 rows, 128 cols], box 64 x 64 (128 bytes inner), 128B swizzle: the usual GEMM tile.
    fn good() -> TensorMapDesc {
        TensorMapDesc::row_major(
            TensorMapDType::BF16,
            0x7f00_0000_0000,
            &[256, 128],
            &TmaBox::new([64, 64]).swizzle(SwizzleMode::B128),
        )
    }

    /// f16 [4, 4, 16] at `address`, box [1, 1, 16], 32-byte interleave.
    fn interleaved(address: u64) -> TensorMapDesc {
        let mut d = TensorMapDesc::row_major(
            TensorMapDType::F16,
            address,
            &[4, 4, 16],
            &TmaBox::new([1, 1, 16]),
        );
        d.interleave = Interleave::B32;
        d
    }

    fn rule_of(desc: &TensorMapDesc) -> TensorMapRule {
        match check_tensor_map(desc) {
            Err(RuntimeError::TensorMapRule { rule, .. }) => rule,
            other => panic!("expected a rule error, got {other:?}"),
        }
    }

    #[test]
    fn the_driver_swizzle_is_smems_tma_code() {
        for mode in SwizzleMode::ALL {
            assert_eq!(driver_swizzle(mode) as u32, mode.tma_code(), "{mode:?}");
        }
        assert_eq!(box_inner_limit(SwizzleMode::None), None);
        assert_eq!(box_inner_limit(SwizzleMode::B64), Some(64));
    }

    #[test]
    fn row_major_reverses_into_innermost_first() {
        let d = good();
        assert_eq!(d.global_dims, [128, 256]);
        assert_eq!(d.global_strides, [256]);
        assert_eq!(d.box_dims, [64, 64]);
        assert_eq!(d.element_strides, [1, 1]);
        assert_eq!(d.box_bytes(), 64 * 64 * 2);
        check_tensor_map(&d).unwrap();
        let d3 =
            TensorMapDesc::row_major(TensorMapDType::F32, 0, &[4, 8, 16], &TmaBox::new([1, 2, 4]));
        assert_eq!(d3.global_dims, [16, 8, 4]);
        assert_eq!(d3.global_strides, [64, 512]);
    }

    #[test]
    fn rank_rules() {
        let mut d = good();
        d.global_dims.clear();
        assert_eq!(rule_of(&d), TensorMapRule::Rank);
        let d6 = TensorMapDesc::row_major(
            TensorMapDType::U8,
            0,
            &[1; 6],
            &TmaBox::new([16, 1, 1, 1, 1, 1]),
        );
        assert_eq!(rule_of(&d6), TensorMapRule::Rank);
        let mut d = good();
        d.interleave = Interleave::B16;
        assert_eq!(rule_of(&d), TensorMapRule::InterleaveRank);
        let mut d = good();
        d.box_dims.push(1);
        assert_eq!(rule_of(&d), TensorMapRule::ArrayLength);
        let mut d = good();
        d.global_strides.clear();
        assert_eq!(rule_of(&d), TensorMapRule::ArrayLength);
        let d5 = TensorMapDesc::row_major(
            TensorMapDType::U8,
            0,
            &[2, 2, 2, 2, 16],
            &TmaBox::new([1, 1, 1, 1, 16]),
        );
        check_tensor_map(&d5).unwrap();
    }

    #[test]
    fn global_address_alignment() {
        let mut d = good();
        d.global_address += 8;
        assert_eq!(rule_of(&d), TensorMapRule::GlobalAddressAlign);
        let msg = check_tensor_map(&d).unwrap_err().to_string();
        assert!(msg.contains("16-byte"), "{msg}");
        // 32-byte interleave needs 32-byte alignment.
        let mut d = interleaved(16);
        d.swizzle = SwizzleMode::B32;
        d.global_strides = vec![32, 128];
        assert_eq!(rule_of(&d), TensorMapRule::GlobalAddressAlign);
        d.global_address = 32;
        check_tensor_map(&d).unwrap();
    }

    /// A field of a good descriptor that `set` writes takes 1 to `max`: 0 and `max + 1` break
    /// `rule`, `max` passes.
    fn from_one_to(rule: TensorMapRule, max: u64, set: fn(&mut TensorMapDesc, u64)) {
        let mut d = good();
        for bad in [0, max + 1] {
            set(&mut d, bad);
            assert_eq!(rule_of(&d), rule, "{bad}");
        }
        set(&mut d, max);
        check_tensor_map(&d).unwrap();
    }

    #[test]
    fn global_dims_and_strides() {
        from_one_to(TensorMapRule::GlobalDim, 1 << 32, |d, v| {
            d.global_dims[1] = v
        });
        let mut d = good();
        d.global_strides[0] = 250;
        assert_eq!(rule_of(&d), TensorMapRule::GlobalStride);
        d.global_strides[0] = 1 << 40;
        assert_eq!(rule_of(&d), TensorMapRule::GlobalStride);
        d.global_strides[0] = (1 << 40) - 16;
        check_tensor_map(&d).unwrap();
        // 32B interleave: strides must be multiples of 32.
        let mut d = interleaved(0);
        d.swizzle = SwizzleMode::B32;
        d.global_strides = vec![48, 192];
        assert_eq!(rule_of(&d), TensorMapRule::GlobalStride);
    }

    #[test]
    fn box_rules() {
        from_one_to(TensorMapRule::BoxDim, 256, |d, v| d.box_dims[1] = v as u32);
        // 4 bf16 = 8 bytes: not a multiple of 16.
        let mut d = good();
        d.box_dims[0] = 4;
        assert_eq!(rule_of(&d), TensorMapRule::BoxInnerBytesMultiple);
        // 128 bf16 = 256 bytes > 128-byte swizzle span.
        let mut d = good();
        d.box_dims[0] = 128;
        assert_eq!(rule_of(&d), TensorMapRule::BoxInnerBytesSwizzle);
        let msg = check_tensor_map(&d).unwrap_err().to_string();
        assert!(msg.contains("256 bytes"), "{msg}");
        d.swizzle = SwizzleMode::None;
        check_tensor_map(&d).unwrap();
        for (sw, max) in [
            (SwizzleMode::B32, 16),
            (SwizzleMode::B64, 32),
            (SwizzleMode::B128, 64),
        ] {
            let mut d = good();
            d.swizzle = sw;
            d.box_dims[0] = max;
            check_tensor_map(&d).unwrap();
            d.box_dims[0] = max + 8;
            assert_eq!(rule_of(&d), TensorMapRule::BoxInnerBytesSwizzle, "{sw:?}");
        }
    }

    #[test]
    fn element_strides_interleave_and_fill() {
        from_one_to(TensorMapRule::ElementStride, 8, |d, v| {
            d.element_strides[1] = v as u32
        });
        let mut d = interleaved(0);
        d.global_strides = vec![32, 128];
        d.swizzle = SwizzleMode::B128;
        assert_eq!(rule_of(&d), TensorMapRule::InterleaveSwizzle);
        let d = TensorMapDesc::row_major(TensorMapDType::U8, 0, &[16], &TmaBox::new([16]))
            .with_oob_fill(OobFill::NanRequestZeroFma);
        assert_eq!(rule_of(&d), TensorMapRule::OobFillFloat);
        let l2 = TmaBox::new([64, 64])
            .swizzle(SwizzleMode::B128)
            .l2_promotion(L2Promotion::B256);
        let d = TensorMapDesc::row_major(TensorMapDType::BF16, 0x7f00_0000_0000, &[256, 128], &l2)
            .with_oob_fill(OobFill::NanRequestZeroFma);
        check_tensor_map(&d).unwrap();
    }

    #[test]
    fn dtype_mapping() {
        assert_eq!(
            TensorMapDType::try_from(ScalarType::Bf16),
            Ok(TensorMapDType::BF16)
        );
        assert_eq!(
            TensorMapDType::try_from(ScalarType::E4m3),
            Ok(TensorMapDType::U8)
        );
        assert_eq!(
            TensorMapDType::try_from(ScalarType::S8),
            Err(NoTensorMapType(ScalarType::S8))
        );
        // Every type a tensor map takes has the element size the kernel reads.
        for &t in ScalarType::ALL {
            if let Ok(m) = TensorMapDType::try_from(t) {
                assert_eq!(m.size_bytes(), u64::from(t.bytes()), "{t}");
            }
        }
        assert_eq!(TensorMapDType::TF32.size_bytes(), 4);
        assert_eq!(std::mem::align_of::<TensorMap>(), 64);
        assert_eq!(std::mem::size_of::<TensorMap>(), 128);
    }
}
