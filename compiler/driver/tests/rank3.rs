//! Activations of rank 3 and 4 (docs/language.md §4, "Tensors of rank 3 and 4") and std.nn's
//! layout layers (`stdlib/nn.wse`, "Layouts") end to end on `dev`: `transpose` and
//! `transpose_heads` against NumPy (`tests/reference/layouts.py`) on even and ragged splits,
//! on the region the mapper picks and on fixed numbers of columns; the exchange between the
//! columns read from the trace.
//!
//! A fixed number of columns is a test layer of this file's that runs std.nn's own kernel
//! `transpose_tile` with `on [1, C]` (the std.nn layers leave C to the mapper).

use std::path::Path;
use std::process::Command;

mod support;
use support::{
    Scratch, numbers_after, read_f32, repo_root, starts, temp_dir, write_f32_npy, wsel_ok,
};

/// One run of a layout layer: `x`'s per-sample shape, the layer's name in
/// `tests/reference/layouts.py`, and the columns (`None`: std.nn's layer, on the mapper's
/// region).
struct Case {
    name: &'static str,
    layer: &'static str,
    shape: &'static [u64],
    cols: Option<u64>,
    batch: u64,
    /// `pipelined` or `streaming`.
    mode: &'static str,
}

impl Case {
    /// The result's per-sample shape: the first two feature axes swapped.
    fn out_shape(&self) -> Vec<u64> {
        let mut s = self.shape.to_vec();
        s.swap(0, 1);
        s
    }

    /// The model's source: std.nn's layer, or a layer of `cols` columns running its kernel.
    fn source(&self) -> String {
        let dims = |s: &[u64]| s.iter().map(u64::to_string).collect::<Vec<_>>().join(", ");
        let (x, y) = (dims(self.shape), dims(&self.out_shape()));
        let Some(c) = self.cols else {
            return format!(
                "import std.nn.{{{l}}};\nmodel m(x: f32[B, {x}]) -> f32[B, {y}] {{\n    return {l}(x);\n}}\n",
                l = self.layer
            );
        };
        let e = self.shape.get(2).copied().unwrap_or(1);
        let split = if self.shape.len() == 3 {
            "cols, _, _"
        } else {
            "cols, _"
        };
        format!(
            "import std.nn.{{transpose_tile}};\n\
             layer fixed(x: f32[B, {x}]) -> y: f32[B, {y}] {{\n\
             \x20   cost {{ flops = 1; weights = 0; activations = 4; }}\n\
             \x20   pipelined on [1, {c}] {{\n\
             \x20       run transpose_tile(a = {a}, b = {b}, e = {e}, p = {c}, samples = B, back = false);\n\
             \x20       bind x to port xs split [{split}];\n\
             \x20       bind y to port ys split [{split}];\n\
             \x20   }}\n\
             }}\n\
             model m(x: f32[B, {x}]) -> f32[B, {y}] {{\n    return fixed(x);\n}}\n",
            a = self.shape[0],
            b = self.shape[1],
        )
    }

    /// Writes the model and its input in a fresh folder.
    fn write(&self) -> Scratch {
        let dir = temp_dir(self.name);
        std::fs::write(dir.join("m.wse"), self.source()).expect("model");
        let len: u64 = self.batch * self.shape.iter().product::<u64>();
        let x: Vec<f32> = (0..len)
            .map(|i| ((i * 37 + 11) % 101) as f32 - 50.0)
            .collect();
        let mut shape = vec![self.batch];
        shape.extend(self.shape);
        write_f32_npy(&dir.join("x.npy"), &shape, &x);
        dir
    }

    /// Runs the model pipelined: its result, its report and its trace.
    fn run(&self, dir: &Path) -> (Vec<f32>, String, serde_json::Value) {
        let args = format!(
            "run m.wse --no-cache --mode {} --copies 1 --input x=x.npy --output y.npy \
             --trace t.json",
            self.mode
        );
        let out = wsel_ok(dir, &args.split_whitespace().collect::<Vec<_>>());
        let trace = std::fs::read_to_string(dir.join("t.json")).expect("trace");
        (
            read_f32(&dir.join("y.npy")),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            serde_json::from_str(&trace).expect("json"),
        )
    }

