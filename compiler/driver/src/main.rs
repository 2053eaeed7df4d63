//! The `wsel` binary: parses the command line and hands over to one module per subcommand.

use std::process::ExitCode;

use clap::Parser;
use wsel::cli::{Cli, Command};

/// mimalloc rather than the system allocator: the simulator keeps many small per-PE
/// allocations (SRAM, send and receive arrays, send buffers) that it walks every cycle, and
/// mimalloc packs them densely (64×64 halo exchange ≈ 15% faster; BENCHMARKS.md, round 6).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let status = match cli.command {
        Command::Check(args) => wsel::commands::check::run(&args),
        Command::Run(args) => wsel::commands::run::run(&args),
        Command::Build(args) => wsel::commands::build::run(&args),
        Command::Fmt(args) => wsel::commands::fmt::run(&args),
        Command::Lsp => wsel::commands::lsp::run(),
        Command::Map(args) => wsel::commands::map::run(&args),
        Command::Import(args) => wsel::commands::import::run(&args),
        Command::Train(args) => wsel::commands::train::run(&args),
    };
    ExitCode::from(status.code())
}
