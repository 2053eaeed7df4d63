//! The command-line interface: clap definitions only. Help text comes from these doc comments.

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};
use wsel_map::Copies;

use crate::threads::Threads;

/// `wsel run --max-cycles` by default: a billion cycles (over a second of an 850 MHz fabric,
/// thousands of times what the examples take), small enough that an endless loop in a task
/// stops within seconds of wall time.
pub const DEFAULT_MAX_CYCLES: u64 = 1_000_000_000;

/// wsel — write, check and run programs for a simulated wafer-scale processor.
#[derive(Debug, Parser)]
#[command(name = "wsel", version, propagate_version = true)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Check .wse files and report every problem, without running anything.
    ///
    /// Exit status: 0 when no file has an error, 1 when any has, 2 when a file cannot be read
    /// or the command line is wrong.
    #[command(
        after_help = "Examples:\n  wsel check examples/digits/main.wse\n  wsel check --format json a.wse b.wse"
    )]
    Check(CheckArgs),
    /// Run a model on the simulated fabric: map it, compile its kernels, stream the inputs
    /// through, write the result as .npy and print a report.
    ///
    /// Every value and cycle count comes from executing the program on the simulated fabric.
    /// Settings come from the file's `run` item; flags override them. The build is saved as an
    /// artifact (.wsel/<file stem>.wselb next to the source; one per combination of settings
    /// given as flags) and reused, skipping parsing, mapping and code generation, while the
    /// sources and the settings stay the same.
    #[command(
        after_help = "Examples:\n  wsel run examples/digits/main.wse\n  wsel run examples/gemv/main.wse --mode streaming --backend interp --report r.json\n  wsel run model.wse --input x=data/x.npy --output out/y.npy --target wse2\n  wsel run examples/heat/main.wse --target wse2 --trace t.json --trace-region 0,0,15,15 --trace-cycles 40000..50000\n  wsel run examples/digits/main.wse --heatmap heat.png --map map.png"
    )]
    Run(Box<RunArgs>),
    /// Build a model without running it: check, lower, map, run the static hang checks and
    /// compile every kernel instance; write the build artifact that `wsel run` reuses while
    /// the program, target, mode, batch and backend stay the same; print the intermediate
    /// representations on request.
    #[command(
        after_help = "Examples:\n  wsel build examples/digits/main.wse\n  wsel build examples/gemv/main.wse --emit graph --emit ir\n  wsel build model.wse --backend interp -o model.wselb"
    )]
    Build(BuildArgs),
    /// Format .wse files in place (the same formatter as the language server).
    ///
    /// Only whitespace changes: comments and every token are kept. A file with syntax errors
    /// is left unchanged and reported. Exit status: 0 when done (with `--check`: when every
    /// file is formatted), 1 when a file has syntax errors (with `--check`: or would
    /// change), 2 when a file cannot be read or written.
    #[command(
        after_help = "Examples:\n  wsel fmt examples/digits/main.wse\n  wsel fmt --check src/*.wse"
    )]
    Fmt(FmtArgs),
    /// Run the language server on standard input and output (for editors).
    ///
    /// Diagnostics as you type, hover, go to definition, references, completion, symbols,
    /// semantic tokens, inlay hints and formatting. See `editors/` for Neovim and VS Code.
    #[command(
        after_help = "Example (Neovim):\n  vim.lsp.start({ name = 'wsel', cmd = { 'wsel', 'lsp' } })"
    )]
    Lsp,
    /// Map a model onto a target and show where every layer goes.
    ///
    /// Prints one line per layer: its region (origin and logical rows × columns, `T` when
    /// transposed), PEs, SRAM per PE used of available, colors, and the estimated cycles per
    /// sample, then where tensors enter and leave the fabric, the bottleneck stage and the
    /// estimate for the whole batch. With copies of the pipeline, every copy's layers are
    /// listed, numbered. The model, batch, target and mode come from the file's `run` item
    /// unless given here.
    /// Exit status: 0 when the model maps, 1 when the program has errors or does not map, 2
    /// when a file cannot be read or written or the command line is wrong.
    #[command(
        after_help = "Examples:\n  wsel map examples/digits/main.wse\n  wsel map examples/mlp_streaming/main.wse --target wse2 --svg map.svg --routes\n  wsel map model.wse --mode pipelined --batch 8 --format json\n  wsel map examples/digits/main.wse --target wse2 --copies 1\n  wsel map examples/digits/main.wse --target wse2 --svg digits.png"
    )]
    Map(MapArgs),
    /// Translate an ONNX model into a .wse program over std.nn's layers.
    ///
    /// Gemm and MatMul (with the Add of its bias) become `dense`, Relu `relu`, Softmax over
    /// the features `softmax`; any other operator is an error naming its node. The weights
    /// are written as .npy files in `<program stem>_weights/` beside the program.
    #[command(
        after_help = "Examples:\n  wsel import model.onnx\n  wsel import model.onnx -o models/mlp.wse"
    )]
    Import(ImportArgs),
    /// Train a model on the simulated fabric: forward, loss and backward layer by layer with
    /// the batch's activations in SRAM, the weights streamed from the weight store (again for
    /// the backward pass), the gradients streamed back to the store, which applies the
    /// optimizer (docs/running.md, "Training").
    ///
    /// Writes the trained weights (<param>.npy), the loss per step (loss.csv) and its curve
    /// (loss.svg) into the output folder, all or none, and prints a report per step. Every
    /// loss, gradient and cycle count comes from executing the training graph on the fabric.
    #[command(
        after_help = "Examples:\n  wsel train examples/digits/train.wse                 (as its `train` item says)\n  wsel train examples/digits/train.wse --steps 50 --optimizer adam --lr 0.01\n  wsel train model.wse --input x=data/x.npy --labels data/y.npy --batch 32 --epochs 2"
    )]
    Train(Box<TrainArgs>),
}

