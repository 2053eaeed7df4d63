//! Choosing every layer's region size (`docs/mapping.md` §5).
//!
//! Each layer has two size variables, its logical rows `R` and columns `C`. A bound port's
//! part count is one of them (or 1), and connected layers must agree on part counts, so the
//! variables of connected ports are merged into **classes** that take one value. Each class
//! has a domain: the sizes every member's `where` conditions (those mentioning only that
//! side) allow, up to the fabric's longer side. Each layer then has a table of candidates
//! over its two classes' domains: the sizes whose remaining conditions hold and whose SRAM
//! fits, with their estimate and area.
//!
//! For a per-stage target `T`, a dynamic programme over the classes (in order of first use,
//! keeping only the classes later layers still need) finds the assignment with every layer's
//! estimate at most `T` and the least total area; the placer then tries to put it on the
//! fabric. A binary search over the candidates' estimates finds the smallest `T` that both
//! solves and places, so the bottleneck stage is as fast as the fabric allows and lighter
//! layers take no more PEs than they need to keep up.
//!
//! When the least-area assignment for a target cannot be placed, routed or colored, the
//! candidate of the layer that failed is ruled out and the next-least-area assignment is
//! tried (a few times per target), so one size that cannot lie on the fabric — say one
//! whose output edge would face off it — does not end the search while others fit.

mod fill;
mod problem;
mod wider;

use std::collections::{HashMap, HashSet};

use wsel_diagnostic::Diagnostic;
use wsel_ir::graph::Mode;
use wsel_target::Rect;

use crate::diagnostics as diag;
use crate::place;
use crate::placement::Orientation;

pub(crate) use fill::filling_sizes;
pub(crate) use problem::{Candidate, Problem};

/// The sizes and places chosen.
pub(crate) struct Choice {
    pub stage_target: u64,
    /// Logical `(rows, cols)` per layer.
    pub sizes: Vec<(u32, u32)>,
    pub regions: Vec<(Rect, Orientation)>,
    pub candidates: Vec<Candidate>,
}

