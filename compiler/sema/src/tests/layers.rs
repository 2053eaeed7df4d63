//! Tests: layers — signatures, cost, implementations, `run` and `bind` (E04xx).

use expect_test::expect;

use super::*;

const KERNEL: &str = "kernel tile(n: u32, m: u32) {\n    var w: [f32; n * m];\n    var acc: [i32; m];\n    in xs: stream<f32> from west;\n    out ys: stream<f32> to south;\n    task main() {}\n}\n";

fn layer(src: &str) -> String {
    check(&format!("{KERNEL}{src}"))
}

const COST: &str = "cost { flops = 2 * N * M; weights = 4 * N * M; activations = 4 * (N + M); }";

#[test]
fn e0408_sample_dimension() {
    let out = layer(&format!(
        "layer l(x: f32[4, N], y2: f32[S, N], param w: f32[B, M]) -> y: f32[B, M] {{ {COST} }}\n"
    ));
    expect![[r#"
        E0408 main.wse:8:16 `4`: the first dimension of activation `x` must be the sample dimension variable
            [not a dimension variable]
            note: the first dimension of every activation tensor is the sample dimension, e.g. `B` in `f32[B, 64]`
        E0408 main.wse:8:68 `B`: all activations of a layer share one sample dimension, but this is `B` and an earlier one is `S`
            [different sample dimension]
            note: the first dimension of every activation tensor is the sample dimension, e.g. `B` in `f32[B, 64]`
    "#]]
    .assert_eq(&out);
}

#[test]
fn e0409_cost_entries() {
    let out = layer(
        "layer a(x: f32[B, N]) -> y: f32[B, N] { cost { flops = N; flop = 1; flops = 2; } }\nlayer b(x: f32[B, N]) -> y: f32[B, N] { }\n",
    );
    expect![[r#"
        E0409 main.wse:8:41 `cost { flops = N; flop = 1; flops = 2; }`: the cost block has no `weights`, `activations`
            [missing entries]
            note: `cost { flops = ...; weights = ...; activations = ...; }` needs all three entries
        E0409 main.wse:8:59 `flop`: unknown cost entry `flop`
            [unknown entry]
            note: `cost { flops = ...; weights = ...; activations = ...; }` needs all three entries
            help: did you mean `flops`?
        E0409 main.wse:8:69 `flops`: cost entry `flops` is given more than once
            [given again]
            + main.wse:8:48 `flops`: first given here
            note: `cost { flops = ...; weights = ...; activations = ...; }` needs all three entries
        E0409 main.wse:9:7 `b`: layer `b` has no `cost` block
            [no cost]
            note: `cost { flops = ...; weights = ...; activations = ...; }` needs all three entries
    "#]]
    .assert_eq(&out);
}

#[test]
fn e0410_duplicate_mode_and_e0411_missing_run() {
    let out = layer(&format!(
        "layer l(x: f32[B, N], param w: f32[N, M]) -> y: f32[B, M] {{ {COST}\n    pipelined on [R, C] {{ run tile(n = N, m = M); bind y to port ys; }}\n    pipelined, streaming on [1, 1] {{ }}\n}}\n"
    ));
    expect![[r#"
        E0410 main.wse:10:5 `pipelined`: this layer already has a `pipelined` implementation
            [second implementation]
            + main.wse:9:5 `pipelined`: first one here
        E0411 main.wse:10:5 `pipelined, streaming`: this implementation does not say which kernel runs
            [no `run` statement]
            help: add `run kernel_name(param = value, ...);`
    "#]]
    .assert_eq(&out);
}

#[test]
fn e0412_to_e0415_run_statement() {
    let out = layer(&format!(
        "layer l(x: f32[B, N], param w: f32[N, M]) -> y: f32[B, M] {{ {COST}\n    pipelined on [R, C] where N % R == 0 {{ run l(n = N); bind y to port ys; }}\n    streaming on [R, C] {{ run tile(n = N, n = 2, k = 1); bind y to port ys; }}\n}}\n"
    ));
    expect![[r#"
        E0412 main.wse:9:48 `l`: `l` is a layer, not a kernel
            [expected a kernel]
            + main.wse:8:7 `l`: layer defined here
        E0414 main.wse:10:31 `tile`: `run tile` does not give `m`
            [missing kernel arguments]
            + main.wse:1:8 `tile`: kernel defined here
        E0415 main.wse:10:43 `n`: parameter `n` is given more than once
            [given again here]
            + main.wse:10:36 `n`: first given here
        E0413 main.wse:10:50 `k`: kernel `tile` has no parameter `k`
            [unknown parameter]
    "#]]
    .assert_eq(&out);
}

#[test]
fn e0416_to_e0421_binds() {
    let out = layer(&format!(
        "layer l(x: f32[B, N], param w: f32[N, M], param b: i32[M]) -> y: f32[B, M] {{ {COST}\n    pipelined on [R, C] {{\n        run tile(n = N / R, m = M / C);\n        bind z to array w;\n        bind w to array xs split [rows, cols];\n        bind w to array w split [rows, diag, cols];\n        bind x to port ys split [rows, cols];\n        bind y to port xs;\n        bind b to array w;\n    }}\n}}\n"
    ));
    expect![[r#"
        E0416 main.wse:11:14 `z`: `z` is not a tensor of this layer
            [expected an input or the output]
        E0417 main.wse:12:25 `xs`: kernel `tile` has no array `xs`
            [not an array of `tile`]
            help: `xs` is a port: write `to port xs`
        E0426 main.wse:13:14 `w`: `w` is bound more than once in this implementation
            [bound again here]
            + main.wse:12:14 `w`: first bound here
            help: a tensor is bound to one array or port; remove one of the `bind`s
        E0419 main.wse:13:34 `rows, diag, cols`: `w` has 2 splittable dimensions, but the split has 3
            [too many split axes]
        E0418 main.wse:13:40 `diag`: unknown split axis `diag`
            [expected `rows`, `cols` or `_`]
        E0420 main.wse:14:24 `ys`: `x` is an input of the layer, so it must be bound to an `in` port
            [`ys` is not an `in` port]
            + main.wse:5:9 `ys`: port declared here
        E0419 main.wse:14:34 `rows, cols`: `x` has 1 splittable dimension, but the split has 2
            [too many split axes]
            note: the first (sample) dimension of an activation is never split: samples stream through the region one after another
        E0420 main.wse:15:24 `xs`: `y` is the output of the layer, so it must be bound to an `out` port
            [`xs` is not an `out` port]
            + main.wse:4:8 `xs`: port declared here
        E0421 main.wse:16:25 `w`: `b` has `i32` elements but `w` holds `f32`
            [element types differ]
            + main.wse:2:9 `w`: `w` holds `f32`
            + main.wse:8:52 `i32[M]`: `b` is `i32[M]`
    "#]]
    .assert_eq(&out);
}

#[test]
fn e0423_undetermined_output_and_e0424_region() {
    let out = layer(&format!(
        "layer l(x: f32[B, N], param w: f32[N, M]) -> y: f32[B, K] {{ {COST}\n    pipelined on [N, 0] {{ run tile(n = N, m = M); bind y to port ys; }}\n}}\n"
    ));
    expect![[r#"
        E0423 main.wse:8:56 `K`: output dimension `K` does not appear in any input
            [cannot be inferred at a call]
        E0424 main.wse:9:19 `N`: region size `N` must be a new name, but it is already defined
            [invalid region size]
            + main.wse:8:19 `N`: defined here
        E0424 main.wse:9:22 `0`: a region needs at least one PE in each direction
            [invalid region size]
    "#]]
    .assert_eq(&out);
}

#[test]
fn layer_signature_lists_dimension_variables() {
    let (db, root, _) = load(&[("main.wse", DIGITS)]);
    let dense = crate::item_index(&db, root)[1];
    let sig = crate::layer_signature(&db, dense);
    assert_eq!(sig.dim_vars, ["B", "N", "M"]);
    let printed: Vec<String> = sig
        .inputs
        .iter()
        .map(|t| {
            format!(
                "{}: {}",
                t.name,
                t.ty.as_ref().map(|t| t.to_string()).unwrap_or_default()
            )
        })
        .collect();
    assert_eq!(printed, ["x: f32[B, N]", "w: f32[N, M]", "b: f32[M]"]);
}

#[test]
fn e0425_output_not_bound_and_e0426_bound_twice() {
    let out = layer(&format!(
        "layer l(x: f32[B, N], param w: f32[N, M]) -> y: f32[B, M] {{ {COST}\n    pipelined on [1, 1] {{\n        run tile(n = N, m = M);\n        bind x to port xs;\n        bind w to array w;\n        bind w to array w;\n    }}\n}}\n"
    ));
    expect![[r#"
        E0425 main.wse:9:5 `pipelined`: this implementation never binds the layer's output `y`
            [`y` is not bound]
            + main.wse:8:46 `y`: the output is declared here
            help: add `bind y to port p;` with an `out` port `p` of the kernel
        E0426 main.wse:13:14 `w`: `w` is bound more than once in this implementation
            [bound again here]
            + main.wse:12:14 `w`: first bound here
            help: a tensor is bound to one array or port; remove one of the `bind`s
    "#]]
    .assert_eq(&out);
}

#[test]
fn e0440_resident_activation_in_pipelined_mode() {
    let out = layer(&format!(
        "layer l(x: f32[B, N], param w: f32[N, M]) -> y: f32[B, M] {{ {COST}\n    pipelined, streaming on [R, C] {{\n        run tile(n = N, m = M);\n        bind x to array w split [cols, rows];\n        bind y to port ys split [cols];\n    }}\n}}\n"
    ));
    expect![[r#"
        E0440 main.wse:11:14 `x`: `x` is an activation bound to an array, but this implementation serves pipelined mode
            [a resident activation needs a `streaming` implementation]
            note: in pipelined mode samples stream through the region one after another; only weight streaming keeps a batch's activations in SRAM
            help: bind `x` to a port here, or write a separate `streaming on [...]` implementation
    "#]]
    .assert_eq(&out);
}

#[test]
fn e0441_tiles_of_the_wrong_rank() {
    let out = layer(&format!(
        "layer l(x: f32[B, N], param w: f32[N, M]) -> y: f32[B, M] {{ {COST}\n    streaming on [R, C] {{\n        run tile(n = N, m = M);\n        bind w to port xs split [rows, _] tiles [1, R, 2];\n        bind y to port ys split [cols] tiles [C];\n    }}\n}}\n"
    ));
    expect![[r#"
        E0441 main.wse:11:50 `1, R, 2`: the parts of `w` have 2 dimensions, but `tiles` gives 3 counts
            [one tile count per dimension]
    "#]]
    .assert_eq(&out);
}

#[test]
fn e0427_tensor_bound_to_a_bus_and_e0304_multicast_bus() {
    let out = check(
        "kernel k(n: u32) {
    var v: [f32; n];
    out ys: stream<f32> to south;
    in  rx: stream<f32> from row multicast;
    out bx: stream<f32> to row;
    task main() { recv(rx, v[0..n]) then main; }
}
layer l(x: f32[B, N]) -> y: f32[B, N] {
    cost { flops = N; weights = 0; activations = 0; }
    pipelined on [1, 2] {
        run k(n = N);
        bind x to port rx;
        bind y to port ys;
    }
}
",
    );
    expect![[r#"
        E0304 main.wse:4:30 `row`: a port `from row` is a bus and cannot be `multicast`
            [not for a bus]
            help: remove `multicast`: what a PE sends `to row` reaches every other PE of its row already
        E0427 main.wse:12:24 `rx`: `rx` is a bus port (`from row`), which no tensor can be bound to
            [a bus port]
            + main.wse:4:9 `rx`: `rx` is declared `from row` here
            help: bind the tensor to a port on a side of the region (`north`, `south`, `east`, `west`)
    "#]]
    .assert_eq(&out);
}

#[test]
fn e0442_e0443_e0446_output_dimension_expressions() {
    // `ok` is accepted: constants fold, `%` and parentheses are integer arithmetic.
    let out = layer(
        "const TWO: u32 = 2;
layer ok(x: f32[B, N], heads: u32, context: u32) -> y: f32[B, (heads * context + TWO) % 7] { cost { flops = N; weights = 0; activations = 0; } }
layer e(x: f32[B, N], heads: u32, eps: f32) -> y: f32[B, head * N, N * eps, N > 2, 2.5] { cost { flops = N; weights = 0; activations = 0; } }
layer s(x: f32[B, N]) -> y: f32[B, B * N] { cost { flops = N; weights = 0; activations = 0; } }
",
    );
    expect![[r#"
        E0442 main.wse:10:58 `head`: `head` in this output dimension is not a dimension of the layer's inputs, a scalar input or a constant
            [unknown name]
            note: a layer's output dimension may be an integer expression of its dimension variables and integer scalar inputs, e.g. `f32[B, heads * context]`
            help: did you mean `heads`?
        E0443 main.wse:10:72 `eps`: this output dimension is not an integer expression: `eps` is a `f32`
            [not an integer]
            note: a layer's output dimension may be an integer expression of its dimension variables and integer scalar inputs, e.g. `f32[B, heads * context]`
        E0443 main.wse:10:77 `N > 2`: this output dimension is not an integer expression: it has a comparison or logical operator
            [not an integer]
            note: a layer's output dimension may be an integer expression of its dimension variables and integer scalar inputs, e.g. `f32[B, heads * context]`
        E0443 main.wse:10:84 `2.5`: this output dimension is not an integer expression: it has a float literal
            [not an integer]
            note: a layer's output dimension may be an integer expression of its dimension variables and integer scalar inputs, e.g. `f32[B, heads * context]`
        E0446 main.wse:11:36 `B * N`: an output dimension expression cannot use the sample dimension `B`
            [uses the sample dimension]
            note: the batch size is known only when the model runs; only the output's first dimension is the sample dimension
    "#]].assert_eq(&out);
}

/// A `param` result (a gradient) has no sample dimension: its split covers its whole shape,
/// as a weight's does — two axes for `dw: f32[N, M]`, and not three.
#[test]
fn a_param_result_splits_over_its_whole_shape() {
    let src = |split: &str| {
        format!(
            "layer l(x: f32[B, N], dy: f32[B, M]) -> param dw: f32[N, M] {{ {COST}\n    streaming on [R, C] {{\n        run tile(n = N, m = M);\n        bind x to port xs split [rows];\n        bind dw to port ys split [{split}];\n    }}\n}}\n"
        )
    };
    expect![[r#""#]].assert_eq(&layer(&src("_, cols")));
    expect![[r#"
        E0419 main.wse:12:35 `_, cols, rows`: `dw` has 2 splittable dimensions, but the split has 3
            [too many split axes]
    "#]]
    .assert_eq(&layer(&src("_, cols, rows")));
}
