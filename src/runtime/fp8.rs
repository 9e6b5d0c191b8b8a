//! The 8-bit floats as host elements: [`E4m3`] and [`E5m2`], one byte each, the formats of the OCP
//! 8-bit Floating Point Specification (OFP8, rev. 1.0) that PTX names `.e4m3` and `.e5m2`
//! (PTX ISA 5.2.5.1 "Alternate Floating-Point Data Formats"). Uploaded as they are, they are the
//! bytes a kernel tensor of `ty::E4m3`/`ty::E5m2` reads.
//!
//! | format | bias | max normal | min normal | min subnormal | infinity | NaN |
//! | --- | --- | --- | --- | --- | --- | --- |
//! | e4m3 (OCP `E4M3FN`) | 7 | 448 (`0x7E`) | 2^-6 | 2^-9 | none | `S.1111.111` |
//! | e5m2 | 15 | 57344 (`0x7B`) | 2^-14 | 2^-16 | `S.11111.00` | `S.11111.{01,10,11}` |
//!
//! `from_f32` rounds to nearest, ties to even, and saturates as PTX's `cvt.rn.satfinite` does
//! (PTX ISA 9.7.9.21 "cvt", the OFP8 saturation mode): a finite value beyond the largest normal,
//! or an infinity, becomes the largest normal of its sign; NaN stays NaN.

use ptx_isa::ScalarType;

use super::dtype::Element;

/// One 8-bit format's fields: exponent and mantissa widths, exponent bias, the largest finite
/// encoding (sign clear) and the canonical NaN (sign clear).
struct Format {
    man: u32,
    bias: i32,
    max: u8,
    nan: u8,
    /// Whether the all-ones exponent is reserved (infinity and NaN, as IEEE: e5m2) or ordinary
    /// except for the all-ones mantissa (e4m3).
    ieee_top: bool,
}

const E4M3: Format = Format {
    man: 3,
    bias: 7,
    max: 0x7E,
    nan: 0x7F,
    ieee_top: false,
};

const E5M2: Format = Format {
    man: 2,
    bias: 15,
    max: 0x7B,
    nan: 0x7F,
    ieee_top: true,
};

impl Format {
    /// `x` rounded to nearest even, saturated to the largest normal (module docs).
    fn encode(&self, x: f32) -> u8 {
        if x.is_nan() {
            return self.nan;
        }
        let sign = if x.is_sign_negative() { 0x80 } else { 0 };
        let a = f64::from(x.abs());
        let man_one = 1u32 << self.man;
        // The smallest normal's exponent; below it the spacing stays that of the subnormals.
        let min_exp = 1 - self.bias;
        let e = if a == 0.0 {
            min_exp
        } else {
            // f64 has room for every f32 exactly, so the scaling below is exact.
            (a.log2().floor() as i32).max(min_exp)
        };
        if a.is_infinite() || e > 2 * self.bias + 1 {
            return sign | self.max;
        }
        // The significand at this exponent, in units of the last place, rounded ties-to-even.
        let q = (a * 2f64.powi(self.man as i32 - e)).round_ties_even() as u32;
        // A subnormal has exponent field 0 and q < 2^man; rounding up into 2^man (or a normal's
        // into 2^(man+1)) carries into the exponent field, which the sum below does by itself.
        let field = if q < man_one {
            q
        } else {
            (((e + self.bias) as u32) << self.man) + (q - man_one)
        };
        if field > u32::from(self.max) {
            return sign | self.max;
        }
        sign | field as u8
    }

