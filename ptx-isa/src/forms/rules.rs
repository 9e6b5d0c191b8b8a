//! What a row's pattern cannot say: which modifier combinations are legal, which numbers a `*`
//! modifier takes, and the ranges of immediate operands. Each rule cites the PTX ISA section it
//! comes from. The builder checks every instruction it writes against these rules (in
//! `FunctionBuilder::emit`), and the validator checks every parsed instruction, so both read
//! the same rules.

use super::Form;
use super::syntax::token_matches;

mod coverage;
mod video;
use crate::error::ErrorKind;
use crate::instr::{Imm, InstrRef, Operand};
pub use video::VideoShape;

/// A set of legal numbers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Values {
    /// `lo, lo + step, ... hi`.
    Step {
        /// The smallest.
        lo: i128,
        /// The largest.
        hi: i128,
        /// The distance between neighbours.
        step: i128,
    },
    /// The powers of two from `lo` to `hi`.
    Pow2 {
        /// The smallest.
        lo: i128,
        /// The largest.
        hi: i128,
    },
    /// Exactly these.
    List(&'static [i128]),
}

impl Values {
    /// True when `v` is one of the values.
    pub fn contains(self, v: i128) -> bool {
        match self {
            Values::Step { lo, hi, step } => (lo..=hi).contains(&v) && (v - lo) % step == 0,
            Values::Pow2 { lo, hi } => (lo..=hi).contains(&v) && v > 0 && v & (v - 1) == 0,
            Values::List(l) => l.contains(&v),
        }
    }

    /// Every value, smallest first.
    pub fn all(self) -> Vec<i128> {
        match self {
            Values::Step { lo, hi, step } => (lo..=hi).step_by(step as usize).collect(),
            Values::Pow2 { lo, hi } => (0..64)
                .map(|k| 1i128 << k)
                .filter(|v| (lo..=hi).contains(v))
                .collect(),
            Values::List(l) => l.to_vec(),
        }
    }
}

impl std::fmt::Display for Values {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Values::Step { lo, hi, step: 1 } => write!(f, "in {lo}..={hi}"),
            Values::Step { lo, hi, step } if lo % step == 0 => {
                write!(f, "a multiple of {step} in {lo}..={hi}")
            }
            Values::Step { lo, hi, step } => write!(f, "in {lo}..={hi} in steps of {step}"),
            Values::Pow2 { lo, hi } => write!(f, "a power of two in {lo}..={hi}"),
            Values::List(l) => {
                let s: Vec<String> = l.iter().map(i128::to_string).collect();
                write!(f, "one of {}", s.join(", "))
            }
        }
    }
}

/// How many registers a braced operand holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Count {
    /// Always this many.
    Fixed(usize),
    /// At least this many, in a vector of 1, 2 or 4 (texture and surface coordinates: ptxas 13.0
    /// takes `{x, y}` for a `.1d` access, not `{x, y, z}`: "Illegal vector size: 3").
    AtLeast(usize),
    /// The number in the `*` modifier `token` times `mul`, divided by `div` (wgmma `m64n*k16`
    /// with `.f32` accumulators: N / 2).
    Scaled {
        /// The pattern's modifier with its `*`.
        token: &'static str,
        /// The factor.
        mul: usize,
        /// The divisor.
        div: usize,
    },
}

/// A condition on one of the instruction's types, by position (`set.lo.u32.s32`: the source
/// type is the second).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TypeIs {
    /// Which type: 0 for the first the opcode names.
    pub position: usize,
    /// The types (without their dots) it may be.
    pub types: &'static [&'static str],
}

/// One kind of rule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// `modifier` is legal only together with one of `with`.
    Needs {
        /// The modifier (without its dot).
        modifier: &'static str,
        /// Modifiers one of which must be written too.
        with: &'static [&'static str],
    },
    /// None of `modifiers` is legal together with any of `with`.
    Excludes {
        /// Modifiers (without their dots).
        modifiers: &'static [&'static str],
        /// Modifiers none of which may be written with them.
        with: &'static [&'static str],
    },
    /// The optional operand the pattern names `slot` is written exactly when `modifier` is (a
    /// cache policy with `.L2::cache_hint`, a CTA mask with `.multicast::cluster`).
    OperandWith {
        /// The pattern's name of the optional operand.
        slot: &'static str,
        /// The modifier that brings it.
        modifier: &'static str,
    },
    /// Each of `modifiers` is legal only when the instruction's type at `ty.position` is one of
    /// `ty.types` (`set.lo` compares unsigned sources only).
    TypeFor {
        /// Modifiers (without their dots).
        modifiers: &'static [&'static str],
        /// The type they need.
        ty: TypeIs,
    },
    /// The braced operand at `operand` holds `count` registers, when every modifier of `when` is
    /// written and the type condition (if any) holds. A bare register or a descriptor there is
    /// not checked (wgmma's `a` is a descriptor or four registers).
    Registers {
        /// The operand's position.
        operand: usize,
        /// What the operand is, for the message.
        what: &'static str,
        /// Modifiers that select this rule (empty: always).
        when: &'static [&'static str],
        /// A type that selects this rule too.
        ty: Option<TypeIs>,
        /// How many registers.
        count: Count,
    },
    /// With `modifier` written, the operand at `operand` is the sink `_` (an mbarrier arrival on a
    /// `.shared::cluster` barrier returns no state).
    SinkWith {
        /// The operand's position.
        operand: usize,
        /// The modifier.
        modifier: &'static str,
    },
    /// With `modifier` written, the instruction takes exactly `n` operands (`.noComplete` brings
    /// the count, `.expect_tx` the transaction count).
    OperandsWith {
        /// The modifier.
        modifier: &'static str,
        /// How many operands.
        n: usize,
    },
    /// The selectors and negations of a video instruction's operands ([`VideoShape`]).
    Video(VideoShape),
    /// A tensor copy's `.Nd` names as many coordinates as the tensor operand holds.
    TensorRank,
    /// cvt's rounding by the pair of types: integer rounding from float to integer, float rounding
    /// from integer to float and for a narrower float, none between integers.
    CvtRounding,
    /// cvt's `.ftz`: only with an `.f32` source or destination.
    CvtFtz,
    /// The number in the modifier that the pattern writes as `token` (`m64n*k16`, `x*`), when every
    /// modifier of `when` is written.
    Number {
        /// The pattern's modifier with its `*`.
        token: &'static str,
        /// Modifiers that select this rule (empty: always).
        when: &'static [&'static str],
        /// The legal numbers.
        values: Values,
    },
    /// With a `.vN` modifier written, the data operand may be one register where the manual writes
    /// a vector of N: ptxas 13.0 takes it, and the validator warns instead of refusing
    /// (`st.async.v2`, `sust.v4`). Read by the validator, which knows the operands.
    OneForVector,
    /// On targets of `sm`, the address operand at `operand` is a 64-bit register when every
    /// modifier of `when` is written (ptxas 13.0 on sm_120 refuses a 32-bit global source of
    /// `cp.async.bulk.shared::cluster.global`). Read by the validator, which knows the registers.
    Address64On {
        /// The operand's position.
        operand: usize,
        /// Modifiers that select this rule (empty: always).
        when: &'static [&'static str],
        /// The SM number (`120`: sm_120 and sm_120a).
        sm: u32,
    },
    /// The operand count of an `.f16`/`.bf16` wgmma: `with_descriptor` when `A` (the operand at
    /// `a`) is a shared-memory descriptor, one fewer when it is braced registers (`imm-trans-a` goes
    /// with the descriptor); the transpose immediates are never left out (ptxas 13.0: "Arguments
    /// mismatch for instruction 'wgmma.mma_async'").
    Transposes {
        /// The position of `A`.
        a: usize,
        /// The operand count with `A` a descriptor.
        with_descriptor: usize,
    },
    /// An immediate operand (a register there is not checked), when every modifier of `when` is
    /// written.
    Immediate {
        /// The operand's position.
        operand: usize,
        /// What the operand is, for the message.
        what: &'static str,
        /// Modifiers that select this rule (empty: always).
        when: &'static [&'static str],
        /// The legal values.
        values: Values,
    },
}

/// A rule of one row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rule {
    /// The row.
    pub form: Form,
    /// What it says.
    pub check: Check,
    /// The PTX ISA section behind it.
    pub section: &'static str,
}

const fn needs(
    form: Form,
    modifier: &'static str,
    with: &'static [&'static str],
    section: &'static str,
) -> Rule {
    Rule {
        form,
        check: Check::Needs { modifier, with },
        section,
    }
}

const fn excludes(
    form: Form,
    modifiers: &'static [&'static str],
    with: &'static [&'static str],
    section: &'static str,
) -> Rule {
    Rule {
        form,
        check: Check::Excludes { modifiers, with },
        section,
    }
}

const fn operand_with(
    form: Form,
    slot: &'static str,
    modifier: &'static str,
    section: &'static str,
) -> Rule {
    Rule {
        form,
        check: Check::OperandWith { slot, modifier },
        section,
    }
}

const fn sink_with(
    form: Form,
    operand: usize,
    modifier: &'static str,
    section: &'static str,
) -> Rule {
    Rule {
        form,
        check: Check::SinkWith { operand, modifier },
        section,
    }
}

const fn operands_with(
    form: Form,
    modifier: &'static str,
    n: usize,
    section: &'static str,
) -> Rule {
    Rule {
        form,
        check: Check::OperandsWith { modifier, n },
        section,
    }
}

const fn rank(form: Form, section: &'static str) -> Rule {
    Rule {
        form,
        check: Check::TensorRank,
        section,
    }
}

const fn number(
    form: Form,
    token: &'static str,
    when: &'static [&'static str],
    values: Values,
    section: &'static str,
) -> Rule {
    Rule {
        form,
        check: Check::Number {
            token,
            when,
            values,
        },
        section,
    }
}

const fn imm(
    form: Form,
    operand: usize,
    what: &'static str,
    when: &'static [&'static str],
    values: Values,
    section: &'static str,
) -> Rule {
    Rule {
        form,
        check: Check::Immediate {
            operand,
            what,
            when,
            values,
        },
        section,
    }
}

const fn type_for(
    form: Form,
    modifiers: &'static [&'static str],
    position: usize,
    types: &'static [&'static str],
    section: &'static str,
) -> Rule {
    Rule {
        form,
        check: Check::TypeFor {
            modifiers,
            ty: TypeIs { position, types },
        },
        section,
    }
}

/// A rule on the register count of a braced operand.
const fn regs(
    form: Form,
    operand: usize,
    what: &'static str,
    when: &'static [&'static str],
    ty: Option<TypeIs>,
    count: Count,
    section: &'static str,
) -> Rule {
    Rule {
        form,
        check: Check::Registers {
            operand,
            what,
            when,
            ty,
            count,
        },
        section,
    }
}

