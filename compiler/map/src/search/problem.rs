//! The search's problem, built once from the layer graph: every layer's implementation for
//! the mode, its size variables merged into classes across connected ports, each class's
//! domain, and each layer's table of candidate sizes (`docs/mapping.md` §5; the search
//! itself is in the parent module).

use wsel_diagnostic::Diagnostic;
use wsel_ir::graph::{CExpr, LayerGraph, LayerImpl, LayerInstance, Mode, RegionSide, TensorRef};
use wsel_target::{Rect, Target};

use super::{UnionFind, mode_name, sample};
use crate::MapOptions;
use crate::diagnostics as diag;
use crate::estimate::CostInputs;
use crate::expr::{Env, kernel_args, mentions, port_distances, show, side_names};
use crate::place::DeadIndex;
use crate::placement::Estimate;
use crate::placement::Orientation;
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
    /// The rectangle and orientation every layer must take ([`MapOptions::regions`]).
    pub regions: Option<Vec<(Rect, Orientation)>>,
    /// A second program will run on these regions ([`MapOptions::companion`]): a result read
    /// by several layers leaves room at its fork for the companion's sum (`companion`).
    pub fork_room: bool,
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
        let before = diagnostics.len();
        let failed = |d: &Vec<Diagnostic>| d.len() > before;
        let picked = pick_implementations(graph, mode, diagnostics)?;
        let mut vars = SizeVars::new(graph, &picked, target, diagnostics);
        if failed(diagnostics) {
            return None;
        }
        vars.connect(graph, &picked, mode, diagnostics);
        if failed(diagnostics) {
            return None;
        }
        let (class_of, mut domains) = vars.class_domains(graph, diagnostics);
        if failed(diagnostics) {
            return None;
        }
        // Pinned sizes are kept even where sampling would pass over them; pinned regions pin
        // their sizes.
        let from_regions: Option<Vec<(u32, u32)>> = options
            .regions
            .map(|r| r.iter().map(|&(rect, o)| logical_size(rect, o)).collect());
        let pinned = from_regions.as_deref().or(pinned);
        for (l, &(rows, cols)) in pinned.unwrap_or_default().iter().enumerate() {
            domains[class_of[2 * l]].retain(|&v| v == rows);
            domains[class_of[2 * l + 1]].retain(|&v| v == cols);
        }
        for dom in &mut domains {
            *dom = sample(dom, options.max_side_candidates.clamp(2, 255));
        }

        let dead = DeadIndex::new(target);
        let live_pes = target.pe_count() - dead.dead_pe_count();
        let mut layers = Vec::with_capacity(graph.layers.len());
        let mut slot_base = 0;
        for (l, (k, plan)) in picked.into_iter().enumerate() {
            let (rows_class, cols_class) = (class_of[2 * l], class_of[2 * l + 1]);
            let cost = CostInputs::new(graph, l, &plan, target);
            let sizes = Sizes {
                rows: &domains[rows_class],
                cols: &domains[cols_class],
                square: rows_class == cols_class,
            };
            let fabric = Fabric {
                target,
                live_pes,
                options,
            };
            let (table, rejections) = candidate_table(graph, l, k, &plan, &cost, &sizes, &fabric);
            if table.iter().all(Option::is_none) {
                let layer = &graph.layers[l];
                diagnostics.push(no_candidate(layer, &layer.impls[k], rejections, &fabric));
            }
            let slots = plan.slot_count();
            layers.push(LayerProblem {
                impl_index: k,
                plan,
                cost,
                rows_class,
                cols_class,
                table,
                slot_base,
            });
            slot_base += slots;
        }
        if failed(diagnostics) {
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
            regions: options.regions.map(<[_]>::to_vec),
            fork_room: options.companion.is_some(),
        })
    }

    /// Total slots of the program.
    pub(crate) fn slot_count(&self) -> usize {
        self.layers
            .last()
            .map_or(0, |l| l.slot_base + l.plan.slot_count())
    }

    /// The candidate for layer `l` at domain positions `(ri, ci)`.
    pub(super) fn candidate(&self, l: usize, ri: usize, ci: usize) -> Option<Candidate> {
        let lp = &self.layers[l];
        let width = self.domains[lp.cols_class].len();
        lp.table.get(ri * width + ci).copied().flatten()
    }

    /// The candidate for layer `l` at `rows × cols`, when both sides are in its domains.
    pub(crate) fn candidate_sized(&self, l: usize, rows: u32, cols: u32) -> Option<Candidate> {
        let lp = &self.layers[l];
        let ri = self.domains[lp.rows_class].binary_search(&rows).ok()?;
        let ci = self.domains[lp.cols_class].binary_search(&cols).ok()?;
        self.candidate(l, ri, ci)
    }

    /// Layer `l`'s candidate sizes (rows, columns), row-major.
    pub(crate) fn sizes(&self, l: usize) -> impl Iterator<Item = (u32, u32)> + '_ {
        let lp = &self.layers[l];
        let (rows, cols) = (&self.domains[lp.rows_class], &self.domains[lp.cols_class]);
        rows.iter()
            .flat_map(move |&r| cols.iter().map(move |&c| (r, c)))
            .filter(move |&(r, c)| self.candidate_sized(l, r, c).is_some())
    }

    /// Layer `l`'s region size (rows, columns) at domain positions `(ri, ci)`.
    pub(super) fn size(&self, l: usize, ri: usize, ci: usize) -> (u32, u32) {
        let lp = &self.layers[l];
        (
            self.domains[lp.rows_class][ri],
            self.domains[lp.cols_class][ci],
        )
    }
}

