//! Descriptor round trips over every field value, and the address-program split.

use proptest::prelude::*;
use ptx_isa::ScalarType;
use smem::Major;
use smem::SwizzleMode;
use smem::desc::idesc::{CtaGroup, InstrDesc, MaxShift, MmaKindTc};
use smem::desc::sm90::WgmmaDesc;
use smem::desc::sm100::{LboMode, UmmaDesc, UmmaSwizzle};

const UMMA_SWIZZLES: [UmmaSwizzle; 5] = [
    UmmaSwizzle::None,
    UmmaSwizzle::B128Atom32,
    UmmaSwizzle::B128,
    UmmaSwizzle::B64,
    UmmaSwizzle::B32,
];

#[test]
fn every_address_field_value_round_trips() {
    for v in 0..(1u32 << 14) {
        let bytes = v << 4;
        for (i, mode) in SwizzleMode::ALL.into_iter().enumerate() {
            let d = WgmmaDesc {
                start_addr: bytes,
                lbo: (bytes + 16 * i as u32) & 0x3FFF0,
                sbo: bytes ^ 0x3FFF0,
                base_offset: if mode == SwizzleMode::None {
                    0
                } else {
                    (v % 8) as u8
                },
                swizzle: mode,
            };
            let e = d.encode().unwrap();
            assert_eq!(WgmmaDesc::decode(e), Ok(d));
            let u = UmmaDesc {
                start_addr: d.start_addr,
                lbo: d.lbo,
                sbo: d.sbo,
                base_offset: d.base_offset,
                lbo_mode: if v % 2 == 0 {
                    LboMode::Relative
                } else {
                    LboMode::Absolute
                },
                swizzle: UMMA_SWIZZLES[(v as usize + i) % 5],
            };
            let u = if u.swizzle == UmmaSwizzle::None {
                UmmaDesc {
                    base_offset: 0,
                    ..u
                }
            } else {
                u
            };
            assert_eq!(UmmaDesc::decode(u.encode().unwrap()), Ok(u));
        }
    }
}

proptest! {
    #[test]
    fn sm90_bits_round_trip(bits in any::<u64>()) {
        // Keep only defined fields, then decode -> encode must give the same bits back.
        let keep = 0x3FFF | (0x3FFF << 16) | (0x3FFF << 32) | (7 << 49) | (3 << 62);
        let mut b = bits & keep;
        if b >> 62 == 0 { b &= !(7 << 49); }
        let d = WgmmaDesc::decode(b).unwrap();
        prop_assert_eq!(d.encode().unwrap(), b);
    }

    #[test]
    fn sm100_bits_round_trip(bits in any::<u64>(), sw in 0usize..5) {
        let keep = 0x3FFF | (0x3FFF << 16) | (0x3FFF << 32) | (7 << 49) | (1 << 52);
        let mut b = (bits & keep) | (1 << 46) | (UMMA_SWIZZLES[sw].code() << 61);
        if sw == 0 { b &= !(7 << 49); }
        let d = UmmaDesc::decode(b).unwrap();
        prop_assert_eq!(d.encode().unwrap(), b);
    }

    #[test]
    fn address_program_completes_both_descriptors(addr in 0u32..(1 << 18), lbo in 0u32..(1 << 14), sbo in 0u32..(1 << 14), m in 0usize..4) {
        let addr = addr & !15;
        let w = WgmmaDesc { start_addr: 0, lbo: lbo << 4, sbo: sbo << 4, base_offset: 0, swizzle: SwizzleMode::ALL[m] };
        prop_assert_eq!(w.address_program().unwrap().eval(u64::from(addr)), w.with_start(addr).encode().unwrap());
        let u = UmmaDesc { start_addr: 0, lbo: lbo << 4, sbo: sbo << 4, base_offset: 0, lbo_mode: LboMode::Relative, swizzle: SwizzleMode::ALL[m].into() };
        prop_assert_eq!(u.address_program().unwrap().eval(u64::from(addr)), u.with_start(addr).encode().unwrap());
    }
}

fn formats(kind: MmaKindTc) -> (Vec<ScalarType>, Vec<ScalarType>) {
    match kind {
        MmaKindTc::F16 => (
            vec![ScalarType::F16, ScalarType::Bf16],
            vec![ScalarType::F16, ScalarType::F32],
        ),
        MmaKindTc::Tf32 => (vec![ScalarType::Tf32], vec![ScalarType::F32]),
        MmaKindTc::F8f6f4 => (
            vec![
                ScalarType::E4m3,
                ScalarType::E5m2,
                ScalarType::E2m3,
                ScalarType::E3m2,
                ScalarType::E2m1,
            ],
            vec![ScalarType::F32],
        ),
        MmaKindTc::I8 => (vec![ScalarType::S8, ScalarType::U8], vec![ScalarType::S32]),
    }
}

/// Every (kind, cta group, ws, A, B, D, M, N, majors, negates, saturate, shift): legal ones
/// round-trip exactly, illegal ones fail to encode.
#[test]
fn every_instruction_descriptor_round_trips_or_is_rejected() {
    let mut legal = 0u32;
    for kind in [
        MmaKindTc::F16,
        MmaKindTc::Tf32,
        MmaKindTc::F8f6f4,
        MmaKindTc::I8,
    ] {
        let (ins, outs) = formats(kind);
        for (cta_group, ws) in [
            (CtaGroup::One, false),
            (CtaGroup::Two, false),
            (CtaGroup::One, true),
        ] {
            for &a in &ins {
                for &b in &ins {
                    for &d in &outs {
                        for m in (16..=256).step_by(16) {
                            for n in (8..=256).step_by(8) {
                                for flags in 0..64u32 {
                                    let desc = InstrDesc {
                                        kind,
                                        cta_group,
                                        ws,
                                        a,
                                        b,
                                        d,
                                        m,
                                        n,
                                        a_major: if flags & 1 != 0 { Major::MN } else { Major::K },
                                        b_major: if flags & 2 != 0 { Major::MN } else { Major::K },
                                        negate_a: flags & 4 != 0,
                                        negate_b: flags & 8 != 0,
                                        saturate: flags & 16 != 0,
                                        max_shift: if flags & 32 != 0 {
                                            MaxShift::By16
                                        } else {
                                            MaxShift::None
                                        },
                                    };
                                    if let Ok(bits) = desc.encode() {
                                        legal += 1;
                                        assert_eq!(
                                            InstrDesc::decode(kind, cta_group, ws, bits),
                                            Ok(desc)
                                        );
                                    } else {
                                        assert!(desc.validate().is_err());
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    assert!(legal > 10_000, "only {legal} legal descriptors");
}
