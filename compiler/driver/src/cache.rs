//! The build artifact: a built program saved to disk (by default `.wsel/<stem>.wselb` next to
//! the source, one more per combination of settings given as flags, [`default_path`]), so that
//! running an unchanged program again skips parsing, checking, lowering, mapping, the hang
//! checks and code generation.
//!
//! **What it holds**: the layer graph, the placement and the mode decision, the kernel IR of
//! every distinct kernel instance and each placed layer's kernel, the compiled code
//! (`wsel_codegen::KernelArtifact`: Cranelift machine code with named relocations; nothing
//! for the interpreter, which runs the IR; nothing for LLVM, which is compiled afresh from the
//! IR), the `run` item's settings, the hang checks' warnings to print again, and the key.
//!
//! **The key** says when it is valid: the same wsel (version, and the running binary's size
//! and modification time, so a rebuilt wsel never trusts an older one's output), the same
//! source path (and working directory, when the path is relative), every source file the program loaded (the main file,
//! every imported module and every stdlib module, by path and BLAKE3 hash of its bytes), the
//! same target (a hash of its resolved description, so an edited target file counts), mode
//! request, batch, copies request, backend and cost model. Checking it parses nothing: it
//! hashes the listed files and compares.
//!
//! **The file**: `MAGIC`, the format version (u32, little-endian), the BLAKE3 hash of the
//! payload, and the payload: the [`Artifact`] in postcard. Anything that does not check out —
//! not an artifact, another format, a wrong checksum (truncated or damaged), undecodable, code
//! for another CPU — is reported in one line and the program is built afresh; the artifact is
//! never trusted and never a panic. Writes are atomic (`crate::atomic`).

use std::io::ErrorKind;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::UNIX_EPOCH;

use serde::{Deserialize, Serialize};
use wsel_codegen::{CompiledKernel, KernelArtifact};
use wsel_ir::cost::CostModel;
use wsel_ir::graph::{LayerGraph, Mode};
use wsel_ir::kernel::KernelIr;
use wsel_lower::RunConfig;
use wsel_map::Placement;
use wsel_sema::{Diagnostic, Label, Location, Severity};

use crate::built::{BuildFailure, BuildRequest, Built};
use crate::inputs::batch_and_inputs;
use crate::pipeline::{
    BuildError, Compiled, ModeDecision, ModeRequest, choose_backend, choose_micro_order,
    choose_mode, choose_target,
};
use crate::render::SourceTexts;
use wsel_estimate::cost_model;

/// The first bytes of every artifact.
pub const MAGIC: &[u8; 8] = b"wselbld\n";
/// The version of the file layout and the payload's types; bump on any change to them.
pub const FORMAT_VERSION: u32 = 3;
/// Bytes before the payload: magic, format version, payload hash.
const HEADER: usize = 8 + 4 + 32;

/// Where and how to use the artifact.
#[derive(Debug, Clone, Copy)]
pub struct CacheUse<'a> {
    pub path: &'a Path,
    /// Reuse the artifact at `path` when it is valid.
    pub read: bool,
    /// After building afresh, write the artifact to `path`.
    pub write: Write,
    /// `path` is the default one ([`default_path`]): after writing it, keep at most [`KEPT`]
    /// artifacts named by settings for the source file.
    pub prune: bool,
}

/// What to do when writing the artifact fails.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Write {
    Never,
    /// Silently; a failure is a note and the command goes on (`wsel run`: the artifact only
    /// saves time).
    BestEffort,
    /// Say where; a failure is an error (`wsel build`: the artifact is what was asked for).
    Required,
}

/// How many artifacts named by command-line settings ([`default_path`]) are kept per source
/// file; writing another removes the least recently written.
pub const KEPT: usize = 8;

/// The default artifact of a build: in `.wsel/` in the source file's folder,
/// `<file stem>.wselb` for the `run` item's own settings, and for settings given on the
/// command line one artifact per combination, named by them
/// (`main.wse2.b10.interp.wselb`), so that alternating between them rebuilds nothing.
pub fn default_path(request: &BuildRequest<'_>) -> PathBuf {
    let file = request.file;
    let folder = file.parent().unwrap_or(Path::new(""));
    let stem = file
        .file_stem()
        .map_or_else(|| "main".into(), |s| s.to_string_lossy());
    let name: Vec<String> = std::iter::once(stem.into_owned())
        .chain(settings_named(request))
        .collect();
    folder
        .join(".wsel")
        .join(format!("{}.wselb", name.join(".")))
}

