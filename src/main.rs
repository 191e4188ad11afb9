//! `rsmc`: model checking and conformance testing of the Kubernetes ReplicaSet controller.

mod check;
mod exit;

use clap::{Parser, Subcommand};
use rsmc_spec::profile::Profile;
use std::path::PathBuf;

/// The model checker clones and drops millions of small maps and strings; mimalloc roughly
/// halves the time the system allocator takes for that.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Parser)]
#[command(
    name = "rsmc",
    version,
    about = "A model-checked specification and test oracle for the Kubernetes ReplicaSet controller"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Explore every interleaving within the configuration's bounds and check the properties.
    Check(CheckArgs),
}

/// Arguments of `rsmc check`.
#[derive(clap::Args, Debug)]
pub struct CheckArgs {
    /// Behaviour profile: which Kubernetes version the spec follows.
    #[arg(long, default_value = "k8s-1.20")]
    pub profile: Profile,
    /// A preset (small, default, deep) or a JSON file overriding one.
    #[arg(long, default_value = "default")]
    pub config: String,
    /// Checker threads (default: all cores).
    #[arg(long)]
    pub threads: Option<usize>,
    /// Print the report as JSON on stdout.
    #[arg(long)]
    pub json: bool,
    /// Where counterexample traces go.
    #[arg(long, default_value = "target/rsmc")]
    pub out: PathBuf,
}

fn main() {
    let cli = Cli::parse();
    let code = match cli.command {
        Command::Check(args) => check::run(&args),
    };
    std::process::exit(code);
}
