//! std.collectives' bus collectives (`stdlib/collectives.wse`, the `bus_turns` kernel) end to
//! end on `dev`: every layer's result against a reference computed here, and its simulated
//! cycles against the cost formula written above `bus_turns`.
//!
//! The cycles are read from the run's trace: from the start of the first sender's `turns`
//! task (its input is in) to the end of the last `finish` task (every PE has computed and
//! issued its result). The formula, with `dev`'s S = 2 task-switch cycles, L = 2 cycles per
//! hop and f32 adds at 2 per cycle, and the task costs of `wsel_ir::cost` derived below from
//! the kernel's lowered code (constants folded: one layer's kernel keeps only its own axis's
//! and kind's statements):
//!
//! - `turns`: `t = 0` (a store: 1) and `activate` (1), 2 cycles on a row or column; on a
//!   region 5 + ceil(n/2) more: `at = me * n` (3), `mine = pe.col * n` (2), the copy of n
//!   elements (ceil(n/2)).
//! - `turn`, up to and including a send or receive: the test `t == last` (4), `sender =
//!   select(...)` (5), `at = sender * stride` (3), `sender == me` (3), the send or receive with
//!   a loaded length (2): 17. The sending path then counts the turn (2) and activates (1): 20.
//!   The last, empty turn: the test (4), `activate finish` (1), `return` (1): 6.
//! - `got`: the count (2) and `activate` (1): 3.
//! - `finish`: `at = me * n` (3), `src = ...` (1), `done += 1` (2), the test of `done` (3),
//!   plus the fold of allreduce and reduce, P·ceil(n/2) + 2P − 1 (the copy of slot 0,
//!   `for` 1, and per further slot 1 for the loop, 1 for its start and ceil(n/2) for the
//!   add or max), plus the emission (per layer, below).
//!
//! A turn's send is issued S + 17 cycles after its `turn` task starts; its last wavelet is
//! injected `len − 1` cycles later and reaches a PE `d` hops away `d·L` cycles after that; the
//! receive completes and `got` is ready the cycle after; `got` takes S + 3, the next `turn`
//! S + 17 to its send. So sender k + 1 issues `len + d·L + 2S + 20` cycles after sender k.

mod support;

use std::path::Path;
use std::process::Command;
use support::temp_dir;

use wsel::tensor::{Tensor, write_npy_atomic};
use wsel_ir::kernel::ScalarTy;

const S: u64 = 2;
const L: u64 = 2;

/// Where the PEs of a collective are: a row or column of `p`, or a `rows × cols` region.
#[derive(Debug, Clone, Copy)]
enum Line {
    Row(u64),
    Col(u64),
    Region(u64, u64),
}

impl Line {
    fn pes(self) -> u64 {
        match self {
            Line::Row(p) | Line::Col(p) => p,
            Line::Region(r, c) => r * c,
        }
    }

    /// Hops between PEs `i` and `j` along the bus (the comb of a region: along the rows, and
    /// column 0 between them).
    fn distance(self, i: u64, j: u64) -> u64 {
        match self {
            Line::Row(_) | Line::Col(_) => i.abs_diff(j),
            Line::Region(_, c) => {
                let ((ri, ci), (rj, cj)) = ((i / c, i % c), (j / c, j % c));
                if ri == rj {
                    ci.abs_diff(cj)
                } else {
                    ci + ri.abs_diff(rj) + cj
                }
            }
        }
    }

