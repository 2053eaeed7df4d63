//! The task work of every layer's kernel on a candidate region, measured by dry runs for the
//! mapper's estimate (`docs/mapping.md` §5, [`wsel_map::KernelWork`]).
//!
//! For a layer on a logical `R × C` region, the layer's kernel instance is lowered with the
//! arguments it takes when the model runs a batch of one sample and of two, and each is dry-run
//! ([`wsel_codegen::dry_run`], compiled once per instance) on the PEs that stand for the region: its first, middle and
//! last rows crossed with its first, middle and last columns. A PE busy `b₁` cycles for one sample and `b₂` for two
//! does `s = b₂ − b₁` per sample plus `f = b₁ − s` once, so for `b` samples per copy its work
//! per sample is `(f + b·s) / b`, rounded to the nearest cycle. The estimate is the largest over the PEs. Where the model
//! does not lower for one or two samples, or a dry run fails, the mapper gets no figure and
//! falls back to its multiply-add formula. The runs are traced too, and say how the kernel
//! passes messages along its chains ([`crate::chain_flow`]). Measurements are kept for
//! the life of a [`KernelDryRuns`], and across them in a [`MeasuredWork`] when one is given.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

use wsel_codegen::dry_run::{DryRunLimits, DryRunner, PePlace};
use wsel_ir::cost::CostModel;
use wsel_ir::graph::{BindTarget, CValue, LayerGraph, LayerImpl, LayerInstance};
use wsel_ir::kernel::{KernelIr, PortDirection};
use wsel_map::{ChainFlow, PhaseDryRun};
use wsel_sema::{Db, ItemId};
use wsel_target::Target;

use crate::chain_flow::{NearSides, chain_flows, near_sides, region_flows};
use crate::store::MeasuredWork;
use crate::{cost_model, lower_for_batch};

/// One PE's work: once per batch, and per sample.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PeWork {
    fixed: u64,
    per_sample: u64,
}

impl PeWork {
    /// The work of a PE busy `one` cycles for a batch of one sample and `two` for two.
    fn of(one: u64, two: u64) -> PeWork {
        let per_sample = two.saturating_sub(one);
        PeWork {
            fixed: one.saturating_sub(per_sample),
            per_sample,
        }
    }
}

/// What the dry runs of a kernel instance on a region measured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Measured {
    /// Every representative PE's work.
    pes: Vec<PeWork>,
    /// The region's flow on every pair of an `out` and an `in` port (by name).
    flows: Vec<(String, String, ChainFlow)>,
}

/// The measured kernel work of one model's layers.
pub struct KernelDryRuns<'db> {
    db: &'db dyn Db,
    /// The model lowered for batches of one and two samples.
    graphs: Option<[LayerGraph; 2]>,
    cost: CostModel,
    switch_cycles: u64,
    /// Per kernel instance (its arguments at both batches) and region size, the PEs' work.
    memo: RefCell<HashMap<String, Option<Measured>>>,
    /// Per kernel instance and region size, what the dry runs of a whole phase measure.
    phase_memo: RefCell<HashMap<String, Option<PhaseDryRun>>>,
    /// Per kernel instance and region size, a phase's centre PE's run awaiting the measure.
    centres: RefCell<HashMap<String, Option<Rc<Centre>>>>,
    /// Measurements kept across mappings, by their inputs.
    kept: Option<&'db MeasuredWork>,
}

impl<'db> KernelDryRuns<'db> {
    /// The dry runs of `model`'s layers on `target` (nothing is measured until the mapper
    /// asks).
    pub fn new(db: &'db dyn Db, model: ItemId<'db>, target: &Target) -> Self {
        let graphs = match (lower_for_batch(db, model, 1), lower_for_batch(db, model, 2)) {
            (Ok(one), Ok(two)) if one.layers.len() == two.layers.len() => Some([one, two]),
            _ => None,
        };
        KernelDryRuns {
            db,
            graphs,
            cost: cost_model(target),
            switch_cycles: u64::from(target.task_switch_cycles),
            memo: RefCell::new(HashMap::new()),
            phase_memo: RefCell::new(HashMap::new()),
            centres: RefCell::new(HashMap::new()),
            kept: None,
        }
    }

