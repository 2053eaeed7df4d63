//! Weight streaming with per-layer rows (`docs/running.md`, "How weight streaming runs"):
//! each phase of a chain on rows of its own, the regions sharing their north-west corner and
//! columns, and a relayout phase (`std.resident`'s `relayout`, kernel `relayout_tile`) moving
//! the activation down the columns' buses where the rows change.
//!
//! - A 512 → 4 → 4 MLP on `dev` (batch 8): the wide dense layer takes 12 rows, the narrow
//!   tail 1; its probabilities match `tests/reference/mlp.py` (NumPy, float32) within 1e-6
//!   (both sum 512 float32 products, in different orders: n·2⁻²⁴·Σ|xw| ≈ 3e-5 on the logits
//!   at worst, far less in practice; measured 6e-8).
//! - The relayout itself, as a model's layer with fixed rows (`from_rows`, `to_rows`) running
//!   the std kernel's text, on uneven splits and empty blocks: its result is its input, bit
//!   for bit (a copy moves no arithmetic), and its phase lasts at least as many cycles as
//!   the busiest PE receives words — every word but its own a wavelet on the column's bus.
//!   Two mutations of the kernel's text (each PE copying only its own block, no turns; and
//!   turn 1 skipped) must fail those checks.

mod support;

use std::path::Path;

use serde_json::Value;
use support::{lcg_values, read_f32, repo_root, temp_dir, write_f32_npy, wsel_ok};

/// `wsel run FILE` in streaming mode on `dev` with x.npy in, y.npy out and the report r.json.
fn run_streamed(dir: &Path, file: &str) -> std::process::Output {
    run_on(dir, file, "dev")
}

/// [`run_streamed`] on `target`.
fn run_on(dir: &Path, file: &str, target: &str) -> std::process::Output {
    run_with(dir, file, target, &[])
}

/// [`run_on`] with more flags.
fn run_with(dir: &Path, file: &str, target: &str, more: &[&str]) -> std::process::Output {
    let args = "--no-cache --mode streaming --input x=x.npy --output y.npy --report r.json";
    let mut all = vec!["run", file, "--target", target];
    all.extend(args.split_whitespace());
    all.extend(more);
    wsel_ok(dir, &all)
}

/// The run of the report written with `--report`.
fn report(dir: &Path) -> Value {
    let text = std::fs::read_to_string(dir.join("r.json")).expect("report");
    let whole: Value = serde_json::from_str(&text).expect("JSON report");
    whole["run"].clone()
}

/// `part_len` of the kernels: block `i` of `n` elements over `p` parts.
fn part_len(n: u64, p: u64, i: u64) -> u64 {
    n / p + u64::from(i < n % p)
}

/// The phase of `report` whose layer is `name`.
fn phase<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["phases"]
        .as_array()
        .expect("phases")
        .iter()
        .find(|p| p["layer"] == name)
        .unwrap_or_else(|| panic!("no phase {name}: {report}"))
}

fn field(v: &Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or_else(|| panic!("no {key} in {v}"))
}

/// A wide layer then a narrow one: `widths[0]` → 4 → 4 with softmax (the widths given), on a
/// batch of `batch`. Layer i's weights scaled by 1/sqrt(fan-in).
fn write_mlp(dir: &Path, widths: [usize; 3], batch: u64) {
    let inputs = widths[0];
    write_f32_npy(
        &dir.join("x.npy"),
        &[batch, inputs as u64],
        &lcg_values(batch as usize * inputs, 1, -0.5),
    );
    let mut params = String::new();
    for (i, pair) in widths.windows(2).enumerate() {
        let (n, m) = (pair[0], pair[1]);
        let scale = 1.0 / (n as f32).sqrt();
        let w: Vec<f32> = lcg_values(n * m, 10 + i as u64, -0.5)
            .iter()
            .map(|v| v * scale)
            .collect();
        write_f32_npy(&dir.join(format!("w{i}.npy")), &[n as u64, m as u64], &w);
        write_f32_npy(
            &dir.join(format!("b{i}.npy")),
            &[m as u64],
            &lcg_values(m, 20 + i as u64, -0.5),
        );
        params += &format!(
            "    param w{i}: f32[{n}, {m}] from \"w{i}.npy\";\n    param b{i}: f32[{m}] from \"b{i}.npy\";\n"
        );
    }
    let source = format!(
        "import std.nn.{{dense, relu, softmax}};\n\nmodel mlp(x: f32[B, {inputs}]) -> f32[B, {}] {{\n{params}    return softmax(dense(relu(dense(x, w0, b0)), w1, b1));\n}}\n",
        widths[2]
    );
    std::fs::write(dir.join("mlp.wse"), source).expect("model");
}