#[derive(Debug, clap::Args)]
pub struct TrainArgs {
    /// The .wse file with the model (and usually a `run` item naming its data).
    pub file: PathBuf,
    /// The machine: `dev`, `wse2`, `wse3`, or a target .toml file [default: the `run` item's,
    /// else dev].
    #[arg(long)]
    pub target: Option<String>,
    /// `streaming`: one layer at a time, the weights streamed from the store; `pipelined`: every
    /// layer resident in its own region, forward and backward on the same PEs (docs/running.md,
    /// "Pipelined training") [default: the `train` item's, else streaming].
    #[arg(long, value_enum)]
    pub mode: Option<ModeArg>,
    /// A model input's training data, as NAME=PATH (overrides the item's `input`).
    #[arg(long = "input", value_name = "NAME=PATH")]
    pub inputs: Vec<String>,
    /// The training labels: class indices (.npy, integers) for `cross_entropy`, target
    /// values shaped like the model's result for `mse` [default: the item's `labels`].
    #[arg(long)]
    pub labels: Option<PathBuf>,
    /// The loss layer of std.loss applied to the model's result [default: the `train`
    /// item's, else cross_entropy].
    #[arg(long)]
    pub loss: Option<String>,
    /// The optimizer [default: the `train` item's, else sgd].
    #[arg(long, value_enum)]
    pub optimizer: Option<OptimizerArg>,
    /// The learning rate [default: the `train` item's, else 0.01].
    #[arg(long, allow_negative_numbers = true)]
    pub lr: Option<f32>,
    /// SGD's momentum, in [0, 1) [default: the `train` item's, else 0.9].
    #[arg(long, allow_negative_numbers = true)]
    pub momentum: Option<f32>,
    /// Adam's beta1, in [0, 1) [default: the `train` item's, else 0.9].
    #[arg(long, allow_negative_numbers = true)]
    pub beta1: Option<f32>,
    /// Adam's beta2, in [0, 1) [default: the `train` item's, else 0.999].
    #[arg(long, allow_negative_numbers = true)]
    pub beta2: Option<f32>,
    /// Adam's epsilon, positive [default: the `train` item's, else 1e-8].
    #[arg(long, allow_negative_numbers = true)]
    pub eps: Option<f32>,
    /// Optimizer steps (one batch each) [default: the `train` item's, else one epoch's worth].
    #[arg(long, conflicts_with = "epochs")]
    pub steps: Option<u64>,
    /// Passes over the training data (the last incomplete batch of each is dropped).
    #[arg(long)]
    pub epochs: Option<u64>,
    /// Samples per step [default: the item's batch, else 32].
    #[arg(long)]
    pub batch: Option<u64>,
    /// Samples per micro-batch, a divisor of the batch: each step runs the micro-batches'
    /// forward and backward passes one after the other and the store accumulates their
    /// gradients before its one update [default: the `train` item's, else the whole batch,
    /// or the largest divisor of it whose activations fit the SRAM].
    #[arg(long, value_name = "N")]
    pub micro_batch: Option<u64>,
    /// In streaming mode, whether the backward pass recomputes activations instead of keeping
    /// them from the forward pass: `auto` when they do not fit the SRAM and recomputing is
    /// estimated faster than micro-batches, `never`, or `always` [default: the `train` item's,
    /// else auto] (docs/running.md, "How a training step runs").
    #[arg(long, value_enum)]
    pub recompute: Option<RecomputeArg>,
    /// In streaming mode, run every phase of the step on one region, even where per-layer
    /// rows would estimate faster (docs/running.md, "How a training step runs").
    #[arg(long)]
    pub one_region: bool,
    /// Seed of the batch order (a new permutation of the samples every epoch) [default: the
    /// `train` item's, else 0].
    #[arg(long)]
    pub seed: Option<u64>,
    /// Take the samples in file order instead of shuffling them.
    #[arg(long, conflicts_with = "shuffle")]
    pub no_shuffle: bool,
    /// Shuffle the samples even where the `train` item says `shuffle = false;`.
    #[arg(long)]
    pub shuffle: bool,
    /// The folder for the trained weights, loss.csv and loss.svg [default: the `train` item's
    /// `out_dir`, else out/train beside the file].
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Allow the trained weights to replace the files the model's parameters are read from.
    #[arg(long)]
    pub overwrite_params: bool,
    /// Test data for the accuracy printed after training, as NAME=PATH, with `--test-labels`.
    #[arg(
        long = "test-input",
        value_name = "NAME=PATH",
        requires = "test_labels"
    )]
    pub test_inputs: Vec<String>,
    /// Class labels of the test data.
    #[arg(long, requires = "test_inputs")]
    pub test_labels: Option<PathBuf>,
    /// The code generator for per-PE code.
    #[arg(long, value_enum, default_value_t = BackendArg::Cranelift)]
    pub backend: BackendArg,
    /// Worker threads of the simulator at most (results do not depend on it): each phase uses
    /// one per 4,096 PEs with a program, at least one, at most N and one per core; `=N` asks
    /// for exactly N (still at most one per core).
    #[arg(long, default_value_t = Threads::at_most(1), value_name = "N|=N")]
    pub threads: Threads,
    /// Stop a phase still running after this many simulated cycles.
    #[arg(long, default_value_t = DEFAULT_MAX_CYCLES, value_name = "CYCLES")]
    pub max_cycles: u64,
    /// Train on a cluster of N systems in data parallel: each system runs the step on its
    /// equal share of the batch, the gradients are summed through the target's
    /// broadcast/reduce tree on their way to the weight store. Under `mpirun -np K` (a build
    /// with the `mpi` feature) the systems are spread over the K processes; the trained
    /// weights do not depend on K (docs/running.md, "Training on a cluster").
    #[arg(long, value_name = "N")]
    pub systems: Option<u32>,
    /// Print only the summary, not a line per step.
    #[arg(long)]
    pub quiet: bool,
    /// When to colour diagnostics.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OptimizerArg {
    /// SGD with momentum (`--momentum 0` for plain SGD).
    Sgd,
    /// Adam with bias correction.
    Adam,
}

