//! `wsel map`: check a file, lower its model for one batch size, map it onto a target, run the
//! static hang checks, print the placement table (or JSON) and optionally draw it as SVG.

use std::io::Write;
use std::path::{Path, PathBuf};

use wsel_ir::graph::Mode;
use wsel_lower::{RunConfig, RunMode, TargetSpec};
use wsel_map::{MapOptions, MapResult};
use wsel_sema::{Database, Diagnostic, ItemKind, Severity, SourceFile};
use wsel_target::Target;

use crate::cli::{Format, MapArgs, MapMode};
use crate::render::{render_diagnostics, summary_line};
use crate::source::{read_source, source_texts};
use crate::status::Status;

pub fn run(args: &MapArgs) -> Status {
    let mut db = Database::default();
    let file = match wsel_sema::load_program(&mut db, &args.file, &mut |p: &Path| read_source(p)) {
        Ok(file) => file,
        Err(error) => {
            eprintln!("error: cannot read `{}`: {error}", args.file.display());
            return Status::UsageOrIo;
        }
    };
    let diagnostics = wsel_sema::diagnostics(&db, file);
    if diagnostics.iter().any(|d| d.severity == Severity::Error) {
        report(&db, &diagnostics, args);
        return Status::Failure;
    }
    let run_config = wsel_lower::lower_run_config(&db, file);
    let Some(model) = pick_model(&db, file, run_config.as_ref()) else {
        eprintln!(
            "error: `{}` has no model to map (define a `model`, or a `run` item naming one)",
            args.file.display()
        );
        return Status::UsageOrIo;
    };
    let batch = args
        .batch
        .or(run_config.as_ref().and_then(|r| r.batch))
        .unwrap_or(1);
    let target = match resolve_target(args, run_config.as_ref()) {
        Ok(t) => t,
        Err(message) => {
            eprintln!("error: {message}");
            return Status::UsageOrIo;
        }
    };
    let (graph, lower_diagnostics) = wsel_lower::layer_graph(&db, model, batch);
    if lower_diagnostics
        .iter()
        .any(|d| d.severity == Severity::Error)
    {
        report(&db, &lower_diagnostics, args);
        return Status::Failure;
    }
    let request = args
        .mode
        .unwrap_or(match run_config.as_ref().and_then(|r| r.mode) {
            Some(RunMode::Pipelined) => MapMode::Pipelined,
            Some(RunMode::Streaming) => MapMode::Streaming,
            Some(RunMode::Auto) | None => MapMode::Auto,
        });
    let (result, note) = map_in_mode(&graph, &target, request);
    let Some(placement) = result.placement else {
        report(&db, &result.diagnostics, args);
        return Status::Failure;
    };
    // The static hang checks: errors stop here; warnings are shown with the human table.
    let hang = crate::pipeline::hang_checks(&db, &graph, &placement);
    if hang.iter().any(|d| d.severity == Severity::Error) {
        report(&db, &hang, args);
        return Status::Failure;
    }
    if !hang.is_empty() && args.format == Format::Human {
        report(&db, &hang, args);
    }
    match args.format {
        Format::Human => print!("{}", wsel_map::report::render(&placement)),
        Format::Json => match serde_json::to_string_pretty(&placement) {
            Ok(json) => println!("{json}"),
            Err(error) => {
                eprintln!("error: cannot serialise the placement: {error}");
                return Status::Failure;
            }
        },
    }
    if let Some(path) = &args.svg {
        let svg = wsel_map::svg::render(
            &placement,
            wsel_map::svg::SvgOptions {
                routes: args.routes,
            },
        );
        if let Err(error) = write_atomic(path, svg.as_bytes()) {
            eprintln!("error: cannot write `{}`: {error}", path.display());
            return Status::UsageOrIo;
        }
        if args.format == Format::Human {
            println!("picture: {}", path.display());
        }
    }
    if let Some(note) = note
        && args.format == Format::Human
    {
        println!("{note}");
    }
    Status::Success
}

