//! `wsel build`: everything `wsel run` does before simulating — check, lower the model for the
//! batch, map it, run the static hang checks, compile every kernel instance — then write the
//! build artifact that `wsel run` reuses (`crate::cache`), and print the layer graph, the
//! kernel IR or the placement on request. A valid artifact is reused here too.

use crate::built::{BuildRequest, Built};
use crate::cache::{CacheUse, Write};
use crate::cli::{BuildArgs, Emit};
use crate::pipeline::{BuildError, report_build_failure};
use crate::status::Status;

pub fn run(args: &BuildArgs) -> Status {
    let color = args.color.use_color_on_stderr();
    let request = BuildRequest::new(&args.model, args.backend);
    let path = args
        .output
        .clone()
        .unwrap_or_else(|| crate::cache::default_path(&request));
    let cache = CacheUse {
        path: &path,
        read: true,
        write: Write::Required,
        prune: args.output.is_none(),
    };
    let built = match crate::cache::obtain(&request, Some(cache), color) {
        Ok(built) => built,
        Err(failure) => return failure.report(color),
    };
    match print(&built, args) {
        Ok(text) => crate::stdout::print_then(&text, Status::Success),
        Err(error) => report_build_failure(Some(&built.sources), error, color),
    }
}

fn print(built: &Built, args: &BuildArgs) -> Result<String, BuildError> {
    let Built {
        graph,
        placement,
        decision,
        compiled,
        target,
        backend,
        batch,
        ..
    } = built;
    let mut out = String::new();
    for emit in &args.emit {
        match emit {
            Emit::Graph => out.push_str(&wsel_ir::print_graph::print_graph(graph)),
            Emit::Ir => {
                for ir in &compiled.irs {
                    out.push_str(&wsel_ir::print::print_kernel(ir));
                }
            }
            Emit::Placement => {
                let json = serde_json::to_string_pretty(placement).map_err(|e| {
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
