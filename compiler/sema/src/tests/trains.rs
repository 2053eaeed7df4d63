//! Tests: the `train` item (E1109–E1112 and E1120, and E1106/E1107 at its settings).

use expect_test::expect;

use super::*;

fn with_train(train: &str) -> String {
    let end = DIGITS.find("run digits").expect("run");
    check(&format!("{}{train}", &DIGITS[..end]))
}

#[test]
fn a_complete_train_item_is_clean() {
    let out = with_train(
        "train digits {\n    input x = \"x.npy\";\n    labels = \"y.npy\";\n    loss = \"cross_entropy\";\n    optimizer = \"adam\";\n    beta1 = 0.9;\n    beta2 = 0.999;\n    eps = 1e-8;\n    lr = 0.01;\n    steps = 50;\n    batch = 16;\n    seed = 1;\n    shuffle = false;\n    target = \"wse2\";\n    mode = \"streaming\";\n    out_dir = \"out/train\";\n}\n",
    );
    expect![[""]].assert_eq(&out);
}

#[test]
fn e1109_unknown_and_repeated_settings_and_e0432_a_missing_input() {
    let out = with_train("train digits { lr = 0.1; learning_rate = 0.1; lr = 0.2; }\n");
    expect![[r#"
        E0432 main.wse:44:7 `digits`: the training configuration does not give input `x` of model `digits`
            [missing input]
            help: add `input x = "x.npy";`
        E1109 main.wse:44:26 `learning_rate`: unknown train setting `learning_rate`
            [not a training setting]
            note: a `train` item takes `input`, `labels`, `loss`, `optimizer`, `lr`, `momentum`, `beta1`, `beta2`, `eps`, `steps`, `epochs`, `batch`, `micro_batch`, `recompute`, `seed`, `shuffle`, `target`, `mode`, `out_dir`
        E1109 main.wse:44:47 `lr`: train setting `lr` is given more than once
            [given again here]
            + main.wse:44:16 `lr`: first given here
    "#]]
    .assert_eq(&out);
}

#[test]
fn e1110_values_of_the_wrong_kind() {
    let out = with_train(
        "train digits { input x = \"x.npy\"; optimizer = \"rmsprop\"; steps = 0; shuffle = 1; lr = \"fast\"; }\n",
    );
    expect![[r#"
        E1110 main.wse:44:47 `"rmsprop"`: invalid value for `optimizer`: expected "sgd" or "adam"
            [invalid value]
        E1110 main.wse:44:66 `0`: invalid value for `steps`: expected a positive integer
            [invalid value]
        E1110 main.wse:44:79 `1`: invalid value for `shuffle`: expected `true` or `false`
            [invalid value]
        E1110 main.wse:44:87 `"fast"`: invalid value for `lr`: expected a number
            [invalid value]
    "#]]
    .assert_eq(&out);
}

#[test]
fn e1120_a_recompute_choice_that_is_not_one() {
    let out = with_train(
        "train digits { input x = \"x.npy\"; recompute = \"sometimes\"; micro_batch = 4; }\n",
    );
    expect![[r#"
        E1120 main.wse:44:47 `"sometimes"`: invalid value for `recompute`: expected "auto", "never" or "always"
            [not a recomputation choice]
            help: `"auto"` recomputes activations that do not fit the SRAM when that is estimated faster than micro-batches, `"never"` keeps them all (micro-batches when they do not fit), `"always"` recomputes (docs/running.md, "How a training step runs")
    "#]].assert_eq(&out);
}

#[test]
fn e1106_e1107_settings_out_of_range_at_their_values() {
    let out = with_train(
        "train digits { input x = \"x.npy\"; lr = -0.1; momentum = 1; }\ntrain digits { eps = 0; optimizer = \"adam\"; }\n",
    );
    expect![[r#"
        E1106 main.wse:44:40 `-0.1`: the learning rate -0.1 is not a finite positive number
            [learning rate out of range]
        E1107 main.wse:44:57 `1`: momentum = 1 is out of range: it must be at least 0 and below 1
            [out of range]
        E1111 main.wse:45:1 `train digits { eps = 0; optimizer = "ada`: a file may contain at most one `train` item
            [second `train` item]
            + main.wse:44:1 `train digits { input x = "x.npy"; lr = -`: first `train` item
        E0432 main.wse:45:7 `digits`: the training configuration does not give input `x` of model `digits`
            [missing input]
            help: add `input x = "x.npy";`
        E1107 main.wse:45:22 `0`: eps = 0 is out of range: it must be a finite positive number
            [out of range]
    "#]]
    .assert_eq(&out);
}

#[test]
fn e1112_settings_that_exclude_each_other() {
    let out =
        with_train("train digits { input x = \"x.npy\"; steps = 5; epochs = 2; beta1 = 0.8; }\n");
    expect![[r#"
        E1112 main.wse:44:46 `epochs`: `steps` and `epochs` both say how long to train: give one of them
            [conflicting setting]
            + main.wse:44:35 `steps`: the other one
        E1112 main.wse:44:58 `beta1`: `beta1` is not a setting of the optimizer `sgd`
            [conflicting setting]
            + main.wse:44:1 `train digits { input x = "x.npy"; steps `: no `optimizer` given: SGD with momentum
    "#]]
    .assert_eq(&out);
    let out =
        with_train("train digits { input x = \"x.npy\"; optimizer = \"adam\"; momentum = 0.9; }\n");
    expect![[r#"
        E1112 main.wse:44:55 `momentum`: `momentum` is not a setting of the optimizer `adam`
            [conflicting setting]
            + main.wse:44:35 `optimizer`: the optimizer chosen here
    "#]]
    .assert_eq(&out);
}
