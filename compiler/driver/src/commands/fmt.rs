//! `wsel fmt`: format `.wse` files in place with `wsel_fmt`, or with `--check` only report
//! the files that would change. Files with syntax errors are left untouched and reported.

use std::io::Write;
use std::path::Path;

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
            println!("would reformat {}", path.display());
            status = Status::Failure;
        } else if let Err(error) = write_atomically(path, &formatted) {
            eprintln!("error: cannot write `{}`: {error}", path.display());
            return Status::UsageOrIo;
        }
    }
    status
}

/// Writes `text` to a temporary file beside `path` and renames it over `path`, so a reader
/// never sees a half-written file.
fn write_atomically(path: &Path, text: &str) -> std::io::Result<()> {
    let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = dir
        .unwrap_or(Path::new("."))
        .join(format!(".{name}.wsel-fmt-{}", std::process::id()));
    let result = (|| {
        let mut file = std::fs::File::create(&temp)?;
        file.write_all(text.as_bytes())?;
        file.sync_all()?;
        if let Ok(meta) = std::fs::metadata(path) {
            std::fs::set_permissions(&temp, meta.permissions())?;
        }
        std::fs::rename(&temp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    result
}
