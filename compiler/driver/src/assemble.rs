//! Turns a placed, compiled program and its tensors into the simulator's [`Program`]: per-PE
//! code, SRAM images (array initial values, then weight blocks from `bind ... to array`), port
//! tables, router entries, and the edge streams (model inputs and streamed weights cut into
//! parts, `docs/mapping.md` §4), plus how to reassemble the result from the edge outputs.
//!
//! With several copies of the pipeline (`docs/mapping.md` §5), `graph` is lowered for one
//! copy's share of the batch; copy `c` is fed samples `c·b .. (c+1)·b` of the host inputs
//! (`b` samples per copy), every copy gets all the weights, and the result is put back
//! together in sample order.

use std::sync::Arc;

use wsel_codegen::CompiledKernel;
use wsel_ir::graph::{BindInfo, BindTarget, CValue, LayerGraph, LayerImpl, SplitAxis, TensorRef};
use wsel_ir::kernel::ScalarTy;
use wsel_ir::kernel::{KernelIr, TaskId};
use wsel_map::{EdgePoint, Placement};
use wsel_sim::{AbiEntry, AbiTask, EdgeInput, EdgeOutput, Program, SwitchPosition, TaskCode};

use crate::parts::{Cell, block_indices, gather, padded_slots, scatter, tiled_block_indices};
use crate::pipeline::Compiled;
use crate::resident::Resident;
use crate::tensor::Tensor;

/// The host data a run needs: one tensor per model input and per parameter, in graph order.
pub struct HostData<'a> {
    pub inputs: &'a [Tensor],
    pub params: &'a [Tensor],
}

/// The program, and how each of its edge outputs maps back into the result tensor.
pub struct Assembled {
    pub program: Program,
    /// For each `program.outputs[i]`: which part of the result it carries.
    pub output_parts: Vec<OutputPart>,
}

/// One edge output stream: the result's part `part` of `parts`, per sample, of the samples of
/// copy `copy` of `copies`, and the split that defines which elements a part holds.
#[derive(Debug, Clone)]
pub struct OutputPart {
    pub part: u32,
    pub parts: u32,
    pub copy: u32,
    pub copies: u32,
    pub split: Vec<SplitAxis>,
}

/// Which part of a placement becomes the program: all of it (pipelined mode), or one phase of
/// a weight-streaming run, whose layer takes its resident inputs from SRAM as the phases before
/// it left them.
#[derive(Clone, Copy)]
pub enum Scope<'a> {
    Whole,
    Phase {
        phase: u32,
        resident: &'a Resident,
        /// Cycles of the store's latency already past (`Program::weight_store_warm`).
        warm: u64,
    },
}

impl Scope<'_> {
    fn holds(&self, layer: &wsel_map::PlacedLayer) -> bool {
        match self {
            Scope::Whole => true,
            Scope::Phase { phase, .. } => layer.phase == *phase,
        }
    }
}

/// Builds the simulator program. Fails (with a sentence) only on an internal inconsistency
/// between the mapper's placement and the kernel IR, which the checks before make unlikely.
pub fn assemble(
    graph: &LayerGraph,
    placement: &Placement,
    compiled: &Compiled,
    data: &HostData<'_>,
) -> Result<Assembled, String> {
    assemble_scope(graph, placement, compiled, data, Scope::Whole)
}

