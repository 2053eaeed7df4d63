//! `wsel train --systems N` (docs/running.md, "Training on a cluster"): data-parallel
//! equivalence. The digits MLP (examples/digits/train.wse) trained on 1, 2, 3 and 4 systems
//! from the same initial weights over the same global batches must end with the weights one
//! system gives with the whole batch — 3 systems with uneven shares of 6, 5 and 5 samples.
//!
//! Tolerance. Only the order of the sums changes: one system sums a gradient over the 16
//! samples of a batch along its region's row; N systems each sum over their share (each
//! sample's term divided by the batch's 16, the loss's `over`), and the tree adds the N
//! partial sums pairwise. Each reordering
//! moves a gradient by a few float32 roundoffs (u = 6e-8) relative to the terms summed, whose
//! magnitudes here stay below 1, so a step's weights move by at most about lr · 16 · u ≈
//! 5e-8 apart, and 10 steps of SGD with momentum 0.9 add those up at most tenfold:
//! under 1e-6. The test allows 1e-5 absolute on every weight (measured: see the
//! assertion's message); a cluster that dropped a system's gradient, or divided a share's
//! sum by its own size, moves the weights by more than 1e-3 — as another batch order does, which
//! the last check shows the comparison would catch.

use std::path::Path;
use std::process::{Command, Output};

mod support;
use support::{farthest, numbers_after, repo_root, temp_dir};

const NAMES: [&str; 6] = ["w1", "b1", "w2", "b2", "w3", "b3"];

/// `wsel train` on the digits example with `args`; it must succeed.
fn wsel_train(args: &[&str]) -> Output {
    let run = Command::new(env!("CARGO_BIN_EXE_wsel"))
        .current_dir(repo_root())
        .args(["train", "examples/digits/train.wse", "--color", "never"])
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

fn train(out: &Path, args: &[&str]) -> Output {
    let out = out.to_str().expect("a UTF-8 path");
    let common = [
        "--optimizer",
        "sgd",
        "--lr",
        "0.05",
        "--steps",
        "10",
        "--batch",
        "16",
    ];
    wsel_train(&[&common[..], &["--out", out], args].concat())
}

#[test]
fn two_three_and_four_systems_train_the_weights_one_system_trains() {
    let root = temp_dir("equivalence");
    let one = root.join("one");
    let plain = train(&one, &["--seed", "1"]);
    // One system is the ordinary run, byte for byte (weights, losses and cycles).
    let single = root.join("single");
    train(&single, &["--seed", "1", "--systems", "1"]);
    for file in ["w1.npy", "b3.npy", "loss.csv"] {
        let read = |d: &Path| std::fs::read(d.join(file)).expect(file);
        assert_eq!(read(&one), read(&single), "{file} with --systems 1");
    }
    assert!(String::from_utf8_lossy(&plain.stdout).contains("loss"));
    for systems in ["2", "3", "4"] {
        let dir = root.join(systems);
        let run = train(&dir, &["--seed", "1", "--systems", systems]);
        let gap = farthest(&one, &dir, &NAMES);
        assert!(
            gap <= 1e-5,
            "{systems} systems end {gap} from one system's weights"
        );
        let stdout = String::from_utf8_lossy(&run.stdout);
        assert!(
            stdout.contains(&format!("cluster: {systems} systems in data parallel"))
                && stdout.contains("scaling efficiency"),
            "{stdout}"
        );
    }
    // Another batch order trains other weights: the comparison above can fail.
    let other = root.join("other");
    train(&other, &["--seed", "2", "--systems", "2"]);
    let moved = farthest(&one, &other, &NAMES);
    assert!(
        moved > 1e-3,
        "another batch order moved the weights by {moved} only"
    );
}

/// On `tests/targets/train-tree.toml`, four systems hang two levels below the root (3
/// links, 2 switches between a system and the store). The first gradients sent up, w3 (16 × 10 floats, 640 B: 3 packets) and then
/// b3 (40 B), find the links free: w3's sum is at the store 3·20 + 2·10 = 80 cycles of
/// latency plus 640 B / 16 B/cycle = 40 cycles after its phase ends, 120; b3's after 80 + 2.5,
/// by cycle 83. The broadcast's first byte reaches a system after the store's 100 cycles and
/// the same links and switches: 180. And the step is the later of the fabric's end and the
/// last sum's arrival, plus the store's update.
#[test]
fn the_reduction_and_the_step_take_the_cycles_derived_by_hand() {
    let dir = temp_dir("by-hand");
    let target = repo_root().join("tests/targets/train-tree.toml");
    let target = target.to_str().expect("a UTF-8 path");
    let out = dir.join("out");
    let args = ["--quiet", "--steps", "1", "--batch", "32", "--systems", "4"];
    let run = wsel_train(
        &[
            &args[..],
            &["--target", target, "--out"],
            &[out.to_str().expect("UTF-8")],
        ]
        .concat(),
    );
    let out = String::from_utf8_lossy(&run.stdout);
    assert_eq!(numbers_after(&out, "w3 "), vec![640, 120], "{out}");
    assert_eq!(numbers_after(&out, "b3 "), vec![40, 83], "{out}");
    assert_eq!(
        numbers_after(&out, "every system's weights arrive from the tree:")[0],
        180
    );
    let step = numbers_after(&out, "step 1:");
    let (fabric, summed, update, cycles) = (step[0], step[1], step[2], step[3]);
    assert_eq!(cycles, fabric.max(summed) + update, "{out}");
}
