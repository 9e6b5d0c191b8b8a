//! Issue 33: `ptxkit check` and `ptxkit fmt` against ptxas 13.0 on a corpus of real modules.
//! `tools/corpus/gen.sh` makes one, a folder per generator (nvcc, NVRTC, Triton, numba, tinygrad,
//! clang, LLVM, ptxkit; see the script); any other folder of `.ptx` files can be named by
//! `PTX_CORPUS`. The counts are reported per generator (the first folder under the corpus).
//! Ignored by default (the corpus is generated, not committed):
//!
//! ```text
//! tools/corpus/gen.sh
//! PTXAS=target/tools/ptxas cargo test -p ptx-isa --test corpus -- --ignored --nocapture
//! ```
//!
//! ptxas judges each file; `check` must reject every file ptxas rejects and accept the files
//! ptxas accepts (the misses are listed by their first error), `fmt`'s reprint of every file
//! ptxas accepts must assemble, and on every seventh one to the same machine code (the cubin's
//! `.text` sections), byte for byte.
//! AGREEMENT.md records the numbers.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use ptx_isa::validate::{Options, Severity, check};

fn ptx_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            ptx_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "ptx") {
            out.push(p);
        }
    }
}

/// The `-arch` ptxas compiles a module for: its own target (`compute_XX` is `sm_XX`), or sm_75,
/// the oldest ptxas 13.0 compiles, for an older one.
fn arch_of(text: &str) -> String {
    let target = text
        .lines()
        .find_map(|l| l.trim().strip_prefix(".target "))
        .and_then(|t| t.split([',', ' ']).next())
        .unwrap_or("sm_75")
        .replace("compute_", "sm_");
    let sm: u32 = target
        .trim_start_matches("sm_")
        .trim_end_matches(['a', 'f'])
        .parse()
        .unwrap_or(75);
    if sm < 75 { "sm_75".into() } else { target }
}

/// The cubin ptxas makes of `text`, or `None` when it refuses it. A module that declares an
/// `.extern .func` is for a linker (numba links its fp16 helpers so): ptxas judges it as
/// relocatable code (`-c`), where an unresolved function is no error.
fn assemble(ptxas: &Path, text: &str, scratch: &Path) -> Option<Vec<u8>> {
    std::fs::write(scratch, text).unwrap();
    let cubin = scratch.with_extension("cubin");
    let relocatable = text.contains(".extern .func");
    let ok = Command::new(ptxas)
        .args(["-arch", &arch_of(text)])
        .args(relocatable.then_some("-c"))
        .arg(scratch)
        .arg("-o")
        .arg(&cubin)
        .output()
        .is_ok_and(|o| o.status.success());
    let out = ok.then(|| std::fs::read(&cubin).ok()).flatten();
    let _ = std::fs::remove_file(&cubin);
    out
}

/// The machine code of a cubin: its `.text.*` sections (ELF64: the section headers at `e_shoff`,
/// names in the `e_shstrndx` section), by name. The line tables (`-lineinfo`, `-G`) map the PTX's
/// own lines, which a reprint moves, so they are left out.
fn code(cubin: &[u8]) -> Vec<(String, Vec<u8>)> {
    let at = |o: usize, n: usize| -> u64 {
        let mut b = [0u8; 8];
        b[..n].copy_from_slice(&cubin[o..o + n]);
        u64::from_le_bytes(b)
    };
    let (shoff, shentsize) = (at(0x28, 8) as usize, at(0x3a, 2) as usize);
    let (shnum, shstrndx) = (at(0x3c, 2) as usize, at(0x3e, 2) as usize);
    let header = |k: usize| shoff + k * shentsize;
    let strtab = at(header(shstrndx) + 0x18, 8) as usize;
    let mut out = Vec::new();
    for k in 0..shnum {
        let h = header(k);
        let name_at = strtab + at(h, 4) as usize;
        let end = cubin[name_at..].iter().position(|&b| b == 0).unwrap_or(0);
        let name = String::from_utf8_lossy(&cubin[name_at..name_at + end]).into_owned();
        if name.starts_with(".text.") {
            let (off, size) = (at(h + 0x18, 8) as usize, at(h + 0x20, 8) as usize);
            out.push((name, cubin[off..off + size].to_vec()));
        }
    }
    out
}

/// An error message with its names and numbers blanked, to group files by cause.
fn cause(message: &str) -> String {
    let mut out = String::new();
    let mut quoted = false;
    for c in message.chars() {
        match c {
            '`' => {
                quoted = !quoted;
                out.push_str(if quoted { "`" } else { "…`" });
            }
            _ if quoted => {}
            c if c.is_ascii_digit() => {
                if !out.ends_with('#') {
                    out.push('#');
                }
            }
            c => out.push(c),
        }
    }
    out
}