#[derive(Debug, clap::Args)]
pub struct ImportArgs {
    /// The ONNX model (.onnx).
    pub model: PathBuf,
    /// The program to write [default: the model's path with the extension .wse].
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
}

/// What to build and for what: the model file and the settings that choose its placement.
/// Each setting defaults to the file's `run` item, then to the default named.
#[derive(Debug, clap::Args)]
pub struct ModelArgs {
    /// The .wse file with the model (and usually a `run` item).
    pub file: PathBuf,
    /// The machine: `dev`, `wse2`, `wse3`, or a target .toml file [default: the `run` item's, else dev].
    #[arg(long)]
    pub target: Option<String>,
    /// Pipelined (weights resident), streaming (weights from the weight store), or auto
    /// (pipelined when everything fits in SRAM) [default: the `run` item's, else auto].
    #[arg(long, value_enum)]
    pub mode: Option<ModeArg>,
    /// Samples per batch: the first N samples of the input files [default: the `run` item's,
    /// else all the samples of the input files, else 1].
    #[arg(long)]
    pub batch: Option<u64>,
    /// Copies of the pipeline for data parallelism, each running its own block of the batch:
    /// a number that divides the batch (1 turns replication off), `fill:N`: N copies whose
    /// layers take the PEs their share of the fabric holds, or `auto`: as many as the
    /// mapper's estimate says make the batch faster (pipelined mode only).
    #[arg(long, value_name = "N|fill:N|auto", default_value = "auto")]
    pub copies: Copies,
    /// Weight streaming in micro-batches: `layer` runs each layer over every micro-batch, its
    /// weights streamed once and held, the waiting micro-batches parked in the weight store;
    /// `micro` runs every layer for one micro-batch, then the next (each streams the weights
    /// again); `auto` runs `layer` wherever it can run, else `micro`, and the report says why
    /// and what each order takes by the estimate [default: the `run` item's, else auto].
    #[arg(long, value_enum)]
    pub micro_order: Option<MicroOrderArg>,
    /// In streaming mode, run every phase on one region, even where per-layer rows would
    /// estimate faster (docs/running.md, "How weight streaming runs").
    #[arg(long)]
    pub one_region: bool,
    /// In pipelined mode, give every layer its own region and stage, even a relu or gelu that
    /// alone reads a dense's result, which otherwise runs in the dense's region
    /// (docs/mapping.md §4, "Fusion").
    #[arg(long)]
    pub no_fuse: bool,
}

