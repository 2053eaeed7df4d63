//! Sizes that fill a copy's tile (`docs/mapping.md` §5, "Copies that fill their tiles"):
//! when the user asks for `k` copies that fill the fabric, each copy's layers take the PEs
//! its share of the fabric holds instead of the fewest that keep the pipeline's pace.
//!
//! The sizes start at the largest of every class's domain and come down one class at a time,
//! each step the one that gives up the fewest PEs while every layer keeps an allowed size no
//! slower than `period` (the one-copy mapping's bottleneck stage), until the copy takes at
//! most `budget` PEs. A copy's period therefore never grows; its layers only take more PEs,
//! and their inputs more parts.

use super::Problem;

/// Logical `(rows, cols)` per layer taking at most `budget` PEs in all, as many as the steps
/// down reach, with every layer's estimate at most `period`; `None` when no such sizes are
/// found.
pub(crate) fn filling_sizes(
    problem: &Problem<'_>,
    budget: u64,
    period: u64,
) -> Option<Vec<(u32, u32)>> {
    let mut at: Vec<usize> = problem
        .domains
        .iter()
        .map(|d| d.len().checked_sub(1))
        .collect::<Option<_>>()?;
    loop {
        let allowed = every_layer_allowed(problem, &at, period);
        if allowed && area(problem, &at) <= budget {
            return Some(sizes(problem, &at));
        }
        // The step down that keeps the layers allowed, if one does, and gives up fewest PEs.
        at = (0..at.len())
            .filter(|&c| at[c] > 0)
            .map(|c| {
                let mut next = at.clone();
                next[c] -= 1;
                next
            })
            .max_by_key(|next| {
                (
                    every_layer_allowed(problem, next, period),
                    area(problem, next),
                )
            })?;
    }
}

/// Every layer's logical size with class `c` at position `at[c]` of its domain.
fn sizes(problem: &Problem<'_>, at: &[usize]) -> Vec<(u32, u32)> {
    problem
        .layers
        .iter()
        .enumerate()
        .map(|(l, lp)| problem.size(l, at[lp.rows_class], at[lp.cols_class]))
        .collect()
}

/// The PEs of every layer's region at positions `at`.
fn area(problem: &Problem<'_>, at: &[usize]) -> u64 {
    super::pes(&sizes(problem, at))
}

/// Whether every layer has an allowed size at positions `at`, estimated at most `period`.
fn every_layer_allowed(problem: &Problem<'_>, at: &[usize], period: u64) -> bool {
    problem.layers.iter().enumerate().all(|(l, lp)| {
        problem
            .candidate(l, at[lp.rows_class], at[lp.cols_class])
            .is_some_and(|c| c.estimate.cycles <= period)
    })
}
