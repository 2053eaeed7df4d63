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

use std::collections::{HashMap, HashSet};

use wsel_diagnostic::Diagnostic;
use wsel_ir::graph::{CExpr, LayerGraph, LayerInstance, Mode, RegionSide, TensorRef};
use wsel_target::{Rect, Target};

use crate::MapOptions;
use crate::diagnostics as diag;
use crate::estimate::CostInputs;
use crate::expr::{Env, kernel_args, mentions, port_distances, show, side_names};
use crate::place::{self, DeadIndex};
use crate::placement::{Estimate, Orientation};
use crate::ports::{ImplPlan, Parts, parts_for_side, side_name};

/// Everything the later steps need about the program, computed once.
pub(crate) struct Problem<'a> {
    pub graph: &'a LayerGraph,
    pub target: &'a Target,
    pub mode: Mode,
    pub layers: Vec<LayerProblem>,
    /// The domain (sorted sizes) of every class.
    pub domains: Vec<Vec<u32>>,
    pub dead: DeadIndex,
    /// Live PEs on the fabric.
    pub live_pes: u64,
    /// The rectangle the only layer must take ([`MapOptions::region`]).
    pub region: Option<Rect>,
}

/// One layer instance's implementation and candidates.
pub(crate) struct LayerProblem {
    pub impl_index: usize,
    pub plan: ImplPlan,
    pub cost: CostInputs,
    pub rows_class: usize,
    pub cols_class: usize,
    /// Candidates indexed `[ri * cols_domain_len + ci]` by positions in the classes' domains.
    pub table: Vec<Option<Candidate>>,
    /// First slot (color variable) of this layer; slots are numbered program-wide.
    pub slot_base: usize,
}

/// One allowed region size.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Candidate {
    pub estimate: Estimate,
    pub sram_bytes: u64,
}

/// The sizes and places chosen.
pub(crate) struct Choice {
    pub stage_target: u64,
    /// Logical `(rows, cols)` per layer.
    pub sizes: Vec<(u32, u32)>,
    pub regions: Vec<(Rect, Orientation)>,
    pub candidates: Vec<Candidate>,
}

impl<'a> Problem<'a> {
    /// Reads the layers' implementations, merges the size variables of connected ports and
    /// tabulates every layer's candidates. Returns `None` (with diagnostics) when some layer
    /// has no candidate at all. With `pinned` sizes (logical rows and columns per layer, as
    /// another copy of the pipeline has them), those are every layer's only candidates.
    pub(crate) fn build(
        graph: &'a LayerGraph,
        target: &'a Target,
        mode: Mode,
        options: &'a MapOptions,
        pinned: Option<&[(u32, u32)]>,
        diagnostics: &mut Vec<Diagnostic>,
    ) -> Option<Problem<'a>> {
        let n = graph.layers.len();
        let max_side = target.width.max(target.height);
        let mode_name = mode_name(mode);
        let errors_before = diagnostics.len();

        // Implementations and their ports.
        let mut picked: Vec<Option<(usize, ImplPlan)>> = Vec::with_capacity(n);
        for layer in &graph.layers {
            match layer.impls.iter().position(|i| i.modes.contains(&mode)) {
                Some(k) => picked.push(Some((k, ImplPlan::new(layer, &layer.impls[k])))),
                None => {
                    diagnostics.push(diag::no_implementation(&layer.name, &layer.call, mode_name));
                    picked.push(None);
                }
            }
        }
        if diagnostics.len() > errors_before {
            return None;
        }
        let picked: Vec<(usize, ImplPlan)> = picked.into_iter().flatten().collect();

