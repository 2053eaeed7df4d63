//! The fold (issue #23, `docs/mapping.md` §2), proven by execution: a chain of 12 layers whose
//! staircase does not fit on `dev` with its four southern rows dead turns back north through
//! a bundle of routes that turns, onto mirrored regions. Its result on the simulated fabric
//! matches a float64 reference computed here, as the run on the whole of `dev` does.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;
use wsel::tensor::read_npy;
use wsel_ir::kernel::ScalarTy;

mod support;
use support::{temp_dir, write_f32_npy};

/// Dense layers in the chain, each followed by a `relu`; features per sample; samples.
const PAIRS: usize = 6;
const WIDTH: usize = 16;
const SAMPLES: usize = 8;

/// A value in [-1, 1) from a seed, the same on every machine.
fn value(seed: u64) -> f32 {
    let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^= z >> 31;
    (z >> 40) as f32 / (1u64 << 23) as f32 - 1.0
}

/// One dense layer's weights (row-major, `WIDTH × WIDTH`) and biases.
type Pair = (Vec<f32>, Vec<f32>);

/// The chain's program, weights and input in `dir`; the input and every pair's parameters.
fn setup(dir: &Path) -> (Vec<f32>, Vec<Pair>) {
    let mut src = format!(
        "import std.nn.{{dense, relu}};\n\nmodel chain(x: f32[B, {WIDTH}]) -> f32[B, {WIDTH}] {{\n"
    );
    let mut layers = Vec::new();
    let mut prev = "x".to_string();
    let mut lets = String::new();
    for i in 0..PAIRS {
        src += &format!("    param w{i}: f32[{WIDTH}, {WIDTH}] from \"w{i}.npy\";\n");
        src += &format!("    param b{i}: f32[{WIDTH}] from \"b{i}.npy\";\n");
        lets += &format!("    let h{i} = relu(dense({prev}, w{i}, b{i}));\n");
        prev = format!("h{i}");
        let seed = 1000 * (i as u64 + 1);
        let w: Vec<f32> = (0..WIDTH * WIDTH)
            .map(|k| 0.4 * value(seed + k as u64))
            .collect();
        let b: Vec<f32> = (0..WIDTH)
            .map(|k| 0.1 * value(seed + 500 + k as u64))
            .collect();
        write_f32_npy(
            &dir.join(format!("w{i}.npy")),
            &[WIDTH as u64, WIDTH as u64],
            &w,
        );
        write_f32_npy(&dir.join(format!("b{i}.npy")), &[WIDTH as u64], &b);
        layers.push((w, b));
    }
    src += &format!("{lets}    return {prev};\n}}\n");
    std::fs::write(dir.join("chain.wse"), src).expect("write chain.wse");
    let x: Vec<f32> = (0..SAMPLES * WIDTH).map(|k| value(k as u64)).collect();
    write_f32_npy(&dir.join("x.npy"), &[SAMPLES as u64, WIDTH as u64], &x);
    (x, layers)
}

/// relu(x · W + b) for every pair, in float64.
fn reference(x: &[f32], layers: &[Pair]) -> Vec<f64> {
    let mut h: Vec<f64> = x.iter().map(|&v| f64::from(v)).collect();
    for (w, b) in layers {
        let mut next = vec![0.0; SAMPLES * WIDTH];
        for s in 0..SAMPLES {
            for j in 0..WIDTH {
                let sum: f64 = (0..WIDTH)
                    .map(|i| h[s * WIDTH + i] * f64::from(w[i * WIDTH + j]))
                    .sum();
                next[s * WIDTH + j] = (sum + f64::from(b[j])).max(0.0);
            }
        }
        h = next;
    }
    h
}

fn wsel(dir: &Path, args: &[&str]) -> Output {
    let output = Command::new(env!("CARGO_BIN_EXE_wsel"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("wsel runs");
    assert!(
        output.status.success(),
        "wsel {args:?}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// `dev` with rows `from..16` dead, written to `dir`; its file name.
fn dev_without_rows(dir: &Path, from: u32) -> String {
    let mut target = wsel_target::Target::dev();
    target.name = "dev-short".to_string();
    for y in from..target.height {
        for x in 0..target.width {
            target.defects.add_dead_pe(wsel_target::Coord::new(x, y));
        }
    }
    std::fs::write(dir.join("short.toml"), target.to_toml_string()).expect("write target");
    "short.toml".to_string()
}

/// The orientation of every region, from `wsel map --format json`.
fn orientations(dir: &Path, target: &str) -> Vec<String> {
    let batch = SAMPLES.to_string();
    let out = wsel(
        dir,
        &[
            "map",
            "chain.wse",
            "--batch",
            &batch,
            "--target",
            target,
            "--format",
            "json",
            // Each relu a region of its own, as this chain was written to fold (fused, the
            // chain has half the regions: docs/mapping.md §4, "Fusion").
            "--no-fuse",
        ],
    );
    let json: Value = serde_json::from_slice(&out.stdout).expect("placement JSON");
    json["layers"]
        .as_array()
        .expect("layers")
        .iter()
        .map(|l| l["orientation"].as_str().expect("orientation").to_string())
        .collect()
}

/// The largest difference between the run's result on `target` and the reference.
fn run_error(dir: &Path, target: &str, expected: &[f64]) -> f64 {
    let out = dir.join(format!("y-{target}.npy"));
    let out_arg = out.to_str().expect("utf-8 path");
    wsel(
        dir,
        &[
            "run",
            "chain.wse",
            "--no-cache",
            "--no-fuse",
            "--target",
            target,
            "--input",
            "x=x.npy",
            "--output",
            out_arg,
        ],
    );
    let got = read_npy(&out, ScalarTy::F32, &[None, None]).expect("the result");
    assert_eq!(got.words.len(), expected.len());
    got.words
        .iter()
        .zip(expected)
        .map(|(&w, &e)| (f64::from(f32::from_bits(w)) - e).abs())
        .fold(0.0, f64::max)
}

#[test]
fn a_chain_folded_onto_mirrored_regions_computes_the_reference() {
    let dir = temp_dir("chain");
    let (x, layers) = setup(&dir);
    let expected = reference(&x, &layers);
    assert!(
        expected.iter().any(|&v| v > 0.1),
        "the chain is not all zero"
    );
    // On the whole of `dev` the chain may fold too (the placer takes the snuggest way a
    // layer can lie, folded or not); every region is one of the eight orientations.
    let whole = orientations(&dir, "dev");
    assert_eq!(whole.len(), 12, "{whole:?}");
    // With rows 12–15 dead it cannot run on south: the chain turns back north, and the
    // regions after the turn are mirrored north–south.
    let short = dev_without_rows(&dir, 12);
    let folded = orientations(&dir, &short);
    assert!(folded.iter().any(|o| o.contains("mirror")), "{folded:?}");
    for target in ["dev", short.as_str()] {
        let error = run_error(&dir, target, &expected);
        assert!(error < 1e-5, "{target}: off by {error}");
    }
}
