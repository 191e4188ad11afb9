//! A configuration file of `rsmc check --config FILE`.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let _ = rsmc_spec::config::Config::from_json("c.json", text);
});