/// A braced operand that always holds `n` registers, when the type condition (if any) holds.
const fn frag(
    form: Form,
    operand: usize,
    what: &'static str,
    ty: Option<TypeIs>,
    n: usize,
    section: &'static str,
) -> Rule {
    regs(form, operand, what, &[], ty, Count::Fixed(n), section)
}

/// The type at `position` is one of `types`.
const fn ty(position: usize, types: &'static [&'static str]) -> Option<TypeIs> {
    Some(TypeIs { position, types })
}

const fn range(lo: i128, hi: i128) -> Values {
    Values::Step { lo, hi, step: 1 }
}

/// wgmma N for the floating-point types: 8..=256 in steps of 8 (PTX ISA 9.7.15.5.1, "Matrix
/// shape" table).
const WGMMA_N: Values = Values::Step {
    lo: 8,
    hi: 256,
    step: 8,
};

/// wgmma N for `.s8`/`.u8`: 8, 16, 24, then 32..=256 in steps of 16 (PTX ISA 9.7.15.5.1).
const WGMMA_N_I8: Values = Values::List(&[
    8, 16, 24, 32, 48, 64, 80, 96, 112, 128, 144, 160, 176, 192, 208, 224, 240, 256,
]);

const S_TMA_MC: &str =
    "9.7.9.27.1.2 cp.async.bulk.tensor: .multicast::cluster with a .shared::cluster destination";
const S_TMR: &str = "9.7.9 tensormap.replace: the field's width";
/// The cache qualifiers of ld/st, which apply to global (and generic) addresses only.
const CACHE_QUALIFIERS: &[&str] = &[
    "L1::evict_normal",
    "L1::evict_unchanged",
    "L1::evict_first",
    "L1::evict_last",
    "L1::no_allocate",
    "L2::cache_hint",
    "L2::64B",
    "L2::128B",
    "L2::256B",
];
/// The cache operators of ld and st (PTX ISA 9.7.9.1).
const LD_COP: &[&str] = &["ca", "cg", "cs", "lu", "cv"];
const ST_COP: &[&str] = &["wb", "cg", "cs", "wt"];
const S_VOLATILE_COP: &str = "9.7.9.8 ld / 9.7.9.11 st: .volatile takes no cache operator";
const NOT_GLOBAL: &[&str] = &[
    "param",
    "const",
    "local",
    "shared",
    "shared::cta",
    "shared::cluster",
];
const S_CACHE: &str = "9.7.9.8 ld / 9.7.9.11 st: eviction priority, cache hint and prefetch size apply to .global (and generic) addresses (ptxas: \"cannot be applied to '.shared' space\")";
const S_MBAR_SEM: &str = "9.7.13.15 mbarrier: .sem and .scope go together (ptxas: \"'.release' requires scope\", \"'.cta' requires order\")";
const S_ATOM_OP: &str = "9.7.13.5 atom / 9.7.13.6 red: the types each operation takes";
const S_HINT: &str = "9.7.9.25/9.7.9.27 cp.async.bulk(.tensor): the cache-policy operand comes with .L2::cache_hint, the CTA mask with .multicast::cluster";
const S_RANK: &str = "9.7.9.27.1 cp.async.bulk.tensor: tensorCoords has .dim elements";
const S_REDUX: &str = "9.7.13.11 redux.sync: .and/.or/.xor on .b32, .add/.min/.max on .u32/.s32";
const S_BAR: &str = "9.7.13.1 bar, barrier: 16 named barriers per CTA (ptxas: range [0..15])";
const S_WGMMA: &str = "9.7.15.5.1 wgmma: matrix shapes";
const S_TC_LD: &str = "9.7.16.8.3 tcgen05.ld: .num per .shape";
const S_TC_ST: &str = "9.7.16.8.4 tcgen05.st: .num per .shape";
const S_TC_ALLOC: &str = "9.7.16.7.1 tcgen05.alloc/dealloc: ncols a power of two, 32..=512";

const S_SET: &str = "9.7.5.1 set / 9.7.5.2 setp: the comparison operators by type (tables \"Operators for signed integer, unsigned integer, and bit-size types\" and \"Floating-point comparison operators\"; ptxas: \"Mismatch between instruction type and comparison qualifier\")";
const S_CP_RED: &str = "9.7.9.25.4.2 cp.reduce.async.bulk: the types each .redOp takes";
const S_RED_ASYNC: &str = "9.7.13.7 red.async: the types each .redOp takes";
const S_MMA_REGS: &str =
    "9.7.14.5.14 mma: fragments of m16n8k16 (A four .b32, B two, C/D four .f32 or two .f16x2)";
const S_MMA_K8_REGS: &str = "9.7.14.5.14 mma: fragments of m16n8k8 .f16/.bf16 (A two .b32, B one, C/D four .f32 or two .f16x2)";
const S_MMA_BF16: &str =
    "9.7.14.5.14 mma: .bf16 inputs accumulate in .f32 (.dtype = .ctype = .f32)";
const S_WGMMA_REGS: &str = "9.7.15.5.1 wgmma: the accumulator fragment holds N/2 .f32/.s32 or N/4 .f16x2 registers per thread";
const S_WGMMA_BF16: &str = "9.7.15.5.2 wgmma.mma_async: .bf16 inputs accumulate in .f32";
const S_LDMATRIX: &str =
    "9.7.14.5.15 ldmatrix: d holds one register per matrix (.x1/.x2/.x4; two per 16x16 .b8 matrix)";
const S_STMATRIX: &str = "9.7.14.5.16 stmatrix: r holds one register per matrix (.x1/.x2/.x4)";
const S_TC_REGS: &str = "9.7.16.8.3/9.7.16.8.4 tcgen05.ld/st: .num times the shape's 32-bit registers per thread (32x32b, 16x64b, 16x32bx2: 1; 16x128b: 2; 16x256b: 4)";
const S_WMMA_TYPES: &str =
    "9.7.14.4.1 wmma.load: .a/.b take .f16/.bf16/.s8/.u8, .c takes .f16/.f32/.s32";
const S_WMMA_REGS: &str =
    "9.7.14.2 matrix fragments for wmma: registers per fragment by shape and type";
const S_LDST_HINT: &str =
    "9.7.9.8 ld / 9.7.9.11 st: the cache-policy operand comes with .L2::cache_hint";
const S_MBAR_CLUSTER: &str =
    "9.7.13.15.13 mbarrier.arrive: with .shared::cluster the state destination is the sink _";
const S_BOOL_C: &str = "9.7.5.1 set / 9.7.5.2 setp: a boolean operation .and, .or or .xor combines with the predicate c";
const S_TENSORMAP_FENCE: &str = "9.7.13.4 fence.proxy.tensormap: the acquire form names the address and the size, the release form none";
const S_MBAR_COUNT: &str =
    "9.7.13.15.14 mbarrier.arrive_drop: .noComplete and .expect_tx take the count operand";
const S_IM2COL: &str = "9.7.9.27.1.2 cp.async.bulk.tensor: .im2col modes take 3d, 4d or 5d tensors";
const S_IM2COL_OFFSETS: &str = "9.7.9.27.1.2 cp.async.bulk.tensor: im2colOffsets holds .dim - 2 values (ptxas 13.0: \"Argument vector size mismatch\")";
const S_BULK_SIZE: &str = "9.7.9.25.4.1-3 cp.async.bulk, cp.reduce.async.bulk, cp.async.bulk.prefetch: size is a multiple of 16 (ptxas 13.0: in 0..=1048560)";
/// A bulk copy's byte count (PTX ISA 9.7.9.25.4: "a multiple of 16"; ptxas 13.0 bounds it by
/// 2^20 - 16 and takes 0).
const BULK_SIZE: Values = Values::Step {
    lo: 0,
    hi: 1_048_560,
    step: 16,
};
const S_SCALE_VEC: &str = "9.7.16.10.9 tcgen05.mma: .scale_vec::1X with kind::mxf8f6f4, 2X with kind::mxf4, 2X or 4X with kind::mxf4nvf4";
const S_TC_LANES: &str = "9.7.16.10.9 tcgen05.mma: disable-output-lane is 4 registers (cta_group::1) or 8 (cta_group::2)";
const S_ST_ASYNC: &str =
    "9.7.9.12 st.async: .mmio with .release and a scope, .release with a scope";
const INTS: &[&str] = &["u16", "u32", "u64", "s16", "s32", "s64"];
const UINTS: &[&str] = &["u16", "u32", "u64"];
const FLOATS: &[&str] = &["f32", "f64"];
const ORDERED: &[&str] = &["lt", "le", "gt", "ge"];
const UNSIGNED_CMP: &[&str] = &["lo", "ls", "hi", "hs"];
const FLOAT_CMP: &[&str] = &[
    "equ", "neu", "ltu", "leu", "gtu", "geu", "num", "nan", "ftz",
];
const SET_ORDERED_TYPES: &[&str] = &["u16", "u32", "u64", "s16", "s32", "s64", "f32", "f64"];

/// wmma register counts of one shape and type (PTX ISA 9.7.14.2): `matrix` is `a`, `b`, `c` or
/// `d`, `operand` its position.
const fn wmma(
    form: Form,
    operand: usize,
    matrix: &'static [&'static str],
    ty: &'static [&'static str],
    n: usize,
) -> Rule {
    regs(
        form,
        operand,
        "the fragment",
        matrix,
        Some(TypeIs {
            position: 0,
            types: ty,
        }),
        Count::Fixed(n),
        S_WMMA_REGS,
    )
}

/// wmma input-fragment register counts of one shape (PTX ISA 9.7.14.2): `matrix` (`a` or `b`) at
/// `operand` holds `n` registers with the shape `shape`.
const fn wmma_in(
    form: Form,
    operand: usize,
    matrix: &'static str,
    shape: &'static [&'static str],
    n: usize,
) -> Rule {
    regs(
        form,
        operand,
        matrix,
        shape,
        None,
        Count::Fixed(n),
        S_WMMA_REGS,
    )
}

