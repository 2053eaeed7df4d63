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
