//! A Kubernetes manifest file (one or more YAML documents), as `apply` steps read it.
#![no_main]
use libfuzzer_sys::fuzz_target;
use std::path::Path;

fuzz_target!(|text: &str| {
    if let Ok(docs) = rsmc_oracle::yaml::load_str(Path::new("m.yaml"), text) {
        for doc in docs.iter().filter(|d| !d.value().is_null()) {
            let _ =
                rsmc_oracle::manifest::from_document(doc, rsmc_oracle::manifest::Validation::Api);
        }
    }
});
