//! The work estimate `wsel map`, `wsel run` and the language server's hover give the mapper
//! (`docs/mapping.md` §5): a model's layers' kernels dry-run on every candidate region
//! ([`KernelDryRuns`], a [`wsel_map::KernelWork`]), with the helpers it shares with the
//! driver — lowering a model for a batch, the target's cost model — and, for callers that
//! map again and again, the digest of the sources the dry runs read ([`sources::digest`]) and
//! a store of measurements kept across mappings ([`MeasuredWork`]).
//!
//! Dry runs interpret kernels, or compile them with Cranelift when a run is long
//! (`wsel_codegen::dry_run`); nothing here simulates a fabric.

mod chain_flow;
pub mod kernel_work;
pub mod sources;
pub mod store;

pub use kernel_work::KernelDryRuns;
pub use store::MeasuredWork;

use wsel_ir::cost::CostModel;
use wsel_ir::graph::LayerGraph;
use wsel_sema::{Db, Diagnostic, ItemId, Severity};
use wsel_target::Target;

/// Lowers `model` for a batch of `batch` samples: the graph, or the lowering's diagnostics.
pub fn lower_for_batch<'db>(
    db: &'db dyn Db,
    model: ItemId<'db>,
    batch: u64,
) -> Result<LayerGraph, Vec<Diagnostic>> {
    let (graph, diagnostics) = wsel_lower::layer_graph(db, model, batch);
    if diagnostics.iter().any(|d| d.severity == Severity::Error) {
        Err(diagnostics)
    } else {
        Ok(graph)
    }
}

/// The per-PE throughput the code generators charge, from the target.
pub fn cost_model(target: &Target) -> CostModel {
    CostModel {
        f32_add_per_cycle: target.fp32.add,
        f32_mul_per_cycle: target.fp32.mul,
        f32_fma_per_cycle: target.fp32.fma,
        f16_add_per_cycle: target.fp16.add,
        f16_mul_per_cycle: target.fp16.mul,
        f16_fma_per_cycle: target.fp16.fma,
        math_cycles: CostModel::WSE2_LIKE.math_cycles,
    }
}
