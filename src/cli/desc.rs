//! `ptxkit desc`: encode and decode the shared-memory matrix descriptors of wgmma (sm90) and
//! tcgen05 (sm100).
//!
//! ```text
//! ptxkit desc sm90|sm100 --addr A --lbo L --sbo S --swizzle none|32B|64B|128B [--base-offset O] [--lbo-mode 0|1]
//! ptxkit desc decode sm90|sm100 0xHEX
//! ```

use smem::SwizzleMode;
use smem::desc::sm90::WgmmaDesc;
use smem::desc::sm100::{LboMode, UmmaDesc, UmmaSwizzle};

use super::{Args, CliError, Output, ValueError};

/// Parses a decimal or `0x` hexadecimal number (underscores allowed).
pub(super) fn number(s: &str) -> Result<u64, ValueError> {
    let t = s.replace('_', "");
    let r = match t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => t.parse::<u64>(),
    };
    r.map_err(|_| ValueError::NotANumber)
}

/// [`number`] narrowed to u32.
pub(super) fn number_u32(s: &str) -> Result<u32, ValueError> {
    let n = number(s)?;
    u32::try_from(n).map_err(|_| ValueError::TooWide {
        value: n,
        field: "in 32 bits",
    })
}

/// The tcgen05 swizzle field: the four byte modes, or `128B-base32B` (code 1).
fn umma_swizzle(s: &str) -> Result<UmmaSwizzle, ValueError> {
    if s.eq_ignore_ascii_case("128b-base32b") {
        return Ok(UmmaSwizzle::B128Atom32);
    }
    s.parse::<SwizzleMode>()
        .map(UmmaSwizzle::from)
        .map_err(|e| ValueError::Unknown(e.to_string()))
}

fn umma_swizzle_name(s: UmmaSwizzle) -> String {
    match s.mode() {
        Some(m) => m.to_string(),
        None => "128B-base32B".to_string(),
    }
}

/// Runs `ptxkit desc ARGS...`.
pub fn run(args: &[String]) -> Result<Output, CliError> {
    if args.first().map(String::as_str) == Some("decode") {
        let mut rest = Args::new(&args[1..]);
        let pos = rest.positionals();
        rest.finish()?;
        return match pos.as_slice() {
            [arch, hex] => decode(arch, hex),
            _ => Err(CliError::usage(
                "usage: ptxkit desc decode sm90|sm100 0xHEX",
            )),
        };
    }
    encode(Args::new(args))
}

fn encode(mut args: Args) -> Result<Output, CliError> {
    let usage = "usage: ptxkit desc sm90|sm100 --addr A --lbo L --sbo S --swizzle MODE [--base-offset O] [--lbo-mode 0|1]";
    let addr = args.required("desc", "--addr", number_u32)?;
    let lbo = args.required("desc", "--lbo", number_u32)?;
    let sbo = args.required("desc", "--sbo", number_u32)?;
    let base_offset = args
        .parsed("--base-offset", |s| {
            let n = number(s)?;
            u8::try_from(n).map_err(|_| ValueError::TooWide {
                value: n,
                field: "the 3-bit field",
            })
        })?
        .unwrap_or(0);
    let swizzle = args.required("desc", "--swizzle", |s| Ok(s.to_string()))?;
    let lbo_mode = args.parsed("--lbo-mode", number)?;
    let pos = args.positionals();
    args.finish()?;
    let [arch] = pos.as_slice() else {
        return Err(CliError::usage(usage));
    };
    let bad_swizzle =
        |e: &dyn std::fmt::Display| CliError::usage(format!("--swizzle {swizzle}: {e}"));
    let bits = match arch.as_str() {
        "sm90" => {
            let swizzle = swizzle
                .parse::<SwizzleMode>()
                .map_err(|e| bad_swizzle(&e))?;
            if lbo_mode.is_some() {
                return Err(CliError::usage("desc: --lbo-mode exists only for sm100"));
            }
            WgmmaDesc {
                start_addr: addr,
                lbo,
                sbo,
                base_offset,
                swizzle,
            }
            .encode()
        }
        "sm100" => {
            let swizzle = umma_swizzle(&swizzle).map_err(|e| bad_swizzle(&e))?;
            let lbo_mode = match lbo_mode {
                None | Some(0) => LboMode::Relative,
                Some(1) => LboMode::Absolute,
                Some(n) => return Err(CliError::usage(format!("--lbo-mode {n}: expected 0 or 1"))),
            };
            UmmaDesc {
                start_addr: addr,
                lbo,
                sbo,
                base_offset,
                lbo_mode,
                swizzle,
            }
            .encode()
        }
        other => {
            return Err(CliError::usage(format!(
                "desc: unknown target `{other}` (expected sm90 or sm100)"
            )));
        }
    };
    let bits = bits.map_err(|e| CliError::usage(format!("desc: {e}")))?;
    Ok(format!("{bits:#018x}\n").into())
}