/// The command-line settings that the artifact's key checks, as parts of a file name: the
/// target (a target file by its stem), mode, `b` batch, `c` copies, micro-batch order,
/// backend, and `in-` a hash of the `--input` overrides.
fn settings_named(request: &BuildRequest<'_>) -> Vec<String> {
    let mut parts = Vec::new();
    if let Some(target) = request.target {
        let stem = Path::new(target).file_stem().map(|s| s.to_string_lossy());
        parts.push(file_safe(&stem.unwrap_or_default()));
    }
    if let Some(mode) = request.mode {
        parts.push(format!("{mode:?}").to_lowercase());
    }
    if let Some(batch) = request.batch {
        parts.push(format!("b{batch}"));
    }
    match request.copies {
        wsel_map::Copies::Exactly(n) => parts.push(format!("c{n}")),
        wsel_map::Copies::Filled(n) => parts.push(format!("cfill{n}")),
        wsel_map::Copies::Auto => {}
    }
    if let Some(order) = request.micro_order {
        parts.push(format!("order-{order:?}").to_lowercase());
    }
    if request.one_region {
        parts.push("one-region".to_string());
    }
    if !request.fuse {
        parts.push("no-fuse".to_string());
    }
    if request.backend != crate::cli::BackendArg::Cranelift {
        parts.push(format!("{:?}", request.backend).to_lowercase());
    }
    if !request.inputs.is_empty() {
        let mut hasher = blake3::Hasher::new();
        for input in request.inputs {
            let data = match &input.data {
                crate::inputs::InputData::File(path) => path.to_string_lossy().into_owned(),
                crate::inputs::InputData::Array(_) => "(in memory)".to_string(),
            };
            hasher.update(format!("{}={data}\n", input.name).as_bytes());
        }
        parts.push(format!("in-{}", &hasher.finalize().to_hex()[..8]));
    }
    parts
}

