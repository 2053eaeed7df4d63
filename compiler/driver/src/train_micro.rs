//! Micro-batches in pipelined training (`docs/running.md`, "Micro-batches in pipelined
//! training"). When the activations the forward keeps for a whole batch do not fit the
//! SRAM (E0601 at the batch), a step runs the batch in equal blocks — the largest divisor of
//! the batch whose programs map — each through the forward program and a backward program.
//! The backward programs before the last keep the gradients on the PEs (`deferred`), all but
//! the first add to what they find there (`accumulate`), and the last micro-batch's updates
//! the weights; the loss is taken over the whole batch (`over`), so the blocks' parts add up
//! to the step's gradient and loss.

use wsel_diagnostic::{Diagnostic, Location};
use wsel_ir::graph::LayerGraph;
use wsel_map::diagnostics::E0601;

use crate::pipeline::BuildError;
use crate::run_errors::E0816;
use crate::train_pipelined::Side;

/// The backward programs of the micro-batches before the last one of a step.
pub(crate) struct Partial {
    /// Samples per micro-batch.
    pub samples: u64,
    /// The first micro-batch's: it starts the gradients and keeps them.
    pub first: Side,
    /// The others': they add to the gradients and keep them.
    pub middle: Side,
}

impl Partial {
    /// The backward program of micro-batch `i` but the last.
    pub fn backward(&self, i: usize) -> &Side {
        if i == 0 { &self.first } else { &self.middle }
    }
}

/// The scalar inputs set for the backward programs of the first micro-batch, of the middle
/// ones and of the last (the others keep their defaults, `false`).
pub(crate) const FIRST: [&str; 1] = ["deferred"];
pub(crate) const MIDDLE: [&str; 2] = ["deferred", "accumulate"];
pub(crate) const LAST: [&str; 1] = ["accumulate"];

/// The sizes to try for a batch of `batch` samples: its divisors, largest first.
pub(crate) fn sizes(batch: u64) -> Vec<u64> {
    (1..=batch)
        .rev()
        .filter(|d| batch.is_multiple_of(*d))
        .collect()
}

/// What [`fit`] found: the micro-batch's samples and what `try_size` built for it, and why the
/// first size did not build when a later one was taken.
pub(crate) struct Fitted<T> {
    pub samples: u64,
    pub value: T,
    pub first_failure: Option<BuildError>,
}

/// The first of `sizes` for which `try_size` succeeds. A failure other than a layer that fits
/// no region (E0601) at the first size stands; after it, every size is tried, and when none
/// succeeds the first failure stands.
pub(crate) fn fit<T>(
    sizes: &[u64],
    mut try_size: impl FnMut(u64) -> Result<T, BuildError>,
) -> Result<Fitted<T>, BuildError> {
    let mut first_failure = None;
    for &samples in sizes {
        match try_size(samples) {
            Ok(value) => {
                return Ok(Fitted {
                    samples,
                    value,
                    first_failure,
                });
            }
            Err(failure) if first_failure.is_none() && !too_big(&failure) => return Err(failure),
            Err(failure) => {
                first_failure.get_or_insert(failure);
            }
        }
    }
    Err(first_failure.unwrap_or_else(|| BuildError::Message("no micro-batch size to try".into())))
}

/// Why a batch of `batch` samples runs in micro-batches of `m`, the first size having failed
/// with `failure`: its kept activations do not fit, and, when a layer fits on a wider region
/// whose programs do not route, that region (the mapper's note on E0601, `` `L` on R × C does
/// not route (…) ``).
pub(crate) fn why_split(batch: u64, m: u64, failure: Option<&BuildError>) -> String {
    let not_routed = match failure {
        Some(BuildError::Diagnostics(d)) => d
            .iter()
            .filter(|d| d.code == E0601)
            .flat_map(|d| &d.notes)
            .find(|n| n.contains("does not route")),
        _ => None,
    };
    let wider = not_routed.map_or(String::new(), |n| format!(", and {n}"));
    format!(
        "the activations a batch of {batch} samples keeps for the backward pass do not fit the fabric's SRAM{wider}: running micro-batches of {m}, the largest divisor of the batch that fits"
    )
}

/// Whether `failure` says a layer fits no region at this batch.
fn too_big(failure: &BuildError) -> bool {
    matches!(failure, BuildError::Diagnostics(d) if d.iter().any(|d| d.code == E0601))
}

