//! The feature rows of the form table that an instruction implies, found from its modifiers and
//! operands (`mem.L2::cache_hint`, `mem.shared::cluster`, `mbarrier.sem_scope`...). The builder
//! gates what it writes by them (`FunctionBuilder::emit`) and the validator gates what it
//! reads: one decision. Gating then reads each row's targets and minimum PTX version.

use crate::forms::Form;
use crate::instr::InstrRef;

/// The cache qualifiers (PTX ISA 9.7.9.8: `.level::eviction_priority`, `.level::cache_hint`,
/// `.level::prefetch_size`, all PTX 7.4) of any instruction, table row or not: an instruction the
/// table does not know (`createpolicy.fractional.L2::evict_last`) is still gated by them.
pub fn qualifiers(i: &InstrRef<'_>) -> Vec<Form> {
    let any = |f: &dyn Fn(&str) -> bool| i.modifiers.iter().any(|x| f(x));
    let mut v = Vec::new();
    if any(&|m| m.starts_with("L1::evict") || m.starts_with("L2::evict") || m == "L1::no_allocate")
    {
        v.push(Form::MemEvictionPriority);
    }
    if any(&|m| m == "L2::cache_hint") {
        v.push(Form::MemCacheHint);
    }
    if any(&|m| matches!(m, "L2::64B" | "L2::128B" | "L2::256B")) {
        v.push(Form::MemPrefetchSize);
    }
    v
}

/// The rows of bulk copies into shared memory that name their destination window and may multicast.
const BULK_TO_SHARED: &[Form] = &[Form::CpAsyncBulkG2S, Form::TmaLoad, Form::TmaLoadIm2col];

/// The floating-point min and max rows (`.NaN` and `.xorsign.abs` on each).
const MIN_MAX: &[Form] = &[
    Form::MinF32,
    Form::MaxF32,
    Form::MinF16,
    Form::MaxF16,
    Form::MinBf16,
    Form::MaxBf16,
];

/// Feature rows one modifier implies on some rows: (the rows, the modifier, the feature row).
const BY_MODIFIER: &[(&[Form], &str, Form)] = &[
    // PTX ISA 9.7.13.1: the `.cta` of bar and barrier is PTX 7.8.
    (
        &[
            Form::BarSync,
            Form::BarArrive,
            Form::BarRedPopc,
            Form::BarRedPred,
            Form::BarrierSync,
            Form::BarrierArrive,
        ],
        "cta",
        Form::BarCta,
    ),
    // PTX ISA 9.7.13.3: barrier.cluster's memory-ordering qualifiers are PTX 8.0.
    (
        &[Form::BarrierClusterArrive],
        "release",
        Form::BarrierClusterSem,
    ),
    (
        &[Form::BarrierClusterArrive],
        "relaxed",
        Form::BarrierClusterSem,
    ),
    (
        &[Form::BarrierClusterWait],
        "acquire",
        Form::BarrierClusterSem,
    ),
    // PTX ISA 9.7.9.21: `.satfinite` on a conversion to .f16x2, .bf16 or .bf16x2 is PTX 8.1.
    (
        &[Form::CvtF16x2F32, Form::CvtBf16x2F32, Form::CvtBf16F32],
        "satfinite",
        Form::CvtSatfinite,
    ),
    // PTX ISA 9.7.3.11/9.7.3.12 (and 9.7.4.7/9.7.4.8): min and max `.NaN` is PTX 7.0,
    // `.xorsign.abs` PTX 7.2 on sm_86 and later.
    (MIN_MAX, "NaN", Form::MinMaxNaN),
    (MIN_MAX, "xorsign", Form::MinMaxXorsignAbs),
    // PTX ISA 9.7.9.21: `.satfinite` to .f16 is PTX 8.1.
    (
        &[Form::CvtF16F32Relu, Form::CvtF16F32Satfinite],
        "satfinite",
        Form::CvtSatfinite,
    ),
    // PTX ISA 9.7.9.19: isspacep's `.shared::cta` is PTX 7.8, `.shared::cluster` PTX 7.8 on
    // sm_90, `.param` PTX 7.7 and `.param::entry` PTX 8.3.
    (&[Form::Isspacep], "shared::cta", Form::MemSharedCta),
    (&[Form::Isspacep], "shared::cluster", Form::MemSharedCluster),
    (&[Form::Isspacep], "param", Form::SpaceParam),
    (&[Form::Isspacep], "param::entry", Form::SpaceParamEntry),
    // PTX ISA 9.7.13.15.16: `mbarrier.test_wait.parity` is PTX 7.1.
    (
        &[Form::MbarrierTestWait],
        "parity",
        Form::MbarrierTestWaitParity,
    ),
    // PTX ISA 9.7.9.20: `cvta.param` is PTX 7.7.
    (&[Form::Cvta], "param", Form::CvtaParam),
    // PTX ISA 9.7.9.25.4.1: `.multicast::cluster` (PTX 8.0, sm_90).
    (BULK_TO_SHARED, "multicast::cluster", Form::BulkMulticast),
    // PTX ISA 9.7.9.25.4.1/9.7.9.27.1.2: the `.shared::cta` destination is PTX 8.6.
    (BULK_TO_SHARED, "shared::cta", Form::TmaSharedCta),
    // PTX ISA 9.7.14.6: `.sp::ordered_metadata` is PTX 8.5.
    (
        &[
            Form::MmaSpF16,
            Form::MmaSpTf32,
            Form::MmaSpI8,
            Form::MmaSpF8,
        ],
        "sp::ordered_metadata",
        Form::MmaSpOrdered,
    ),
];