/// Every rule, by row.
pub static RULES: &[Rule] = &[
    // ld/st: the cache-policy operand comes with .L2::cache_hint (PTX ISA 9.7.9.8, 9.7.9.11;
    // ptxas: "Arguments mismatch").
    operand_with(Form::Ld, "policy", "L2::cache_hint", S_LDST_HINT),
    operand_with(Form::LdOrdered, "policy", "L2::cache_hint", S_LDST_HINT),
    operand_with(Form::LdGlobalNc, "policy", "L2::cache_hint", S_LDST_HINT),
    operand_with(Form::St, "policy", "L2::cache_hint", S_LDST_HINT),
    operand_with(Form::StOrdered, "policy", "L2::cache_hint", S_LDST_HINT),
    // PTX ISA 9.7.9.8: .volatile applies to .global, .shared and generic addresses (ptxas:
    // "Modifier '.volatile' cannot be applied to '.param' space").
    excludes(
        Form::Ld,
        &["volatile"],
        &["param"],
        "9.7.9.8 ld: .volatile on .global, .shared and generic addresses",
    ),
    // PTX ISA 9.7.9.8 / 9.7.9.11: `ld.volatile{.ss}{.level::prefetch_size}{.vec}.type` and
    // `st.volatile{.ss}{.vec}.type` take no cache operator (ptxas: "Modifier '.volatile' cannot
    // be combined with modifier '.ca'").
    excludes(Form::Ld, &["volatile"], LD_COP, S_VOLATILE_COP),
    excludes(Form::St, &["volatile"], ST_COP, S_VOLATILE_COP),
    // mbarrier (PTX ISA 9.7.13.15.13/14): an arrival on a .shared::cluster barrier returns no
    // state; .noComplete brings the count, .expect_tx the transaction count.
    sink_with(Form::MbarrierArrive, 0, "shared::cluster", S_MBAR_CLUSTER),
    sink_with(
        Form::MbarrierArriveDrop,
        0,
        "shared::cluster",
        S_MBAR_CLUSTER,
    ),
    sink_with(
        Form::MbarrierArriveExpectTx,
        0,
        "shared::cluster",
        S_MBAR_CLUSTER,
    ),
    // PTX ISA 9.7.13.4: the acquire form of fence.proxy.tensormap names the address and the
    // size; the release form names none.
    operand_with(
        Form::FenceProxyTensormap,
        "[addr]",
        "acquire",
        S_TENSORMAP_FENCE,
    ),
    operand_with(
        Form::FenceProxyTensormap,
        "size",
        "acquire",
        S_TENSORMAP_FENCE,
    ),
    operands_with(Form::MbarrierArriveDrop, "noComplete", 3, S_MBAR_COUNT),
    operands_with(Form::MbarrierArriveDrop, "expect_tx", 3, S_MBAR_COUNT),
    // PTX ISA 9.7.16.10.10: the CTA mask comes with .multicast::cluster.
    operand_with(
        Form::Tcgen05Commit,
        "ctaMask",
        "multicast::cluster",
        "9.7.16.10.10 tcgen05.commit: ctaMask with .multicast::cluster",
    ),
    // PTX ISA 9.7.9.27.1.2/9.7.9.27.1.3: the im2col modes address tensors of 3 to 5 dimensions.
    needs(
        Form::TmaStore,
        "im2col_no_offs",
        &["3d", "4d", "5d"],
        S_IM2COL,
    ),
    needs(
        Form::TmaReduce,
        "im2col_no_offs",
        &["3d", "4d", "5d"],
        S_IM2COL,
    ),
    // PTX ISA 9.7.16.10.9: the scale vector sizes of each block-scaled kind (ptxas: "Modifier
    // '.kind::mxf4' cannot be combined with modifier '.scale_vec::1X'").
    excludes(
        Form::Tcgen05MmaBlockScale,
        &["kind::mxf8f6f4"],
        &["scale_vec::2X", "scale_vec::4X"],
        S_SCALE_VEC,
    ),
    excludes(
        Form::Tcgen05MmaBlockScale,
        &["kind::mxf4"],
        &["scale_vec::1X", "scale_vec::4X"],
        S_SCALE_VEC,
    ),
    excludes(
        Form::Tcgen05MmaBlockScale,
        &["kind::mxf4nvf4"],
        &["scale_vec::1X"],
        S_SCALE_VEC,
    ),
    // PTX ISA 9.7.16.10.9: disable-output-lane is 4 registers with .cta_group::1, 8 with
    // .cta_group::2 (ptxas 13.0: "Argument vector size mismatch for instruction 'tcgen05.mma'").
    regs(
        Form::Tcgen05Mma,
        4,
        "disable-output-lane",
        &["cta_group::1"],
        None,
        Count::Fixed(4),
        S_TC_LANES,
    ),
    regs(
        Form::Tcgen05Mma,
        4,
        "disable-output-lane",
        &["cta_group::2"],
        None,
        Count::Fixed(8),
        S_TC_LANES,
    ),
    // ptxas 13.0: "Modifier '.kind::mxf4nvf4' requires modifier '.scale_vectorsize'" (the
    // .block32 default of PTX 8.8 is not one of its sizes).
    needs(
        Form::Tcgen05MmaBlockScale,
        "kind::mxf4nvf4",
        &["scale_vec::2X", "scale_vec::4X"],
        S_SCALE_VEC,
    ),
    // PTX ISA 9.7.9.12: `st.async{.mmio}.sem.scope` (ptxas 13.0: "Modifier '.mmio' requires
    // modifier '.release'", "Modifier '.release' requires scope", "Modifier '.mmio' requires
    // scope").
    needs(Form::StAsyncGlobal, "mmio", &["release"], S_ST_ASYNC),
    needs(Form::StAsyncGlobal, "mmio", &["gpu", "sys"], S_ST_ASYNC),
    needs(Form::StAsyncGlobal, "release", &["gpu", "sys"], S_ST_ASYNC),
    // set/setp: which comparison goes with which source type (PTX ISA 9.7.5.1, 9.7.5.2).
    type_for(Form::Set, UNSIGNED_CMP, 1, UINTS, S_SET),
    type_for(Form::Set, FLOAT_CMP, 1, FLOATS, S_SET),
    type_for(Form::Set, ORDERED, 1, SET_ORDERED_TYPES, S_SET),
    type_for(Form::SetpInt, UNSIGNED_CMP, 0, UINTS, S_SET),
    type_for(Form::SetpInt, ORDERED, 0, INTS, S_SET),
    // cp.reduce.async.bulk (PTX ISA 9.7.9.25.4.2) and red.async (9.7.13.7): each operation's
    // types.
    needs(Form::CpReduceBulk, "and", &["b32", "b64"], S_CP_RED),
    needs(Form::CpReduceBulk, "or", &["b32", "b64"], S_CP_RED),
    needs(Form::CpReduceBulk, "xor", &["b32", "b64"], S_CP_RED),
    needs(
        Form::CpReduceBulk,
        "add",
        &["u32", "s32", "u64", "f32", "f64"],
        S_CP_RED,
    ),
    needs(Form::CpReduceBulk, "inc", &["u32"], S_CP_RED),
    needs(Form::CpReduceBulk, "dec", &["u32"], S_CP_RED),
    needs(Form::CpReduceBulkCluster, "and", &["b32", "b64"], S_CP_RED),
    needs(Form::CpReduceBulkCluster, "or", &["b32", "b64"], S_CP_RED),
    needs(Form::CpReduceBulkCluster, "xor", &["b32", "b64"], S_CP_RED),
    needs(
        Form::CpReduceBulkCluster,
        "add",
        &["u32", "s32", "u64"],
        S_CP_RED,
    ),
    needs(Form::CpReduceBulkCluster, "inc", &["u32"], S_CP_RED),
    needs(Form::CpReduceBulkCluster, "dec", &["u32"], S_CP_RED),
    needs(Form::RedAsync, "and", &["b32"], S_RED_ASYNC),
    needs(Form::RedAsync, "or", &["b32"], S_RED_ASYNC),
    needs(Form::RedAsync, "xor", &["b32"], S_RED_ASYNC),
    needs(Form::RedAsync, "add", &["u32", "s32", "u64"], S_RED_ASYNC),
    needs(Form::RedAsync, "inc", &["u32"], S_RED_ASYNC),
    needs(Form::RedAsync, "dec", &["u32"], S_RED_ASYNC),
    needs(Form::RedAsync, "min", &["u32", "s32"], S_RED_ASYNC),
    needs(Form::RedAsync, "max", &["u32", "s32"], S_RED_ASYNC),
    // mma.m16n8k16 (PTX ISA 9.7.14.5.14): bf16 with f32 accumulators, and the fragments.
    excludes(Form::MmaF16, &["bf16"], &["f16"], S_MMA_BF16),
    frag(Form::MmaF16, 0, "d", ty(0, &["f32"]), 4, S_MMA_REGS),
    frag(Form::MmaF16, 0, "d", ty(0, &["f16"]), 2, S_MMA_REGS),
    frag(Form::MmaF16, 1, "a", None, 4, S_MMA_REGS),
    frag(Form::MmaF16, 2, "b", None, 2, S_MMA_REGS),
    frag(Form::MmaF16, 3, "c", ty(3, &["f32"]), 4, S_MMA_REGS),
    frag(Form::MmaF16, 3, "c", ty(3, &["f16"]), 2, S_MMA_REGS),
    excludes(Form::MmaM16n8k8, &["bf16"], &["f16"], S_MMA_BF16),
    frag(Form::MmaM16n8k8, 0, "d", ty(0, &["f32"]), 4, S_MMA_K8_REGS),
    frag(Form::MmaM16n8k8, 0, "d", ty(0, &["f16"]), 2, S_MMA_K8_REGS),
    frag(Form::MmaM16n8k8, 1, "a", None, 2, S_MMA_K8_REGS),
    frag(Form::MmaM16n8k8, 2, "b", None, 1, S_MMA_K8_REGS),
    frag(Form::MmaM16n8k8, 3, "c", ty(3, &["f32"]), 4, S_MMA_K8_REGS),
    frag(Form::MmaM16n8k8, 3, "c", ty(3, &["f16"]), 2, S_MMA_K8_REGS),
    // wgmma accumulators (PTX ISA 9.7.15.5.1): N/2 32-bit or N/4 packed f16 registers.
    excludes(Form::WgmmaF16, &["bf16"], &["f16"], S_WGMMA_BF16),
    regs(
        Form::WgmmaF16,
        0,
        "d",
        &[],
        ty(0, &["f32"]),
        Count::Scaled {
            token: "m64n*k16",
            mul: 1,
            div: 2,
        },
        S_WGMMA_REGS,
    ),
    regs(
        Form::WgmmaF16,
        0,
        "d",
        &[],
        ty(0, &["f16"]),
        Count::Scaled {
            token: "m64n*k16",
            mul: 1,
            div: 4,
        },
        S_WGMMA_REGS,
    ),
    regs(
        Form::WgmmaTf32,
        0,
        "d",
        &[],
        None,
        Count::Scaled {
            token: "m64n*k8",
            mul: 1,
            div: 2,
        },
        S_WGMMA_REGS,
    ),
    regs(
        Form::WgmmaF8,
        0,
        "d",
        &[],
        ty(0, &["f32"]),
        Count::Scaled {
            token: "m64n*k32",
            mul: 1,
            div: 2,
        },
        S_WGMMA_REGS,
    ),
    regs(
        Form::WgmmaF8,
        0,
        "d",
        &[],
        ty(0, &["f16"]),
        Count::Scaled {
            token: "m64n*k32",
            mul: 1,
            div: 4,
        },
        S_WGMMA_REGS,
    ),
    regs(
        Form::WgmmaI8,
        0,
        "d",
        &[],
        None,
        Count::Scaled {
            token: "m64n*k32",
            mul: 1,
            div: 2,
        },
        S_WGMMA_REGS,
    ),
    frag(Form::WgmmaF16, 1, "a", None, 4, S_WGMMA_REGS),
    // PTX ISA 9.7.15.5.2: `.f16`/`.bf16` wgmma writes `imm-trans-a, imm-trans-b` after the scales
    // (only `imm-trans-b` with A in registers); 9.7.15.6.2 the same for `.sp`.
    Rule {
        form: Form::WgmmaF16,
        check: Check::Transposes {
            a: 1,
            with_descriptor: 8,
        },
        section: "9.7.15.5.2 wgmma.mma_async: imm-trans-a and imm-trans-b of .f16/.bf16",
    },
    Rule {
        form: Form::WgmmaSpF16,
        check: Check::Transposes {
            a: 1,
            with_descriptor: 10,
        },
        section: "9.7.15.6.2 wgmma.mma_async.sp: imm-trans-a and imm-trans-b of .f16/.bf16",
    },
    frag(Form::WgmmaTf32, 1, "a", None, 4, S_WGMMA_REGS),
    frag(Form::WgmmaF8, 1, "a", None, 4, S_WGMMA_REGS),
    frag(Form::WgmmaI8, 1, "a", None, 4, S_WGMMA_REGS),
    // ldmatrix/stmatrix (PTX ISA 9.7.14.5.15/16): one register per 8x8 matrix.
    regs(
        Form::Ldmatrix,
        0,
        "d",
        &["x1"],
        None,
        Count::Fixed(1),
        S_LDMATRIX,
    ),
    regs(
        Form::Ldmatrix,
        0,
        "d",
        &["x2"],
        None,
        Count::Fixed(2),
        S_LDMATRIX,
    ),
    regs(
        Form::Ldmatrix,
        0,
        "d",
        &["x4"],
        None,
        Count::Fixed(4),
        S_LDMATRIX,
    ),
    regs(
        Form::LdmatrixB8,
        0,
        "d",
        &["x1"],
        None,
        Count::Fixed(2),
        S_LDMATRIX,
    ),
    regs(
        Form::LdmatrixB8,
        0,
        "d",
        &["x2"],
        None,
        Count::Fixed(4),
        S_LDMATRIX,
    ),
    regs(
        Form::Stmatrix,
        1,
        "r",
        &["x1"],
        None,
        Count::Fixed(1),
        S_STMATRIX,
    ),
    regs(
        Form::Stmatrix,
        1,
        "r",
        &["x2"],
        None,
        Count::Fixed(2),
        S_STMATRIX,
    ),
    regs(
        Form::Stmatrix,
        1,
        "r",
        &["x4"],
        None,
        Count::Fixed(4),
        S_STMATRIX,
    ),
    regs(
        Form::StmatrixB8,
        1,
        "r",
        &["x1"],
        None,
        Count::Fixed(1),
        S_STMATRIX,
    ),
    regs(
        Form::StmatrixB8,
        1,
        "r",
        &["x2"],
        None,
        Count::Fixed(2),
        S_STMATRIX,
    ),
    regs(
        Form::StmatrixB8,
        1,
        "r",
        &["x4"],
        None,
        Count::Fixed(4),
        S_STMATRIX,
    ),
    // cp.async.bulk.tensor .im2col (PTX ISA 9.7.9.27.1.2): .dim - 2 offsets.
    regs(
        Form::TmaLoadIm2col,
        3,
        "im2colOffsets",
        &["3d"],
        None,
        Count::Fixed(1),
        S_IM2COL_OFFSETS,
    ),
    regs(
        Form::TmaLoadIm2col,
        3,
        "im2colOffsets",
        &["4d"],
        None,
        Count::Fixed(2),
        S_IM2COL_OFFSETS,
    ),
    regs(
        Form::TmaLoadIm2col,
        3,
        "im2colOffsets",
        &["5d"],
        None,
        Count::Fixed(3),
        S_IM2COL_OFFSETS,
    ),
    // PTX ISA 9.7.9.12 gives `st.async.vN` a vector of N, 9.7.11.2 `sust.vN`; ptxas 13.0 accepts
    // one register there (sm_90 to sm_120a).
    Rule {
        form: Form::StAsync,
        check: Check::OneForVector,
        section: "9.7.9.12 st.async: .v2/.v4 write a vector (ptxas 13.0 takes one register)",
    },
    Rule {
        form: Form::Sust,
        check: Check::OneForVector,
        section: "9.7.11.2 sust: .v2/.v4 write a vector (ptxas 13.0 takes one register)",
    },
    // PTX ISA 9.7.9.25.4.1 writes a global address, 64-bit under `.address_size 64`; ptxas 13.0
    // refuses a 32-bit register there on sm_120 and sm_120a ("Arguments mismatch for instruction
    // 'mov'"), where sm_90 and sm_100a take it.
    Rule {
        form: Form::CpAsyncBulkG2S,
        check: Check::Address64On {
            operand: 1,
            when: &["shared::cluster"],
            sm: 120,
        },
        section: "9.7.9.25.4.1 cp.async.bulk: the global source is a 64-bit address (ptxas 13.0 on sm_120)",
    },
    // The byte count of every non-tensor bulk copy (PTX ISA 9.7.9.25.4).
    imm(Form::CpAsyncBulkG2S, 2, "size", &[], BULK_SIZE, S_BULK_SIZE),
    imm(Form::CpAsyncBulkS2G, 2, "size", &[], BULK_SIZE, S_BULK_SIZE),
    imm(Form::CpAsyncBulkS2S, 2, "size", &[], BULK_SIZE, S_BULK_SIZE),
    imm(Form::CpReduceBulk, 2, "size", &[], BULK_SIZE, S_BULK_SIZE),
    imm(
        Form::CpReduceBulkCluster,
        2,
        "size",
        &[],
        BULK_SIZE,
        S_BULK_SIZE,
    ),
    imm(
        Form::CpAsyncBulkPrefetch,
        1,
        "size",
        &[],
        BULK_SIZE,
        S_BULK_SIZE,
    ),
    // tcgen05.ld/st (PTX ISA 9.7.16.8.3/4): .num repetitions of the shape's registers.
    regs(
        Form::Tcgen05Ld,
        0,
        "r",
        &["32x32b"],
        None,
        Count::Scaled {
            token: "x*",
            mul: 1,
            div: 1,
        },
        S_TC_REGS,
    ),
    regs(
        Form::Tcgen05Ld,
        0,
        "r",
        &["16x64b"],
        None,
        Count::Scaled {
            token: "x*",
            mul: 1,
            div: 1,
        },
        S_TC_REGS,
    ),
    regs(
        Form::Tcgen05Ld,
        0,
        "r",
        &["16x128b"],
        None,
        Count::Scaled {
            token: "x*",
            mul: 2,
            div: 1,
        },
        S_TC_REGS,
    ),
    regs(
        Form::Tcgen05Ld,
        0,
        "r",
        &["16x256b"],
        None,
        Count::Scaled {
            token: "x*",
            mul: 4,
            div: 1,
        },
        S_TC_REGS,
    ),
    regs(
        Form::Tcgen05Ld16x32bx2,
        0,
        "r",
        &[],
        None,
        Count::Scaled {
            token: "x*",
            mul: 1,
            div: 1,
        },
        S_TC_REGS,
    ),
    regs(
        Form::Tcgen05St,
        1,
        "r",
        &["32x32b"],
        None,
        Count::Scaled {
            token: "x*",
            mul: 1,
            div: 1,
        },
        S_TC_REGS,
    ),
    regs(
        Form::Tcgen05St,
        1,
        "r",
        &["16x64b"],
        None,
        Count::Scaled {
            token: "x*",
            mul: 1,
            div: 1,
        },
        S_TC_REGS,
    ),
    regs(
        Form::Tcgen05St,
        1,
        "r",
        &["16x128b"],
        None,
        Count::Scaled {
            token: "x*",
            mul: 2,
            div: 1,
        },
        S_TC_REGS,
    ),
    regs(
        Form::Tcgen05St,
        1,
        "r",
        &["16x256b"],
        None,
        Count::Scaled {
            token: "x*",
            mul: 4,
            div: 1,
        },
        S_TC_REGS,
    ),
    regs(
        Form::Tcgen05St16x32bx2,
        2,
        "r",
        &[],
        None,
        Count::Scaled {
            token: "x*",
            mul: 1,
            div: 1,
        },
        S_TC_REGS,
    ),
    // wmma (PTX ISA 9.7.14.4.1/9.7.14.2): which matrix takes which type, and the fragments (256
    // elements of A/B/C of m16n16k16 over 32 threads; f16 A/B are eight .f16x2 in every shape).
    needs(Form::WmmaLoad, "f32", &["c"], S_WMMA_TYPES),
    needs(Form::WmmaLoad, "s32", &["c"], S_WMMA_TYPES),
    needs(Form::WmmaLoad, "bf16", &["a", "b"], S_WMMA_TYPES),
    needs(Form::WmmaLoad, "s8", &["a", "b"], S_WMMA_TYPES),
    needs(Form::WmmaLoad, "u8", &["a", "b"], S_WMMA_TYPES),
    wmma(Form::WmmaLoad, 0, &["a"], &["f16"], 8),
    wmma(Form::WmmaLoad, 0, &["b"], &["f16"], 8),
    wmma(Form::WmmaLoad, 0, &["c"], &["f16"], 4),
    wmma(Form::WmmaLoad, 0, &["c"], &["f32", "s32"], 8),
    wmma(Form::WmmaLoad, 0, &["a", "m16n16k16"], &["bf16"], 4),
    wmma(Form::WmmaLoad, 0, &["b", "m16n16k16"], &["bf16"], 4),
    wmma(Form::WmmaLoad, 0, &["a", "m8n32k16"], &["bf16"], 2),
    wmma(Form::WmmaLoad, 0, &["b", "m8n32k16"], &["bf16"], 8),
    wmma(Form::WmmaLoad, 0, &["a", "m32n8k16"], &["bf16"], 8),
    wmma(Form::WmmaLoad, 0, &["b", "m32n8k16"], &["bf16"], 2),
    wmma(Form::WmmaLoad, 0, &["a", "m16n16k16"], &["s8", "u8"], 2),
    wmma(Form::WmmaLoad, 0, &["b", "m16n16k16"], &["s8", "u8"], 2),
    wmma(Form::WmmaLoad, 0, &["a", "m8n32k16"], &["s8", "u8"], 1),
    wmma(Form::WmmaLoad, 0, &["b", "m8n32k16"], &["s8", "u8"], 4),
    wmma(Form::WmmaLoad, 0, &["a", "m32n8k16"], &["s8", "u8"], 4),
    wmma(Form::WmmaLoad, 0, &["b", "m32n8k16"], &["s8", "u8"], 1),
    wmma(Form::WmmaStore, 1, &[], &["f16"], 4),
    wmma(Form::WmmaStore, 1, &[], &["f32", "s32"], 8),
    wmma(Form::WmmaMma, 0, &[], &["f16"], 4),
    wmma(Form::WmmaMma, 0, &[], &["f32"], 8),
    frag(Form::WmmaMma, 1, "a", None, 8, S_WMMA_REGS),
    frag(Form::WmmaMma, 2, "b", None, 8, S_WMMA_REGS),
    frag(Form::WmmaMma, 3, "c", ty(1, &["f16"]), 4, S_WMMA_REGS),
    frag(Form::WmmaMma, 3, "c", ty(1, &["f32"]), 8, S_WMMA_REGS),
    // The fragments of the integer, .bf16, .tf32 and .f64 shapes (PTX ISA 9.7.14.2).
    frag(Form::WmmaMmaInt, 0, "d", None, 8, S_WMMA_REGS),
    frag(Form::WmmaMmaInt, 3, "c", None, 8, S_WMMA_REGS),
    wmma_in(Form::WmmaMmaInt, 1, "a", &["m16n16k16"], 2),
    wmma_in(Form::WmmaMmaInt, 2, "b", &["m16n16k16"], 2),
    wmma_in(Form::WmmaMmaInt, 1, "a", &["m8n32k16"], 1),
    wmma_in(Form::WmmaMmaInt, 2, "b", &["m8n32k16"], 4),
    wmma_in(Form::WmmaMmaInt, 1, "a", &["m32n8k16"], 4),
    wmma_in(Form::WmmaMmaInt, 2, "b", &["m32n8k16"], 1),
    frag(Form::WmmaMmaBf16, 0, "d", None, 8, S_WMMA_REGS),
    frag(Form::WmmaMmaBf16, 3, "c", None, 8, S_WMMA_REGS),
    wmma_in(Form::WmmaMmaBf16, 1, "a", &["m16n16k16"], 4),
    wmma_in(Form::WmmaMmaBf16, 2, "b", &["m16n16k16"], 4),
    wmma_in(Form::WmmaMmaBf16, 1, "a", &["m8n32k16"], 2),
    wmma_in(Form::WmmaMmaBf16, 2, "b", &["m8n32k16"], 8),
    wmma_in(Form::WmmaMmaBf16, 1, "a", &["m32n8k16"], 8),
    wmma_in(Form::WmmaMmaBf16, 2, "b", &["m32n8k16"], 2),
    frag(Form::WmmaMmaTf32, 0, "d", None, 8, S_WMMA_REGS),
    frag(Form::WmmaMmaTf32, 1, "a", None, 4, S_WMMA_REGS),
    frag(Form::WmmaMmaTf32, 2, "b", None, 4, S_WMMA_REGS),
    frag(Form::WmmaMmaTf32, 3, "c", None, 8, S_WMMA_REGS),
    frag(Form::WmmaMmaF64, 0, "d", None, 2, S_WMMA_REGS),
    frag(Form::WmmaMmaF64, 1, "a", None, 1, S_WMMA_REGS),
    frag(Form::WmmaMmaF64, 2, "b", None, 1, S_WMMA_REGS),
    frag(Form::WmmaMmaF64, 3, "c", None, 2, S_WMMA_REGS),
    needs(Form::WmmaLoadTf32, "tf32", &["a", "b"], S_WMMA_TYPES),
    needs(Form::WmmaLoadTf32, "f32", &["c"], S_WMMA_TYPES),
    wmma(Form::WmmaLoadTf32, 0, &["a"], &["tf32"], 4),
    wmma(Form::WmmaLoadTf32, 0, &["b"], &["tf32"], 4),
    wmma(Form::WmmaLoadTf32, 0, &["c"], &["f32"], 8),
    wmma(Form::WmmaLoadF64, 0, &["a"], &["f64"], 1),
    wmma(Form::WmmaLoadF64, 0, &["b"], &["f64"], 1),
    wmma(Form::WmmaLoadF64, 0, &["c"], &["f64"], 2),
    wmma(Form::WmmaStoreTf32, 1, &[], &["f32"], 8),
    wmma(Form::WmmaStoreF64, 1, &[], &["f64"], 2),
    // PTX ISA 9.7.1.1/9.7.1.2: "Saturation modifier ... Applies only to .s32 type."
    needs(
        Form::AddInt,
        "sat",
        &["s32"],
        "9.7.1.1 add: .sat applies only to .s32",
    ),
    needs(
        Form::SubInt,
        "sat",
        &["s32"],
        "9.7.1.2 sub: .sat applies only to .s32",
    ),
    // PTX ISA 9.7.1.4: ".sat ... applies only to .s32 type in .hi mode".
    needs(
        Form::MadInt,
        "sat",
        &["s32"],
        "9.7.1.4 mad: .sat applies only to .s32 in .hi mode",
    ),
    needs(
        Form::MadInt,
        "sat",
        &["hi"],
        "9.7.1.4 mad: .sat applies only to .s32 in .hi mode",
    ),
    needs(
        Form::Mad24,
        "sat",
        &["s32"],
        "9.7.1.6 mad24: .sat applies only to .s32 in .hi mode",
    ),
    needs(
        Form::Mad24,
        "sat",
        &["hi"],
        "9.7.1.6 mad24: .sat applies only to .s32 in .hi mode",
    ),
    // PTX ISA 9.7.9.16/9.7.9.17: the size operand is 128.
    imm(
        Form::Applypriority,
        1,
        "size",
        &[],
        Values::List(&[128]),
        "9.7.9.16 applypriority: size is 128",
    ),
    imm(
        Form::Discard,
        1,
        "size",
        &[],
        Values::List(&[128]),
        "9.7.9.17 discard: size is 128",
    ),
    operand_with(Form::CpReduceBulk, "policy", "L2::cache_hint", S_HINT),
    // PTX ISA 9.7.1.3/9.7.1.4: `.wide` doubles the width, so it takes 16- and 32-bit types.
    needs(
        Form::MulInt,
        "wide",
        &["u16", "u32", "s16", "s32"],
        "9.7.1.3 mul: .wide on 16- and 32-bit types",
    ),
    needs(
        Form::MadInt,
        "wide",
        &["u16", "u32", "s16", "s32"],
        "9.7.1.4 mad: .wide on 16- and 32-bit types",
    ),
    // Cache qualifiers on global (and generic) accesses only.
    excludes(Form::Ld, CACHE_QUALIFIERS, NOT_GLOBAL, S_CACHE),
    excludes(Form::LdOrdered, CACHE_QUALIFIERS, NOT_GLOBAL, S_CACHE),
    excludes(Form::St, CACHE_QUALIFIERS, NOT_GLOBAL, S_CACHE),
    excludes(Form::StOrdered, CACHE_QUALIFIERS, NOT_GLOBAL, S_CACHE),
    // redux.sync (PTX ISA 9.7.13.11): the bitwise operations on .b32, the arithmetic ones on
    // .u32/.s32 (ptxas agrees).
    needs(Form::ReduxSync, "and", &["b32"], S_REDUX),
    needs(Form::ReduxSync, "or", &["b32"], S_REDUX),
    needs(Form::ReduxSync, "xor", &["b32"], S_REDUX),
    needs(Form::ReduxSync, "add", &["u32", "s32"], S_REDUX),
    needs(Form::ReduxSync, "min", &["u32", "s32"], S_REDUX),
    needs(Form::ReduxSync, "max", &["u32", "s32"], S_REDUX),
    Rule {
        form: Form::Cvt,
        check: Check::CvtRounding,
        section: "9.7.9.21 cvt: rounding modifiers (integer rounding float to integer; float rounding integer to float and to a narrower float, illegal in all other instances; none between integers)",
    },
    // PTX ISA 9.7.9.21: "Modifier .ftz can only be specified when either .dtype or .atype is
    // .f32" (ptxas: "Modifier '.ftz' does not apply to this type of convert operation").
    Rule {
        form: Form::Cvt,
        check: Check::CvtFtz,
        section: "9.7.9.21 cvt: .ftz only when .dtype or .atype is .f32",
    },
    // PTX ISA 9.7.9.21: `.relu` on a bf16 conversion rounds to nearest or toward zero only.
    needs(
        Form::CvtBf16F32,
        "relu",
        &["rn", "rz"],
        "9.7.9.21 cvt: .relu with .rn or .rz (ptxas: \"Illegal rounding modifier\")",
    ),
    // PTX ISA 9.7.9.21: `cvt.frnd2{.relu}{.satfinite}.bf16.f32`, .frnd2 = .rn, .rz.
    needs(
        Form::CvtBf16F32,
        "satfinite",
        &["rn", "rz"],
        "9.7.9.21 cvt: .satfinite with .rn or .rz (ptxas: \"Modifier '.satfinite' cannot be combined with modifier '.rm'\")",
    ),
    // PTX ISA 9.7.9.21: `cvt.frnd2{.satfinite}{.relu}.tf32.f32` (.frnd2 = .rn, .rz) takes
    // `.relu`; `cvt.rna{.satfinite}.tf32.f32` does not.
    needs(
        Form::CvtTf32F32,
        "relu",
        &["rn", "rz"],
        "9.7.9.21 cvt: .relu to .tf32 with .rn or .rz (ptxas: \"Modifier '.relu' cannot be combined with modifier '.rna'\")",
    ),
    // Operands that modifiers bring, and the tensor's rank.
    operand_with(Form::CpAsyncBulkG2S, "mask", "multicast::cluster", S_HINT),
    operand_with(Form::CpAsyncBulkG2S, "policy", "L2::cache_hint", S_HINT),
    operand_with(Form::CpAsyncBulkS2G, "policy", "L2::cache_hint", S_HINT),
    operand_with(
        Form::CpAsyncBulkPrefetch,
        "policy",
        "L2::cache_hint",
        S_HINT,
    ),
    operand_with(Form::TmaLoad, "mask", "multicast::cluster", S_HINT),
    operand_with(Form::TmaLoad, "policy", "L2::cache_hint", S_HINT),
    operand_with(Form::TmaLoadIm2col, "mask", "multicast::cluster", S_HINT),
    operand_with(Form::TmaLoadIm2col, "policy", "L2::cache_hint", S_HINT),
    operand_with(Form::TmaStore, "policy", "L2::cache_hint", S_HINT),
    operand_with(Form::TmaReduce, "policy", "L2::cache_hint", S_HINT),
    operand_with(Form::TmaPrefetch, "offsets", "im2col", S_HINT),
    operand_with(Form::TmaPrefetch, "policy", "L2::cache_hint", S_HINT),
    rank(Form::TmaLoad, S_RANK),
    rank(Form::TmaLoadIm2col, S_RANK),
    rank(Form::TmaStore, S_RANK),
    rank(Form::TmaReduce, S_RANK),
    rank(Form::TmaPrefetch, S_RANK),
    // Multicast writes other CTAs, so its destination is `.shared::cluster` (PTX ISA 9.7.9.25.4.1,
    // 9.7.9.27.1.2: the `.shared::cta` forms have no `.multicast`).
    needs(
        Form::CpAsyncBulkG2S,
        "multicast::cluster",
        &["shared::cluster"],
        "9.7.9.25.4.1 cp.async.bulk: .multicast::cluster with a .shared::cluster destination",
    ),
    needs(
        Form::TmaLoad,
        "multicast::cluster",
        &["shared::cluster"],
        S_TMA_MC,
    ),
    needs(
        Form::TmaLoadIm2col,
        "multicast::cluster",
        &["shared::cluster"],
        S_TMA_MC,
    ),
    // tensormap.replace: each field has one width (ptxas 13.0 agrees; PTX ISA 9.7.9,
    // tensormap.replace, and 5.5.9 Tensor-map fields).
    needs(Form::TensormapReplace, "global_address", &["b64"], S_TMR),
    needs(Form::TensormapReplace, "rank", &["b32"], S_TMR),
    needs(Form::TensormapReplaceOrd, "box_dim", &["b32"], S_TMR),
    needs(Form::TensormapReplaceOrd, "global_dim", &["b32"], S_TMR),
    needs(Form::TensormapReplaceOrd, "global_stride", &["b64"], S_TMR),
    needs(Form::TensormapReplaceOrd, "element_stride", &["b32"], S_TMR),
    // PTX ISA 9.7.13, tensormap.cp_fenceproxy: "The operand size ... must be 128".
    imm(
        Form::TensormapCpFenceproxy,
        2,
        "size",
        &[],
        Values::List(&[128]),
        "9.7.13 tensormap.cp_fenceproxy: size is 128",
    ),
    // wgmma shapes (PTX ISA 9.7.15.5.1).
    number(Form::WgmmaF16, "m64n*k16", &[], WGMMA_N, S_WGMMA),
    number(Form::WgmmaTf32, "m64n*k8", &[], WGMMA_N, S_WGMMA),
    number(Form::WgmmaF8, "m64n*k32", &[], WGMMA_N, S_WGMMA),
    number(Form::WgmmaI8, "m64n*k32", &[], WGMMA_N_I8, S_WGMMA),
    // tcgen05.ld/st `.num` (PTX ISA 9.7.16.8.3/4): .x1 up to 128 32-bit registers per thread.
    number(
        Form::Tcgen05Ld,
        "x*",
        &["16x64b"],
        Values::Pow2 { lo: 1, hi: 128 },
        S_TC_LD,
    ),
    number(
        Form::Tcgen05Ld,
        "x*",
        &["16x128b"],
        Values::Pow2 { lo: 1, hi: 64 },
        S_TC_LD,
    ),
    number(
        Form::Tcgen05Ld,
        "x*",
        &["16x256b"],
        Values::Pow2 { lo: 1, hi: 32 },
        S_TC_LD,
    ),
    number(
        Form::Tcgen05Ld,
        "x*",
        &["32x32b"],
        Values::Pow2 { lo: 1, hi: 128 },
        S_TC_LD,
    ),
    number(
        Form::Tcgen05Ld16x32bx2,
        "x*",
        &[],
        Values::Pow2 { lo: 1, hi: 128 },
        S_TC_LD,
    ),
    number(
        Form::Tcgen05St,
        "x*",
        &["16x64b"],
        Values::Pow2 { lo: 1, hi: 128 },
        S_TC_ST,
    ),
    number(
        Form::Tcgen05St,
        "x*",
        &["16x128b"],
        Values::Pow2 { lo: 1, hi: 64 },
        S_TC_ST,
    ),
    number(
        Form::Tcgen05St,
        "x*",
        &["16x256b"],
        Values::Pow2 { lo: 1, hi: 32 },
        S_TC_ST,
    ),
    number(
        Form::Tcgen05St,
        "x*",
        &["32x32b"],
        Values::Pow2 { lo: 1, hi: 128 },
        S_TC_ST,
    ),
    number(
        Form::Tcgen05St16x32bx2,
        "x*",
        &[],
        Values::Pow2 { lo: 1, hi: 128 },
        S_TC_ST,
    ),
    imm(
        Form::Tcgen05Alloc,
        1,
        "column count",
        &[],
        Values::Pow2 { lo: 32, hi: 512 },
        S_TC_ALLOC,
    ),
    imm(
        Form::Tcgen05Dealloc,
        1,
        "column count",
        &[],
        Values::Pow2 { lo: 32, hi: 512 },
        S_TC_ALLOC,
    ),
    // cp.async copy sizes (PTX ISA 9.7.9.25.3.1): 4, 8 or 16 bytes with .ca; 16 with .cg.
    imm(
        Form::CpAsync,
        2,
        "copy size",
        &["ca"],
        Values::List(&[4, 8, 16]),
        "9.7.9.25.3.1 cp.async: cp-size 4, 8 or 16 with .ca",
    ),
    imm(
        Form::CpAsync,
        2,
        "copy size",
        &["cg"],
        Values::List(&[16]),
        "9.7.9.25.3.1 cp.async: cp-size 16 with .cg",
    ),
    // setmaxnreg (PTX ISA 9.7.19.5): 24..=256, a multiple of 8.
    imm(
        Form::Setmaxnreg,
        0,
        "register count",
        &[],
        Values::Step {
            lo: 24,
            hi: 256,
            step: 8,
        },
        "9.7.19.5 setmaxnreg: imm-reg-count in 24..=256, a multiple of 8",
    ),
    // Named barriers (PTX ISA 9.7.13.1).
    imm(Form::BarSync, 0, "barrier number", &[], range(0, 15), S_BAR),
    imm(
        Form::BarArrive,
        0,
        "barrier number",
        &[],
        range(0, 15),
        S_BAR,
    ),
    imm(
        Form::BarRedPopc,
        1,
        "barrier number",
        &[],
        range(0, 15),
        S_BAR,
    ),
    imm(
        Form::BarRedPred,
        1,
        "barrier number",
        &[],
        range(0, 15),
        S_BAR,
    ),
    imm(
        Form::BarrierSync,
        0,
        "barrier number",
        &[],
        range(0, 15),
        S_BAR,
    ),
    imm(
        Form::BarrierArrive,
        0,
        "barrier number",
        &[],
        range(0, 15),
        S_BAR,
    ),
    // PTX ISA 9.7.7.6: an 8-bit lookup table.
    imm(
        Form::Lop3,
        4,
        "lookup table",
        &[],
        range(0, 255),
        "9.7.7.6 lop3: immLut is 8 bits",
    ),
    // PTX ISA 9.7.9.6: a lane of the warp.
    imm(
        Form::ShflSync,
        2,
        "lane",
        &[],
        range(0, 31),
        "9.7.9.6 shfl.sync: b is a lane, 0..=31",
    ),
    // Pending-group counts (PTX ISA 9.7.15.6.3, 9.7.9.25.3.3, 9.7.9.25.4.5; ptxas: [0..63]).
    imm(
        Form::WgmmaWait,
        0,
        "group count",
        &[],
        range(0, 63),
        "9.7.15.6.3 wgmma.wait_group: N (ptxas: 0..=63)",
    ),
    imm(
        Form::CpAsyncWaitGroup,
        0,
        "group count",
        &[],
        range(0, 63),
        "9.7.9.25.3.3 cp.async.wait_group: N (ptxas: 0..=63)",
    ),
    imm(
        Form::CpAsyncBulkWait,
        0,
        "group count",
        &[],
        range(0, 63),
        "9.7.9.25.4.5 cp.async.bulk.wait_group: N (ptxas: 0..=63)",
    ),
];