#[derive(Debug, clap::Args)]
pub struct MapArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// Also draw the placement as a picture at this path: SVG, or PNG when the name ends in
    /// `.png` (docs/mapping.md shows both).
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// Draw the routes between regions in the SVG picture.
    #[arg(long, requires = "svg")]
    pub routes: bool,
    /// Print the table for people, or the whole placement as JSON on standard output.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// When to colour diagnostics.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
}

#[derive(Debug, clap::Args)]
pub struct FmtArgs {
    /// The .wse files to format.
    #[arg(required = true)]
    pub files: Vec<std::path::PathBuf>,
    /// Change nothing; list the files that would change and exit with 1 if there are any.
    #[arg(long)]
    pub check: bool,
}

#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// The .wse files to check. Their imports are checked too.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// How to print diagnostics: for people, or as JSON on standard output for tools.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    pub format: Format,
    /// When to colour the output.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
}

#[derive(Debug, clap::Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// The code generator for per-PE code.
    #[arg(long, value_enum, default_value_t = BackendArg::Cranelift)]
    pub backend: BackendArg,
    /// Simulate a cluster of N systems in data parallel: each a whole fabric running the
    /// model on its share of the batch (consecutive blocks, the first `batch mod N` one sample
    /// longer); in weight streaming the weights reach them through the target's
    /// broadcast/reduce tree. Under `mpirun -np K` (a build with the `mpi` feature) the systems
    /// are spread over the K processes; the outputs do not depend on K (docs/running.md).
    #[arg(long, value_name = "N")]
    pub systems: Option<u32>,
    /// Worker threads of the simulator at most (results do not depend on it): each simulation
    /// uses one per 4,096 PEs with a program, at least one, at most N and at most the number
    /// of cores (more threads than cores only wait on each other); `=N` asks for exactly N
    /// (still at most one per core).
    #[arg(long, default_value_t = Threads::at_most(1), value_name = "N|=N")]
    pub threads: Threads,
    /// A model input's data, as NAME=PATH: a .npy file, or an .npz archive holding an array
    /// called NAME (overrides the `run` item's `input`).
    #[arg(long = "input", value_name = "NAME=PATH")]
    pub inputs: Vec<String>,
    /// Where to write the result [default: the `run` item's `output`, else out/<model>.npy].
    #[arg(long)]
    pub output: Option<PathBuf>,
    /// Class labels (.npy): print the accuracy of the result's argmax against them.
    #[arg(long)]
    pub labels: Option<PathBuf>,
    /// Write the report as JSON: the run's figures and every layer's (docs/running.md lists
    /// every field).
    #[arg(long, value_name = "FILE")]
    pub report: Option<PathBuf>,
    /// Also put every PE's and every link's activity into the JSON report (large on a big
    /// fabric).
    #[arg(long, requires = "report")]
    pub report_detail: bool,
    /// Write a Chrome/Perfetto trace (open it at ui.perfetto.dev), streamed to the file as the
    /// run goes: one process per layer, one track per PE, a slice per task run, counters of
    /// wavelets per link.
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// Trace only these layers, named as in the report's table (`dense#1` also names the
    /// `dense#1` of every copy of the pipeline).
    #[arg(
        long,
        value_name = "LAYER,...",
        value_delimiter = ',',
        requires = "trace"
    )]
    pub trace_layers: Vec<String>,
    /// Trace only the PEs from column x0, row y0 to column x1, row y1, both corners included
    /// (physical coordinates, as `at` in the report's table).
    #[arg(long, value_name = "x0,y0,x1,y1", requires = "trace")]
    pub trace_region: Option<String>,
    /// Trace only the cycles from a to b, b excluded (`a..b`; `a..` to the end, `..b` from
    /// the start): task runs that overlap them and wavelets that move in them.
    #[arg(long, value_name = "a..b", requires = "trace")]
    pub trace_cycles: Option<String>,
    /// Draw the placement on the fabric as SVG (PNG when the name ends in `.png`).
    #[arg(long, value_name = "FILE")]
    pub map: Option<PathBuf>,
    /// Draw where the run's time went: every PE's busy fraction and every link's load over
    /// the fabric, gathered into tiles when PEs are smaller than a few pixels (SVG, or PNG
    /// when the name ends in `.png`; docs/running.md).
    #[arg(long, value_name = "FILE")]
    pub heatmap: Option<PathBuf>,
    /// Draw the run over its cycles as SVG: the phases of weight streaming, when each phase's
    /// weights came in (`docs/running.md`).
    #[arg(long, value_name = "SVG")]
    pub timeline: Option<PathBuf>,
    /// Stop a program still running after this many simulated cycles (an endless loop in a
    /// task, tasks that keep activating each other) with an error naming the PE. A PE that
    /// runs a thousandth of this many tasks in a row that only activate tasks, with nothing of
    /// its own open on the fabric, is stopped sooner, as a livelock.
    #[arg(long, default_value_t = DEFAULT_MAX_CYCLES, value_name = "CYCLES")]
    pub max_cycles: u64,
    /// Neither reuse nor write the build artifact: build everything afresh.
    #[arg(long)]
    pub no_cache: bool,
    /// The build artifact to reuse when valid, and to write after building afresh
    /// [default: .wsel/<file stem>.wselb next to the source file, or
    /// .wsel/<file stem>.<settings>.wselb with settings given as flags, e.g. main.b10.interp].
    #[arg(long, value_name = "PATH")]
    pub artifact: Option<PathBuf>,
    /// When to colour diagnostics.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
    /// Skip the static hang checks (E0701-E0704) and simulate anyway. Hidden: it exists for
    /// demonstrating that the checks catch real hangs (the simulator then reports the
    /// deadlock or the unrouted send), not for normal use.
    #[arg(long, hide = true)]
    pub no_hang_checks: bool,
}

