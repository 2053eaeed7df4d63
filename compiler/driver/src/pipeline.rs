//! From a `.wse` file to a placed, compiled program: check, lower the model for the batch,
//! map it onto the target, lower and compile every distinct kernel instance once, and run the
//! static hang checks on the result.
//!
//! Each step that can fail for a reason in the program returns diagnostics; IO problems are
//! plain messages. Nothing here runs the program.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use wsel_codegen::{Backend, CompiledKernel};
use wsel_ir::cost::CostModel;
use wsel_ir::graph::{CValue, LayerGraph, Mode};
use wsel_lower::{RunConfig, RunMicroOrder, RunMode, TargetSpec};
use wsel_map::{Copies, KernelWork, MapOptions, Mapped, Placement};
use wsel_sema::{Database, Diagnostic, ItemId, SourceFile};
use wsel_target::Target;

use crate::cli::{BackendArg, ModeArg};
use crate::status::Status;
use crate::unfused::{PipelinedLowerings, Unfused, map_pipelined};
use wsel_map::report::group;

/// Why a build stopped: the program has errors (rendered by the caller), or something outside
/// the program went wrong.
#[derive(Debug)]
pub enum BuildError {
    /// Errors in the program, with the database that can render them.
    Diagnostics(Vec<Diagnostic>),
    /// A problem outside the source: unreadable file, unknown target, ...
    Message(String),
    /// A problem outside the source with its stable code: the target (`wsel_target::CODES`),
    /// the data or the run itself (`crate::run_errors`).
    Run { code: &'static str, message: String },
}

/// A loaded and checked program.
pub struct Loaded {
    pub db: Database,
    pub file: SourceFile,
}

/// Why loading failed: the file could not be read (no database), or it has errors (with the
/// database that renders them).
pub struct LoadFailure {
    pub db: Option<Database>,
    pub error: BuildError,
}

/// Loads `path` with its imports and checks it (all but the stdlib's own modules, which check
/// clean: [`wsel_sema::program_diagnostics`]).
pub fn load_and_check(path: &Path) -> Result<Loaded, Box<LoadFailure>> {
    load_and_check_source(path, None)
}

/// [`load_and_check`], with `text` as the source of `path` when it comes from memory rather
/// than from the disk (its imports are still read beside it).
pub fn load_and_check_source(path: &Path, text: Option<&str>) -> Result<Loaded, Box<LoadFailure>> {
    let mut db = Database::default();
    let mut read = crate::source::reader(path, text);
    let file = match wsel_sema::load_program(&mut db, path, &mut read) {
        Ok(file) => file,
        Err(error) => {
            return Err(Box::new(LoadFailure {
                db: None,
                error: BuildError::Message(format!("cannot read `{}`: {error}", path.display())),
            }));
        }
    };
    let diagnostics = wsel_sema::program_diagnostics(&db, file);
    if diagnostics
        .iter()
        .any(|d| d.severity == wsel_sema::Severity::Error)
    {
        return Err(Box::new(LoadFailure {
            db: Some(db),
            error: BuildError::Diagnostics(diagnostics),
        }));
    }
    Ok(Loaded { db, file })
}

/// Every diagnostic of `file` and its imports, and of the `param` files its models name
/// (`wsel-data`), in source order: what `wsel check` reports.
pub fn all_diagnostics(db: &Database, file: SourceFile) -> Vec<Diagnostic> {
    let root = file.path(db).clone();
    let mut found = wsel_sema::diagnostics(db, file);
    found.extend(wsel_data::param_diagnostics(db, file, &|_| false));
    found.sort_by_key(|d| {
        (
            d.primary.location.file != root,
            d.primary.location.span.start,
        )
    });
    found
}

/// The model to work on: the one the `run` item names (the checker has made sure it exists),
/// else the file's only model; E0820 when it has none, E0821 at its second model when it has
/// several and no `run` item.
pub fn pick_model<'db>(
    db: &'db Database,
    file: SourceFile,
    run: Option<&RunConfig>,
) -> Result<ItemId<'db>, BuildError> {
    let models: Vec<ItemId<'db>> = wsel_sema::item_index(db, file)
        .iter()
        .copied()
        .filter(|i| i.kind(db) == wsel_sema::ItemKind::Model)
        .collect();
    let named = run.and_then(|run| wsel_lower::find_model(db, file, &run.model));
    match (named, models.as_slice()) {
        (Some(model), _) => Ok(model),
        (None, [model]) => Ok(*model),
        (None, []) => Err(BuildError::Diagnostics(vec![
            Diagnostic::error(
                crate::run_errors::E0820,
                "the file has no model to run",
                wsel_sema::Location {
                    file: file.path(db).clone(),
                    span: 0..0,
                },
                "no `model` in this file",
            )
            .with_help("define a `model` (docs/language.md §7), or run the file that defines it"),
        ])),
        (None, [first, second, ..]) => {
            let names: Vec<String> = models.iter().map(|m| format!("`{}`", m.name(db))).collect();
            let at = wsel_sema::items::item_location(db, *second)
                .or_else(|| wsel_sema::items::item_location(db, *first))
                .unwrap_or(wsel_sema::Location {
                    file: file.path(db).clone(),
                    span: 0..0,
                });
            Err(BuildError::Diagnostics(vec![
                Diagnostic::error(
                    crate::run_errors::E0821,
                    format!(
                        "the file has several models ({}) and no `run` item saying which to use",
                        names.join(", ")
                    ),
                    at,
                    "a second model",
                )
                .with_help(format!(
                    "add a `run` item for the model to use, e.g. `run {} {{ target = \"dev\"; }}`",
                    first.name(db)
                )),
            ]))
        }
    }
}