/// E0816 unless every backward layer that updates parameters declares the scalar inputs
/// `deferred` and `accumulate` (`docs/language.md` §11.2), which micro-batches need.
pub(crate) fn check_scalars(backward: &LayerGraph) -> Result<(), BuildError> {
    for name in ["deferred", "accumulate"] {
        require_scalar(backward, name, E0816, |layer| {
            let message = format!(
                "`{layer}` cannot add up the gradients of micro-batches: it has no scalar input `{name}`"
            );
            let help = "a batch trained in micro-batches (asked for, or because the activations it keeps do not fit the SRAM) needs `deferred: bool = false` (keep the gradients, no update) and `accumulate: bool = false` (add to the kept gradients), as std.nn's `dense_train_back` declares them (docs/language.md §11.2); or train a smaller batch";
            (message, "trained in micro-batches here", help.to_string())
        })?;
    }
    Ok(())
}

/// The error `code` at the first layer of `backward` that updates parameters and declares no
/// scalar input `name`; `words(layer)` gives its message, label and help.
pub(crate) fn require_scalar(
    backward: &LayerGraph,
    name: &str,
    code: &'static str,
    words: impl Fn(&str) -> (String, &'static str, String),
) -> Result<(), BuildError> {
    for layer in &backward.layers {
        let updates = layer.params().next().is_some();
        if !updates || layer.scalars.iter().any(|(scalar, _)| scalar == name) {
            continue;
        }
        let at = Location {
            file: layer.call.file.clone(),
            span: layer.call.span.clone(),
        };
        let (message, label, help) = words(&layer.layer);
        let diagnostic = Diagnostic::error(code, message, at, label).with_help(help);
        return Err(BuildError::Diagnostics(vec![diagnostic]));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_the_divisors_largest_first() {
        assert_eq!(sizes(12), [12, 6, 4, 3, 2, 1]);
        assert_eq!(sizes(7), [7, 1]);
    }

    fn too_big_failure() -> BuildError {
        let at = Location {
            file: "m.wse".into(),
            span: 0..1,
        };
        BuildError::Diagnostics(vec![Diagnostic::error(E0601, "too big", at, "here")])
    }

    #[test]
    fn fit_takes_the_first_size_that_builds_after_a_batch_too_big() {
        let fitted = fit(&[8, 4, 2], |s| {
            if s > 2 { Err(too_big_failure()) } else { Ok(s) }
        });
        let fitted = fitted.ok();
        assert_eq!(fitted.as_ref().map(|f| (f.samples, f.value)), Some((2, 2)));
        let why = fitted.and_then(|f| f.first_failure);
        assert!(why.as_ref().is_some_and(too_big));
    }

    /// The mapper's note that a wider region does not route is the reason given.
    #[test]
    fn a_wider_region_that_does_not_route_is_the_reason() {
        let plain = why_split(16, 8, Some(&too_big_failure()));
        assert_eq!(
            plain,
            "the activations a batch of 16 samples keeps for the backward pass do not fit the fabric's SRAM: running micro-batches of 8, the largest divisor of the batch that fits"
        );
        let note = "`attention_qkv_train#1` on 1 × 2 does not route (cannot route part 1)";
        let BuildError::Diagnostics(mut found) = too_big_failure() else {
            unreachable!("a failure of diagnostics");
        };
        found[0].notes.push(note.into());
        let why = why_split(16, 8, Some(&BuildError::Diagnostics(found)));
        assert!(
            why.contains(
                "SRAM, and `attention_qkv_train#1` on 1 × 2 does not route (cannot route part 1): running micro-batches of 8"
            ),
            "{why}"
        );
    }

    #[test]
    fn fit_stops_at_another_failure_of_the_whole_batch() {
        let mut tried = Vec::new();
        let fitted = fit(&[8, 4], |s| -> Result<u64, BuildError> {
            tried.push(s);
            Err(BuildError::Message("wrong".into()))
        });
        assert!(matches!(fitted, Err(BuildError::Message(_))));
        assert_eq!(tried, [8]);
    }

    #[test]
    fn fit_keeps_the_first_failure_when_no_size_builds() {
        let fitted = fit(&[8, 4], |s| -> Result<u64, BuildError> {
            match s {
                8 => Err(too_big_failure()),
                _ => Err(BuildError::Message("wrong".into())),
            }
        });
        assert!(matches!(fitted, Err(ref f) if too_big(f)));
    }
}