        // Size variables: 2·l for rows, 2·l + 1 for columns, 2·n is the constant 1.
        let one = 2 * n;
        let mut uf = UnionFind::new(2 * n + 1);
        let mut var_domain: Vec<Vec<u32>> = vec![Vec::new(); 2 * n + 1];
        var_domain[one] = vec![1];
        for (l, layer) in graph.layers.iter().enumerate() {
            let (k, plan) = &picked[l];
            let imp = &layer.impls[*k];
            let names = side_names(imp);
            // Conditions that mention neither side are checked once.
            for cond in &imp.conditions {
                let (r, c) = (
                    names.0.is_some_and(|nm| mentions(cond, nm)),
                    names.1.is_some_and(|nm| mentions(cond, nm)),
                );
                if !r && !c {
                    let env = Env {
                        dims: &layer.dims,
                        rows_name: None,
                        cols_name: None,
                        rows: 1,
                        cols: 1,
                    };
                    if cond.eval_bool(&|s| env.lookup(s)) != Ok(true) {
                        diagnostics.push(diag::no_allowed_size(
                            &layer.name,
                            &layer.call,
                            &format!("the condition `{}` does not hold", show(cond)),
                        ));
                    }
                }
            }
            for (var, side, is_rows) in [(2 * l, &imp.rows, true), (2 * l + 1, &imp.cols, false)] {
                let domain = side_domain(layer, imp, side, is_rows, names, max_side);
                if domain.is_empty() {
                    diagnostics.push(diag::no_allowed_size(
                        &layer.name,
                        &layer.call,
                        &format!(
                            "no {} count from 1 to {max_side} satisfies its conditions",
                            if is_rows { "row" } else { "column" }
                        ),
                    ));
                }
                var_domain[var] = domain;
            }
            // Port binds: the split must match the side; without a split the edge is one PE.
            for p in &plan.ports {
                let Some(bind) = &p.bind else { continue };
                let wanted = parts_for_side(p.side);
                if bind.parts != Parts::One && bind.parts != wanted {
                    diagnostics.push(diag::split_side_mismatch(
                        &layer.name,
                        &layer.call,
                        &imp.binds[bind.bind].span,
                        &p.name,
                        side_name(p.side),
                        if wanted == Parts::Rows {
                            "rows"
                        } else {
                            "cols"
                        },
                    ));
                }
                if bind.parts == Parts::One {
                    let line_var = if wanted == Parts::Rows {
                        2 * l
                    } else {
                        2 * l + 1
                    };
                    uf.union(line_var, one);
                }
            }
        }
        if diagnostics.len() > errors_before {
            return None;
        }

        // Connections: a producer's output parts are each consumer's input parts.
        let parts_var = |l: usize, port: usize| -> usize {
            let plan = &picked[l].1;
            match plan.ports[port].bind.as_ref().map(|b| b.parts) {
                Some(Parts::Rows) => 2 * l,
                Some(Parts::Cols) => 2 * l + 1,
                _ => one,
            }
        };
        let mut produced_by_layer = vec![false; n];
        for (l, layer) in graph.layers.iter().enumerate() {
            for (i, arg) in layer.args.iter().enumerate() {
                let TensorRef::Layer(p) = *arg else { continue };
                if p >= n {
                    continue;
                }
                produced_by_layer[p] = true;
                let consumers: Vec<usize> = picked[l].1.arg_ports(i).collect();
                let name = layer.arg_names.get(i).map_or("?", String::as_str);
                if consumers.is_empty()
                    && mode == Mode::Streaming
                    && crate::streaming::is_resident(&layer.impls[picked[l].0], name)
                {
                    continue;
                }
                if consumers.is_empty() {
                    diagnostics.push(diag::tensor_not_bound(&layer.name, &layer.call, name));
                    continue;
                }
                let Some(out) = picked[p].1.output_port() else {
                    continue;
                };
                for c in consumers {
                    uf.union(parts_var(p, out), parts_var(l, c));
                }
            }
        }
        if let TensorRef::Layer(p) = graph.output
            && p < n
        {
            produced_by_layer[p] = true;
        }
        for (p, used) in produced_by_layer.iter().enumerate() {
            let layer = &graph.layers[p];
            let resident = mode == Mode::Streaming
                && crate::streaming::is_resident(&layer.impls[picked[p].0], &layer.output_name);
            if *used && !resident && picked[p].1.output_port().is_none() {
                let layer = &graph.layers[p];
                diagnostics.push(diag::tensor_not_bound(
                    &layer.name,
                    &layer.call,
                    &layer.output_name,
                ));
            }
        }
        if diagnostics.len() > errors_before {
            return None;
        }