/// `--target`, else the `run` item's target, else `dev`.
pub fn choose_target(flag: Option<&str>, run: Option<&RunConfig>) -> Result<Target, BuildError> {
    let name = match (flag, run.and_then(|r| r.target.as_ref())) {
        (Some(name), _) => name.to_string(),
        (None, Some(TargetSpec::Preset(name))) => name.clone(),
        (None, Some(TargetSpec::File(path))) => path.display().to_string(),
        (None, None) => "dev".to_string(),
    };
    resolve_target(&name)
}

/// `--mode`, else the `run` item's mode, else auto.
pub fn choose_mode(flag: Option<ModeArg>, run: Option<&RunConfig>) -> ModeRequest {
    match (flag, run.and_then(|r| r.mode)) {
        (Some(ModeArg::Pipelined), _) | (None, Some(RunMode::Pipelined)) => ModeRequest::Pipelined,
        (Some(ModeArg::Streaming), _) | (None, Some(RunMode::Streaming)) => ModeRequest::Streaming,
        _ => ModeRequest::Auto,
    }
}

/// `--micro-order`, else the `run` item's `micro_order`, else auto.
pub fn choose_micro_order(
    flag: Option<wsel_map::MicroOrder>,
    run: Option<&RunConfig>,
) -> wsel_map::MicroOrder {
    flag.unwrap_or(match run.and_then(|r| r.micro_order) {
        Some(RunMicroOrder::Micro) => wsel_map::MicroOrder::Micro,
        Some(RunMicroOrder::Layer) => wsel_map::MicroOrder::Layer,
        Some(RunMicroOrder::Auto) | None => wsel_map::MicroOrder::Auto,
    })
}

/// The code generator a `--backend` flag names, if this build has it.
pub fn choose_backend(arg: BackendArg) -> Result<Backend, String> {
    match arg {
        BackendArg::Cranelift => Ok(Backend::Cranelift),
        BackendArg::Interp => Ok(Backend::Interp),
        #[cfg(feature = "llvm")]
        BackendArg::Llvm => Ok(Backend::Llvm),
        #[cfg(not(feature = "llvm"))]
        BackendArg::Llvm => {
            Err("this wsel was built without LLVM: rebuild with `--features llvm`".into())
        }
    }
}

/// The target named by a preset name or a path to a `.toml` description; a problem is a
/// coded error (`wsel_target::CODES`).
pub fn resolve_target(name: &str) -> Result<Target, BuildError> {
    let coded = |error: wsel_target::TargetError| {
        let message = match &error {
            // The message names the file already.
            wsel_target::TargetError::Io { .. } | wsel_target::TargetError::UnknownPreset(_) => {
                error.to_string()
            }
            _ => format!("{error} (in `{name}`)"),
        };
        BuildError::Run {
            code: error.code(),
            message,
        }
    };
    if wsel_target::PRESET_NAMES.contains(&name) {
        return Target::preset(name).map_err(coded);
    }
    let path = PathBuf::from(name);
    if path.extension().is_some_and(|e| e == "toml") || path.exists() {
        return Target::load(&path).map_err(coded);
    }
    Err(BuildError::Run {
        code: wsel_target::E0901,
        message: format!(
            "unknown target `{name}`: use one of {} or a path to a target .toml file",
            wsel_target::PRESET_NAMES.join(", ")
        ),
    })
}

