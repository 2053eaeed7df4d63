//! Snapshots of the layer graph of every example at batch 4.

mod common;

use expect_test::expect_file;
use wsel_ir::print_graph::print_graph;
use wsel_lower::{find_model, layer_graph, lower_run_config};

/// The layer graph of example `name` at batch 4, printed, with its diagnostics.
fn graph_text(name: &str) -> String {
    let (db, file) = common::load_example(name);
    let run = lower_run_config(&db, file).expect("the example has a run item");
    let model = find_model(&db, file, &run.model).expect("the run names a model");
    let (graph, diags) = layer_graph(&db, model, 4);
    assert!(diags.is_empty(), "{name}: {diags:#?}");
    print_graph(&graph)
}

#[test]
fn every_example_has_a_snapshot() {
    for name in common::examples() {
        let path = common::repo().join(format!("compiler/lower/tests/snapshots/{name}.graph"));
        assert!(
            path.exists() || std::env::var_os("UPDATE_EXPECT").is_some(),
            "no graph snapshot for example {name}: add a test below and run with UPDATE_EXPECT=1"
        );
    }
}

macro_rules! example_graph {
    ($test:ident, $name:literal) => {
        #[test]
        fn $test() {
            expect_file![concat!("snapshots/", $name, ".graph")].assert_eq(&graph_text($name));
        }
    };
}

example_graph!(allreduce, "allreduce");
example_graph!(axpy, "axpy");
example_graph!(digits, "digits");
example_graph!(gemv, "gemv");
example_graph!(heat, "heat");
example_graph!(mlp_streaming, "mlp_streaming");
example_graph!(residual, "residual");
example_graph!(rowsum, "rowsum");
example_graph!(ragged, "ragged");
example_graph!(transformer, "transformer");
