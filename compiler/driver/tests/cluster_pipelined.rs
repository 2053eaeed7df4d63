//! `wsel train --mode pipelined --systems N` (docs/running.md, "Pipelined training on a
//! cluster"): replicas, each with its weights and optimizer state in its own SRAM, their
//! gradients summed through the swarm and the sum applied by every replica's update program.
//! The digits MLP (examples/digits/train.wse) on `dev`, trained on 2, 3 and 4 systems from the
//! same initial weights over the same batches, must end with the weights one system gives
//! with the whole batch (`wsel train --mode pipelined`, itself checked against
//! tests/reference/train.py in `training.rs`) — 3 systems with uneven shares of 6, 5 and 5.
//!
//! Tolerance. Only the order of float32 sums changes: one system sums a gradient over the 16
//! samples along its region's rows; a replica sums over its share (each term divided by the
//! batch's 16, the loss's `over`) and the tree adds the N partial sums pairwise. Each
//! reordering moves a gradient by a few roundoffs (u = 6e-8) of terms below 1, so a step's
//! weights move at most about lr · 16 · u apart (5e-8 for SGD at lr 0.05; Adam's step is
//! at most lr = 0.005 per weight whatever the gradient, but a sign flip of a tiny m̂ could
//! move one weight by that much, which does not happen here); 6 steps with momentum 0.9 add
//! those up at most sixfold: under 1e-6. The test allows 1e-5 (measured: at most 6e-8 for SGD and 2.1e-7 for Adam; see the
//! assertion's message); a replica that dropped another's gradient, or took its share's
//! mean instead of its part of the batch's, moves the weights by more than 1e-3 — as another
//! batch order does, which the last check shows the comparison would catch.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod support;
use support::{farthest, numbers_after, read_f32, repo_root, temp_dir, write_f32_npy};

const NAMES: [&str; 6] = ["w1", "b1", "w2", "b2", "w3", "b3"];

/// Pipelined `wsel train` of the digits on `dev`, batches of 16, written to `out`, with
/// `optimizer` and `args`; it must succeed.
fn train(out: &Path, optimizer: &[&str], args: &[&str]) -> Output {
    let digits = Path::new("examples/digits/train.wse");
    train_file(digits, "16", out, optimizer, args)
}