#[test]
#[ignore = "needs a generated corpus (tools/corpus/gen.sh) and ptxas"]
fn corpus_agrees_with_ptxas() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let dir = std::env::var_os("PTX_CORPUS").map_or(root.join("target/corpus"), PathBuf::from);
    let ptxas = PathBuf::from(std::env::var_os("PTXAS").expect("PTXAS names ptxas 13.0"));
    let mut files = Vec::new();
    ptx_files(&dir, &mut files);
    files.sort();
    assert!(!files.is_empty(), "no .ptx files under {}", dir.display());
    let scratch = std::env::temp_dir().join(format!("ptxkit-corpus-{}.ptx", std::process::id()));
    let (mut accepted, mut passed, mut rejected, mut caught) = (0, 0, 0, 0);
    // Per generator: [ptxas accepts, check passes, ptxas rejects, check rejects].
    let mut by_generator: BTreeMap<String, [usize; 4]> = BTreeMap::new();
    let mut false_rejections: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut false_acceptances = Vec::new();
    let mut reprints_refused = Vec::new();
    // Every seventh file ptxas accepts: the reprint's machine code is the original's, byte for byte.
    let (mut compared, mut cubins_differ) = (0, Vec::new());
    for (n, f) in files.iter().enumerate() {
        let text = std::fs::read_to_string(f).unwrap();
        let name = f.strip_prefix(&dir).unwrap_or(f).display().to_string();
        let cubin = assemble(&ptxas, &text, &scratch);
        let ok = cubin.is_some();
        let diags = check(&text, &Options::default());
        let first_error = diags.iter().find(|d| d.severity == Severity::Error);
        let generator = name.split('/').next().unwrap_or_default().to_string();
        let counts = by_generator.entry(generator).or_default();
        counts[if ok { 0 } else { 2 }] += 1;
        counts[1] += usize::from(ok && first_error.is_none());
        counts[3] += usize::from(!ok && first_error.is_some());
        match (ok, first_error) {
            (true, None) => {
                accepted += 1;
                passed += 1;
            }
            (true, Some(e)) => {
                accepted += 1;
                false_rejections
                    .entry(cause(&e.message))
                    .or_default()
                    .push(format!("{name}: {e}"));
            }
            (false, None) => {
                rejected += 1;
                false_acceptances.push(name.clone());
            }
            (false, Some(_)) => {
                rejected += 1;
                caught += 1;
            }
        }
        // `fmt` of a file either side takes must assemble.
        if ok || first_error.is_none() {
            if let Ok(p) = ptx_isa::parse::parse(&text) {
                match (&cubin, assemble(&ptxas, &p.module.print(), &scratch)) {
                    (Some(_), None) => reprints_refused.push(name.clone()),
                    (Some(a), Some(b)) if n % 7 == 0 => {
                        compared += 1;
                        // Debug code (`-G`, numba's `debug=True`) included: the `-G` modules'
                        // differences listed until session 15 were `[%SP+0]` printed `[%SP]`
                        // (kept now); every debug module compared equal in session 15.
                        if code(a) != code(&b) {
                            cubins_differ.push(name.clone());
                        }
                    }
                    _ => {}
                }
            }
        }
    }
    let _ = std::fs::remove_file(&scratch);
    eprintln!("{} files under {}", files.len(), dir.display());
    eprintln!(
        "ptxas accepts {accepted}: check passes {passed} ({:.1}%)",
        100.0 * passed as f64 / accepted.max(1) as f64
    );
    eprintln!("ptxas rejects {rejected}: check rejects {caught}");
    eprintln!("{} generators:", by_generator.len());
    for (g, [acc, pass, rej, caught]) in &by_generator {
        eprintln!(
            "  {g:12} ptxas accepts {acc:4}, check passes {pass:4}; ptxas rejects {rej:3}, check rejects {caught:3}"
        );
    }
    let mut causes: Vec<_> = false_rejections.iter().collect();
    causes.sort_by_key(|(_, v)| std::cmp::Reverse(v.len()));
    for (c, v) in causes {
        eprintln!("  {:4} files: {c}\n         e.g. {}", v.len(), v[0]);
    }
    for f in &false_acceptances {
        eprintln!("  accepted, ptxas rejects: {f}");
    }
    for f in &reprints_refused {
        eprintln!("  fmt's reprint refused by ptxas: {f}");
    }
    eprintln!(
        "fmt's reprint: {} of {compared} sampled cubins with the same machine code",
        compared - cubins_differ.len()
    );
    for f in &cubins_differ {
        eprintln!("  reprint's machine code differs: {f}");
    }
    assert!(
        passed * 100 >= accepted * 99,
        "{passed} of the {accepted} files ptxas accepts pass check: below 99%"
    );
    assert!(
        false_acceptances.is_empty(),
        "{} files ptxas rejects pass check",
        false_acceptances.len()
    );
    assert!(
        reprints_refused.is_empty(),
        "{} reprints do not assemble",
        reprints_refused.len()
    );
    assert!(
        cubins_differ.is_empty(),
        "{} reprints assemble to other machine code",
        cubins_differ.len()
    );
}
