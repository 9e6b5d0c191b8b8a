//! Where ptxas 13.0 and the PTX ISA manual part, the validator follows ptxas (issue 14, part 5):
//! what ptxas takes beyond the manual's grammar is accepted with a warning that names the row,
//! and what it refuses beyond the manual's rules (across a function's instructions, by target)
//! is an error of its own kind at the instruction's line. Each case is held against ptxas 13.0
//! too (when `PTXAS` or `PATH` has it).

use ptx_isa::validate::{Diagnostic, Options, Severity, check};
use ptx_isa::{ErrorKind, Target, ptxas};

/// A kernel around `body` for `target` at `.version 8.7`.
fn kernel(target: &str, body: &str) -> String {
    format!(
        ".version 8.7\n.target {target}\n.address_size 64\n\n\
         .shared .align 1024 .b8 smem[4096];\n\n\
         .visible .entry k(.param .u64 out)\n{{\n\
         \t.reg .pred %p<4>;\n\t.reg .b16 %rs<4>;\n\t.reg .b32 %r<16>;\n\t.reg .b64 %rd<8>;\n\
         \tld.param.u64 %rd0, [out];\n\tmov.u32 %r0, smem;\n\
         {body}\n\tret;\n}}\n"
    )
}

/// ptxas's verdict, when it runs here.
fn ptxas_accepts(text: &str, target: Target) -> Option<bool> {
    let p = ptxas::for_tests().ok()??;
    Some(p.assemble(text, target, &[]).ok()?.ok)
}

fn errors(d: &[Diagnostic]) -> Vec<&Diagnostic> {
    d.iter().filter(|x| x.severity == Severity::Error).collect()
}

/// Accepted by ptxas beyond the manual: no error, a warning saying what the manual writes.
const TAKEN: &[(&str, &str, &str)] = &[
    // PTX ISA 9.7.16.8.1: the tcgen05.cp formats, which ptxas ignores on other tcgen05 instructions.
    (
        "sm_100a",
        "\ttcgen05.ld.sync.aligned.b8x16.16x256b.x2.b32 {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, [%r0];",
        "is `tcgen05.ld.sync.aligned.16x256b.x2.b32` as the PTX ISA writes it",
    ),
    // ptxas does not require tcgen05.ld's `.aligned`.
    (
        "sm_100a",
        "\ttcgen05.ld.sync.pack::16b.16x256b.x2.b32 {%r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8}, [%r0];",
        "is `tcgen05.ld.sync.aligned.16x256b.x2.pack::16b.b32` as the PTX ISA writes it",
    ),
    (
        "sm_100a",
        "\ttcgen05.alloc.cta_group::1.sync.aligned.b4x16_p64.b32 [%r0], 128;",
        "is `tcgen05.alloc.cta_group::1.sync.aligned.b32` as the PTX ISA writes it",
    ),
    (
        "sm_100a",
        "\ttcgen05.fence::before_thread_sync.b8x16;",
        "is `tcgen05.fence::before_thread_sync` as the PTX ISA writes it",
    ),
    // PTX ISA 9.7.9.12 gives st.async `.shared::cluster` only.
    (
        "sm_90a",
        "\tst.async.shared::cta.mbarrier::complete_tx::bytes.u32 [%r0], %r1, [%r0+8];",
        "is `st.async.shared::cluster.mbarrier::complete_tx::bytes.u32` as the PTX ISA writes it",
    ),
    (
        "sm_90a",
        "\tst.async.shared::cluster.mbarrier::complete_tx::bytes.v4.u32 [%r0], %r1, [%r0+8];",
        "stores one register where PTX ISA 9.7.9.12 writes a vector of 4",
    ),
];