#[derive(Debug, clap::Args)]
pub struct BuildArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// The code generator to compile with.
    #[arg(long, value_enum, default_value_t = BackendArg::Cranelift)]
    pub backend: BackendArg,
    /// What to print: the layer graph, the kernel IR of every distinct kernel instance, or
    /// the placement as JSON. Repeat the flag for several.
    #[arg(long, value_enum)]
    pub emit: Vec<Emit>,
    /// Where to write the build artifact [default: where `wsel run` with the same flags looks
    /// for it: .wsel/<file stem>.wselb next to the source file, or
    /// .wsel/<file stem>.<settings>.wselb with settings given as flags].
    #[arg(short, long, value_name = "PATH")]
    pub output: Option<PathBuf>,
    /// When to colour diagnostics.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    pub color: ColorChoice,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Emit {
    Graph,
    Ir,
    Placement,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ModeArg {
    Pipelined,
    Streaming,
    Auto,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RecomputeArg {
    Auto,
    Never,
    Always,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MicroOrderArg {
    Auto,
    Micro,
    Layer,
}

impl MicroOrderArg {
    pub fn order(self) -> wsel_map::MicroOrder {
        match self {
            MicroOrderArg::Auto => wsel_map::MicroOrder::Auto,
            MicroOrderArg::Micro => wsel_map::MicroOrder::Micro,
            MicroOrderArg::Layer => wsel_map::MicroOrder::Layer,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum BackendArg {
    Cranelift,
    Interp,
    /// Only in builds with the `llvm` feature.
    Llvm,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    Human,
    Json,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    Auto,
    Always,
    Never,
}

impl ColorChoice {
    /// Whether to colour output written to standard error.
    pub fn use_color_on_stderr(self) -> bool {
        use std::io::IsTerminal;
        match self {
            ColorChoice::Always => true,
            ColorChoice::Never => false,
            ColorChoice::Auto => {
                std::env::var_os("NO_COLOR").is_none() && std::io::stderr().is_terminal()
            }
        }
    }
}
