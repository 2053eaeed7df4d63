//! `wsel lsp`: serve the Language Server Protocol on standard input and output.

use crate::status::Status;

pub fn run() -> Status {
    match wsel_lsp::run_stdio() {
        Ok(()) => Status::Success,
        Err(error) => {
            eprintln!("error: the language server stopped: {error}");
            Status::Failure
        }
    }
}
