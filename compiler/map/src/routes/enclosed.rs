//! A quick proof that no path exists: when a part's goal lies in a small pocket cut off by
//! dead PEs, regions and other routes, a search from the part's start floods the whole fabric
//! before it fails (hundreds of times per mapping with 1% of the PEs dead). Flooding from the
//! goal instead exhausts the pocket after a few PEs. Where the goal's side is large the
//! answer is "unknown", and the search from the start runs as before, so the paths found
//! are the same.

use std::collections::{BTreeMap, VecDeque};

use wsel_target::{Coord, Dir, PortSet};

use super::{CoordSet, PathFinder};

/// The most PEs the flood from the goal visits before giving up.
const BUDGET: usize = 1 << 12;

impl PathFinder<'_, '_> {
    /// Whether [`PathFinder::bfs_in`] over the whole fabric from `starts` surely cannot reach
    /// `goal`: `goal` is no start and may not be entered, or the PEs the search could pass
    /// through from `goal` (live links, free for `class`, not in `tree`) are exhausted within
    /// [`BUDGET`] without meeting a start.
    pub(super) fn goal_enclosed(
        &self,
        class: usize,
        starts: &[Coord],
        goal: Coord,
        tree: &BTreeMap<Coord, (PortSet, PortSet)>,
    ) -> bool {
        let target = self.problem.target;
        let enterable = |c: Coord| !tree.contains_key(&c) && self.free_for(class, c);
        if starts.contains(&goal) {
            return false;
        }
        if !enterable(goal) {
            return true;
        }
        let mut seen = CoordSet::default();
        seen.insert(goal);
        let mut queue = VecDeque::from([goal]);
        while let Some(c) = queue.pop_front() {
            for d in Dir::ALL {
                let Some(n) = target.neighbor(c, d) else {
                    continue;
                };
                if self.dead.link_dead(c, d) {
                    continue;
                }
                if starts.contains(&n) {
                    return false;
                }
                if enterable(n) && seen.insert(n) {
                    if seen.len() > BUDGET {
                        return false;
                    }
                    queue.push_back(n);
                }
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::routes::blocked::Blocked;
    use crate::search::Problem;
    use crate::{MapOptions, fixtures};
    use wsel_ir::graph::Mode;
    use wsel_target::{Rect, Target};

    /// On `dev` with a ring of dead PEs around (5, 5): a goal inside it is enclosed, one
    /// outside is not, and in both cases the answer agrees with an unbounded search over the
    /// whole fabric (the reference).
    #[test]
    fn a_goal_inside_a_dead_ring_is_enclosed() {
        let mut target = Target::dev();
        for x in 3..=7 {
            for y in 3..=7 {
                if x == 3 || x == 7 || y == 3 || y == 7 {
                    target.defects.add_dead_pe(Coord::new(x, y));
                }
            }
        }
        let graph = fixtures::mlp(&[4, 4], 1, false);
        let options = MapOptions::default();
        let mut diagnostics = Vec::new();
        let problem = Problem::build(
            &graph,
            &target,
            Mode::Pipelined,
            &options,
            None,
            &mut diagnostics,
        )
        .expect("a two-layer chain has candidates on dev");
        let class_layers = [Vec::new()];
        let finder = PathFinder {
            problem: &problem,
            dead: &problem.dead,
            blocked: Blocked::new(
                (target.width, target.height),
                &problem.dead,
                &[],
                &class_layers,
            ),
            used: vec![CoordSet::default()],
            reserved: CoordSet::default(),
        };
        let whole = Rect::new(0, 0, target.width, target.height);
        let starts = [Coord::new(12, 12)];
        let tree = BTreeMap::new();
        for (goal, enclosed) in [(Coord::new(5, 5), true), (Coord::new(1, 14), false)] {
            assert_eq!(
                finder.goal_enclosed(0, &starts, goal, &tree),
                enclosed,
                "{goal}"
            );
            let found = finder.bfs_in(0, &starts, |c| c == goal, &tree, whole, usize::MAX);
            assert_eq!(found.is_none(), enclosed, "{goal}");
        }
    }
}