/// The model's probabilities by `tests/reference/mlp.py`.
fn numpy_reference(dir: &Path, layers: usize) -> Vec<f32> {
    let status = std::process::Command::new("python3")
        .arg(repo_root().join("tests/reference/mlp.py"))
        .arg(dir)
        .arg(layers.to_string())
        .arg(dir.join("ref.npy"))
        .status()
        .expect("python3 runs");
    assert!(status.success(), "tests/reference/mlp.py failed");
    read_f32(&dir.join("ref.npy"))
}

#[test]
fn a_wide_then_narrow_model_runs_on_two_row_counts_like_numpy() {
    let dir = temp_dir("mlp");
    write_mlp(&dir, [512, 4, 4], 8);
    let out = run_streamed(&dir, "mlp.wse");
    let text = String::from_utf8_lossy(&out.stdout);
    let r = report(&dir);
    // Each layer's region in the report; the wide layer on more rows than the narrow one.
    let rows = |name: &str| field(phase(&r, name), "rows");
    let (wide, narrow) = (rows("dense#1"), rows("dense#2"));
    assert!(
        wide > narrow,
        "dense#1 on {wide} rows, dense#2 on {narrow}\n{text}"
    );
    let cols = field(phase(&r, "dense#1"), "cols");
    assert_eq!(cols, field(phase(&r, "dense#2"), "cols"), "{text}");
    let relayout = phase(&r, "relayout#1");
    assert_eq!(field(relayout, "rows"), wide.max(narrow), "{text}");
    assert!(text.contains("relayout_tile"), "{text}");
    // The estimate with per-layer rows is below the one region's.
    let one = &r["one_region"];
    assert!(
        field(&r, "estimated_cycles") < field(one, "estimated_cycles"),
        "{text}"
    );
    assert!(text.contains("per-layer rows: estimated"), "{text}");
    let map = wsel_ok(
        &dir,
        &[
            "map",
            "mlp.wse",
            "--mode",
            "streaming",
            "--target",
            "dev",
            "--batch",
            "8",
        ],
    );
    let map = String::from_utf8_lossy(&map.stdout);
    assert!(
        map.contains("each on its rows of the same columns"),
        "{map}"
    );
    let worst = off_numpy(&dir);
    assert!(worst <= 1e-6, "off NumPy by {worst}\n{text}");
}

/// The largest difference of y.npy in `dir` from `tests/reference/mlp.py`'s probabilities.
fn off_numpy(dir: &Path) -> f32 {
    let y = read_f32(&dir.join("y.npy"));
    let reference = numpy_reference(dir, 2);
    assert_eq!(y.len(), reference.len());
    y.iter()
        .zip(&reference)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f32::max)
}

