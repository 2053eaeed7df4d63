//! Lowering of checked .wse programs, the step between the front end (`wsel-sema`) and the
//! mapper: a model becomes a [`LayerGraph`](wsel_ir::graph::LayerGraph) for one batch size
//! ([`layer_graph`]), and a kernel with its compile-time arguments becomes kernel IR
//! ([`lower_kernel`]). Both are salsa queries over the front end's queries, so the CLI and
//! the language server share them and each distinct kernel instance is lowered once.
//!
//! Lowering assumes a program without errors (it never panics on one, but its results are then
//! unspecified). What the checker cannot see — a cost that overflows at the concrete shapes, a
//! kernel argument that divides by zero — is reported with codes E05xx ([`codes`]).

pub mod cexpr;
pub mod diagnostics;
mod error;
pub mod graph;
pub mod kernel;
pub mod run_config;
pub mod train_config;
pub mod value;

pub use error::LowerError;
pub use graph::cost::{CostEntry, CostKey, cost_at, layer_cost};
pub use graph::pipelined_replica::{Drain, ReplicaError, ReplicaGraphs, replica_graphs};
pub use graph::pipelined_training::{PipelinedTrain, pipelined_training_graphs};
pub use graph::recompute::{droppable, recomputed};
pub use graph::training::{TrainGraph, training_graph};
pub use graph::{
    GraphKey, chunked_graph, fused_twin, kernel_item, layer_graph, model_graph, parked_graph,
    relaid_graph, relaid_training, relayed_graph, staged_graph,
};
pub use kernel::{
    KernelInstanceKey, instance_key, kernel_instance, lower_kernel, lower_kernel_with_spans,
};
pub use run_config::{RunConfig, RunMicroOrder, RunMode, TargetSpec, find_model, lower_run_config};
pub use train_config::{OptimizerName, RecomputeChoice, TrainConfig, lower_train_config};
pub use value::ArgValue;

/// Every diagnostic code lowering reports, with a one-line summary, in code order.
/// `docs/diagnostics.md` documents each one.
pub fn codes() -> &'static [(&'static str, &'static str)] {
    diagnostics::CODES
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_code_is_documented() {
        let doc = include_str!("../../../docs/diagnostics.md");
        let missing: Vec<&str> = super::codes()
            .iter()
            .map(|(c, _)| *c)
            .filter(|c| !doc.contains(&format!("| {c} |")))
            .collect();
        assert!(
            missing.is_empty(),
            "codes missing from docs/diagnostics.md: {missing:?}"
        );
    }
}