        // Class domains: the intersection of the members' domains.
        let (class_of, class_count) = uf.classes();
        let mut domains: Vec<Option<Vec<u32>>> = vec![None; class_count];
        for (var, dom) in var_domain.iter().enumerate() {
            let c = class_of[var];
            domains[c] = Some(match domains[c].take() {
                None => dom.clone(),
                Some(prev) => prev.into_iter().filter(|v| dom.contains(v)).collect(),
            });
        }
        let mut domains: Vec<Vec<u32>> =
            domains.into_iter().map(Option::unwrap_or_default).collect();
        for (c, dom) in domains.iter().enumerate() {
            if !dom.is_empty() {
                continue;
            }
            // Blame the last layer with a variable in this class.
            let members: Vec<usize> = (0..2 * n).filter(|&v| class_of[v] == c).collect();
            let Some(&last) = members.last() else {
                continue;
            };
            let detail = members
                .iter()
                .map(|&v| {
                    format!(
                        "`{}` allows {} {}",
                        graph.layers[v / 2].name,
                        if v % 2 == 0 { "rows" } else { "columns" },
                        show_domain(&var_domain[v])
                    )
                })
                .chain((class_of[one] == c).then(|| "an unsplit port needs exactly 1".to_string()))
                .collect::<Vec<_>>()
                .join(", ");
            let layer = &graph.layers[last / 2];
            diagnostics.push(diag::parts_disagree(
                &layer.name,
                &layer.call,
                &detail,
                None,
            ));
        }
        if diagnostics.len() > errors_before {
            return None;
        }
        // Pinned sizes are kept even where sampling would pass over them.
        for (l, &(rows, cols)) in pinned.unwrap_or_default().iter().enumerate() {
            domains[class_of[2 * l]].retain(|&v| v == rows);
            domains[class_of[2 * l + 1]].retain(|&v| v == cols);
        }
        for dom in &mut domains {
            *dom = sample(dom, options.max_side_candidates.clamp(2, 255));
        }

        // Candidate tables.
        let dead = DeadIndex::new(target);
        let live_pes = target.pe_count() - dead.dead_pe_count();
        let sram_available = u64::from(target.sram_bytes);
        let reserve = u64::from(options.reserved_sram_bytes);
        let mut layers = Vec::with_capacity(n);
        let mut slot_base = 0;
        for (l, (layer, (k, plan))) in graph.layers.iter().zip(picked).enumerate() {
            let imp = &layer.impls[k];
            let names = side_names(imp);
            let binary: Vec<&CExpr> = imp
                .conditions
                .iter()
                .filter(|c| {
                    names.0.is_some_and(|nm| mentions(c, nm))
                        && names.1.is_some_and(|nm| mentions(c, nm))
                })
                .collect();
            let (rc, cc) = (class_of[2 * l], class_of[2 * l + 1]);
            let (rdom, cdom) = (&domains[rc], &domains[cc]);
            let cost = CostInputs::new(graph, l, &plan, target);
            let mut table = vec![None; rdom.len() * cdom.len()];
            let mut smallest_need: Option<(u64, u32, u32)> = None;
            let mut failed_eval: Option<String> = None;
            // The fewest PEs of an allowed size that only the dead PEs rule out.
            let mut blocked_by_defects: Option<u64> = None;
            for (ri, &r) in rdom.iter().enumerate() {
                for (ci, &c) in cdom.iter().enumerate() {
                    if rc == cc && r != c {
                        continue;
                    }
                    if !fits_fabric(target, target.pe_count(), r, c) {
                        continue;
                    }
                    let env = Env {
                        dims: &layer.dims,
                        rows_name: names.0,
                        cols_name: names.1,
                        rows: r,
                        cols: c,
                    };
                    let lookup = |s: &str| env.lookup(s);
                    if !binary.iter().all(|e| e.eval_bool(&lookup) == Ok(true)) {
                        continue;
                    }
                    if !fits_fabric(target, live_pes, r, c) {
                        let pes = u64::from(r) * u64::from(c);
                        blocked_by_defects = Some(blocked_by_defects.map_or(pes, |b| b.min(pes)));
                        continue;
                    }
                    let words = match imp.sram_words.eval_int(&lookup) {
                        Ok(w) => u64::try_from(w).unwrap_or(0),
                        Err(e) => {
                            failed_eval = Some(format!(
                                "its SRAM size `{}` cannot be evaluated ({e:?})",
                                show(&imp.sram_words)
                            ));
                            continue;
                        }
                    };
                    if let Err((name, e)) = kernel_args(layer, imp, r, c) {
                        failed_eval = Some(format!(
                            "the kernel argument `{name}` cannot be evaluated ({e:?})"
                        ));
                        continue;
                    }
                    match port_distances(imp, &env) {
                        Ok(d) => {
                            if let Some(why) = plan.distance_mismatch(&d) {
                                failed_eval = Some(why);
                                continue;
                            }
                        }
                        Err(why) => {
                            failed_eval = Some(why);
                            continue;
                        }
                    }
                    let sram = words * 4 + reserve;
                    if sram > sram_available {
                        if smallest_need.is_none_or(|(b, _, _)| sram < b) {
                            smallest_need = Some((sram, r, c));
                        }
                        continue;
                    }
                    let work = options
                        .work
                        .and_then(|w| w.cycles_per_sample(l, k, r, c, graph.batch));
                    table[ri * cdom.len() + ci] = Some(Candidate {
                        estimate: cost.estimate(r, c, work, None),
                        sram_bytes: sram,
                    });
                }
            }
            if table.iter().all(Option::is_none) {
                if let Some((needed, r, c)) = smallest_need {
                    diagnostics.push(diag::sram_does_not_fit(
                        &layer.name,
                        &layer.call,
                        needed,
                        r,
                        c,
                        target.sram_bytes,
                    ));
                } else if let Some(why) = failed_eval {
                    diagnostics.push(diag::no_allowed_size(&layer.name, &layer.call, &why));
                } else if let Some(needed) = blocked_by_defects {
                    diagnostics.push(diag::defects_leave_no_room(
                        &layer.name,
                        &layer.call,
                        needed,
                        live_pes,
                        target,
                    ));
                } else {
                    let conds = imp
                        .conditions
                        .iter()
                        .map(|c| format!("`{}`", show(c)))
                        .collect::<Vec<_>>()
                        .join(", ");
                    diagnostics.push(diag::no_allowed_size(
                        &layer.name,
                        &layer.call,
                        &format!(
                            "no size on a {} × {} fabric satisfies {} with the part counts of its \
                             neighbours",
                            target.width,
                            target.height,
                            if conds.is_empty() {
                                "its shape".to_string()
                            } else {
                                conds
                            }
                        ),
                    ));
                }
            }
            let slots = plan.slot_count();
            layers.push(LayerProblem {
                impl_index: k,
                plan,
                cost,
                rows_class: rc,
                cols_class: cc,
                table,
                slot_base,
            });
            slot_base += slots;
        }
        if diagnostics.len() > errors_before {
            return None;
        }
        Some(Problem {
            graph,
            target,
            mode,
            layers,
            domains,
            dead,
            live_pes,
            region: options.region,
        })
    }

    /// Total slots of the program.
    pub(crate) fn slot_count(&self) -> usize {
        self.layers
            .last()
            .map_or(0, |l| l.slot_base + l.plan.slot_count())
    }

    /// The candidate for layer `l` at domain positions `(ri, ci)`.
    fn candidate(&self, l: usize, ri: usize, ci: usize) -> Option<Candidate> {
        let lp = &self.layers[l];
        let width = self.domains[lp.cols_class].len();
        lp.table.get(ri * width + ci).copied().flatten()
    }
}