/// Layer-major micro-batches on per-layer rows: 2048 → 4 → 4 with softmax, batch 128, on
/// `dev`. At once the batch does not fit (stage_in#1 would keep 8 samples of 128 features a
/// PE, 4,608 B); layer-major order holds dense#1's 128 × 4 weights of its row on every PE and
/// runs 4 micro-batches of 32. dense#1 takes all 16 rows of the 16 columns; a relayout moves
/// its 4 features to 1 row, where the rest runs — relu, the park and unpark, dense#2, softmax
/// and stage_out — with short chains. The relayout runs in dense#1's segment, once for each
/// micro-batch, before the micro-batch is parked; the park and unpark run on the rows the
/// activation lies on. Estimated 83,872 cycles against 97,564 on one region of 16 × 16;
/// simulated 93,271 against 104,558 (`--one-region`). Both within 1e-5 of NumPy (float32
/// sums of 2,048 products in other orders: about √n·2⁻²⁴·Σ|xw|, far below n·2⁻²⁴·Σ|xw| ≈
/// 3e-4 at worst; measured 6e-8).
#[test]
fn layer_major_micro_batches_run_on_per_layer_rows_faster_than_one_region() {
    let dir = temp_dir("layer-rows");
    write_mlp(&dir, [2048, 4, 4], 128);
    let layer = ["--micro-order", "layer"];
    let out = run_with(&dir, "mlp.wse", "dev", &layer);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let rows = report(&dir);
    assert!(off_numpy(&dir) <= 1e-5, "off NumPy by {}", off_numpy(&dir));
    let micro = &rows["micro_batches"];
    assert_eq!(field(micro, "count"), 4, "{text}");
    assert_eq!(field(micro, "samples"), 32, "{text}");
    assert_eq!(micro["traffic"]["layer_major"], true, "{text}");
    // Each weight streamed once: 4 B × (2048·4 + 4 + 4·4 + 4).
    assert_eq!(field(&micro["store"], "weights"), 32_864, "{text}");
    let expected = [
        ("stage_in#1", 16),
        ("dense#1", 16),
        ("relayout#1", 16),
        ("relu#1", 1),
        ("park#1", 1),
        ("unpark#1", 1),
        ("dense#2", 1),
        ("softmax#1", 1),
        ("stage_out#1", 1),
    ];
    let phases = rows["phases"].as_array().expect("phases");
    for (name, r) in expected {
        for p in phases.iter().filter(|p| p["layer"] == name) {
            assert_eq!(
                (field(p, "rows"), field(p, "cols")),
                (r, 16),
                "{name}\n{text}"
            );
        }
    }
    // Layer-major: every micro-batch's relayout, each micro-batch once, before any dense#2.
    let runs = |name: &str| -> Vec<u64> {
        let of = phases.iter().filter(|p| p["layer"] == name);
        of.map(|p| field(p, "micro_batch")).collect()
    };
    let mut relaid = runs("relayout#1");
    relaid.sort_unstable();
    assert_eq!(relaid, [0, 1, 2, 3], "{text}");
    let at = |name: &str| phases.iter().position(|p| p["layer"] == name);
    assert!(at("relayout#1") < at("dense#2"), "{text}");
    let last_relayout = phases.iter().rposition(|p| p["layer"] == "relayout#1");
    assert!(last_relayout < at("dense#2"), "{text}");
    assert!(text.contains("per-layer rows: estimated"), "{text}");

    let one_out = run_with(
        &dir,
        "mlp.wse",
        "dev",
        &[&layer[..], &["--one-region"]].concat(),
    );
    let one_text = String::from_utf8_lossy(&one_out.stdout);
    let one = report(&dir);
    assert!(
        off_numpy(&dir) <= 1e-5,
        "one region off NumPy by {}",
        off_numpy(&dir)
    );
    assert_eq!(field(&one["micro_batches"], "count"), 4, "{one_text}");
    let one_phases = one["phases"].as_array().expect("phases");
    assert!(
        one_phases.iter().all(|p| field(p, "rows") == 16),
        "{one_text}"
    );
    // The one region compared with is the one `--one-region` runs, at its estimate.
    let compared = &rows["one_region"];
    assert_eq!(
        field(compared, "estimated_cycles"),
        field(&one, "estimated_cycles"),
        "{text}\n{one_text}"
    );
    assert!(field(&rows, "estimated_cycles") < field(&one, "estimated_cycles"));
    assert!(
        field(&rows, "cycles") < field(&one, "cycles"),
        "per-layer rows {} cycles, one region {}",
        field(&rows, "cycles"),
        field(&one, "cycles")
    );
}

