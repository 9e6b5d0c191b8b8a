//! The emitted PTX equals the host functions: each helper's instructions, run by the test
//! interpreter (`support/interp.rs`, independent of `AluProgram::eval`), give what the host side
//! computes, for random inputs.

mod support;

use proptest::prelude::*;
use ptx_isa::ScalarType;
use ptx_isa::{FunctionBuilder, Reg, Target, ty};
use smem::alu::{AluProgram, Width};
use smem::desc::DescError;
use smem::desc::sm90::WgmmaDesc;
use smem::desc::sm100::{LboMode, UmmaDesc, UmmaSwizzle};
use smem::emit::{self, AluReg, DynamicSmem};
use smem::pipeline::cursor::{Phase, RingCursor};
use smem::pool::SmemPool;
use smem::tile::{TileShape, wgmma_tile};
use smem::{Major, Swizzle, SwizzleMode};
use support::{kernel, run};

fn mode() -> impl Strategy<Value = SwizzleMode> {
    prop::sample::select(SwizzleMode::ALL.to_vec())
}

/// Any valid `Swizzle<B,M,S>` (B + M + S <= 32, S >= B).
fn any_swizzle() -> impl Strategy<Value = Swizzle> {
    (0u32..=8, 0u32..=16, 0u32..=16)
        .prop_filter_map("invalid swizzle", |(b, m, s)| Swizzle::new(b, m, s).ok())
}

/// 16-byte-aligned byte values a 14-bit descriptor field holds.
fn field() -> impl Strategy<Value = u32> {
    (0u32..=0x3FFF).prop_map(|x| x << 4)
}

fn swizzle_via_ptx(sw: Swizzle, x: u32) -> u64 {
    let m = kernel(Target::Sm90a, &["x"], |_, k, r| {
        emit::emit_swizzle(k, sw, r[0]).map(AluReg::U32)
    })
    .unwrap();
    run(&m, &[("x", u64::from(x))], &[]).unwrap()
}