fn decode(arch: &str, hex: &str) -> Result<Output, CliError> {
    let bits = number(hex).map_err(|e| CliError::usage(format!("desc decode {hex}: {e}")))?;
    let line = match arch {
        "sm90" => {
            let d = WgmmaDesc::decode(bits)
                .map_err(|e| CliError::usage(format!("desc decode: {e}")))?;
            format!(
                "addr={} lbo={} sbo={} base_offset={} swizzle={}",
                d.start_addr, d.lbo, d.sbo, d.base_offset, d.swizzle
            )
        }
        "sm100" => {
            let d =
                UmmaDesc::decode(bits).map_err(|e| CliError::usage(format!("desc decode: {e}")))?;
            let mode = match d.lbo_mode {
                LboMode::Relative => 0,
                LboMode::Absolute => 1,
            };
            format!(
                "addr={} lbo={} sbo={} base_offset={} lbo_mode={} swizzle={}",
                d.start_addr,
                d.lbo,
                d.sbo,
                d.base_offset,
                mode,
                umma_swizzle_name(d.swizzle)
            )
        }
        other => {
            return Err(CliError::usage(format!(
                "desc: unknown target `{other}` (expected sm90 or sm100)"
            )));
        }
    };
    Ok(format!("{line}\n").into())
}

#[cfg(test)]
mod tests {
    use crate::cli::tests::{prints, refuses};

    #[test]
    fn encodes_the_fast_cu_descriptor() {
        prints(&[
            (
                "desc sm90 --addr 0x400 --lbo 16 --sbo 1024 --swizzle 128B",
                "0x4000004000010040\n",
            ),
            (
                "desc sm100 --addr 1024 --lbo 16 --sbo 0x400 --swizzle 128B",
                "0x4000404000010040\n",
            ),
            (
                "desc sm100 --addr 0 --lbo 0 --sbo 0 --swizzle 128B-base32B --lbo-mode 1 --base-offset 3",
                "0x2016400000000000\n",
            ),
        ]);
    }

    #[test]
    fn decodes_to_key_value_pairs() {
        prints(&[
            (
                "desc decode sm90 0x4000004000010040",
                "addr=1024 lbo=16 sbo=1024 base_offset=0 swizzle=128B\n",
            ),
            (
                "desc decode sm100 0x4000404000010040",
                "addr=1024 lbo=16 sbo=1024 base_offset=0 lbo_mode=0 swizzle=128B\n",
            ),
        ]);
    }

    #[test]
    fn bad_arguments_exit_2_with_one_line() {
        refuses(&[
            (
                "desc sm90 --addr 0x408 --lbo 16 --sbo 1024 --swizzle 128B",
                "desc: StartAddress 0x408 is not a multiple of 16 bytes",
            ),
            ("desc sm90 --addr 0 --lbo 16 --sbo 1024", ""),
            ("desc sm90 --addr 0 --lbo 16 --sbo 1024 --swizzle 16B", ""),
            (
                "desc sm90 --addr 0 --lbo 16 --sbo 1024 --swizzle 128B --lbo-mode 1",
                "",
            ),
            ("desc sm90 --addr zz --lbo 16 --sbo 1024 --swizzle 128B", ""),
            ("desc sm80 --addr 0 --lbo 16 --sbo 1024 --swizzle 128B", ""),
            (
                "desc sm90 --addr 0 --lbo 16 --sbo 1024 --swizzle 128B --bogus",
                "",
            ),
            ("desc decode sm100 0x4000004000010040", ""),
            ("desc decode sm90", ""),
            ("desc", ""),
        ]);
    }
}