/// A dead PE inside the per-layer regions moves them (the corner below it) but keeps their
/// rows, so the result is the same bits (docs/mapping.md §7, "Per-layer rows"). The dead PE
/// sits in the tallest region's last column, on a row that leaves the regions room to move
/// down past it on `dev`'s 16 rows (the rows are the mapper's choice, read from the clean run).
#[test]
fn a_defect_moves_the_per_layer_regions_and_keeps_the_bits() {
    let dir = temp_dir("defect");
    write_mlp(&dir, [512, 4, 4], 8);
    run_streamed(&dir, "mlp.wse");
    let clean = (report(&dir), read_f32(&dir.join("y.npy")));
    let (rows, cols) = {
        let wide = phase(&clean.0, "dense#1");
        (field(wide, "rows") as u32, field(wide, "cols") as u32)
    };
    assert!(rows < 16, "dense#1 on {rows} rows: no room to move down");
    let mut target = wsel_target::Target::dev();
    target.name = "dev-dead".to_string();
    let row = (rows - 1).min(15 - rows);
    target
        .defects
        .add_dead_pe(wsel_target::Coord::new(cols - 1, row));
    std::fs::write(dir.join("dead.toml"), target.to_toml_string()).expect("target");
    run_on(&dir, "mlp.wse", "dead.toml");
    let dead = (report(&dir), read_f32(&dir.join("y.npy")));
    let bits = |v: &[f32]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&clean.1), bits(&dead.1), "the result changed");
    for name in ["dense#1", "relayout#1", "dense#2"] {
        let (a, b) = (phase(&clean.0, name), phase(&dead.0, name));
        assert_eq!((&a["rows"], &a["cols"]), (&b["rows"], &b["cols"]), "{name}");
    }
    let origin = |r: &Value| r["layers"][1]["origin"].clone();
    assert_ne!(
        origin(&clean.0),
        origin(&dead.0),
        "the dead PE did not move the regions"
    );
}

/// Layer-major micro-batches on per-layer rows with dead PEs where the rows lie: the
/// 2048 → 4 → 4 model of the test above, on `dev` with three PEs of row 0 dead — the row the
/// tail runs on and dense#1's first. dense#1 takes all 16 rows of the 16 columns on the clean
/// fabric, so no rectangle keeps its rows around the defects: the driver maps freely and says
/// so (docs/running.md, "Per-layer rows, and relayouts"). The run stays layer-major on
/// per-layer rows, from the corner below the dead row: stage_in#1, dense#1 and the relayout
/// on 15 × 16, the tail on 1 × 16, every region and route clear of the dead PEs; and so does
/// `--one-region`, every phase on 15 × 16. dense#1 sums its 2,048 products over 15 row
/// blocks instead of 16, so the results are not the same bits: within 1e-5 of the clean
/// run's and of NumPy (float32 sums in another order, as above; measured 6e-8).
#[test]
fn layer_major_rows_run_around_dead_pes_and_say_the_sizes_changed() {
    let dead: [(u64, u64); 3] = [(3, 0), (6, 0), (10, 0)];
    let (dir, clean) = clean_then_dead("layer-rows-dead", &dead);
    let layer = ["--micro-order", "layer"];
    let tall = ["stage_in#1", "dense#1"];
    for (one, rows_of) in [(false, [15, 1]), (true, [15, 15])] {
        let flags = [&layer[..], if one { &["--one-region"] } else { &[] }].concat();
        let out = run_with(&dir, "mlp.wse", "dead.toml", &flags);
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        let run = report(&dir);
        assert_eq!(
            run["micro_batches"]["traffic"]["layer_major"], true,
            "{text}"
        );
        assert_eq!(field(&run["micro_batches"], "count"), 4, "{text}");
        assert_eq!(text.contains("per-layer rows: estimated"), !one, "{text}");
        for p in run["phases"].as_array().expect("phases") {
            let name = p["layer"].as_str().expect("layer");
            let rows = rows_of[usize::from(!tall.contains(&name) && name != "relayout#1")];
            assert_eq!(
                (field(p, "rows"), field(p, "cols")),
                (rows, 16),
                "{name}\n{text}"
            );
        }
        assert!(
            text.contains("could not be placed and routed around them")
                && text.contains("dense#1 16 × 16 → 15 × 16")
                && text.contains("results may differ"),
            "{text}"
        );
        let y = read_f32(&dir.join("y.npy"));
        let off = y
            .iter()
            .zip(&clean)
            .map(|(a, b)| (a - b).abs())
            .fold(0.0, f32::max);
        assert!(off <= 1e-5, "off the clean run by {off}");
        assert!(off_numpy(&dir) <= 1e-5, "off NumPy by {}", off_numpy(&dir));
        let placement = placement_on_dead(&dir, &flags);
        assert_clear_of(&placement, &dead);
    }
}