/// Builds the simulator program of `scope`.
pub fn assemble_scope(
    graph: &LayerGraph,
    placement: &Placement,
    compiled: &Compiled,
    data: &HostData<'_>,
    scope: Scope<'_>,
) -> Result<Assembled, String> {
    let mut program = Program::new();
    for (kernel, ir) in compiled.kernels.iter().zip(&compiled.irs) {
        let tasks: Vec<(&str, Arc<dyn TaskCode>)> = ir
            .tasks
            .iter()
            .enumerate()
            .map(|(i, task)| (task.name.as_str(), task_code(kernel, TaskId(i as u32))))
            .collect();
        program.add_kernel(&ir.name, tasks);
    }
    for (l, placed) in placement.layers.iter().enumerate() {
        if !scope.holds(placed) {
            continue;
        }
        let kernel_index = compiled.layer_kernel[l];
        let ir = &compiled.irs[kernel_index];
        let layer = &graph.layers[placement.instance(l)];
        let imp = layer.impls.get(placed.implementation).ok_or_else(|| {
            format!(
                "layer `{}` has no implementation {}",
                layer.name, placed.implementation
            )
        })?;
        let base_image = ir.initial_sram();
        for row in 0..placed.rows {
            for col in 0..placed.cols {
                let mut image = base_image.clone();
                let cell = Cell {
                    row: u64::from(row),
                    col: u64::from(col),
                    rows: u64::from(placed.rows),
                    cols: u64::from(placed.cols),
                };
                load_array_binds(&mut image, ir, imp, layer, data, cell)?;
                let at = placed.pe(row, col);
                if let Scope::Phase { resident, .. } = scope {
                    resident.load(&mut image, ir, imp, layer, cell, at)?;
                }
                let pe = program.add_pe(
                    at,
                    kernel_index as u32,
                    (ir.sram_words() * 4).max(4),
                    &placed.port_table(row, col),
                    &[ir.entry.0],
                );
                let entry = &mut program.pes[pe];
                // The region is physical; a transposed one shows its tasks logical rows along
                // physical columns.
                entry.region = placed.rect;
                entry.transposed = placed.orientation.transposed();
                entry.mirrored = placed.orientation.mirrors();
                entry.sram_init = words_to_bytes(&image);
            }
        }
    }
    let routes = match scope {
        Scope::Whole => placement.routes(),
        Scope::Phase { phase, warm, .. } => {
            program.weight_store_warm = warm;
            placement.phase_routes(phase)
        }
    };
    for (color, route) in routes {
        program.add_route(route.at, color, route.rx, route.tx);
    }
    for placed in placement.layers.iter().filter(|p| scope.holds(p)) {
        set_switches(&mut program, placed)?;
    }
    let in_scope = |point: &&EdgePoint| scope.holds(&placement.layers[point.layer]);
    let phases = match scope {
        Scope::Whole => WeightPhases::new(placement),
        Scope::Phase { .. } => WeightPhases::single(),
    };
    for point in placement.inputs.iter().filter(in_scope) {
        program
            .inputs
            .push(edge_input(graph, placement, data, &phases, point)?);
    }
    let mut output_parts = Vec::new();
    for point in placement.outputs.iter().filter(in_scope) {
        program.outputs.push(EdgeOutput {
            at: point.at,
            side: point.side,
            color: point.color,
        });
        let layer = &graph.layers[placement.instance(point.layer)];
        let imp = &layer.impls[placement.layers[point.layer].implementation];
        output_parts.push(OutputPart {
            part: point.part,
            parts: point.parts,
            copy: point.copy,
            copies: placement.copies,
            split: port_split(imp, &layer.output_name),
        });
    }
    Ok(Assembled {
        program,
        output_parts,
    })
}

/// Gives the routes of `placed`'s switched ports their switches (`wsel_map::SwitchAt`).
fn set_switches(program: &mut Program, placed: &wsel_map::PlacedLayer) -> Result<(), String> {
    if !placed.ports.iter().any(|p| p.switch.is_some()) {
        return Ok(());
    }
    for row in 0..placed.rows {
        for col in 0..placed.cols {
            let at = placed.pe(row, col);
            for switch in placed.switches_at(row, col) {
                let overrides: Vec<SwitchPosition> = switch
                    .overrides
                    .iter()
                    .map(|&(rx, tx)| SwitchPosition { rx, tx })
                    .collect();
                if !program.set_switch(at, switch.color, &overrides, switch.start, switch.ring) {
                    return Err(format!(
                        "layer `{}`: the switch of color {} on PE ({row}, {col}) is not valid \
                         (a position receives or forwards nowhere)",
                        placed.name, switch.color
                    ));
                }
            }
        }
    }
    Ok(())
}

/// Reassembles the model's result from the edge outputs' wavelets: `graph` is lowered for one
/// copy's samples, and copy `c`'s streams fill samples `c·b .. (c+1)·b` of the result.
pub fn collect_result(
    graph: &LayerGraph,
    parts: &[OutputPart],
    streams: &[Vec<u32>],
) -> Result<Tensor, String> {
    let (elem, shape) = match graph.output {
        TensorRef::Layer(l) => (
            graph.layers[l].output_elem,
            graph.layers[l].output_shape.clone(),
        ),
        TensorRef::Input(i) => (graph.inputs[i].elem, graph.inputs[i].shape.clone()),
        TensorRef::Param(p) => (
            graph.params[p].tensor.elem,
            graph.params[p].tensor.shape.clone(),
        ),
    };
    collect_parts(elem, shape, true, parts, streams)
}

/// [`collect_result`] for a layer's `param` result (a loss or a gradient, on one copy): it has
/// no sample dimension, so its split covers its whole shape (`bind dw to port gs split [_,
/// rows];`: row r's columns of dW).
pub fn collect_param_result(
    graph: &LayerGraph,
    parts: &[OutputPart],
    streams: &[Vec<u32>],
) -> Result<Tensor, String> {
    let TensorRef::Layer(l) = graph.output else {
        return Err("a `param` result comes from a layer".into());
    };
    let layer = &graph.layers[l];
    collect_parts(
        layer.output_elem,
        layer.output_shape.clone(),
        false,
        parts,
        streams,
    )
}