/// The descriptor kernel of `emit` (from an input `addr`) for `target` against the host: at an
/// aligned address below 2^18 exactly the `encoded` descriptor, at any `raw` address what the
/// host address `program` computes (the hardware's masking).
fn desc_matches(
    target: Target,
    emit: impl FnOnce(&mut FunctionBuilder, Reg<ty::U32>) -> ptx_isa::Result<Reg<ty::U64>>,
    (addr, encoded): (u32, Result<u64, DescError>),
    raw: u32,
    program: &AluProgram,
) -> Result<(), TestCaseError> {
    let module = kernel(target, &["addr"], |_, k, r| emit(k, r[0]).map(AluReg::U64)).unwrap();
    let got = run(&module, &[("addr", u64::from(addr))], &[]).unwrap();
    prop_assert_eq!(Ok(got), encoded);
    let got = run(&module, &[("addr", u64::from(raw))], &[]).unwrap();
    prop_assert_eq!(got, program.eval(u64::from(raw)));
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn swizzle_modes_match_the_host(m in mode(), x in any::<u32>()) {
        prop_assert_eq!(swizzle_via_ptx(m.swizzle(), x), m.swizzle().apply(u64::from(x)));
    }

    #[test]
    fn any_swizzle_matches_the_host(sw in any_swizzle(), x in any::<u32>()) {
        prop_assert_eq!(swizzle_via_ptx(sw, x), sw.apply(u64::from(x)));
    }

    /// Powers of two and not (3-, 6-, 12-byte elements, pitches like 48 or 208), so both the
    /// `shl` and the `mul.lo` forms run.
    #[test]
    fn offset_2d_matches_the_host(
        m in mode(),
        elem in prop::sample::select(vec![1u32, 2, 3, 4, 6, 8, 12, 16]),
        chunks in 1u32..=64,
        row in 0u32..4096,
        col_frac in 0.0f64..1.0,
    ) {
        let pitch = 16 * chunks;
        prop_assume!(elem <= pitch);
        let col = ((f64::from(pitch / elem)) * col_frac) as u32;
        let host = m.offset_2d(u64::from(row), u64::from(col), u64::from(elem), u64::from(pitch));
        prop_assert!(host.is_ok(), "{:?}", host);
        let module = kernel(Target::Sm90a, &["row", "col"], |_, k, r| {
            emit::emit_offset_2d(k, m, elem, pitch, r[0], r[1]).map(AluReg::U32)
        }).unwrap();
        let ptx = run(&module, &[("row", u64::from(row)), ("col", u64::from(col))], &[]).unwrap();
        prop_assert_eq!(Ok(ptx), host);
        // The host program agrees too (it is what was lowered).
        let p = m.offset_2d_program(u64::from(elem), u64::from(pitch), Width::U32).unwrap();
        prop_assert_eq!(p.eval_inputs(&[u64::from(row), u64::from(col)]), Ok(ptx));
    }

    #[test]
    fn wgmma_desc_matches_the_host(
        lbo in field(), sbo in field(), base_offset in 0u8..8, swizzle in mode(),
        addr in (0u32..0x4000).prop_map(|a| a << 4), raw in any::<u32>(),
    ) {
        let base_offset = if swizzle == SwizzleMode::None { 0 } else { base_offset };
        let d = WgmmaDesc { start_addr: 0, lbo, sbo, base_offset, swizzle };
        let encoded = (addr, d.with_start(addr).encode());
        desc_matches(Target::Sm90a, |k, a| emit::emit_desc(k, &d, a), encoded, raw, &d.address_program().unwrap())?;
    }

    #[test]
    fn umma_desc_matches_the_host(
        lbo in field(), sbo in field(), base_offset in 0u8..8,
        swizzle in prop::sample::select(vec![
            UmmaSwizzle::None, UmmaSwizzle::B128Atom32, UmmaSwizzle::B128,
            UmmaSwizzle::B64, UmmaSwizzle::B32,
        ]),
        absolute in any::<bool>(),
        addr in (0u32..0x4000).prop_map(|a| a << 4), raw in any::<u32>(),
    ) {
        let base_offset = if swizzle == UmmaSwizzle::None { 0 } else { base_offset };
        let lbo_mode = if absolute { LboMode::Absolute } else { LboMode::Relative };
        let d = UmmaDesc { start_addr: 0, lbo, sbo, base_offset, lbo_mode, swizzle };
        let encoded = (addr, d.with_start(addr).encode());
        desc_matches(Target::Sm100a, |k, a| emit::emit_desc(k, &d, a), encoded, raw, &d.address_program().unwrap())?;
    }

    /// Canonical tiles of 1-, 2-, 4- and 8-byte elements, both majors, every swizzle the
    /// chooser picks (contiguous extents of 16 to 512 bytes), a random element inside.
    #[test]
    fn tile_offset_matches_the_host(
        dtype in prop::sample::select(vec![ScalarType::E4m3, ScalarType::Bf16, ScalarType::F32, ScalarType::F64]),
        major in prop::sample::select(vec![Major::K, Major::MN]),
        strided_groups in 1u32..=16,
        contig_chunks in 1u32..=32,
        at in (0.0f64..1.0, 0.0f64..1.0),
    ) {
        let e = dtype.whole_bytes().unwrap();
        let (strided, contig) = (8 * strided_groups, 16 * contig_chunks / e);
        prop_assume!(contig > 0);
        let shape = match major {
            Major::K => TileShape { mn: strided, k: contig },
            Major::MN => TileShape { mn: contig, k: strided },
        };
        let t = wgmma_tile(dtype, shape, major).unwrap();
        let mn = (f64::from(shape.mn) * at.0) as u32;
        let kk = (f64::from(shape.k) * at.1) as u32;
        let module = kernel(Target::Sm90a, &["mn", "k"], |_, k, r| {
            emit::emit_tile_offset(k, &t, r[0], r[1]).map(AluReg::U32)
        }).unwrap();
        let got = run(&module, &[("mn", u64::from(mn)), ("k", u64::from(kk))], &[]).unwrap();
        prop_assert_eq!(Ok(got), t.offset(mn, kk).map_err(|e| e.to_string()), "{:?}", t);
    }

    /// Every region's address is the array's address plus the region's offset.
    #[test]
    fn region_addresses_match_the_pool(
        sizes in prop::collection::vec((1u32..5000, 4u32..=10), 1..8),
        base in (0u32..64).prop_map(|b| b * 1024),
        pick in any::<prop::sample::Index>(),
    ) {
        let mut pool = SmemPool::new(ptx_isa::Target::Sm90a);
        for (i, &(bytes, log_align)) in sizes.iter().enumerate() {
            pool.alloc_bytes(&format!("r{i}"), bytes, 1 << log_align).unwrap();
        }
        let region = pick.get(pool.regions()).clone();
        let module = kernel(Target::Sm90a, &[], |m, k, _| {
            let smem = DynamicSmem::declare(m, "smem", &pool)?;
            smem.region_addr(k, &region).map(AluReg::U32)
        }).unwrap();
        let got = run(&module, &[], &[("smem", u64::from(base))]).unwrap();
        prop_assert_eq!(got, u64::from(base + region.offset));
    }

    /// Barrier `i` of an array is at the array's address plus its offset in the pool.
    #[test]
    fn mbarrier_addresses_match_the_pool(
        pad in 0u32..5000,
        count in 1usize..16,
        pick in any::<prop::sample::Index>(),
    ) {
        let mut pool = SmemPool::new(ptx_isa::Target::Sm90a);
        if pad > 0 {
            pool.alloc_bytes("pad", pad, 16).unwrap();
        }
        let bars = pool.mbarriers("bars", &vec![1; count]).unwrap();
        let i = pick.index(count) as u32;
        let module = kernel(Target::Sm90a, &[], |m, k, _| {
            let smem = DynamicSmem::declare(m, "smem", &pool)?;
            let base = smem.base_addr(k)?;
            smem.mbarrier_addr_from(k, base, &bars, i).map(AluReg::U32)
        }).unwrap();
        let got = run(&module, &[], &[("smem", 0x800)]).unwrap();
        prop_assert_eq!(got, 0x800 + u64::from(bars.offset(i).unwrap()));
    }
}

