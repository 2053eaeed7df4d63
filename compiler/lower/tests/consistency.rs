//! The layer graph and the kernel IR agree: for every implementation of every layer of every
//! example, at the first region size its conditions allow, the kernel arguments evaluate, the
//! kernel lowers (and passes the code generators' checker), its SRAM words equal the graph's
//! `sram_words` expression, and its ports are the graph's ports.

mod common;

use wsel_ir::graph::{CValue, LayerImpl, LayerInstance, RegionSide};
use wsel_lower::{find_model, kernel_item, layer_graph, lower_kernel, lower_run_config};

/// The first `(rows, cols)` with sides up to 16 that satisfies `imp`'s conditions.
fn region(layer: &LayerInstance, imp: &LayerImpl) -> (i64, i64) {
    let env = |r: i64, c: i64| {
        move |name: &str| {
            if let RegionSide::Free(n) = &imp.rows
                && n == name
            {
                return Some(CValue::Int(r));
            }
            if let RegionSide::Free(n) = &imp.cols
                && n == name
            {
                return Some(CValue::Int(c));
            }
            layer.dims.get(name).map(|v| CValue::Int(*v as i64))
        }
    };
    let side = |s: &RegionSide| match s {
        RegionSide::Free(_) => None,
        RegionSide::Fixed(e) => Some(
            e.eval_int(&|n| layer.dims.get(n).map(|v| CValue::Int(*v as i64)))
                .expect("fixed side"),
        ),
    };
    let rows: Vec<i64> = side(&imp.rows).map_or((1..=16).collect(), |v| vec![v]);
    let cols: Vec<i64> = side(&imp.cols).map_or((1..=16).collect(), |v| vec![v]);
    for &r in &rows {
        for &c in &cols {
            let env = env(r, c);
            if imp
                .conditions
                .iter()
                .all(|cond| cond.eval_bool(&env) == Ok(true))
            {
                return (r, c);
            }
        }
    }
    panic!("{}: no region up to 16 x 16", layer.name);
}

#[test]
fn graphs_and_kernels_agree_on_every_example() {
    let mut checked = 0;
    for name in common::examples() {
        let (db, file) = common::load_example(&name);
        let run = lower_run_config(&db, file).expect("run item");
        let model = find_model(&db, file, &run.model).expect("model");
        // Batch 3, except where a layer needs whole sequences of its context (std.nn's
        // attention: the transformer's 64 tokens): the run item's batch there.
        let batch = if name == "transformer" {
            run.batch
                .expect("the transformer's run item gives its batch")
        } else {
            3
        };
        let (graph, diags) = layer_graph(&db, model, batch);
        assert!(diags.is_empty(), "{diags:#?}");
        for layer in &graph.layers {
            for imp in &layer.impls {
                let (r, c) = region(layer, imp);
                let env = |n: &str| match (&imp.rows, &imp.cols) {
                    (RegionSide::Free(rn), _) if rn == n => Some(CValue::Int(r)),
                    (_, RegionSide::Free(cn)) if cn == n => Some(CValue::Int(c)),
                    _ => layer.dims.get(n).map(|v| CValue::Int(*v as i64)),
                };
                let args: Vec<(String, CValue)> = imp
                    .kernel_args
                    .iter()
                    .map(|(p, e)| (p.clone(), e.eval(&env).expect("kernel argument")))
                    .collect();
                let kernel = kernel_item(&db, &imp.kernel).expect("kernel item");
                let ir = lower_kernel(&db, kernel, &args)
                    .unwrap_or_else(|e| panic!("{}: {e}", layer.name));
                wsel_codegen::check::check_kernel(&ir).unwrap_or_else(|e| panic!("{e}"));
                let words = imp.sram_words.eval_int(&env).expect("sram words");
                assert_eq!(
                    words,
                    i64::from(ir.sram_words()),
                    "{} on {r} x {c}: {}",
                    layer.name,
                    ir.name
                );
                let graph_ports: Vec<(&str, _)> = imp
                    .ports
                    .iter()
                    .map(|p| (p.name.as_str(), p.direction))
                    .collect();
                let ir_ports: Vec<(&str, _)> = ir
                    .ports
                    .iter()
                    .map(|p| (p.name.as_str(), p.direction))
                    .collect();
                assert_eq!(graph_ports, ir_ports);
                checked += 1;
            }
        }
    }
    assert!(checked >= 10, "only {checked} implementations checked");
}
