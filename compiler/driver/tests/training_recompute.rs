//! Activations kept for the backward pass of streamed training, checked against the SRAM, and
//! recomputed when they do not fit (`docs/running.md`, "How a training step runs").
//!
//! The model: digits' 64 pixels through six dense layers (32 features each but the last's
//! 10, a relu after every one but the last) into a softmax, trained as
//! `tests/reference/train.py --layers 6` trains it, from the same initial weights (written
//! here), in the same batch order. On tests/targets/train-12k.toml (one row of 16 PEs, 12 KiB
//! each) a batch of 128 keeps more activations than fit beside the phase `dense_backward#1`
//! (E0624: 7,168 B kept and 5,624 B of its own, 12,792 B). Recomputation changes no
//! arithmetic, so the losses and weights must match the reference as the other streaming
//! tests do: 1e-5 relative on every loss, 1e-5 absolute on every weight (tests/training.rs
//! gives the float32 argument; measured here: 5.2e-8).

use std::path::Path;
use std::process::{Command, Output};

mod support;
use support::transformer::wsel_train_file;
use support::{matches_mlp_reference, repo_root, temp_dir, write_f32_npy};

/// The widths of the deep model's layers, its input first.
const WIDTHS: [u64; 7] = [64, 32, 32, 32, 32, 32, 10];

/// The deep model and its `train` item, reading its weights from `w1.npy`, `b1.npy`, ...
/// beside it and digits' training data.
fn deep_model() -> String {
    let data = repo_root().join("examples/digits/data");
    let mut params = String::new();
    let mut body = String::from("    let h0 = x;\n");
    let layers = WIDTHS.len() - 1;
    for k in 1..=layers {
        let (n, m) = (WIDTHS[k - 1], WIDTHS[k]);
        params += &format!("    param w{k}: f32[{n}, {m}] from \"w{k}.npy\";\n");
        params += &format!("    param b{k}: f32[{m}] from \"b{k}.npy\";\n");
        if k < layers {
            body += &format!("    let h{k} = relu(dense(h{}, w{k}, b{k}));\n", k - 1);
        }
    }
    body += &format!(
        "    return softmax(dense(h{}, w{layers}, b{layers}));\n",
        layers - 1
    );
    format!(
        "import std.nn.{{dense, relu, softmax}};\n\nmodel deep(x: f32[B, 64]) -> f32[B, 10] {{\n{params}{body}}}\n\n\
         train deep {{\n    input x = \"{x}\";\n    labels = \"{y}\";\n    optimizer = \"sgd\";\n    \
         momentum = 0.9;\n    lr = 0.05;\n    steps = 4;\n    batch = 128;\n    seed = 1;\n    \
         target = \"dev\";\n}}\n",
        x = data.join("x_train.npy").display(),
        y = data.join("y_train.npy").display(),
    )
}

/// Writes the deep model into `dir` with He-uniform initial weights (a fixed xorshift
/// sequence) and zero biases; the model file's path.
fn write_deep_model(dir: &Path) -> std::path::PathBuf {
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut uniform = || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        (state >> 11) as f32 / (1u64 << 53) as f32
    };
    for k in 1..WIDTHS.len() {
        let (n, m) = (WIDTHS[k - 1], WIDTHS[k]);
        let limit = (6.0 / n as f32).sqrt();
        let w: Vec<f32> = (0..n * m)
            .map(|_| (2.0 * uniform() - 1.0) * limit)
            .collect();
        write_f32_npy(&dir.join(format!("w{k}.npy")), &[n, m], &w);
        write_f32_npy(&dir.join(format!("b{k}.npy")), &[m], &vec![0.0; m as usize]);
    }
    let file = dir.join("deep.wse");
    std::fs::write(&file, deep_model()).expect("write the model");
    file
}