/// Every layer's first implementation for `mode` and its port plan; `None` (with a
/// diagnostic per layer) when some layer has none.
fn pick_implementations(
    graph: &LayerGraph,
    mode: Mode,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<Vec<(usize, ImplPlan)>> {
    let mut picked = Vec::with_capacity(graph.layers.len());
    let mut missing = false;
    for layer in &graph.layers {
        match layer.impls.iter().position(|i| i.modes.contains(&mode)) {
            Some(k) => picked.push((k, ImplPlan::new(layer, &layer.impls[k]))),
            None => {
                let d = diag::no_implementation(&layer.name, &layer.call, mode_name(mode));
                diagnostics.push(d);
                missing = true;
            }
        }
    }
    (!missing).then_some(picked)
}

/// The size variables — `2·l` for layer `l`'s rows, `2·l + 1` for its columns, `2·n` the
/// constant 1 — with each one's domain and the classes of those that must agree.
struct SizeVars {
    uf: UnionFind,
    domain: Vec<Vec<u32>>,
    /// The variable that is the constant 1 (an unsplit port's part count).
    one: usize,
}

impl SizeVars {
    /// Every layer's two variables with the sizes its conditions allow; an unsplit port ties
    /// its side to 1. Reports conditions that cannot hold and splits on the wrong side.
    fn new(
        graph: &LayerGraph,
        picked: &[(usize, ImplPlan)],
        target: &Target,
        diagnostics: &mut Vec<Diagnostic>,
    ) -> SizeVars {
        let n = graph.layers.len();
        let max_side = target.width.max(target.height);
        let one = 2 * n;
        let mut vars = SizeVars {
            uf: UnionFind::new(2 * n + 1),
            domain: vec![Vec::new(); 2 * n + 1],
            one,
        };
        vars.domain[one] = vec![1];
        for (l, layer) in graph.layers.iter().enumerate() {
            let (k, plan) = &picked[l];
            let imp = &layer.impls[*k];
            let names = side_names(imp);
            check_constant_conditions(layer, imp, names, diagnostics);
            for (var, side, is_rows) in [(2 * l, &imp.rows, true), (2 * l + 1, &imp.cols, false)] {
                let domain = side_domain(layer, imp, side, is_rows, names, max_side);
                if domain.is_empty() {
                    let what = if is_rows { "row" } else { "column" };
                    diagnostics.push(diag::no_allowed_size(
                        &layer.name,
                        &layer.call,
                        &format!("no {what} count from 1 to {max_side} satisfies its conditions"),
                    ));
                }
                vars.domain[var] = domain;
            }
            vars.bind_ports(l, layer, imp, plan, diagnostics);
        }
        vars
    }

    /// Port binds: the split must match the side; without a split the edge is one PE.
    fn bind_ports(
        &mut self,
        l: usize,
        layer: &LayerInstance,
        imp: &LayerImpl,
        plan: &ImplPlan,
        diagnostics: &mut Vec<Diagnostic>,
    ) {
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
                self.uf.union(line_var, self.one);
            }
        }
    }

    /// Connections: a producer's output parts are each consumer's input parts. Reports a
    /// tensor that reaches a layer without a port to take it.
    fn connect(
        &mut self,
        graph: &LayerGraph,
        picked: &[(usize, ImplPlan)],
        mode: Mode,
        diagnostics: &mut Vec<Diagnostic>,
    ) {
        let n = graph.layers.len();
        let one = self.one;
        let parts_var = |l: usize, port: usize| -> usize {
            match picked[l].1.ports[port].bind.as_ref().map(|b| b.parts) {
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
                    self.uf.union(parts_var(p, out), parts_var(l, c));
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
                diagnostics.push(diag::tensor_not_bound(
                    &layer.name,
                    &layer.call,
                    &layer.output_name,
                ));
            }
        }
    }

    /// Every variable's class and every class's domain: the intersection of its members'.
    /// Reports a class whose members agree on no size, blaming its last layer.
    fn class_domains(
        &mut self,
        graph: &LayerGraph,
        diagnostics: &mut Vec<Diagnostic>,
    ) -> (Vec<usize>, Vec<Vec<u32>>) {
        let n = graph.layers.len();
        let (class_of, class_count) = self.uf.classes();
        let mut domains: Vec<Option<Vec<u32>>> = vec![None; class_count];
        for (var, dom) in self.domain.iter().enumerate() {
            let c = class_of[var];
            domains[c] = Some(match domains[c].take() {
                None => dom.clone(),
                Some(prev) => prev.into_iter().filter(|v| dom.contains(v)).collect(),
            });
        }
        let domains: Vec<Vec<u32>> = domains.into_iter().map(Option::unwrap_or_default).collect();
        for (c, dom) in domains.iter().enumerate() {
            if !dom.is_empty() {
                continue;
            }
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
                        show_domain(&self.domain[v])
                    )
                })
                .chain(
                    (class_of[self.one] == c)
                        .then(|| "an unsplit port needs exactly 1".to_string()),
                )
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
        (class_of, domains)
    }
}

