//! std.nn's `dense_straight` (issue #23), proven by execution: a dense whose result leaves on
//! the side opposite its input (`dense_straight_tile`: x in at the west edge split over the
//! rows, each column's block of it down the column's bus, y out of the east edge split over
//! the same rows). Its results are within 1e-5 of a float64 NumPy reference
//! (`tests/reference/straight.py`) on regions held to shapes that exercise the column bus
//! (two and one columns a row; two and four rows a column, whose rows take turns on the bus;
//! one column), outputs split unevenly over the rows, one row (no bus) and the fused relu
//! and gelu; a chain of three maps straight on — every consumer east of its producer, on the
//! same rows — where the same chain of `dense` turns at every layer, and so does a chain
//! whose stages have more columns than rows, fewer, and one.

use std::path::Path;

mod support;
use support::{off_reference, read_f32, reference_data, wsel_ok};

/// std.nn's layer `name` (`dense_straight` or a fused twin), as stdlib/nn.wse writes it.
fn std_layer(name: &str) -> &'static str {
    const NN: &str = include_str!("../../../stdlib/nn.wse");
    let start = NN
        .find(&format!("\nlayer {name}("))
        .expect("std.nn defines the layer");
    let len = NN[start..].find("\n}\n").expect("the layer's end");
    &NN[start + 1..start + len + 3]
}

/// std.nn's `dense_straight` applying `act` (0 none, 1 relu, 2 gelu: its fused twins) as the
/// layer `lin`, its implementation held to the regions satisfying `held` beside its own
/// conditions: a shape the std layer does not allow fails to map.
fn held_layer(lin: &str, act: u32, held: &str) -> String {
    let name = match act {
        1 => "dense_straight_relu",
        2 => "dense_straight_gelu",
        _ => "dense_straight",
    };
    std_layer(name)
        .replacen(&format!("layer {name}("), &format!("layer {lin}("), 1)
        .replacen(" where ", &format!(" where {held}, "), 1)
}

/// A model of one layer `lin` on `inputs → outputs` features: std.nn's `dense_straight`
/// held to regions satisfying `held`, applying `act` (0 none, 1 relu, 2 gelu).
fn held_program(inputs: u32, outputs: u32, held: &str, act: u32) -> String {
    format!(
        "import std.nn.{{dense_straight_tile}};

{}
model m(x: f32[B, {inputs}]) -> f32[B, {outputs}] {{
    param w1: f32[{inputs}, {outputs}] from \"w1.npy\";
    param b1: f32[{outputs}] from \"b1.npy\";
    return lin(x, w1, b1);
}}
",
        held_layer("lin", act, held)
    )
}

/// The model line and `param` lines of the reference's `chain` (16 → 32 → 24 → 16).
fn chain_head() -> String {
    let mut src = String::from("model m(x: f32[B, 16]) -> f32[B, 16] {\n");
    for (i, (n, m)) in [(16, 32), (32, 24), (24, 16)].iter().enumerate() {
        let i = i + 1;
        src += &format!("    param w{i}: f32[{n}, {m}] from \"w{i}.npy\";\n");
        src += &format!("    param b{i}: f32[{m}] from \"b{i}.npy\";\n");
    }
    src
}

/// A chain of three `layer` + relu over 16 → 32 → 24 → 16 features (the reference's `chain`).
fn chain_program(layer: &str) -> String {
    let mut src = format!("import std.nn.{{{layer}, relu}};\n\n") + &chain_head();
    src += &format!("    let h1 = relu({layer}(x, w1, b1));\n");
    src += &format!("    let h2 = relu({layer}(h1, w2, b2));\n");
    src + &format!("    return relu({layer}(h2, w3, b3));\n}}\n")
}

/// Runs `wsel VERB m.wse --mode pipelined --target TARGET --copies 1` with `extra` flags in
/// `dir`: its output.
fn pipelined(dir: &Path, verb: &str, target: &str, extra: &[&str]) -> std::process::Output {
    let mut args = vec![verb, "m.wse", "--mode", "pipelined", "--target", target];
    args.extend(["--copies", "1"]);
    args.extend(extra);
    wsel_ok(dir, &args)
}

/// The placed layers of `wsel map --format json` on `target`, in order.
fn placed(dir: &Path, target: &str) -> Vec<serde_json::Value> {
    let out = pipelined(dir, "map", target, &["--format", "json"]);
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).expect("the placement");
    json["layers"].as_array().expect("placed layers").clone()
}

/// Runs the model on `target` in one copy (its 8 samples one after another through one
/// region): the result's values.
fn run(dir: &Path, target: &str) -> Vec<f32> {
    let io = ["--no-cache", "--input", "x=x.npy", "--output", "y.npy"];
    pipelined(dir, "run", target, &io);
    read_f32(&dir.join("y.npy"))
}

/// The physical rectangle of a placed layer: x, y, width, height.
fn rect(layer: &serde_json::Value) -> [u64; 4] {
    let r = &layer["rect"];
    ["x", "y", "width", "height"].map(|k| r[k].as_u64().expect("a rectangle"))
}

/// Where `q` lies against `p`: "east" when its west side touches `p`'s east side along the
/// same rows of the fabric (the same y and height), "south" likewise below `p` on the same
/// columns, `None` otherwise.
fn step(p: [u64; 4], q: [u64; 4]) -> Option<&'static str> {
    let [px, py, pw, ph] = p;
    let [qx, qy, qw, qh] = q;
    if qx == px + pw && qy == py && qh == ph {
        Some("east")
    } else if qy == py + ph && qx == px && qw == pw {
        Some("south")
    } else {
        None
    }
}

