//! An observed trace (`rsmc-observed/v1`) of `rsmc oracle --observed FILE`.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|text: &str| {
    let _ = rsmc_oracle::observed::parse(Path::new("o.observed.json"), text);
});
