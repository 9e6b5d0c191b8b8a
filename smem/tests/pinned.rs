//! Exact values from published sources: CuTe's canonical GMMA atoms, the 128B-swizzle
//! descriptor constant of public Hopper GEMMs, the tcgen05 swizzle codes and instruction
//! descriptors seen in public code.

use ptx_isa::ScalarType;
use smem::desc::idesc::{CtaGroup, InstrDesc, MmaKindTc};
use smem::desc::sm90::WgmmaDesc;
use smem::desc::sm100::UmmaSwizzle;
use smem::tile::{TileShape, wgmma_tile};
use smem::{Major, SwizzleMode};

/// CuTe `cute/atom/mma_traits_sm90_gmma.hpp`: `Layout_K_{INTER,SW32,SW64,SW128}_Atom_Bits` are
/// 8 x {128, 256, 512, 1024} bits (K-major) and the MN-major atoms their transposes. For bf16
/// that is 8 x {8, 16, 32, 64} elements.
#[test]
fn cute_gmma_atoms() {
    let cases = [
        (SwizzleMode::None, 8u32),
        (SwizzleMode::B32, 16),
        (SwizzleMode::B64, 32),
        (SwizzleMode::B128, 64),
    ];
    for (mode, elems) in cases {
        let k = wgmma_tile(ScalarType::Bf16, TileShape { mn: 64, k: elems }, Major::K).unwrap();
        assert_eq!(
            (k.swizzle(), k.atom()),
            (mode, TileShape { mn: 8, k: elems })
        );
        let mn = wgmma_tile(ScalarType::Bf16, TileShape { mn: elems, k: 16 }, Major::MN).unwrap();
        assert_eq!(
            (mn.swizzle(), mn.atom()),
            (mode, TileShape { mn: elems, k: 8 })
        );
    }
    // Same bit widths for other element sizes: tf32 SW128 is 8 x 32, e4m3 SW128 8 x 128.
    let tf32 = wgmma_tile(ScalarType::Tf32, TileShape { mn: 64, k: 32 }, Major::K).unwrap();
    assert_eq!(tf32.atom(), TileShape { mn: 8, k: 32 });
    let fp8 = wgmma_tile(ScalarType::E4m3, TileShape { mn: 64, k: 128 }, Major::K).unwrap();
    assert_eq!(fp8.atom(), TileShape { mn: 8, k: 128 });
}

/// K-major SW128 bf16: SBO = 1024 bytes (8 rows x 128 B), LBO unused (16 -> field 1).
#[test]
fn k_major_sw128_strides() {
    let t = wgmma_tile(ScalarType::Bf16, TileShape { mn: 128, k: 64 }, Major::K).unwrap();
    assert_eq!(
        (t.lbo(), t.sbo(), t.align(), t.tma_swizzle()),
        (16, 1024, 1024, 3)
    );
    assert_eq!(t.repeat(), TileShape { mn: 16, k: 1 });
    // Two 128-byte atoms along K: the second K atom follows all 16 MN atoms.
    let wide = wgmma_tile(ScalarType::Bf16, TileShape { mn: 128, k: 128 }, Major::K).unwrap();
    assert_eq!(wide.slice_offset(0, 64), Ok(16 * 1024));
    for (mode, k, sbo) in [(SwizzleMode::B64, 32, 512), (SwizzleMode::B32, 16, 256)] {
        let t = wgmma_tile(ScalarType::Bf16, TileShape { mn: 64, k }, Major::K).unwrap();
        assert_eq!((t.swizzle(), t.lbo(), t.sbo()), (mode, 16, sbo));
    }
    // No swizzle: core matrices 8 x 16 B; SBO 128 between 8-row groups, LBO between K chunks.
    let inter = wgmma_tile(ScalarType::Bf16, TileShape { mn: 64, k: 8 }, Major::K).unwrap();
    assert_eq!((inter.lbo(), inter.sbo()), (8 * 128, 128));
}

/// MN-major SW128 bf16 (ThunderKittens' "transpose" descriptors have the same roles: LBO is the
/// stride between MN-adjacent atoms, SBO between K-adjacent 8-row groups; CuTe
/// `make_gmma_desc<Major::MN>`).
#[test]
fn mn_major_sw128_strides() {
    let t = wgmma_tile(ScalarType::Bf16, TileShape { mn: 128, k: 64 }, Major::MN).unwrap();
    assert_eq!(t.atom(), TileShape { mn: 64, k: 8 });
    assert_eq!((t.lbo(), t.sbo()), (1024, 2048));
}