/// `wsel train FILE --out OUT` on train-12k.toml with `args`.
fn train(file: &Path, out: &Path, args: &[&str]) -> Output {
    let target = ["--target", "tests/targets/train-12k.toml"];
    wsel_train_file(file, out, &[&target[..], args].concat())
}

/// The reference trainer's losses and weights for the deep model of `init` (4 SGD steps of
/// 128, momentum 0.9, lr 0.05, seed 1), written into `out`.
fn reference(init: &Path, out: &Path) {
    let status = Command::new("python3")
        .current_dir(repo_root())
        .arg("tests/reference/train.py")
        .arg(out)
        .args(["--optimizer", "sgd", "--lr", "0.05", "--steps", "4"])
        .args(["--batch", "128", "--seed", "1", "--layers", "6", "--init"])
        .arg(init)
        .status()
        .expect("python3 runs (pip install -r requirements.txt)");
    assert!(status.success(), "the reference trainer failed");
}

/// The batch of 128, asked for whole (`--micro-batch 128`), does not keep its activations in
/// 12 KiB: under `recompute = "auto"` the backward pass recomputes them and matches the
/// reference for 4 steps. Of the five relu results the backward pass reads, every second is
/// kept (relu#2, relu#4); relu#1, relu#3 and relu#5 are made again from the checkpoint before
/// them (relu#1 from the model's input): 6 forward phases more a pass, 39 + 6 = 45 (39: 13
/// forward — x staged, 6 dense, 5 relu, softmax —, the targets, the loss and its backward,
/// and 23 backward — softmax's, 6 dense layers' dW and db, 5 of their dx (not the first's),
/// 5 relus'). With `--recompute never` the same run is E0624 at that phase, and no output.
#[test]
fn a_deep_mlp_recomputes_its_activations_on_a_small_sram_like_numpy() {
    let dir = temp_dir("recompute-deep");
    let file = write_deep_model(&dir);
    let out = dir.join("out");
    let run = train(&file, &out, &["--micro-batch", "128"]);
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    assert!(stdout.contains("(45 phases a pass"), "{stdout}");
    let line = stdout
        .lines()
        .find(|l| l.contains("recomputed for the backward pass"))
        .unwrap_or_else(|| panic!("no recomputation line: {stdout}"));
    assert!(
        line.contains(
            ": dense#5, relu#5, dense#3, relu#3, dense#1, relu#1 (6 phases a pass, every 2nd kept)"
        ),
        "{line}"
    );
    let cycles = support::numbers_after(line, "recomputed for the backward pass:");
    assert!(
        cycles.iter().any(|&c| c > 1000),
        "the recomputing phases' cycles: {line}"
    );
    let theirs = dir.join("reference");
    reference(&dir, &theirs);
    let worst = matches_mlp_reference(&out, &theirs, WIDTHS.len() - 1);
    assert!(worst > 0.0, "float32 against float64 differs somewhere");

    let never = dir.join("never");
    let refused = train(
        &file,
        &never,
        &["--micro-batch", "128", "--recompute", "never"],
    );
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("[E0624]")
            && stderr.contains("phase 17 (`dense_backward#1`)")
            && stderr.contains("7168 bytes per PE of kept results and 5624 bytes of its own"),
        "{stderr}"
    );
    assert!(!never.exists(), "no output folder after an error");
}

/// Without a micro-batch asked for, `auto` compares the two ways out by the mapper's
/// estimate: micro-batches of 64 (every activation kept; the weights streamed twice as
/// often) against recomputation, and takes the cheaper; the summary gives both figures, and
/// the run matches the reference all the same.
#[test]
fn auto_takes_the_cheaper_of_recomputing_and_micro_batches() {
    let dir = temp_dir("recompute-auto");
    let file = write_deep_model(&dir);
    let out = dir.join("out");
    let run = train(&file, &out, &[]);
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let line = stdout
        .lines()
        .find(|l| l.contains("estimated at"))
        .unwrap_or_else(|| panic!("no comparison: {stdout}"));
    let figures = support::numbers_after(line, "micro-batches:");
    assert_eq!(figures.len(), 2, "{line}");
    // The line names the way taken first: micro-batches, the cheaper estimate.
    assert!(figures[0] < figures[1], "{line}");
    assert!(stdout.contains("in 2 micro-batches of 64"), "{stdout}");
    let theirs = dir.join("reference");
    reference(&dir, &theirs);
    matches_mlp_reference(&out, &theirs, WIDTHS.len() - 1);
}