/// Finds the smallest per-stage target whose sizes solve, place, and pass `complete` (routes
/// and colors); `None` with diagnostics when even the most relaxed target fails.
pub(crate) fn choose<T>(
    problem: &Problem<'_>,
    diagnostics: &mut Vec<Diagnostic>,
    complete: impl Fn(&Choice) -> Result<T, Incomplete>,
) -> Option<(Choice, T)> {
    let dp = Dp::new(problem);
    let targets = stage_targets(problem);
    let &loosest = targets.last()?;
    // One target: the least-area sizes, placed and completed. When they cannot be placed or
    // routed, the size of the layer that failed is ruled out and the next-least-area sizes
    // are tried, a few times (a size that cannot lie on the fabric, e.g. one whose output edge
    // would face off it, must not end the search while other sizes fit).
    let attempt = |t: u64, (snug, strict): (bool, bool)| -> Result<(Choice, T), Failure> {
        let mut banned: HashSet<(usize, usize, usize)> = HashSet::new();
        let mut failure: Option<Failure> = None;
        let mut wider = wider::Wider::default();
        for _ in 0..MAX_RETRIES {
            let picks = match dp.solve(problem, t, &banned) {
                Ok(p) => p,
                Err(l) => {
                    failure.get_or_insert(Failure::Parts(l));
                    break;
                }
            };
            let sizes: Vec<(u32, u32)> = picks
                .iter()
                .enumerate()
                .map(|(l, &(ri, ci))| problem.size(l, ri, ci))
                .collect();
            let candidates: Vec<Candidate> = picks
                .iter()
                .enumerate()
                .filter_map(|(l, &(ri, ci))| problem.candidate(l, ri, ci))
                .collect();
            let mut placing = Placing {
                problem,
                sizes: &sizes,
                candidates: &candidates,
                stage_target: t,
                failure: None,
                blamed: Vec::new(),
            };
            for variant in 0..2 {
                let found = placing.variant(variant, (snug, strict), &mut wider, &complete);
                if let Some(found) = found {
                    return Ok(found);
                }
            }
            let (this_failure, blamed) = (placing.failure, placing.blamed);
            // The first (least-area) sizes' failure is the one reported.
            if failure.is_none() {
                failure = this_failure;
            }
            let mut progressed = false;
            for l in blamed {
                if let Some(&(ri, ci)) = picks.get(l) {
                    progressed |= banned.insert((l, ri, ci));
                }
            }
            if !progressed {
                break;
            }
        }
        Err(wider.noted(failure.unwrap_or(Failure::Parts(0))))
    };
    // Strict placements (multi-part streams only between neighbours) route quickly and well;
    // only when none exists are regions placed apart and their parts routed around. The snug
    // order fills the fabric best (`place`), but its regions pressed together can leave a
    // result read by several layers no way through: then the staircase order is tried. The
    // first of these that works at the loosest target is kept for the search; when none
    // does, the last one's failure is reported.
    let mut first = Err(Failure::Parts(0));
    let mut style = (true, true);
    for tried in [(true, true), (true, false), (false, true), (false, false)] {
        first = attempt(loosest, tried);
        style = tried;
        if first.is_ok() {
            break;
        }
    }
    let mut best = match first {
        Ok(found) => found,
        Err(Failure::Parts(l)) => {
            let layer = &problem.graph.layers[l];
            diagnostics.push(diag::parts_disagree(
                &layer.name,
                &layer.call,
                "no allowed region sizes of this layer give the part counts its neighbours' \
                 allowed sizes give",
                None,
            ));
            return None;
        }
        Err(Failure::Room(l, used, (r, c))) => {
            let layer = &problem.graph.layers[l];
            diagnostics.push(diag::does_not_fit_fabric(
                &layer.name,
                &layer.call,
                r,
                c,
                used,
                problem.live_pes,
            ));
            return None;
        }
        Err(Failure::Later(d)) => {
            diagnostics.extend(d);
            return None;
        }
    };
    // Binary search for the smallest target that works.
    let (mut lo, mut hi) = (0usize, targets.len() - 1);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        match attempt(targets[mid], style) {
            Ok(found) => {
                best = found;
                hi = mid;
            }
            Err(_) => lo = mid + 1,
        }
    }
    Some(best)
}

/// The PEs of regions of logical `sizes` (rows, columns) in all.
pub(crate) fn pes(sizes: &[(u32, u32)]) -> u64 {
    sizes
        .iter()
        .map(|&(r, c)| u64::from(r) * u64::from(c))
        .sum()
}

/// Every per-stage target the search can settle on: the candidates' distinct estimates,
/// ascending.
fn stage_targets(problem: &Problem<'_>) -> Vec<u64> {
    let mut targets: Vec<u64> = problem
        .layers
        .iter()
        .flat_map(|l| l.table.iter().flatten().map(|c| c.estimate.cycles))
        .collect();
    targets.sort_unstable();
    targets.dedup();
    targets
}

/// The size ladder (`crate::ladder`): for every stage target at which the least-area sizes
/// change, ascending, the target and the PEs those sizes take.
pub(crate) fn ladder(problem: &Problem<'_>) -> Vec<(u64, u64)> {
    let dp = Dp::new(problem);
    let mut steps: Vec<(u64, u64)> = Vec::new();
    for t in stage_targets(problem) {
        let Ok(picks) = dp.solve(problem, t, &HashSet::new()) else {
            continue;
        };
        let pes: u64 = picks
            .iter()
            .enumerate()
            .map(|(l, &(ri, ci))| {
                let (r, c) = problem.size(l, ri, ci);
                u64::from(r) * u64::from(c)
            })
            .sum();
        if steps.last().is_none_or(|&(_, last)| last != pes) {
            steps.push((t, pes));
        }
    }
    steps
}

/// Why sizes could not be completed (routes or colors failed): the diagnostics, and the
/// layers they blame.
pub(crate) struct Incomplete {
    pub diagnostics: Vec<Diagnostic>,
    pub layers: Vec<usize>,
    /// No placement of these sizes can complete (a companion's layer fits no region on them),
    /// so no other is tried ([`placings`]).
    pub sized: bool,
}

/// The most size assignments tried for one target when placing or routing fails.
const MAX_RETRIES: usize = 12;