/// How the execution mode was chosen, for the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModeDecision {
    pub mode: Mode,
    /// One sentence: why this mode.
    pub reason: String,
    /// On a target with defects, when the region sizes of the defect-free mapping did not fit
    /// and others were chosen: which, in one sentence (`crate::defects`).
    pub sizes_note: Option<String>,
}

/// The mode the user asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModeRequest {
    Pipelined,
    Streaming,
    Auto,
}

/// A mapped model: the layer graph of one copy, its placement, and how the mode was chosen.
pub type Mapping = (LayerGraph, Placement, ModeDecision);

/// How the mapper gets the model lowered other ways: for another batch size (a copy's share
/// of the batch, a micro-batch), staged for weight streaming (`wsel_lower::staged_graph`), and
/// as pipelined mode maps it ([`pipelined`]: fused, with relays).
pub struct Lowerings<'a> {
    pub per_copy: &'a mut dyn FnMut(u64) -> Result<LayerGraph, Vec<Diagnostic>>,
    pub staged: &'a dyn Fn(&LayerGraph) -> Result<LayerGraph, Vec<Diagnostic>>,
    pub relayed: &'a dyn Fn(&LayerGraph) -> Result<LayerGraph, Vec<Diagnostic>>,
    /// A staged graph with layers cut into chunks of their outputs
    /// (`wsel_lower::chunked_graph`, layer-major order).
    pub chunked: &'a wsel_map::Chunked<'a>,
    /// A staged graph with layer-major order's parking phases (`wsel_lower::parked_graph`).
    pub parked: &'a dyn Fn(&LayerGraph) -> Result<LayerGraph, Vec<Diagnostic>>,
    /// A staged graph with relayouts between phases on different rows
    /// (`wsel_lower::relaid_graph`).
    pub relaid: &'a wsel_map::Relaid<'a>,
    /// The order of weight streaming's micro-batches asked for.
    pub micro_order: wsel_map::MicroOrder,
    /// Weight streaming on one region, no per-layer rows (`--one-region`).
    pub one_region: bool,
    /// Pipelined mode's way back when the fused graph does not place (`None` with
    /// `--no-fuse`, where `relayed` fuses nothing).
    pub unfused: Option<Unfused<'a>>,
}

/// A mapping in one mode, with a sentence to add to the mode's reason (`crate::unfused`), or
/// the problems that stopped it.
type Attempt = Result<(Mapped, Option<String>), Vec<Diagnostic>>;

/// Maps the model in the requested mode; `Auto` tries pipelined (everything resident in
/// SRAM) and falls back to streaming when pipelined mapping fails. `graph` is the model lowered
/// for the whole batch. With several copies of the pipeline (`copies`, `docs/mapping.md` §5)
/// each runs its share of the batch, and the graph returned is the one lowered for that share;
/// in streaming mode it is the staged graph (`docs/running.md`). `work` measures the layers'
/// kernels for the estimate (`wsel_estimate::KernelDryRuns`). On a target with defects the
/// region sizes are those of the defect-free fabric where they fit (`crate::defects`), so that
/// defects move regions without changing results.
pub fn map_graph(
    graph: &LayerGraph,
    mut lowerings: Lowerings<'_>,
    work: &dyn KernelWork,
    target: &Target,
    request: ModeRequest,
    copies: Copies,
) -> Result<Mapping, BuildError> {
    if target.defects.is_empty() {
        map_with_sizes(graph, &mut lowerings, work, target, request, copies, None)
    } else {
        crate::defects::map_around_defects(graph, &mut lowerings, work, target, request, copies)
    }
}