/// Maps in the requested mode; `auto` tries pipelined first and falls back to streaming,
/// with a sentence saying why.
fn map_in_mode(
    graph: &wsel_ir::graph::LayerGraph,
    target: &Target,
    request: MapMode,
) -> (MapResult, Option<String>) {
    let options = MapOptions::default();
    match request {
        MapMode::Pipelined => (
            wsel_map::map(graph, target, Mode::Pipelined, &options),
            None,
        ),
        MapMode::Streaming => (
            wsel_map::map(graph, target, Mode::Streaming, &options),
            None,
        ),
        MapMode::Auto => {
            let pipelined = wsel_map::map(graph, target, Mode::Pipelined, &options);
            if pipelined.placement.is_some() {
                let note = "mode auto: pipelined, every layer's weights fit in its region's SRAM";
                return (pipelined, Some(note.to_string()));
            }
            let streaming = wsel_map::map(graph, target, Mode::Streaming, &options);
            if streaming.placement.is_some() {
                let why = pipelined
                    .diagnostics
                    .first()
                    .map_or_else(String::new, |d| format!(": {}", d.message));
                return (
                    streaming,
                    Some(format!("mode auto: streaming, pipelined does not map{why}")),
                );
            }
            // Neither maps: the pipelined errors explain it best.
            (pipelined, None)
        }
    }
}

/// The model the `run` item names, or else the file's only (first) model.
fn pick_model<'db>(
    db: &'db Database,
    file: SourceFile,
    run: Option<&RunConfig>,
) -> Option<wsel_sema::ItemId<'db>> {
    if let Some(run) = run
        && let Some(model) = wsel_lower::find_model(db, file, &run.model)
    {
        return Some(model);
    }
    wsel_sema::item_index(db, file)
        .iter()
        .copied()
        .find(|i| i.kind(db) == ItemKind::Model)
}

/// `--target`, else the `run` item's target, else `dev`.
fn resolve_target(args: &MapArgs, run: Option<&RunConfig>) -> Result<Target, String> {
    let spec = match (&args.target, run.and_then(|r| r.target.clone())) {
        (Some(name), _) => name.clone(),
        (None, Some(TargetSpec::Preset(name))) => name,
        (None, Some(TargetSpec::File(path))) => path.display().to_string(),
        (None, None) => "dev".to_string(),
    };
    if wsel_target::PRESET_NAMES.contains(&spec.as_str()) {
        return Target::preset(&spec).map_err(|e| e.to_string());
    }
    let path = PathBuf::from(&spec);
    if path.extension().is_some_and(|e| e == "toml") || path.exists() {
        return Target::load(&path).map_err(|e| e.to_string());
    }
    Err(format!(
        "unknown target `{spec}`: use one of {} or a path to a target .toml file",
        wsel_target::PRESET_NAMES.join(", ")
    ))
}

fn report(db: &Database, diagnostics: &[Diagnostic], args: &MapArgs) {
    let sources = source_texts(db);
    match args.format {
        Format::Json => println!(
            "{}",
            crate::json::diagnostics_to_json(diagnostics, &sources)
        ),
        Format::Human => {
            let color = args.color.use_color_on_stderr();
            let rendered = render_diagnostics(diagnostics, &sources, color);
            let errors = diagnostics
                .iter()
                .filter(|d| d.severity == Severity::Error)
                .count();
            let warnings = diagnostics.len() - errors;
            let mut stderr = std::io::stderr().lock();
            // A closed stderr is not worth a panic; the exit status still tells the outcome.
            let _ = write!(stderr, "{rendered}");
            let _ = writeln!(stderr, "{}", summary_line(errors, warnings));
        }
    }
}

/// Writes `bytes` to `path` through a temporary file in the same folder, renamed into place.
fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let parent = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent)?;
    let name = path
        .file_name()
        .ok_or_else(|| std::io::Error::other("the path names no file"))?;
    let temp = parent.join(format!(
        ".{}.{}.tmp",
        name.to_string_lossy(),
        std::process::id()
    ));
    let result = std::fs::write(&temp, bytes).and_then(|()| std::fs::rename(&temp, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&temp);
    }
    result
}