/// The most placements of one size assignment tried (per placer variant) when a second
/// program runs on the regions (`crate::companion`): a placement whose routes fail, the
/// forward's or the companion's, is rejected at the latest layer they blame, which lies its
/// next way (unless the failure is the sizes', [`Incomplete::sized`]). One placement
/// otherwise.
fn placings(problem: &Problem<'_>) -> usize {
    if problem.fork_room {
        COMPANION_PLACEMENTS
    } else {
        1
    }
}

/// [`placings`] with a companion.
const COMPANION_PLACEMENTS: usize = 8;

/// One size assignment being placed and completed, and what failed.
struct Placing<'p, 'a> {
    problem: &'p Problem<'a>,
    sizes: &'p [(u32, u32)],
    candidates: &'p [Candidate],
    stage_target: u64,
    /// The first failure: a layer that found no room, replaced by the first failure of routes
    /// or colors.
    failure: Option<Failure>,
    /// The layers the failures blame.
    blamed: Vec<usize>,
}

impl Placing<'_, '_> {
    /// The first placement by placer `variant` (in `style`, snug and strict) that `complete`
    /// accepts, of up to [`placings`] (each failed one rejected at the latest layer it blames),
    /// with what `complete` gave; `None` when none is, the failures noted.
    fn variant<T>(
        &mut self,
        variant: u32,
        (snug, strict): (bool, bool),
        wider: &mut wider::Wider,
        complete: &impl Fn(&Choice) -> Result<T, Incomplete>,
    ) -> Option<(Choice, T)> {
        let mut placements =
            place::Placements::new(self.problem, self.sizes, variant, snug, strict);
        for tried in 0..placings(self.problem) {
            let regions = match placements.next() {
                Ok(r) => r,
                Err((l, used)) if tried == 0 => {
                    self.blamed.push(l);
                    let room = Failure::Room(l, used, self.sizes[l]);
                    self.failure.get_or_insert(room);
                    return None;
                }
                Err(_) => return None,
            };
            let choice = Choice {
                stage_target: self.stage_target,
                sizes: self.sizes.to_vec(),
                regions,
                candidates: self.candidates.to_vec(),
            };
            let inc = match complete(&choice) {
                Ok(extra) => return Some((choice, extra)),
                Err(inc) => inc,
            };
            wider.saw(self.problem, self.sizes, &inc);
            let latest = inc.layers.iter().max().copied().filter(|_| !inc.sized);
            self.blamed.extend(inc.layers);
            if self.failure.is_none() || matches!(self.failure, Some(Failure::Room(..))) {
                self.failure = Some(Failure::Later(inc.diagnostics));
            }
            if !latest.is_some_and(|l| placements.reject(l)) {
                return None;
            }
        }
        None
    }
}

enum Failure {
    /// No assignment; the layer at which the last states died.
    Parts(usize),
    /// The layer that found no room, the PEs used before it, and its size.
    Room(usize, u64, (u32, u32)),
    /// Routes or colors failed, with their diagnostics.
    Later(Vec<Diagnostic>),
}

/// The dynamic programme over size classes.
struct Dp {
    /// Classes in elimination order.
    order: Vec<usize>,
    /// Layers whose last class is `order[i]`.
    factors_at: Vec<Vec<usize>>,
    /// Classes still needed after step `i`, in a fixed order.
    active_after: Vec<Vec<usize>>,
}

/// Bits per class in a packed state key (domains hold at most 255 sizes).
const KEY_BITS: u32 = 8;
/// The most classes a state can hold.
const MAX_ACTIVE: usize = (128 / KEY_BITS) as usize;
/// The most states kept per step (the cheapest); beyond it the search is a beam search.
const MAX_STATES: usize = 50_000;

#[derive(Clone, Copy)]
struct State {
    key: u128,
    cost: u64,
    parent: u32,
    value: u8,
}

