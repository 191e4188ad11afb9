//! rsmc-conformance
