//! `wsel build`: everything `wsel run` does before simulating — check, lower the model for the
//! batch, map it, run the static hang checks, compile every kernel instance — and print the
//! layer graph, the kernel IR or the placement on request.

use wsel_sema::Severity;

use crate::cli::{BuildArgs, Emit};
use crate::pipeline::{
    BuildError, choose_backend, choose_mode, choose_target, compile_layers, cost_model,
    hang_checks, load_and_check, map_graph, pick_model, report_build_error,
};
use crate::status::Status;

pub fn run(args: &BuildArgs) -> Status {
    let color = args.color.use_color_on_stderr();
    let loaded = match load_and_check(&args.file) {
        Ok(loaded) => loaded,
        Err(failure) => return report_build_error(failure.db.as_ref(), failure.error, color),
    };
    match build(&loaded, args) {
        Ok(text) => {
            print!("{text}");
            Status::Success
        }
        Err(error) => report_build_error(Some(&loaded.db), error, color),
    }
}

fn build(loaded: &crate::pipeline::Loaded, args: &BuildArgs) -> Result<String, BuildError> {
    let db = &loaded.db;
    let config = wsel_lower::lower_run_config(db, loaded.file);
    let model = pick_model(db, loaded.file, config.as_ref()).map_err(BuildError::Message)?;
    let batch = args
        .batch
        .or(config.as_ref().and_then(|c| c.batch))
        .unwrap_or(1);
    let (graph, diagnostics) = wsel_lower::layer_graph(db, model, batch);
    if !diagnostics.is_empty() {
        return Err(BuildError::Diagnostics(diagnostics));
    }
    let target =
        choose_target(args.target.as_deref(), config.as_ref()).map_err(BuildError::Message)?;
    let (placement, decision) =
        map_graph(&graph, &target, choose_mode(args.mode, config.as_ref()))?;
    let hang = hang_checks(db, &graph, &placement);
    if hang.iter().any(|d| d.severity == Severity::Error) {
        return Err(BuildError::Diagnostics(hang));
    }
    let backend = choose_backend(args.backend).map_err(BuildError::Message)?;
    let compiled = compile_layers(db, &placement, backend, &cost_model(&target))?;

    let mut out = String::new();
    for emit in &args.emit {
        match emit {
            Emit::Graph => out.push_str(&wsel_ir::print_graph::print_graph(&graph)),
            Emit::Ir => {
                for ir in &compiled.irs {
                    out.push_str(&wsel_ir::print::print_kernel(ir));
                }
            }
            Emit::Placement => {
                let json = serde_json::to_string_pretty(&placement).map_err(|e| {
                    BuildError::Message(format!("cannot serialise the placement: {e}"))
                })?;
                out.push_str(&json);
                out.push('\n');
            }
        }
    }
    if args.emit.is_empty() {
        let mode = match decision.mode {
            wsel_ir::graph::Mode::Pipelined => "pipelined",
            wsel_ir::graph::Mode::Streaming => "streaming",
        };
        out.push_str(&format!(
            "built `{}` for batch {batch} on {}: {} layers on {} PEs, {mode} mode ({}), {} kernel instances compiled with {}\n",
            graph.model,
            target.name,
            placement.layers.len(),
            placement.pes_used(),
            decision.reason,
            compiled.kernels.len(),
            backend.name(),
        ));
    }
    Ok(out)
}