/// Conditions that mention neither side are checked once.
fn check_constant_conditions(
    layer: &LayerInstance,
    imp: &LayerImpl,
    names: (Option<&str>, Option<&str>),
    diagnostics: &mut Vec<Diagnostic>,
) {
    for cond in &imp.conditions {
        let mentioned = names.0.is_some_and(|nm| mentions(cond, nm))
            || names.1.is_some_and(|nm| mentions(cond, nm));
        if mentioned {
            continue;
        }
        let env = Env::dims_only(&layer.dims);
        if cond.eval_bool(&|s| env.lookup(s)) != Ok(true) {
            diagnostics.push(diag::no_allowed_size(
                &layer.name,
                &layer.call,
                &format!("the condition `{}` does not hold", show(cond)),
            ));
        }
    }
}

/// The sizes a layer's table spans: its rows' and columns' class domains, and whether the
/// two are one class (then only square sizes).
struct Sizes<'d> {
    rows: &'d [u32],
    cols: &'d [u32],
    square: bool,
}

/// What a candidate must fit: the fabric, its live PEs and the SRAM the options leave.
struct Fabric<'a> {
    target: &'a Target,
    live_pes: u64,
    options: &'a MapOptions<'a>,
}

/// Why sizes were ruled out, for the diagnostic when none is left.
#[derive(Default)]
struct Rejections {
    /// The smallest SRAM need over the whole PE: bytes, rows, columns.
    smallest_need: Option<(u64, u32, u32)>,
    failed_eval: Option<String>,
    /// The fewest PEs of an allowed size that only the dead PEs rule out.
    blocked_by_defects: Option<u64>,
}

