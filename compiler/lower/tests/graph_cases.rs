//! Layer-graph lowering on small programs: the E05xx diagnostics, region sides, kernel
//! arguments, parameter paths, call naming, and the `run` settings.

mod common;

use expect_test::{Expect, expect};
use wsel_ir::graph::{CExpr, RegionSide, TensorRef};
use wsel_ir::print_graph::{cexpr_text, print_graph};
use wsel_lower::{
    RunMicroOrder, RunMode, TargetSpec, find_model, layer_graph, lower_run_config, relayed_graph,
};
use wsel_sema::{Diagnostic, ItemKind};

/// The printed graph of model `m` in `src` (file `dir/main.wse`) at batch 2, then its
/// diagnostics as `code message [primary text] (secondary text: label)`.
fn check(src: &str, expected: Expect) {
    let (db, file) = common::load(&[("dir/main.wse", src)]);
    let model = common::item(&db, file, ItemKind::Model, "m");
    let (graph, diags) = layer_graph(&db, model, 2);
    let mut out = print_graph(&graph);
    for d in &diags {
        out.push_str(&render(src, d));
    }
    expected.assert_eq(&out);
}

fn render(src: &str, d: &Diagnostic) -> String {
    let text = |span: &std::ops::Range<usize>| src[span.clone()].to_string();
    let mut out = format!(
        "{} {} [{}]",
        d.code,
        d.message,
        text(&d.primary.location.span)
    );
    for s in &d.secondary {
        out.push_str(&format!(" ({}: {})", text(&s.location.span), s.message));
    }
    out.push('\n');
    out
}

