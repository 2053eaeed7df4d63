//! Tests: models — layer calls, shape unification, params, the result (E040x).

use expect_test::expect;

use super::*;

/// The digits program with its model replaced by `model`.
fn with_model(model: &str) -> String {
    let start = DIGITS.find("model digits").expect("model");
    let end = DIGITS.find("run digits").expect("run");
    check(&format!("{}{model}\n{}", &DIGITS[..start], &DIGITS[end..]))
}

#[test]
fn e0402_shape_mismatch_names_both_shapes() {
    let out = with_model(
        "model digits(x: f32[B, 32]) -> f32[B, 10] {\n    param w1: f32[64, 32];\n    param b1: f32[32];\n    return dense(dense(x, w1, b1), w1, b1);\n}\n",
    );
    expect![[r#"
        E0406 main.wse:38:12 `dense(dense(x, w1, b1), w1, b1)`: the model returns `f32[B, 32]`, but declares `f32[B, 10]`
            [this is `f32[B, 32]`]
            + main.wse:35:32 `f32[B, 10]`: declared output type
        E0402 main.wse:38:27 `w1`: mismatched shapes in call to `dense`: parameter `w1` is declared `f32[64, 32]`, but the call needs `f32[32, 32]`
            [this is `f32[64, 32]`]
            + main.wse:36:11 `w1`: `w1` is declared here
            note: the activations passed to `dense` (and the weights before this one) decide the shape it needs
        E0402 main.wse:38:36 `w1`: mismatched shapes in call to `dense`: parameter `w1` is declared `f32[64, 32]`, but the call needs `f32[32, 32]`
            [this is `f32[64, 32]`]
            + main.wse:36:11 `w1`: `w1` is declared here
            note: the activations passed to `dense` (and the weights before this one) decide the shape it needs
    "#]]
    .assert_eq(&out);
}

#[test]
fn e0401_not_a_layer_and_e0405_arity() {
    let out = with_model(
        "model digits(x: f32[B, 64]) -> f32[B, 10] {\n    param w1: f32[64, 10];\n    let a = gemv_tile(x);\n    let b = dens(x, w1);\n    return dense(x, w1);\n}\n",
    );
    expect![[r#"
        E0401 main.wse:37:13 `gemv_tile`: `gemv_tile` is a kernel, not a layer
            [expected a layer]
            + main.wse:2:8 `gemv_tile`: kernel defined here
            note: models call layers; kernels run inside layer implementations
        E0105 main.wse:38:13 `dens`: cannot find layer `dens` in this scope
            [not found in this scope]
            help: did you mean `dense`?
        E0405 main.wse:39:12 `dense(x, w1)`: `dense` takes 3 tensors, but 2 were given
            [wrong number of arguments]
            + main.wse:20:7 `dense`: layer defined here
    "#]]
    .assert_eq(&out);
}

#[test]
fn e0403_and_e0404_param_inputs() {
    let out = with_model(
        "model digits(x: f32[B, 64]) -> f32[B, 10] {\n    param w1: f32[64, 10];\n    param b1: f32[10];\n    param z: f32[1, 64];\n    return dense(z, x, b1);\n}\n",
    );
    expect![[r#"
        E0404 main.wse:39:18 `z`: `x` of `dense` is an activation, but this is a model parameter
            [a weight tensor]
            + main.wse:20:16 `f32[B, N]`: activation input declared here
        E0403 main.wse:39:21 `x`: `w` of `dense` is a weight and must be given a model `param`
            [not a model parameter]
            + main.wse:20:36 `f32[N, M]`: declared `param` here
    "#]]
    .assert_eq(&out);
}

#[test]
fn e0406_result_type_and_e0407_return() {
    let out = with_model(
        "model digits(x: f32[B, 64]) -> f32[B, 10] {\n    param w1: f32[64, 32];\n    param b1: f32[32];\n    return dense(x, w1, b1);\n    let z = x;\n}\nmodel other(x: f32[B, 64]) -> f32[B, 64] {\n    param p: f32[N, 2];\n}\n",
    );
    expect![[r#"
        E0406 main.wse:38:12 `dense(x, w1, b1)`: the model returns `f32[B, 32]`, but declares `f32[B, 10]`
            [this is `f32[B, 32]`]
            + main.wse:35:32 `f32[B, 10]`: declared output type
        E0407 main.wse:39:5 `let z = x;`: statements after `return` are never reached
            [after the return]
            + main.wse:38:5 `return dense(x, w1, b1);`: the model returns here
        E0407 main.wse:41:7 `other`: model `other` has no `return`
            [no `return`]
            help: end the model with `return tensor;`
        E0408 main.wse:42:14 `f32[N, 2]`: parameter `p` must have a constant shape
            [symbolic dimension]
            note: a parameter is loaded from a `.npy` file of a fixed shape
    "#]]
    .assert_eq(&out);
}

#[test]
fn model_graph_and_call_bindings() {
    let (db, root, _) = load(&[("main.wse", DIGITS)]);
    let model = crate::item_index(&db, root)[2];
    let checked = crate::check_model(&db, model);
    let nodes: Vec<String> = checked
        .graph
        .nodes
        .iter()
        .map(|n| format!("{}({:?}) -> {}", n.layer, n.args, n.result))
        .collect();
    expect![[r#"
        [
            "dense([Input(0), Param(0), Param(1)]) -> f32[B, 32]",
            "dense([Node(0), Param(2), Param(3)]) -> f32[B, 10]",
        ]
    "#]]
    .assert_debug_eq(&nodes);
    let calls: Vec<String> = checked
        .analysis
        .calls
        .iter()
        .map(|c| {
            let dims: Vec<String> = c.dims.iter().map(|(v, d)| format!("{v}={d}")).collect();
            format!("{} [{}] -> {}", c.layer, dims.join(", "), c.result)
        })
        .collect();
    expect![[r#"
        [
            "dense [B=B, N=64, M=32] -> f32[B, 32]",
            "dense [B=B, N=32, M=10] -> f32[B, 10]",
        ]
    "#]]
    .assert_debug_eq(&calls);
}

#[test]
fn a_broken_call_has_the_error_type_and_reports_once() {
    let out = check_files(&[(
        "main.wse",
        "import std.nn.{dense, relu, softmax};\n\
         model a(x: f16[B, 32]) -> f32[B, 32] { return relu(x); }\n\
         model b(x: f32[B, 4]) -> f32[B, 8] { param w: f32[4, 8]; return softmax(dense(x, w)); }\n\
         model c(x: f32[B, 4]) -> f32[B, 8] { param t: f32[4, 4]; param w: f32[4, 8]; param b: f32[8]; return dense(relu(t), w, b); }\n",
    )]);
    let codes: Vec<&str> = out
        .lines()
        .filter_map(|l| l.split(' ').next())
        .filter(|c| c.starts_with('E'))
        .collect();
    assert_eq!(codes, ["E0402", "E0405", "E0404"], "{out}");
}

/// A layer with scalar inputs (one with a default) and a model calling it as `model`.
fn with_scaled(model: &str) -> String {
    check(&format!(
        "kernel k(n: u32, s: f32, t: u32) {{ task main() {{ }} }}
layer scale(x: f32[B, N], factor: f32, steps: u32 = 4) -> y: f32[B, N] {{
    cost {{ flops = N * steps; weights = 0; activations = 8 * N; }}
    pipelined on [1, 1] where steps > 0 {{ run k(n = N, s = factor, t = steps); }}
}}
const TWICE: f32 = 2.0;
{model}"
    ))
}

#[test]
fn scalar_inputs_are_given_by_name_and_checked() {
    expect![""].assert_eq(&with_scaled(
        "model m(x: f32[B, 8]) -> f32[B, 8] { return scale(scale(x, factor = TWICE), factor = 0.5, steps = 9); }",
    ));
    expect![[r#"
        E0438 main.wse:7:45 `scale(x, factr = 2.0)`: `scale` needs a value for `factor` (no default)
            [missing scalar input]
            + main.wse:2:7 `scale`: layer defined here
            help: give it by name: `factor = ...`
        E0436 main.wse:7:54 `factr`: `scale` has no scalar input `factr`
            [unknown scalar input]
            + main.wse:2:7 `scale`: layer defined here
            help: did you mean `factor`?
    "#]]
    .assert_eq(&with_scaled(
        "model m(x: f32[B, 8]) -> f32[B, 8] { return scale(x, factr = 2.0); }",
    ));
    expect![[r#"
        E0436 main.wse:7:90 `x`: `scale` has no scalar input `x`
            [unknown scalar input]
            + main.wse:2:7 `scale`: layer defined here
            help: `x` is a tensor input: tensors are given by position
    "#]]
    .assert_eq(&with_scaled(
        "model m(x: f32[B, 8]) -> f32[B, 8] { return scale(x, factor = 1.0, steps = 2, steps = 3, x = 1.0); }",
    ));
    expect![[r#"
        E0437 main.wse:7:79 `steps`: scalar input `steps` is given more than once
            [given again]
            + main.wse:7:68 `steps`: first given here
    "#]]
    .assert_eq(&with_scaled(
        "model m(x: f32[B, 8]) -> f32[B, 8] { return scale(x, factor = 1.0, steps = 2, steps = 3); }",
    ));
    expect![[r#"
        E0405 main.wse:7:45 `scale(x, 2.0)`: `scale` takes 1 tensor, but 2 were given
            [wrong number of arguments]
            + main.wse:2:7 `scale`: layer defined here
            help: a scalar input is given by name after the tensors: `factor = ...`
    "#]]
    .assert_eq(&with_scaled(
        "model m(x: f32[B, 8]) -> f32[B, 8] { return scale(x, 2.0); }",
    ));
    expect![[r#"
        E0201 main.wse:7:63 `2`: mismatched types: expected `f32`, found `integer`
            [expected `f32`]
            help: write a float literal such as `2.0`
        E0107 main.wse:7:74 `x`: expected a value, found tensor `x`
            [this is a tensor]
            + main.wse:7:9 `x`: tensor defined here
    "#]]
    .assert_eq(&with_scaled(
        "model m(x: f32[B, 8]) -> f32[B, 8] { return scale(x, factor = 2, steps = x); }",
    ));
}

#[test]
fn scalar_inputs_in_signatures() {
    expect![[r#"
        E0214 main.wse:1:32 `u32`: type `u32` is not allowed for a layer `param` input
            [type not allowed here]
            help: a weight is a tensor; a scalar input is written without `param`
        E0201 main.wse:1:46 `1.5`: mismatched types: expected `u32`, found `float`
            [expected `u32`]
        E0007 main.wse:1:66 `2`: only a scalar input of a layer has a default value
            [default of a tensor]
            help: remove `= ...`: a tensor input is given at every call
    "#]]
    .assert_eq(&check(
        "layer l(x: f32[B, N], param p: u32, q: u32 = 1.5, r: f32[B, N] = 2) -> y: f32[B, N] {
    cost { flops = N * p * q; weights = 0; activations = 0; }
}
",
    ));
}

/// A layer whose output dimension is an expression of a dimension and a scalar input.
fn with_repeat(model: &str) -> String {
    check(&format!(
        "kernel k(n: u32) {{ task main() {{ }} }}
layer repeat(x: f32[B, N], times: u32) -> y: f32[B, times * N - 4] {{
    cost {{ flops = N; weights = 0; activations = 0; }}
    pipelined on [1, 1] {{ run k(n = N); }}
}}
{model}"
    ))
}

#[test]
fn output_dimension_expressions_are_evaluated_at_each_call() {
    // 3 * 8 - 4 = 20, then 2 * 20 - 4 = 36.
    expect![""].assert_eq(&with_repeat(
        "model m(x: f32[B, 8]) -> f32[B, 36] { return repeat(repeat(x, times = 3), times = 2); }",
    ));
    expect![[r#"
        E0444 main.wse:6:60 `repeat(x, times = 2)`: at this call the layer's output dimension `(times * N) - 4` is 0, not a positive size
            [no positive output dimension]
            + main.wse:2:46 `f32[B, times * N - 4]`: the output dimension is written here
        E0445 main.wse:6:90 `repeat(z, times = 2)`: the layer's output dimension `(times * N) - 4` has no value at this call: `N` is not a known size there
            [output dimension not known]
            + main.wse:2:46 `f32[B, times * N - 4]`: the output dimension is written here
    "#]].assert_eq(&with_repeat(
        "model m(x: f32[B, 2], z: f32[B, D]) -> f32[B, 2] { let a = repeat(x, times = 2); let b = repeat(z, times = 2); return x; }",
    ));
}

/// Layers of rank 3 and 2 around `reshape` (docs/language.md §7.1).
fn with_ranks(model: &str) -> String {
    check(&format!(
        "kernel k(n: u32) {{ task main() {{ }} }}
layer id3(x: f32[B, T, D]) -> y: f32[B, T, D] {{
    cost {{ flops = T; weights = 0; activations = 0; }}
    pipelined on [1, 1] {{ run k(n = T); }}
}}
layer id2(x: f32[B, N]) -> y: f32[B, N] {{
    cost {{ flops = N; weights = 0; activations = 0; }}
    pipelined on [1, 1] {{ run k(n = N); }}
}}
{model}"
    ))
}

#[test]
fn reshape_relabels_a_layers_result_and_keeps_its_feature_count() {
    expect![""].assert_eq(&with_ranks(
        "model m(x: f32[B, 4, 6]) -> f32[B, 2, 12] { return id3(reshape(id2(reshape(id3(x), 24)), 2, 12)); }",
    ));
    expect![[r#"
        E0454 main.wse:10:53 `reshape(id3(x), 20)`: `reshape` cannot make `f32[B, 20]` from `f32[B, 4, 6]`: they hold different numbers of features
            [`f32[B, 4, 6]` is not `f32[B, 20]`]
            note: a reshape relabels a sample's features in row-major order; it keeps their number
    "#]]
    .assert_eq(&with_ranks(
        "model m(x: f32[B, 4, 6]) -> f32[B, 20] { return id2(reshape(id3(x), 20)); }",
    ));
}

#[test]
fn reshape_takes_a_layers_result_a_tensor_and_dimensions() {
    expect![[r#"
        E0455 main.wse:10:62 `x`: `reshape` relabels a layer's result for the layer that reads it, not a model input
            [not a layer's result read by a layer]
            help: declare the model's input or result, or the parameter, with the shape wanted: its data is the same
        E0455 main.wse:10:78 `reshape(id3(x), 24)`: `reshape` relabels a layer's result for the layer that reads it, not the model's result
            [not a layer's result read by a layer]
            help: declare the model's input or result, or the parameter, with the shape wanted: its data is the same
    "#]]
    .assert_eq(&with_ranks(
        "model m(x: f32[B, 4, 6]) -> f32[B, 24] { let a = id2(reshape(x, 24)); return reshape(id3(x), 24); }",
    ));
    expect![[r#"
        E0456 main.wse:10:54 `reshape(id3(x))`: `reshape` takes a tensor and its new feature dimensions
            [not a reshape]
            help: write `reshape(x, 8, 16)` for `f32[B, 8, 16]`: the tensor, then its feature dimensions
        E0456 main.wse:10:100 `0`: `reshape` takes positive dimensions
            [not a reshape]
            help: write `reshape(x, 8, 16)` for `f32[B, 8, 16]`: the tensor, then its feature dimensions
        E0456 main.wse:10:136 `n`: `reshape` takes no named arguments
            [not a reshape]
            help: write `reshape(x, 8, 16)` for `f32[B, 8, 16]`: the tensor, then its feature dimensions
    "#]]
    .assert_eq(&with_ranks(
        "model m(x: f32[B, 4, 6]) -> f32[B, 24] { let a = id2(reshape(id3(x))); let b = id2(reshape(id3(x), 0)); return id2(reshape(id3(x), 24, n = 1)); }",
    ));
}
