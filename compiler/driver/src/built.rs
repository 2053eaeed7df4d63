//! The build half shared by `wsel run` and `wsel build`: from the command line's choices to a
//! [`Built`] program (layer graph, placement, compiled kernels, hang-check warnings), ready to
//! be assembled with the data and simulated.
//!
//! [`fresh`] runs every step from the source: check, lower, map, compile, hang checks.
//! `crate::cache` gives the same [`Built`] from a build artifact when the artifact is still
//! valid, and otherwise calls [`fresh`].

use std::path::Path;

use wsel_codegen::Backend;
use wsel_ir::graph::LayerGraph;
use wsel_lower::RunConfig;
use wsel_map::{Copies, Placement};
use wsel_sema::{Database, Diagnostic, Severity};
use wsel_target::Target;

use crate::cli::{BackendArg, MicroOrderArg, ModeArg, ModelArgs};
use crate::inputs::{NamedInput, batch_and_inputs};
use crate::pipeline::{
    BuildError, Compiled, Loaded, Lowerings, ModeDecision, ModeRequest, choose_backend,
    choose_micro_order, choose_mode, choose_target, compile_layers, hang_checks,
    load_and_check_source, map_graph, pick_model, pipelined, stage,
};
use crate::render::SourceTexts;
use crate::tensor::Tensor;
use crate::unfused::Unfused;
use wsel_estimate::kernel_work::KernelDryRuns;
use wsel_estimate::{cost_model, lower_for_batch};

/// What to build: the command line's choices (each defaults to the `run` item's setting).
#[derive(Debug, Clone, Copy)]
pub struct BuildRequest<'a> {
    pub file: &'a Path,
    /// The source text of `file`, when it comes from memory rather than from the disk
    /// (imports and data paths still resolve against `file`'s folder).
    pub text: Option<&'a str>,
    pub target: Option<&'a str>,
    pub mode: Option<ModeArg>,
    pub batch: Option<u64>,
    pub backend: BackendArg,
    /// Copies of the pipeline (`docs/mapping.md` §5).
    pub copies: Copies,
    /// The order of weight streaming's micro-batches (`docs/running.md`, "Micro-batches").
    pub micro_order: Option<wsel_map::MicroOrder>,
    /// Weight streaming on one region, no per-layer rows (`--one-region`).
    pub one_region: bool,
    /// In pipelined mode, fuse a layer and the layer that alone reads its result into one
    /// stage where they have a twin (`--no-fuse` turns it off; docs/mapping.md §4, "Fusion").
    pub fuse: bool,
    /// Overrides of the `run` item's inputs (`--input NAME=PATH`, arrays in memory).
    pub inputs: &'a [NamedInput],
    /// Read the model inputs, and check the `param` files at their `param` lines (a run needs
    /// the data; a build reads the inputs only to learn the batch).
    pub read_inputs: bool,
    /// Parameters whose data is handed over in memory: their files are not checked.
    pub params_in_memory: &'a [String],
    /// Run the static hang checks (`wsel run --no-hang-checks` skips them).
    pub hang_checks: bool,
}