/// A scratch directory with the 2048 → 4 → 4 model at batch 128, its clean layer-major
/// result, and `dev` with the `dead` PEs as dead.toml.
fn clean_then_dead(name: &str, dead: &[(u64, u64)]) -> (support::Scratch, Vec<f32>) {
    let dir = temp_dir(name);
    write_mlp(&dir, [2048, 4, 4], 128);
    run_with(&dir, "mlp.wse", "dev", &["--micro-order", "layer"]);
    let clean = read_f32(&dir.join("y.npy"));
    write_dead_dev(&dir, dead);
    (dir, clean)
}

/// `wsel map` of the model on dead.toml, streamed, at batch 128.
const MAP_DEAD: [&str; 8] = [
    "map",
    "mlp.wse",
    "--mode",
    "streaming",
    "--target",
    "dead.toml",
    "--batch",
    "128",
];

/// `wsel map --format json` of the model on dead.toml with `flags`.
fn placement_on_dead(dir: &Path, flags: &[&str]) -> Value {
    let mut map = MAP_DEAD.to_vec();
    map.extend(["--format", "json"]);
    map.extend(flags);
    serde_json::from_slice(&wsel_ok(dir, &map).stdout).expect("placement JSON")
}

/// `dev` with the `dead` PEs, written to `dir` as dead.toml.
fn write_dead_dev(dir: &Path, dead: &[(u64, u64)]) {
    let mut target = wsel_target::Target::dev();
    target.name = "dev-dead".to_string();
    for &(x, y) in dead {
        let at = wsel_target::Coord::new(x as u32, y as u32);
        target.defects.add_dead_pe(at);
    }
    std::fs::write(dir.join("dead.toml"), target.to_toml_string()).expect("target");
}