/// `text` with every character but ASCII letters, digits, `-` and `_` replaced by `_`.
fn file_safe(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Removes the least recently written artifacts named by settings beside `written` (a
/// default path, [`default_path`]) beyond [`KEPT`]; the plain `<stem>.wselb` is never removed.
/// Best effort: a file that cannot be listed or removed stays.
fn prune_named(written: &Path) {
    let (Some(folder), Some(name)) = (written.parent(), written.file_name()) else {
        return;
    };
    let stem = name.to_string_lossy();
    let stem = stem.split('.').next().unwrap_or_default();
    let prefix = format!("{stem}.");
    let Ok(entries) = std::fs::read_dir(folder) else {
        return;
    };
    let mut named: Vec<(std::time::SystemTime, PathBuf)> = entries
        .flatten()
        .filter(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            name.starts_with(&prefix) && name.ends_with(".wselb") && name != format!("{stem}.wselb")
        })
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    named.sort_by_key(|(written, _)| std::cmp::Reverse(*written));
    for (_, path) in named.into_iter().skip(KEPT) {
        let _ = std::fs::remove_file(path);
    }
}

/// The built program: from the artifact when `cache` allows and it is valid (saying so on
/// standard error), else built afresh (saying why an existing artifact was not used) and
/// saved. Prints the hang checks' warnings either way.
pub fn obtain(
    request: &BuildRequest<'_>,
    cache: Option<CacheUse<'_>>,
    color: bool,
) -> Result<Built, BuildFailure> {
    let shown = |path: &Path| path.display().to_string();
    if let Some(cache) = cache.filter(|c| c.read) {
        match lookup(cache.path, request) {
            Lookup::Reused { built, code_reused } => {
                let skipped = if code_reused {
                    "parse, map and code generation skipped".to_string()
                } else {
                    format!(
                        "parse and map skipped; {} backend: compiled afresh",
                        built.backend
                    )
                };
                eprintln!("reusing build artifact {} ({skipped})", shown(cache.path));
                print_warnings(&built, request, color);
                return Ok(*built);
            }
            Lookup::Missing => {}
            Lookup::Stale(why) => {
                eprintln!("not reusing build artifact {}: {why}", shown(cache.path));
            }
            Lookup::Failed(failure) => return Err(failure),
        }
    }
    let built = crate::built::fresh(request)?;
    print_warnings(&built, request, color);
    // A build whose hang checks were skipped (`--no-hang-checks`, a hidden flag for showing
    // that the checks catch real hangs) is never saved: a reused build has passed them.
    if let Some(cache) = cache.filter(|c| c.write != Write::Never && built.hang_checked) {
        let stored = store(cache.path, &built, request.file);
        if stored.is_ok() && cache.prune {
            prune_named(cache.path);
        }
        match stored {
            // `wsel build` says where the artifact went; `wsel run` saves it silently (the next
            // run says when it reuses it).
            Ok(()) if cache.write == Write::Required => {
                eprintln!("wrote build artifact {}", shown(cache.path));
            }
            Ok(()) => {}
            Err(why) if cache.write == Write::Required => {
                return Err(BuildFailure {
                    sources: Some(built.sources),
                    error: BuildError::Run {
                        code: crate::run_errors::E0804,
                        message: format!(
                            "cannot write the build artifact `{}`: {why}",
                            shown(cache.path)
                        ),
                    },
                });
            }
            Err(why) => eprintln!(
                "note: could not write build artifact {}: {why}",
                shown(cache.path)
            ),
        }
    }
    Ok(built)
}

/// Saves `built`, made from the source file `file`, at `path`, atomically.
pub fn store(path: &Path, built: &Built, file: &Path) -> Result<(), String> {
    let key = Key::of(built, file)?;
    let artifact = Artifact {
        key,
        config: built.config.clone(),
        graph: built.graph.clone(),
        placement: built.placement.clone(),
        mode: built.decision.mode,
        mode_reason: built.decision.reason.clone(),
        sizes_note: built.decision.sizes_note.clone(),
        irs: built.compiled.irs.clone(),
        layer_kernel: built.compiled.layer_kernel.clone(),
        kernels: built
            .compiled
            .kernels
            .iter()
            .map(|k| k.to_artifact())
            .collect(),
        warnings: built.warnings.iter().map(SavedDiagnostic::from).collect(),
    };
    let bytes = encode(&artifact)?;
    crate::atomic::write_atomic(path, &bytes).map_err(|e| e.to_string())
}

/// What was found at the artifact's path.
enum Lookup {
    Reused {
        built: Box<Built>,
        code_reused: bool,
    },
    /// No artifact there.
    Missing,
    /// An artifact that cannot be used, and why (one line).
    Stale(String),
    /// The artifact is valid for the sources, but the run cannot go on (bad input data, an
    /// unknown target): the same error a fresh build would give.
    Failed(BuildFailure),
}

/// Reads the artifact at `path` and checks it, cheapest and most telling first: the file, the
/// wsel that wrote it, the invocation, the sources, then the choices (which may depend on the
/// `run` item, trusted only once the sources match), and last the saved code.
fn lookup(path: &Path, request: &BuildRequest<'_>) -> Lookup {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == ErrorKind::NotFound => return Lookup::Missing,
        Err(e) => return Lookup::Stale(format!("cannot read it ({e})")),
    };
    let artifact = match decode(&bytes) {
        Ok(artifact) => artifact,
        Err(why) => return Lookup::Stale(why),
    };
    let key = &artifact.key;
    match WselStamp::current() {
        Some(stamp) if stamp == key.wsel => {}
        _ => return Lookup::Stale("it was built by another wsel binary".into()),
    }
    if let Err(why) = same_invocation(key, request.file) {
        return Lookup::Stale(why);
    }
    let sources = match check_sources(&key.sources) {
        Ok(sources) => sources,
        Err(why) => return Lookup::Stale(why),
    };
    let fail = |error: BuildError| {
        Lookup::Failed(BuildFailure {
            sources: Some(sources.clone()),
            error,
        })
    };
    let config = artifact.config.as_ref();
    let data = match batch_and_inputs(
        &artifact.graph,
        config,
        request.batch,
        request.inputs,
        request.read_inputs,
    ) {
        Ok(data) => data,
        Err(error) => return fail(error),
    };
    let target = match choose_target(request.target, config) {
        Ok(target) => target,
        Err(error) => return fail(error),
    };
    let backend = match choose_backend(request.backend) {
        Ok(backend) => backend,
        Err(message) => return fail(BuildError::Message(message)),
    };
    let mode = choose_mode(request.mode, config);
    let micro_order = choose_micro_order(request.micro_order, config);
    let cost = cost_model(&target);
    let choices = Choices {
        target_name: target.name.clone(),
        target_hash: match target_hash(&target) {
            Ok(hash) => hash,
            Err(why) => return Lookup::Stale(why),
        },
        mode: mode_key(mode, micro_order, request.one_region, request.fuse),
        batch: data.batch,
        copies: request.copies.to_string(),
        backend: backend.name().to_string(),
        cost,
    };
    if let Some(why) = key.choices.difference(&choices) {
        return Lookup::Stale(why);
    }
    let compiled = match load_kernels(&artifact, &cost) {
        Ok(compiled) => compiled,
        Err(why) => return Lookup::Stale(why),
    };
    let warnings = match artifact
        .warnings
        .iter()
        .map(SavedDiagnostic::to_diagnostic)
        .collect::<Option<Vec<_>>>()
    {
        Some(warnings) => warnings,
        None => return Lookup::Stale("it holds a diagnostic this wsel does not know".into()),
    };
    let code_reused = artifact.kernels.iter().all(KernelArtifact::reuses_code);
    Lookup::Reused {
        built: Box::new(Built {
            config: artifact.config,
            graph: artifact.graph,
            placement: artifact.placement,
            decision: ModeDecision {
                mode: artifact.mode,
                reason: artifact.mode_reason,
                sizes_note: artifact.sizes_note,
            },
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
            hang_checked: true,
            sources,
        }),
        code_reused,
    }
}

