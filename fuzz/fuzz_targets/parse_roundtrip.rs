//! Any bytes into the parser and the validator: never a panic, a hang or an unbounded allocation;
//! whatever parses prints to text that parses again to the same model (print is then stable).
#![no_main]

use libfuzzer_sys::fuzz_target;
use ptx_isa::parse::parse;
use ptx_isa::validate::{Options, validate};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let Ok(p) = parse(text) else { return };
    let _ = validate(&p.module, Some(&p.source_map), &Options::default());
    let printed = p.module.print();
    let again = parse(&printed).unwrap_or_else(|e| panic!("printed text does not parse: {e}\n{printed}"));
    assert!(again.module == p.module, "the model changed on a second parse:\n{printed}");
    assert_eq!(again.module.print(), printed, "printing is not stable");
});
