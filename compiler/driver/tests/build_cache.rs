//! The build artifact end to end (`crate::cache`): `wsel build` writes it, `wsel run` reuses it
//! and says so, with bit-identical results and identical cycle counts; an edited imported
//! module, another target, batch, mode or backend, another working directory, and a damaged
//! artifact each make the run say why in one line and build afresh — never a panic.
//!
//! Every test works on a copy of an example in its own temporary folder, so the artifacts of
//! tests running in parallel never meet.

use std::path::Path;
use std::process::{Command, Output};

mod support;
use support::{Scratch, repo_root, temp_dir};

/// Copies `examples/<name>/main.wse` and its data into a new folder.
fn copy_example(name: &str, test: &str) -> Scratch {
    let dir = temp_dir(test);
    let from = repo_root().join("examples").join(name);
    std::fs::copy(from.join("main.wse"), dir.join("main.wse")).expect("copy main.wse");
    std::fs::create_dir_all(dir.join("data")).expect("data folder");
    for entry in std::fs::read_dir(from.join("data")).expect("data") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "npy") {
            std::fs::copy(
                &path,
                dir.join("data").join(path.file_name().expect("name")),
            )
            .expect("copy data");
        }
    }
    dir
}

/// The axpy example split in two: `lib.wse` holds the constant, the kernel and the layer;
/// `main.wse` imports the layer and holds the model and the `run` item.
fn split_axpy(test: &str) -> Scratch {
    let dir = copy_example("axpy", test);
    let text = std::fs::read_to_string(dir.join("main.wse")).expect("axpy source");
    let at = text.find("model saxpy").expect("the model");
    std::fs::write(dir.join("lib.wse"), &text[..at]).expect("lib.wse");
    std::fs::write(
        dir.join("main.wse"),
        format!("import lib.{{axpy}};\n\n{}", &text[at..]),
    )
    .expect("main.wse");
    dir
}

fn wsel(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_wsel"))
        .current_dir(dir)
        .args(args)
        .args(["--color", "never"])
        .output()
        .expect("wsel runs")
}

/// Runs `wsel` and asserts success; returns standard error.
fn ok(dir: &Path, args: &[&str]) -> String {
    let output = wsel(dir, args);
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(
        output.status.success(),
        "wsel {args:?} failed:\n{}{stderr}",
        String::from_utf8_lossy(&output.stdout)
    );
    stderr
}

/// The lines about the build artifact.
fn artifact_lines(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.contains("build artifact"))
        .collect()
}

const REUSED: &str =
    "reusing build artifact .wsel/main.wselb (parse, map and code generation skipped)";

/// The line of a run that reuses the artifact `.wsel/<name>.wselb`.
fn reused(name: &str) -> String {
    format!("reusing build artifact .wsel/{name}.wselb (parse, map and code generation skipped)")
}

/// The simulation part of a `--report --report-detail` (everything but wall times and paths:
/// the totals, and per PE and per link).
fn simulation(dir: &Path, report: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(dir.join(report)).expect("report");
    let json: serde_json::Value = serde_json::from_str(&text).expect("report JSON");
    json["simulation"].clone()
}

fn bytes(dir: &Path, file: &str) -> Vec<u8> {
    std::fs::read(dir.join(file)).expect("result file")
}

#[test]
fn build_then_run_reuses_the_artifact_bit_for_bit() {
    // rowsum imports std.collectives: the key covers stdlib modules too.
    let dir = copy_example("rowsum", "reuse");
    for backend in ["cranelift", "interp"] {
        let fresh = ok(
            &dir,
            &[
                "run",
                "main.wse",
                "--no-cache",
                "--backend",
                backend,
                "--output",
                "fresh.npy",
                "--report",
                "fresh.json",
                "--report-detail",
            ],
        );
        assert!(artifact_lines(&fresh).is_empty(), "{fresh}");

        // The default backend's artifact is main.wselb; another's is named by it.
        let name = if backend == "cranelift" {
            "main".to_string()
        } else {
            format!("main.{backend}")
        };
        let built = ok(&dir, &["build", "main.wse", "--backend", backend]);
        assert!(
            built.contains(&format!("wrote build artifact .wsel/{name}.wselb")),
            "{built}"
        );

        let again = ok(
            &dir,
            &[
                "run",
                "main.wse",
                "--backend",
                backend,
                "--output",
                "cached.npy",
                "--report",
                "cached.json",
                "--report-detail",
            ],
        );
        assert_eq!(
            artifact_lines(&again),
            [reused(&name)],
            "{backend}: {again}"
        );
        assert_eq!(
            bytes(&dir, "fresh.npy"),
            bytes(&dir, "cached.npy"),
            "{backend}"
        );
        let (a, b) = (
            simulation(&dir, "fresh.json"),
            simulation(&dir, "cached.json"),
        );
        assert!(a["tasks_run"].as_u64().is_some_and(|c| c > 0), "{a}");
        assert_eq!(a, b, "{backend}: the simulation differs");
    }
}

