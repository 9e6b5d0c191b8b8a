//! L2 cache policies and eviction priorities on global loads and stores: `createpolicy.fractional`
//! (PTX ISA 9.7.9.18) makes the 64-bit policy that `.L2::cache_hint` takes as its last operand
//! (9.7.9.8 ld, 9.7.9.11 st), beside an `.L1::evict_*` priority. The builder writes them, the
//! validator (which reads only the form table) accepts what it writes, and ptxas assembles it.

mod support;

use ptx_isa::builder::{Evict, L2Evict, LdOpts, StOpts};
use ptx_isa::validate::{Options, Severity, check};
use ptx_isa::{Addr, ErrorKind, FunctionBuilder, Reg, Target, spaces, ty};

/// A load and a store of 16 bytes with `evict` in L1 and a `priority` policy in L2.
fn hinted(target: Target, priority: L2Evict, evict: Evict) -> Vec<String> {
    support::lines_on(target, |_, k| {
        let (a, pol) = (k.reg::<ty::U64>(), k.reg::<ty::B64>());
        k.mov(a, 0u64)?;
        k.createpolicy_fractional(pol, priority, 1.0)?;
        let v = k.regs::<ty::B32>(4);
        let at = Addr::<spaces::Global>::reg(a);
        k.ld_with(
            &LdOpts {
                evict: Some(evict),
                cache_hint: Some(pol),
                ..LdOpts::default()
            },
            &v,
            at.clone(),
        )?;
        let src: Vec<_> = v.iter().map(|&r| r.into()).collect();
        k.st_with(
            &StOpts {
                evict: Some(evict),
                cache_hint: Some(pol),
                ..StOpts::default()
            },
            at.offset(16),
            &src,
        )
    })
}

#[test]
fn a_policy_and_its_hinted_accesses_are_written_validated_and_assembled() {
    for (priority, evict) in [
        (L2Evict::Last, Evict::Last),
        (L2Evict::First, Evict::First),
        (L2Evict::Normal, Evict::Normal),
        (L2Evict::Unchanged, Evict::Unchanged),
    ] {
        for target in [Target::Sm80, Target::Sm90a] {
            let lines = hinted(target, priority, evict);
            let l2 = priority.name();
            let l1 = match evict {
                Evict::Last => "L1::evict_last",
                Evict::First => "L1::evict_first",
                Evict::Normal => "L1::evict_normal",
                _ => "L1::evict_unchanged",
            };
            assert!(
                lines.iter().any(|l| l
                    .starts_with(&format!("createpolicy.fractional.{l2}.b64 %rd"))
                    && l.ends_with(", 0f3F800000;")),
                "{lines:?}"
            );
            assert!(
                lines.iter().any(|l| l
                    .starts_with(&format!("ld.global.{l1}.L2::cache_hint.v4.b32 {{"))
                    && l.contains("], %rd")),
                "{lines:?}"
            );
            assert!(
                lines.iter().any(|l| l
                    .starts_with(&format!("st.global.{l1}.L2::cache_hint.v4.b32 ["))
                    && l.contains("+16], {")),
                "{lines:?}"
            );
        }
    }
}

/// `ld.L2::cache_hint.f32 d, [at], pol`: a load of one register with the policy `pol`.
fn ld_hinted<S: spaces::Space>(
    k: &mut FunctionBuilder,
    pol: Reg<ty::B64>,
    d: Reg<ty::F32>,
    at: Addr<S>,
) -> ptx_isa::Result<()> {
    let opts = LdOpts {
        cache_hint: Some(pol),
        ..LdOpts::default()
    };
    k.ld_with(&opts, &[d], at)
}

/// [`finished`]'s text, which holds each of `lines`.
fn finished_with(m: ptx_isa::Module, k: FunctionBuilder, lines: &[&str]) -> String {
    let text = finished(m, k);
    for line in lines {
        assert!(text.contains(line), "{line}\n{text}");
    }
    text
}

/// The module's text with the entry `k` added, which the validator (the form table alone) accepts
/// without an error.
fn finished(mut m: ptx_isa::Module, k: FunctionBuilder) -> String {
    m.add(k.finish().unwrap()).unwrap();
    let text = m.to_ptx().unwrap();
    let errors: Vec<String> = check(&text, &Options::default())
        .into_iter()
        .filter(|d| d.severity == Severity::Error)
        .map(|d| d.to_string())
        .collect();
    assert!(errors.is_empty(), "{errors:?}\n{text}");
    text
}

#[test]
fn the_validator_accepts_what_the_builder_writes() {
    let m = ptx_isa::Module::new(Target::Sm90a);
    let mut k = m.entry("t");
    let (a, pol, d) = (k.reg::<ty::U64>(), k.reg::<ty::B64>(), k.reg::<ty::F32>());
    k.mov(a, 0u64).unwrap();
    k.createpolicy_fractional(pol, L2Evict::Last, 0.5).unwrap();
    ld_hinted(&mut k, pol, d, Addr::<spaces::Global>::reg(a)).unwrap();
    k.ret().unwrap();
    let text = finished(m, k);
    assert!(text.contains("createpolicy.fractional.L2::evict_last.b64"));
    support::assemble(&text, Target::Sm90a);
}

