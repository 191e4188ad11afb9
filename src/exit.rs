//! Exit codes shared by every subcommand.

/// Everything checked holds.
pub const OK: i32 = 0;
/// A property is violated (or a run does not conform).
pub const VIOLATION: i32 = 1;
/// Bad usage or input (clap uses 2 for usage errors too).
pub const BAD_INPUT: i32 = 2;
/// The input is fine but too large to explore exhaustively within the state limit.
pub const TOO_LARGE: i32 = 3;
/// The local cluster (`rsmc cluster`) failed: a component did not start, or died.
pub const CLUSTER_FAILED: i32 = 4;
/// Interrupted by SIGINT or SIGTERM (the shell's convention, 128 + SIGINT).
pub const INTERRUPTED: i32 = 130;