/// The lowering writes exactly the host program's mnemonics, one instruction per step.
#[test]
fn one_instruction_per_step_with_the_host_mnemonic() {
    let d = WgmmaDesc {
        start_addr: 0,
        lbo: 16,
        sbo: 1024,
        base_offset: 0,
        swizzle: SwizzleMode::B128,
    };
    let programs = [
        SwizzleMode::B64.program(Width::U32).unwrap(),
        SwizzleMode::B32
            .offset_2d_program(6, 48, Width::U32)
            .unwrap(),
        d.address_program().unwrap(),
    ];
    for p in programs {
        let module = kernel(Target::Sm90a, &["a", "b"], |_, k, r| {
            let inputs: Vec<AluReg> = r[..p.inputs() as usize].iter().map(|&x| x.into()).collect();
            emit::lower(k, &p, &inputs)
        })
        .unwrap();
        let f = module.function("k").unwrap();
        let opcodes: Vec<String> = f
            .instructions()
            .map(|(_, i)| i.opcode())
            .filter(|o| {
                !o.starts_with("ld.")
                    && !o.starts_with("cvta")
                    && !o.starts_with("st.")
                    && o != "ret"
            })
            .collect();
        let host: Vec<String> = p
            .to_string()
            .lines()
            .map(|l| l.split(' ').nth(2).unwrap().to_string())
            .collect();
        assert_eq!(opcodes, host, "{p}");
    }
}

/// The stage and phase after `RingCursor::skip` of `a` then `b` steps from stage 0 of a ring
/// of `stages`, packed as `stage | phase << 16`, run by the interpreter.
fn cursor_skip_via_ptx(stages: u32, kind: Phase, a: u32, b: u32) -> u64 {
    let m = kernel(Target::Sm90a, &["a", "b"], |_, k, r| {
        let cur = RingCursor::new(k, stages, kind)?;
        cur.skip(k, r[0])?;
        cur.skip(k, r[1])?;
        let out = k.reg::<ty::U32>();
        k.shl(out, cur.phase(), 16u32)?;
        k.or(out, out, cur.stage())?;
        Ok(AluReg::U32(out))
    })
    .unwrap();
    run(&m, &[("a", u64::from(a)), ("b", u64::from(b))], &[]).unwrap()
}

proptest! {
    /// Skipping `a` then `b` stages lands where `a + b` single steps do: stage `(a + b) %
    /// stages`, the parity of the wraps (or their count).
    #[test]
    fn cursor_skip_matches_single_steps(stages in 1u32..=8, a in 0u32..2000, b in 0u32..2000) {
        let wraps = u64::from((a + b) / stages);
        let stage = u64::from((a + b) % stages);
        prop_assert_eq!(cursor_skip_via_ptx(stages, Phase::Parity, a, b), stage | (wraps & 1) << 16);
        prop_assert_eq!(cursor_skip_via_ptx(stages, Phase::Laps, a, b), stage | wraps << 16);
    }
}