    /// The logical (row, column) of PE `i`.
    fn cell(self, i: u64) -> (u64, u64) {
        match self {
            Line::Row(_) => (0, i),
            Line::Col(_) => (i, 0),
            Line::Region(_, c) => (i / c, i % c),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Allreduce,
    Reduce,
    Broadcast,
    Gather,
    Scatter,
}

#[derive(Debug, Clone, Copy)]
struct Case {
    layer: &'static str,
    kind: Kind,
    line: Line,
    n: u64,
    root: u64,
    max: bool,
}

fn ceil2(n: u64) -> u64 {
    n.div_ceil(2)
}

/// The cost of PE `j`'s `finish` task beyond its common part (9: `at`, `src`, the count, its
/// test): the fold and the emission of the layer's branch.
fn finish_cost(case: &Case, j: u64) -> u64 {
    let p = case.line.pes();
    let fold = p * ceil2(case.n) + 2 * p - 1;
    let (row, col) = case.line.cell(j);
    let _ = row;
    let region_last_col = matches!(case.line, Line::Region(_, c) if col + 1 == c);
    let region_cols = match case.line {
        Line::Region(_, c) => c,
        _ => 0,
    };
    let emit = match (case.kind, case.line) {
        // One send.
        (Kind::Allreduce | Kind::Broadcast | Kind::Scatter, Line::Row(_) | Line::Col(_)) => 1,
        // `if pe.col == region.cols - 1` (3), then a `for` over the columns (1, and per
        // column 1 for the loop and 1 for the send).
        (Kind::Allreduce | Kind::Broadcast, Line::Region(..)) => {
            3 + if region_last_col {
                1 + 2 * region_cols
            } else {
                0
            }
        }
        // `if pe.col == p - 1` (or `pe.row`: 2), then one send on the last PE.
        (Kind::Reduce | Kind::Gather, Line::Row(_) | Line::Col(_)) => 2 + u64::from(j + 1 == p),
        // `if pe.col == region.cols - 1` (3); the last column's `lo = part_start(n, rows,
        // row)` (1 + add, mul, min 1 each, div and rem 8 each: 20) and its send, whose
        // length `part_len(n, rows, row)` costs add, two subs and a div (11): 12.
        (Kind::Reduce, Line::Region(..)) => 3 + if region_last_col { 20 + 12 } else { 0 },
        (kind, line) => panic!("no {kind:?} on {line:?}"),
    };
    let folds = matches!(case.kind, Kind::Allreduce | Kind::Reduce);
    9 + emit + if folds { fold } else { 0 }
}

/// The formula: cycles from the first sender's `turns` start to the last `finish` end.
fn formula(case: &Case) -> u64 {
    let p = case.line.pes();
    let n = case.n;
    let senders: Vec<u64> = match case.kind {
        Kind::Broadcast => vec![case.root],
        Kind::Scatter => vec![0],
        _ => (0..p).collect(),
    };
    let len = if case.kind == Kind::Scatter { p * n } else { n };
    let turns_cost = match case.line {
        Line::Region(..) => 7 + ceil2(n),
        _ => 2,
    };
    // Issue cycle of each sender's send, relative to the first sender's `turns` start.
    let mut issue = S + turns_cost + S + 17;
    for pair in senders.windows(2) {
        issue += len + case.line.distance(pair[0], pair[1]) * L + 2 * S + 20;
    }
    let last = *senders.last().expect("a sender");
    (0..p)
        .map(|j| {
            let finish_start = if j == last {
                issue + 3 + S + 6
            } else {
                issue + len + case.line.distance(last, j) * L + (S + 3) + (S + 6)
            };
            finish_start + S + finish_cost(case, j)
        })
        .max()
        .expect("PEs")
}

/// The sample's input: values spread over a range, different in every element.
fn input(i: u64) -> f32 {
    ((i * 37 + 11) % 29) as f32 * 0.5 - 7.0
}

/// The layer's result for `x` (one sample, `p` parts of `n`), computed here: f32 sums folded
/// from part 0 upward, as the kernel folds.
fn reference(case: &Case, x: &[f32]) -> Vec<f32> {
    let (p, n) = (case.line.pes() as usize, case.n as usize);
    let part = |i: usize| &x[i * n..(i + 1) * n];
    let fold = || -> Vec<f32> {
        let mut acc = part(0).to_vec();
        for i in 1..p {
            for (a, v) in acc.iter_mut().zip(part(i)) {
                *a = if case.max { a.max(*v) } else { *a + v };
            }
        }
        acc
    };
    match case.kind {
        Kind::Allreduce => fold().repeat(p),
        Kind::Reduce => fold(),
        Kind::Broadcast => part(case.root as usize).repeat(p),
        Kind::Gather | Kind::Scatter => x.to_vec(),
    }
}

/// `[dims]` of one sample's input and result.
fn shapes(case: &Case) -> (String, String) {
    let parts = match case.line {
        Line::Row(p) | Line::Col(p) => format!("{p}"),
        Line::Region(r, c) => format!("{r}, {c}"),
    };
    let x = format!("{parts}, {}", case.n);
    let y = if case.kind == Kind::Reduce {
        format!("{}", case.n)
    } else {
        x.clone()
    };
    (x, y)
}

fn wsel(dir: &Path, args: &[&str]) -> std::process::Output {
    let output = Command::new(env!("CARGO_BIN_EXE_wsel"))
        .current_dir(dir)
        .args(args)
        .args(["--color", "never"])
        .output()
        .expect("wsel runs");
    assert!(
        output.status.success(),
        "wsel {args:?} failed:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    output
}

/// Runs one case; gives its result and the measured cycles.
fn run(dir: &Path, case: &Case) -> (Vec<f32>, u64) {
    let name = format!("{}-{}", case.layer, case.n);
    let (x_dims, y_dims) = shapes(case);
    let arg = match case.kind {
        Kind::Broadcast => format!(", root = {}", case.root),
        _ if case.max => ", max = true".to_string(),
        _ => String::new(),
    };
    let source = format!(
        "import std.collectives.{{{layer}}};\nmodel m(x: f32[B, {x_dims}]) -> f32[B, {y_dims}] {{\n    return {layer}(x{arg});\n}}\n",
        layer = case.layer
    );
    let wse = dir.join(format!("{name}.wse"));
    std::fs::write(&wse, source).expect("model");
    let len = case.line.pes() * case.n;
    let x: Vec<f32> = (0..len).map(input).collect();
    let mut shape = vec![1];
    shape.extend(x_dims.split(", ").map(|d| d.parse::<u64>().expect("dim")));
    let tensor = Tensor {
        elem: ScalarTy::F32,
        shape,
        words: x.iter().map(|v| v.to_bits()).collect(),
    };
    let x_path = dir.join(format!("{name}-x.npy"));
    write_npy_atomic(&x_path, &tensor).expect("write .npy");
    let (y_path, trace) = (
        dir.join(format!("{name}-y.npy")),
        dir.join(format!("{name}.json")),
    );
    let (wse, x_arg) = (wse.display().to_string(), format!("x={}", x_path.display()));
    let common = ["--copies", "1", "--batch", "1"];
    let map = wsel(
        dir,
        &[&["map", &wse, "--format", "json"], &common[..]].concat(),
    );
    let placement: serde_json::Value = serde_json::from_slice(&map.stdout).expect("json");
    let (y_s, trace_s) = (y_path.display().to_string(), trace.display().to_string());
    let run_args = [
        "run",
        &wse,
        "--no-cache",
        "--input",
        &x_arg,
        "--output",
        &y_s,
        "--trace",
        &trace_s,
    ];
    wsel(dir, &[&run_args[..], &common[..]].concat());
    let bytes = std::fs::read(&y_path).expect("output");
    let y: Vec<f32> = npyz::NpyFile::new(&bytes[..])
        .expect("an .npy file")
        .into_vec()
        .expect("f32 values");
    let trace: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&trace).expect("trace")).expect("json");
    (y, measured(case, &placement["layers"][0], &trace))
}

/// From the trace: the first sender's `turns` start to the end of the last `finish`.
fn measured(case: &Case, layer: &serde_json::Value, trace: &serde_json::Value) -> u64 {
    let events = trace
        .as_array()
        .or_else(|| trace["traceEvents"].as_array())
        .expect("trace events");
    let num = |v: &serde_json::Value| v.as_u64().expect("a number");
    // (pid, tid) of every PE of the layer, by its (row, column) in the region (tracks are
    // named `LAYER · PE (row, column)`).
    let prefix = format!(
        "{} · PE (",
        layer["name"].as_str().expect("the layer's name")
    );
    let mut threads = std::collections::HashMap::new();
    for e in events.iter().filter(|e| e["name"] == "thread_name") {
        let name = e["args"]["name"].as_str().unwrap_or_default();
        if let Some(rc) = name.strip_prefix(&prefix).and_then(|s| s.strip_suffix(')')) {
            let (r, c) = rc.split_once(", ").expect("row, column");
            let cell = (
                r.parse::<u64>().expect("row"),
                c.parse::<u64>().expect("column"),
            );
            threads.insert(cell, (num(&e["pid"]), num(&e["tid"])));
        }
    }
    let first = match case.kind {
        Kind::Broadcast => case.root,
        _ => 0,
    };
    let thread = threads[&case.line.cell(first)];
    let tasks = events.iter().filter(|e| e["ph"] == "X");
    let start = tasks
        .clone()
        .filter(|e| e["name"] == "turns" && (num(&e["pid"]), num(&e["tid"])) == thread)
        .map(|e| num(&e["ts"]))
        .min()
        .expect("the first sender's turns");
    let end = tasks
        .filter(|e| e["name"] == "finish")
        .map(|e| num(&e["ts"]) + num(&e["dur"]))
        .max()
        .expect("finish tasks");
    end - start
}

fn case(layer: &'static str, kind: Kind, line: Line, n: u64) -> Case {
    Case {
        layer,
        kind,
        line,
        n,
        root: 0,
        max: false,
    }
}

#[test]
fn bus_collectives_match_their_references_and_cycle_formulas() {
    use Kind::*;
    let dir = temp_dir("collectives");
    let cases = [
        case("allreduce_row", Allreduce, Line::Row(4), 3),
        case("allreduce_row", Allreduce, Line::Row(3), 6),
        Case {
            max: true,
            ..case("allreduce_col", Allreduce, Line::Col(4), 2)
        },
        case("allreduce_region", Allreduce, Line::Region(2, 3), 2),
        Case {
            max: true,
            ..case("reduce_row", Reduce, Line::Row(5), 3)
        },
        case("reduce_col", Reduce, Line::Col(3), 4),
        case("reduce_region", Reduce, Line::Region(3, 2), 5),
        Case {
            root: 2,
            ..case("broadcast_row", Broadcast, Line::Row(5), 4)
        },
        Case {
            root: 1,
            ..case("broadcast_col", Broadcast, Line::Col(3), 2)
        },
        Case {
            root: 4,
            ..case("broadcast_region", Broadcast, Line::Region(2, 3), 3)
        },
        case("gather_row", Gather, Line::Row(4), 2),
        case("gather_col", Gather, Line::Col(3), 3),
        case("scatter_row", Scatter, Line::Row(4), 2),
        case("scatter_col", Scatter, Line::Col(3), 3),
    ];
    let mut failures = Vec::new();
    for c in &cases {
        let (y, cycles) = run(&dir, c);
        let x: Vec<f32> = (0..c.line.pes() * c.n).map(input).collect();
        assert_eq!(y, reference(c, &x), "{c:?}: result");
        if cycles != formula(c) {
            failures.push(format!("{c:?}: simulated {cycles}, formula {}", formula(c)));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