/// digits (examples/digits/train.wse) keeps its activations within wse2's SRAM: nothing is
/// recomputed and the pass has its 21 phases (7 forward — x staged, 3 dense, 2 relu, softmax
/// —, the targets, the loss and its backward, and 11 backward — softmax's, 3 dense layers' dW
/// and db, 2 dx, 2 relus'). `--recompute always` runs relu#1 (and the dense layer before it)
/// again — 23 phases — and trains bit for bit as without it. Recomputation keeps one region,
/// so the run without it is asked for one region too (`--one-region`): per-layer rows reduce
/// in another order, and the bits would differ for that reason alone.
#[test]
fn a_run_that_fits_is_unchanged_and_recomputing_changes_no_bit() {
    let dir = temp_dir("recompute-digits");
    let digits = repo_root().join("examples/digits/train.wse");
    let run = |out: &Path, args: &[&str]| {
        let (digits, out) = (
            digits.to_str().expect("a path"),
            out.to_str().expect("a path"),
        );
        let fixed = ["train", "--quiet", "--steps", "3", digits, "--out", out];
        let output = support::wsel_ok(&repo_root(), &[&fixed[..], args].concat());
        String::from_utf8_lossy(&output.stdout).to_string()
    };
    let (kept, again) = (dir.join("kept"), dir.join("again"));
    let plain = run(&kept, &["--one-region"]);
    assert!(plain.contains("(21 phases a pass"), "{plain}");
    assert!(!plain.contains("recomputed"), "{plain}");
    let always = run(&again, &["--recompute", "always"]);
    assert!(always.contains("(23 phases a pass"), "{always}");
    assert!(
        always.contains("recomputed for the backward pass: dense#1, relu#1 (2 phases a pass"),
        "{always}"
    );
    let csv = |dir: &Path| {
        let text = std::fs::read_to_string(dir.join("loss.csv")).expect("loss.csv");
        text.lines()
            .skip(1)
            .map(|l| l.split(',').nth(1).unwrap_or_default().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(csv(&kept), csv(&again));
    let names = ["w1", "b1", "w2", "b2", "w3", "b3"];
    assert_eq!(support::farthest(&kept, &again, &names), 0.0);
}

/// Pipelined training keeps a layer's activations in its own kernel's arrays (`dense_train_tile`
/// keeps `xk: [f32; samples · n]`, `softmax_train` every sample's probabilities), so the
/// mapper's SRAM check of the forward program is the check of what the backward will read:
/// digits on `dev` with a batch asked whole is E0601 at `softmax_train` (one PE), whose bytes
/// grow by exactly the kept results of the samples added — 144 more samples × 10
/// probabilities × 4 B = 5,760 B from a batch of 144 to 288. (Without `--micro-batch`, such a
/// batch runs in micro-batches: tests/training.rs.)
#[test]
fn pipelined_training_checks_its_kept_activations_as_kernel_arrays() {
    let dir = temp_dir("recompute-pipelined");
    let digits = repo_root().join("examples/digits/train.wse");
    let needed = |batch: &str| -> u64 {
        let out = dir.join(batch);
        let run = Command::new(env!("CARGO_BIN_EXE_wsel"))
            .current_dir(repo_root())
            .args([
                "train",
                "--color",
                "never",
                "--quiet",
                "--mode",
                "pipelined",
            ])
            .args(["--target", "dev", "--steps", "1", "--batch", batch])
            .args(["--micro-batch", batch])
            .arg(&digits)
            .arg("--out")
            .arg(&out)
            .output()
            .expect("wsel runs");
        let stderr = String::from_utf8_lossy(&run.stderr).to_string();
        assert_eq!(run.status.code(), Some(1), "{stderr}");
        assert!(!out.exists(), "no output after an error");
        let line = stderr
            .lines()
            .find(|l| l.contains("[E0601]") && l.contains("`softmax_train#1`"))
            .unwrap_or_else(|| panic!("no E0601 at softmax_train: {stderr}"));
        support::numbers_after(line, "[E0601]")
            .into_iter()
            .find(|&b| b > 4096)
            .unwrap_or_else(|| panic!("no byte count: {line}"))
    };
    assert_eq!(needed("288") - needed("144"), 144 * 10 * 4);
}

/// Inference streaming has the same check: in `add(h, dense(relu(dense(h))))` the skip `h`
/// stays in SRAM beside the branch, and the branch's second dense layer reads only the relu's
/// result. A batch of 96 on one row of 16 PEs with 8,000 B each: h is [96, 64] split over
/// the 16 columns, 6 samples × 64 features × 4 B = 1,536 B kept beside `dense#3`'s own
/// 7,480 B (the mapper's working set of a 64 → 64 dense at 6 samples a column) — 9,016 B,
/// E0624, so the run maps as 2 micro-batches of 48 and says why.
#[test]
fn streamed_inference_keeps_a_residual_skip_beside_the_branch() {
    let dir = temp_dir("recompute-residual");
    for (name, shape) in [
        ("w1", [64, 64]),
        ("w2", [64, 64]),
        ("w4", [64, 64]),
        ("w3", [64, 10]),
    ] {
        let values = vec![0.01; (shape[0] * shape[1]) as usize];
        write_f32_npy(&dir.join(format!("{name}.npy")), &shape, &values);
        let bias = format!("b{}.npy", &name[1..]);
        write_f32_npy(&dir.join(bias), &[shape[1]], &vec![0.0; shape[1] as usize]);
    }
    let model = "import std.nn.{dense, relu, add};\n\nmodel res(x: f32[B, 64]) -> f32[B, 10] {\n\
        \x20   param w1: f32[64, 64] from \"w1.npy\";\n    param b1: f32[64] from \"b1.npy\";\n\
        \x20   param w2: f32[64, 64] from \"w2.npy\";\n    param b2: f32[64] from \"b2.npy\";\n\
        \x20   param w4: f32[64, 64] from \"w4.npy\";\n    param b4: f32[64] from \"b4.npy\";\n\
        \x20   param w3: f32[64, 10] from \"w3.npy\";\n    param b3: f32[10] from \"b3.npy\";\n\
        \x20   let h = dense(x, w1, b1);\n\
        \x20   let y = add(h, dense(relu(dense(h, w2, b2)), w4, b4));\n\
        \x20   return dense(y, w3, b3);\n}\n";
    std::fs::write(dir.join("res.wse"), model).expect("write the model");
    let target = std::fs::read_to_string(repo_root().join("tests/targets/train-12k.toml"))
        .expect("train-12k.toml")
        .replace("sram_bytes = 12288", "sram_bytes = 8000");
    std::fs::write(dir.join("t.toml"), target).expect("write the target");
    let run = support::wsel_ok(
        &dir,
        &[
            "map",
            "res.wse",
            "--mode",
            "streaming",
            "--target",
            "t.toml",
            "--batch",
            "96",
        ],
    );
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        stdout.contains("micro-batches: 2 of 48 samples")
            && stdout.contains(
                "phase 4 (`dense#3`) does not fit beside the activations kept for later phases: \
                 1536 bytes per PE of kept results and 7480 bytes of its own working set need \
                 9016 bytes per PE (1 × 16 PEs), the target has 8000"
            ),
        "{stdout}"
    );
}