/// Scatters the parts' streams into a tensor of `shape`: per sample of its first dimension
/// when `by_sample`, else as one whole.
fn collect_parts(
    elem: ScalarTy,
    mut shape: Vec<u64>,
    by_sample: bool,
    parts: &[OutputPart],
    streams: &[Vec<u32>],
) -> Result<Tensor, String> {
    let copies = parts.first().map_or(1, |p| p.copies) as usize;
    let (samples, sample_shape) = if by_sample {
        let samples = shape.first().copied().unwrap_or(1) as usize;
        (samples, shape[1.min(shape.len())..].to_vec())
    } else if copies == 1 {
        (1, shape.clone())
    } else {
        return Err(format!("a `param` result from {copies} copies"));
    };
    let sample_len: usize = sample_shape.iter().product::<u64>() as usize;
    let mut words = vec![0u32; copies * samples * sample_len];
    for (part, stream) in parts.iter().zip(streams) {
        let indices = block_indices(&sample_shape, &part.split, part_cell(part.part, part.parts));
        if stream.len() != samples * indices.len() {
            return Err(format!(
                "result part {} of {} (copy {}) delivered {} values, {} expected ({} samples × {})",
                part.part,
                part.parts,
                part.copy,
                stream.len(),
                samples * indices.len(),
                samples,
                indices.len()
            ));
        }
        let first = part.copy as usize * samples;
        for (s, chunk) in stream.chunks(indices.len().max(1)).enumerate() {
            let at = (first + s) * sample_len;
            scatter(&mut words[at..at + sample_len], &indices, chunk);
        }
    }
    if by_sample && let Some(batch) = shape.first_mut() {
        *batch = (copies * samples) as u64;
    }
    Ok(Tensor { elem, shape, words })
}

/// The task code of one task: any backend, through the ABI adapter.
fn task_code(kernel: &Arc<CompiledKernel>, task: TaskId) -> Arc<dyn TaskCode> {
    let entry: Arc<dyn AbiEntry> = Arc::new(KernelTask {
        kernel: Arc::clone(kernel),
        task,
    });
    // SAFETY: every backend of wsel-codegen touches only the SRAM and arguments its context
    // describes, passes the context unchanged to runtime calls, and never unwinds (its
    // errors are statuses).
    Arc::new(unsafe { AbiTask::from_entry(entry) })
}

/// One task of a compiled kernel, as an ABI entry point.
struct KernelTask {
    kernel: Arc<CompiledKernel>,
    task: TaskId,
}

impl AbiEntry for KernelTask {
    unsafe fn call(&self, ctx: *mut wsel_abi::TaskCtx) -> u32 {
        // SAFETY: forwarded from this method's contract.
        unsafe { self.kernel.run(self.task, ctx) }
    }
}

/// Writes the weight blocks of every `bind ... to array` into the PE's image.
fn load_array_binds(
    image: &mut [u32],
    ir: &KernelIr,
    imp: &LayerImpl,
    layer: &wsel_ir::graph::LayerInstance,
    data: &HostData<'_>,
    cell: Cell,
) -> Result<(), String> {
    for bind in imp.binds.iter().filter(|b| b.target == BindTarget::Array) {
        if is_activation(layer, &bind.tensor) {
            // Resident: loaded from SRAM as an earlier phase left it (`crate::resident`).
            continue;
        }
        let tensor = bound_tensor(layer, &bind.tensor, data).ok_or_else(|| {
            format!(
                "`{}` binds `{}`, which is not a weight",
                layer.name, bind.tensor
            )
        })?;
        let array = ir
            .arrays
            .iter()
            .find(|a| a.name == bind.target_name)
            .ok_or_else(|| format!("kernel `{}` has no array `{}`", ir.name, bind.target_name))?;
        let tiles = tile_counts(layer, imp, bind, cell)?;
        let block = gather(
            &tensor.words,
            &tiled_block_indices(&tensor.shape, &bind.split, &tiles, cell),
        );
        // Every PE's array is sized for the largest block; a smaller one keeps its strides.
        // (A block listed tile by tile is stored as listed.)
        let (slots, largest) = if tiles.is_empty() {
            padded_slots(&tensor.shape, &bind.split, cell)
        } else {
            ((0..block.len()).collect(), array.len as usize)
        };
        if largest != array.len as usize {
            return Err(format!(
                "`{}`: the largest block of `{}` has {largest} elements, array `{}` holds {}",
                layer.name, bind.tensor, array.name, array.len
            ));
        }
        let start = array.offset_words as usize;
        scatter(&mut image[start..start + largest], &slots, &block);
    }
    Ok(())
}