impl Dp {
    fn new(problem: &Problem<'_>) -> Dp {
        let mut order = Vec::new();
        let mut pos: HashMap<usize, usize> = HashMap::new();
        for lp in &problem.layers {
            for c in [lp.rows_class, lp.cols_class] {
                if let std::collections::hash_map::Entry::Vacant(e) = pos.entry(c) {
                    e.insert(order.len());
                    order.push(c);
                }
            }
        }
        let mut factors_at = vec![Vec::new(); order.len()];
        let mut last_use = vec![0usize; order.len()];
        for (l, lp) in problem.layers.iter().enumerate() {
            let (a, b) = (pos[&lp.rows_class], pos[&lp.cols_class]);
            let last = a.max(b);
            factors_at[last].push(l);
            last_use[a] = last_use[a].max(last);
            last_use[b] = last_use[b].max(last);
        }
        let active_after = (0..order.len())
            .map(|i| {
                (0..=i)
                    .filter(|&j| last_use[j] > i)
                    .map(|j| order[j])
                    .collect()
            })
            .collect();
        Dp {
            order,
            factors_at,
            active_after,
        }
    }

    /// The least-area assignment with every estimate at most `t` and no `banned` candidate
    /// (`(layer, rows position, columns position)`): per layer, positions in
    /// its rows' and columns' domains. On failure, the layer whose constraint emptied the
    /// states.
    fn solve(
        &self,
        problem: &Problem<'_>,
        t: u64,
        banned: &HashSet<(usize, usize, usize)>,
    ) -> Result<Vec<(usize, usize)>, usize> {
        let mut steps: Vec<Vec<State>> = Vec::with_capacity(self.order.len());
        let mut prev: Vec<State> = vec![State {
            key: 0,
            cost: 0,
            parent: 0,
            value: 0,
        }];
        let empty = Vec::new();
        for (i, &class) in self.order.iter().enumerate() {
            let prev_active = if i == 0 {
                &empty
            } else {
                &self.active_after[i - 1]
            };
            let active = &self.active_after[i];
            if active.len() > MAX_ACTIVE {
                return Err(self.factors_at[i].first().copied().unwrap_or(0));
            }
            let value_of = |key: u128, c: usize, current: usize| -> usize {
                if c == class {
                    return current;
                }
                prev_active
                    .iter()
                    .position(|&a| a == c)
                    .map_or(0, |k| ((key >> (KEY_BITS * k as u32)) & 0xff) as usize)
            };
            let domain_len = problem.domains[class].len();
            // Room for every state this step can make (up to a bound), so the index is not
            // grown step by step.
            let room = (prev.len() * domain_len).min(4 * MAX_STATES);
            let mut next: Vec<State> = Vec::with_capacity(room);
            let mut index: HashMap<u128, usize> = HashMap::with_capacity(room);
            for (pi, st) in prev.iter().enumerate() {
                'values: for x in 0..domain_len {
                    let mut cost = st.cost;
                    for &l in &self.factors_at[i] {
                        let lp = &problem.layers[l];
                        let ri = value_of(st.key, lp.rows_class, x);
                        let ci = value_of(st.key, lp.cols_class, x);
                        match problem.candidate(l, ri, ci) {
                            Some(cand)
                                if cand.estimate.cycles <= t && !banned.contains(&(l, ri, ci)) =>
                            {
                                let (r, c) = problem.size(l, ri, ci);
                                // Least area first; among equal areas the squarer
                                // region, whose steps in the staircase are shorter.
                                cost += (u64::from(r) * u64::from(c)) << 12;
                                cost += u64::from(r) + u64::from(c);
                            }
                            _ => continue 'values,
                        }
                    }
                    let mut key = 0u128;
                    for (k, &c) in active.iter().enumerate() {
                        key |= (value_of(st.key, c, x) as u128) << (KEY_BITS * k as u32);
                    }
                    let state = State {
                        key,
                        cost,
                        parent: pi as u32,
                        value: x as u8,
                    };
                    match index.get(&key) {
                        Some(&j) if next[j].cost <= cost => {}
                        Some(&j) => next[j] = state,
                        None => {
                            index.insert(key, next.len());
                            next.push(state);
                        }
                    }
                }
            }
            if next.is_empty() {
                return Err(self.factors_at[i].first().copied().unwrap_or(0));
            }
            if next.len() > MAX_STATES {
                next.sort_by_key(|s| (s.cost, s.key));
                next.truncate(MAX_STATES);
            }
            steps.push(prev);
            prev = next;
        }
        // Follow the cheapest final state back.
        let Some(best) = (0..prev.len()).min_by_key(|&j| (prev[j].cost, j)) else {
            return Err(0);
        };
        let mut values = vec![0usize; problem.domains.len()];
        let mut st = prev[best];
        for i in (0..self.order.len()).rev() {
            values[self.order[i]] = st.value as usize;
            if i > 0 {
                st = steps[i][st.parent as usize];
            }
        }
        Ok(problem
            .layers
            .iter()
            .map(|lp| (values[lp.rows_class], values[lp.cols_class]))
            .collect())
    }
}