/// Finds the smallest per-stage target whose sizes solve, place, and pass `complete` (routes
/// and colors); `None` with diagnostics when even the most relaxed target fails.
pub(crate) fn choose<T>(
    problem: &Problem<'_>,
    diagnostics: &mut Vec<Diagnostic>,
    complete: impl Fn(&Choice) -> Result<T, Incomplete>,
) -> Option<(Choice, T)> {
    let dp = Dp::new(problem);
    let mut targets: Vec<u64> = problem
        .layers
        .iter()
        .flat_map(|l| l.table.iter().flatten().map(|c| c.estimate.cycles))
        .collect();
    targets.sort_unstable();
    targets.dedup();
    let &loosest = targets.last()?;
    // One target: the least-area sizes, placed and completed. When they cannot be placed or
    // routed, the size of the layer that failed is ruled out and the next-least-area sizes
    // are tried, a few times (a size that cannot lie on the fabric, e.g. one whose output edge
    // would face off it, must not end the search while other sizes fit).
    let attempt = |t: u64, strict: bool| -> Result<(Choice, T), Failure> {
        let mut banned: HashSet<(usize, usize, usize)> = HashSet::new();
        let mut failure: Option<Failure> = None;
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
                .map(|(l, &(ri, ci))| {
                    let lp = &problem.layers[l];
                    (
                        problem.domains[lp.rows_class][ri],
                        problem.domains[lp.cols_class][ci],
                    )
                })
                .collect();
            let candidates: Vec<Candidate> = picks
                .iter()
                .enumerate()
                .filter_map(|(l, &(ri, ci))| problem.candidate(l, ri, ci))
                .collect();
            let mut this_failure = None;
            let mut blamed: Vec<usize> = Vec::new();
            for variant in 0..2 {
                let regions = match place::place(problem, &sizes, variant, strict) {
                    Ok(r) => r,
                    Err((l, used)) => {
                        blamed.push(l);
                        this_failure.get_or_insert(Failure::Room(l, used, sizes[l]));
                        continue;
                    }
                };
                let choice = Choice {
                    stage_target: t,
                    sizes: sizes.clone(),
                    regions,
                    candidates: candidates.clone(),
                };
                match complete(&choice) {
                    Ok(extra) => return Ok((choice, extra)),
                    Err(inc) => {
                        blamed.extend(inc.layers);
                        if this_failure.is_none() || matches!(this_failure, Some(Failure::Room(..)))
                        {
                            this_failure = Some(Failure::Later(inc.diagnostics));
                        }
                    }
                }
            }
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
        Err(failure.unwrap_or(Failure::Parts(0)))
    };
    // Strict placements (multi-part streams only between neighbours) route quickly and well;
    // only when none exists are regions placed apart and their parts routed around.
    let strict = attempt(loosest, true).ok();
    let strict_mode = strict.is_some();
    let first = match strict {
        Some(found) => Ok(found),
        None => attempt(loosest, false),
    };
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
        match attempt(targets[mid], strict_mode) {
            Ok(found) => {
                best = found;
                hi = mid;
            }
            Err(_) => lo = mid + 1,
        }
    }
    Some(best)
}