/// [`map_graph`] without the defect handling, keeping the region `sizes` of every layer (in
/// graph order) when given.
pub(crate) fn map_with_sizes(
    graph: &LayerGraph,
    lowerings: &mut Lowerings<'_>,
    work: &dyn KernelWork,
    target: &Target,
    request: ModeRequest,
    copies: Copies,
    sizes: Option<&[(u32, u32)]>,
) -> Result<Mapping, BuildError> {
    let options = MapOptions {
        work: Some(work),
        sizes,
        micro_order: lowerings.micro_order,
        one_region: lowerings.one_region,
        ..MapOptions::default()
    };
    let Lowerings {
        per_copy,
        staged,
        relayed,
        chunked,
        parked,
        relaid,
        unfused,
        ..
    } = lowerings;
    let (staged, relayed, parked, relaid) = (&**staged, &**relayed, &**parked, &**relaid);
    let chunked = &**chunked;
    let mut attempt = |mode: Mode| -> Attempt {
        if mode == Mode::Pipelined {
            let lowerings = PipelinedLowerings {
                per_copy: &mut **per_copy,
                relayed,
                unfused: unfused.as_ref(),
            };
            return map_pipelined(graph, lowerings, target, &options, copies);
        }
        let whole = staged(graph)?;
        let mut micro = |b: u64| staged(&per_copy(b)?);
        let mapped = wsel_map::map_micro_batches(
            &whole, &mut micro, chunked, parked, relaid, target, &options,
        );
        Ok((mapped, None))
    };
    let placed = |mapped: Attempt, mode: Mode, reason: String| {
        let (Mapped { result, graph }, note) = mapped?;
        match result.placement {
            Some(placement) => {
                let reason = match note {
                    Some(note) => format!("{reason}; {note}"),
                    None => reason,
                };
                let decision = ModeDecision {
                    mode,
                    reason,
                    sizes_note: None,
                };
                Ok((graph, placement, decision))
            }
            None => Err(result.diagnostics),
        }
    };
    if request == ModeRequest::Streaming
        && let Some(n @ 2..) = copies.asked()
        && let Some(first) = graph.layers.first()
    {
        let d = wsel_map::diagnostics::streaming_takes_no_copies(&first.call, n);
        return Err(BuildError::Diagnostics(vec![d]));
    }
    match request {
        ModeRequest::Pipelined | ModeRequest::Streaming => {
            let mode = if request == ModeRequest::Pipelined {
                Mode::Pipelined
            } else {
                Mode::Streaming
            };
            let reason = "requested on the command line or in the `run` item".to_string();
            placed(attempt(mode), mode, reason).map_err(BuildError::Diagnostics)
        }
        ModeRequest::Auto => {
            let reason = format!(
                "every layer's weights fit in its region's SRAM: {} bytes of weights",
                group(weight_bytes(graph))
            );
            let pipelined = match placed(attempt(Mode::Pipelined), Mode::Pipelined, reason) {
                Ok(done) => return Ok(done),
                // Copies asked for are copies of a pipeline: weight streaming has none.
                Err(diagnostics) if copies.asked().is_some_and(|n| n > 1) => {
                    return Err(BuildError::Diagnostics(diagnostics));
                }
                Err(diagnostics) => diagnostics,
            };
            let why = pipelined.first().map_or_else(
                || "pipelined mapping failed".to_string(),
                |d| d.message.clone(),
            );
            let reason = format!(
                "the weights, {} bytes, do not all fit in SRAM at once: {why}",
                group(weight_bytes(graph))
            );
            placed(attempt(Mode::Streaming), Mode::Streaming, reason)
                .map_err(|streaming| BuildError::Diagnostics(both_modes(pipelined, streaming)))
        }
    }
}

/// Streaming errors that say the model has no weight-streaming form at all (a layer without a
/// streaming implementation, or one that does not keep its data where streaming needs it).
const NO_STREAMING_FORM: [&str; 3] = ["E0606", "E0611", "E0614"];

/// Both modes' problems when `auto` could map in neither, each once (a dead fabric fails both
/// alike). When the model has no streaming form, the pipelined problems are the ones to fix:
/// the first of those says in a note why streaming was no way out.
fn both_modes(pipelined: Vec<Diagnostic>, streaming: Vec<Diagnostic>) -> Vec<Diagnostic> {
    let mut diagnostics = pipelined;
    let (no_form, others): (Vec<_>, Vec<_>) = streaming
        .into_iter()
        .partition(|d| NO_STREAMING_FORM.contains(&d.code));
    match (no_form.first(), diagnostics.first_mut()) {
        (Some(why), Some(first)) => first.notes.push(format!(
            "weight streaming, tried as well, cannot run this model: {}",
            why.message
        )),
        _ => diagnostics.extend(no_form),
    }
    for d in others {
        if !diagnostics.contains(&d) {
            diagnostics.push(d);
        }
    }
    diagnostics
}

/// `graph` staged for weight streaming (`wsel_lower::staged_graph`), or its diagnostics.
pub fn stage(db: &Database, graph: &LayerGraph) -> Result<LayerGraph, Vec<Diagnostic>> {
    match wsel_lower::staged_graph(db, graph) {
        Some((staged, diagnostics)) if diagnostics.is_empty() => Ok(staged),
        Some((_, diagnostics)) => Err(diagnostics),
        None => Ok(graph.clone()),
    }
}