    /// [`KernelDryRuns::new`] for mappings of the model's graph as `shape` makes it from the
    /// lowered one (pipelined mode's fused and relayed graph, `wsel_map::fusion`): the layer
    /// indices the mapper asks about are that graph's. `shape` must not depend on the batch;
    /// where it fails the mapper gets no figures.
    pub fn shaped(mut self, shape: &dyn Fn(&LayerGraph) -> Option<LayerGraph>) -> Self {
        self.graphs = self.graphs.and_then(|[one, two]| {
            let (one, two) = (shape(&one)?, shape(&two)?);
            (one.layers.len() == two.layers.len()).then_some([one, two])
        });
        self
    }

    /// [`KernelDryRuns::new`], reusing the measurements in `kept` whose inputs are unchanged
    /// and keeping the new ones there.
    pub fn keeping(mut self, kept: &'db MeasuredWork) -> Self {
        self.kept = Some(kept);
        self
    }

    /// What the dry runs on the region measure, or `None` when they cannot.
    fn measure(
        &self,
        layer: usize,
        implementation: usize,
        rows: u32,
        cols: u32,
    ) -> Option<Measured> {
        let graphs = self.graphs.as_ref()?;
        let mut args: Vec<Vec<(String, CValue)>> = Vec::with_capacity(2);
        for graph in graphs {
            let instance = graph.layers.get(layer)?;
            let imp = instance.impls.get(implementation)?;
            args.push(wsel_map::kernel_args(instance, imp, rows, cols).ok()?);
        }
        let kernel = &graphs[0].layers[layer].impls[implementation].kernel;
        let key = format!(
            "{}::{} {:?} {:?} {rows}×{cols}",
            kernel.file.display(),
            kernel.name,
            args[0],
            args[1]
        );
        if let Some(known) = self.memo.borrow().get(&key) {
            return known.clone();
        }
        let item = wsel_lower::kernel_item(self.db, kernel)?;
        let irs = [
            wsel_lower::lower_kernel(self.db, item, &args[0]),
            wsel_lower::lower_kernel(self.db, item, &args[1]),
        ];
        let ports = &graphs[0].layers[layer].impls[implementation].ports;
        let work = match irs {
            [Ok(one), Ok(two)] => {
                let near = near_sides(&one, ports);
                self.dry_run(&[one, two], &near, rows, cols)
            }
            _ => None,
        };
        self.memo.borrow_mut().insert(key, work.clone());
        work
    }

    /// What the dry runs of the kernel lowered for one sample and for two (`irs`), whose
    /// ports' near sides are `near`, measure on the region: kept, else measured.
    fn dry_run(
        &self,
        irs: &[KernelIr; 2],
        near: &NearSides,
        rows: u32,
        cols: u32,
    ) -> Option<Measured> {
        let key = self
            .kept
            .and_then(|_| MeasuredWork::key(irs, near, rows, cols, &self.cost, self.switch_cycles));
        if let (Some(kept), Some(key)) = (self.kept, &key)
            && let Some(work) = kept.get(key)
        {
            return work;
        }
        let runner = |ir: &KernelIr| DryRunner::new(ir, &self.cost, DryRunLimits::default()).ok();
        let work = match irs.each_ref().map(runner) {
            [Some(one), Some(two)] => self.measure_runs(&[one, two], &irs[0], near, rows, cols),
            _ => None,
        };
        if let (Some(kept), Some(key)) = (self.kept, key) {
            kept.insert(key, work.clone());
        }
        work
    }
}

impl KernelDryRuns<'_> {
    /// Every representative PE's work and the region's chain flows
    /// ([`crate::chain_flow::region_flows`]), from the `runners` of the kernel `ir` lowered
    /// for one sample and for two.
    fn measure_runs(
        &self,
        runners: &[DryRunner; 2],
        ir: &KernelIr,
        near: &NearSides,
        rows: u32,
        cols: u32,
    ) -> Option<Measured> {
        let switch = self.switch_cycles;
        let centre = (rows.max(1) / 2, cols.max(1) / 2);
        let places = representative_pes(rows, cols);
        let mut pes = Vec::with_capacity(places.len());
        let mut per_pe = Vec::with_capacity(places.len());
        for &place in &places {
            let (one, one_trace) = runners[0].trace(switch, place).ok()?;
            let (two, two_trace) = runners[1].trace(switch, place).ok()?;
            per_pe.push((place, chain_flows(ir, near, &one_trace, &two_trace)));
            pes.push(PeWork::of(one.busy_cycles, two.busy_cycles));
        }
        let at_centre = places.iter().position(|p| (p.y, p.x) == centre)?;
        let flows = region_flows(&per_pe, at_centre)
            .into_iter()
            .map(|f| (f.out, f.inp, f.flow))
            .collect();
        Some(Measured { pes, flows })
    }
}