/// Why an instruction breaks a rule of its row.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// [`ErrorKind::InvalidModifier`] or [`ErrorKind::ImmediateRange`].
    pub kind: ErrorKind,
    /// What is wrong and which section says so.
    pub message: String,
}

/// Rules of one shape over several rows, built from tables: after [`RULES`] in [`rules_of`] (no
/// row has rules in both but the [`Check::OperandWith`] ones, which are read apart, so each row's
/// rules keep their order).
static TABLED: [Rule; 57] = tabled();

/// The rows whose predicate `c` comes with a boolean operation (PTX ISA 9.7.5.1 set, 9.7.5.2
/// setp, 9.7.6.2 setp on halves), and those operations.
const BOOL_C: [Form; 6] = [
    Form::SetpInt,
    Form::SetpF32,
    Form::SetpF64,
    Form::SetpF16,
    Form::SetpBf16,
    Form::Set,
];
const BOOL_OPS: [&str; 3] = ["and", "or", "xor"];

/// mbarrier (PTX ISA 9.7.13.15): a `.sem` needs a `.scope` and a `.scope` a `.sem`. Each row with
/// its semantics.
const MBAR_SEM: [(Form, &[&str]); 7] = [
    (Form::MbarrierArriveDrop, &["release"]),
    (Form::MbarrierArrive, &["release"]),
    (Form::MbarrierArriveExpectTx, &["release"]),
    (Form::MbarrierTestWait, &["acquire"]),
    (Form::MbarrierTryWait, &["acquire"]),
    (Form::MbarrierExpectTx, &["relaxed"]),
    (Form::MbarrierCompleteTx, &["relaxed"]),
];

