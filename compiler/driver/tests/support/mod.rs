//! Harness shared by the driver's integration tests (`mod support;` in each): the
//! repository's root, scratch folders removed after the test, and `.npy` inputs. Each test binary compiles this module on its
//! own and uses only part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

pub mod transformer;

/// The repository's root, where `examples/`, `stdlib/` and `tests/` are.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A scratch folder of a test's, removed with everything in it when dropped: a
/// `tempfile::TempDir` named `wsel-<test binary>-<name>-<random>` under the system's temporary
/// folder. It derefs to its path, so `dir.join("x.npy")` and `&dir` as a `&Path` work.
pub struct Scratch(tempfile::TempDir);

impl std::ops::Deref for Scratch {
    type Target = Path;

    fn deref(&self) -> &Path {
        self.0.path()
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        self.0.path()
    }
}

impl AsRef<std::ffi::OsStr> for Scratch {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.0.path().as_os_str()
    }
}

/// A new, empty scratch folder for this test (see [`Scratch`]).
pub fn temp_dir(name: &str) -> Scratch {
    let prefix = format!("wsel-{}-{name}-", env!("CARGO_CRATE_NAME"));
    let dir = tempfile::Builder::new().prefix(&prefix).tempdir();
    Scratch(dir.expect("scratch folder"))
}

/// A new scratch folder (see [`Scratch`]) with what `tests/reference/{script}` writes for
/// model `name`: its input `x.npy`, its weights, and its float64 result `reference/y.npy`.
pub fn reference_data(script: &str, name: &str) -> Scratch {
    let dir = temp_dir(name);
    let status = std::process::Command::new("python3")
        .current_dir(repo_root())
        .arg(format!("tests/reference/{script}"))
        .arg(name)
        .arg(&dir)
        .status()
        .expect("python3 runs (pip install -r requirements.txt)");
    assert!(status.success(), "the reference failed for {name}");
    dir
}

/// The largest difference of `got` from `dir`'s `reference/y.npy` (float64), relative to
/// max(1, |reference|).
pub fn off_reference(dir: &Path, got: &[f32]) -> f64 {
    let bytes = std::fs::read(dir.join("reference/y.npy")).expect("the reference");
    let expected: Vec<f64> = npyz::NpyFile::new(&bytes[..])
        .and_then(|npy| npy.into_vec())
        .expect("float64 values");
    assert_eq!(got.len(), expected.len());
    got.iter()
        .zip(&expected)
        .map(|(&a, &b)| (f64::from(a) - b).abs() / b.abs().max(1.0))
        .fold(0.0, f64::max)
}

/// The backends this build has: the interpreter, cranelift and, with the `llvm` feature,
/// llvm.
pub fn backends() -> Vec<&'static str> {
    let mut all = vec!["interp", "cranelift"];
    if cfg!(feature = "llvm") {
        all.push("llvm");
    }
    all
}

/// Runs `wsel` with `args` (and `--color never`) in `dir`, checks that it succeeds, and gives
/// its output.
pub fn wsel_ok(dir: &Path, args: &[&str]) -> std::process::Output {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_wsel"))
        .current_dir(dir)
        .args(args)
        .args(["--color", "never"])
        .output()
        .expect("wsel runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    output
}

/// Writes `values` as an f32 `.npy` file of `shape` (an input a test generated).
pub fn write_f32_npy(path: &Path, shape: &[u64], values: &[f32]) {
    let tensor = wsel::tensor::Tensor {
        elem: wsel_ir::kernel::ScalarTy::F32,
        shape: shape.to_vec(),
        words: values.iter().map(|v| v.to_bits()).collect(),
    };
    wsel::tensor::write_npy_atomic(path, &tensor).expect("write .npy");
}

/// The float32 values of a .npy file.
pub fn read_f32(path: &Path) -> Vec<f32> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let npy = npyz::NpyFile::new(&bytes[..]).expect("an .npy file");
    npy.into_vec().expect("f32 values")
}