/// At most `max` values of a sorted domain: every value up to 16, then the first value at or
/// above each step of a ladder with four steps per octave (20, 24, 28, 32, 40, …), always the
/// largest.
pub(crate) fn sample(domain: &[u32], max: usize) -> Vec<u32> {
    if domain.len() <= max {
        return domain.to_vec();
    }
    let mut out: Vec<u32> = domain.iter().copied().filter(|&v| v <= 16).collect();
    let mut step_point: u64 = 20;
    while let Some(&v) = domain.get(domain.partition_point(|&v| u64::from(v) < step_point)) {
        if out.last().is_none_or(|&last| v > last) {
            out.push(v);
        }
        let octave = 63 - step_point.leading_zeros();
        step_point = step_point.max(u64::from(v)) + (1u64 << octave.saturating_sub(2));
    }
    if let Some(&last) = domain.last()
        && out.last() != Some(&last)
    {
        out.push(last);
    }
    if out.len() > max {
        // Still too many (a very long domain): thin evenly, keeping both ends.
        let step = out.len().div_ceil(max);
        let last = out.last().copied();
        out = out.into_iter().step_by(step).collect();
        if let Some(last) = last
            && out.last() != Some(&last)
        {
            out.push(last);
        }
    }
    out
}

pub(crate) fn mode_name(mode: Mode) -> &'static str {
    match mode {
        Mode::Pipelined => "pipelined",
        Mode::Streaming => "streaming",
    }
}

/// Disjoint sets over `0..n`.
pub(crate) struct UnionFind {
    parent: Vec<usize>,
}

impl UnionFind {
    pub(crate) fn new(n: usize) -> UnionFind {
        UnionFind {
            parent: (0..n).collect(),
        }
    }

    pub(crate) fn find(&mut self, mut x: usize) -> usize {
        while self.parent[x] != x {
            self.parent[x] = self.parent[self.parent[x]];
            x = self.parent[x];
        }
        x
    }

    pub(crate) fn union(&mut self, a: usize, b: usize) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra != rb {
            // The smaller index stays the root, so classes are numbered by first member.
            let (lo, hi) = if ra < rb { (ra, rb) } else { (rb, ra) };
            self.parent[hi] = lo;
        }
    }

    /// Class number of every element (numbered by first member) and the class count.
    pub(crate) fn classes(&mut self) -> (Vec<usize>, usize) {
        let n = self.parent.len();
        let mut number = vec![usize::MAX; n];
        let mut out = Vec::with_capacity(n);
        let mut count = 0;
        for x in 0..n {
            let r = self.find(x);
            if number[r] == usize::MAX {
                number[r] = count;
                count += 1;
            }
            out.push(number[r]);
        }
        (out, count)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn samples_keep_small_values_and_the_largest() {
        let d: Vec<u32> = (1..=994).collect();
        let s = sample(&d, 48);
        assert!(s.len() <= 48, "{}", s.len());
        assert_eq!(&s[..16], &(1..=16).collect::<Vec<_>>()[..]);
        assert_eq!(s.last(), Some(&994));
        assert!(s.windows(2).all(|w| w[0] < w[1]));
    }

    #[test]
    fn union_find_numbers_classes_by_first_member() {
        let mut uf = UnionFind::new(5);
        uf.union(3, 1);
        uf.union(4, 0);
        let (c, n) = uf.classes();
        assert_eq!(n, 3);
        assert_eq!(c, vec![0, 1, 2, 1, 0]);
    }
}