/// The scopes of the mbarrier operations' `.sem` (PTX ISA 9.7.13.15).
const MBAR_SCOPES: &[&str] = &["cta", "cluster"];

/// atom/red integer operations and their types (PTX ISA 9.7.13.5/9.7.13.6; ptxas: "Operation .and
/// requires .b32 or .b64"): (operation, types, whether red has it too).
const ATOM_OPS: [(&str, &[&str], bool); 10] = [
    ("and", &["b32", "b64"], true),
    ("or", &["b32", "b64"], true),
    ("xor", &["b32", "b64"], true),
    ("cas", &["b32", "b64"], false),
    ("exch", &["b32", "b64"], false),
    ("add", &["u32", "s32", "u64"], true),
    ("inc", &["u32"], true),
    ("dec", &["u32"], true),
    ("min", &["u32", "s32", "u64", "s64"], true),
    ("max", &["u32", "s32", "u64", "s64"], true),
];

/// [`TABLED`]: three rules per [`MBAR_SEM`] row, each [`ATOM_OPS`] operation of atom and of
/// red, then the [`BOOL_OPS`] that bring `c` on each [`BOOL_C`] row.
const fn tabled() -> [Rule; 57] {
    let mut out = [needs(Form::AtomInt, "", &[], ""); 57];
    let mut n = 0;
    let mut k = 0;
    while k < MBAR_SEM.len() {
        let (form, sem) = MBAR_SEM[k];
        out[n] = needs(form, sem[0], MBAR_SCOPES, S_MBAR_SEM);
        out[n + 1] = needs(form, MBAR_SCOPES[0], sem, S_MBAR_SEM);
        out[n + 2] = needs(form, MBAR_SCOPES[1], sem, S_MBAR_SEM);
        n += 3;
        k += 1;
    }
    let forms = [Form::AtomInt, Form::RedInt];
    let mut f = 0;
    while f < forms.len() {
        let mut k = 0;
        while k < ATOM_OPS.len() {
            let (op, types, red) = ATOM_OPS[k];
            if red || matches!(forms[f], Form::AtomInt) {
                out[n] = needs(forms[f], op, types, S_ATOM_OP);
                n += 1;
            }
            k += 1;
        }
        f += 1;
    }
    let mut f = 0;
    while f < BOOL_C.len() {
        let mut k = 0;
        while k < BOOL_OPS.len() {
            out[n] = operand_with(BOOL_C[f], "{!}c", BOOL_OPS[k], S_BOOL_C);
            n += 1;
            k += 1;
        }
        f += 1;
    }
    assert!(n == out.len(), "TABLED's length");
    out
}