/// PTX ISA 9.7.9.18: the fraction lies in (0.0, 1.0].
#[test]
fn a_fraction_outside_zero_to_one_is_refused() {
    for bad in [0.0f32, -0.5, 1.5, f32::NAN] {
        let e = support::error_on(Target::Sm90a, |_, k| {
            let pol = k.reg::<ty::B64>();
            k.createpolicy_fractional(pol, L2Evict::Last, bad)
        });
        assert_eq!(e.kind, ErrorKind::ImmediateRange, "{bad}: {e}");
    }
}

/// Cache hints apply to global (and generic) addresses only (9.7.9.8; ptxas: "cannot be applied
/// to '.shared' space").
#[test]
fn a_hint_on_shared_memory_is_refused() {
    let e = support::error_on(Target::Sm90a, |_, k| {
        let (a, pol, d) = (k.reg::<ty::U32>(), k.reg::<ty::B64>(), k.reg::<ty::F32>());
        k.createpolicy_fractional(pol, L2Evict::First, 1.0)?;
        ld_hinted(k, pol, d, Addr::<spaces::Shared>::reg32(a))
    });
    assert_eq!(
        e.place.instruction.as_deref().map(|s| &s[..2]),
        Some("ld"),
        "{e}"
    );
}

/// `prefetch.global.L2 [a]` and its eviction-priority forms `.L2::evict_last` and
/// `.L2::evict_normal` (PTX ISA 9.7.9.15; PTX 7.4, sm_80): written, validated and assembled; the
/// priorities `prefetch` has no form for are refused.
#[test]
fn an_l2_prefetch_is_written_validated_and_assembled() {
    let m = ptx_isa::Module::new(Target::Sm90a);
    let mut k = m.entry("t");
    let a = k.reg::<ty::U64>();
    k.mov(a, 0u64).unwrap();
    for priority in [None, Some(L2Evict::Last), Some(L2Evict::Normal)] {
        k.prefetch_l2(Addr::<spaces::Global>::reg(a), priority)
            .unwrap();
    }
    k.ret().unwrap();
    let lines = [
        "prefetch.global.L2 [%rd",
        "prefetch.global.L2::evict_last [%rd",
    ];
    let text = finished_with(m, k, &lines);
    assert!(
        text.contains("prefetch.global.L2::evict_normal [%rd"),
        "{text}"
    );
    support::assemble(&text, Target::Sm90a);
    for bad in [L2Evict::First, L2Evict::Unchanged] {
        let e = support::error_on(Target::Sm90a, |_, k| {
            let a = k.reg::<ty::U64>();
            k.prefetch_l2(Addr::<spaces::Global>::reg(a), Some(bad))
        });
        assert_eq!(e.kind, ErrorKind::InvalidModifier, "{bad:?}: {e}");
    }
}

/// `cp.async` with an L2 prefetch size (PTX ISA 9.7.9.25.3.1,
/// `cp.async.{ca|cg}.shared.global{.level::prefetch_size}`, `.L2::64B/128B/256B`; PTX 7.4,
/// sm_80): written after `.global`, validated, assembled by ptxas on sm_80 and sm_90a; a module
/// held to PTX 7.3 is refused (the form table's `mem.L2::prefetch_size` row gates it).
#[test]
fn a_cp_async_prefetch_size_is_written_validated_and_assembled() {
    use ptx_isa::builder::{CpAsyncCache, PrefetchSize};
    let copies = |m: &mut ptx_isa::Module, k: &mut FunctionBuilder| -> ptx_isa::Result<()> {
        m.shared("buf", 128, 128)?;
        let (s, g) = (k.reg::<ty::U32>(), k.reg::<ty::U64>());
        k.mov_shared_addr(s, "buf")?;
        k.mov(g, 0u64)?;
        for (j, (cache, size)) in [
            (CpAsyncCache::Cg, PrefetchSize::B256),
            (CpAsyncCache::Cg, PrefetchSize::B128),
            (CpAsyncCache::Ca, PrefetchSize::B64),
        ]
        .into_iter()
        .enumerate()
        {
            k.cp_async(
                cache,
                Addr::<spaces::Shared>::reg32(s).offset(16 * j as i64),
                Addr::<spaces::Global>::reg(g),
                16,
                None,
                Some(size),
            )?;
        }
        k.cp_async_commit_group()?;
        k.cp_async_wait_all()
    };
    for target in [Target::Sm80, Target::Sm90a] {
        let mut m = ptx_isa::Module::new(target);
        let mut k = m.entry("t");
        copies(&mut m, &mut k).unwrap();
        k.ret().unwrap();
        let text = finished_with(
            m,
            k,
            &[
                "cp.async.cg.shared.global.L2::256B [%r0], [%rd0], 16;",
                "cp.async.cg.shared.global.L2::128B [%r0+16], [%rd0], 16;",
                "cp.async.ca.shared.global.L2::64B [%r0+32], [%rd0], 16;",
            ],
        );
        // sm_80's lowest PTX is 7.0: the qualifier raises it to 7.4 (sm_90a's is 8.0).
        if target == Target::Sm80 {
            assert!(text.contains(".version 7.4"), "{text}");
        }
        support::assemble(&text, target);
    }
    let mut m = ptx_isa::Module::new(Target::Sm80);
    m.set_version(ptx_isa::PtxVersion { major: 7, minor: 3 })
        .unwrap();
    let mut k = m.entry("t");
    copies(&mut m, &mut k).unwrap();
    k.ret().unwrap();
    m.add(k.finish().unwrap()).unwrap();
    let e = m.to_ptx().unwrap_err();
    assert_eq!(e.kind, ErrorKind::PtxVersionTooLow, "{e}");
}