/// Accepted by both as the manual writes it (rows that were missing or too narrow).
const ACCEPTED: &[(&str, &str)] = &[
    // PTX ISA 9.7.13.15.13: mbarrier.arrive.noComplete with or without `.release.cta`, on a
    // `.shared{::cta}` or generic address, its state kept or sunk.
    (
        "sm_80",
        "\tmbarrier.arrive.noComplete.shared.b64 _, [%r0], 1;",
    ),
    (
        "sm_80",
        "\tmbarrier.arrive.noComplete.shared::cta.b64 %rd1, [%r0], 1;",
    ),
    (
        "sm_90",
        "\tmbarrier.arrive.noComplete.release.cta.b64 %rd1, [%rd0], 1;",
    ),
    (
        "sm_90",
        "\tst.async.cluster.mbarrier::complete_tx::bytes.u32 [%r0], %r1, [%r0+8];",
    ),
    (
        "sm_120a",
        "\tst.async.mmio.release.sys.global.u32 [%rd0], %r1;",
    ),
    ("sm_100", "\tst.async.global.u32 [%rd0], %r1;"),
    (
        "sm_100a",
        "\ttcgen05.alloc.cta_group::1.sync.aligned.b32 [%r0], 128;",
    ),
    (
        "sm_80",
        "\tcp.async.cg.shared::cta.global [%r0], [%rd0], 16;",
    ),
    (
        "sm_90a",
        "\tcp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%r0], 256, [%r1+2048];",
    ),
    ("sm_80", "\tst.param.u32 [%rd0], %r1;"),
    (
        "sm_100a",
        "\ttcgen05.alloc.cta_group::2.sync.aligned.shared::cta.b32 [%r0], 128;\n\
         \tcp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.cta_group::1 [%r0], [%rd0, {%r1, %r1}], [%r0+8];",
    ),
    (
        "sm_100a",
        "\ttcgen05.commit.cta_group::1.mbarrier::arrive::one.multicast::cluster.b64 [%r1], %rs1;",
    ),
    ("sm_90a", "\tmbarrier.arrive.shared::cluster.b64 _, [%r0];"),
];

/// Refused by ptxas: (target, body, kind, line of the error, what it says).
const REFUSED: &[(&str, &str, ErrorKind, u32, &str)] = &[
    // ptxas 13.0: "Modifier '.shared::cluster' cannot be combined with modifier '.noComplete'",
    // the same for `.cluster` and `.relaxed`; "'.release' requires scope"; "'.cta' requires
    // order"; "Illegal modifier '.noComplete' for instruction 'mbarrier.arrive without count
    // argument'".
    (
        "sm_90",
        "\tmbarrier.arrive.noComplete.shared::cluster.b64 _, [%r0], 1;",
        ErrorKind::InvalidModifier,
        15,
        "is no form of",
    ),
    (
        "sm_90",
        "\tmbarrier.arrive.noComplete.release.cluster.shared.b64 %rd1, [%r0], 1;",
        ErrorKind::InvalidModifier,
        15,
        "is no form of",
    ),
    (
        "sm_90",
        "\tmbarrier.arrive.noComplete.relaxed.cta.shared.b64 %rd1, [%r0], 1;",
        ErrorKind::InvalidModifier,
        15,
        "is no form of",
    ),
    (
        "sm_90",
        "\tmbarrier.arrive.noComplete.release.shared.b64 %rd1, [%r0], 1;",
        ErrorKind::InvalidModifier,
        15,
        "is no form of",
    ),
    (
        "sm_90",
        "\tmbarrier.arrive.noComplete.cta.shared.b64 %rd1, [%r0], 1;",
        ErrorKind::InvalidModifier,
        15,
        "is no form of",
    ),
    (
        "sm_90",
        "\tmbarrier.arrive.noComplete.shared.b64 %rd1, [%r0];",
        ErrorKind::OperandCount,
        15,
        "takes 3 operands",
    ),
    (
        "sm_100a",
        "\ttcgen05.cp.cta_group::1.128x256b [%r1], %rd1;\n\ttcgen05.cp.cta_group::2.128x256b [%r1], %rd1;",
        ErrorKind::MixedCtaGroup,
        16,
        "names .cta_group::2 where another tcgen05 instruction (line 15) of `k` names .cta_group::1",
    ),
    (
        "sm_100a",
        "\ttcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r0], 128;\n\ttcgen05.mma.cta_group::2.kind::f16 [%r0], %rd1, %rd2, %r3, %p0;",
        ErrorKind::MixedCtaGroup,
        15,
        "one function uses one .cta_group",
    ),
    (
        "sm_90a",
        "\tst.param.v2.u32 [%rd0], {%r1, %r2};",
        ErrorKind::ParamWrite,
        15,
        "stores to the parameter space of kernel `k` through `%rd0`",
    ),
    (
        "sm_80",
        "\tst.param.u32 [out], %r1;",
        ErrorKind::ParamWrite,
        15,
        "stores to `out`, a parameter of kernel `k`",
    ),
    (
        "sm_100a",
        "\ttcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale [%r0], %rd1, %rd2, %r3, [%r1], [%r2], %p0;",
        ErrorKind::PtxVersionTooLow,
        15,
        "needs PTX ISA 8.8",
    ),
    (
        "sm_100a",
        "\ttcgen05.mma.cta_group::1.kind::mxf4nvf4.block_scale [%r0], %rd1, %rd2, %r3, [%r1], [%r2], %p0;",
        ErrorKind::InvalidModifier,
        15,
        ".kind::mxf4nvf4 needs .scale_vec::2X or .scale_vec::4X",
    ),
    (
        "sm_120a",
        "\tcp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%r0], 256, [%r1+2048];",
        ErrorKind::OperandType,
        15,
        "`%r0` is a 32-bit register; ptxas 13.0 on sm_120a needs a 64-bit address",
    ),
    (
        "sm_100a",
        "\tst.release.sys.async.u32 [%rd0], %r1;",
        ErrorKind::InvalidModifier,
        15,
        "is no form of",
    ),
    (
        "sm_100a",
        "\tst.async.weak.cluster.shared::cluster.mbarrier::complete_tx::bytes.u32 [%r0], %r1, [%r0+8];",
        ErrorKind::InvalidModifier,
        15,
        "is no form of",
    ),
    (
        "sm_100a",
        "\tst.async.mmio.global.u32 [%rd0], %r1;",
        ErrorKind::InvalidModifier,
        15,
        ".mmio needs .release",
    ),
    (
        "sm_100a",
        "\ttcgen05.mma.cta_group::1.kind::f16 [%r1], %rd2, %rd1, %r3, {%r1, %r2, %r3, %r4, %r1, %r2, %r3, %r4}, %p1;",
        ErrorKind::OperandCount,
        15,
        "disable-output-lane",
    ),
    (
        "sm_100a",
        "\ttcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%r1], 3;",
        ErrorKind::OperandKind,
        15,
        "ctaMask is a 16-bit register",
    ),
];