/// The rules of `form`, in table order ([`RULES`], then the tabled and the added rows' rules).
pub fn rules_of(form: Form) -> impl Iterator<Item = &'static Rule> {
    // Indexed by row once: a scan of every rule per instruction was a third of the builder's
    // time on the GEMM kernel (issue 33).
    static BY_FORM: std::sync::LazyLock<Vec<Vec<&'static Rule>>> = std::sync::LazyLock::new(|| {
        let mut by_form = vec![Vec::new(); Form::all().len()];
        for r in RULES
            .iter()
            .chain(TABLED.iter())
            .chain(coverage::RULES.iter())
        {
            by_form[r.form as usize].push(r);
        }
        by_form
    });
    BY_FORM
        .get(form as usize)
        .map_or(&[][..], Vec::as_slice)
        .iter()
        .copied()
}

/// Whether a rule of `form` reads an immediate operand's value ([`Check::Immediate`]): the
/// other rules read of an immediate only that it is one (the validator's memo of the row checks
/// per instruction shape, issue 33).
pub(crate) fn reads_immediates(form: Form) -> bool {
    static BY_FORM: std::sync::LazyLock<Vec<bool>> = std::sync::LazyLock::new(|| {
        let mut by_form = vec![false; Form::all().len()];
        for spec in Form::all() {
            if let Some(b) = by_form.get_mut(spec.form as usize) {
                *b = rules_of(spec.form).any(|r| matches!(r.check, Check::Immediate { .. }));
            }
        }
        by_form
    });
    BY_FORM.get(form as usize).copied().unwrap_or(true)
}