fn print_warnings(built: &Built, request: &BuildRequest<'_>, color: bool) {
    if request.hang_checks && !built.warnings.is_empty() {
        crate::render::eprint_diagnostics(&built.warnings, &built.sources, color);
    }
}

/// Everything saved, as the payload encodes it.
#[derive(Serialize, Deserialize)]
struct Artifact {
    key: Key,
    config: Option<RunConfig>,
    graph: LayerGraph,
    placement: Placement,
    mode: Mode,
    mode_reason: String,
    sizes_note: Option<String>,
    irs: Vec<KernelIr>,
    layer_kernel: Vec<usize>,
    kernels: Vec<KernelArtifact>,
    warnings: Vec<SavedDiagnostic>,
}

/// When the artifact is valid.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Key {
    wsel: WselStamp,
    /// The working directory and the source path as given: the paths in the graph, the `run`
    /// item and the diagnostics are relative to them.
    working_dir: PathBuf,
    file: PathBuf,
    /// Every loaded source file (stdlib modules as `<std>/name.wse`) with its BLAKE3 hash.
    sources: Vec<(PathBuf, [u8; 32])>,
    choices: Choices,
}

/// The wsel that wrote the artifact.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct WselStamp {
    version: String,
    binary_bytes: u64,
    binary_modified: (u64, u32),
}

/// The build's settings after defaults: what the command line and the `run` item chose.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Choices {
    target_name: String,
    /// BLAKE3 of the resolved target description as JSON.
    target_hash: [u8; 32],
    mode: String,
    batch: u64,
    /// `--copies` as asked for (`auto` or a number).
    copies: String,
    backend: String,
    cost: CostModel,
}

impl WselStamp {
    /// This wsel: its version and its binary's size and modification time; `None` when the
    /// binary cannot be found (no artifact is then trusted).
    fn current() -> Option<WselStamp> {
        let metadata = std::env::current_exe().ok()?.metadata().ok()?;
        let modified = metadata.modified().ok()?.duration_since(UNIX_EPOCH).ok()?;
        Some(WselStamp {
            version: env!("CARGO_PKG_VERSION").to_string(),
            binary_bytes: metadata.len(),
            binary_modified: (modified.as_secs(), modified.subsec_nanos()),
        })
    }
}

impl Key {
    fn of(built: &Built, file: &Path) -> Result<Key, String> {
        let wsel = WselStamp::current().ok_or("cannot find the running wsel binary")?;
        let sources = built
            .sources
            .iter()
            .map(|(path, text)| (path.clone(), *blake3::hash(text.as_bytes()).as_bytes()))
            .collect();
        Ok(Key {
            wsel,
            working_dir: working_dir()?,
            file: file.to_path_buf(),
            sources,
            choices: Choices {
                target_name: built.target.name.clone(),
                target_hash: target_hash(&built.target)?,
                mode: mode_key(
                    built.mode_request,
                    built.micro_order,
                    built.one_region,
                    built.fuse,
                ),
                batch: built.batch,
                copies: built.copies_request.to_string(),
                backend: built.backend.name().to_string(),
                cost: cost_model(&built.target),
            },
        })
    }
}

