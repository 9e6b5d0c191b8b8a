//! The instruction families of the PTX ISA 9.0 manual, chapter 9.7 ("Instructions"), that exist on
//! the targets ptxkit models (sm_80 ... sm_120a), and which of them the form table covers.
//!
//! A family is named as the manual's section names it (`cp.async.bulk.tensor`, `ldmatrix`,
//! `mad.cc`): the mnemonic, then tokens every instruction of it writes in that order, with other
//! modifiers between them (`mad.cc` is written `mad.lo.cc.u32`, PTX ISA 9.7.2.5). An instruction
//! belongs to the longest family whose name it spells that way (`cp.async.bulk.tensor.2d...` to
//! `cp.async.bulk.tensor`, not `cp.async`). A family
//! is *covered* when some row of the table writes opcodes that start with its name: then a
//! modifier no row allows is an error naming the nearest row (the validator), and only instructions
//! of uncovered families stay "unknown" warnings.

use super::Form;
use super::syntax::{Element, token_matches};

/// One family: the opcode prefix and the group of chapter 9.7 it is listed in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Family {
    /// The opcode prefix (`cp.async.bulk.tensor`).
    pub name: &'static str,
    /// The group of chapter 9.7 (`9.7.9 Data Movement and Conversion`).
    pub group: &'static str,
}

const INT: &str = "9.7.1 Integer Arithmetic";
const EXT: &str = "9.7.2 Extended-Precision Integer Arithmetic";
const FLT: &str = "9.7.3 Floating-Point";
const CMP: &str = "9.7.5 Comparison and Selection";
const LOGIC: &str = "9.7.7 Logic and Shift";
const DATA: &str = "9.7.9 Data Movement and Conversion";
const TEX: &str = "9.7.10 Texture";
const SURF: &str = "9.7.11 Surface";
const CTRL: &str = "9.7.12 Control Flow";
const SYNC: &str = "9.7.13 Parallel Synchronization and Communication";
const WMMA: &str = "9.7.14 Warp Level Matrix Multiply-Accumulate";
const WGMMA: &str = "9.7.15 Asynchronous Warpgroup Level Matrix Multiply-Accumulate";
const TC05: &str = "9.7.16 TensorCore 5th Generation Family";
const STACK: &str = "9.7.17 Stack Manipulation";
const VIDEO: &str = "9.7.18 Video";
const MISC: &str = "9.7.19 Miscellaneous";

macro_rules! families {
    ($($group:ident: [$($name:literal),* $(,)?];)*) => {
        /// Every family, grouped as in the manual. Names that several groups share (`add` in 9.7.1,
        /// 9.7.3, 9.7.4 and 9.7.8) are listed once, in the first.
        pub static FAMILIES: &[Family] = &[$($(Family { name: $name, group: $group },)*)*];
    };
}

