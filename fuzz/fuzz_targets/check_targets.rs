//! Any bytes into `ptxkit check` (`validate::check`) as if the module named another target: the
//! first byte picks the target of `Options::target` (or none), the rest is the text. Every target's
//! gating runs on whatever parses; never a panic or a hang.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ptx_isa::Target;
use ptx_isa::validate::{Options, check};

fuzz_target!(|data: &[u8]| {
    let Some((&pick, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    let target = Target::ALL.get(usize::from(pick)).copied();
    let _ = check(text, &Options { target });
});
