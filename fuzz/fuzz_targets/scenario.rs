//! A scenario file: loaded (its manifests named relative to a directory that has none), and
//! compiled into a model script when it loads.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|text: &str| {
    let file = Path::new("/nonexistent/rsmc-fuzz/s.yaml");
    if let Ok(s) = rsmc_oracle::scenario::load_str(file, text) {
        let _ = rsmc_oracle::scenario::compile(&s, rsmc_spec::profile::Profile::Upstream);
    }
});