    /// The value of `bits`.
    fn decode(&self, bits: u8) -> f32 {
        let neg = bits & 0x80 != 0;
        let mag = bits & 0x7F;
        let exp_field = i32::from(mag >> self.man);
        let m = u32::from(mag) & ((1 << self.man) - 1);
        let top = 0x7F >> self.man;
        let v = if exp_field == top && self.ieee_top {
            if m == 0 { f32::INFINITY } else { f32::NAN }
        } else if mag == 0x7F && !self.ieee_top {
            f32::NAN
        } else if exp_field == 0 {
            m as f32 * 2f32.powi(1 - self.bias - self.man as i32)
        } else {
            ((1 << self.man) + m) as f32 * 2f32.powi(exp_field - self.bias - self.man as i32)
        };
        if neg { -v } else { v }
    }
}

macro_rules! fp8 {
    ($name:ident, $fmt:ident, $ptx:literal, $max:literal) => {
        #[doc = concat!("An 8-bit float in PTX's `.", $ptx, "` format (module docs: largest normal ", $max, ").")]
        #[doc = ""]
        #[doc = concat!("The host element of a kernel tensor of `ty::", stringify!($name), "`: one byte, as the device reads it.")]
        #[repr(transparent)]
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
        pub struct $name(u8);

        impl $name {
            /// The largest finite value.
            pub const MAX: $name = $name($fmt.max);
            /// The canonical NaN (sign clear).
            pub const NAN: $name = $name($fmt.nan);

            /// The value with encoding `bits`.
            pub const fn from_bits(bits: u8) -> $name {
                $name(bits)
            }

            /// The encoding.
            pub const fn to_bits(self) -> u8 {
                self.0
            }

            /// `x` rounded to nearest even, saturated to the largest normal; NaN stays NaN (PTX's
            /// `cvt.rn.satfinite`, PTX ISA 9.7.9.21).
            pub fn from_f32(x: f32) -> $name {
                $name($fmt.encode(x))
            }

            /// The value, exactly (every one fits an `f32`).
            pub fn to_f32(self) -> f32 {
                $fmt.decode(self.0)
            }

            /// Whether the encoding is a NaN.
            pub fn is_nan(self) -> bool {
                self.to_f32().is_nan()
            }
        }

        impl From<$name> for f32 {
            fn from(x: $name) -> f32 {
                x.to_f32()
            }
        }

        // SAFETY: `#[repr(transparent)]` over a `u8`: any byte is a valid value and the device
        // reads the same byte.
        unsafe impl cudarc::driver::DeviceRepr for $name {}
        // SAFETY: the zero byte is +0.0.
        unsafe impl cudarc::driver::ValidAsZeroBits for $name {}

        impl Element for $name {
            const DTYPE: ScalarType = ScalarType::$name;
        }
    };
}