families! {
    INT: ["add", "sub", "mul", "mad", "mul24", "mad24", "sad", "div", "rem", "abs", "neg", "min",
          "max", "popc", "clz", "bfind", "fns", "brev", "bfe", "bfi", "szext", "bmsk", "dp4a",
          "dp2a"];
    EXT: ["add.cc", "addc", "sub.cc", "subc", "mad.cc", "madc"];
    FLT: ["testp", "copysign", "fma", "rcp", "sqrt", "rsqrt", "sin", "cos", "lg2", "ex2", "tanh"];
    CMP: ["set", "setp", "selp", "slct"];
    LOGIC: ["and", "or", "xor", "not", "cnot", "lop3", "shf", "shl", "shr"];
    DATA: ["mov", "shfl.sync", "prmt", "ld", "ld.global.nc", "ldu", "st", "st.async", "st.bulk",
           "multimem.ld_reduce", "multimem.st", "multimem.red", "prefetch", "prefetchu",
           "applypriority", "discard", "createpolicy", "isspacep", "cvta", "cvt", "cvt.pack",
           "mapa", "getctarank", "cp.async", "cp.async.commit_group", "cp.async.wait_group",
           "cp.async.wait_all", "cp.async.bulk", "cp.reduce.async.bulk", "cp.async.bulk.prefetch",
           "cp.async.bulk.commit_group", "cp.async.bulk.wait_group", "cp.async.bulk.tensor",
           "cp.reduce.async.bulk.tensor", "cp.async.bulk.prefetch.tensor", "tensormap.replace"];
    TEX: ["tex", "tld4", "txq", "istypep"];
    SURF: ["suld", "sust", "sured", "suq"];
    CTRL: ["bra", "brx.idx", "call", "ret", "exit"];
    SYNC: ["bar", "barrier", "bar.warp.sync", "barrier.cluster", "membar", "fence", "atom", "red",
           "red.async", "vote", "vote.sync", "match", "activemask", "redux.sync", "griddepcontrol",
           "elect.sync", "mbarrier.init", "mbarrier.inval", "mbarrier.expect_tx",
           "mbarrier.complete_tx", "mbarrier.arrive", "mbarrier.arrive_drop",
           "cp.async.mbarrier.arrive", "mbarrier.test_wait", "mbarrier.try_wait",
           "mbarrier.pending_count", "tensormap.cp_fenceproxy", "clusterlaunchcontrol.try_cancel",
           "clusterlaunchcontrol.query_cancel"];
    WMMA: ["wmma.load", "wmma.store", "wmma.mma", "mma", "mma.sp", "ldmatrix", "stmatrix",
           "movmatrix"];
    WGMMA: ["wgmma.mma_async", "wgmma.mma_async.sp", "wgmma.fence", "wgmma.commit_group",
            "wgmma.wait_group"];
    TC05: ["tcgen05.alloc", "tcgen05.dealloc", "tcgen05.relinquish_alloc_permit", "tcgen05.ld",
           "tcgen05.st", "tcgen05.wait", "tcgen05.cp", "tcgen05.shift", "tcgen05.mma",
           "tcgen05.mma.sp", "tcgen05.mma.ws", "tcgen05.mma.ws.sp", "tcgen05.commit",
           "tcgen05.fence"];
    STACK: ["stacksave", "stackrestore", "alloca"];
    VIDEO: ["vadd", "vsub", "vabsdiff", "vmin", "vmax", "vshl", "vshr", "vmad", "vset", "vadd2",
            "vsub2", "vavrg2", "vabsdiff2", "vmin2", "vmax2", "vset2", "vadd4", "vsub4", "vavrg4",
            "vabsdiff4", "vmin4", "vmax4", "vset4"];
    MISC: ["brkpt", "nanosleep", "pmevent", "trap", "setmaxnreg"];
}

/// True when the written token `written` continues the family name's token `name`: equal, or the
/// name's token followed by `::` (`tcgen05.wait` covers `tcgen05.wait::ld`).
fn name_token_matches(name: &str, written: &str) -> bool {
    written == name
        || written
            .strip_prefix(name)
            .is_some_and(|rest| rest.starts_with("::"))
}

/// The opcode's tokens: the mnemonic split at dots, then the modifiers.
fn tokens<'a, S: AsRef<str>>(mnemonic: &'a str, modifiers: &'a [S]) -> Vec<&'a str> {
    let mut t: Vec<&str> = mnemonic.split('.').collect();
    t.extend(modifiers.iter().map(AsRef::as_ref));
    t
}

/// True when `written` holds the family name's tokens `name` in order (each as in
/// [`name_token_matches`]), starting at the first: the mnemonic.
fn spells(name: &[&str], written: &[&str]) -> bool {
    let (Some(first), Some(w0)) = (name.first(), written.first()) else {
        return false;
    };
    if first != w0 {
        return false;
    }
    let mut rest = written[1..].iter();
    name[1..]
        .iter()
        .all(|n| rest.any(|w| name_token_matches(n, w)))
}

/// The family of an opcode: the longest family name it spells.
pub fn family_of<S: AsRef<str>>(mnemonic: &str, modifiers: &[S]) -> Option<&'static Family> {
    let t = tokens(mnemonic, modifiers);
    FAMILIES
        .iter()
        .filter(|f| spells(&f.name.split('.').collect::<Vec<_>>(), &t))
        .max_by_key(|f| f.name.split('.').count())
}

