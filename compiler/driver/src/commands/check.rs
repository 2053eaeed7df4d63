//! `wsel check`: load each file with its imports, run the front end, check the `param` files
//! the models name (`wsel-data`), print the diagnostics.

use std::io::Write;
use std::path::Path;

use wsel_sema::{Database, Diagnostic, Severity};

use crate::cli::{CheckArgs, Format};
use crate::render::{SourceTexts, render_diagnostics, summary_line};
use crate::source::{read_source, source_texts};
use crate::status::Status;

pub fn run(args: &CheckArgs) -> Status {
    let mut db = Database::default();
    let mut diagnostics: Vec<Diagnostic> = Vec::new();
    let mut seen: std::collections::HashSet<Diagnostic> = Default::default();
    for path in &args.files {
        let file = match wsel_sema::load_program(&mut db, path, &mut |p: &Path| read_source(p)) {
            Ok(file) => file,
            Err(error) => {
                eprintln!("error: cannot read `{}`: {error}", path.display());
                return Status::UsageOrIo;
            }
        };
        for diagnostic in crate::pipeline::all_diagnostics(&db, file) {
            if seen.insert(diagnostic.clone()) {
                diagnostics.push(diagnostic);
            }
        }
    }
    let sources = source_texts(&db);
    let errors = count(&diagnostics, Severity::Error);
    let warnings = count(&diagnostics, Severity::Warning);
    let status = if errors > 0 {
        Status::Failure
    } else {
        Status::Success
    };
    match args.format {
        Format::Human => {
            print_human(&diagnostics, &sources, args, errors, warnings);
            status
        }
        Format::Json => {
            let json = crate::json::diagnostics_to_json(&diagnostics, &sources);
            crate::stdout::print_then(&format!("{json}\n"), status)
        }
    }
}

fn print_human(
    diagnostics: &[Diagnostic],
    sources: &SourceTexts,
    args: &CheckArgs,
    errors: usize,
    warnings: usize,
) {
    let color = args.color.use_color_on_stderr();
    let rendered = render_diagnostics(diagnostics, sources, color);
    let mut stderr = std::io::stderr().lock();
    // A closed stderr is not worth a panic; the exit status still tells the outcome.
    let _ = write!(stderr, "{rendered}");
    let files = args.files.len();
    let _ = writeln!(
        stderr,
        "{} in {files} file{}",
        summary_line(errors, warnings),
        if files == 1 { "" } else { "s" }
    );
}

fn count(diagnostics: &[Diagnostic], severity: Severity) -> usize {
    diagnostics
        .iter()
        .filter(|d| d.severity == severity)
        .count()
}