    /// Runs the case and checks its result against NumPy, exactly (a transpose moves values
    /// and computes nothing); gives the report and the trace.
    fn check(&self) -> (String, serde_json::Value) {
        let dir = self.write();
        let status = Command::new("python3")
            .arg(repo_root().join("tests/reference/layouts.py"))
            .arg(self.layer)
            .arg(&dir)
            .status()
            .expect("python3 runs (CI installs requirements.txt)");
        assert!(status.success(), "{}: layouts.py failed", self.name);
        let (y, report, trace) = self.run(&dir);
        let reference = read_f32(&dir.join("ref.npy"));
        assert_eq!(y.len(), reference.len(), "{}", self.name);
        if let Some(i) = (0..y.len()).find(|&i| y[i].to_bits() != reference[i].to_bits()) {
            panic!(
                "{}: element {i} is {}, np.transpose says {}",
                self.name, y[i], reference[i]
            );
        }
        (report, trace)
    }
}

fn case(name: &'static str, layer: &'static str, shape: &'static [u64], cols: u64) -> Case {
    Case {
        name,
        layer,
        shape,
        cols: Some(cols),
        batch: 3,
        mode: "pipelined",
    }
}

#[test]
fn transpose_matches_numpy_on_even_and_ragged_splits() {
    for c in [
        case("t-5x7-1", "transpose", &[5, 7], 1),
        case("t-5x7-2", "transpose", &[5, 7], 2),
        case("t-5x7-3", "transpose", &[5, 7], 3),
        case("t-8x12-4", "transpose", &[8, 12], 4),
        case("t-8x12-5", "transpose", &[8, 12], 5),
        case("t-6x3-3", "transpose", &[6, 3], 3),
    ] {
        c.check();
    }
}

#[test]
fn transpose_heads_matches_numpy_on_even_and_ragged_splits() {
    for c in [
        case("h-4x6x16-1", "transpose_heads", &[4, 6, 16], 1),
        case("h-3x4x5-2", "transpose_heads", &[3, 4, 5], 2),
        case("h-4x6x16-3", "transpose_heads", &[4, 6, 16], 3),
        case("h-4x4x8-4", "transpose_heads", &[4, 4, 8], 4),
    ] {
        c.check();
    }
}

/// std.nn's own layers, on the region the mapper chooses (printed in the report).
#[test]
fn std_nn_layout_layers_match_numpy_on_the_mappers_region() {
    for (name, layer, shape) in [
        ("std-t", "transpose", &[6u64, 10][..]),
        ("std-t-ragged", "transpose", &[7, 5][..]),
        ("std-h", "transpose_heads", &[4, 8, 6][..]),
    ] {
        let c = Case {
            name,
            layer,
            shape,
            cols: None,
            batch: 4,
            mode: "pipelined",
        };
        let (report, _) = c.check();
        assert!(report.contains("transpose_tile"), "{report}");
    }
}

/// A model of rank-3 activations through three layers: std.nn's transpose, std.collectives'
/// `allreduce_row` (an existing rank-3 layer, `f32[B, P, N]` on P columns) and transpose
/// again. The transposes' parts are the allreduce's (`[4, 6]` over 4 columns: a row each),
/// so the layers connect as rank-2 layers do, part i to part i. The reference folds the
/// sums from row 0 upward in float32, as `bus_turns` does, so the match is exact.
#[test]
fn rank_three_layers_chain_like_numpy() {
    let source = "import std.nn.{transpose};\n\
                  import std.collectives.{allreduce_row};\n\
                  model m(x: f32[B, 6, 4]) -> f32[B, 6, 4] {\n\
                  \x20   return transpose(allreduce_row(transpose(x)));\n\
                  }\n";
    let report = check_model("mixed", "mixed", &[6, 4], source, "pipelined");
    assert!(report.contains("allreduce_row#1"), "{report}");
}

/// Runs `source` on `shape`-shaped samples and checks it against `layouts.py REFERENCE`
/// exactly; gives the report.
fn check_model(
    name: &'static str,
    reference: &'static str,
    shape: &'static [u64],
    source: &str,
    mode: &'static str,
) -> String {
    let c = Case {
        name,
        layer: reference,
        shape,
        cols: None,
        batch: 3,
        mode,
    };
    let dir = c.write();
    std::fs::write(dir.join("m.wse"), source).expect("model");
    run_against_reference(&c, &dir)
}

