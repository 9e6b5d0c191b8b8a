//! `ptxkit idesc`: encode a tcgen05.mma instruction descriptor.
//!
//! ```text
//! ptxkit idesc --kind f16|tf32|f8f6f4|i8 --a T --b T --d T --m M --n N
//!              [--a-major k|mn] [--b-major k|mn] [--neg-a] [--neg-b] [--saturate] [--cta-group 1|2]
//! ```

use ptx_isa::ScalarType;
use smem::Major;
use smem::desc::idesc::{CtaGroup, InstrDesc, MmaKindTc};

use super::desc::number_u32;
use super::{Args, CliError, Output, ValueError};

/// A PTX type name, with or without its dot, in any case (`bf16`, `.E4M3`).
fn dtype(s: &str) -> Result<ScalarType, ValueError> {
    s.to_ascii_lowercase()
        .parse::<ScalarType>()
        .map_err(|e| ValueError::Unknown(e.to_string()))
}

fn major(s: &str) -> Result<Major, ValueError> {
    s.parse::<Major>()
        .map_err(|e| ValueError::Unknown(e.to_string()))
}

/// Runs `ptxkit idesc ARGS...`.
pub fn run(args: &[String]) -> Result<Output, CliError> {
    let mut args = Args::new(args);
    let kind = args.required("idesc", "--kind", |s| {
        s.parse::<MmaKindTc>()
            .map_err(|e| ValueError::Unknown(e.to_string()))
    })?;
    let a = args.required("idesc", "--a", dtype)?;
    let b = args.required("idesc", "--b", dtype)?;
    let d = args.required("idesc", "--d", dtype)?;
    let m = args.required("idesc", "--m", number_u32)?;
    let n = args.required("idesc", "--n", number_u32)?;
    let a_major = args.parsed("--a-major", major)?.unwrap_or(Major::K);
    let b_major = args.parsed("--b-major", major)?.unwrap_or(Major::K);
    let cta_group = match args.parsed("--cta-group", number_u32)? {
        None | Some(1) => CtaGroup::One,
        Some(2) => CtaGroup::Two,
        Some(g) => return Err(CliError::usage(format!("--cta-group {g}: expected 1 or 2"))),
    };
    let desc = InstrDesc {
        a_major,
        b_major,
        cta_group,
        negate_a: args.flag("--neg-a"),
        negate_b: args.flag("--neg-b"),
        saturate: args.flag("--saturate"),
        ..InstrDesc::new(kind, a, b, d, m, n)
    };
    if let Some(extra) = args.positionals().first() {
        return Err(CliError::usage(format!(
            "idesc: unexpected argument `{extra}`"
        )));
    }
    args.finish()?;
    let bits = desc
        .encode()
        .map_err(|e| CliError::usage(format!("idesc: {e}")))?;
    Ok(format!("{bits:#010x}\n").into())
}

#[cfg(test)]
mod tests {
    use crate::cli::tests::{prints, refuses};

    #[test]
    fn encodes_published_descriptors() {
        prints(&[
            (
                "idesc --kind f16 --a bf16 --b bf16 --d f32 --m 128 --n 256",
                "0x08400490\n",
            ),
            (
                "idesc --kind f16 --a f16 --b f16 --d f32 --m 128 --n 0x100 --neg-a",
                "0x08402010\n",
            ),
            (
                "idesc --kind f16 --a bf16 --b bf16 --d f32 --m 256 --n 256 --cta-group 2 --b-major mn",
                "0x10410490\n",
            ),
            (
                "idesc --kind i8 --a s8 --b u8 --d s32 --m 64 --n 8 --saturate",
                "0x040200a8\n",
            ),
        ]);
    }

    #[test]
    fn illegal_combinations_exit_2() {
        refuses(&[
            (
                "idesc --kind f16 --a bf16 --b bf16 --d f16 --m 128 --n 256",
                "idesc: .kind::f16 with bf16 inputs needs an f32 accumulator, got f16",
            ),
            (
                "idesc --kind f16 --a bf16 --b bf16 --d f32 --m 256 --n 256",
                "idesc: M = 256 is not legal for .kind::f16 .cta_group::1; M must be 64 or 128",
            ),
            (
                "idesc --kind tf32 --a tf32 --b tf32 --d f32 --m 128 --n 12",
                "idesc: N = 12 is not legal for .kind::tf32 .cta_group::1; N must be a multiple of 8 from 8 to 256",
            ),
            (
                "idesc --kind f4 --a bf16 --b bf16 --d f32 --m 128 --n 256",
                "",
            ),
            (
                "idesc --kind f16 --a bf16 --b bf16 --d f32 --m 128",
                "idesc: --n is required",
            ),
            (
                "idesc --kind f16 --a bf16 --b bf16 --d f32 --m 128 --n 64 --a-major t",
                "",
            ),
            (
                "idesc --kind i8 --a s8 --b s8 --d s32 --m 128 --n 64 --neg-b",
                "idesc: .kind::i8 cannot negate A or B",
            ),
            (
                "idesc --kind f16 --a bf16 --b bf16 --d f32 --m 128 --n 64 extra",
                "idesc: unexpected argument `extra`",
            ),
        ]);
    }
}
