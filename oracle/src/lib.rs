//! rsmc-oracle