#[test]
fn a_run_writes_the_artifact_and_the_next_run_reuses_it() {
    let dir = copy_example("rowsum", "run-twice");
    // The first run builds and saves the artifact without a word about it.
    let first = ok(&dir, &["run", "main.wse", "--output", "a.npy"]);
    assert!(artifact_lines(&first).is_empty(), "{first}");
    assert!(dir.join(".wsel/main.wselb").is_file());
    let second = ok(&dir, &["run", "main.wse", "--output", "b.npy"]);
    assert_eq!(artifact_lines(&second), [REUSED], "{second}");
    assert_eq!(bytes(&dir, "a.npy"), bytes(&dir, "b.npy"));

    // `wsel build` on an unchanged program reuses it too, and prints what it would print.
    let built = wsel(&dir, &["build", "main.wse"]);
    let stderr = String::from_utf8_lossy(&built.stderr);
    assert_eq!(artifact_lines(&stderr), [REUSED], "{stderr}");
    assert!(String::from_utf8_lossy(&built.stdout).starts_with("built `rowsum` for batch 8"));
}

#[test]
fn editing_an_imported_module_invalidates_the_artifact() {
    let dir = split_axpy("edit");
    ok(&dir, &["build", "main.wse"]);
    let lib = dir.join("lib.wse");
    let text = std::fs::read_to_string(&lib).expect("lib.wse");
    std::fs::write(&lib, text.replace("ALPHA: f32 = 2.5", "ALPHA: f32 = 3.5")).expect("edit");

    let rebuilt = ok(&dir, &["run", "main.wse", "--output", "edited.npy"]);
    assert_eq!(
        artifact_lines(&rebuilt),
        ["not reusing build artifact .wsel/main.wselb: source changed: lib.wse"],
        "{rebuilt}"
    );
    ok(
        &dir,
        &["run", "main.wse", "--no-cache", "--output", "fresh.npy"],
    );
    assert_eq!(bytes(&dir, "edited.npy"), bytes(&dir, "fresh.npy"));

    let again = ok(&dir, &["run", "main.wse", "--output", "again.npy"]);
    assert_eq!(artifact_lines(&again), [REUSED], "{again}");
    assert_eq!(bytes(&dir, "again.npy"), bytes(&dir, "fresh.npy"));

    // A deleted module: the artifact names it, and the rebuild reports the missing import.
    std::fs::remove_file(&lib).expect("remove lib.wse");
    let output = wsel(&dir, &["run", "main.wse"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(
        stderr.contains("not reusing build artifact .wsel/main.wselb: source missing: lib.wse"),
        "{stderr}"
    );
}

#[test]
fn another_target_batch_mode_micro_order_or_backend_misses() {
    let dir = split_axpy("settings");
    ok(&dir, &["build", "main.wse"]);
    let cases: [(&[&str], &str); 5] = [
        (&["--target", "wse2"], "target changed (dev → wse2)"),
        (&["--batch", "4"], "batch changed (8 → 4)"),
        (&["--mode", "pipelined"], "mode changed (auto → pipelined)"),
        (
            &["--micro-order", "layer"],
            "mode changed (auto → auto, micro-order layer)",
        ),
        (
            &["--backend", "interp"],
            "backend changed (cranelift → interp)",
        ),
    ];
    for (flags, why) in cases {
        // `wsel build` checks the artifact exactly as `wsel run` does, without simulating.
        let mut args = vec!["build", "main.wse", "-o", ".wsel/other.wselb"];
        ok(&dir, &args);
        args.extend_from_slice(flags);
        let stderr = ok(&dir, &args);
        assert_eq!(
            artifact_lines(&stderr),
            [
                format!("not reusing build artifact .wsel/other.wselb: {why}"),
                "wrote build artifact .wsel/other.wselb".to_string()
            ],
            "{flags:?}"
        );
    }
    // A run with another batch builds its own artifact, named by the batch, and its result
    // is the fresh one.
    let stderr = ok(
        &dir,
        &["run", "main.wse", "--batch", "2", "--output", "two.npy"],
    );
    assert!(artifact_lines(&stderr).is_empty(), "{stderr}");
    ok(
        &dir,
        &[
            "run",
            "main.wse",
            "--batch",
            "2",
            "--no-cache",
            "--output",
            "fresh.npy",
        ],
    );
    assert_eq!(bytes(&dir, "two.npy"), bytes(&dir, "fresh.npy"));
}

#[test]
fn alternating_settings_reuse_an_artifact_each_and_the_oldest_go() {
    let dir = split_axpy("alternate");
    ok(&dir, &["build", "main.wse"]);
    let runs: [(&[&str], &str); 3] = [
        (&["--batch", "2"], "main.b2"),
        (&["--backend", "interp"], "main.interp"),
        (
            &["--target", "wse2", "--mode", "pipelined"],
            "main.wse2.pipelined",
        ),
    ];
    for (flags, _) in runs {
        ok(&dir, &[&["build", "main.wse"], flags].concat());
    }
    // Every setting keeps its own build: alternating between them rebuilds nothing.
    for (flags, name) in runs.iter().rev() {
        let stderr = ok(
            &dir,
            &[&["run", "main.wse", "--output", "y.npy"], *flags].concat(),
        );
        assert_eq!(artifact_lines(&stderr), [reused(name)], "{flags:?}");
    }
    let stderr = ok(&dir, &["run", "main.wse", "--output", "y.npy"]);
    assert_eq!(artifact_lines(&stderr), [REUSED]);

    // Past eight named builds the least recently written go; the plain one stays.
    for batch in 3..=9 {
        ok(&dir, &["build", "main.wse", "--batch", &batch.to_string()]);
    }
    let mut kept: Vec<String> = std::fs::read_dir(dir.join(".wsel"))
        .expect(".wsel")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|name| name.ends_with(".wselb"))
        .collect();
    kept.sort();
    let mut expected: Vec<String> = (3..=9).map(|b| format!("main.b{b}.wselb")).collect();
    expected.extend(["main.wse2.pipelined.wselb".into(), "main.wselb".into()]);
    expected.sort();
    assert_eq!(kept, expected);
}

#[test]
fn an_edited_target_file_misses() {
    let dir = copy_example("rowsum", "target-file");
    let mut target = wsel_target::Target::preset("dev").expect("dev");
    target.name = "mine".into();
    std::fs::write(dir.join("mine.toml"), target.to_toml_string()).expect("target file");
    ok(&dir, &["build", "main.wse", "--target", "mine.toml"]);
    let same = ok(&dir, &["build", "main.wse", "--target", "mine.toml"]);
    assert_eq!(artifact_lines(&same), [reused("main.mine")], "{same}");

    target.sram_bytes *= 2;
    std::fs::write(dir.join("mine.toml"), target.to_toml_string()).expect("edit target file");
    let edited = ok(&dir, &["build", "main.wse", "--target", "mine.toml"]);
    assert_eq!(
        artifact_lines(&edited)[0],
        "not reusing build artifact .wsel/main.mine.wselb: the description of target mine changed"
    );
}

#[test]
fn damaged_or_foreign_artifacts_are_reported_and_rebuilt() {
    let dir = copy_example("rowsum", "damaged");
    ok(&dir, &["run", "main.wse", "--output", "reference.npy"]);
    let path = dir.join(".wsel/main.wselb");
    let good = std::fs::read(&path).expect("artifact");
    let mut flipped = good.clone();
    let middle = flipped.len() / 2;
    flipped[middle] ^= 0x40;
    let mut newer = good.clone();
    newer[8] = newer[8].wrapping_add(1);
    let version = |b: &[u8]| u32::from_le_bytes([b[8], b[9], b[10], b[11]]);
    let other_format = format!(
        "it has format {}, this wsel reads format {}",
        version(&newer),
        version(&good)
    );
    let cases: [(&str, Vec<u8>, &str); 6] = [
        ("empty", Vec::new(), "it is not a wsel build artifact"),
        (
            "text",
            b"hello, I am not an artifact\n".to_vec(),
            "it is not a wsel build artifact",
        ),
        ("header only", good[..20].to_vec(), "it is truncated"),
        (
            "truncated",
            good[..good.len() / 2].to_vec(),
            "it is truncated or damaged (checksum mismatch)",
        ),
        (
            "flipped bit",
            flipped,
            "it is truncated or damaged (checksum mismatch)",
        ),
        ("other format", newer, &other_format),
    ];
    for (what, bytes_on_disk, why) in cases {
        std::fs::write(&path, &bytes_on_disk).expect("damage the artifact");
        let output = wsel(&dir, &["run", "main.wse", "--output", "out.npy"]);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(output.status.success(), "{what}: {stderr}");
        assert!(!stderr.contains("panicked"), "{what}: {stderr}");
        assert_eq!(
            artifact_lines(&stderr),
            [format!(
                "not reusing build artifact .wsel/main.wselb: {why}"
            )],
            "{what}"
        );
        assert_eq!(
            bytes(&dir, "out.npy"),
            bytes(&dir, "reference.npy"),
            "{what}"
        );
    }
    // Rewritten: valid again.
    let stderr = ok(&dir, &["run", "main.wse", "--output", "out.npy"]);
    assert_eq!(artifact_lines(&stderr), [REUSED]);

    // A folder where the artifact should be: reported, the run goes on without one.
    std::fs::remove_file(&path).expect("remove");
    std::fs::create_dir_all(&path).expect("folder in the way");
    let stderr = ok(&dir, &["run", "main.wse", "--output", "out.npy"]);
    let lines = artifact_lines(&stderr);
    assert_eq!(lines.len(), 2, "{stderr}");
    assert!(lines[0].starts_with("not reusing build artifact .wsel/main.wselb: cannot read it"));
    assert!(lines[1].starts_with("note: could not write build artifact .wsel/main.wselb"));
}

#[test]
fn another_working_directory_misses_for_a_relative_path() {
    let dir = copy_example("rowsum", "cwd");
    ok(&dir, &["run", "main.wse", "--output", "a.npy"]);
    let parent = dir.parent().expect("parent");
    let name = dir
        .file_name()
        .expect("name")
        .to_string_lossy()
        .into_owned();
    let main = format!("{name}/main.wse");
    let stderr = ok(parent, &["build", &main]);
    let lines = artifact_lines(&stderr);
    assert!(
        lines[0].starts_with(&format!(
            "not reusing build artifact {name}/.wsel/main.wselb: it was built from another working directory"
        )),
        "{stderr}"
    );

    // An absolute path is the same from anywhere.
    let absolute = dir.join("main.wse");
    let absolute = absolute.to_str().expect("utf-8 path");
    ok(&dir, &["build", absolute]);
    let stderr = ok(parent, &["build", absolute]);
    assert!(
        artifact_lines(&stderr)[0].starts_with("reusing build artifact"),
        "{stderr}"
    );
}

#[test]
fn no_cache_neither_reads_nor_writes_and_paths_can_be_chosen() {
    let dir = copy_example("rowsum", "paths");
    let stderr = ok(
        &dir,
        &["run", "main.wse", "--no-cache", "--output", "a.npy"],
    );
    assert!(artifact_lines(&stderr).is_empty(), "{stderr}");
    assert!(!dir.join(".wsel").exists());

    let stderr = ok(&dir, &["build", "main.wse", "-o", "builds/rowsum.wselb"]);
    assert_eq!(
        artifact_lines(&stderr),
        ["wrote build artifact builds/rowsum.wselb"]
    );
    let stderr = ok(
        &dir,
        &[
            "run",
            "main.wse",
            "--artifact",
            "builds/rowsum.wselb",
            "--output",
            "b.npy",
        ],
    );
    assert_eq!(
        artifact_lines(&stderr),
        ["reusing build artifact builds/rowsum.wselb (parse, map and code generation skipped)"]
    );
    assert_eq!(bytes(&dir, "a.npy"), bytes(&dir, "b.npy"));
    assert!(!dir.join(".wsel").exists());

    // An artifact that cannot be written is an error for `wsel build`.
    std::fs::write(dir.join("file"), "in the way").expect("file");
    let output = wsel(&dir, &["build", "main.wse", "-o", "file/x.wselb"]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("error[E0804]: cannot write the build artifact `file/x.wselb`"),
        "{stderr}"
    );
}

#[cfg(feature = "llvm")]
#[test]
fn llvm_reuses_the_build_but_compiles_afresh() {
    let dir = copy_example("rowsum", "llvm");
    ok(
        &dir,
        &["run", "main.wse", "--backend", "llvm", "--output", "a.npy"],
    );
    let stderr = ok(
        &dir,
        &["run", "main.wse", "--backend", "llvm", "--output", "b.npy"],
    );
    assert_eq!(
        artifact_lines(&stderr),
        [
            "reusing build artifact .wsel/main.llvm.wselb (parse and map skipped; llvm backend: compiled afresh)"
        ]
    );
    assert_eq!(bytes(&dir, "a.npy"), bytes(&dir, "b.npy"));
}
