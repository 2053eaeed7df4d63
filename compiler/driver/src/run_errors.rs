//! Explains a failed simulation in the program's own terms: which layer and kernel a PE runs,
//! its logical position, and array names instead of the ids compiled code reports.

use wsel_codegen::faults::{FAULT_DIV_BY_ZERO, FAULT_SRAM_TOO_SMALL};
use wsel_map::Placement;
use wsel_sim::{SimError, TaskFault};

use crate::pipeline::Compiled;

/// One paragraph describing `error`, naming the layer, PE, task and array where known.
pub fn describe(error: &SimError, placement: &Placement, compiled: &Compiled) -> String {
    let SimError::Task {
        at,
        task_name,
        cycle,
        fault,
        ..
    } = error
    else {
        return format!("the program failed on the fabric: {error}");
    };
    let Some((layer_index, layer)) = placement
        .layers
        .iter()
        .enumerate()
        .find(|(_, l)| l.rect.contains(*at))
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
        other => other.to_string(),
    };
    format!("the program failed on the fabric: {what}\n  at {place}")
}
