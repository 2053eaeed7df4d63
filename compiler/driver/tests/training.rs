//! `wsel train` against the independent NumPy reference trainer (`tests/reference/train.py`):
//! the digits MLP (examples/digits/train.wse) from the same initial weights, in the same batch
//! order, for 50 steps with SGD (momentum 0.9; the file's `train` item's settings) and with
//! Adam (flags over the item), in weight-streaming mode.
//!
//! Tolerance. The fabric computes in float32, the reference in float64. Each step's loss and
//! gradients are sums of at most 64 products (a dense layer's dot products) and of at most
//! 16 samples (the batch sums), each rounded at float32's unit roundoff u = 6e-8, so a
//! gradient's relative error is of order sqrt(n)·u ≈ 5e-7 (at most n·u ≈ 4e-6); the
//! optimizer at these learning rates does not amplify it over 50 steps (measured: losses
//! within 6e-7 relative, weights within 4e-7 absolute, for |w| up to 1.3). The tests allow
//! 1e-5 relative on every loss and 1e-5 absolute on every weight: ten times the worst-case
//! bound, while a change of seed (another batch order) moves the losses by more than 1e-2,
//! which the last check shows the comparison would catch.

use std::path::Path;
use std::process::Command;

mod support;
use support::transformer::{
    SMALL_SGD, TINY_GPT, TINY_GPT_SGD, composed_tiny_gpt, losses_of_csv, read_npy,
    reference_losses, small_train_item, transformer_trains_like_numpy, wsel_train_file,
};
use support::{repo_root, temp_dir};

const NAMES: [&str; 6] = ["w1", "b1", "w2", "b2", "w3", "b3"];

fn wsel_train(out: &Path, args: &[&str]) -> std::process::Output {
    wsel_train_file(Path::new("examples/digits/train.wse"), out, args)
}

fn reference(out: &Path, args: &[&str]) {
    let status = Command::new("python3")
        .current_dir(repo_root())
        .arg("tests/reference/train.py")
        .arg(out)
        .args(args)
        .status()
        .expect("python3 runs (pip install -r requirements.txt)");
    assert!(status.success(), "the reference trainer failed");
}

/// Checks wsel's outputs in `ours` against the reference's in `theirs`: every step's loss
/// within 1e-5 relative, every final weight within 1e-5 absolute. wsel's losses.
fn outputs_match(ours: &Path, theirs: &Path) -> Vec<f64> {
    let losses = losses_of_csv(&ours.join("loss.csv"));
    let reference = read_npy(&theirs.join("losses.npy"));
    assert_eq!(losses.len(), reference.len());
    for (step, (a, b)) in losses.iter().zip(&reference).enumerate() {
        assert!(
            (a - b).abs() <= 1e-5 * b.abs(),
            "step {}: loss {a} on the fabric, {b} in the reference",
            step + 1
        );
    }
    for n in NAMES {
        let a = read_npy(&ours.join(format!("{n}.npy")));
        let b = read_npy(&theirs.join(format!("{n}.npy")));
        assert_eq!(a.len(), b.len());
        let worst = a
            .iter()
            .zip(&b)
            .map(|(x, y)| (x - y).abs())
            .fold(0.0, f64::max);
        assert!(worst <= 1e-5, "{n}: {worst} from the reference");
    }
    losses
}

