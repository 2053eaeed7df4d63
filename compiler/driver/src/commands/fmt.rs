//! `wsel fmt`: format `.wse` files in place with `wsel_fmt`, or with `--check` only report
//! the files that would change. Files with syntax errors are left untouched and reported.

use crate::cli::FmtArgs;
use crate::source::read_source;
use crate::status::Status;

pub fn run(args: &FmtArgs) -> Status {
    let mut status = Status::Success;
    for path in &args.files {
        let text = match read_source(path) {
            Ok(text) => text,
            Err(error) => {
                eprintln!("error: cannot read `{}`: {error}", path.display());
                return Status::UsageOrIo;
            }
        };
        let formatted = match wsel_fmt::format(&text) {
            Ok(formatted) => formatted,
            Err(error) => {
                eprintln!("error: `{}`: {error}", path.display());
                eprintln!("  (run `wsel check {}` to see them)", path.display());
                status = Status::Failure;
                continue;
            }
        };
        if formatted == text {
            continue;
        }
        if args.check {
            let line = format!("would reformat {}\n", path.display());
            status = crate::stdout::print_then(&line, Status::Failure);
        } else if let Err(error) = crate::atomic::write_atomic(path, formatted.as_bytes()) {
            eprintln!("error: cannot write `{}`: {error}", path.display());
            return Status::UsageOrIo;
        }
    }
    status
}