/// A staged `graph` with the layers `chunks` names (`(layer, K)`) cut into `K` chunks of
/// their outputs (`wsel_lower::chunked_graph`), or its diagnostics.
pub fn chunk(
    db: &Database,
    graph: &LayerGraph,
    chunks: &[(usize, u32)],
) -> Result<LayerGraph, Vec<Diagnostic>> {
    match wsel_lower::chunked_graph(db, graph, chunks) {
        Some((chunked, diagnostics)) if diagnostics.is_empty() => Ok(chunked),
        Some((_, diagnostics)) => Err(diagnostics),
        None => Err(Vec::new()),
    }
}

/// A staged `graph` with layer-major order's parking phases (`wsel_lower::parked_graph`), or
/// its diagnostics.
pub fn park(db: &Database, graph: &LayerGraph) -> Result<LayerGraph, Vec<Diagnostic>> {
    match wsel_lower::parked_graph(db, graph) {
        Some((parked, diagnostics)) if diagnostics.is_empty() => Ok(parked),
        Some((_, diagnostics)) => Err(diagnostics),
        None => Ok(graph.clone()),
    }
}

/// A staged `graph` with a relayout before each layer `moves` names
/// (`wsel_lower::relaid_graph`), or its diagnostics.
pub fn relayout(
    db: &Database,
    graph: &LayerGraph,
    moves: &[wsel_ir::graph::RowMove],
) -> Result<LayerGraph, Vec<Diagnostic>> {
    match wsel_lower::relaid_graph(db, graph, moves) {
        Some((relaid, diagnostics)) if diagnostics.is_empty() => Ok(relaid),
        Some((_, diagnostics)) => Err(diagnostics),
        None => Err(Vec::new()),
    }
}

/// `graph` with a relay before every layer that reads a result twice
/// (`wsel_lower::relayed_graph`), or its diagnostics.
pub fn relay(db: &Database, graph: &LayerGraph) -> Result<LayerGraph, Vec<Diagnostic>> {
    match wsel_lower::relayed_graph(db, graph) {
        Some((relayed, diagnostics)) if diagnostics.is_empty() => Ok(relayed),
        Some((_, diagnostics)) => Err(diagnostics),
        None => Ok(graph.clone()),
    }
}

/// `graph` as pipelined mode maps it: a layer and the layer that alone reads its result
/// (a dense and its relu) fused into one stage where the first's file has a twin for them
/// (when `fuse`; `wsel_map::fusion`, `wsel_lower::fused_twin`), then relayed ([`relay`]).
pub fn pipelined(
    db: &Database,
    graph: &LayerGraph,
    fuse: bool,
) -> Result<LayerGraph, Vec<Diagnostic>> {
    if !fuse {
        return relay(db, graph);
    }
    let twins = |g: &LayerGraph, p: usize, r: usize| wsel_lower::fused_twin(db, g, p, r);
    relay(db, &wsel_map::fusion::fused(graph, &twins))
}

/// Bytes of every weight tensor of the model.
fn weight_bytes(graph: &LayerGraph) -> u64 {
    graph
        .params
        .iter()
        .map(|p| 4 * p.tensor.shape.iter().product::<u64>())
        .sum()
}

/// The compiled code of every placed layer (layers running the same kernel instance share
/// one compiled kernel).
pub struct Compiled {
    pub kernels: Vec<Arc<CompiledKernel>>,
    /// For each placed layer, its index in `kernels`.
    pub layer_kernel: Vec<usize>,
    /// For each kernel, its IR (array offsets and port order for assembling the program).
    pub irs: Vec<wsel_ir::kernel::KernelIr>,
}