/// The same model with two PEs of column 8 dead (rows 3 and 9), inside the clean run's
/// 16 × 16 and in the way of those rows' results east of them. No 16-column rectangle of
/// more than 6 rows is free of them, too few for dense#1's held weights. The programme takes
/// the columns whose rows fit beside the held weights, and the phases' corner needs a side
/// open only on the rows of the phases that stream through it: 8 micro-batches of 16 on 8
/// columns from (0, 0), the tail on row 0, whose result leaves east past the live (8, 0).
/// dense#1 shares its row's weights over the 8 columns (its row's 4 blocks, at most one a
/// PE), so 13 rows fit beside them too, and the programme's first pass (multiply-adds)
/// prefers them; measured, 16 rows are faster (162,931 estimated cycles against 187,458 on
/// 13, simulated 167,280 against 195,712), so the programme measures the tallest rows too
/// and takes 16, as the clean run's dense#1 does: the same sums, within float32 rounding
/// of the clean run's. (On 51f62e9 every layer-major
/// mapping failed here, E0618: the programme chose rows and columns no clean rectangle had,
/// or that did not fit beside the held weights, and the one region's result could not route
/// past the dead column.)
#[test]
fn layer_major_rows_take_fewer_columns_around_a_dead_column() {
    let dead: [(u64, u64); 2] = [(8, 3), (8, 9)];
    let (dir, clean) = clean_then_dead("layer-rows-column", &dead);
    let layer = ["--micro-order", "layer"];
    let out = run_with(&dir, "mlp.wse", "dead.toml", &layer);
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    let run = report(&dir);
    let micro = &run["micro_batches"];
    assert_eq!(micro["traffic"]["layer_major"], true, "{text}");
    assert_eq!((field(micro, "count"), field(micro, "samples")), (8, 16));
    let tall = ["stage_in#1", "dense#1", "relayout#1"];
    for p in run["phases"].as_array().expect("phases") {
        let name = p["layer"].as_str().expect("layer");
        let rows = if tall.contains(&name) { 16 } else { 1 };
        assert_eq!((field(p, "rows"), field(p, "cols")), (rows, 8), "{name}");
    }
    let y = read_f32(&dir.join("y.npy"));
    let worst = y
        .iter()
        .zip(&clean)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f32::max);
    assert!(worst < 1e-6, "{worst}");
    assert!(text.contains("dense#1 16 × 16 → 16 × 8"), "{text}");
    let placement = placement_on_dead(&dir, &layer);
    assert_clear_of(&placement, &dead);
    // One region cannot: every row's result would cross the dead column to the east edge.
    let one = std::process::Command::new(env!("CARGO_BIN_EXE_wsel"))
        .current_dir(&dir)
        .args(MAP_DEAD)
        .args(["--micro-order", "layer", "--one-region", "--color", "never"])
        .output()
        .expect("wsel runs");
    let stderr = String::from_utf8_lossy(&one.stderr);
    assert_eq!(one.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("[E0618]") && stderr.contains("cannot route part"),
        "{stderr}"
    );
}

/// Every region, edge point and route hop of `placement` (`wsel map --format json`) avoids
/// the `dead` PEs.
fn assert_clear_of(placement: &Value, dead: &[(u64, u64)]) {
    let at = |v: &Value| (field(v, "x"), field(v, "y"));
    for layer in placement["layers"].as_array().expect("layers") {
        let r = &layer["rect"];
        let (x, y) = at(r);
        let (w, h) = (field(r, "width"), field(r, "height"));
        let inside = |&(dx, dy): &(u64, u64)| (x..x + w).contains(&dx) && (y..y + h).contains(&dy);
        assert!(!dead.iter().any(inside), "{} on {r}", layer["name"]);
    }
    let points = ["inputs", "outputs"].map(|k| placement[k].as_array().expect(k));
    for point in points.into_iter().flatten() {
        assert!(!dead.contains(&at(&point["at"])), "{point}");
    }
    let transfers = placement["transfers"].as_array().expect("transfers");
    for hop in transfers
        .iter()
        .flat_map(|t| t["hops"].as_array().expect("hops"))
    {
        assert!(!dead.contains(&at(&hop["at"])), "a route through {hop}");
    }
}

/// The std kernel `relayout_tile`'s text, renamed `moved`, with `mutate` applied.
fn kernel_text(mutate: &dyn Fn(String) -> String) -> String {
    let std = std::fs::read_to_string(repo_root().join("stdlib/resident.wse")).expect("std");
    let start = std.find("kernel relayout_tile(").expect("the kernel");
    let end = start + std[start..].find("\n}\n").expect("its end") + 3;
    mutate(std[start..end].replace("kernel relayout_tile(", "kernel moved("))
}

/// A model that moves x from `from` rows to `to` and takes its relu (x is positive: the
/// identity), the relayout a layer of its own running `kernel`.
fn mover_model(n: u64, from: u32, to: u32, kernel: &str) -> String {
    format!(
        "import std.nn.{{relu}};\n\n{kernel}\n\
         layer mover(x: f32[B, N], from_rows: u32, to_rows: u32) -> y: f32[B, N] {{\n\
         \x20   cost {{ flops = 0; weights = 0; activations = 8 * N; }}\n\
         \x20   streaming on [R, C] where C <= B, R == max(from_rows, to_rows) {{\n\
         \x20       run moved(N = N, S = B, Ra = from_rows, Rb = to_rows, R = R, C = C,\n\
         \x20           namax = (N + from_rows - 1) / from_rows,\n\
         \x20           nbmax = (N + to_rows - 1) / to_rows, smax = (B + C - 1) / C);\n\
         \x20       bind x to array xb split [cols, rows];\n\
         \x20       bind y to array yb split [cols, rows];\n\
         \x20   }}\n\
         }}\n\n\
         model m(x: f32[B, {n}]) -> f32[B, {n}] {{\n\
         \x20   return relu(mover(x, from_rows = {from}, to_rows = {to}));\n\
         }}\n"
    )
}

