//! The errors of running a program, with stable codes, and the explanation of a failed
//! simulation in the program's own terms: which layer and kernel a PE runs, its logical
//! position, and array names instead of the ids compiled code reports.

use wsel_codegen::faults::{FAULT_DIV_BY_ZERO, FAULT_SLICE_LENGTH, FAULT_SRAM_TOO_SMALL};
use wsel_map::Placement;
use wsel_sim::{SimError, TaskFault};

use crate::pipeline::Compiled;

/// E0801 (a data file cannot be read), E0802 (it holds another dtype than the tensor
/// declares) and E0803 (another shape) belong to `wsel-data`, which `wsel check` reports too.
pub use wsel_data::{E0801, E0802, E0803};
/// An output file (result, report, trace, picture) cannot be written.
pub const E0804: &str = "E0804";
/// The data does not fit the run: a model input without data, an unknown input name, inputs
/// with different sample counts, a batch larger than the data.
pub const E0805: &str = "E0805";
/// The program failed on the simulated fabric: a run-time error in a task, a deadlock, a
/// livelock, the cycle budget.
pub const E0806: &str = "E0806";
/// A trace flag cannot be read or names nothing on the fabric: `--trace-layers` names a layer
/// the model does not have, `--trace-region` is not four numbers x0,y0,x1,y1 with x0 <= x1
/// and y0 <= y1 or reaches beyond the fabric, `--trace-cycles` is not a range `a..b`, `a..`
/// or `..b`, or is empty.
pub const E0807: &str = "E0807";
/// The program ran to its end, but a stream of the result delivered more or fewer values than
/// its part of the output tensor holds.
pub const E0808: &str = "E0808";

/// `--systems` cannot run as asked: no systems, more systems than samples, or a flag a
/// cluster run does not support yet (`--trace`, `--map`, `--timeline`, `--report-detail`).
pub const E0809: &str = "E0809";
/// The processes of a cluster simulation cannot work together: an MPI launcher started
/// several processes of a `wsel` built without the `mpi` feature, or MPI cannot start.
pub const E0810: &str = "E0810";
/// `wsel train --systems N` cannot train as asked: no systems, or a batch that does not split
/// into equal shares over the systems.
pub const E0811: &str = "E0811";
/// The file gives no model to work on: it defines none.
pub const E0820: &str = "E0820";
/// The file gives no model to work on: it defines several and no `run` item names one.
pub const E0821: &str = "E0821";
/// `wsel train --mode pipelined` in micro-batches: a backward layer that updates parameters
/// cannot add up the micro-batches' gradients (it declares no `deferred` or `accumulate`).
pub const E0816: &str = "E0816";
/// `wsel train --mode pipelined --systems N`: a backward layer that updates parameters
/// cannot wait for the cluster's sum of the gradients (it declares no `deferred`).
pub const E0817: &str = "E0817";
/// `wsel train --mode pipelined --systems N`: a layer that updates parameters has no layer
/// to stream a gradient out of the fabric (`L_train_grad_p`) or to take the sums back in
/// (`L_train_fill`).
pub const E0818: &str = "E0818";
/// `wsel train --mode pipelined --systems N`: a layer's `L_train_grad_p` gives a gradient of
/// another shape than the parameter's.
pub const E0819: &str = "E0819";

/// Every code of running a program, with a one-line summary, in code order.
pub const CODES: &[(&str, &str)] = &[
    (E0801, "data file cannot be read"),
    (E0802, "data file has the wrong dtype"),
    (E0803, "data file has the wrong shape"),
    (E0804, "output file cannot be written"),
    (E0805, "data does not fit the run"),
    (E0806, "the program failed on the fabric"),
    (E0807, "a trace flag names nothing on the fabric"),
    (E0808, "the result stream has the wrong number of values"),
    (E0809, "the cluster cannot run as asked"),
    (E0810, "the cluster's processes cannot work together"),
    (E0811, "the cluster cannot train as asked"),
    (
        E0816,
        "a pipelined layer cannot add up micro-batches' gradients",
    ),
    (
        E0817,
        "a pipelined layer cannot wait for the cluster's gradient sum",
    ),
    (
        E0818,
        "a pipelined layer cannot send its gradients out or take the sums in",
    ),
    (E0819, "a pipelined layer's gradient has another shape"),
    (E0820, "the file has no model"),
    (E0821, "the file has several models and no run item"),
];

/// One paragraph describing `error`, naming the layer, PE, task and array where known.
pub fn describe(error: &SimError, placement: &Placement, compiled: &Compiled) -> String {
    describe_phase(error, placement, compiled, None)
}

/// [`describe`] for the simulation of one phase of a weight-streaming run, whose layers
/// share their PEs with the other phases' layers.
pub fn describe_phase(
    error: &SimError,
    placement: &Placement,
    compiled: &Compiled,
    phase: Option<u32>,
) -> String {
    let SimError::Task {
        at,
        task_name,
        cycle,
        fault,
        ..
    } = error
    else {
        let hint = match error {
            SimError::CycleBudget { .. } => " (`--max-cycles` raises the budget)",
            _ => "",
        };
        return format!("the program failed on the fabric: {error}{hint}");
    };
    let Some((layer_index, layer)) = placement
        .layers
        .iter()
        .enumerate()
        .find(|(_, l)| l.rect.contains(*at) && phase.is_none_or(|p| l.phase == p))
    else {
        return format!("the program failed on the fabric: {error}");
    };
    let ir = &compiled.irs[compiled.layer_kernel[layer_index]];
    let (row, col) = layer.orientation.logical(layer.rect, *at).unwrap_or((0, 0));
    let place = format!(
        "layer `{}` (kernel `{}`), PE ({}, {}) = row {row}, column {col} of its region, task `{task_name}`, cycle {cycle}",
        layer.name, layer.kernel, at.x, at.y
    );
    let what = match fault {
        TaskFault::OutOfBounds {
            array: FAULT_DIV_BY_ZERO,
            index,
            ..
        } => format!("integer division by zero (dividend {})", *index as i64),
        TaskFault::OutOfBounds {
            array: FAULT_SLICE_LENGTH,
            index,
            bound,
        } => format!(
            "a slice of {} elements is used in a vector statement whose slice assigned has {bound} elements: the lengths must be equal",
            *index as i64
        ),
        TaskFault::OutOfBounds {
            array: FAULT_SRAM_TOO_SMALL,
            index,
            bound,
        } => format!("the PE's SRAM holds {bound} words, the kernel needs {index}"),
        TaskFault::OutOfBounds {
            array,
            index,
            bound,
        } => {
            let name = ir
                .arrays
                .get(*array as usize)
                .map_or_else(|| format!("#{array}"), |a| a.name.clone());
            format!(
                "index {} is out of bounds for array `{name}` of length {bound}",
                *index as i64
            )
        }
        TaskFault::Livelock { tasks } => format!(
            "the PE ran {tasks} tasks in a row that only activate tasks, with no receive or send of its own open: tasks that keep activating each other? (the limit is a thousandth of the cycle budget; `--max-cycles` raises both)"
        ),
        TaskFault::PastCycleBudget { max_cycles } => format!(
            "the task was still running when the budget of {max_cycles} cycles ran out: an endless loop? (`--max-cycles` raises the budget)"
        ),
        other => other.to_string(),
    };
    format!("the program failed on the fabric: {what}\n  at {place}")
}