/// `train` of the model and `train` item in `file`, in batches of `batch`.
fn train_file(file: &Path, batch: &str, out: &Path, optimizer: &[&str], args: &[&str]) -> Output {
    let out = out.to_str().expect("a UTF-8 path");
    let common = ["--target", "dev", "--mode", "pipelined"];
    let run = Command::new(env!("CARGO_BIN_EXE_wsel"))
        .current_dir(repo_root())
        .arg("train")
        .arg(file)
        .args(["--color", "never"])
        .args(common)
        .args(["--batch", batch, "--out", out])
        .args(optimizer)
        .args(args)
        .output()
        .expect("wsel runs");
    assert!(
        run.status.success(),
        "wsel train {args:?} failed: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    run
}

#[test]
fn two_three_and_four_replicas_train_the_weights_one_system_trains() {
    let sgd = ["--optimizer", "sgd", "--momentum", "0.9", "--lr", "0.05"];
    let adam = ["--optimizer", "adam", "--lr", "0.005"];
    for (name, optimizer) in [("sgd", &sgd[..]), ("adam", &adam[..])] {
        let root = temp_dir(name);
        let optimizer = &[optimizer, &["--steps", "6"][..]].concat();
        let one = root.join("one");
        train(&one, optimizer, &["--seed", "1"]);
        // One system is the ordinary pipelined run, byte for byte.
        let single = root.join("single");
        train(&single, optimizer, &["--seed", "1", "--systems", "1"]);
        for file in ["w1.npy", "b3.npy", "loss.csv"] {
            let read = |d: &Path| std::fs::read(d.join(file)).expect(file);
            assert_eq!(read(&one), read(&single), "{name}: {file} with --systems 1");
        }
        for systems in ["2", "3", "4"] {
            let dir = root.join(systems);
            let run = train(&dir, optimizer, &["--seed", "1", "--systems", systems]);
            let gap = farthest(&one, &dir, &NAMES);
            assert!(
                gap <= 1e-5,
                "{name}: {systems} replicas end {gap} from one system's weights"
            );
            let stdout = String::from_utf8_lossy(&run.stdout);
            assert!(
                stdout.contains(&format!("cluster: {systems} replicas"))
                    && stdout.contains("scaling efficiency"),
                "{stdout}"
            );
        }
        // Another batch order trains other weights: the comparison above can fail.
        let other = root.join("other");
        train(&other, optimizer, &["--seed", "2", "--systems", "2"]);
        let moved = farthest(&one, &other, &NAMES);
        assert!(moved > 1e-3, "{name}: another order moved only {moved}");
    }
}

/// The digits MLP with a layernorm after its first layer (g and b from 1 and 0).
fn layernorm_digits(dir: &Path) -> PathBuf {
    let init = repo_root().join("examples/digits/data/init");
    write_f32_npy(&dir.join("lg.npy"), &[32], &[1.0; 32]);
    write_f32_npy(&dir.join("lb.npy"), &[32], &[0.0; 32]);
    let data = repo_root().join("examples/digits/data");
    let model = format!(
        "import std.nn.{{dense, layernorm, relu, softmax}};\n\
         model m(x: f32[B, 64]) -> f32[B, 10] {{\n\
         \x20   param w1: f32[64, 32] from \"{init}/w1.npy\";\n\
         \x20   param b1: f32[32] from \"{init}/b1.npy\";\n\
         \x20   param lg: f32[32] from \"lg.npy\";\n\
         \x20   param lb: f32[32] from \"lb.npy\";\n\
         \x20   param w3: f32[32, 10] from \"w3.npy\";\n\
         \x20   param b3: f32[10] from \"b3.npy\";\n\
         \x20   let h = relu(layernorm(dense(x, w1, b1), lg, lb));\n\
         \x20   return softmax(dense(h, w3, b3));\n\
         }}\n\
         train m {{\n\
         \x20   input x = \"{data}/x_train.npy\";\n\
         \x20   labels = \"{data}/y_train.npy\";\n\
         \x20   loss = \"cross_entropy\";\n\
         }}\n",
        init = init.display(),
        data = data.display(),
    );
    let w3: Vec<f32> = (0..320)
        .map(|k| ((k * 37 % 101) as f32 - 50.0) / 200.0)
        .collect();
    write_f32_npy(&dir.join("w3.npy"), &[32, 10], &w3);
    write_f32_npy(&dir.join("b3.npy"), &[10], &[0.0; 10]);
    let file = dir.join("m.wse");
    std::fs::write(&file, model).expect("write the model");
    file
}

/// layernorm on replicas, as dense: its deferred backward keeps dg and db, the drains
/// `layernorm_train_grad_g/_b` stream them out, and `layernorm_train_fill` takes the
/// cluster's sums in and updates g and b. Two replicas end where one system does, within the
/// digits' 1e-5 (module docs), and another batch order ends elsewhere.
#[test]
fn layernorm_trains_on_replicas_as_on_one_system() {
    let root = temp_dir("layernorm");
    let file = layernorm_digits(&root);
    let names = ["w1", "b1", "lg", "lb", "w3", "b3"];
    two_replicas_train_as_one_system(&root, &file, "16", &names, &["lg", "lb"]);
}

/// `file` trained 4 SGD steps in batches of `batch` on one system and on two replicas from
/// the same order: the parameters `names` end within 1e-5 (module docs); another batch order
/// on two replicas moves the parameters `moved` by more than 1e-3, so the comparison can fail.
fn two_replicas_train_as_one_system(
    root: &Path,
    file: &Path,
    batch: &str,
    names: &[&str],
    moved: &[&str],
) {
    let sgd = ["--optimizer", "sgd", "--momentum", "0.9", "--lr", "0.05"];
    let sgd = &[&sgd[..], &["--steps", "4"][..]].concat();
    let one = root.join("one");
    train_file(file, batch, &one, sgd, &["--seed", "1"]);
    let two = root.join("two");
    let run = train_file(file, batch, &two, sgd, &["--seed", "1", "--systems", "2"]);
    let gap = farthest(&one, &two, names);
    assert!(
        gap <= 1e-5,
        "2 replicas end {gap} from one system's weights"
    );
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(stdout.contains("cluster: 2 replicas"), "{stdout}");
    let other = root.join("other");
    train_file(file, batch, &other, sgd, &["--seed", "2", "--systems", "2"]);
    let far = farthest(&one, &other, moved);
    assert!(far > 1e-3, "another order moved {moved:?} only {far}");
}

/// tests/reference/transformer_train.py's `emb_mlp` (token and position embeddings of 11
/// features, context 3, into a softmax), its data and initial weights written into `dir` by
/// the reference script.
fn embedding_chain(dir: &Path) -> PathBuf {
    let status = Command::new("python3")
        .current_dir(repo_root())
        .args(["tests/reference/transformer_train.py", "emb_mlp"])
        .arg(dir)
        .args(["--steps", "1", "--batch", "6", "--lr", "0.05"])
        .status()
        .expect("python3 runs (pip install -r requirements.txt)");
    assert!(status.success(), "the reference script failed");
    let model = "import std.nn.{embedding, dense, softmax};\n\
         model emb_mlp(ids: f32[B, 1]) -> f32[B, 5] {\n\
         \x20   param wte: f32[7, 11] from \"wte.npy\";\n\
         \x20   param wpe: f32[3, 11] from \"wpe.npy\";\n\
         \x20   param w: f32[11, 5] from \"w.npy\";\n\
         \x20   param c: f32[5] from \"c.npy\";\n\
         \x20   return softmax(dense(embedding(ids, wte, wpe), w, c));\n\
         }\n\
         train emb_mlp {\n\
         \x20   input ids = \"ids.npy\";\n\
         \x20   labels = \"labels.npy\";\n\
         \x20   loss = \"cross_entropy\";\n\
         }\n";
    let file = dir.join("emb_mlp.wse");
    std::fs::write(&file, model).expect("write the model");
    file
}

/// embedding on replicas, as layernorm: its deferred backward keeps the table's and the
/// positions' gradients, the drains `embedding_train_grad_table/_pos` stream them out, and
/// `embedding_train_fill` takes the cluster's sums in and updates both. Batches of 6 (two
/// whole sequences; a replica's share one), 4 SGD steps: two replicas end where one system
/// does within 1e-5 (measured 3e-8), and another batch order ends elsewhere.
#[test]
fn an_embedding_trains_on_replicas_as_on_one_system() {
    let root = temp_dir("embedding");
    let file = embedding_chain(&root);
    two_replicas_train_as_one_system(
        &root,
        &file,
        "6",
        &["wte", "wpe", "w", "c"],
        &["wte", "wpe"],
    );
}

/// A step's cycles on a cluster of replicas, each figure simulated: the forward and backward
/// programs, the drains that stream the gradients out of the fabric, the tree's reduction
/// from the cycle the last gradient left, the fill program that takes the sums down the tree
/// (its weight store the tree's feed: on `dev`, a store of 100 cycles under a tree of
/// 16 B/cycle links of 20 cycles and switches of 10, the first byte after 100 + 20 + 10 + 20
/// = 150 cycles for two systems, then 16 B/cycle) into the fabric and updates. With two
/// replicas of equal shares the drains end together, so the step is the sum of the four;
/// the step's cycles in loss.csv are that sum; the
/// gradients' bytes every parameter's float32 once (counted from the trained weights'
/// files). The drains: six programs (one per parameter), each after the fabric's switch
/// (`dev`: 100 cycles), each streaming its parameter's gradient out at most one wavelet per
/// cycle per column — so at least 600 cycles plus the longest column of w1 (64 rows).
#[test]
fn a_replicas_step_charges_the_drains_the_tree_and_the_fill() {
    let out = temp_dir("cycles");
    let sgd = ["--optimizer", "sgd", "--lr", "0.05"];
    let run = train(&out, &sgd, &["--systems", "2", "--steps", "2"]);
    let stdout = String::from_utf8_lossy(&run.stdout);
    // "a step: forward and backward F cycles · B B of gradients out of each replica's fabric
    // in D cycles, the last leaving at R · summed at the store at cycle S (+S−R) · down the
    // tree (first byte after L cycles, W B/cycle), into the fabric and the update U · step T
    // cycles"
    let n = numbers_after(&stdout, "a step:");
    let [
        fb,
        bytes,
        drain,
        ready,
        summed,
        up,
        first,
        rate,
        update,
        step,
    ] = n[..]
    else {
        panic!("{n:?}");
    };
    assert!(drain >= 6 * 100 + 64, "{n:?}");
    assert_eq!(ready, fb + drain, "{n:?}");
    assert!(ready < summed && summed - ready == up, "{n:?}");
    assert_eq!((first, rate), (150, 16));
    // The fill takes every sum's bytes in at the feed's rate at least.
    assert!(update > first + bytes / rate, "{n:?}");
    assert_eq!(step, fb + drain + up + update);
    let params: usize = NAMES
        .iter()
        .map(|n| read_f32(&out.join(format!("{n}.npy"))).len())
        .sum();
    assert_eq!(bytes, 4 * params as u64);
    // loss.csv: every step's cycles the step's (the first lacks the fabric's switch before
    // its forward program).
    let csv = std::fs::read_to_string(out.join("loss.csv")).expect("loss.csv");
    let header: Vec<&str> = csv.lines().next().expect("a header").split(',').collect();
    let at = header
        .iter()
        .position(|h| *h == "cycles")
        .expect("a cycles column");
    let first: u64 = csv
        .lines()
        .nth(1)
        .expect("a step")
        .split(',')
        .nth(at)
        .expect("cycles")
        .parse()
        .expect("a number");
    assert_eq!(first, step);
}

/// One dense layer of `inputs` × 10 (then softmax), trained by 2 replicas on `dev`: its
/// step's drain cycles. The data and initial weights are written by the test.
fn drain_of_one_layer(inputs: u64) -> u64 {
    let dir = temp_dir(&format!("layer-{inputs}"));
    let values = |n: u64, scale: f32| -> Vec<f32> {
        (0..n)
            .map(|i| scale * ((i * 7 % 13) as f32 - 6.0))
            .collect()
    };
    write_f32_npy(
        &dir.join("w.npy"),
        &[inputs, 10],
        &values(inputs * 10, 0.01),
    );
    write_f32_npy(&dir.join("b.npy"), &[10], &values(10, 0.0));
    write_f32_npy(&dir.join("x.npy"), &[16, inputs], &values(16 * inputs, 0.1));
    let labels = wsel::tensor::Tensor {
        elem: wsel_ir::kernel::ScalarTy::I32,
        shape: vec![16],
        words: (0..16).map(|i| i % 10).collect(),
    };
    wsel::tensor::write_npy_atomic(&dir.join("y.npy"), &labels).expect("labels written");
    let model = format!(
        "import std.nn.{{dense, softmax}};\n\
         model m(x: f32[B, {inputs}]) -> f32[B, 10] {{\n\
             param w: f32[{inputs}, 10] from \"w.npy\";\n\
             param b: f32[10] from \"b.npy\";\n\
             return softmax(dense(x, w, b));\n\
         }}\n\
         train m {{\n\
             input x = \"x.npy\";\n\
             labels = \"y.npy\";\n\
             loss = \"cross_entropy\";\n\
             optimizer = \"sgd\";\n\
             lr = 0.05;\n\
         }}\n"
    );
    let file = dir.join("m.wse");
    std::fs::write(&file, model).expect("the model is written");
    let out = dir.join("out");
    let run = Command::new(env!("CARGO_BIN_EXE_wsel"))
        .current_dir(&dir)
        .args(["train", file.to_str().expect("UTF-8"), "--color", "never"])
        .args(["--target", "dev", "--mode", "pipelined", "--batch", "16"])
        .args(["--steps", "1", "--systems", "2", "--out"])
        .arg(&out)
        .output()
        .expect("wsel runs");
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&run.stderr)
    );
    numbers_after(&stdout, "a step:")[2]
}