/// The numbers the first `*` modifier of `form` takes when the modifiers `written` are written
/// (`Tcgen05Ld` with `["16x128b"]`: the powers of two up to 64).
pub fn number_values(form: Form, written: &[&str]) -> Option<Values> {
    rules_of(form).find_map(|r| match r.check {
        Check::Number { when, values, .. } if when.iter().all(|w| written.contains(w)) => {
            Some(values)
        }
        _ => None,
    })
}

/// The number `token` (a pattern modifier with `*`) stands for in the written modifier `m`.
fn number_in(token: &str, m: &str) -> Option<i128> {
    let (pre, post) = token.split_once('*')?;
    if !token_matches(token, m) {
        return None;
    }
    m[pre.len()..m.len() - post.len()].parse().ok()
}

fn immediate(o: Option<&Operand>) -> Option<i128> {
    match o {
        Some(Operand::Imm(Imm::UInt(v))) => Some(i128::from(*v)),
        Some(Operand::Imm(Imm::Int(v))) => Some(i128::from(*v)),
        _ => None,
    }
}

/// Whether `i` writes a modifier or a part of its mnemonic, asked of one instruction many
/// times (a builder's mnemonic may be dotted, `cp.async`; a parsed one never is, and is compared
/// whole): whether the mnemonic is dotted is read once (issue 33).
fn writer<'a>(i: &'a InstrRef<'_>) -> impl Fn(&str) -> bool + 'a {
    use crate::instr::same_word;
    let dotted = i.mnemonic.bytes().any(|b| b == b'.');
    move |m: &str| {
        i.modifiers.iter().any(|x| same_word(x, m))
            || if dotted {
                i.mnemonic.split('.').any(|x| same_word(x, m))
            } else {
                same_word(i.mnemonic, m)
            }
    }
}

/// Checks `i` (an instruction of row `form`) against the row's rules; the first broken rule.
pub fn check(form: Form, i: &InstrRef<'_>) -> Result<(), Violation> {
    let has = writer(i);
    let op = i.opcode_text();
    // `i` takes `n` operands `with` something.
    let count = |n: usize, with: &str, section: &str| {
        if i.operands.len() == n {
            return Ok(());
        }
        Err(Violation {
            kind: ErrorKind::OperandCount,
            message: format!(
                "`{op}` takes {n} operands with {with}, not {} (PTX ISA {section})",
                i.operands.len()
            ),
        })
    };
    // Register counts come last: a wrong modifier is the better message (`m64n132k16`).
    let counts = |r: &&Rule| matches!(r.check, Check::Registers { .. });
    let ordered = rules_of(form)
        .filter(|r| !counts(r))
        .chain(rules_of(form).filter(counts));
    // A selector or a negation on an operand of a row that is no video instruction.
    let video = rules_of(form).find_map(|r| match r.check {
        Check::Video(shape) => Some((shape, r.section)),
        _ => None,
    });
    if let Some(why) = video::check(video.map(|(shape, _)| shape), i) {
        return Err(Violation {
            kind: ErrorKind::OperandKind,
            message: format!(
                "`{op}`: {why} (PTX ISA {})",
                video.map_or("9.7.18 Video Instructions", |(_, s)| s)
            ),
        });
    }
    for r in ordered {
        match r.check {
            Check::Needs { modifier, with } => {
                if has(modifier) && !with.iter().any(|w| has(w)) {
                    let with: Vec<String> = with.iter().map(|w| format!(".{w}")).collect();
                    return Err(Violation {
                        kind: ErrorKind::InvalidModifier,
                        message: format!(
                            "`{op}`: .{modifier} needs {} (PTX ISA {})",
                            with.join(" or "),
                            r.section
                        ),
                    });
                }
            }
            Check::Excludes { modifiers, with } => {
                let bad = modifiers.iter().find(|m| has(m));
                let clash = with.iter().find(|w| has(w));
                if let (Some(m), Some(w)) = (bad, clash) {
                    return Err(Violation {
                        kind: ErrorKind::InvalidModifier,
                        message: format!(
                            "`{op}`: .{m} does not go with .{w} (PTX ISA {})",
                            r.section
                        ),
                    });
                }
            }
            Check::OperandWith { .. }
            | Check::Video(_)
            | Check::OneForVector
            | Check::Address64On { .. } => {}
            Check::SinkWith { operand, modifier } => {
                if has(modifier) && !matches!(i.operands.get(operand), Some(Operand::Sink)) {
                    return Err(Violation {
                        kind: ErrorKind::OperandKind,
                        message: format!(
                            "`{op}`: with .{modifier} operand {operand} is the sink `_` (PTX ISA {})",
                            r.section
                        ),
                    });
                }
            }
            // Operand counts that modifiers or `A`'s kind fix (`.noComplete`; wgmma's transposes).
            Check::Transposes { a, with_descriptor } => {
                let registers = matches!(i.operands.get(a), Some(Operand::Vector(_)));
                let n = with_descriptor - usize::from(registers);
                let from = if registers {
                    "registers"
                } else {
                    "a descriptor"
                };
                let with = format!("A from {from} (the transpose immediates are not optional)");
                count(n, &with, r.section)?;
            }
            Check::OperandsWith { modifier, n } => {
                if has(modifier) {
                    count(n, &format!(".{modifier}"), r.section)?;
                }
            }
            Check::TypeFor { modifiers, ty } => {
                if let Some(m) = modifiers.iter().find(|m| has(m)) {
                    if !type_is(i, ty) {
                        return Err(Violation {
                            kind: ErrorKind::InvalidModifier,
                            message: format!(
                                "`{op}`: .{m} needs {} (PTX ISA {})",
                                describe_type(ty),
                                r.section
                            ),
                        });
                    }
                }
            }
            Check::Registers {
                operand,
                what,
                when,
                ty,
                count,
            } => {
                if !when.iter().all(|w| has(w)) || ty.is_some_and(|t| !type_is(i, t)) {
                    continue;
                }
                // A braced list inside an address counts too (`[tex, {x, y}]`).
                let (Some(Operand::Vector(v)) | Some(Operand::Tensor { coords: v, .. })) =
                    i.operands.get(operand)
                else {
                    continue;
                };
                if let Count::AtLeast(n) = count {
                    if v.len() < n || ![1, 2, 4].contains(&v.len()) {
                        return Err(Violation {
                            kind: ErrorKind::OperandCount,
                            message: format!(
                                "`{op}`: {what} (operand {operand}) is a vector of 1, 2 or 4 holding at least {n}, not {} (PTX ISA {})",
                                v.len(),
                                r.section
                            ),
                        });
                    }
                    continue;
                }
                let want = match count {
                    Count::AtLeast(_) => None,
                    Count::Fixed(n) => Some(n),
                    Count::Scaled { token, mul, div } => i
                        .modifiers
                        .iter()
                        .find_map(|m| number_in(token, m))
                        .and_then(|n| usize::try_from(n).ok())
                        .map(|n| n * mul / div),
                };
                if let Some(want) = want {
                    if v.len() != want {
                        return Err(Violation {
                            kind: ErrorKind::OperandCount,
                            message: format!(
                                "`{op}`: {what} (operand {operand}) holds {want} registers, not {} (PTX ISA {})",
                                v.len(),
                                r.section
                            ),
                        });
                    }
                }
            }
            Check::CvtFtz => {
                let mut types = i.types();
                let f32 =
                    |t: Option<crate::types::ScalarType>| t == Some(crate::types::ScalarType::F32);
                if has("ftz") && !f32(types.next()) && !f32(types.next()) {
                    return Err(Violation {
                        kind: ErrorKind::InvalidModifier,
                        message: format!(
                            "`{op}`: .ftz needs an .f32 source or destination (PTX ISA {})",
                            r.section
                        ),
                    });
                }
            }
            Check::CvtRounding => {
                if let Some(why) = cvt_rounding(i) {
                    return Err(Violation {
                        kind: ErrorKind::InvalidModifier,
                        message: format!("`{op}`: {why} (PTX ISA {})", r.section),
                    });
                }
            }
            Check::TensorRank => {
                let dims = i.modifiers.iter().find_map(|m| {
                    let n = m.strip_suffix('d')?;
                    n.parse::<usize>().ok()
                });
                let coords = i.operands.iter().find_map(|o| match o {
                    Operand::Tensor { coords, .. } => Some(coords.len()),
                    _ => None,
                });
                if let (Some(d), Some(c)) = (dims, coords) {
                    if d != c {
                        return Err(Violation {
                            kind: ErrorKind::OperandCount,
                            message: format!(
                                "`{op}` names {c} coordinates for .{d}d (PTX ISA {})",
                                r.section
                            ),
                        });
                    }
                }
            }
            Check::Number {
                token,
                when,
                values,
            } => {
                if !when.iter().all(|w| has(w)) {
                    continue;
                }
                for m in i.modifiers {
                    if let Some(v) = number_in(token, m) {
                        if !values.contains(v) {
                            return Err(Violation {
                                kind: ErrorKind::InvalidModifier,
                                message: format!(
                                    "`{op}`: {v} in `.{m}` is not {values} (PTX ISA {})",
                                    r.section
                                ),
                            });
                        }
                    }
                }
            }
            Check::Immediate {
                operand,
                what,
                when,
                values,
            } => {
                if !when.iter().all(|w| has(w)) {
                    continue;
                }
                if let Some(v) = immediate(i.operands.get(operand)) {
                    if !values.contains(v) {
                        return Err(Violation {
                            kind: ErrorKind::ImmediateRange,
                            message: format!(
                                "{what} {v} of `{op}` is not {values} (PTX ISA {})",
                                r.section
                            ),
                        });
                    }
                }
            }
        }
    }
    operands_brought(form, i)
}

