//! The band planner's balanced choice (issue #23: each stage takes as many PEs as make the
//! pipeline faster, until the fabric is full or the stages are balanced): at a stage target,
//! the plan with the most PEs whose bottleneck is within [`BALANCE_AIM_PERCENT`] of its mean
//! stage, else the fullest plan.
//!
//! The programme ranks plans by their PEs plus a weight times the stages' sum (`dp`); a
//! larger weight trades PEs for slower light stages, so a larger mean under the same
//! bottleneck. The choice first solves it at a weight above the frame's PEs (the largest
//! sum: when that plan is not balanced, none is), then bisects a geometric grid of weights
//! for the lightest whose plan is balanced: a heavier weight never finds more PEs (each plan
//! is the best for its weight, so the lighter weight's plan holds at least as many PEs as
//! the heavier one's), and none a smaller sum. Not exact: `benches/plan96.py --balanced`
//! searches the same moves exactly (a Pareto front of sum and PEs per state), too slowly for
//! a mapping.

use super::dp::{Plan, Step, UNIT};

/// The balance the mapper aims for: a plan's bottleneck at most this percentage of its mean
/// stage (1.25×, the bound). A plan within it is preferred to a fuller one beyond it.
pub(crate) const BALANCE_AIM_PERCENT: u64 = 125;

/// The lightest weight tried (PEs a cycle of the stages' sum) and the ratio of one weight to
/// the next: the weights tried lie on the grid `WEIGHT_FLOOR × WEIGHT_STEP^k`.
const WEIGHT_FLOOR: f64 = 10.0;
const WEIGHT_STEP: f64 = 1.25;

/// The plan kept at target `t`, given `fullest` (the plan of weight 0 there): `fullest` when
/// it is balanced or no plan at `t` is, else the balanced plan of the lightest weight on the
/// grid, found by bisection.
pub(crate) fn chosen(plan: &Plan<'_>, t: u64, fullest: Vec<Step>) -> Vec<Step> {
    if is_balanced(&fullest) {
        return fullest;
    }
    let weighted = |weight: i64| Plan { weight, ..*plan }.solve(t);
    // Past the frame's PEs a cycle of the sum outweighs every PE: the plan with the largest
    // sum. When even it is not balanced, no plan whose bottleneck is `t` is.
    let frame_pes = f64::from(plan.frame.length * plan.frame.stack * UNIT * UNIT);
    let grid = |k: i32| (WEIGHT_FLOOR * WEIGHT_STEP.powi(k)) as i64;
    let top = (frame_pes / WEIGHT_FLOOR).log(WEIGHT_STEP).ceil().max(0.0) as i32 + 1;
    let Some(mut best) = weighted(grid(top)).filter(|steps| is_balanced(steps)) else {
        return fullest;
    };
    // The sum grows with the weight, so the balanced weights are those from some point on.
    let (mut lo, mut hi) = (0, top);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        match weighted(grid(mid)).filter(|steps| is_balanced(steps)) {
            Some(steps) => (best, hi) = (steps, mid),
            None => lo = mid + 1,
        }
    }
    best
}

/// Whether `steps`' bottleneck is within [`BALANCE_AIM_PERCENT`] of its mean stage.
pub(crate) fn is_balanced(steps: &[Step]) -> bool {
    let bottleneck = steps.iter().map(|s| s.cycles).max().unwrap_or(0);
    let sum: u64 = steps.iter().map(|s| s.cycles).sum();
    bottleneck * steps.len() as u64 * 100 <= sum * BALANCE_AIM_PERCENT
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bands::frame::Frame;
    use crate::bands::ways::StageWays;

    /// A plan's units and stage cycles, and whether it is balanced.
    type Summary = (u32, Vec<u64>, bool);

    /// The fullest and the kept plan at target 10 on one band 2 units high and 12 long (no
    /// room to turn) of a heavy stage, 4 long at 10 cycles, then three stages of `light` ways.
    fn fullest_and_kept(light: &[(u32, u64)]) -> (Summary, Summary) {
        let stage = |straights: &[(u32, u64)]| StageWays {
            straights: vec![straights.to_vec()],
            tiles: vec![vec![None]],
        };
        let mut ways = vec![stage(&[(4, 10)])];
        ways.extend((0..3).map(|_| stage(light)));
        let frame = Frame::rows(12, 2);
        let plan = Plan::fullest(&ways, &[2], &frame);
        assert!(plan.solve(9).is_none(), "the heavy stage needs 10 cycles");
        let summary = |steps: &[Step]| {
            let units = steps.iter().map(|s| s.rows * s.cols).sum();
            (
                units,
                steps.iter().map(|s| s.cycles).collect(),
                is_balanced(steps),
            )
        };
        let fullest = plan.solve(10).expect("a plan at 10");
        let before = summary(&fullest);
        (before, summary(&chosen(&plan, 10, fullest)))
    }

    /// Light stages 2 long at 8 cycles or 4 long at 3: the fullest plan (4 + 2 + 2 + 4, 24
    /// units) runs 10, 8, 8, 3, a mean of 7.25 and its bottleneck 1.38× that; the balanced
    /// one (4 + 2 + 2 + 2, 20 units) runs 10, 8, 8, 8: 1.18×. The choice keeps the balanced
    /// one; the fullest is what the planner kept before.
    #[test]
    fn the_fullest_plan_gives_way_to_a_balanced_one() {
        let (fullest, kept) = fullest_and_kept(&[(2, 8), (4, 3)]);
        assert_eq!(fullest, (24, vec![10, 8, 8, 3], false));
        assert_eq!(kept, (20, vec![10, 8, 8, 8], true));
    }

    /// Light stages at 3 cycles whatever their length: every plan runs 10, 3, 3, 3 (1.92×),
    /// none is balanced, and the fullest stays.
    #[test]
    fn without_a_balanced_plan_the_fullest_stays() {
        let (fullest, kept) = fullest_and_kept(&[(2, 3), (4, 3)]);
        assert_eq!(fullest, (24, vec![10, 3, 3, 3], false));
        assert_eq!(kept, fullest);
    }
}