/// Lowers and compiles the kernel of every placed layer, once per distinct instance. A kernel
/// that cannot be instantiated is E0505 at the layer's call in `graph`.
pub fn compile_layers(
    db: &Database,
    graph: &LayerGraph,
    placement: &Placement,
    backend: Backend,
    cost: &CostModel,
) -> Result<Compiled, BuildError> {
    let mut by_instance: HashMap<String, usize> = HashMap::new();
    let mut compiled = Compiled {
        kernels: Vec::new(),
        layer_kernel: Vec::new(),
        irs: Vec::new(),
    };
    for layer in &placement.layers {
        let key = instance_name(&layer.kernel_file, &layer.kernel, &layer.kernel_args);
        if let Some(&index) = by_instance.get(&key) {
            compiled.layer_kernel.push(index);
            continue;
        }
        let kernel_ref = wsel_ir::graph::KernelRef {
            file: layer.kernel_file.clone(),
            name: layer.kernel.clone(),
        };
        let item = wsel_lower::kernel_item(db, &kernel_ref).ok_or_else(|| {
            BuildError::Message(format!(
                "kernel `{}` of layer `{}` not found",
                layer.kernel, layer.name
            ))
        })?;
        let ir = wsel_lower::lower_kernel(db, item, &layer.kernel_args).map_err(|e| match graph
            .layers
            .iter()
            .find(|l| l.name == layer.name)
        {
            Some(instance) => BuildError::Diagnostics(vec![e.to_diagnostic(wsel_sema::Location {
                file: instance.call.file.clone(),
                span: instance.call.span.clone(),
            })]),
            None => BuildError::Message(format!("lowering `{}`: {e}", layer.name)),
        })?;
        let code = wsel_codegen::compile(&ir, backend, cost)
            .map_err(|e| BuildError::Message(format!("compiling `{}`: {e}", layer.name)))?;
        compiled.kernels.push(Arc::new(code));
        compiled.irs.push(ir);
        let index = compiled.kernels.len() - 1;
        by_instance.insert(key, index);
        compiled.layer_kernel.push(index);
    }
    Ok(compiled)
}

/// The static hang checks (`wsel-hangcheck`, `docs/mapping.md` §6) of a placed program. Every
/// placed layer's kernel is lowered again with its source spans (once per distinct instance);
/// a layer whose kernel does not lower is skipped, since compiling it reports why.
pub fn hang_checks(db: &Database, graph: &LayerGraph, placement: &Placement) -> Vec<Diagnostic> {
    use wsel_ir::kernel::{KernelIr, KernelSpans};
    let mut by_instance: HashMap<String, usize> = HashMap::new();
    let mut lowered: Vec<Option<(KernelIr, KernelSpans)>> = Vec::new();
    let mut layer_instance = Vec::with_capacity(placement.layers.len());
    for layer in &placement.layers {
        let key = instance_name(&layer.kernel_file, &layer.kernel, &layer.kernel_args);
        let index = *by_instance.entry(key).or_insert_with(|| {
            let kernel_ref = wsel_ir::graph::KernelRef {
                file: layer.kernel_file.clone(),
                name: layer.kernel.clone(),
            };
            lowered.push(wsel_lower::kernel_item(db, &kernel_ref).and_then(|item| {
                wsel_lower::lower_kernel_with_spans(db, item, &layer.kernel_args).ok()
            }));
            lowered.len() - 1
        });
        layer_instance.push(index);
    }
    let kernels: Vec<Option<wsel_hangcheck::LayerKernel<'_>>> = layer_instance
        .iter()
        .map(|&i| {
            lowered[i]
                .as_ref()
                .map(|(ir, spans)| wsel_hangcheck::LayerKernel {
                    ir,
                    spans: Some(spans),
                })
        })
        .collect();
    wsel_hangcheck::check(graph, placement, &kernels)
}

fn instance_name(file: &Path, kernel: &str, args: &[(String, CValue)]) -> String {
    let args: Vec<String> = args.iter().map(|(n, v)| format!("{n}={v:?}")).collect();
    format!("{}::{kernel}<{}>", file.display(), args.join(","))
}

/// Prints a build failure: diagnostics rendered, or a one-line message. An unreadable source
/// file (no database yet) is exit status 2; everything later is 1.
pub fn report_build_error(db: Option<&Database>, error: BuildError, color: bool) -> Status {
    let sources = db.map(crate::source::source_texts);
    report_build_failure(sources.as_ref(), error, color)
}

/// [`report_build_error`] with the source texts instead of the database (a build reused from
/// its artifact has no database). `None`: the source file itself could not be read.
pub fn report_build_failure(
    sources: Option<&crate::render::SourceTexts>,
    error: BuildError,
    color: bool,
) -> Status {
    match error {
        BuildError::Diagnostics(diagnostics) => {
            let none = crate::render::SourceTexts::new();
            crate::render::eprint_diagnostics(&diagnostics, sources.unwrap_or(&none), color);
            Status::Failure
        }
        BuildError::Run { code, message } => {
            eprintln!("error[{code}]: {message}");
            Status::Failure
        }
        BuildError::Message(text) => {
            eprintln!("error: {text}");
            // An unreadable source file is an IO problem with the command line (exit 2);
            // everything later is a failure of the run (exit 1).
            if sources.is_none() {
                Status::UsageOrIo
            } else {
                Status::Failure
            }
        }
    }
}
