//! `wsel map`: check a file, lower its model for one batch size, map it onto a target, run the
//! static hang checks, print the placement table (or JSON) and optionally draw it as SVG.

use std::io::Write;
use std::path::Path;

use wsel_ir::graph::Mode;
use wsel_sema::{Database, Diagnostic, Severity};

use crate::cli::{Format, MapArgs};
use crate::inputs::batch_and_inputs;
use crate::pipeline::{
    BuildError, ModeRequest, choose_mode, choose_target, map_graph, pick_model, report_build_error,
};
use crate::render::{render_diagnostics, summary_line};
use crate::source::{read_source, source_texts};
use crate::status::Status;
use wsel_estimate::kernel_work::KernelDryRuns;
use wsel_estimate::lower_for_batch;

pub fn run(args: &MapArgs) -> Status {
    let mut db = Database::default();
    let file =
        match wsel_sema::load_program(&mut db, &args.model.file, &mut |p: &Path| read_source(p)) {
            Ok(file) => file,
            Err(error) => {
                eprintln!(
                    "error: cannot read `{}`: {error}",
                    args.model.file.display()
                );
                return Status::UsageOrIo;
            }
        };
    let diagnostics = wsel_sema::diagnostics(&db, file);
    if diagnostics.iter().any(|d| d.severity == Severity::Error) {
        report(&db, &diagnostics, args);
        return Status::Failure;
    }
    let run_config = wsel_lower::lower_run_config(&db, file);
    let model = match pick_model(&db, file, run_config.as_ref()) {
        Ok(model) => model,
        Err(error) => {
            return report_build_error(Some(&db), error, args.color.use_color_on_stderr());
        }
    };
    // The batch `wsel run` would take: the per-sample shapes of the inputs do not depend on it.
    let (shapes, _) = wsel_lower::layer_graph(&db, model, 1);
    let batch = match batch_and_inputs(&shapes, run_config.as_ref(), args.model.batch, &[], false) {
        Ok(data) => data.batch,
        Err(error) => {
            return report_build_error(Some(&db), error, args.color.use_color_on_stderr());
        }
    };
    if let Some(n) = run_config
        .as_ref()
        .and_then(|c| c.systems)
        .filter(|&n| n > 1)
    {
        // `wsel map` draws one fabric: say which, rather than ignore the setting.
        eprintln!(
            "note: the `run` item asks for {n} systems: this is the placement of one system with the whole batch of {batch}; each system of the cluster maps its own share (`--batch {}` shows system 0's)",
            batch.div_ceil(u64::from(n))
        );
    }
    let target = match choose_target(args.model.target.as_deref(), run_config.as_ref()) {
        Ok(t) => t,
        Err(error) => {
            // A target that cannot be used is a problem with the command line (exit 2).
            report_build_error(Some(&db), error, args.color.use_color_on_stderr());
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
    let request = choose_mode(args.model.mode, run_config.as_ref());
    let per_copy = &mut |b| lower_for_batch(&db, model, b);
    let staged = &|g: &wsel_ir::graph::LayerGraph| crate::pipeline::stage(&db, g);
    let fuse = !args.model.no_fuse;
    let relayed = &|g: &wsel_ir::graph::LayerGraph| crate::pipeline::pipelined(&db, g, fuse);
    let chunked = &|g: &wsel_ir::graph::LayerGraph, chunks: &[(usize, u32)]| {
        crate::pipeline::chunk(&db, g, chunks)
    };
    let parked = &|g: &wsel_ir::graph::LayerGraph| crate::pipeline::park(&db, g);
    let relaid = &|g: &wsel_ir::graph::LayerGraph, m: &[_]| crate::pipeline::relayout(&db, g, m);
    let apart = &|g: &wsel_ir::graph::LayerGraph| crate::pipeline::pipelined(&db, g, false);
    let apart_work = KernelDryRuns::new(&db, model, &target).shaped(&|g| apart(g).ok());
    let lowerings = crate::pipeline::Lowerings {
        per_copy,
        staged,
        relayed,
        chunked,
        parked,
        relaid,
        micro_order: crate::pipeline::choose_micro_order(
            args.model.micro_order.map(crate::cli::MicroOrderArg::order),
            run_config.as_ref(),
        ),
        one_region: args.model.one_region,
        unfused: fuse.then_some(crate::unfused::Unfused {
            relayed: apart,
            work: &apart_work,
        }),
    };
    let work = KernelDryRuns::new(&db, model, &target).shaped(&|g| relayed(g).ok());
    let (graph, placement, decision) = match map_graph(
        &graph,
        lowerings,
        &work,
        &target,
        request,
        args.model.copies,
    ) {
        Ok(mapped) => mapped,
        Err(BuildError::Diagnostics(diagnostics)) => {
            report(&db, &diagnostics, args);
            return Status::Failure;
        }
        Err(other) => {
            return report_build_error(Some(&db), other, args.color.use_color_on_stderr());
        }
    };
    let note = (request == ModeRequest::Auto).then(|| {
        let mode = match decision.mode {
            Mode::Pipelined => "pipelined",
            Mode::Streaming => "streaming",
        };
        format!("mode auto: {mode}, {}", decision.reason)
    });
    // The static hang checks: errors stop here; warnings are shown with the human table.
    let hang = crate::pipeline::hang_checks(&db, &graph, &placement);
    if hang.iter().any(|d| d.severity == Severity::Error) {
        report(&db, &hang, args);
        return Status::Failure;
    }
    if !hang.is_empty() && args.format == Format::Human {
        report(&db, &hang, args);
    }
    let mut out = match args.format {
        Format::Human => wsel_map::report::render(&placement),
        Format::Json => match serde_json::to_string_pretty(&placement) {
            Ok(json) => json + "\n",
            Err(error) => {
                eprintln!("error: cannot serialise the placement: {error}");
                return Status::Failure;
            }
        },
    };
    if let Some(path) = &args.svg {
        let svg = wsel_map::svg::render(
            &placement,
            wsel_map::svg::SvgOptions {
                routes: args.routes,
            },
        );
        let written = crate::png::picture(path, svg)
            .and_then(|bytes| crate::atomic::write_atomic(path, &bytes).map_err(|e| e.to_string()));
        if let Err(error) = written {
            eprintln!(
                "error[{}]: cannot write `{}`: {error}",
                crate::run_errors::E0804,
                path.display()
            );
            return Status::UsageOrIo;
        }
        if args.format == Format::Human {
            out.push_str(&format!("picture: {}\n", path.display()));
        }
    }
    if let Some(note) = note
        && args.format == Format::Human
    {
        out.push_str(&format!("{note}\n"));
    }
    if let Some(note) = &decision.sizes_note
        && args.format == Format::Human
    {
        out.push_str(&format!("note: {note}\n"));
    }
    crate::stdout::print_then(&out, Status::Success)
}

fn report(db: &Database, diagnostics: &[Diagnostic], args: &MapArgs) {
    let sources = source_texts(db);
    match args.format {
        Format::Json => {
            let json = crate::json::diagnostics_to_json(diagnostics, &sources);
            // The exit status says the program has errors whether or not anyone reads them.
            let _ = crate::stdout::print_then(&format!("{json}\n"), Status::Failure);
        }
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
