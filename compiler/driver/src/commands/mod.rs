//! One module per subcommand.

pub mod build;
pub mod check;
pub mod fmt;
pub mod import;
pub mod lsp;
pub mod map;
pub mod run;
pub mod train;