/// `reshape` relabels: a rank-3 result read by rank-2 layers and back, against NumPy's
/// `reshape`, and no layer of its own on the fabric (the report lists the model's layers
/// only: nothing runs for it, 0 cycles). `[5, 7]` transposed is `[7, 5]`: the transpose's
/// parts line up with relu's 35 features only on a part count dividing 7 and 35, so the
/// mapper puts it on one column where it would take 5 without the reshape (the std.nn
/// test above); on 5 columns its parts (10, 10, 5, 5, 5 features) would not be relu's (7).
#[test]
fn a_reshape_relabels_between_layers_like_numpy() {
    let flat = check_model(
        "relabel-flat",
        "relu_flat",
        &[5, 7],
        "import std.nn.{transpose, relu};\n\
         model m(x: f32[B, 5, 7]) -> f32[B, 35] {\n\
         \x20   return relu(reshape(transpose(x), 35));\n\
         }\n",
        "pipelined",
    );
    let layers: Vec<&str> = flat.lines().filter(|l| l.contains("_tile ")).collect();
    assert_eq!(layers.len(), 2, "{flat}");
    assert!(
        layers[0].contains("transpose#1") && layers[0].contains("1×1"),
        "{flat}"
    );
    // A round trip back to rank 3, and docs/language.md §7.1's sample: relu between two
    // transposes, through two reshapes.
    for (name, shape, (t, d)) in [
        ("relabel-round-trip", &[6u64, 4][..], (6, 4)),
        ("relabel-doc", &[5, 7][..], (5, 7)),
    ] {
        let source = format!(
            "import std.nn.{{transpose, relu}};\n\
             model flat(x: f32[B, {t}, {d}]) -> f32[B, {t}, {d}] {{\n\
             \x20   let t = reshape(transpose(x), {n});     // f32[B, {d}, {t}] read as f32[B, {n}]\n\
             \x20   return transpose(reshape(relu(t), {d}, {t}));\n\
             }}\n",
            n = t * d
        );
        let report = check_model(name, "round_trip", shape, &source, "pipelined");
        assert!(!report.contains("reshape"), "{report}");
    }
}

/// The exchange is counted. On C > 1 columns every PE receives, on the row's bus, the
/// blocks of x that the others hold: `T·D − own` wavelets, at most one per cycle into its
/// PE, all sent after the first sender's turns began. So on every column the gap from PE 0's
/// `turns` to that column's `permute` is at least `T·D − own` cycles: a bound the simulated
/// fabric must meet, which an exchange that cost nothing would break. On one column there
/// are no turns: `permute` follows `turns` at once.
///
/// And the whole layer (the report's cycles, batch 1) takes at least T·D cycles more than a
/// pass-through layer on the same region. Measured on `dev` for x: [8, 12]: 1 column 1,114
/// cycles, 3 columns 632, 5 columns 610; the pass-through 204, 104 and 84. The transpose
/// over several columns is *faster* than over one, because the input and the result cross C
/// edge links in parallel and each PE permutes only its share (BENCHMARKS.md, "Transpose on
/// the fabric vs a pass-through").
#[test]
fn the_exchange_between_columns_is_counted_in_cycles() {
    let (t, d) = (8u64, 12u64);
    for cols in [1u64, 3, 5] {
        let c = Case {
            batch: 1,
            ..case("exchange", "transpose", &[8, 12], cols)
        };
        let (report, trace) = c.check();
        // Every word is either permuted by one PE (at least a cycle each) or crosses the
        // row's bus (one per cycle, turn after turn): at least T·D cycles more than a layer
        // that only passes its blocks through.
        let (cycles, plain) = (cycles(&report), pass_through_cycles(cols, t, d));
        assert!(
            cycles >= plain + t * d,
            "{cols} columns: transpose {cycles} cycles, pass-through {plain}"
        );
        let turns = starts(&trace, "turns");
        let permute = starts(&trace, "permute");
        assert_eq!(permute.len() as u64, cols);
        let first = turns
            .iter()
            .find(|(col, _)| *col == 0)
            .expect("PE 0's turns")
            .1;
        for &(col, at) in &permute {
            let bound = t * d - part_len(t, cols, col) * d;
            assert!(
                at - first >= bound,
                "column {col} of {cols}: permute {} cycles after the turns began, but it \
                 receives {bound} wavelets",
                at - first
            );
        }
    }
}

/// The simulated cycles of a run's report.
fn cycles(report: &str) -> u64 {
    let line = report
        .lines()
        .find(|l| l.contains(" cycles = "))
        .expect("cycles");
    numbers_after(line.trim_start(), "")[0]
}