fp8!(E4m3, E4M3, "e4m3", "448");
fp8!(E5m2, E5M2, "e5m2", "57344");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn e4m3_known_values() {
        for (x, bits) in [
            (0.0f32, 0x00u8),
            (1.0, 0x38),
            (-1.0, 0xB8),
            (0.5, 0x30),
            (1.5, 0x3C),
            (2.0, 0x40),
            (448.0, 0x7E),
            (-448.0, 0xFE),
            (2f32.powi(-6), 0x08),       // min normal
            (2f32.powi(-9), 0x01),       // min subnormal
            (7.0 * 2f32.powi(-9), 0x07), // max subnormal
            (240.0, 0x77),
        ] {
            assert_eq!(E4m3::from_f32(x).to_bits(), bits, "{x}");
            assert_eq!(E4m3::from_bits(bits).to_f32(), x, "{bits:#x}");
        }
        assert_eq!(E4m3::from_f32(-0.0).to_bits(), 0x80);
        assert_eq!(E4m3::MAX.to_f32(), 448.0);
    }

    #[test]
    fn e4m3_rounds_to_nearest_even_and_saturates() {
        // Between 1.0 and 1.125 (ulp 1/8): the tie goes to the even 1.0, above it up.
        assert_eq!(E4m3::from_f32(1.0625).to_bits(), 0x38);
        assert_eq!(E4m3::from_f32(1.07).to_bits(), 0x39);
        // 1.1875 is the tie between 1.125 (odd) and 1.25 (even).
        assert_eq!(E4m3::from_f32(1.1875).to_bits(), 0x3A);
        // Subnormals: half the smallest subnormal ties to zero, a bit more rounds up.
        assert_eq!(E4m3::from_f32(2f32.powi(-10)).to_bits(), 0x00);
        assert_eq!(E4m3::from_f32(1.5 * 2f32.powi(-10)).to_bits(), 0x01);
        // The largest subnormal rounds up into the smallest normal.
        assert_eq!(E4m3::from_f32(7.5 * 2f32.powi(-9)).to_bits(), 0x08);
        // Past the largest normal (480 would be 0x7F, the NaN): saturated.
        for x in [449.0f32, 464.0, 480.0, 1e6, f32::MAX, f32::INFINITY] {
            assert_eq!(E4m3::from_f32(x).to_bits(), 0x7E, "{x}");
            assert_eq!(E4m3::from_f32(-x).to_bits(), 0xFE, "{x}");
        }
        assert!(E4m3::from_f32(f32::NAN).is_nan());
        assert!(E4m3::from_bits(0x7F).is_nan() && E4m3::from_bits(0xFF).is_nan());
    }

    #[test]
    fn e5m2_known_values() {
        for (x, bits) in [
            (0.0f32, 0x00u8),
            (1.0, 0x3C),
            (-1.0, 0xBC),
            (0.25, 0x34),
            (1.5, 0x3E),
            (2.0, 0x40),
            (57344.0, 0x7B),
            (-57344.0, 0xFB),
            (2f32.powi(-14), 0x04),       // min normal
            (2f32.powi(-16), 0x01),       // min subnormal
            (3.0 * 2f32.powi(-16), 0x03), // max subnormal
        ] {
            assert_eq!(E5m2::from_f32(x).to_bits(), bits, "{x}");
            assert_eq!(E5m2::from_bits(bits).to_f32(), x, "{bits:#x}");
        }
        assert_eq!(E5m2::from_bits(0x7C).to_f32(), f32::INFINITY);
        assert_eq!(E5m2::from_bits(0xFC).to_f32(), f32::NEG_INFINITY);
        for b in [0x7D, 0x7E, 0x7F, 0xFF] {
            assert!(E5m2::from_bits(b).is_nan(), "{b:#x}");
        }
    }

    #[test]
    fn e5m2_rounds_and_saturates() {
        // 1.125 ties between 1.0 (even) and 1.25.
        assert_eq!(E5m2::from_f32(1.125).to_bits(), 0x3C);
        assert_eq!(E5m2::from_f32(1.375).to_bits(), 0x3E);
        assert_eq!(E5m2::from_f32(1.2).to_bits(), 0x3D);
        for x in [57345.0f32, 61440.0, 65536.0, f32::INFINITY] {
            assert_eq!(E5m2::from_f32(x).to_bits(), 0x7B, "{x}");
            assert_eq!(E5m2::from_f32(-x).to_bits(), 0xFB, "{x}");
        }
        assert!(E5m2::from_f32(f32::NAN).is_nan());
    }

    #[test]
    fn every_finite_encoding_round_trips() {
        for b in 0..=255u8 {
            let v = E4m3::from_bits(b).to_f32();
            if v.is_finite() {
                assert_eq!(E4m3::from_f32(v).to_bits(), b, "e4m3 {b:#x} = {v}");
            }
            let v = E5m2::from_bits(b).to_f32();
            if v.is_finite() {
                assert_eq!(E5m2::from_f32(v).to_bits(), b, "e5m2 {b:#x} = {v}");
            }
        }
    }

    #[test]
    fn element_dtypes() {
        assert_eq!(<E4m3 as Element>::DTYPE, ScalarType::E4m3);
        assert_eq!(<E5m2 as Element>::DTYPE, ScalarType::E5m2);
        assert_eq!(std::mem::size_of::<E4m3>(), 1);
    }
}