/// What a relayout run did: whether its result equals its input, its phase's cycles, and the
/// most words a PE of it receives.
struct Moved {
    exact: bool,
    cycles: u64,
    received: u64,
}

/// Runs `mover_model` with `kernel` on a batch of `batch`.
fn run_mover(name: &str, n: u64, (from, to): (u32, u32), batch: u64, kernel: &str) -> Moved {
    let dir = temp_dir(name);
    std::fs::write(dir.join("m.wse"), mover_model(n, from, to, kernel)).expect("model");
    let x = lcg_values((batch * n) as usize, 7, 0.5);
    write_f32_npy(&dir.join("x.npy"), &[batch, n], &x);
    run_streamed(&dir, "m.wse");
    let r = report(&dir);
    let p = phase(&r, "mover#1");
    let (rows, cols) = (field(p, "rows"), field(p, "cols"));
    assert_eq!(rows, u64::from(from.max(to)), "{r}");
    // Column 0 has the most samples; a row below `from` has no block of its own.
    let samples = part_len(batch, cols, 0);
    let own = |row: u64| {
        if row < u64::from(from) {
            part_len(n, u64::from(from), row)
        } else {
            0
        }
    };
    let least_own = (0..rows).map(own).min().unwrap_or(0);
    Moved {
        exact: read_f32(&dir.join("y.npy")) == x,
        cycles: field(p, "cycles"),
        received: samples * (n - least_own),
    }
}

/// The cases: features, from rows, to rows, batch. None divides evenly both ways; the third
/// has empty x blocks (3 features over 5 rows), the fourth an empty y block (3 over 4).
const CASES: [(&str, u64, (u32, u32), u64); 4] = [
    ("grow-7-3-5", 7, (3, 5), 5),
    ("shrink-5-4-2", 5, (4, 2), 3),
    ("empty-x-3-5-2", 3, (5, 2), 4),
    ("empty-y-3-2-4", 3, (2, 4), 6),
];

#[test]
fn the_relayout_moves_uneven_and_empty_blocks_on_the_fabric() {
    let kernel = kernel_text(&|t| t);
    for (name, n, rows, batch) in CASES {
        let m = run_mover(name, n, rows, batch, &kernel);
        assert!(m.exact, "{name}: the result is not the input");
        assert!(
            m.cycles >= m.received,
            "{name}: {} cycles, but a PE receives {} words",
            m.cycles,
            m.received
        );
    }
}

#[test]
fn a_relayout_that_copies_or_skips_a_turn_fails() {
    let original = kernel_text(&|t| t);
    let no_turns = kernel_text(&|t| t.replace("if R > 1 { activate turn; }", ""));
    let skip_one = kernel_text(&|t| t.replace("if an == 0 || sb == 0 {", "if an == 0 || t == 1 {"));
    assert!(
        no_turns != original && skip_one != original,
        "the mutations apply"
    );
    let (name, n, rows, batch) = CASES[0];
    for (what, kernel) in [("copies", no_turns), ("skips turn 1", skip_one)] {
        let m = run_mover(&format!("{name}-bad"), n, rows, batch, &kernel);
        assert!(
            !m.exact || m.cycles < m.received,
            "a relayout that {what} passed: exact {}, {} cycles for {} words",
            m.exact,
            m.cycles,
            m.received
        );
        assert!(!m.exact, "a relayout that {what} still gave its input");
    }
}