/// The cycles of one `[t, d]` sample through a layer on `1 × cols` that receives its
/// column's rows from the north and sends them south: the transpose's edge traffic, without
/// its exchange and permutation.
fn pass_through_cycles(cols: u64, t: u64, d: u64) -> u64 {
    let dir = temp_dir(&format!("pass-{cols}"));
    let source = format!(
        "kernel keep(a: u32, w: u32, p: u32) {{
    var v: [f32; part_len(a, p, 0) * w];
    in  xs: stream<f32> from north;
    out ys: stream<f32> to south;
    task main() {{ recv(xs, v[0 .. part_len(a, p, pe.col) * w]) then pass; }}
    task pass() {{ send(ys, v[0 .. part_len(a, p, pe.col) * w]); }}
}}
layer plain(x: f32[B, T, D]) -> y: f32[B, T, D] {{
    cost {{ flops = 1; weights = 0; activations = 4; }}
    pipelined on [1, {cols}] {{
        run keep(a = T, w = D, p = {cols});
        bind x to port xs split [cols, _];
        bind y to port ys split [cols, _];
    }}
}}
model m(x: f32[B, {t}, {d}]) -> f32[B, {t}, {d}] {{ return plain(x); }}
"
    );
    std::fs::write(dir.join("m.wse"), source).expect("model");
    write_f32_npy(&dir.join("x.npy"), &[1, t, d], &vec![1.0; (t * d) as usize]);
    let out = wsel_ok(
        &dir,
        &"run m.wse --no-cache --mode pipelined --copies 1 --input x=x.npy --output y.npy"
            .split_whitespace()
            .collect::<Vec<_>>(),
    );
    cycles(&String::from_utf8_lossy(&out.stdout))
}

/// `part_len` of the kernels: block `i` of `n` elements over `p` parts.
fn part_len(n: u64, p: u64, i: u64) -> u64 {
    n / p + u64::from(i < n % p)
}

// ---------------------------------------------------------------------------------------
// Weight streaming: `transpose_resident`, the resident blocks exchanged down the columns.
// ---------------------------------------------------------------------------------------

/// std.nn's layout layers in `--mode streaming`, on the region the mapper picks (several rows,
/// so the rows exchange their blocks), bit-exact against NumPy. Every case's shape is not
/// square, so its result differs from its input's words: a kernel that copied its block
/// instead of moving the data would fail (checked here, so that the cases stay such).
#[test]
fn transpose_streams_like_numpy() {
    for (name, layer, shape, batch) in [
        ("s-t-6x4", "transpose", &[6u64, 4][..], 5),
        ("s-t-8x12", "transpose", &[8, 12][..], 3),
        ("s-h-4x6x3", "transpose_heads", &[4, 6, 3][..], 4),
        ("s-h-6x4x2", "transpose_heads", &[6, 4, 2][..], 7),
    ] {
        let c = Case {
            name,
            layer,
            shape,
            cols: None,
            batch,
            mode: "streaming",
        };
        let x = input_words(&c);
        let (report, _) = c.check();
        assert!(report.contains("transpose_resident"), "{report}");
        let rows = region_rows(&report, &format!("{layer}#1"));
        assert!(rows > 1, "{name}: one row, no exchange\n{report}");
        let reference = reference_of(&c);
        assert_ne!(x, reference, "{name}: the transpose must move words");
    }
}

/// Ragged blocks: a streamed transpose whose result's rows do not divide over the region's
/// rows, read by a test layer fixed to those rows that runs std.nn's `transpose_resident`
/// on that result as `transpose_heads` (`[D, T/2, 2] → [T/2, D, 2]`). Both exchanges then
/// see row blocks of unequal sizes (5 rows over 3: 2, 2, 1; over 2: 3, 2). The model's
/// input and result divide (staging reads them through a relabelled edge, §7.1).
#[test]
fn transpose_streams_ragged_blocks_like_numpy() {
    for (name, shape, r) in [
        ("s-rag-6x5", &[6u64, 5][..], 3u64),
        ("s-rag-4x5", &[4, 5][..], 2),
    ] {
        let (t, d) = (shape[0], shape[1]);
        let source = format!(
            "import std.nn.{{transpose, transpose_resident}};\n\
             layer fixed(x: f32[B, {d}, {t}]) -> y: f32[B, {h}, {w}] {{\n\
             \x20   cost {{ flops = 1; weights = 0; activations = 4; }}\n\
             \x20   streaming on [{r}, C] where C <= B {{\n\
             \x20       run transpose_resident(a = {d}, b = {h}, e = 2, S = B, R = {r}, C = C);\n\
             \x20       bind x to array xb split [cols, rows, _];\n\
             \x20       bind y to array yb split [cols, rows, _];\n\
             \x20   }}\n\
             }}\n\
             model m(x: f32[B, {t}, {d}]) -> f32[B, {h}, {w}] {{\n\
             \x20   return fixed(transpose(x));\n\
             }}\n",
            h = t / 2,
            w = 2 * d,
        );
        let report = check_model(name, "t_heads", shape, &source, "streaming");
        assert_eq!(region_rows(&report, "transpose#1"), r, "{report}");
    }
}