/// Layer `l`'s (implementation `k`'s) candidates over `sizes`, row-major, and why sizes were
/// ruled out.
fn candidate_table(
    graph: &LayerGraph,
    l: usize,
    k: usize,
    plan: &ImplPlan,
    cost: &CostInputs,
    sizes: &Sizes<'_>,
    fabric: &Fabric<'_>,
) -> (Vec<Option<Candidate>>, Rejections) {
    let layer = &graph.layers[l];
    let imp = &layer.impls[k];
    let target = fabric.target;
    let names = side_names(imp);
    let binary: Vec<&CExpr> = imp
        .conditions
        .iter()
        .filter(|c| {
            names.0.is_some_and(|nm| mentions(c, nm)) && names.1.is_some_and(|nm| mentions(c, nm))
        })
        .collect();
    let sram_available = u64::from(target.sram_bytes);
    let reserve = u64::from(fabric.options.reserved_sram_bytes);
    let mut table = vec![None; sizes.rows.len() * sizes.cols.len()];
    let mut why = Rejections::default();
    for (ri, &r) in sizes.rows.iter().enumerate() {
        for (ci, &c) in sizes.cols.iter().enumerate() {
            if sizes.square && r != c {
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
            if !fits_fabric(target, fabric.live_pes, r, c) {
                let pes = u64::from(r) * u64::from(c);
                why.blocked_by_defects = Some(why.blocked_by_defects.map_or(pes, |b| b.min(pes)));
                continue;
            }
            let words = match imp.sram_words.eval_int(&lookup) {
                Ok(w) => u64::try_from(w).unwrap_or(0),
                Err(e) => {
                    why.failed_eval = Some(format!(
                        "its SRAM size `{}` cannot be evaluated ({e:?})",
                        show(&imp.sram_words)
                    ));
                    continue;
                }
            };
            if let Err((name, e)) = kernel_args(layer, imp, r, c) {
                why.failed_eval = Some(format!(
                    "the kernel argument `{name}` cannot be evaluated ({e:?})"
                ));
                continue;
            }
            match port_distances(imp, &env) {
                Ok(d) => {
                    if let Some(mismatch) = plan.distance_mismatch(&d) {
                        why.failed_eval = Some(mismatch);
                        continue;
                    }
                }
                Err(mismatch) => {
                    why.failed_eval = Some(mismatch);
                    continue;
                }
            }
            if let Err(bad) = crate::switched::switch_starts(imp, &env, r, c) {
                why.failed_eval = Some(bad);
                continue;
            }
            let sram = words * 4 + reserve;
            if sram > sram_available {
                if why.smallest_need.is_none_or(|(b, _, _)| sram < b) {
                    why.smallest_need = Some((sram, r, c));
                }
                continue;
            }
            let measured = fabric.options.work;
            let work = measured.and_then(|w| w.cycles_per_sample(l, k, r, c, graph.batch));
            let flow = |out: &str, inp: &str| measured?.chain_flow(l, k, r, c, out, inp);
            let chains = cost.chain_terms(r, c, &flow);
            table[ri * sizes.cols.len() + ci] = Some(Candidate {
                estimate: cost.estimate(r, c, work, chains, None),
                sram_bytes: sram,
            });
        }
    }
    (table, why)
}

/// The diagnostic for a layer without any candidate size: the SRAM it needs at least, a
/// condition that cannot be evaluated, the defects, or the conditions that rule out every size.
fn no_candidate(
    layer: &LayerInstance,
    imp: &LayerImpl,
    why: Rejections,
    fabric: &Fabric<'_>,
) -> Diagnostic {
    let target = fabric.target;
    if let Some((needed, r, c)) = why.smallest_need {
        return diag::sram_does_not_fit(&layer.name, &layer.call, needed, r, c, target.sram_bytes);
    }
    if let Some(why) = why.failed_eval {
        return diag::no_allowed_size(&layer.name, &layer.call, &why);
    }
    if let Some(needed) = why.blocked_by_defects {
        return diag::defects_leave_no_room(
            &layer.name,
            &layer.call,
            needed,
            fabric.live_pes,
            target,
        );
    }
    let conds = imp
        .conditions
        .iter()
        .map(|c| format!("`{}`", show(c)))
        .collect::<Vec<_>>()
        .join(", ");
    let conds = if conds.is_empty() {
        "its shape".to_string()
    } else {
        conds
    };
    diag::no_allowed_size(
        &layer.name,
        &layer.call,
        &format!(
            "no size on a {} × {} fabric satisfies {conds} with the part counts of its neighbours",
            target.width, target.height
        ),
    )
}

/// The sizes one side may take, by the conditions that mention only that side.
fn side_domain(
    layer: &LayerInstance,
    imp: &LayerImpl,
    side: &RegionSide,
    is_rows: bool,
    names: (Option<&str>, Option<&str>),
    max_side: u32,
) -> Vec<u32> {
    match side {
        RegionSide::Fixed(e) => {
            let env = Env::dims_only(&layer.dims);
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

/// The logical `rows × cols` of a region on `rect` in orientation `o` (the inverse of
/// [`Orientation::extent`]).
fn logical_size(rect: Rect, o: Orientation) -> (u32, u32) {
    if o.transposed() {
        (rect.width, rect.height)
    } else {
        (rect.height, rect.width)
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