impl Choices {
    /// Why an artifact built with `self` does not fit `now`, or `None` when it does.
    fn difference(&self, now: &Choices) -> Option<String> {
        if self.target_name != now.target_name {
            return Some(format!(
                "target changed ({} → {})",
                self.target_name, now.target_name
            ));
        }
        if self.target_hash != now.target_hash {
            return Some(format!(
                "the description of target {} changed",
                now.target_name
            ));
        }
        if self.mode != now.mode {
            return Some(format!("mode changed ({} → {})", self.mode, now.mode));
        }
        if self.batch != now.batch {
            return Some(format!("batch changed ({} → {})", self.batch, now.batch));
        }
        if self.copies != now.copies {
            return Some(format!("copies changed ({} → {})", self.copies, now.copies));
        }
        if self.backend != now.backend {
            return Some(format!(
                "backend changed ({} → {})",
                self.backend, now.backend
            ));
        }
        if self.cost != now.cost {
            return Some("the cost model changed".into());
        }
        None
    }
}

fn working_dir() -> Result<PathBuf, String> {
    std::env::current_dir().map_err(|e| format!("cannot read the working directory: {e}"))
}

/// Whether the artifact was made for the same source path, and (for a relative path, which
/// the paths in the graph and the `run` item are relative to) from the same working directory.
fn same_invocation(key: &Key, file: &Path) -> Result<(), String> {
    if key.file.is_relative() && working_dir()? != key.working_dir {
        return Err(format!(
            "it was built from another working directory ({})",
            key.working_dir.display()
        ));
    }
    if file != key.file {
        return Err(format!("it was built from the path {}", key.file.display()));
    }
    Ok(())
}

/// Hashes every listed source and compares; gives the texts, or the first file that changed.
fn check_sources(sources: &[(PathBuf, [u8; 32])]) -> Result<SourceTexts, String> {
    let mut texts = SourceTexts::new();
    for (path, hash) in sources {
        let bytes = if path.starts_with(wsel_sema::STD_PREFIX) {
            match wsel_sema::load::stdlib_source(path) {
                Some(text) => text.as_bytes().to_vec(),
                None => return Err(format!("source missing: {}", path.display())),
            }
        } else {
            match std::fs::read(path) {
                Ok(bytes) => bytes,
                Err(_) => return Err(format!("source missing: {}", path.display())),
            }
        };
        if blake3::hash(&bytes).as_bytes() != hash {
            return Err(format!("source changed: {}", path.display()));
        }
        let text =
            String::from_utf8(bytes).map_err(|_| format!("source changed: {}", path.display()))?;
        texts.insert(path.clone(), text);
    }
    Ok(texts)
}

fn target_hash(target: &wsel_target::Target) -> Result<[u8; 32], String> {
    let json = serde_json::to_vec(target).map_err(|e| format!("cannot hash the target: {e}"))?;
    Ok(*blake3::hash(&json).as_bytes())
}

/// The mode asked for, with the micro-batch order when one was asked for, one region, and
/// no fusion.
fn mode_key(
    mode: ModeRequest,
    order: wsel_map::MicroOrder,
    one_region: bool,
    fuse: bool,
) -> String {
    let key = match order {
        wsel_map::MicroOrder::Auto => mode_name(mode).to_string(),
        wsel_map::MicroOrder::Micro => format!("{}, micro-order micro", mode_name(mode)),
        wsel_map::MicroOrder::Layer => format!("{}, micro-order layer", mode_name(mode)),
    };
    let key = match one_region {
        true => format!("{key}, one region"),
        false => key,
    };
    match fuse {
        true => key,
        false => format!("{key}, no fusion"),
    }
}

fn mode_name(mode: ModeRequest) -> &'static str {
    match mode {
        ModeRequest::Pipelined => "pipelined",
        ModeRequest::Streaming => "streaming",
        ModeRequest::Auto => "auto",
    }
}

