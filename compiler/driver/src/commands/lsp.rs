//! `wsel lsp`: serve the Language Server Protocol on standard input and output. The exit
//! status is the specification's: 0 after `shutdown` then `exit` (or when the input closes),
//! 1 for `exit` without `shutdown`.

use crate::status::Status;

pub fn run() -> Status {
    match wsel_lsp::run_stdio() {
        Ok(ending) if ending.code() == 0 => Status::Success,
        Ok(_) => Status::Failure,
        Err(error) => {
            eprintln!("error: the language server stopped: {error}");
            Status::Failure
        }
    }
}