/// Whether `name` is one of the layer's activations (its output or a non-`param` input).
pub(crate) fn is_activation(layer: &wsel_ir::graph::LayerInstance, name: &str) -> bool {
    name == layer.output_name
        || layer
            .arg_names
            .iter()
            .position(|n| n == name)
            .is_some_and(|i| !matches!(layer.args.get(i), Some(TensorRef::Param(_))))
}

/// A bind's `tiles` counts, evaluated for the layer's region (`cell.rows × cell.cols`
/// logical PEs); empty without a `tiles` clause.
fn tile_counts(
    layer: &wsel_ir::graph::LayerInstance,
    imp: &LayerImpl,
    bind: &BindInfo,
    cell: Cell,
) -> Result<Vec<u64>, String> {
    fn free(side: &wsel_ir::graph::RegionSide) -> Option<&str> {
        match side {
            wsel_ir::graph::RegionSide::Free(name) => Some(name.as_str()),
            wsel_ir::graph::RegionSide::Fixed(_) => None,
        }
    }
    let (rows_name, cols_name) = (free(&imp.rows), free(&imp.cols));
    let lookup = |name: &str| {
        if Some(name) == rows_name {
            return Some(CValue::Int(cell.rows as i64));
        }
        if Some(name) == cols_name {
            return Some(CValue::Int(cell.cols as i64));
        }
        layer
            .dims
            .get(name)
            .map(|&v| CValue::Int(i64::try_from(v).unwrap_or(i64::MAX)))
    };
    bind.tiles
        .iter()
        .map(|e| {
            e.eval_int(&lookup)
                .ok()
                .and_then(|v| u64::try_from(v).ok())
                .ok_or_else(|| {
                    format!(
                        "`{}`: a tile count of `{}` has no value on this region",
                        layer.name, bind.tensor
                    )
                })
        })
        .collect()
}

/// The weight tensor bound under the layer's input name `name`.
fn bound_tensor<'a>(
    layer: &wsel_ir::graph::LayerInstance,
    name: &str,
    data: &HostData<'a>,
) -> Option<&'a Tensor> {
    let position = layer.arg_names.iter().position(|n| n == name)?;
    match layer.args.get(position)? {
        TensorRef::Param(p) => data.params.get(*p),
        _ => None,
    }
}

/// The wavelets of one edge input stream: the part of a model input for every sample of the
/// stream's copy, or a parameter's part sent once (to each copy) from the weight store.
fn edge_input(
    graph: &LayerGraph,
    placement: &Placement,
    data: &HostData<'_>,
    phases: &WeightPhases,
    point: &EdgePoint,
) -> Result<EdgeInput, String> {
    let layer = &graph.layers[placement.instance(point.layer)];
    let placed = &placement.layers[point.layer];
    let imp = &layer.impls[placed.implementation];
    let cell = part_cell(point.part, point.parts);
    let region = Cell {
        row: 0,
        col: 0,
        rows: u64::from(placed.rows),
        cols: u64::from(placed.cols),
    };
    let (wavelets, source, phase) = match point.source {
        wsel_map::EdgeSource::Host => {
            let tensor = data
                .inputs
                .get(point.index)
                .ok_or_else(|| format!("no data for model input `{}`", point.tensor))?;
            // An unpark (`crate::streamed_layer`) takes a parked result, not a model input.
            let parked = || match layer.args.as_slice() {
                [TensorRef::Layer(_)] => layer.arg_names.first().map(String::as_str),
                _ => None,
            };
            let name =
                arg_name(layer, TensorRef::Input(point.index)).or_else(|e| parked().ok_or(e))?;
            let sample_shape = &tensor.shape[1..];
            let indices = part_indices(sample_shape, layer, imp, name, region, cell)?;
            // This copy's block of samples.
            let sample_len = tensor.sample_len().max(1);
            let per_copy = placement.samples_per_copy as usize;
            let first = point.copy as usize * per_copy * sample_len;
            let own = tensor
                .words
                .get(first..first + per_copy * sample_len)
                .ok_or_else(|| {
                    format!(
                        "model input `{}` holds too few samples for copy {}",
                        point.tensor, point.copy
                    )
                })?;
            let mut words = Vec::with_capacity(indices.len() * per_copy);
            for sample in own.chunks(sample_len) {
                words.extend(gather(sample, &indices));
            }
            (words, wsel_sim::EdgeSource::Host, 0)
        }
        wsel_map::EdgeSource::WeightStore => {
            let name = arg_name(layer, TensorRef::Param(point.index))?;
            let mut words = Vec::new();
            for tensor_name in port_sharers(imp, name) {
                let tensor = bound_tensor(layer, tensor_name, data).ok_or_else(|| {
                    format!("`{}`: no data for parameter `{tensor_name}`", layer.name)
                })?;
                let indices = part_indices(&tensor.shape, layer, imp, tensor_name, region, cell)?;
                words.extend(gather(&tensor.words, &indices));
            }
            (
                words,
                wsel_sim::EdgeSource::WeightStore,
                phases.of(placement.instance(point.layer)),
            )
        }
    };
    Ok(EdgeInput {
        at: point.at,
        side: point.side,
        color: point.color,
        data: wavelets,
        source,
        start: 0,
        phase,
    })
}