/// A chain of streamed layers through a transpose: `dense → reshape → transpose → reshape →
/// dense`, the dense layers' resident results read by the transpose and the transpose's by
/// the second dense where they lie (a `reshape` of resident activations relabels: the rows
/// divide T = 6). The weights and inputs are multiples of 1/8 below 1, so every product and
/// sum is exact in float32 and the result equals NumPy's float64 exactly. And
/// `transpose → relu → transpose` through two reshapes (docs/language.md §7.1's sample).
#[test]
fn a_streamed_chain_through_transpose_is_like_numpy() {
    let c = Case {
        name: "s-dense-chain",
        layer: "dense_chain",
        shape: &[24],
        cols: None,
        batch: 6,
        mode: "streaming",
    };
    let dir = temp_dir(c.name);
    let eighths = |n: usize, k: usize| -> Vec<f32> {
        (0..n)
            .map(|i| ((i * k + 3) % 13) as f32 / 8.0 - 0.75)
            .collect()
    };
    write_f32_npy(&dir.join("x.npy"), &[6, 24], &eighths(6 * 24, 7));
    for (name, shape, k) in [("w1", &[24u64, 24][..], 5), ("b1", &[24][..], 3)] {
        write_f32_npy(
            &dir.join(format!("{name}.npy")),
            shape,
            &eighths(shape.iter().product::<u64>() as usize, k),
        );
    }
    for (name, shape, k) in [("w2", &[24u64, 24][..], 11), ("b2", &[24][..], 2)] {
        write_f32_npy(
            &dir.join(format!("{name}.npy")),
            shape,
            &eighths(shape.iter().product::<u64>() as usize, k),
        );
    }
    std::fs::write(
        dir.join("m.wse"),
        "import std.nn.{transpose, dense};\n\
         model m(x: f32[B, 24]) -> f32[B, 24] {\n\
         \x20   param w1: f32[24, 24]; param b1: f32[24];\n\
         \x20   param w2: f32[24, 24]; param b2: f32[24];\n\
         \x20   let t = transpose(reshape(dense(x, w1, b1), 6, 4));\n\
         \x20   return dense(reshape(t, 24), w2, b2);\n\
         }\n",
    )
    .expect("model");
    let report = run_against_reference(&c, &dir);
    assert!(
        report.contains("dense_resident") && report.contains("transpose_resident"),
        "{report}"
    );
    assert!(region_rows(&report, "transpose#1") > 1, "{report}");
    let source = "import std.nn.{transpose, relu};\n\
                  model flat(x: f32[B, 6, 4]) -> f32[B, 6, 4] {\n\
                  \x20   let t = reshape(transpose(x), 24);\n\
                  \x20   return transpose(reshape(relu(t), 4, 6));\n\
                  }\n";
    let report = check_model("s-round-trip", "round_trip", &[6, 4], source, "streaming");
    assert!(report.contains("relu_resident"), "{report}");
}

