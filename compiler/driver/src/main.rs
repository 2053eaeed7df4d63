//! The `wsel` binary: parses the command line and hands over to one module per subcommand.

use std::process::ExitCode;

use clap::Parser;
use wsel::cli::{Cli, Command};

fn main() -> ExitCode {
    let cli = Cli::parse();
    let status = match cli.command {
        Command::Check(args) => wsel::commands::check::run(&args),
        Command::Run(args) => wsel::commands::run::run(&args),
        Command::Build(args) => wsel::commands::build::run(&args),
        Command::Fmt(args) => wsel::commands::fmt::run(&args),
        Command::Lsp => wsel::commands::lsp::run(),
        Command::Map(args) => wsel::commands::map::run(&args),
    };
    ExitCode::from(status.code())
}
