//! Tests: a layer's `train as` clause (docs/language.md §6.4) — E0218, E0451–E0453, and the
//! calls a clause that checks gives.

use expect_test::expect;

use super::*;
use crate::{TrainArg, TrainScalar, item_index, train_as};

const COST: &str = "cost { flops = N; weights = 0; activations = N; }";

/// `layer double_dense(...) train as CLAUSE { cost }`, importing std.nn's dense and relu.
fn double_dense(clause: &str) -> String {
    format!(
        "import std.nn.{{dense, relu, pack_qkv}};\n\
         layer double_dense(x: f32[B, N], param w1: f32[N, H], param b1: f32[H], param w2: f32[H, M], param b2: f32[M]) -> y: f32[B, M]\n    \
         train as {clause} {{ {COST} }}\n"
    )
}

/// [`double_dense`] with each of `clauses`, checked: every diagnostic, in order.
fn checked(clauses: &[&str]) -> String {
    clauses.iter().map(|c| check(&double_dense(c))).collect()
}

#[test]
fn a_clause_of_layers_that_fit_checks_clean() {
    let out = check(&double_dense("dense(relu(dense(x, w1, b1)), w2, b2)"));
    expect![[""]].assert_eq(&out);
}

#[test]
fn e0451_a_callee_that_is_no_layer() {
    let out = check(&double_dense("dense(dens(x, w1, b1), w2, b2)"));
    expect![[r#"
        E0451 main.wse:3:20 `dens`: `dens` in a `train as` clause is not a layer of this module or its imports
            [expected a layer]
            note: `train as` gives the layer calls pipelined training runs in the layer's place
    "#]].assert_eq(&out);
}

#[test]
fn e0452_arguments_that_are_no_input_or_do_not_fit() {
    let out = checked(&[
        "dense(dense(h, w1, b1), w2, b2)",
        "dense(dense(x, x, b1), w2, b2)",
        "dense(dense(x, w1), w2, b2)",
        "dense(relu(w1), w2, b2)",
        "dense(dense(x, w1, b1, eps = 1.0), w2, b2)",
        "x",
        "dense(dense(x, w1, b1), w2, 1 + 2)",
    ]);
    expect![[r#"
        E0452 main.wse:3:26 `h`: `h` is not a tensor input of `double_dense`
            [in the `train as` clause]
            note: `train as` gives the layer calls pipelined training runs in the layer's place
        E0452 main.wse:3:29 `x`: `w` of `dense` is a weight: it takes a `param` input of the layer
            [in the `train as` clause]
            note: `train as` gives the layer calls pipelined training runs in the layer's place
        E0452 main.wse:3:20 `dense`: `dense` takes 3 tensors, but this call gives 2
            [in the `train as` clause]
            note: `train as` gives the layer calls pipelined training runs in the layer's place
        E0452 main.wse:3:25 `w1`: `x` of `relu` is an activation, not a weight
            [in the `train as` clause]
            note: `train as` gives the layer calls pipelined training runs in the layer's place
        E0452 main.wse:3:37 `eps`: `dense` has no scalar input `eps`
            [in the `train as` clause]
            note: `train as` gives the layer calls pipelined training runs in the layer's place
        E0452 main.wse:3:14 `x`: a `train as` clause is a layer call, not one of the layer's inputs
            [in the `train as` clause]
            note: `train as` gives the layer calls pipelined training runs in the layer's place
        E0452 main.wse:3:42 `1 + 2`: a `train as` clause computes with the layer's tensor inputs and layer calls
            [in the `train as` clause]
            note: `train as` gives the layer calls pipelined training runs in the layer's place
    "#]].assert_eq(&out);
}

#[test]
fn e0453_shapes_that_do_not_fit() {
    let out = checked(&[
        "dense(x, w2, b2)",
        "dense(x, w1, b1)",
        "pack_qkv(x, x, x, heads = 1)",
    ]);
    expect![[r#"
        E0453 main.wse:3:23 `w2`: `dense` takes `f32[N, M]` for `w`, but this is `f32[H, M]`
            [`f32[H, M]`]
            note: `train as` gives the layer calls pipelined training runs in the layer's place
        E0453 main.wse:3:14 `dense(x, w1, b1)`: `double_dense`'s `train as` clause gives `f32[B, H]`, but `double_dense` gives `f32[B, M]`
            [`f32[B, H]`]
            note: `train as` gives the layer calls pipelined training runs in the layer's place
        E0453 main.wse:3:14 `pack_qkv(x, x, x, heads = 1)`: `double_dense`'s `train as` clause gives `f32[B, 3 * N]`, but `double_dense` gives `f32[B, M]`
            [`f32[B, 3 * N]`]
            note: `train as` gives the layer calls pipelined training runs in the layer's place
    "#]].assert_eq(&out);
}

#[test]
fn e0218_a_clause_that_leads_back_to_its_layer() {
    let out = check(&format!(
        "layer me(x: f32[B, N]) -> y: f32[B, N]\n    train as me(x) {{ {COST} }}\n"
    ));
    expect![[r#"
        E0218 main.wse:2:14 `me`: `me`'s `train as` clause calls `me` itself
            [leads back to the layer]
            note: `train as` gives the layer calls pipelined training runs in the layer's place
    "#]]
    .assert_eq(&out);
}

/// std.nn's fused attention trains as `attention_qkv(pack_qkv(q, k, v, heads = heads), ...)`:
/// the pack first, on the three inputs; the attention on its result, with the attention's
/// scalars by name.
#[test]
fn the_fused_attention_trains_as_two_calls() {
    let (db, _, _) = load(&[("main.wse", "import std.nn.{attention};\n")]);
    let nn = crate::db::lookup_file(&db, Path::new("<std>/nn.wse")).expect("std.nn loaded");
    let item = item_index(&db, nn)
        .iter()
        .copied()
        .find(|i| i.name(&db) == "attention")
        .expect("attention");
    let clause = train_as(&db, item).expect("a clause that checks");
    let names: Vec<&str> = clause
        .calls
        .iter()
        .map(|c| c.layer.name(&db).as_str())
        .collect();
    assert_eq!(names, ["pack_qkv", "attention_qkv"]);
    let inputs = [TrainArg::Input(0), TrainArg::Input(1), TrainArg::Input(2)];
    assert_eq!(clause.calls[0].args, inputs);
    assert_eq!(clause.calls[1].args, [TrainArg::Call(0)]);
    let given = |k: usize| -> Vec<(String, TrainScalar)> { clause.calls[k].scalars.clone() };
    let own = |n: &str| (n.to_string(), TrainScalar::Input(n.to_string()));
    assert_eq!(given(0), [own("heads")]);
    assert_eq!(given(1), [own("heads"), own("context"), own("causal")]);
}