/// Deterministic values in [lo, lo + 1) (a 64-bit LCG's top bits).
pub fn lcg_values(len: usize, seed: u64, lo: f32) -> Vec<f32> {
    let mut s = seed;
    (0..len)
        .map(|_| {
            s = s
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            lo + (s >> 40) as f32 / (1u64 << 24) as f32
        })
        .collect()
}

/// Checks a trained MLP of `layers` dense layers in `ours` (loss.csv, `w1.npy`, `b1.npy`,
/// ...) against `tests/reference/train.py`'s in `theirs`: every loss within 1e-5 relative,
/// every weight within 1e-5; the largest weight difference.
pub fn matches_mlp_reference(ours: &Path, theirs: &Path, layers: usize) -> f64 {
    use transformer::{losses_of_csv, read_npy};
    let losses = losses_of_csv(&ours.join("loss.csv"));
    let expected = read_npy(&theirs.join("losses.npy"));
    assert_eq!(losses.len(), expected.len());
    for (step, (a, b)) in losses.iter().zip(&expected).enumerate() {
        assert!(
            (a - b).abs() <= 1e-5 * b.abs(),
            "step {}: {a} against {b}",
            step + 1
        );
    }
    let mut worst = 0.0f64;
    for k in 1..=layers {
        for name in [format!("w{k}.npy"), format!("b{k}.npy")] {
            let (a, b) = (read_f32(&ours.join(&name)), read_npy(&theirs.join(&name)));
            assert_eq!(a.len(), b.len(), "{name}");
            for (x, y) in a.iter().zip(&b) {
                worst = worst.max((f64::from(*x) - y).abs());
            }
        }
    }
    assert!(worst <= 1e-5, "a weight {worst} from the reference");
    worst
}

/// The largest difference between the `.npy` files `names` in folder `a` and in folder `b`.
pub fn farthest(a: &Path, b: &Path, names: &[&str]) -> f32 {
    names
        .iter()
        .map(|n| {
            let file = format!("{n}.npy");
            let (x, y) = (read_f32(&a.join(&file)), read_f32(&b.join(&file)));
            assert_eq!(x.len(), y.len(), "{file}");
            x.iter()
                .zip(&y)
                .map(|(p, q)| (p - q).abs())
                .fold(0.0, f32::max)
        })
        .fold(0.0, f32::max)
}

/// The figures of the line of `text` starting with `label` (after it), numbers only
/// (thousands separators dropped).
pub fn numbers_after(text: &str, label: &str) -> Vec<u64> {
    let line = text
        .lines()
        .find(|l| l.trim_start().starts_with(label))
        .unwrap_or_else(|| panic!("no line `{label}` in:\n{text}"));
    line[line.find(label).expect("label") + label.len()..]
        .split(|c: char| !(c.is_ascii_digit() || c == ','))
        .filter_map(|w| w.replace(',', "").parse().ok())
        .collect()
}

/// The start cycles of every task run named `task`, by PE column, from a trace.
pub fn starts(trace: &serde_json::Value, task: &str) -> Vec<(u64, u64)> {
    let events = trace
        .as_array()
        .or_else(|| trace["traceEvents"].as_array())
        .expect("trace events");
    let num = |v: &serde_json::Value| v.as_u64().expect("a number");
    let mut columns = std::collections::HashMap::new();
    for e in events.iter().filter(|e| e["name"] == "thread_name") {
        let name = e["args"]["name"].as_str().unwrap_or_default();
        if let Some((_, rc)) = name.split_once("PE (")
            && let Some((_, c)) = rc.trim_end_matches(')').split_once(", ")
        {
            let key = (num(&e["pid"]), num(&e["tid"]));
            columns.insert(key, c.parse::<u64>().expect("column"));
        }
    }
    let mut out: Vec<(u64, u64)> = events
        .iter()
        .filter(|e| e["ph"] == "X" && e["name"] == task)
        .map(|e| (columns[&(num(&e["pid"]), num(&e["tid"]))], num(&e["ts"])))
        .collect();
    out.sort_unstable();
    out
}