/// The steps from each placed layer to the next (see [`step`]).
fn steps(layers: &[serde_json::Value]) -> Vec<Option<&'static str>> {
    let rects: Vec<[u64; 4]> = layers.iter().map(rect).collect();
    rects.windows(2).map(|w| step(w[0], w[1])).collect()
}

/// Asserts that the placed `layers` lie straight on from one another, all the same way, and
/// that the model in `dir` computes the reference's result on `dev` within 1e-5.
fn runs_straight_and_right(dir: &Path, layers: &[serde_json::Value]) {
    let straight = steps(layers);
    assert!(
        straight.iter().all(|s| s.is_some() && *s == straight[0]),
        "{straight:?}"
    );
    let e = off_reference(dir, &run(dir, "dev"));
    assert!(e <= 1e-5, "{e}");
}

/// One layer held to regions of each shape, on `dev`: `k2` two columns a row (2 × 4: the
/// column's owner is row c / 2), `uneven` 10 outputs over 4 rows (3, 3, 2, 2) on 4 × 4, `wide`
/// 7 outputs over 3 rows on 3 × 6 with relu, `row` one row of 4 (no column bus) with gelu,
/// `j2` two rows a column (4 × 2: rows 2c and 2c + 1 take turns on column c's bus), `j4`
/// four rows a column with 12 outputs over 8 rows (2, 2, 2, 2, 1, 1, 1, 1) and relu on 8 × 2,
/// `col` one column of 4 turns with gelu — each within 1e-5 of the reference (16–32 float32
/// products, gelu's float32 tanh: ~1e-6). The last three need `R % C == 0` in std.nn's
/// conditions, which the held layer keeps.
#[test]
fn a_straight_dense_matches_numpy_on_every_shape() {
    let cases = [
        ("k2", 16, 16, "R == 2, C == 4", 0, (2, 4)),
        ("uneven", 16, 10, "R == 4, C == 4", 0, (4, 4)),
        ("wide", 24, 7, "R == 3, C == 6", 1, (3, 6)),
        ("row", 16, 5, "R == 1, C == 4", 2, (1, 4)),
        ("j2", 16, 16, "R == 4, C == 2", 0, (4, 2)),
        ("j4", 32, 12, "R == 8, C == 2", 1, (8, 2)),
        ("col", 16, 8, "R == 4, C == 1", 2, (4, 1)),
    ];
    for (name, inputs, outputs, held, act, (rows, cols)) in cases {
        let dir = reference_data("straight.py", name);
        let program = held_program(inputs, outputs, held, act);
        std::fs::write(dir.join("m.wse"), program).expect("write the model");
        let layers = placed(&dir, "dev");
        let shape = (layers[0]["rows"].as_u64(), layers[0]["cols"].as_u64());
        assert_eq!(shape, (Some(rows), Some(cols)), "{name}");
        let e = off_reference(&dir, &run(&dir, "dev"));
        assert!(e <= 1e-5, "{name}: {e}");
    }
}

/// The reference's `chain` (16 → 32 → 24 → 16, relu after each) as std.nn's
/// `dense_straight_relu` held to 4 × 8 (two columns a row), 4 × 2 (two rows a column) and
/// 4 × 1 (one column of four turns): on `wse2` each region lies straight on from the one
/// before, and on `dev` the result is within 1e-5 of the reference.
#[test]
fn a_chain_of_wide_and_narrow_straight_denses_runs_straight_on() {
    let dir = reference_data("straight.py", "chain");
    let holds = ["R == 4, C == 8", "R == 4, C == 2", "R == 4, C == 1"];
    let mut src = String::from("import std.nn.{dense_straight_tile};\n\n");
    for (i, held) in holds.iter().enumerate() {
        src += &held_layer(&format!("lin{}", i + 1), 1, held);
        src += "\n";
    }
    src += &chain_head();
    src += "    return lin3(lin2(lin1(x, w1, b1), w2, b2), w3, b3);\n}\n";
    std::fs::write(dir.join("m.wse"), src).expect("write the model");
    let layers = placed(&dir, "wse2");
    let shapes: Vec<_> = layers
        .iter()
        .map(|l| (l["rows"].as_u64(), l["cols"].as_u64()))
        .collect();
    assert_eq!(
        shapes,
        [(Some(4), Some(8)), (Some(4), Some(2)), (Some(4), Some(1))]
    );
    runs_straight_and_right(&dir, &layers);
}

/// Three `dense_straight` + relu layers map on `wse2` (room enough that nothing folds) as
/// three fused stages (`dense_straight_relu`) lying straight on, each east of the one before
/// on the same rows of the fabric (or each south on the same columns, transposed), and
/// compute the reference's result on `dev` within 1e-5 (where the search's sizes fill the
/// fabric's width and the chain folds). The same chain of `dense` does not lie straight (its
/// regions turn the chain at every layer), so the check of the straight chain can fail.
#[test]
fn a_chain_of_straight_denses_runs_straight_on() {
    let dir = reference_data("straight.py", "chain");
    std::fs::write(dir.join("m.wse"), chain_program("dense_straight")).expect("write the model");
    let layers = placed(&dir, "wse2");
    let name = |l: &serde_json::Value| l["name"].as_str().unwrap_or_default().to_string();
    let names: Vec<String> = layers.iter().map(name).collect();
    assert_eq!(
        names,
        [
            "dense_straight#1+relu#1",
            "dense_straight#2+relu#2",
            "dense_straight#3+relu#3"
        ]
    );
    runs_straight_and_right(&dir, &layers);

    std::fs::write(dir.join("m.wse"), chain_program("dense")).expect("write the model");
    let turning = steps(&placed(&dir, "wse2"));
    assert!(
        !turning.iter().all(|s| s.is_some() && *s == turning[0]),
        "{turning:?}"
    );
}
