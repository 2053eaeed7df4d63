//! Tests: the `run` item (E043x).

use expect_test::expect;

use super::*;

fn with_run(run: &str) -> String {
    let end = DIGITS.find("run digits").expect("run");
    check(&format!("{}{run}", &DIGITS[..end]))
}

#[test]
fn e0430_not_a_model_and_e0435_second_run() {
    let out = with_run("run dense { }\nrun digitz { }\n");
    expect![[r#"
        E0430 main.wse:44:5 `dense`: `dense` is a layer, not a model
            [expected a model]
            + main.wse:20:7 `dense`: layer defined here
        E0435 main.wse:45:1 `run digitz { }`: a file may contain at most one `run` item
            [second `run` item]
            + main.wse:44:1 `run dense { }`: first `run` item
        E0105 main.wse:45:5 `digitz`: cannot find model `digitz` in this scope
            [not found in this scope]
            help: did you mean `digits`?
    "#]]
    .assert_eq(&out);
}

#[test]
fn e0431_e0432_inputs() {
    let out = with_run("run digits { input y = \"y.npy\"; }\n");
    expect![[r#"
        E0432 main.wse:44:5 `digits`: the run configuration does not give input `x` of model `digits`
            [missing input]
            help: add `input x = "x.npy";`
        E0431 main.wse:44:20 `y`: model `digits` has no input `y`
            [unknown input]
    "#]]
    .assert_eq(&out);
    let out = with_run("run digits { input x = \"a.npy\"; input x = \"b.npy\"; }\n");
    expect![[r#"
        E0432 main.wse:44:39 `x`: input `x` is given more than once
            [given again here]
            + main.wse:44:20 `x`: first given here
    "#]]
    .assert_eq(&out);
}

#[test]
fn e0433_e0434_settings() {
    let out = with_run(
        "run digits { input x = \"x.npy\"; outptu = \"o.npy\"; mode = \"fast\"; batch = 0; target = 3; batch = 2; }\n",
    );
    expect![[r#"
        E0433 main.wse:44:33 `outptu`: unknown run setting `outptu`
            [expected `output`, `labels`, `target`, `mode`, `batch` or `systems`]
            help: did you mean `output`?
        E0434 main.wse:44:58 `"fast"`: invalid value for `mode`: expected "pipelined", "streaming" or "auto"
            [invalid value]
        E0434 main.wse:44:74 `0`: invalid value for `batch`: expected a positive integer
            [invalid value]
        E0434 main.wse:44:86 `3`: invalid value for `target`: expected a string: "dev", "wse2", "wse3" or a path to a target .toml
            [invalid value]
        E0433 main.wse:44:89 `batch`: run setting `batch` is given more than once
            [given again here]
            + main.wse:44:66 `batch`: first given here
    "#]]
    .assert_eq(&out);
}
