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
use support::{farthest, numbers_after, read_f32, repo_root};

const NAMES: [&str; 6] = ["w1", "b1", "w2", "b2", "w3", "b3"];

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("wsel-cpipe-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

/// Pipelined `wsel train` of the digits on `dev`, batches of 16, written to `out`, with
/// `optimizer` and `args`; it must succeed.
fn train(out: &Path, optimizer: &[&str], args: &[&str]) -> Output {
    let out = out.to_str().expect("a UTF-8 path");
    let common = ["--target", "dev", "--mode", "pipelined"];
    let run = Command::new(env!("CARGO_BIN_EXE_wsel"))
        .current_dir(repo_root())
        .args(["train", "examples/digits/train.wse", "--color", "never"])
        .args(common)
        .args(["--batch", "16", "--out", out])
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
        let _ = std::fs::remove_dir_all(&root);
    }
}

/// A step's cycles on a cluster of replicas: the slowest forward and backward, the tree's
/// reduction after it, the broadcast back, the update program — each later than the one
/// before, the step's cycles in loss.csv their end; the gradients' bytes every parameter's
/// float32 once (counted from the trained weights' files).
#[test]
fn a_replicas_step_charges_the_gradients_the_tree_and_the_update() {
    let out = temp_dir("cycles");
    let sgd = ["--optimizer", "sgd", "--lr", "0.05"];
    let run = train(&out, &sgd, &["--systems", "3", "--steps", "2"]);
    let stdout = String::from_utf8_lossy(&run.stdout);
    // "a step: forward and backward R cycles · B B of gradients out of each replica, summed
    // at the store at cycle S (+S−R) · back in every replica at K (+K−S) · update program U
    // · step T cycles"
    let n = numbers_after(&stdout, "a step:");
    let [ready, bytes, summed, up, back, down, update, step] = n[..] else {
        panic!("{n:?}");
    };
    assert!(ready < summed && summed < back && update > 0, "{n:?}");
    assert_eq!((summed - ready, back - summed), (up, down));
    assert_eq!(step, back + update);
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
    let _ = std::fs::remove_dir_all(&out);
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
    let _ = std::fs::remove_dir_all(&out);
}