/// [`BY_MODIFIER`]'s entries for `form`, in order: (the modifier, the feature row). Indexed by
/// row once, not searched for every instruction (issue 33).
fn by_modifier(form: Form) -> &'static [(&'static str, Form)] {
    static BY_FORM: std::sync::LazyLock<Vec<Vec<(&'static str, Form)>>> =
        std::sync::LazyLock::new(|| {
            let mut by_form = vec![Vec::new(); Form::all().len()];
            for (rows, modifier, feature) in BY_MODIFIER {
                for row in *rows {
                    if let Some(v) = by_form.get_mut(*row as usize) {
                        v.push((*modifier, *feature));
                    }
                }
            }
            by_form
        });
    BY_FORM.get(form as usize).map_or(&[], Vec::as_slice)
}

/// The feature rows `i` (of row `form`) needs besides `form` itself.
pub fn implied(form: Form, i: &InstrRef<'_>) -> Vec<Form> {
    let has = |m: &str| i.modifiers.iter().any(|x| crate::instr::same_word(x, m));
    let any = |f: &dyn Fn(&str) -> bool| i.modifiers.iter().any(|x| f(x));
    let mut v = Vec::new();
    let memory = matches!(
        form,
        Form::Ld | Form::LdOrdered | Form::LdGlobalNc | Form::St | Form::StOrdered
    );
    if memory || matches!(form, Form::CpAsync | Form::Ldu) {
        v.extend(qualifiers(i));
    }
    let atomic = matches!(
        form,
        Form::AtomInt
            | Form::AtomCas16
            | Form::AtomF32
            | Form::AtomF64
            | Form::AtomF16
            | Form::AtomBf16
            | Form::RedInt
            | Form::RedF32
            | Form::RedF64
            | Form::RedF16
            | Form::RedBf16
    );
    if memory || atomic {
        if has("cluster") {
            v.push(Form::MemScopeCluster);
        }
        if has("shared::cluster") {
            v.push(Form::MemSharedCluster);
        }
        if has("b128") {
            v.push(Form::MemB128);
        }
    }
    // PTX ISA 9.7.13.5/9.7.13.6: the `.sem` and `.scope` qualifiers of atom and red are PTX 6.0.
    if atomic
        && any(&|m| {
            matches!(
                m,
                "relaxed" | "acquire" | "release" | "acq_rel" | "cta" | "cluster" | "gpu" | "sys"
            )
        })
    {
        v.push(Form::AtomOrdered);
    }
    for (modifier, feature) in by_modifier(form) {
        if has(modifier) {
            v.push(*feature);
        }
    }
    // PTX ISA 9.7.9.21: rounding to .tf32 to nearest or toward zero is PTX 7.8 and sm_90 (.rna
    // is PTX 7.0 and sm_80).
    if form == Form::CvtTf32F32 && (has("rn") || has("rz")) {
        v.push(Form::CvtTf32Round);
    }
    // PTX ISA 9.7.13.15: `.sem` and `.scope` of the mbarrier operations are PTX 8.0; a `.cluster`
    // scope and the `.shared::cluster` window are the cluster features (PTX 7.8, sm_90).
    let mbarrier_sem = matches!(
        form,
        Form::MbarrierArrive
            | Form::MbarrierArriveDrop
            | Form::MbarrierArriveExpectTx
            | Form::MbarrierArriveNoComplete
            | Form::MbarrierTestWait
            | Form::MbarrierTryWait
    );
    if mbarrier_sem && any(&|m| matches!(m, "release" | "acquire" | "relaxed" | "cta" | "cluster"))
    {
        v.push(Form::MbarrierSem);
    }
    let mbarrier = mbarrier_sem
        || matches!(
            form,
            Form::MbarrierInit
                | Form::MbarrierInval
                | Form::MbarrierArriveNoComplete
                | Form::MbarrierExpectTx
                | Form::MbarrierCompleteTx
        );
    if mbarrier && has("cluster") {
        v.push(Form::MemScopeCluster);
    }
    if mbarrier && has("shared::cluster") {
        v.push(Form::MemSharedCluster);
    }
    // PTX ISA 9.7.13.15.13: the count operand without .noComplete is sm_90 (with it, sm_80).
    if matches!(form, Form::MbarrierArrive | Form::MbarrierArriveDrop)
        && i.operands.len() == 3
        && !has("noComplete")
    {
        v.push(Form::MbarrierArriveCount);
    }
    // PTX ISA 9.7.13.15.13: the sink `_` as mbarrier.arrive's state is PTX 7.1.
    if matches!(form, Form::MbarrierArrive | Form::MbarrierArriveNoComplete)
        && matches!(i.operands.first(), Some(crate::instr::Operand::Sink))
    {
        v.push(Form::MbarrierArriveSink);
    }
    // PTX ISA 5.1.5: the `.shared::cta` spelling of the shared window is PTX 7.8, whatever the
    // instruction; ptxas 13.0 accepts `cp.async.{ca|cg}.shared::cta.global` from PTX 7.0, the
    // version of cp.async itself (PTX ISA 9.7.9.25.3.1).
    if has("shared::cta") && form != Form::CpAsync {
        v.push(Form::MemSharedCta);
    }
    // PTX ISA 9.7.16.10.9: without `.scale_vec` the block size is `.block32`, PTX 8.8.
    if form == Form::Tcgen05MmaBlockScale && !any(&|m| m.starts_with("scale_vec::")) {
        v.push(Form::Tcgen05BlockScaleDefault);
    }
    if matches!(form, Form::TmaLoad | Form::TmaLoadIm2col) && any(&|m| m.starts_with("cta_group::"))
    {
        v.push(Form::TmaCtaGroup);
    }
    // PTX ISA 9.7.15.5.2/9.7.15.6.2: mixed .s8/.u8 operands, dense or sparse, are PTX 8.4.
    if matches!(form, Form::WgmmaI8 | Form::WgmmaSpI8) {
        let types: Vec<&str> = i
            .modifiers
            .iter()
            .map(|m| m.as_ref())
            .filter(|m| matches!(*m, "s8" | "u8"))
            .collect();
        if types.len() == 2 && types[0] != types[1] {
            v.push(Form::WgmmaMixedInt);
        }
    }
    v
}