/// Trains with wsel (with `flags` over the file's `train` item) and with the reference (with
/// `args`, the same settings in full); checks every loss and every final weight. What wsel
/// printed.
fn matches_reference(name: &str, flags: &[&str], args: &[&str]) -> std::process::Output {
    let out = temp_dir(name);
    let run = wsel_train(&out, flags);
    assert!(
        run.status.success(),
        "wsel train failed: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    let ref_dir = out.join("reference");
    reference(&ref_dir, args);
    let ours = outputs_match(&out, &ref_dir);
    let steps: usize = args[args.iter().position(|a| *a == "--steps").expect("steps") + 1]
        .parse()
        .expect("a step count");
    assert_eq!(ours.len(), steps);
    assert!(
        ours[steps - 1] < ours[0] * if steps >= 50 { 0.7 } else { 0.95 },
        "the loss goes down: {ours:?}"
    );
    // Another batch order gives other losses: the comparison above can fail.
    let other = out.join("other-seed");
    let mut shifted: Vec<&str> = args.to_vec();
    let seed = shifted.iter().position(|a| *a == "--seed").expect("a seed") + 1;
    shifted[seed] = "2";
    reference(&other, &shifted);
    let moved = read_npy(&other.join("losses.npy"));
    assert!(
        ours.iter().zip(&moved).any(|(a, b)| (a - b).abs() > 1e-2),
        "another seed should change the losses"
    );
    run
}

/// The settings come from the `train` item of examples/digits/train.wse alone.
#[test]
fn sgd_with_momentum_matches_the_numpy_reference_for_50_steps() {
    matches_reference(
        "sgd",
        &[],
        &[
            "--optimizer",
            "sgd",
            "--momentum",
            "0.9",
            "--lr",
            "0.05",
            "--steps",
            "50",
            "--batch",
            "16",
            "--seed",
            "1",
        ],
    );
}

#[test]
fn adam_matches_the_numpy_reference_for_50_steps() {
    let args = [
        "--optimizer",
        "adam",
        "--lr",
        "0.005",
        "--steps",
        "50",
        "--batch",
        "16",
        "--seed",
        "1",
    ];
    // The flags override the item's optimizer and learning rate.
    matches_reference("adam", &args[..4], &args);
}

/// A batch of 16 as 4 micro-batches of 4, their gradients accumulated in the store: the
/// reference trains with batches of 16. Ten steps keep the debug build's time down.
#[test]
fn micro_batches_match_the_reference_with_the_same_global_batch() {
    let args = [
        "--optimizer",
        "sgd",
        "--momentum",
        "0.9",
        "--lr",
        "0.05",
        "--steps",
        "10",
        "--batch",
        "16",
        "--seed",
        "1",
    ];
    matches_reference("micro", &["--steps", "10", "--micro-batch", "4"], &args);
}

/// On `dev` (4 KiB per PE), where w1's gradient (64 × 32, 8 KiB) fits only because
/// `dense_grad_w` makes it a row at a time: ten steps with each optimizer, as the reference.
#[test]
fn digits_trains_on_dev_like_the_reference() {
    for (name, optimizer) in [
        ("dev-sgd", &["sgd", "--momentum", "0.9", "--lr", "0.05"][..]),
        ("dev-adam", &["adam", "--lr", "0.005"][..]),
    ] {
        let steps = ["--steps", "10", "--batch", "16", "--seed", "1"];
        let args = [&["--optimizer"][..], optimizer, &steps].concat();
        let flags = [&["--target", "dev"][..], &args].concat();
        matches_reference(name, &flags, &args);
    }
}

/// Pipelined training (docs/running.md, "Pipelined training"): every layer on its own region
/// of `dev`, the backward on the forward's PEs, the optimizer run by the PEs on the weights in
/// their SRAM (SGD with momentum 0.9, and Adam), the trained weights read from the final SRAM
/// — 50 steps each, as the reference. The tolerance is the streaming tests' (see the top):
/// the fabric's sums are float32 in another order (a dense layer's dot products split over
/// the region's rows and columns), within the same bound; measured: losses within 5e-7
/// relative, weights within 9e-7.
#[test]
fn digits_trains_pipelined_on_dev_like_the_reference() {
    pipelined_matches_reference(
        "pipelined",
        &["--steps", "50", "--batch", "16", "--seed", "1"],
    );
}

/// Pipelined training of the digits on `dev` with SGD-momentum (lr 0.05) and with Adam (lr
/// 0.005), each with `steps` (the steps, the batch and the seed), matching the reference: the
/// two runs' outputs.
fn pipelined_matches_reference(name: &str, steps: &[&str]) -> Vec<std::process::Output> {
    let sgd = ["sgd", "--momentum", "0.9", "--lr", "0.05"];
    let adam = ["adam", "--lr", "0.005"];
    [("sgd", &sgd[..]), ("adam", &adam[..])]
        .into_iter()
        .map(|(kind, optimizer)| {
            let args = [&["--optimizer"][..], optimizer, steps].concat();
            let flags = [&["--target", "dev", "--mode", "pipelined"][..], &args].concat();
            matches_reference(&format!("{name}-{kind}"), &flags, &args)
        })
        .collect()
}

/// Micro-batches in pipelined training (docs/running.md): a batch of 288 keeps more
/// activations for the backward than a PE of `dev` holds, so every step runs three
/// micro-batches of 96 (the largest divisor that fits; 144 does not) through the forward and
/// backward programs, the first two keeping their gradients on the PEs (the second adding to
/// them), the last adding its own and updating. The gradient is the whole batch's, so the run
/// matches the reference trained on whole batches of 288, with each optimizer, within the
/// tolerance of the top (the sums of a micro-batch end before the next one's start: one more
/// reordering of float32 sums); a run that updated after every micro-batch would not.
#[test]
fn a_batch_too_big_for_the_sram_trains_pipelined_in_micro_batches() {
    let steps = ["--steps", "6", "--batch", "288", "--seed", "1"];
    for run in pipelined_matches_reference("micro", &steps) {
        let stderr = String::from_utf8_lossy(&run.stderr);
        let stdout = String::from_utf8_lossy(&run.stdout);
        assert!(stderr.contains("running micro-batches of 96"), "{stderr}");
        assert!(
            stdout.contains("6 steps of 288 samples in micro-batches of 96"),
            "{stdout}"
        );
    }
}

/// The table of pipelined training: the forward and backward programs' cycles, the update's
/// (the longest update task of any PE, which runs inside the backward program) and the step's
/// (the two programs), the same every step since nothing in them depends on the data.
#[test]
fn pipelined_training_reports_forward_backward_and_update_cycles() {
    let out = temp_dir("pipelined-report");
    let flags = ["--target", "dev", "--mode", "pipelined", "--steps", "2"];
    let run = wsel_train(&out, &flags);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let csv = std::fs::read_to_string(out.join("loss.csv")).expect("loss.csv");
    let rows: Vec<Vec<u64>> = csv
        .lines()
        .skip(1)
        .map(|l| {
            let cells: Vec<&str> = l.split(',').collect();
            [2, 4, 5, 7]
                .iter()
                .map(|&i| cells[i].parse().expect("cycles"))
                .collect()
        })
        .collect();
    assert_eq!(rows.len(), 2);
    for row in &rows {
        let (forward, backward, update, cycles) = (row[0], row[1], row[2], row[3]);
        assert!(forward > 0 && update > 0 && update < backward, "{row:?}");
        assert_eq!(cycles, forward + backward);
    }
    // Every step takes the same cycles on the fabric; the second's forward program also
    // waits for the fabric to take its code and routes back: dev's reconfigure_cycles, 100.
    assert_eq!(rows[1][0], rows[0][0] + 100, "{rows:?}");
    assert_eq!(rows[0][1..3], rows[1][1..3]);
}

/// A batch of 256 does not fit tests/targets/train-12k.toml's SRAM for training: with no
/// micro-batch asked for, `wsel train` runs the largest divisor that fits (128), says so, and
/// still matches the reference trained with batches of 256.
#[test]
fn a_batch_too_big_falls_back_to_the_largest_micro_batch_that_fits() {
    let args = [
        "--optimizer",
        "sgd",
        "--momentum",
        "0.9",
        "--lr",
        "0.1",
        "--steps",
        "3",
        "--batch",
        "256",
        "--seed",
        "1",
    ];
    let target = ["--target", "tests/targets/train-12k.toml"];
    let flags = [&target[..], &args[4..10]].concat();
    let run = matches_reference("fall-back", &flags, &args);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.contains("a batch of 256 samples does not fit")
            && stderr.contains("micro-batches of 128"),
        "{stderr}"
    );
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(stdout.contains("in 2 micro-batches of 128"), "{stdout}");
    // Asked for, a micro-batch that does not fit is the mapper's error, not a fall-back.
    let scratch = temp_dir("fall-back-asked");
    let out = scratch.join("out");
    let asked = wsel_train(&out, &[&flags[..], &["--micro-batch", "256"]].concat());
    assert_eq!(asked.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&asked.stderr);
    assert!(stderr.contains("[E0612]"), "{stderr}");
    assert!(!out.exists(), "no output folder after an error");
}

