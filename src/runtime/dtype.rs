//! Host element types and scalar values the launcher checks arguments against; their types are
//! PTX's ([`ScalarType`]), the one element-type enum.

use ptx_isa::ScalarType;

/// A host type that is the element of a device tensor: ties a Rust type to its PTX type.
pub trait Element: cudarc::driver::DeviceRepr + Copy + Send + Sync + 'static {
    /// The element's type.
    const DTYPE: ScalarType;
}

macro_rules! element {
    ($($t:ty => $d:ident),* $(,)?) => {
        $(impl Element for $t { const DTYPE: ScalarType = ScalarType::$d; })*
    };
}

// A `bool` is one byte holding 0 or 1 on the host and the device; PTX has no boolean memory
// type (`.pred` lives only in registers, PTX ISA 5.2.1), so a kernel reads it as `.u8`.
element! {
    bool => U8, i8 => S8, i16 => S16, i32 => S32, i64 => S64,
    u8 => U8, u16 => U16, u32 => U32, u64 => U64,
    half::f16 => F16, half::bf16 => Bf16, f32 => F32, f64 => F64,
}

/// Whether a tensor of host elements of type `host` may be passed for a parameter of element type
/// `param`: the same type, or `f32` data for a `tf32` parameter (PTX ISA 5.2.5.1: a `.tf32` value
/// is held in 32 bits, the `.f32` layout whose low 13 mantissa bits the tensor cores ignore).
pub(crate) fn host_holds(param: ScalarType, host: ScalarType) -> bool {
    param == host || (param, host) == (ScalarType::Tf32, ScalarType::F32)
}

/// A scalar kernel argument, passed by value.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum Scalar {
    /// An `i32`.
    I32(i32),
    /// An `i64`.
    I64(i64),
    /// A `u32`.
    U32(u32),
    /// A `u64`.
    U64(u64),
    /// An `f16`.
    F16(half::f16),
    /// A `bf16`.
    BF16(half::bf16),
    /// An `f32`.
    F32(f32),
    /// An `f64`.
    F64(f64),
}

impl Scalar {
    /// The scalar's type.
    pub const fn dtype(self) -> ScalarType {
        match self {
            Scalar::I32(_) => ScalarType::S32,
            Scalar::I64(_) => ScalarType::S64,
            Scalar::U32(_) => ScalarType::U32,
            Scalar::U64(_) => ScalarType::U64,
            Scalar::F16(_) => ScalarType::F16,
            Scalar::BF16(_) => ScalarType::Bf16,
            Scalar::F32(_) => ScalarType::F32,
            Scalar::F64(_) => ScalarType::F64,
        }
    }

    /// The value's bytes, little-endian as the device reads them.
    pub fn to_le_bytes(self) -> Vec<u8> {
        match self {
            Scalar::I32(v) => v.to_le_bytes().to_vec(),
            Scalar::I64(v) => v.to_le_bytes().to_vec(),
            Scalar::U32(v) => v.to_le_bytes().to_vec(),
            Scalar::U64(v) => v.to_le_bytes().to_vec(),
            Scalar::F16(v) => v.to_le_bytes().to_vec(),
            Scalar::BF16(v) => v.to_le_bytes().to_vec(),
            Scalar::F32(v) => v.to_le_bytes().to_vec(),
            Scalar::F64(v) => v.to_le_bytes().to_vec(),
        }
    }
}

macro_rules! scalar_from {
    ($($t:ty => $v:ident),* $(,)?) => {
        $(impl From<$t> for Scalar { fn from(x: $t) -> Scalar { Scalar::$v(x) } })*
    };
}

scalar_from! {
    i32 => I32, i64 => I64, u32 => U32, u64 => U64,
    half::f16 => F16, half::bf16 => BF16, f32 => F32, f64 => F64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scalar_bytes_have_the_dtype_size() {
        let all = [
            Scalar::I32(-1),
            Scalar::I64(-1),
            Scalar::U32(7),
            Scalar::U64(7),
            Scalar::F16(half::f16::ONE),
            Scalar::BF16(half::bf16::ONE),
            Scalar::F32(1.5),
            Scalar::F64(1.5),
        ];
        for s in all {
            assert_eq!(s.to_le_bytes().len() as u32, s.dtype().bytes(), "{s:?}");
        }
        assert_eq!(Scalar::F32(1.0).to_le_bytes(), 1.0f32.to_le_bytes());
    }

    #[test]
    fn element_dtypes() {
        assert_eq!(<f32 as Element>::DTYPE, ScalarType::F32);
        assert_eq!(<half::bf16 as Element>::DTYPE, ScalarType::Bf16);
        assert_eq!(<bool as Element>::DTYPE, ScalarType::U8);
        assert_eq!(ScalarType::Bf16.bytes(), 2);
        assert_eq!(ScalarType::U32.int_max(), Some(u32::MAX as u64));
        assert_eq!(ScalarType::S8.int_max(), Some(127));
        assert_eq!(ScalarType::F32.int_max(), None);
    }

    #[test]
    fn f32_data_passes_for_tf32() {
        assert!(host_holds(ScalarType::Tf32, ScalarType::F32));
        assert!(host_holds(ScalarType::E4m3, ScalarType::E4m3));
        assert!(!host_holds(ScalarType::F32, ScalarType::Tf32));
        assert!(!host_holds(ScalarType::E4m3, ScalarType::U8));
        assert!(!host_holds(ScalarType::E4m3, ScalarType::E5m2));
    }
}
