//! A counterexample trace (`rsmc-trace/v1`) of `rsmc explore --trace FILE` and `rsmc
//! scenario --from-trace FILE`.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|text: &str| {
    let _ = rsmc_oracle::trace::parse(Path::new("t.trace.json"), text);
});