#[test]
fn a_bad_setting_writes_no_weights() {
    let scratch = temp_dir("bad");
    let out = scratch.join("out");
    let run = wsel_train(&out, &["--lr", "-1", "--steps", "1"]);
    assert_eq!(run.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(stderr.contains("error[E1106]"), "{stderr}");
    assert!(!out.exists(), "no output folder after an error");
}

#[test]
fn trained_weights_never_overwrite_the_inputs_unless_asked() {
    let run = wsel_train(
        &repo_root().join("examples/digits/data/init"),
        &["--steps", "1", "--batch", "4"],
    );
    assert_eq!(run.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert!(
        stderr.contains("error[E0804]") && stderr.contains("--overwrite-params"),
        "{stderr}"
    );
}

/// A tiny residual model: `h` feeds the second dense layer and the sum, so its gradient is
/// the sum of `dense_backward`'s and `add_backward_a`'s, added on the fabric by std.loss's
/// `gradient_sum`.
const RESIDUAL: &str = r#"import std.nn.{dense, relu, add};

model residual(x: f32[B, 4]) -> f32[B, 3] {
    param w1: f32[4, 4] from "w1.npy";
    param b1: f32[4] from "b1.npy";
    param w2: f32[4, 4] from "w2.npy";
    param b2: f32[4] from "b2.npy";
    param w3: f32[4, 3] from "w3.npy";
    param b3: f32[3] from "b3.npy";
    let h = relu(dense(x, w1, b1));
    let s = add(h, dense(h, w2, b2));
    return dense(s, w3, b3);
}

train residual {
    input x = "x.npy";
    labels = "y.npy";
    loss = "mse";
    optimizer = "sgd";
    momentum = 0.9;
    lr = 0.1;
    steps = 3;
    batch = 4;
    shuffle = false;
    target = "dev";
}
"#;

/// Streaming training through a fan-out against `tests/reference/residual.py` (float64, its
/// hand-written gradients checked by finite differences). The sums here have at most 4
/// terms, so the float32 error is far below the 1e-5 of the digits tests, which hold here
/// too; the reference without the skip path's gradient is 4e-2 away from step 2 on.
#[test]
fn a_residual_model_trains_through_its_fan_out_like_numpy() {
    let dir = temp_dir("residual");
    let status = Command::new("python3")
        .current_dir(repo_root())
        .arg("tests/reference/residual.py")
        .arg(&dir)
        .args([
            "--steps",
            "3",
            "--batch",
            "4",
            "--lr",
            "0.1",
            "--momentum",
            "0.9",
        ])
        .status()
        .expect("python3 runs (pip install -r requirements.txt)");
    assert!(status.success(), "the reference trainer failed");
    let file = dir.join("residual.wse");
    std::fs::write(&file, RESIDUAL).expect("write the model");
    let out = dir.join("out");
    let run = wsel_train_file(&file, &out, &[]);
    assert!(
        run.status.success(),
        "wsel train failed: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    let ours = outputs_match(&out, &dir.join("reference"));
    let without = read_npy(&dir.join("reference/losses_without_sum.npy"));
    assert_eq!(ours.len(), 3);
    for (step, (a, c)) in ours.iter().zip(&without).enumerate().skip(1) {
        assert!((a - c).abs() > 1e-2, "step {}: the sum matters", step + 1);
    }
}

/// A chain with gelu, for pipelined training (`gelu_train`, `gelu_train_back`).
const GELU_CHAIN: &str = r#"import std.nn.{dense, gelu, softmax};

model gelu_mlp(x: f32[B, 5]) -> f32[B, 3] {
    param w1: f32[5, 7] from "w1.npy";
    param c1: f32[7] from "c1.npy";
    param w2: f32[7, 3] from "w2.npy";
    param c2: f32[3] from "c2.npy";
    return softmax(dense(gelu(dense(x, w1, c1)), w2, c2));
}

train gelu_mlp {
    input x = "x.npy";
    labels = "labels.npy";
    loss = "cross_entropy";
    optimizer = "sgd";
    momentum = 0.9;
    lr = 0.1;
    steps = 4;
    batch = 6;
    shuffle = false;
    target = "dev";
}
"#;

/// gelu in pipelined training (its forward keeping x in SRAM, its backward on the same
/// region) and in streaming training, against the same reference: dense → gelu → dense →
/// softmax with the cross-entropy, 4 steps (measured: both modes' losses within 1e-7).
#[test]
fn gelu_trains_pipelined_and_streamed_like_numpy() {
    let args = [
        "--steps",
        "4",
        "--batch",
        "6",
        "--lr",
        "0.1",
        "--momentum",
        "0.9",
    ];
    for mode in ["pipelined", "streaming"] {
        transformer_trains_like_numpy("gelu_mlp", GELU_CHAIN, &["--mode", mode], &args);
    }
}

/// The grouped softmax (`softmax(h, context = 4)`: 3 groups of 4 features, causally masked
/// by the sample's position) between two dense layers, trained pipelined — `softmax_train`
/// and `softmax_train_back` with `context` — and streamed, against
/// tests/reference/transformer_train.py's `grouped_mlp`, 8 steps of 8 samples.
#[test]
fn a_grouped_softmax_trains_pipelined_and_streamed_like_numpy() {
    let source = r#"import std.nn.{dense, softmax};

model grouped_mlp(x: f32[B, 5]) -> f32[B, 3] {
    param w1: f32[5, 12] from "w1.npy";
    param c1: f32[12] from "c1.npy";
    param w2: f32[12, 3] from "w2.npy";
    param c2: f32[3] from "c2.npy";
    let a = softmax(dense(x, w1, c1), context = 4);
    return softmax(dense(a, w2, c2));
}
"#
    .to_string()
        + &small_train_item("grouped_mlp", "x", 8);
    let mut args = SMALL_SGD;
    args[3] = "8";
    for mode in ["pipelined", "streaming"] {
        transformer_trains_like_numpy("grouped_mlp", &source, &["--mode", mode], &args);
    }
}

/// std.nn's `transpose` (and `transpose_heads`) between two dense layers, read through
/// `reshape`s, trains streamed and pipelined like tests/reference/transformer_train.py's
/// `t_mlp` (`th_mlp`): 8 steps of 6 samples with SGD-momentum, within
/// `transformer_trains_like_numpy`'s 1e-5 (measured on t_mlp: weights within 1.2e-7 in both
/// modes). The backward graphs relabel the gradients the way the forward relabels the
/// activations, and `transpose_backward` (streamed) or `transpose_train_back` (pipelined)
/// moves them back on the fabric. The reference that passes the gradient back untransposed
/// (`t_mlp_no_back`) is more than 1e-2 away, so a backward that dropped the transpose fails.
#[test]
fn a_transpose_between_reshapes_trains_like_numpy() {
    for (model, layer, shape) in [
        ("t_mlp", "transpose", "6, 4"),
        ("th_mlp", "transpose_heads", "2, 3, 4"),
    ] {
        let source = format!(
            r#"import std.nn.{{dense, softmax, {layer}}};

model {model}(x: f32[B, 5]) -> f32[B, 3] {{
    param w1: f32[5, 24] from "w1.npy";
    param c1: f32[24] from "c1.npy";
    param w2: f32[24, 3] from "w2.npy";
    param c2: f32[3] from "c2.npy";
    let t = {layer}(reshape(dense(x, w1, c1), {shape}));
    return softmax(dense(reshape(t, 24), w2, c2));
}}
"#
        ) + &small_train_item(model, "x", 6);
        for mode in ["streaming", "pipelined"] {
            transformer_trains_like_numpy(model, &source, &["--mode", mode], &SMALL_SGD);
        }
    }
    let with = reference_losses("t_mlp", &SMALL_SGD);
    let without = reference_losses("t_mlp_no_back", &SMALL_SGD);
    assert!(
        with.iter().zip(&without).any(|(a, b)| (a - b).abs() > 1e-2),
        "the transpose back should matter: {with:?} {without:?}"
    );
}

/// The pipelined tests' settings for the NumPy reference with Adam (8 steps of 6 samples, as
/// `SMALL_SGD`), and the flags that switch wsel's `train` item to it.
const SMALL_ADAM: [&str; 7] = ["--steps", "8", "--batch", "6", "--lr", "0.02", "--adam"];
const SMALL_ADAM_FLAGS: [&str; 4] = ["--optimizer", "adam", "--lr", "0.02"];

/// dense → layernorm → `activation` → dense → softmax over 19 hidden features, layernorm's eps
/// 0.1 (not its default: the forward must take it, E1116), trained pipelined on `dev`
/// (tests/reference/transformer_train.py's `ln_mlp`, or `ln_gelu_mlp` with gelu).
fn layernorm_chain(activation: &str) -> String {
    format!(
        r#"import std.nn.{{dense, layernorm, {activation}, softmax}};

model ln_mlp(x: f32[B, 5]) -> f32[B, 3] {{
    param w1: f32[5, 19] from "w1.npy";
    param c1: f32[19] from "c1.npy";
    param g: f32[19] from "g.npy";
    param b: f32[19] from "b.npy";
    param w2: f32[19, 3] from "w2.npy";
    param c2: f32[3] from "c2.npy";
    let h = layernorm(dense(x, w1, c1), g, b, eps = 0.1);
    return softmax(dense({activation}(h), w2, c2));
}}
"#
    ) + &small_train_item("ln_mlp", "x", 6)
}

/// The columns of `layer`'s region in a pipelined run's summary (`regions: dense_train#1
/// 2 × 11, ...`).
fn region_columns(stdout: &str, layer: &str) -> u64 {
    let regions = stdout
        .lines()
        .find_map(|l| l.trim().strip_prefix("regions: "))
        .unwrap_or_else(|| panic!("no regions line in\n{stdout}"));
    let size = regions
        .split(", ")
        .find_map(|r| r.strip_prefix(&format!("{layer} ")))
        .unwrap_or_else(|| panic!("no {layer} in {regions}"));
    size.rsplit(' ')
        .next()
        .and_then(|c| c.parse().ok())
        .expect("a column count")
}

/// layernorm in pipelined training (`layernorm_train` keeps x̂ and 1/σ, `layernorm_train_back`
/// computes dx, dg and db on the same row of PEs and applies the optimizer there), 8 steps
/// (two epochs of 4 batches) with SGD-momentum and with Adam, against the NumPy reference:
/// `transformer_trains_like_numpy`'s 1e-5 on every loss (relative) and every final weight,
/// g and b included, each of which must have moved by more than 1e-3, so that a missing or
/// wrong gradient fails. With gelu the mapper spreads the 19 features over 11 columns (2 or
/// 1 a PE): the row sums of the backward cross columns that hold different counts. With relu
/// (whose region must divide the features) everything is on one PE. Measured: losses within
/// 2.7e-7 relative with SGD and 2.3e-6 with Adam (which divides by √v̂, small for the later
/// steps' gradients), weights within 1.9e-7 and 4.1e-7.
#[test]
fn layernorm_trains_pipelined_like_numpy() {
    let (sgd, adam, adam_flags) = (SMALL_SGD, SMALL_ADAM, SMALL_ADAM_FLAGS);
    let ragged = layernorm_chain("gelu");
    for (flags, args) in [(&[][..], &sgd[..]), (&adam_flags[..], &adam[..])] {
        let stdout = transformer_trains_like_numpy("ln_gelu_mlp", &ragged, flags, args);
        let columns = region_columns(&stdout, "layernorm_train#1");
        assert!(columns > 1 && 19 % columns != 0, "{stdout}");
    }
    transformer_trains_like_numpy("ln_mlp", &layernorm_chain("relu"), &[], &sgd);
}

/// A residual block for pipelined training (tests/reference/transformer_train.py's `res_mlp`):
/// `h` feeds the block's branch and its `add`. Its `train` item is `small_train_item`.
const RESIDUAL_CHAIN: &str = r#"import std.nn.{dense, gelu, add, softmax};

model res_mlp(x: f32[B, 5]) -> f32[B, 3] {
    param w1: f32[5, 7] from "w1.npy";
    param c1: f32[7] from "c1.npy";
    param w2: f32[7, 7] from "w2.npy";
    param c2: f32[7] from "c2.npy";
    param w3: f32[7, 3] from "w3.npy";
    param c3: f32[3] from "c3.npy";
    let h = dense(x, w1, c1);
    let s = add(h, gelu(dense(h, w2, c2)));
    return softmax(dense(s, w3, c3));
}
"#;

/// A residual block in pipelined training: the backward sends the gradient at `add` into the
/// branch (dense → gelu) unchanged, and `add_train_back`, at the block's fork, adds it to what
/// the branch gave `h` before `h`'s dense layer takes it — a sum on the fabric, in its
/// cycles. 8 steps with SGD-momentum and with Adam against the reference within
/// `transformer_trains_like_numpy`'s 1e-5 (measured with SGD: losses within 2.4e-7
/// relative, weights within 1.1e-7). The reference that leaves the skip's gradient out is
/// more than 1e-2 away, so a backward that lost the sum would fail.
#[test]
fn a_residual_block_trains_pipelined_like_numpy() {
    let source = format!("{RESIDUAL_CHAIN}{}", small_train_item("res_mlp", "x", 6));
    block_trains_with_its_skip("res_mlp", &source);
    transformer_trains_like_numpy("res_mlp", &source, &SMALL_ADAM_FLAGS, &SMALL_ADAM);
}

/// The residual block after a relu (tests/reference/transformer_train.py's `relu_res_mlp`):
/// `h = relu(dense(x))` feeds the branch's dense layer and `add`, which the mapper places a
/// PE away from that dense layer so that `h` reaches its edge (docs/mapping.md §4; E0603
/// before). 8 steps with SGD-momentum against the reference within
/// `transformer_trains_like_numpy`'s 1e-5 (measured: losses within 9e-8 relative, weights
/// within 1.3e-7); the reference without the skip's gradient is 3.8e-2 away.
#[test]
fn a_residual_block_after_a_relu_trains_pipelined_like_numpy() {
    let source = RESIDUAL_CHAIN
        .replace("gelu", "relu")
        .replace("model res_mlp", "model relu_res_mlp")
        .replace("dense(x, w1, c1)", "relu(dense(x, w1, c1))")
        .replace("relu(dense(h, w2, c2))", "dense(h, w2, c2)");
    let source = format!("{source}{}", small_train_item("relu_res_mlp", "x", 6));
    block_trains_with_its_skip("relu_res_mlp", &source);
}

/// `model` (a residual block) trains with SGD-momentum like the reference, `add_train` on
/// the fabric, and the reference without the skip's gradient (`{model}_no_skip`) is more
/// than 1e-2 away from it.
fn block_trains_with_its_skip(model: &str, source: &str) {
    let stdout = transformer_trains_like_numpy(model, source, &[], &SMALL_SGD);
    assert!(stdout.contains("add_train#1"), "{stdout}");
    let with = reference_losses(model, &SMALL_SGD);
    let without = reference_losses(&format!("{model}_no_skip"), &SMALL_SGD);
    assert!(
        with.iter().zip(&without).any(|(a, b)| (a - b).abs() > 1e-2),
        "the skip's gradient should matter: {with:?} {without:?}"
    );
}

/// Token and position embeddings of `d` features (a vocabulary of 7, contexts of
/// `context`) into a softmax over 5 classes: the reference's `emb_mlp` (11, 3) and
/// `wide_embedding` (521, 4), named `model`, without a `train` item.
fn embedding_chain(model: &str, d: u64, context: u64) -> String {
    format!(
        r#"import std.nn.{{embedding, dense, softmax}};

model {model}(ids: f32[B, 1]) -> f32[B, 5] {{
    param wte: f32[7, {d}] from "wte.npy";
    param wpe: f32[{context}, {d}] from "wpe.npy";
    param w: f32[{d}, 5] from "w.npy";
    param c: f32[5] from "c.npy";
    return softmax(dense(embedding(ids, wte, wpe), w, c));
}}
"#
    )
}

/// embedding in pipelined training: `embedding_train` keeps each sample's id, and
/// `embedding_train_back`, on the same row of PEs, adds dy into the rows of the table's and
/// of the positions' gradients that the sample's id and position pick, then applies the
/// optimizer to both there. 8 steps (two epochs of 4 batches of 2 whole sequences) with
/// SGD-momentum and with Adam, within `transformer_trains_like_numpy`'s 1e-5 on every loss
/// and weight (measured: SGD 7.7e-8, Adam 3.9e-7), each weight moved by more than 1e-3 (a
/// backward that dropped the positions' gradient would leave `wpe` where it was); the 11
/// features over more columns than divide them.
#[test]
fn an_embedding_trains_pipelined_like_numpy() {
    let (sgd, adam, adam_flags) = (SMALL_SGD, SMALL_ADAM, SMALL_ADAM_FLAGS);
    let source = embedding_chain("emb_mlp", 11, 3) + &small_train_item("emb_mlp", "ids", 6);
    for (flags, args) in [(&[][..], &sgd[..]), (&adam_flags[..], &adam[..])] {
        let stdout = transformer_trains_like_numpy("emb_mlp", &source, flags, args);
        let columns = region_columns(&stdout, "embedding_train#1");
        assert!(columns > 1 && 11 % columns != 0, "{stdout}");
    }
}

/// Attention in a chain for pipelined training (the reference's `att_chain`): one dense layer
/// makes q, k and v packed per head, `attention_qkv` takes them as one input. Its `train`
/// item is `small_train_item`'s, in batches of 8 (two sequences).
const ATTENTION_CHAIN: &str = r#"import std.nn.{embedding, dense, attention_qkv, softmax};

model att_chain(ids: f32[B, 1]) -> f32[B, 5] {
    param wte: f32[7, 8] from "wte.npy";
    param wpe: f32[4, 8] from "wpe.npy";
    param wqkv: f32[8, 24] from "wqkv.npy";
    param bqkv: f32[24] from "bqkv.npy";
    param wo: f32[8, 5] from "wo.npy";
    param bo: f32[5] from "bo.npy";
    let x = dense(embedding(ids, wte, wpe), wqkv, bqkv);
    return softmax(dense(attention_qkv(x, heads = 2, context = 4), wo, bo));
}
"#;

/// Causal attention in pipelined training: `attention_qkv_train` keeps every token's q, k and
/// v, and `attention_qkv_train_back`, on the same column (one head each), makes the
/// probabilities again after a sequence's last dy, then dq, dk and dv, which leave packed as
/// the input came and reach the dense layer that made them. 8 steps (two epochs of 3 batches
/// of two sequences of 4) with SGD-momentum within `transformer_trains_like_numpy`'s 1e-5 on
/// every loss and weight (measured: 1.1e-7), every weight moved by more than 1e-3, on a
/// region of more than one column. Not with Adam: the key biases inside `bqkv` have a zero
/// gradient, which Adam turns into steps of about lr in directions the rounding picks (see
/// `transformer_trains_like_numpy`).
#[test]
fn attention_trains_pipelined_like_numpy() {
    let sgd = [
        "--steps",
        "8",
        "--batch",
        "8",
        "--lr",
        "0.05",
        "--momentum",
        "0.9",
    ];
    let source = format!(
        "{ATTENTION_CHAIN}{}",
        small_train_item("att_chain", "ids", 8)
    );
    let stdout = transformer_trains_like_numpy("att_chain", &source, &[], &sgd);
    assert!(
        region_columns(&stdout, "attention_qkv_train#1") > 1,
        "{stdout}"
    );
}

/// gelu's and layernorm's backward layers in training: dense → gelu → layernorm → dense
/// with the mean squared error, on `dev` (samples spread 2, 2, 1, 1 over the region's
/// columns: a batch of 6 on 1×4 PEs). eps is 0.1, not the default 1e-5, so that the training
/// graph must pass the call's eps to layernorm's backward layers.
const GELU_LAYERNORM: &str = r#"import std.nn.{dense, gelu, layernorm};

model mlp(x: f32[B, 5]) -> f32[B, 3] {
    param w1: f32[5, 7] from "w1.npy";
    param c1: f32[7] from "c1.npy";
    param g: f32[7] from "g.npy";
    param b: f32[7] from "b.npy";
    param w2: f32[7, 3] from "w2.npy";
    param c2: f32[3] from "c2.npy";
    return dense(layernorm(gelu(dense(x, w1, c1)), g, b, eps = 0.1), w2, c2);
}

train mlp {
    input x = "x.npy";
    labels = "y.npy";
    loss = "mse";
    optimizer = "sgd";
    momentum = 0.9;
    lr = 0.05;
    steps = 3;
    batch = 6;
    shuffle = false;
    target = "dev";
}
"#;

/// The reference's settings for `GELU_LAYERNORM` (its `train` item's).
const GELU_LAYERNORM_ARGS: [&str; 8] = [
    "--steps",
    "3",
    "--batch",
    "6",
    "--lr",
    "0.05",
    "--momentum",
    "0.9",
];

/// gelu_backward, layernorm_backward, layernorm_grad_g and layernorm_grad_b in training,
/// against the NumPy reference (float64). Measured: losses within 2e-7 relative, weights
/// within 4e-7; the digits tests' 1e-5 holds with room (sums of at most 7 terms here).
#[test]
fn gelu_and_layernorm_train_like_numpy() {
    transformer_trains_like_numpy("mlp", GELU_LAYERNORM, &[], &GELU_LAYERNORM_ARGS);
}

/// The same model and reference trained pipelined: the mean squared error's `mse_train` keeps
/// the result on its PE and `mse_train_back` gives 2 (y − t) / (B · N) from it, so the loss
/// ends a pipelined model too. Measured: as close to the reference as the streamed run (the
/// 1e-5 bound); a gradient without the factor 2 moves every weight past it.
#[test]
fn the_mean_squared_error_trains_pipelined_like_numpy() {
    let stdout = transformer_trains_like_numpy(
        "mlp",
        GELU_LAYERNORM,
        &["--mode", "pipelined"],
        &GELU_LAYERNORM_ARGS,
    );
    assert!(stdout.contains("pipelined"), "{stdout}");
}

/// Every transformer layer's backward in one model: embedding's scatter-adds, attention's
/// three input gradients, layernorm's, gelu's, and the residual stream's fan-outs (h and r
/// feed two layers each, a three: q, k and v), 3 steps of SGD with momentum. Measured:
/// losses within 1e-7 relative, weights within 2e-7 of the reference; the sums here have at
/// most 32 terms (the MLP's width), so the digits tests' bound of 1e-5 holds.
#[test]
fn a_tiny_transformer_trains_like_numpy() {
    transformer_trains_like_numpy("gpt", TINY_GPT, &[], &TINY_GPT_SGD);
}

/// The tiny transformer with Adam (flags over the item), applied by the weight store.
#[test]
fn a_tiny_transformer_trains_with_adam_like_numpy() {
    let flags = ["--optimizer", "adam", "--lr", "0.01"];
    let args = ["--steps", "3", "--batch", "16", "--lr", "0.01", "--adam"];
    transformer_trains_like_numpy("gpt", TINY_GPT, &flags, &args);
}

/// The tiny transformer with its attention composed of layers (`matmul_qk`, the grouped
/// causal `softmax`, `matmul_pv`, scale 1/√8 as a literal): the same function as the fused
/// `attention`, so the same reference; its backward runs through `matmul_qk_backward_q/_k`,
/// the grouped `softmax_backward` and `matmul_pv_backward_p/_v`, a sequence over several
/// columns of the training region (checked; 1 × 16 measured, a token a column). Measured: as
/// close to the reference as the fused model (the 1e-5 bound).
#[test]
fn a_tiny_transformer_with_composed_attention_trains_like_numpy() {
    let source = composed_tiny_gpt(2, "0.35355339");
    let report = transformer_trains_like_numpy("gpt", &source, &[], &TINY_GPT_SGD);
    let (_, cols) = training_region(&report);
    assert!(
        cols * 8 > 16,
        "on {cols} columns: whole sequences per column"
    );
}

/// The tiny transformer with one head of 16 features (the reference's `gpt_one_head`), its
/// attention composed: the training region has 2 rows (checked: more than one), so the
/// matmuls and their gradients spread the head over the rows, their partial scores summed
/// and their probabilities and ds gathered down the head's rows. Measured: losses within
/// 1e-7 relative, weights within 1.5e-7 of the reference (the 1e-5 bound).
#[test]
fn a_tiny_transformer_with_a_head_over_rows_trains_like_numpy() {
    let source = composed_tiny_gpt(1, "0.25");
    let report = transformer_trains_like_numpy("gpt_one_head", &source, &[], &TINY_GPT_SGD);
    let (rows, _) = training_region(&report);
    assert!(rows > 1, "on {rows} row: the head is not spread over rows");
}

/// examples/transformer itself (2 blocks, d_model 128, 4 heads, context 64, its trained
/// weights, a softmax after its logits) trained 3 steps of one sequence each with SGD, by
/// benches/transformer_train.py against the NumPy reference's `example` model: losses within
/// 1e-5 relative, final weights within 1e-5 (measured: 3.6e-7 and 3.0e-7; the sums now have
/// up to 512 terms, still far inside). On tests/targets/dev-4mib.toml, a hypothetical target
/// with 4 MiB of SRAM per PE, as the first target the example trained on; it also trains on
/// wse2 (BENCHMARKS.md, `--target wse2`; too long for CI in a debug build).
#[test]
fn the_transformer_example_trains_like_numpy() {
    let status = Command::new("python3")
        .current_dir(repo_root())
        .arg("benches/transformer_train.py")
        .arg(env!("CARGO_BIN_EXE_wsel"))
        .arg("--check")
        .status()
        .expect("python3 runs (pip install -r requirements.txt)");
    assert!(
        status.success(),
        "the example's training differs from NumPy"
    );
}

// ---------------------------------------------------------------------------------------
// Training over several rows (#21): models whose features do not fit one row of `dev`'s
// 4 KiB PEs, so the streamed region of every forward and backward layer, the loss and the
// gradients splits the features over its rows.
// ---------------------------------------------------------------------------------------

/// The rows × columns of the region a `wsel train` report says the passes ran on
/// ("… one layer at a time on 8×6 PEs …").
fn training_region(report: &str) -> (u64, u64) {
    let at = report
        .find(" at a time on ")
        .unwrap_or_else(|| panic!("no region in {report}"));
    let size = report[at + " at a time on ".len()..]
        .split_whitespace()
        .next()
        .unwrap_or("");
    let (rows, cols) = size
        .split_once('×')
        .unwrap_or_else(|| panic!("region {size:?}"));
    (rows.parse().expect("rows"), cols.parse().expect("columns"))
}

/// [`GELU_LAYERNORM`] with 257 hidden features, a batch of 23 and a learning rate of 0.001
/// (the reference's `wide_mlp`).
fn wide_mlp() -> String {
    let source = GELU_LAYERNORM
        .replace("mlp", "wide_mlp")
        .replace("[5, 7]", "[5, 257]")
        .replace("[7]", "[257]")
        .replace("[7, 3]", "[257, 3]")
        .replace("lr = 0.05", "lr = 0.001")
        .replace("batch = 6;", "batch = 23;");
    assert!(
        !source.contains("[7") && !source.contains(", 7]"),
        "{source}"
    );
    source
}

/// Embeddings of 521 features into a softmax (the reference's `wide_embedding`), trained 3
/// SGD steps of 23 samples on `dev`.
fn wide_embedding() -> String {
    embedding_chain("wide_embedding", 521, 4)
        + r#"
train wide_embedding {
    input ids = "ids.npy";
    labels = "labels.npy";
    loss = "cross_entropy";
    optimizer = "sgd";
    momentum = 0.9;
    lr = 0.05;
    steps = 3;
    batch = 23;
    shuffle = false;
    target = "dev";
}
"#
}

/// dense (both gradients and dx), gelu, layernorm (dx, dg, db) and mse over several rows: 257
/// features and a batch of 23 (primes: no number of rows or columns divides them), trained 3
/// SGD steps like NumPy (losses within 1e-5 relative, weights within 1e-5; measured 1.6e-7),
/// on a region the report shows to have more than one row (measured 11 × 12).
#[test]
fn a_wide_mlp_trains_over_several_rows_like_numpy() {
    let args = ["--steps", "3", "--batch", "23", "--lr", "0.001"];
    let report = transformer_trains_like_numpy("wide_mlp", &wide_mlp(), &[], &args);
    let (rows, _) = training_region(&report);
    assert!(rows > 1, "the wide mlp trained on {rows} row(s)");
}

/// embedding's table and position gradients, dense's, softmax's backward and the
/// cross-entropy over several rows: 521 features, a batch of 23, 3 SGD steps like NumPy
/// (measured: weights within 1.6e-7), on more than one row (measured 13 × 12).
#[test]
fn a_wide_embedding_trains_over_several_rows_like_numpy() {
    let args = ["--steps", "3", "--batch", "23", "--lr", "0.05"];
    let report = transformer_trains_like_numpy("wide_embedding", &wide_embedding(), &[], &args);
    let (rows, _) = training_region(&report);
    assert!(rows > 1, "the wide embedding trained on {rows} row(s)");
}

/// The tiny GPT with packed attention (tests/reference/transformer_train.py's `gpt_packed`):
/// [`TINY_GPT`] with q, k and v made by one dense layer into `attention_qkv`, trained
/// pipelined on `dev`.
fn gpt_packed() -> String {
    let separate: String = ["q", "k", "v"]
        .iter()
        .map(|x| {
            format!(
                "    param w{x}1: f32[16, 16] from \"w{x}1.npy\";\n    param b{x}1: f32[16] from \"b{x}1.npy\";\n"
            )
        })
        .collect();
    let packed = "    param wqkv1: f32[16, 48] from \"wqkv1.npy\";\n    param bqkv1: f32[48] from \"bqkv1.npy\";\n";
    let attention = "    let att = attention(dense(a, wq1, bq1), dense(a, wk1, bk1), dense(a, wv1, bv1),\n\
                     \x20       heads = 2, context = 8);\n";
    let attention_qkv =
        "    let att = attention_qkv(dense(a, wqkv1, bqkv1), heads = 2, context = 8);\n";
    let on_wse2 = "    target = \"wse2\";\n";
    assert!(TINY_GPT.contains(&separate) && TINY_GPT.contains(attention));
    TINY_GPT
        .replace(&separate, packed)
        .replace(attention, attention_qkv)
        .replace("attention, softmax}", "attention_qkv, softmax}")
        .replace("model gpt(", "model gpt_packed(")
        .replace("train gpt {", "train gpt_packed {")
        .replace(
            on_wse2,
            "    target = \"dev\";\n    mode = \"pipelined\";\n",
        )
}

/// The tiny GPT with packed attention trains pipelined on `dev`: 3 SGD-momentum steps of 16
/// samples (two sequences of 8) like the NumPy reference, within `transformer_trains_like_numpy`'s
/// float32 tolerance (losses 1e-5 relative, weights 1e-5; measured: the losses agree to 7
/// digits, the weights within 1.2e-7, while training moves them by 0.013 to 0.12).
///
/// Both residual blocks are three parts wide on `add`'s edge (more than the two a line of PEs
/// beside it takes from its ends): the forward's `h` and `r` reach `add` through the gap
/// `join_gap` leaves, and each block's sum of its two gradients runs at the block's fork,
/// between the regions of `h`'s producer and the branch's first layer (`wsel_map::Seat::Fork`,
/// docs/mapping.md §4). A fork that drops a gradient fails this: `add_train_back_tile`
/// sending dy alone (the branch's dr dropped) gave step 2's loss 3.68968 against the
/// reference's 3.66695 (6e-3 relative), sending dr alone (the skip's dy dropped) 3.68409.
/// Without `join_gap` the forward's fork of `h` does not route (E0603 at `layernorm_train#1`).
#[test]
fn a_tiny_gpt_with_packed_attention_trains_pipelined_like_numpy() {
    let stdout = transformer_trains_like_numpy("gpt_packed", &gpt_packed(), &[], &TINY_GPT_SGD);
    for add in ["add_train#1", "add_train#2"] {
        assert!(region_columns(&stdout, add) > 2, "{add}: {stdout}");
    }
}

/// `add(h, h)` (tests/reference/transformer_train.py's `double_mlp`): h = dense(x) read twice
/// by one layer. The training graph, like inference's, relays h's second reading
/// (`relay_train`, std.resident), so the block's branch is the relay; its backward
/// `relay_train_back` sends dy back up as dr, and the block's sum at the fork adds it to the
/// skip's dy. 8 SGD-momentum steps on `dev` match the reference within
/// `transformer_trains_like_numpy`'s 1e-5 (measured: losses to 7 digits, weights within
/// 8.3e-8); the reference counting h's gradient once is more than 1e-2 away.
#[test]
fn a_layer_reading_h_twice_trains_pipelined_like_numpy() {
    let source = format!(
        r#"import std.nn.{{dense, add, softmax}};

model double_mlp(x: f32[B, 5]) -> f32[B, 3] {{
    param w1: f32[5, 7] from "w1.npy";
    param c1: f32[7] from "c1.npy";
    param w3: f32[7, 3] from "w3.npy";
    param c3: f32[3] from "c3.npy";
    let h = dense(x, w1, c1);
    return softmax(dense(add(h, h), w3, c3));
}}
{}"#,
        small_train_item("double_mlp", "x", 6)
    );
    block_trains_with_its_skip("double_mlp", &source);
}
