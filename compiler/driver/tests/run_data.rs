//! The data `wsel run` takes as NumPy saves it: model inputs from an `.npz` archive by name,
//! float64 inputs rounded to f32 with a one-line warning (and the same result as float32
//! data), class labels of any integer width; and a `param` file that is missing reported at
//! its `param` line before anything is built.

use std::path::{Path, PathBuf};
use std::process::Command;

use npyz::WriterBuilder;

mod support;
use support::temp_dir;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn npy<T: npyz::Serialize + npyz::AutoSerialize + Copy>(shape: &[u64], values: &[T]) -> Vec<u8> {
    let mut out = Vec::new();
    let mut writer = npyz::WriteOptions::<T>::new()
        .default_dtype()
        .shape(shape)
        .writer(&mut out)
        .begin_nd()
        .expect("npy header");
    writer.extend(values.iter().copied()).expect("npy values");
    writer.finish().expect("npy end");
    out
}

/// The first 20 samples of the digits test split.
fn digits_x() -> Vec<f32> {
    let x = wsel::tensor::read_npy(
        &repo().join("examples/digits/data/x_test.npy"),
        wsel_ir::kernel::ScalarTy::F32,
        &[None, Some(64)],
    )
    .expect("x_test");
    x.to_f32()[..20 * 64].to_vec()
}

fn run_digits(dir: &Path, input: &str, labels: &str) -> (String, String, Vec<u8>) {
    let out = Command::new(env!("CARGO_BIN_EXE_wsel"))
        .arg("run")
        .arg(repo().join("examples/digits/main.wse"))
        .args([
            "--no-cache",
            "--color",
            "never",
            "--input",
            input,
            "--labels",
            labels,
        ])
        .arg("--output")
        .arg(dir.join("probs.npy"))
        .current_dir(dir)
        .output()
        .expect("wsel runs");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let probs = std::fs::read(dir.join("probs.npy")).expect("result");
    (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        probs,
    )
}

#[test]
fn npz_inputs_float64_inputs_and_wide_labels() {
    let dir = temp_dir("inputs");
    let x = digits_x();
    std::fs::write(dir.join("x.npy"), npy(&[20, 64], &x)).expect("x");
    let wide: Vec<f64> = x.iter().map(|&v| f64::from(v)).collect();
    std::fs::write(dir.join("x64.npy"), npy(&[20, 64], &wide)).expect("x64");
    let labels = wsel::tensor::read_labels(&repo().join("examples/digits/data/y_test.npy"), 20)
        .expect("labels");
    let bytes: Vec<u8> = labels.iter().map(|&l| l as u8).collect();
    std::fs::write(dir.join("y.npy"), npy(&[20], &bytes)).expect("uint8 labels");
    let archive = std::fs::File::create(dir.join("data.npz")).expect("npz");
    let mut zip = zip::ZipWriter::new(archive);
    zip.start_file("x.npy", zip::write::SimpleFileOptions::default())
        .expect("member");
    std::io::Write::write_all(&mut zip, &npy(&[20, 64], &x)).expect("member bytes");
    zip.finish().expect("npz end");

    let (stdout, stderr, reference) = run_digits(&dir, "x=x.npy", "y.npy");
    assert!(!stderr.contains("warning"), "{stderr}");
    assert!(stdout.contains("accuracy: "), "{stdout}");
    let (_, stderr, from_f64) = run_digits(&dir, "x=x64.npy", "y.npy");
    assert!(
        stderr.contains(
            "warning: the data for `x` holds float64 values: rounded to f32 (save float32 data to skip this)"
        ),
        "{stderr}"
    );
    assert_eq!(
        from_f64, reference,
        "float64 data rounds to the float32 data's result"
    );
    let (_, _, from_npz) = run_digits(&dir, "x=data.npz", "y.npy");
    assert_eq!(from_npz, reference);
}

#[test]
fn a_missing_param_file_stops_the_run_at_its_param_line() {
    let dir = temp_dir("param");
    let program = std::fs::read_to_string(repo().join("examples/digits/main.wse"))
        .expect("digits")
        .replace("data/w2.npy", "data/w22.npy")
        .replace(
            "data/",
            &format!("{}/", repo().join("examples/digits/data").display()),
        );
    std::fs::write(dir.join("main.wse"), program).expect("program");
    let out = Command::new(env!("CARGO_BIN_EXE_wsel"))
        .args(["run", "main.wse", "--no-cache", "--color", "never"])
        .current_dir(&dir)
        .output()
        .expect("wsel runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("[E0801] Error: cannot read `"), "{stderr}");
    assert!(stderr.contains("main.wse:14:"), "{stderr}");
    assert!(stderr.contains("w2.npy`?"), "{stderr}");
}