impl<'a> BuildRequest<'a> {
    /// The request `wsel build` makes for `model` (a run adds its inputs and may skip the
    /// hang checks): inputs only read to learn the batch, hang checks on.
    pub fn new(model: &'a ModelArgs, backend: BackendArg) -> BuildRequest<'a> {
        BuildRequest {
            file: &model.file,
            text: None,
            target: model.target.as_deref(),
            mode: model.mode,
            batch: model.batch,
            backend,
            copies: model.copies,
            micro_order: model.micro_order.map(MicroOrderArg::order),
            one_region: model.one_region,
            fuse: !model.no_fuse,
            inputs: &[],
            read_inputs: false,
            params_in_memory: &[],
            hang_checks: true,
        }
    }
}

/// A program built for one target, mode, batch and backend.
pub struct Built {
    /// The file's `run` item, if it has one.
    pub config: Option<RunConfig>,
    /// The layer graph of one copy of the pipeline (lowered for its share of the batch).
    pub graph: LayerGraph,
    pub placement: Placement,
    pub decision: ModeDecision,
    pub compiled: Compiled,
    pub target: Target,
    /// The mode asked for (the decision says what it became).
    pub mode_request: ModeRequest,
    /// The copies asked for (the placement says how many it became).
    pub copies_request: Copies,
    /// The micro-batch order asked for (the placement's traffic says which runs).
    pub micro_order: wsel_map::MicroOrder,
    /// Whether one region was asked for in weight streaming.
    pub one_region: bool,
    /// Whether pipelined mode fused layers (`BuildRequest::fuse`).
    pub fuse: bool,
    pub backend: Backend,
    /// Samples in the batch, over all copies.
    pub batch: u64,
    /// The model inputs cut to the batch; empty when the request did not read them.
    pub inputs: Vec<Tensor>,
    /// One line for each input converted on reading (float64 rounded to f32).
    pub data_warnings: Vec<String>,
    /// The static hang checks' warnings (errors stop the build).
    pub warnings: Vec<Diagnostic>,
    /// Whether the hang checks ran.
    pub hang_checked: bool,
    /// The text of every source file the program loaded (stdlib modules included), by the
    /// path diagnostics name it by.
    pub sources: SourceTexts,
}

/// Why a build stopped, with the sources that render its diagnostics (none when the source
/// file itself could not be read).
pub struct BuildFailure {
    pub sources: Option<SourceTexts>,
    pub error: BuildError,
}

impl BuildFailure {
    /// Prints the failure and gives the exit status.
    pub fn report(self, color: bool) -> crate::status::Status {
        crate::pipeline::report_build_failure(self.sources.as_ref(), self.error, color)
    }
}

/// Loads and checks the program at `file` (`text`: its source, when in memory); a failure
/// carries the sources read so far.
pub fn load(file: &Path, text: Option<&str>) -> Result<Loaded, BuildFailure> {
    load_and_check_source(file, text).map_err(|failure| BuildFailure {
        sources: failure.db.as_ref().map(crate::source::source_texts),
        error: failure.error,
    })
}

/// Builds the program from its source: every step, nothing reused.
pub fn fresh(request: &BuildRequest<'_>) -> Result<Built, BuildFailure> {
    let loaded = load(request.file, request.text)?;
    let sources = crate::source::source_texts(&loaded.db);
    match steps(&loaded.db, loaded.file, request) {
        Ok(built) => Ok(Built { sources, ..built }),
        Err(error) => Err(BuildFailure {
            sources: Some(sources),
            error,
        }),
    }
}

/// The steps after loading; the result's `sources` are left empty for the caller.
fn steps(
    db: &Database,
    file: wsel_sema::SourceFile,
    request: &BuildRequest<'_>,
) -> Result<Built, BuildError> {
    if request.read_inputs {
        let in_memory = |name: &str| request.params_in_memory.iter().any(|p| p == name);
        let problems = wsel_data::param_diagnostics(db, file, &in_memory);
        if !problems.is_empty() {
            return Err(BuildError::Diagnostics(problems));
        }
    }
    let config = wsel_lower::lower_run_config(db, file);
    let model = pick_model(db, file, config.as_ref())?;

    // The per-sample shapes of the inputs do not depend on the batch; read the data first
    // to learn it.
    let (shape_graph, _) = wsel_lower::layer_graph(db, model, 1);
    let data = batch_and_inputs(
        &shape_graph,
        config.as_ref(),
        request.batch,
        request.inputs,
        request.read_inputs,
    )?;
    let (graph, diagnostics) = wsel_lower::layer_graph(db, model, data.batch);
    if !diagnostics.is_empty() {
        return Err(BuildError::Diagnostics(diagnostics));
    }
    let target = choose_target(request.target, config.as_ref())?;
    let mode = choose_mode(request.mode, config.as_ref());
    let micro_order = choose_micro_order(request.micro_order, config.as_ref());
    let per_copy = &mut |b| lower_for_batch(db, model, b);
    let staged = &|g: &LayerGraph| stage(db, g);
    let relayed = &|g: &LayerGraph| pipelined(db, g, request.fuse);
    let chunked = &|g: &LayerGraph, chunks: &[(usize, u32)]| crate::pipeline::chunk(db, g, chunks);
    let parked = &|g: &LayerGraph| crate::pipeline::park(db, g);
    let relaid = &|g: &LayerGraph, m: &[_]| crate::pipeline::relayout(db, g, m);
    let apart = &|g: &LayerGraph| pipelined(db, g, false);
    let apart_work = KernelDryRuns::new(db, model, &target).shaped(&|g| apart(g).ok());
    let lowerings = Lowerings {
        per_copy,
        staged,
        relayed,
        chunked,
        parked,
        relaid,
        micro_order,
        one_region: request.one_region,
        unfused: request.fuse.then_some(Unfused {
            relayed: apart,
            work: &apart_work,
        }),
    };
    let work = KernelDryRuns::new(db, model, &target).shaped(&|g| relayed(g).ok());
    let (graph, placement, decision) =
        map_graph(&graph, lowerings, &work, &target, mode, request.copies)?;
    let backend = choose_backend(request.backend).map_err(BuildError::Message)?;
    let compiled = compile_layers(db, &graph, &placement, backend, &cost_model(&target))?;
    let mut warnings = Vec::new();
    if request.hang_checks {
        let found = hang_checks(db, &graph, &placement);
        if found.iter().any(|d| d.severity == Severity::Error) {
            return Err(BuildError::Diagnostics(found));
        }
        warnings = found;
    }
    Ok(Built {
        config,
        graph,
        placement,
        decision,
        compiled,
        target,
        mode_request: mode,
        copies_request: request.copies,
        micro_order,
        one_region: request.one_region,
        fuse: request.fuse,
        backend,
        batch: data.batch,
        inputs: data.inputs,
        data_warnings: data.warnings,
        warnings,
        hang_checked: request.hang_checks,
        sources: SourceTexts::new(),
    })
}