/// Why sizes could not be completed (routes or colors failed): the diagnostics, and the
/// layers they blame.
pub(crate) struct Incomplete {
    pub diagnostics: Vec<Diagnostic>,
    pub layers: Vec<usize>,
}

/// The most size assignments tried for one target when placing or routing fails.
const MAX_RETRIES: usize = 12;

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
            let mut next: Vec<State> = Vec::new();
            let mut index: HashMap<u128, usize> = HashMap::new();
            let domain_len = problem.domains[class].len();
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
                                let (r, c) = (
                                    problem.domains[lp.rows_class][ri],
                                    problem.domains[lp.cols_class][ci],
                                );
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

/// The names of an implementation's free sides.
/// The sizes one side may take, by the conditions that mention only that side.
fn side_domain(
    layer: &LayerInstance,
    imp: &wsel_ir::graph::LayerImpl,
    side: &RegionSide,
    is_rows: bool,
    names: (Option<&str>, Option<&str>),
    max_side: u32,
) -> Vec<u32> {
    match side {
        RegionSide::Fixed(e) => {
            let env = Env {
                dims: &layer.dims,
                rows_name: None,
                cols_name: None,
                rows: 1,
                cols: 1,
            };
            match e.eval_int(&|s| env.lookup(s)) {
                Ok(v) if v >= 1 && v <= i64::from(max_side) => vec![v as u32],
                _ => Vec::new(),
            }
        }
        RegionSide::Free(name) => {
            let other = if is_rows { names.1 } else { names.0 };
            let unary: Vec<&CExpr> = imp
                .conditions
                .iter()
                .filter(|c| mentions(c, name) && !other.is_some_and(|o| mentions(c, o)))
                .collect();
            (1..=max_side)
                .filter(|&v| {
                    let env = Env {
                        dims: &layer.dims,
                        rows_name: names.0,
                        cols_name: names.1,
                        rows: v,
                        cols: v,
                    };
                    unary
                        .iter()
                        .all(|c| c.eval_bool(&|s| env.lookup(s)) == Ok(true))
                })
                .collect()
        }
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

fn show_domain(d: &[u32]) -> String {
    if d.len() <= 8 {
        format!(
            "{{{}}}",
            d.iter().map(u32::to_string).collect::<Vec<_>>().join(", ")
        )
    } else {
        format!(
            "{{{}, …, {}}}",
            d[..4]
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(", "),
            d[d.len() - 1]
        )
    }
}

/// Whether a `rows × cols` region could lie on the fabric in some orientation.
fn fits_fabric(target: &Target, live: u64, rows: u32, cols: u32) -> bool {
    let (short, long) = (
        target.width.min(target.height),
        target.width.max(target.height),
    );
    rows.min(cols) <= short && rows.max(cols) <= long && u64::from(rows) * u64::from(cols) <= live
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
