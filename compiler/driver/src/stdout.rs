//! Standard output for tables, reports and JSON. A reader that stops reading early
//! (`wsel map … | head -1`) ends the command quietly, as it does other command-line tools;
//! any other write error (a full disk, `> /dev/full`) is an error with code E0804, never lost.

use std::io::{self, Write};

use crate::status::Status;

/// Why standard output could not take the text.
#[derive(Debug)]
pub enum StdoutError {
    /// The reader closed the pipe: nobody wants the rest.
    Closed,
    /// Anything else.
    Failed(io::Error),
}

/// Writes `text` to standard output and flushes it.
pub fn print(text: &str) -> Result<(), StdoutError> {
    let mut out = io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|error| match error.kind() {
            io::ErrorKind::BrokenPipe => StdoutError::Closed,
            _ => StdoutError::Failed(error),
        })
}

/// [`print`], then the command's status: `status` when the text was written or the reader
/// stopped reading, a failure (reported) when the write failed.
pub fn print_then(text: &str, status: Status) -> Status {
    match print(text) {
        Ok(()) | Err(StdoutError::Closed) => status,
        Err(StdoutError::Failed(error)) => {
            report(&error);
            Status::Failure
        }
    }
}

/// The message for a failed write to standard output.
pub fn message(error: &io::Error) -> String {
    format!("cannot write to standard output: {error}")
}

fn report(error: &io::Error) {
    let mut stderr = io::stderr().lock();
    // If standard error is gone too, the exit status still tells.
    let _ = writeln!(
        stderr,
        "error[{}]: {}",
        crate::run_errors::E0804,
        message(error)
    );
}