/// True when some opcode of `elements` holds `tokens` in order (each as in [`name_token_matches`];
/// a `*` modifier of the pattern as in [`token_matches`]).
fn can_spell(elements: &[Element], tokens: &[&str]) -> bool {
    // reached[k]: some prefix of an opcode holds the first k tokens. Within one alternative,
    // taking each token as early as possible is as good as any other way.
    let mut reached = vec![false; tokens.len() + 1];
    reached[0] = true;
    for el in elements {
        let before = reached.clone();
        for (start, _) in before.iter().enumerate().filter(|(_, r)| **r) {
            for alt in el.alternatives() {
                let mut k = start;
                for m in alt {
                    if tokens
                        .get(k)
                        .is_some_and(|t| token_matches(m, t) || name_token_matches(t, m))
                    {
                        k += 1;
                    }
                }
                reached[k] = true;
            }
        }
    }
    reached[tokens.len()]
}

/// True when `form` writes opcodes that spell the family's name.
pub fn row_in_family(form: Form, family: &Family) -> bool {
    let p = form.pattern();
    let spec = form.spec();
    if spec.feature || spec.name.starts_with("directive.") {
        return false;
    }
    let name: Vec<&str> = family.name.split('.').collect();
    let mn: Vec<&str> = p.mnemonic().split('.').collect();
    if name.first() != mn.first() {
        return false;
    }
    // The mnemonic's own tokens first, then the pattern's elements.
    let mut k = 1;
    for m in &mn[1..] {
        if name.get(k).is_some_and(|n| name_token_matches(n, m)) {
            k += 1;
        }
    }
    can_spell(p.elements(), &name[k..])
}

/// The rows of a family.
pub fn rows_of(family: &Family) -> Vec<Form> {
    Form::all()
        .iter()
        .map(|s| s.form)
        .filter(|f| row_in_family(*f, family))
        .collect()
}

/// True when the table has rows for the family.
pub fn covered(family: &Family) -> bool {
    Form::all().iter().any(|s| row_in_family(s.form, family))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fam(op: &str) -> Option<&'static str> {
        let mut parts = op.split('.');
        let mn = parts.next().unwrap_or("");
        let mods: Vec<&str> = parts.collect();
        family_of(mn, &mods).map(|f| f.name)
    }

    #[test]
    fn longest_family_wins() {
        assert_eq!(
            fam("cp.async.bulk.tensor.6d.shared::cluster.global"),
            Some("cp.async.bulk.tensor")
        );
        assert_eq!(fam("cp.async.ca.shared.global"), Some("cp.async"));
        assert_eq!(fam("tcgen05.wait::ld.sync.aligned"), Some("tcgen05.wait"));
        assert_eq!(fam("add.cc.u32"), Some("add.cc"));
        assert_eq!(fam("add.s32"), Some("add"));
        // PTX ISA 9.7.2.5 writes mad.cc as `mad{.hi,.lo}.cc`.
        assert_eq!(fam("mad.lo.cc.u32"), Some("mad.cc"));
        assert_eq!(fam("mad.lo.u32"), Some("mad"));
        assert_eq!(
            fam("tcgen05.mma.ws.sp.cta_group::1"),
            Some("tcgen05.mma.ws.sp")
        );
        assert_eq!(fam("match.any.sync.b32"), Some("match"));
        assert_eq!(fam("frobnicate.u32"), None);
    }

    #[test]
    fn rows_fall_in_their_families() {
        let f = |n: &str| FAMILIES.iter().find(|x| x.name == n).unwrap();
        assert!(rows_of(f("ldmatrix")).contains(&Form::Ldmatrix));
        assert!(rows_of(f("ld.global.nc")).contains(&Form::LdGlobalNc));
        assert!(rows_of(f("cp.async.bulk.tensor")).contains(&Form::TmaLoad));
        assert!(rows_of(f("tcgen05.wait")).contains(&Form::Tcgen05WaitLd));
        assert!(covered(f("add.cc")) && covered(f("mad.cc")));
        assert!(rows_of(f("mad.cc")).contains(&Form::MadCc));
        assert!(!rows_of(f("mad.cc")).contains(&Form::MadInt));
        let names: std::collections::HashSet<&str> = FAMILIES.iter().map(|f| f.name).collect();
        assert_eq!(names.len(), FAMILIES.len(), "a family is listed twice");
    }

    #[test]
    fn every_instruction_row_has_a_family() {
        for spec in Form::all() {
            if spec.feature || spec.name.starts_with("directive.") {
                continue;
            }
            assert!(
                FAMILIES.iter().any(|f| row_in_family(spec.form, f)),
                "{} is in no family",
                spec.name
            );
        }
    }
}