#[test]
fn what_ptxas_takes_beyond_the_manual_is_a_warning() {
    for (target, body, says) in TAKEN {
        let text = kernel(target, body);
        let d = check(&text, &Options::default());
        assert!(errors(&d).is_empty(), "{body}: {:?}", errors(&d));
        assert!(
            d.iter()
                .any(|x| x.severity == Severity::Warning && x.message.contains(says)),
            "{body}: no warning saying {says:?}: {d:?}"
        );
        let t: Target = target.parse().unwrap();
        if let Some(ok) = ptxas_accepts(&text, t) {
            assert!(ok, "ptxas refuses {body}");
        }
    }
    for (target, body) in ACCEPTED {
        let text = kernel(target, body);
        let d = check(&text, &Options::default());
        assert!(errors(&d).is_empty(), "{body}: {:?}", errors(&d));
        let t: Target = target.parse().unwrap();
        if let Some(ok) = ptxas_accepts(&text, t) {
            assert!(ok, "ptxas refuses {body}");
        }
    }
}

#[test]
fn what_ptxas_refuses_is_an_error_at_its_line() {
    for (target, body, kind, line, says) in REFUSED {
        let text = kernel(target, body);
        let d = check(&text, &Options::default());
        assert!(
            errors(&d).iter().any(|x| x.kind == *kind
                && x.pos.is_some_and(|p| p.line == *line)
                && x.message.contains(says)),
            "{body}: no {kind:?} error at line {line} saying {says:?}: {:?}",
            errors(&d)
        );
        let t: Target = target.parse().unwrap();
        if let Some(ok) = ptxas_accepts(&text, t) {
            assert!(!ok, "ptxas accepts {body}");
        }
    }
}