/// The compiled kernels, loaded from their saved code.
fn load_kernels(artifact: &Artifact, cost: &CostModel) -> Result<Compiled, String> {
    if artifact.kernels.len() != artifact.irs.len()
        || artifact.layer_kernel.len() != artifact.placement.layers.len()
        || artifact
            .layer_kernel
            .iter()
            .any(|&k| k >= artifact.kernels.len())
    {
        return Err("its kernels do not match its placement".into());
    }
    let kernels = artifact
        .kernels
        .iter()
        .zip(&artifact.irs)
        .map(|(saved, ir)| CompiledKernel::from_artifact(saved, ir, cost).map(Arc::new))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("its compiled code cannot be used: {e}"))?;
    Ok(Compiled {
        kernels,
        layer_kernel: artifact.layer_kernel.clone(),
        irs: artifact.irs.clone(),
    })
}

fn encode(artifact: &Artifact) -> Result<Vec<u8>, String> {
    let payload =
        postcard::to_allocvec(artifact).map_err(|e| format!("cannot encode the artifact: {e}"))?;
    let mut bytes = Vec::with_capacity(HEADER + payload.len());
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    bytes.extend_from_slice(blake3::hash(&payload).as_bytes());
    bytes.extend_from_slice(&payload);
    Ok(bytes)
}

/// The artifact in `bytes`, or why they are not a usable one.
fn decode(bytes: &[u8]) -> Result<Artifact, String> {
    if bytes.len() < MAGIC.len() || &bytes[..MAGIC.len()] != MAGIC {
        return Err("it is not a wsel build artifact".into());
    }
    let Some((header, payload)) = bytes.split_at_checked(HEADER) else {
        return Err("it is truncated".into());
    };
    let mut version = [0u8; 4];
    version.copy_from_slice(&header[8..12]);
    let version = u32::from_le_bytes(version);
    if version != FORMAT_VERSION {
        return Err(format!(
            "it has format {version}, this wsel reads format {FORMAT_VERSION}"
        ));
    }
    if blake3::hash(payload).as_bytes() != &header[12..HEADER] {
        return Err("it is truncated or damaged (checksum mismatch)".into());
    }
    postcard::from_bytes(payload).map_err(|e| format!("it cannot be decoded ({e})"))
}

/// Hooks for the fuzzer (`fuzz/`): the artifact decoder on any bytes.
#[doc(hidden)]
pub mod fuzzing {
    /// Whether `bytes` decode as an artifact (or why not).
    pub fn decode(bytes: &[u8]) -> Result<(), String> {
        super::decode(bytes).map(|_| ())
    }
}

/// A diagnostic as saved (the code as text; `Diagnostic` holds a `&'static str`).
#[derive(Serialize, Deserialize)]
struct SavedDiagnostic {
    code: String,
    warning: bool,
    message: String,
    primary: SavedLabel,
    secondary: Vec<SavedLabel>,
    notes: Vec<String>,
    help: Option<String>,
}

#[derive(Serialize, Deserialize)]
struct SavedLabel {
    file: PathBuf,
    span: Range<usize>,
    message: String,
}

impl From<&Diagnostic> for SavedDiagnostic {
    fn from(d: &Diagnostic) -> Self {
        SavedDiagnostic {
            code: d.code.to_string(),
            warning: d.severity == Severity::Warning,
            message: d.message.clone(),
            primary: SavedLabel::from(&d.primary),
            secondary: d.secondary.iter().map(SavedLabel::from).collect(),
            notes: d.notes.clone(),
            help: d.help.clone(),
        }
    }
}

impl From<&Label> for SavedLabel {
    fn from(l: &Label) -> Self {
        SavedLabel {
            file: l.location.file.clone(),
            span: l.location.span.clone(),
            message: l.message.clone(),
        }
    }
}

impl SavedDiagnostic {
    /// The diagnostic again; `None` for a code that is not a hang check's (the only
    /// diagnostics a successful build keeps).
    fn to_diagnostic(&self) -> Option<Diagnostic> {
        let code = wsel_hangcheck::codes()
            .iter()
            .find(|(code, _)| *code == self.code)?
            .0;
        let label = |l: &SavedLabel| Label {
            location: Location {
                file: l.file.clone(),
                span: l.span.clone(),
            },
            message: l.message.clone(),
        };
        Some(Diagnostic {
            code,
            severity: if self.warning {
                Severity::Warning
            } else {
                Severity::Error
            },
            message: self.message.clone(),
            primary: label(&self.primary),
            secondary: self.secondary.iter().map(label).collect(),
            notes: self.notes.clone(),
            help: self.help.clone(),
        })
    }
}