/// fast.cu and its descendants: `make_smem_desc` = encode(addr) | encode(16) << 16 |
/// encode(1024) << 32 | 1 << 62 for a 128B-swizzled K-major bf16 tile.
#[test]
fn fast_cu_descriptor_constant() {
    let t = wgmma_tile(ScalarType::Bf16, TileShape { mn: 128, k: 64 }, Major::K).unwrap();
    let d = t.sm90_desc(0, 0, 0).unwrap();
    assert_eq!(d.constant_part(), Ok(0x4000_0040_0001_0000));
    assert_eq!(
        t.sm90_desc(0x1_0000, 0, 0).unwrap().encode(),
        Ok(0x4000_0040_0001_1000)
    );
    assert_eq!(WgmmaDesc::swizzle_code(SwizzleMode::B128), 1);
}

/// PTX ISA 9.7.16.4.1 Table 40; ThunderKittens sets bit 46 for Blackwell descriptors.
#[test]
fn sm100_codes() {
    assert_eq!(UmmaSwizzle::from(SwizzleMode::B128).code(), 2);
    assert_eq!(UmmaSwizzle::from(SwizzleMode::B64).code(), 4);
    assert_eq!(UmmaSwizzle::from(SwizzleMode::B32).code(), 6);
    assert_eq!(UmmaSwizzle::B128Atom32.code(), 1);
    let t = wgmma_tile(ScalarType::Bf16, TileShape { mn: 128, k: 64 }, Major::K).unwrap();
    assert_eq!(
        t.sm100_desc(0, 0, 0).unwrap().constant_part(),
        Ok((2 << 61) | (1 << 46) | (64 << 32) | (1 << 16))
    );
}

/// pyptx `test_make_instr_desc_f16bf16_f32` (M = 128, N = 256, K-major) and instruction
/// descriptors read off CUTLASS-generated sm_100 kernels (M = N = 256 with cta_group::2, MN-major
/// B, N = 64).
#[test]
fn published_instruction_descriptors() {
    let f16 = |a, m, n| InstrDesc::new(MmaKindTc::F16, a, a, ScalarType::F32, m, n);
    assert_eq!(f16(ScalarType::Bf16, 128, 256).encode(), Ok(0x0840_0490));
    assert_eq!(f16(ScalarType::F16, 128, 256).encode(), Ok(0x0840_0010));
    assert_eq!(
        InstrDesc {
            negate_a: true,
            ..f16(ScalarType::F16, 128, 256)
        }
        .encode(),
        Ok(0x0840_2010)
    );
    let tf32 = InstrDesc::new(
        MmaKindTc::Tf32,
        ScalarType::Tf32,
        ScalarType::Tf32,
        ScalarType::F32,
        128,
        256,
    );
    assert_eq!(tf32.encode(), Ok(0x0840_0910));
    let pair = InstrDesc {
        cta_group: CtaGroup::Two,
        ..f16(ScalarType::Bf16, 256, 256)
    };
    assert_eq!(pair.encode(), Ok(0x1040_0490));
    assert_eq!(
        InstrDesc {
            b_major: Major::MN,
            ..pair
        }
        .encode(),
        Ok(0x1041_0490)
    );
    assert_eq!(f16(ScalarType::Bf16, 128, 64).encode(), Ok(0x0810_0490));
}

/// The byte modes XOR address bits [7, 7 + B) into [4, 4 + B): 16-byte chunks move, bytes inside
/// a chunk never do. (pyptx's smem page writes the 32B mode as `x ^ ((x & 0x80) >> 4)`, which
/// would move 8-byte halves of chunks; the hardware and CuTe's `Swizzle<1,4,3>` shift by 3.)
#[test]
fn b32_moves_whole_chunks() {
    use smem::Swizzle;
    assert_eq!(Swizzle::B32.apply(0x80), 0x90);
    assert_eq!(Swizzle::B32.apply(0x88), 0x98);
    assert_eq!(SwizzleMode::B32.offset_2d(4, 0, 2, 32), Ok(4 * 32 + 16));
}
