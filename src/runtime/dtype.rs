//! Element and scalar types the launcher checks arguments against.

use std::fmt;

/// The type of a tensor element or a scalar kernel parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum DType {
    /// `.pred`-free boolean byte (`u8` on the host).
    Bool,
    /// 8-bit signed integer.
    I8,
    /// 16-bit signed integer.
    I16,
    /// 32-bit signed integer.
    I32,
    /// 64-bit signed integer.
    I64,
    /// 8-bit unsigned integer.
    U8,
    /// 16-bit unsigned integer.
    U16,
    /// 32-bit unsigned integer.
    U32,
    /// 64-bit unsigned integer.
    U64,
    /// IEEE binary16.
    F16,
    /// bfloat16.
    BF16,
    /// IEEE binary32.
    F32,
    /// IEEE binary64.
    F64,
}

impl DType {
    /// Size of one element in bytes.
    pub const fn size_bytes(self) -> usize {
        match self {
            DType::Bool | DType::I8 | DType::U8 => 1,
            DType::I16 | DType::U16 | DType::F16 | DType::BF16 => 2,
            DType::I32 | DType::U32 | DType::F32 => 4,
            DType::I64 | DType::U64 | DType::F64 => 8,
        }
    }

    /// The PTX type suffix a kernel would use for a parameter of this type (PTX ISA 5.2,
    /// "Fundamental Types"; `.b16` for the 16-bit floats, which have no `.param` type of their own).
    pub const fn ptx(self) -> &'static str {
        match self {
            DType::Bool | DType::U8 => "u8",
            DType::I8 => "s8",
            DType::I16 => "s16",
            DType::I32 => "s32",
            DType::I64 => "s64",
            DType::U16 => "u16",
            DType::U32 => "u32",
            DType::U64 => "u64",
            DType::F16 | DType::BF16 => "b16",
            DType::F32 => "f32",
            DType::F64 => "f64",
        }
    }

    /// Whether the type is an integer type (signed or unsigned).
    pub const fn is_integer(self) -> bool {
        matches!(
            self,
            DType::I8
                | DType::I16
                | DType::I32
                | DType::I64
                | DType::U8
                | DType::U16
                | DType::U32
                | DType::U64
        )
    }

    /// The largest value an integer type holds, `None` for the others.
    pub const fn integer_max(self) -> Option<u64> {
        match self {
            DType::I8 => Some(i8::MAX as u64),
            DType::I16 => Some(i16::MAX as u64),
            DType::I32 => Some(i32::MAX as u64),
            DType::I64 => Some(i64::MAX as u64),
            DType::U8 => Some(u8::MAX as u64),
            DType::U16 => Some(u16::MAX as u64),
            DType::U32 => Some(u32::MAX as u64),
            DType::U64 => Some(u64::MAX),
            _ => None,
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            DType::Bool => "bool",
            DType::I8 => "i8",
            DType::I16 => "i16",
            DType::I32 => "i32",
            DType::I64 => "i64",
            DType::U8 => "u8",
            DType::U16 => "u16",
            DType::U32 => "u32",
            DType::U64 => "u64",
            DType::F16 => "f16",
            DType::BF16 => "bf16",
            DType::F32 => "f32",
            DType::F64 => "f64",
        };
        f.write_str(s)
    }
}

/// A host type that is the element of a device tensor: ties a Rust type to its [`DType`].
pub trait Element: cudarc::driver::DeviceRepr + Copy + Send + Sync + 'static {
    /// The element's dtype.
    const DTYPE: DType;
}

macro_rules! element {
    ($($t:ty => $d:ident),* $(,)?) => {
        $(impl Element for $t { const DTYPE: DType = DType::$d; })*
    };
}

element! {
    bool => Bool, i8 => I8, i16 => I16, i32 => I32, i64 => I64,
    u8 => U8, u16 => U16, u32 => U32, u64 => U64,
    half::f16 => F16, half::bf16 => BF16, f32 => F32, f64 => F64,
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
    /// The scalar's dtype.
    pub const fn dtype(self) -> DType {
        match self {
            Scalar::I32(_) => DType::I32,
            Scalar::I64(_) => DType::I64,
            Scalar::U32(_) => DType::U32,
            Scalar::U64(_) => DType::U64,
            Scalar::F16(_) => DType::F16,
            Scalar::BF16(_) => DType::BF16,
            Scalar::F32(_) => DType::F32,
            Scalar::F64(_) => DType::F64,
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
            assert_eq!(s.to_le_bytes().len(), s.dtype().size_bytes(), "{s:?}");
        }
        assert_eq!(Scalar::F32(1.0).to_le_bytes(), 1.0f32.to_le_bytes());
    }

    #[test]
    fn element_dtypes() {
        assert_eq!(<f32 as Element>::DTYPE, DType::F32);
        assert_eq!(<half::bf16 as Element>::DTYPE, DType::BF16);
        assert_eq!(DType::BF16.size_bytes(), 2);
        assert_eq!(DType::U32.integer_max(), Some(u32::MAX as u64));
        assert_eq!(DType::F32.integer_max(), None);
    }
}
