//! The command-line interface: clap definitions only. Help text comes from these doc comments.

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

/// wsel — write, check and run programs for a simulated wafer-scale processor.
#[derive(Debug, Parser)]
#[command(name = "wsel", version, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Check .wse files and report every problem, without running anything.
    ///
    /// Exit status: 0 when no file has an error, 1 when any has, 2 when a file cannot be read
    /// or the command line is wrong.
    #[command(
        after_help = "Examples:\n  wsel check examples/digits/main.wse\n  wsel check --format json a.wse b.wse"
    )]
    Check(CheckArgs),
    /// Format .wse files in place (the same formatter as the language server).
    ///
    /// Only whitespace changes: comments and every token are kept. A file with syntax errors
    /// is left unchanged and reported. Exit status: 0 when done (with `--check`: when every
    /// file is formatted), 1 when a file has syntax errors (with `--check`: or would
    /// change), 2 when a file cannot be read or written.
    #[command(
        after_help = "Examples:\n  wsel fmt examples/digits/main.wse\n  wsel fmt --check src/*.wse"
    )]
    Fmt(FmtArgs),
    /// Run the language server on standard input and output (for editors).
    ///
    /// Diagnostics as you type, hover, go to definition, references, completion, symbols,
    /// semantic tokens, inlay hints and formatting. See `editors/` for Neovim and VS Code.
    #[command(
        after_help = "Example (Neovim):\n  vim.lsp.start({ name = 'wsel', cmd = { 'wsel', 'lsp' } })"
    )]
    Lsp,
}

#[derive(Debug, clap::Args)]
pub struct FmtArgs {
    /// The .wse files to format.
    #[arg(required = true)]
    pub files: Vec<std::path::PathBuf>,
    /// Change nothing; list the files that would change and exit with 1 if there are any.
    #[arg(long)]
    pub check: bool,
}

#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// The .wse files to check. Their imports are checked too.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// How to print diagnostics: for people, or as JSON on standard output for tools.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// When to colour the output.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Human,
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

impl ColorChoice {
    /// Whether to colour output written to standard error.
    pub fn use_color_on_stderr(self) -> bool {
        use std::io::IsTerminal;
        match self {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                std::env::var_os("NO_COLOR").is_none() && std::io::stderr().is_terminal()
            }
        }
    }
}