#[test]
fn values_only_the_concrete_shapes_reveal_are_reported() {
    check(
        r"
kernel k(n: u32, s: u32) { var a: [f32; n]; task main() { } }
layer big(x: f32[B, N]) -> y: f32[B, N] {
    cost {
        flops = N * N * N * N * N * N * N * N * N * N * N * N * N;
        weights = N - 64;
        activations = 4 * N;
    }
    pipelined on [N / 64, C] where N % C == 0 {
        run k(n = N / C, s = 64 / (N - 32));
    }
}
model m(x: f32[B, 32]) -> f32[B, 32] { return big(x); }
",
        expect![[r#"
            model m (batch 2)
                input x: f32[2, 32]
                big#1 = big(x) -> y: f32[2, 32]
                    dims B = 2, N = 32
                    cost flops 0, weights 0 B, activations 128 B
                    pipelined on [N / 64, C] where N % C == 0
                        run k(n = N / C, s = 64 / (N - 32)) from "dir/main.wse"
                        sram words N / C
                return big#1
            E0501 the cost entry `flops` has no value at the shapes of this call: it overflows [big(x)] (N * N * N * N * N * N * N * N * N * N * N * N * N: `flops` is computed here)
            E0501 the cost entry `weights` has no value at the shapes of this call: it is negative (-32) [big(x)] (N - 64: `weights` is computed here)
            E0503 the region size has no valid value at the shapes of this call: it is 0 [big(x)] (N / 64: the region size is given here)
            E0502 the kernel argument `s` has no value at the shapes of this call: it divides by zero [big(x)] (64 / (N - 32): `s` is given here)
        "#]],
    );
}

#[test]
fn a_symbolic_input_dimension_other_than_the_batch_is_reported() {
    check(
        r"
kernel k(n: u32) { task main() { } }
layer id(x: f32[B, N]) -> y: f32[B, N] {
    cost { flops = N; weights = 0; activations = N; }
    pipelined on [1, 1] { run k(n = N); }
}
model m(x: f32[B, K]) -> f32[B, K] { return id(x); }
",
        expect![[r#"
            model m (batch 2)
                input x: f32[2, 0]
                id#1 = id(x) -> y: f32[2, 0]
                    dims B = 2, N = 0
                    cost flops 0, weights 0 B, activations 0 B
                    pipelined on [1, 1]
                        run k(n = N) from "dir/main.wse"
                        sram words 0
                return id#1
            E0504 the dimension `K` of model input `x` is not known [f32[B, K]]
        "#]],
    );
}

const LAYERS: &str = r"
const ROWS: u32 = 2;
const EPS: f32 = 0.5;
kernel k(n: u32, eps: f32, rows: u32) {
    const twice: u32 = n * 2;
    var a: [f32; twice + 1];
    var b: [f32; n] = 1.0;
    var c: u32;
    in xs: stream<f32> from north multicast;
    out ys: stream<f32> to east;
    task main() { }
}
/// Fixed sides: a constant and a dimension.
layer fixed(x: f32[B, N], param w: f32[N]) -> y: f32[B, N] {
    cost { flops = 2 * N; weights = 4 * N; activations = 8 * N; }
    pipelined on [ROWS, N / 4] where N % ROWS == 0 {
        run k(n = N / ROWS, eps = EPS, rows = ROWS);
        bind w to array b split [cols];
        bind x to port xs;
        bind y to port ys split [rows];
    }
    streaming on [P, Q] where N % (P * Q) == 0, P <= Q {
        run k(n = N / (P * Q), eps = (N as f32) * EPS, rows = max(P, 1));
        bind x to port xs split [cols];
        bind y to port ys split [rows];
    }
}
";

#[test]
fn region_sides_kernel_arguments_and_sram_words() {
    let src = format!(
        "{LAYERS}
model m(x: f32[B, 8]) -> f32[B, 8] {{
    param w: f32[8];
    param v: f32[8] from \"../weights/v.npy\";
    let h = fixed(x, w);
    return fixed(fixed(h, v), w);
}}
"
    );
    check(
        &src,
        expect![[r#"
            model m (batch 2)
                input x: f32[2, 8]
                param w: f32[8] from "dir/w.npy"
                param v: f32[8] from "dir/../weights/v.npy"
                fixed#1 = fixed(x, w) -> y: f32[2, 8]
                    dims B = 2, N = 8
                    cost flops 16, weights 32 B, activations 64 B
                    pipelined on [2, N / 4] where N % 2 == 0
                        run k(n = N / 2, eps = 0.5, rows = 2) from "dir/main.wse"
                        sram words 3 * (N / 2) + 2
                        in xs: stream<f32> from north multicast
                        out ys: stream<f32> to east
                        bind w to array b split [cols]
                        bind x to port xs
                        bind y to port ys split [rows]
                    streaming on [P, Q] where N % (P * Q) == 0, P <= Q
                        run k(n = N / (P * Q), eps = 4.0, rows = max(P, 1)) from "dir/main.wse"
                        sram words 3 * (N / (P * Q)) + 2
                        in xs: stream<f32> from north multicast
                        out ys: stream<f32> to east
                        bind x to port xs split [cols]
                        bind y to port ys split [rows]
                fixed#2 = fixed(fixed#1, v) -> y: f32[2, 8]
                    dims B = 2, N = 8
                    cost flops 16, weights 32 B, activations 64 B
                    pipelined on [2, N / 4] where N % 2 == 0
                        run k(n = N / 2, eps = 0.5, rows = 2) from "dir/main.wse"
                        sram words 3 * (N / 2) + 2
                        in xs: stream<f32> from north multicast
                        out ys: stream<f32> to east
                        bind w to array b split [cols]
                        bind x to port xs
                        bind y to port ys split [rows]
                    streaming on [P, Q] where N % (P * Q) == 0, P <= Q
                        run k(n = N / (P * Q), eps = 4.0, rows = max(P, 1)) from "dir/main.wse"
                        sram words 3 * (N / (P * Q)) + 2
                        in xs: stream<f32> from north multicast
                        out ys: stream<f32> to east
                        bind x to port xs split [cols]
                        bind y to port ys split [rows]
                fixed#3 = fixed(fixed#2, w) -> y: f32[2, 8]
                    dims B = 2, N = 8
                    cost flops 16, weights 32 B, activations 64 B
                    pipelined on [2, N / 4] where N % 2 == 0
                        run k(n = N / 2, eps = 0.5, rows = 2) from "dir/main.wse"
                        sram words 3 * (N / 2) + 2
                        in xs: stream<f32> from north multicast
                        out ys: stream<f32> to east
                        bind w to array b split [cols]
                        bind x to port xs
                        bind y to port ys split [rows]
                    streaming on [P, Q] where N % (P * Q) == 0, P <= Q
                        run k(n = N / (P * Q), eps = 4.0, rows = max(P, 1)) from "dir/main.wse"
                        sram words 3 * (N / (P * Q)) + 2
                        in xs: stream<f32> from north multicast
                        out ys: stream<f32> to east
                        bind x to port xs split [cols]
                        bind y to port ys split [rows]
                return fixed#3
        "#]],
    );
}

#[test]
fn the_graph_is_data_the_mapper_can_evaluate() {
    let src = format!(
        "{LAYERS}
model m(x: f32[B, 8]) -> f32[B, 8] {{ param w: f32[8]; return fixed(x, w); }}
"
    );
    let (db, file) = common::load(&[("main.wse", &src)]);
    let model = common::item(&db, file, ItemKind::Model, "m");
    let (graph, _) = layer_graph(&db, model, 5);
    assert_eq!(graph.batch, 5);
    let layer = &graph.layers[0];
    assert_eq!(layer.args, vec![TensorRef::Input(0), TensorRef::Param(0)]);
    assert_eq!(layer.output_shape, vec![5, 8]);
    let fixed = &layer.impls[0];
    assert_eq!(fixed.rows, RegionSide::Fixed(CExpr::Int(2)));
    assert_eq!(
        cexpr_text(match &fixed.cols {
            RegionSide::Fixed(e) => e,
            RegionSide::Free(_) => panic!("a fixed side"),
        }),
        "N / 4"
    );
    let streaming = &layer.impls[1];
    assert_eq!(streaming.rows, RegionSide::Free("P".into()));
    let env = |n: &str| match n {
        "P" => Some(wsel_ir::graph::CValue::Int(2)),
        "Q" => Some(wsel_ir::graph::CValue::Int(4)),
        other => layer
            .dims
            .get(other)
            .map(|v| wsel_ir::graph::CValue::Int(*v as i64)),
    };
    assert_eq!(streaming.conditions[0].eval_bool(&env), Ok(true));
    assert_eq!(streaming.sram_words.eval_int(&env), Ok(5));
    assert_eq!(
        cexpr_text(&streaming.kernel_args[1].1),
        "4.0",
        "a cast of a dimension is folded at the call's shapes"
    );
}

#[test]
fn run_settings_are_plain_data_with_resolved_paths() {
    let src = r#"
kernel k(n: u32) { task main() { } }
layer id(x: f32[B, N]) -> y: f32[B, N] {
    cost { flops = N; weights = 0; activations = N; }
    pipelined on [1, 1] { run k(n = N); }
}
model m(x: f32[B, 4]) -> f32[B, 4] { return id(x); }
run m {
    input x = "data/x.npy";
    output = "out/y.npy";
    labels = "data/labels.npy";
    target = "targets/big.toml";
    mode = "streaming";
    micro_order = "layer";
    batch = 8;
}
"#;
    let (db, file) = common::load(&[("proj/main.wse", src)]);
    let run = lower_run_config(&db, file).expect("a run item");
    assert_eq!(run.model, "m");
    assert_eq!(
        run.inputs,
        vec![("x".to_string(), "proj/data/x.npy".into())]
    );
    assert_eq!(run.output, Some("proj/out/y.npy".into()));
    assert_eq!(run.labels, Some("proj/data/labels.npy".into()));
    assert_eq!(
        run.target,
        Some(TargetSpec::File("proj/targets/big.toml".into()))
    );
    assert_eq!(run.mode, Some(RunMode::Streaming));
    assert_eq!(run.micro_order, Some(RunMicroOrder::Layer));
    assert_eq!(run.batch, Some(8));
    assert!(find_model(&db, file, "m").is_some());

    let preset = src.replace("\"targets/big.toml\"", "\"wse3\"");
    let (db, file) = common::load(&[("main.wse", &preset)]);
    let run = lower_run_config(&db, file).expect("a run item");
    assert_eq!(run.target, Some(TargetSpec::Preset("wse3".into())));
}

#[test]
fn scalar_inputs_reach_cost_conditions_and_kernel_arguments() {
    check(
        r"
kernel k(n: u32, scale: f32, iters: u32) { var a: [f32; n]; task main() { } }
const EPS: f32 = 0.25;
layer l(x: f32[B, N], iters: u32 = 3, scale: f32 = 1.0) -> y: f32[B, N] {
    cost { flops = N * iters; weights = 0; activations = 4 * N; }
    pipelined on [1, iters] where iters < 8 {
        run k(n = N * iters, scale = scale * 2.0, iters = iters + 1);
    }
}
model m(x: f32[B, 4]) -> f32[B, 4] { return l(l(x, scale = EPS), iters = 5); }
",
        expect![[r#"
            model m (batch 2)
                input x: f32[2, 4]
                l#1 = l(x, iters = 3, scale = 0.25) -> y: f32[2, 4]
                    dims B = 2, N = 4
                    cost flops 12, weights 0 B, activations 16 B
                    pipelined on [1, 3] where true
                        run k(n = N * 3, scale = 0.5, iters = 4) from "dir/main.wse"
                        sram words 3 * N
                l#2 = l(l#1, iters = 5, scale = 1.0) -> y: f32[2, 4]
                    dims B = 2, N = 4
                    cost flops 20, weights 0 B, activations 16 B
                    pipelined on [1, 5] where true
                        run k(n = N * 5, scale = 2.0, iters = 6) from "dir/main.wse"
                        sram words 5 * N
                return l#2
        "#]],
    );
}

/// A layer that reads one layer's result on two ports gets `std.resident`'s `relay` before
/// its second reading, in pipelined mode (docs/mapping.md §4); a model input read twice
/// does not (the host feeds each port), and the layers after the relay move one place on.
#[test]
fn a_result_read_twice_by_one_layer_gets_a_relay() {
    let src = r"
kernel k(n: u32) { var a: [f32; n]; task main() { } }
layer one(x: f32[B, N]) -> y: f32[B, N] {
    cost { flops = N; weights = 0; activations = 8 * N; }
    pipelined on [1, 1] { run k(n = N); }
}
layer two(a: f32[B, N], b: f32[B, N]) -> y: f32[B, N] {
    cost { flops = N; weights = 0; activations = 12 * N; }
    pipelined on [1, 1] { run k(n = N); }
}
model m(x: f32[B, 4]) -> f32[B, 4] {
    let h = one(two(x, x));
    return one(two(h, h));
}
";
    let (db, file) = common::load(&[("dir/main.wse", src)]);
    let model = common::item(&db, file, ItemKind::Model, "m");
    let (graph, _) = layer_graph(&db, model, 2);
    let (relayed, diags) = relayed_graph(&db, &graph).expect("std.resident is loaded");
    assert!(diags.is_empty(), "{diags:?}");
    expect![[r#"
        model m (batch 2)
            input x: f32[2, 4]
            two#1 = two(x, x) -> y: f32[2, 4]
                dims B = 2, N = 4
                cost flops 4, weights 0 B, activations 48 B
                pipelined on [1, 1]
                    run k(n = N) from "dir/main.wse"
                    sram words N
            one#1 = one(two#1) -> y: f32[2, 4]
                dims B = 2, N = 4
                cost flops 4, weights 0 B, activations 32 B
                pipelined on [1, 1]
                    run k(n = N) from "dir/main.wse"
                    sram words N
            relay#1 = relay(one#1) -> y: f32[2, 4]
                dims B = 2, N = 4
                cost flops 0, weights 0 B, activations 32 B
                pipelined on [1, C] where C <= N
                    run relay_tile(n_total = N, n = (N + C - 1) / C, samples = B) from "<std>/resident.wse"
                    sram words (N + C - 1) / C + 2
                    in xs: stream<f32> from north
                    out ys: stream<f32> to south
                    bind x to port xs split [cols]
                    bind y to port ys split [cols]
            two#2 = two(one#1, relay#1) -> y: f32[2, 4]
                dims B = 2, N = 4
                cost flops 4, weights 0 B, activations 48 B
                pipelined on [1, 1]
                    run k(n = N) from "dir/main.wse"
                    sram words N
            one#2 = one(two#2) -> y: f32[2, 4]
                dims B = 2, N = 4
                cost flops 4, weights 0 B, activations 32 B
                pipelined on [1, 1]
                    run k(n = N) from "dir/main.wse"
                    sram words N
            return one#2
    "#]].assert_eq(&print_graph(&relayed));
}