impl wsel_map::KernelWork for KernelDryRuns<'_> {
    fn cycles_per_sample(
        &self,
        layer: usize,
        implementation: usize,
        rows: u32,
        cols: u32,
        samples: u64,
    ) -> Option<u64> {
        let samples = samples.max(1);
        self.measure(layer, implementation, rows, cols)?
            .pes
            .iter()
            .map(|w| (w.fixed + samples * w.per_sample + samples / 2) / samples)
            .max()
    }

    fn chain_flow(
        &self,
        layer: usize,
        implementation: usize,
        rows: u32,
        cols: u32,
        out_port: &str,
        in_port: &str,
    ) -> Option<ChainFlow> {
        let measured = self.measure(layer, implementation, rows, cols)?;
        measured
            .flows
            .iter()
            .find(|(out, inp, _)| out == out_port && inp == in_port)
            .map(|&(_, _, flow)| flow)
    }

    fn phase_work(
        &self,
        layer: &LayerInstance,
        implementation: usize,
        rows: u32,
        cols: u32,
    ) -> Option<PhaseDryRun> {
        self.phase(layer, implementation, (rows, cols), true)
    }

    fn phase_floor(
        &self,
        layer: &LayerInstance,
        implementation: usize,
        rows: u32,
        cols: u32,
    ) -> Option<PhaseDryRun> {
        self.phase(layer, implementation, (rows, cols), false)
    }
}

/// A phase's kernel instance ready for dry runs, and what its centre PE's run measured
/// (`None`: it failed, and so does the phase's measure).
struct Centre {
    runner: DryRunner,
    run: Option<PhaseDryRun>,
}

/// The key of a phase's kernel instance (its arguments) on a `rows × cols` region.
fn phase_key(layer: &LayerInstance, implementation: usize, rows: u32, cols: u32) -> Option<String> {
    let imp = layer.impls.get(implementation)?;
    let args = wsel_map::kernel_args(layer, imp, rows, cols).ok()?;
    Some(format!(
        "phase {}::{} {args:?} {rows}×{cols}",
        imp.kernel.file.display(),
        imp.kernel.name
    ))
}

impl KernelDryRuns<'_> {
    /// What the dry runs of `layer`'s phase on the region measure: on all the phase's PEs
    /// when `full` (kept), else on its centre PE alone unless the full measure is known.
    fn phase(
        &self,
        layer: &LayerInstance,
        implementation: usize,
        (rows, cols): (u32, u32),
        full: bool,
    ) -> Option<PhaseDryRun> {
        let key = phase_key(layer, implementation, rows, cols)?;
        if let Some(known) = self.phase_memo.borrow().get(&key) {
            return *known;
        }
        let centre = self.centre(&key, layer, implementation, rows, cols);
        if !full {
            return centre?.run;
        }
        let work = centre.and_then(|centre| self.measure_phase(&centre, rows, cols));
        self.centres.borrow_mut().remove(&key);
        self.phase_memo.borrow_mut().insert(key, work);
        work
    }

    /// The phase kernel of `layer`'s `implementation` on the region lowered, and its centre
    /// PE traced with the receives on its chain ports (its ports from neighbours) late: at a
    /// phase's end the PEs have applied their weights and take the chains' messages one
    /// after another. Kept under `key` until the phase's measure; `None` when the kernel does
    /// not lower or check.
    fn centre(
        &self,
        key: &str,
        layer: &LayerInstance,
        implementation: usize,
        rows: u32,
        cols: u32,
    ) -> Option<Rc<Centre>> {
        if let Some(known) = self.centres.borrow().get(key) {
            return known.clone();
        }
        let imp = layer.impls.get(implementation)?;
        let centre = wsel_map::kernel_args(layer, imp, rows, cols)
            .ok()
            .and_then(|args| {
                let item = wsel_lower::kernel_item(self.db, &imp.kernel)?;
                wsel_lower::lower_kernel(self.db, item, &args).ok()
            })
            .and_then(|ir| {
                let runner = DryRunner::new(&ir, &self.cost, DryRunLimits::default()).ok()?;
                let near = near_sides(&ir, &imp.ports);
                let place = centre_pe(rows, cols);
                let chain = chain_ports(&ir, imp);
                let run = runner
                    .trace_late(self.switch_cycles, place, &chain)
                    .ok()
                    .map(|(run, trace)| PhaseDryRun {
                        busy: run.busy_cycles,
                        relay_step: crate::chain_flow::relay_step(&ir, &near, &trace),
                        keep_turn: crate::chain_flow::keep_turn(&ir, &chain, &trace),
                        blocks: crate::chain_flow::outside_receives(&ir, &chain, &trace),
                    });
                Some(Rc::new(Centre { runner, run }))
            });
        self.centres
            .borrow_mut()
            .insert(key.to_owned(), centre.clone());
        centre
    }

    /// Dry-runs the phase's kernel on the phase's other PEs after its `centre`: the busiest
    /// one's busy cycles and the centre's relay step.
    fn measure_phase(&self, centre: &Centre, rows: u32, cols: u32) -> Option<PhaseDryRun> {
        let mut measured = centre.run?;
        let at_centre = centre_pe(rows, cols);
        for place in phase_pes(rows, cols)
            .into_iter()
            .filter(|&p| p != at_centre)
        {
            let run = centre.runner.run(self.switch_cycles, place).ok()?;
            measured.busy = measured.busy.max(run.busy_cycles);
        }
        Some(measured)
    }
}