/// The store serves weights layer by layer, the next layer's while the current one computes
/// (`runtime/sim/README.md`, weight-store phases): a layer's phase is its rank, in graph order,
/// among the layers whose weights stream from the store. Copies of a layer share its phase.
struct WeightPhases {
    /// The graph layers whose weights stream from the store, ascending.
    streaming: Vec<usize>,
}

impl WeightPhases {
    /// One phase for every weight stream (a phase of weight streaming is one program).
    fn single() -> WeightPhases {
        WeightPhases {
            streaming: Vec::new(),
        }
    }

    fn new(placement: &Placement) -> WeightPhases {
        let streaming: std::collections::BTreeSet<usize> = placement
            .inputs
            .iter()
            .filter(|p| p.source == wsel_map::EdgeSource::WeightStore)
            .map(|p| placement.instance(p.layer))
            .collect();
        WeightPhases {
            streaming: streaming.into_iter().collect(),
        }
    }

    /// The phase of graph layer `instance`'s weight streams.
    fn of(&self, instance: usize) -> u32 {
        self.streaming.partition_point(|&l| l < instance) as u32
    }
}

/// The layer's input name under which it receives `tensor`.
fn arg_name(layer: &wsel_ir::graph::LayerInstance, tensor: TensorRef) -> Result<&str, String> {
    layer
        .args
        .iter()
        .position(|a| *a == tensor)
        .and_then(|i| layer.arg_names.get(i))
        .map(String::as_str)
        .ok_or_else(|| format!("layer `{}` does not take {tensor:?}", layer.name))
}

/// The tensors bound to the port that `name` is bound to, in bind order: a port may carry
/// several, one after another (`docs/language.md` §6.3).
fn port_sharers<'a>(imp: &'a LayerImpl, name: &'a str) -> Vec<&'a str> {
    let port = imp
        .binds
        .iter()
        .find(|b| b.target == BindTarget::Port && b.tensor == name)
        .map(|b| b.target_name.as_str());
    imp.binds
        .iter()
        .filter(|b| b.target == BindTarget::Port && Some(b.target_name.as_str()) == port)
        .map(|b| b.tensor.as_str())
        .collect()
}

/// The indices of edge part `cell` of the tensor bound to a port under `name` (shaped
/// `shape`: per sample for activations), in the order the port streams them; `region` gives
/// the layer's logical size, for `tiles`.
fn part_indices(
    shape: &[u64],
    layer: &wsel_ir::graph::LayerInstance,
    imp: &LayerImpl,
    name: &str,
    region: Cell,
    cell: Cell,
) -> Result<Vec<usize>, String> {
    let Some(bind) = imp
        .binds
        .iter()
        .find(|b| b.target == BindTarget::Port && b.tensor == name)
    else {
        return Ok(block_indices(shape, &[], cell));
    };
    let tiles = tile_counts(layer, imp, bind, region)?;
    Ok(tiled_block_indices(shape, &bind.split, &tiles, cell))
}

/// The split of the port bind of tensor `name` (empty: the whole tensor).
fn port_split(imp: &LayerImpl, name: &str) -> Vec<SplitAxis> {
    imp.binds
        .iter()
        .find(|b| b.target == BindTarget::Port && b.tensor == name)
        .map(|b| b.split.clone())
        .unwrap_or_default()
}

/// An edge part as a cell: a port's split has one axis, so the part index serves as both the
/// row and the column position.
fn part_cell(part: u32, parts: u32) -> Cell {
    Cell {
        row: u64::from(part),
        col: u64::from(part),
        rows: u64::from(parts),
        cols: u64::from(parts),
    }
}

fn words_to_bytes(words: &[u32]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}