/// The drains take longer for a larger layer: two programs (w and b), each after the
/// fabric's switch, and at least one wavelet per row of w through a column's last link.
#[test]
fn the_drain_grows_with_the_layer() {
    let (small, large) = (drain_of_one_layer(8), drain_of_one_layer(48));
    assert!(small >= 2 * 100 + 8, "{small}");
    assert!(large >= 2 * 100 + 48, "{large}");
    assert!(large > small, "{small} then {large}");
}

/// The library call (`wsel::train_session::train`, which Python's `wsel.train` makes) trains
/// replicas as the command line does: the same weights, bit for bit, and the cluster's steps.
#[test]
fn the_library_call_trains_replicas_as_the_command_does() {
    use clap::Parser;
    let out = temp_dir("library");
    let flags = [
        "--systems",
        "2",
        "--optimizer",
        "sgd",
        "--lr",
        "0.05",
        "--steps",
        "2",
    ];
    train(&out, &flags, &[]);
    let file = repo_root().join("examples/digits/train.wse");
    let file = file.to_str().expect("a UTF-8 path");
    let common = ["--target", "dev", "--mode", "pipelined", "--batch", "16"];
    let cli = wsel::cli::Cli::parse_from([&["wsel", "train", file][..], &common, &flags].concat());
    let wsel::cli::Command::Train(args) = cli.command else {
        panic!("not a train command");
    };
    let request = wsel::train_session::TrainRequest {
        file: &args.file,
        text: None,
        inputs: Vec::new(),
        labels: None,
        params: Vec::new(),
        settings: wsel::train_settings::TrainOverrides::of_args(&args),
    };
    let outcome = wsel::train_session::train(&request).unwrap_or_else(|f| panic!("{:?}", f.error));
    for (name, tensor) in &outcome.weights {
        let words: Vec<u32> = read_f32(&out.join(format!("{name}.npy")))
            .iter()
            .map(|v| v.to_bits())
            .collect();
        assert_eq!(tensor.words, words, "{name}");
    }
    let csv = std::fs::read_to_string(out.join("loss.csv")).expect("loss.csv");
    let cycles: Vec<u64> = outcome.steps.iter().map(|s| s.cycles).collect();
    let written: Vec<u64> = csv
        .lines()
        .skip(1)
        .map(|l| {
            l.split(',')
                .nth(7)
                .expect("cycles")
                .parse()
                .expect("a number")
        })
        .collect();
    assert_eq!(cycles, written);
}