/// The centre PE of a `rows × cols` region.
fn centre_pe(rows: u32, cols: u32) -> PePlace {
    let (rows, cols) = (rows.max(1), cols.max(1));
    PePlace {
        x: cols / 2,
        y: rows / 2,
        width: cols,
        height: rows,
    }
}

/// The `in` ports of `ir` that `imp` binds to no tensor: the ports its PEs take their
/// neighbours' messages on.
fn chain_ports(ir: &KernelIr, imp: &LayerImpl) -> Vec<u32> {
    let bound = |name: &str| {
        imp.binds
            .iter()
            .any(|b| b.target == BindTarget::Port && b.target_name == name)
    };
    (0..ir.ports.len() as u32)
        .filter(|&p| {
            let port = &ir.ports[p as usize];
            port.direction == PortDirection::In && !bound(&port.name)
        })
        .collect()
}

/// The PEs a region's dry runs stand on: its first, middle and last rows crossed with its
/// first, middle and last columns — the corners, the middle of every edge and the centre, the
/// places the standard library's kernels tell apart.
fn representative_pes(rows: u32, cols: u32) -> Vec<PePlace> {
    let (rows, cols) = (rows.max(1), cols.max(1));
    let lines = |n: u32| {
        let mut v = vec![0, n / 2, n - 1];
        v.dedup();
        v
    };
    let (ys, xs) = (lines(rows), lines(cols));
    ys.iter()
        .flat_map(|&y| {
            xs.iter().map(move |&x| PePlace {
                x,
                y,
                width: cols,
                height: rows,
            })
        })
        .collect()
}

/// The PEs a phase's dry runs stand on: the first two, middle and last two rows crossed with
/// the same columns. Weight-streaming kernels split blocks unevenly (the first blocks one
/// element longer) and chain along their columns (the end rows do the least), so the
/// busiest PE sits in the first rows and columns or inside.
fn phase_pes(rows: u32, cols: u32) -> Vec<PePlace> {
    let (rows, cols) = (rows.max(1), cols.max(1));
    let lines = |n: u32| {
        let mut v = vec![0, 1.min(n - 1), n / 2, n.saturating_sub(2), n - 1];
        v.sort_unstable();
        v.dedup();
        v
    };
    let (ys, xs) = (lines(rows), lines(cols));
    ys.iter()
        .flat_map(|&y| {
            xs.iter().map(move |&x| PePlace {
                x,
                y,
                width: cols,
                height: rows,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn corners_edge_middles_and_centre() {
        let at = |rows, cols| -> Vec<(u32, u32)> {
            representative_pes(rows, cols)
                .iter()
                .map(|p| (p.y, p.x))
                .collect()
        };
        assert_eq!(at(1, 1), [(0, 0)]);
        assert_eq!(at(1, 5), [(0, 0), (0, 2), (0, 4)]);
        assert_eq!(at(2, 2), [(0, 0), (0, 1), (1, 0), (1, 1)]);
        assert_eq!(at(100, 3).len(), 9);
        assert!(
            representative_pes(100, 3)
                .iter()
                .all(|p| p.width == 3 && p.height == 100)
        );
    }
}