/// True when the instruction's type at `t.position` is one of `t.types`.
fn type_is(i: &InstrRef<'_>, t: TypeIs) -> bool {
    let written: Vec<&str> = i
        .modifiers
        .iter()
        .map(|m| m.as_ref())
        .filter(|m| crate::types::ScalarType::from_name(m).is_some())
        .collect();
    written.get(t.position).is_some_and(|w| t.types.contains(w))
}

/// "a .u16, .u32 or .u64 second type".
fn describe_type(t: TypeIs) -> String {
    let names: Vec<String> = t.types.iter().map(|x| format!(".{x}")).collect();
    let nth = ["first", "second", "third", "fourth"]
        .get(t.position)
        .copied()
        .unwrap_or("later");
    format!("a {} {nth} type", names.join(", "))
}

/// What is wrong with a cvt's rounding for its pair of types, if anything.
fn cvt_rounding(i: &InstrRef<'_>) -> Option<&'static str> {
    let types = i.type_list();
    let (&d, &a) = (types.first()?, types.get(1)?);
    let has = |ms: &[&str]| i.modifiers.iter().any(|m| ms.contains(&m.as_ref()));
    let int_round = has(&["rni", "rzi", "rmi", "rpi"]);
    let float_round = has(&["rn", "rz", "rm", "rp"]);
    match (d.is_float(), a.is_float()) {
        (false, true) if !int_round => Some("float to integer needs .rni, .rzi, .rmi or .rpi"),
        (true, false) if !float_round => Some("integer to float needs .rn, .rz, .rm or .rp"),
        (false, false) if int_round || float_round => Some("integer to integer takes no rounding"),
        (true, true) if d.bits() < a.bits() && !float_round => {
            Some("a narrower float needs .rn, .rz, .rm or .rp")
        }
        // "Floating-point rounding is required for float-to-float conversions that result in
        // loss of precision ... and is illegal in all other instances" (ptxas: "Illegal
        // rounding modifier for instruction 'cvt'").
        (true, true) if d.bits() > a.bits() && float_round => {
            Some("a wider float takes no .rn, .rz, .rm or .rp")
        }
        (true, true) if d.bits() != a.bits() && int_round => {
            Some("integer rounding applies between floats of one size")
        }
        (true, true) if d.bits() == a.bits() && float_round => {
            Some("floats of one size take integer rounding, not .rn, .rz, .rm or .rp")
        }
        _ => None,
    }
}

/// The optional operands that modifiers bring ([`Check::OperandWith`]): when every optional slot
/// of the row comes with a modifier, the operand count is the required ones plus those whose
/// modifier is written. Several rules may name one slot: any of their modifiers brings it
/// (`setp`'s `c` comes with `.and`, `.or` or `.xor`).
fn operands_brought(form: Form, i: &InstrRef<'_>) -> Result<(), Violation> {
    let p = form.pattern();
    // Iterators, not lists: every instruction of such a row is asked (issue 33).
    let with = || {
        rules_of(form).filter_map(|r| match r.check {
            Check::OperandWith { slot, modifier } => Some((slot, modifier, r.section)),
            _ => None,
        })
    };
    let optional = || {
        p.operands()
            .iter()
            .filter(|o| o.optional)
            .map(|o| o.name.as_str())
    };
    let Some((_, _, section)) = with().next() else {
        return Ok(());
    };
    if !optional().all(|o| with().any(|(s, _, _)| s == o)) {
        return Ok(());
    }
    let has = writer(i);
    let (required, _) = p.operand_range();
    // Per optional slot, in the pattern's order: the rule whose modifier is written, if any.
    let brought = || optional().filter_map(|o| with().find(|(s, m, _)| *s == o && has(m)));
    let want = required + brought().count();
    if i.operands.len() != want {
        let why: Vec<String> = optional()
            .map(|o| {
                let ms: Vec<String> = with()
                    .filter(|(s, _, _)| *s == o)
                    .map(|(_, m, _)| format!(".{m}"))
                    .collect();
                format!("`{o}` with {}", ms.join(" or "))
            })
            .collect();
        return Err(Violation {
            kind: ErrorKind::OperandCount,
            message: format!(
                "`{}` takes {want} operands, not {}: {} (PTX ISA {})",
                i.opcode(),
                i.operands.len(),
                why.join(", "),
                section
            ),
        });
    }
    // What a modifier brings (a cache policy, a CTA mask) is one value, after the required
    // operands in the pattern's order: `{0, 1}` there is another row's operand (an im2col form's
    // offsets).
    for (k, (slot, m, section)) in (required..).zip(brought()) {
        if !slot.starts_with('[')
            && matches!(
                i.operands.get(k),
                Some(Operand::Vector(_) | Operand::Addr(_) | Operand::Tensor { .. })
            )
        {
            return Err(Violation {
                kind: ErrorKind::OperandKind,
                message: format!(
                    "operand {k} of `{}` is `{slot}` (with .{m}): one value, not a vector or an \
                     address (PTX ISA {section})",
                    i.opcode()
                ),
            });
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_rule_names_a_modifier_its_row_has() {
        for r in RULES
            .iter()
            .chain(TABLED.iter())
            .chain(coverage::RULES.iter())
        {
            let p = r.form.pattern();
            let tokens: Vec<&str> = p
                .elements()
                .iter()
                .flat_map(|e| e.alternatives().iter().flatten())
                .map(String::as_str)
                .collect();
            let known = |m: &str| tokens.contains(&m);
            match r.check {
                Check::Needs { modifier, with } => {
                    assert!(known(modifier), "{:?}: no .{modifier}", r.form);
                    assert!(with.iter().all(|w| known(w)), "{:?}: {with:?}", r.form);
                }
                Check::Number { token, when, .. } => {
                    assert!(known(token), "{:?}: no .{token}", r.form);
                    assert!(when.iter().all(|w| known(w)), "{:?}: {when:?}", r.form);
                }
                Check::Excludes { modifiers, with } => {
                    assert!(
                        modifiers.iter().any(|m| known(m)),
                        "{:?}: {modifiers:?}",
                        r.form
                    );
                    assert!(with.iter().any(|w| known(w)), "{:?}: {with:?}", r.form);
                }
                Check::OperandWith { slot, modifier } => {
                    assert!(known(modifier), "{:?}: no .{modifier}", r.form);
                    assert!(
                        p.operands().iter().any(|o| o.optional && o.name == slot),
                        "{:?}: no optional operand {slot}",
                        r.form
                    );
                }
                Check::Transposes { a, with_descriptor } => {
                    let (lo, hi) = p.operand_range();
                    assert!(
                        a < lo && hi == with_descriptor,
                        "{:?}: {hi} operands",
                        r.form
                    );
                }
                Check::TensorRank
                | Check::CvtRounding
                | Check::CvtFtz
                | Check::Video(_)
                | Check::OneForVector => {}
                Check::Address64On { operand, when, .. } => {
                    assert!(
                        operand < p.operands().len(),
                        "{:?}: operand {operand}",
                        r.form
                    );
                    assert!(when.iter().all(|w| known(w)), "{:?}: {when:?}", r.form);
                }
                Check::SinkWith { operand, modifier } => {
                    assert!(known(modifier), "{:?}: no .{modifier}", r.form);
                    assert!(
                        operand < p.operands().len(),
                        "{:?}: operand {operand}",
                        r.form
                    );
                }
                Check::OperandsWith { modifier, n } => {
                    assert!(known(modifier), "{:?}: no .{modifier}", r.form);
                    let (lo, hi) = p.operand_range();
                    assert!((lo..=hi).contains(&n), "{:?}: {n} operands", r.form);
                }
                Check::TypeFor { modifiers, ty } => {
                    assert!(
                        modifiers.iter().any(|m| known(m)),
                        "{:?}: {modifiers:?}",
                        r.form
                    );
                    assert!(ty.types.iter().all(|t| known(t)), "{:?}: {ty:?}", r.form);
                }
                Check::Registers {
                    operand,
                    when,
                    ty,
                    count,
                    ..
                } => {
                    assert!(
                        operand < p.operands().len(),
                        "{:?}: operand {operand}",
                        r.form
                    );
                    assert!(when.iter().all(|w| known(w)), "{:?}: {when:?}", r.form);
                    if let Some(t) = ty {
                        assert!(t.types.iter().any(|x| known(x)), "{:?}: {t:?}", r.form);
                    }
                    if let Count::Scaled { token, div, .. } = count {
                        assert!(known(token) && div > 0, "{:?}: no .{token}", r.form);
                    }
                }
                Check::Immediate { operand, when, .. } => {
                    assert!(
                        operand < p.operands().len(),
                        "{:?}: operand {operand}",
                        r.form
                    );
                    assert!(when.iter().all(|w| known(w)), "{:?}: {when:?}", r.form);
                }
            }
            assert!(r.section.starts_with("9."), "{:?} cites no section", r.form);
        }
    }

    #[test]
    fn values() {
        assert!(WGMMA_N.contains(136) && !WGMMA_N.contains(132));
        assert!(WGMMA_N_I8.contains(48) && !WGMMA_N_I8.contains(40));
        assert_eq!(
            Values::Pow2 { lo: 32, hi: 512 }.all(),
            vec![32, 64, 128, 256, 512]
        );
        assert_eq!(WGMMA_N.to_string(), "a multiple of 8 in 8..=256");
    }
}