/// The streamed exchange is counted. On R rows every PE takes in, on its column's bus, the
/// x blocks of the other rows of its column: sb·(T − own)·D wavelets, one per cycle at most,
/// sample by sample (a `got` each). So the transpose's phase lasts at least that many cycles,
/// and the PEs of column c run `got` sb_c·(R − 1) times each: R·(R − 1)·B in all (`[8, 12]`
/// over R rows: no row is empty).
#[test]
fn the_streamed_exchange_is_counted_in_cycles() {
    let (t, d, batch) = (8u64, 12u64, 4u64);
    let c = Case {
        name: "s-exchange",
        layer: "transpose",
        shape: &[8, 12],
        cols: None,
        batch,
        mode: "streaming",
    };
    let (report, trace) = c.check();
    let (rows, cols) = region(&report, "transpose#1");
    assert!(rows > 1, "{report}");
    let phase = phase_cycles(&report, "transpose#1");
    let sb = part_len(batch, cols, 0);
    let most = (0..rows)
        .map(|r| sb * (t - part_len(t, rows, r)) * d)
        .max()
        .unwrap_or(0);
    assert!(
        phase >= most,
        "the phase took {phase} cycles, a PE takes in {most} wavelets"
    );
    let got = task_runs(&trace, "transpose#1", "got");
    assert_eq!(
        got.len() as u64,
        rows * cols,
        "every PE takes blocks: {got:?}"
    );
    let total: u64 = got.iter().map(|(_, n)| n).sum();
    assert_eq!(
        total,
        rows * (rows - 1) * batch,
        "a `got` per sample per other row: {got:?}"
    );
}

/// Runs `c` in its folder `dir` (model and data written) against `layouts.py`, exactly.
fn run_against_reference(c: &Case, dir: &Path) -> String {
    let expected = numpy(c, dir);
    let (y, report, _) = c.run(dir);
    assert_eq!(y.len(), expected.len(), "{}", c.name);
    for (i, (a, b)) in y.iter().zip(&expected).enumerate() {
        assert_eq!(
            a.to_bits(),
            b.to_bits(),
            "{}: element {i} is {a}, NumPy says {b}",
            c.name
        );
    }
    report
}

/// The words of `c`'s input, as [`Case::write`] makes them.
fn input_words(c: &Case) -> Vec<f32> {
    let dir = c.write();
    read_f32(&dir.join("x.npy"))
}

/// NumPy's result for `c`'s input.
fn reference_of(c: &Case) -> Vec<f32> {
    let dir = c.write();
    numpy(c, &dir)
}

/// `layouts.py`'s result for `c`'s reference on the data in `dir`.
fn numpy(c: &Case, dir: &Path) -> Vec<f32> {
    let status = Command::new("python3")
        .arg(repo_root().join("tests/reference/layouts.py"))
        .args([c.layer.as_ref(), dir.as_os_str()])
        .status()
        .expect("python3 runs");
    assert!(status.success(), "{}: layouts.py failed", c.name);
    read_f32(&dir.join("ref.npy"))
}

/// The region `rows × cols` of `layer` in the report's table.
fn region(report: &str, layer: &str) -> (u64, u64) {
    let line = report
        .lines()
        .find(|l| l.trim_start().starts_with(layer) && l.contains('×'))
        .expect("the layer's row");
    let cell = line
        .split_whitespace()
        .find(|w| w.contains('×'))
        .expect("a region");
    let (r, c) = cell.split_once('×').expect("rows×cols");
    (r.parse().expect("rows"), c.parse().expect("cols"))
}

fn region_rows(report: &str, layer: &str) -> u64 {
    region(report, layer).0
}

/// The cycles of `layer`'s phase in the report's phase table (`name start cycles ...`).
fn phase_cycles(report: &str, layer: &str) -> u64 {
    let line = report
        .lines()
        .rfind(|l| l.trim_start().starts_with(layer))
        .expect("the phase's row");
    numbers_after(line.trim_start().trim_start_matches(layer), "")[1]
}

/// How often each PE of `layer` ran `task`, by the PE's thread name `(x, y)` in the trace.
fn task_runs(trace: &serde_json::Value, layer: &str, task: &str) -> Vec<((u64, u64), u64)> {
    let events = trace["traceEvents"]
        .as_array()
        .or_else(|| trace.as_array())
        .expect("events");
    let mut pes = std::collections::HashMap::new();
    for e in events.iter().filter(|e| e["name"] == "thread_name") {
        let name = e["args"]["name"].as_str().unwrap_or_default();
        if let Some(rest) = name.strip_prefix(&format!("{layer} · PE (")) {
            let nums = numbers_after(rest, "");
            pes.insert((e["pid"].clone(), e["tid"].clone()), (nums[0], nums[1]));
        }
    }
    let mut runs = std::collections::BTreeMap::new();
    for e in events
        .iter()
        .filter(|e| e["ph"] == "X" && e["name"] == task)
    {
        if let Some(pe) = pes.get(&(e["pid"].clone(), e["tid"].clone())) {
            *runs.entry(*pe).or_insert(0u64) += 1;
        }
    }
    runs.into_iter().collect()
}
