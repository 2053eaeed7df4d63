//! Unit tests: the class-based checks against a brute force over every PE, the transfer
//! numbering against the IR's, the size of the classes on a full wafer, and E0704 on
//! hand-built placements (no program can make the mapper produce it).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use wsel_ir::graph::CValue;
use wsel_ir::kernel::{KernelIr, KernelSpans, PortId, TaskId, for_each_transfer};
use wsel_map::{
    ColorRule, Estimate, Hop, Orientation, PlacedLayer, PlacedPort, Placement, Transfer,
};
use wsel_sema::{Database, ItemKind};
use wsel_target::{Coord, DefectMap, Dir, Port, PortSet, Rect};

use crate::classes::{NORTH, classes};
use crate::eval::CoordEnv;
use crate::facts::Facts;
use crate::reach::{PortOp, Reach, reach};
use crate::streams::side_index;
use wsel_map::pairing;

/// Lowers kernel `name` of `src` with integer arguments.
pub(crate) fn lower(src: &str, name: &str, args: &[(&str, i64)]) -> (KernelIr, KernelSpans) {
    let mut db = Database::default();
    let text = src.to_string();
    let mut read = move |_: &Path| Ok(text.clone());
    let file = wsel_sema::load_program(&mut db, Path::new("k.wse"), &mut read).expect("loads");
    let diagnostics = wsel_sema::diagnostics(&db, file);
    assert!(diagnostics.is_empty(), "{diagnostics:#?}");
    let item = wsel_sema::module_scope(&db, file)
        .get(name)
        .filter(|i| i.kind(&db) == ItemKind::Kernel)
        .expect("the kernel");
    let args: Vec<(String, CValue)> = args
        .iter()
        .map(|(n, v)| (n.to_string(), CValue::Int(*v)))
        .collect();
    wsel_lower::lower_kernel_with_spans(&db, item, &args).expect("lowers")
}

pub(crate) fn port(name: &str, input: bool, side: Dir, multicast: bool, bound: bool) -> PlacedPort {
    PlacedPort {
        name: name.to_string(),
        input,
        multicast,
        side,
        physical_side: side,
        colors: ColorRule::Fixed { color: 0 },
        bound: bound.then(|| "t".to_string()),
        parts: 0,
        bus: None,
        passes_on: false,
        distance: None,
        switch: None,
    }
}

pub(crate) fn layer(rows: u32, cols: u32, ports: Vec<PlacedPort>) -> PlacedLayer {
    PlacedLayer {
        name: "l#1".into(),
        layer: "l".into(),
        copy: 0,
        phase: 0,
        implementation: 0,
        kernel: "k".into(),
        kernel_file: PathBuf::from("k.wse"),
        rows,
        cols,
        rect: Rect::new(0, 0, cols, rows),
        orientation: Orientation::Identity,
        kernel_args: Vec::new(),
        sram_bytes: 0,
        estimate: Estimate::default(),
        ports,
    }
}

/// The E0701/E0702 findings of `ir` on `placed`, as `check` computes them.
fn findings(ir: &KernelIr, placed: &PlacedLayer) -> Vec<crate::Finding> {
    let classes = classes(ir, &Facts::of(ir, &[]), placed.rows, placed.cols);
    let reaches: Vec<Reach> = classes
        .bases
        .iter()
        .map(|env| reach(ir, &Facts::of(ir, &[]), Some(env)))
        .collect();
    crate::port_findings(ir, placed, &classes, &reaches)
}

/// Every (statement, problem, PE) the class-based check reports.
pub(crate) fn by_classes(ir: &KernelIr, placed: &PlacedLayer) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for f in findings(ir, placed) {
        for set in &f.pes {
            for (r, c) in set.first(usize::MAX) {
                out.insert(format!("{:?} {:?} ({r}, {c})", f.stmt, f.problem));
            }
        }
    }
    out
}

/// The same, PE by PE: every PE's own reach and its actual neighbours'.
fn brute_force(ir: &KernelIr, placed: &PlacedLayer) -> BTreeSet<String> {
    let (rows, cols) = (placed.rows, placed.cols);
    let env = |row, col| CoordEnv {
        row,
        col,
        rows,
        cols,
    };
    let reaches: Vec<Vec<Reach>> = (0..rows)
        .map(|r| {
            (0..cols)
                .map(|c| reach(ir, &Facts::of(ir, &[]), Some(&env(r, c))))
                .collect()
        })
        .collect();
    let paired = pairing(&placed.ports);
    let mut out = BTreeSet::new();
    for r in 0..rows {
        for c in 0..cols {
            let neighbour = |side: Dir| -> Option<&Reach> {
                let (nr, nc) = match side {
                    Dir::North => (r.checked_sub(1)?, c),
                    Dir::South => (r + 1, c),
                    Dir::East => (r, c + 1),
                    Dir::West => (r, c.checked_sub(1)?),
                };
                reaches.get(nr as usize)?.get(nc as usize)
            };
            for &(stmt, op) in &reaches[r as usize][c as usize].ops {
                let (p, recv) = match op {
                    PortOp::Recv(p) => (p.0 as usize, true),
                    PortOp::Send(p) => (p.0 as usize, false),
                };
                let placed_port = &placed.ports[p];
                let problem = if recv && placed_port.multicast {
                    placed_port
                        .bound
                        .is_none()
                        .then_some(crate::Problem::MulticastUnbound)
                } else {
                    match neighbour(placed_port.side) {
                        None => placed_port
                            .bound
                            .is_none()
                            .then_some(crate::Problem::EdgeUnbound),
                        Some(n) => match paired[p] {
                            None => Some(crate::Problem::NoPartner),
                            Some(q) => {
                                let used = if recv {
                                    n.sends_on(PortId(q as u32))
                                } else {
                                    n.receives_on(PortId(q as u32))
                                };
                                (!used).then_some(crate::Problem::NeighbourSilent(q))
                            }
                        },
                    }
                };
                if let Some(problem) = problem {
                    out.insert(format!("{stmt:?} {problem:?} ({r}, {c})"));
                }
            }
        }
    }
    out
}

/// Conditions on rows, columns, both, data, loops, `return`, and an unpaired port.
const MIXED: &str = r"
kernel k(n: u32) {
    var a: [f32; 4];
    var c: u32 = 0;
    in  fromn: stream<f32> from north;
    out tos:   stream<f32> to south;
    in  fromw: stream<f32> from west;
    out toe:   stream<f32> to east;
    in  frome: stream<f32> from east;
    out tow:   stream<f32> to west;
    out ton:   stream<f32> to north;
    in  mc:    stream<f32> from west multicast;
    task main() {
        if pe.row > 0 { recv(fromn, a[0..1]) then t1; }
        if pe.row < region.rows - 2 { send(tos, a[0..1]); }
        if pe.col % 2 == 1 && c > 0 { send(toe, a[0..1]); }
        if DIAGONAL { recv(fromw, a[0..1]) then t2; }
        if pe.col != 1 || c == 3 { send(tow, a[0..1]); }
        for i in pe.col..2 { recv(frome, a[0..1]) then t1; }
        if pe.row == 1 { send(ton, a[0..1]); }
        recv(mc, a[0..1]) then t1;
    }
    task t1() {
        c += 1;
        if pe.row == 1 { return; }
        send(toe, a[0..1]);
    }
    task t2() {
        while pe.col > n { recv(fromw, a[0..1]) then t1; }
    }
    task unused() { send(tos, a[0..1]); }
}
";

fn mixed_ports(mc_bound: bool, tos_bound: bool) -> Vec<PlacedPort> {
    vec![
        port("fromn", true, Dir::North, false, false),
        port("tos", false, Dir::South, false, tos_bound),
        port("fromw", true, Dir::West, false, false),
        port("toe", false, Dir::East, false, false),
        port("frome", true, Dir::East, false, true),
        port("tow", false, Dir::West, false, false),
        port("ton", false, Dir::North, false, false),
        port("mc", true, Dir::West, true, mc_bound),
    ]
}

#[test]
fn classes_find_exactly_what_every_pe_finds() {
    for diagonal in ["pe.row == pe.col", "pe.col == 2"] {
        let src = MIXED.replace("DIAGONAL", diagonal);
        let (ir, _) = lower(&src, "k", &[("n", 1)]);
        for (rows, cols) in [(1, 1), (1, 4), (3, 1), (4, 5), (6, 3), (2, 2)] {
            for (mc, tos) in [(false, false), (true, true)] {
                let placed = layer(rows, cols, mixed_ports(mc, tos));
                let expected = brute_force(&ir, &placed);
                assert!(!expected.is_empty());
                assert_eq!(
                    by_classes(&ir, &placed),
                    expected,
                    "{diagonal}, {rows} × {cols}, mc bound {mc}"
                );
            }
        }
    }
}

#[test]
fn the_walk_numbers_transfers_as_the_ir_does() {
    let (ir, spans) = lower(&MIXED.replace("DIAGONAL", "pe.col == 2"), "k", &[("n", 1)]);
    let everything = reach(&ir, &Facts::of(&ir, &[]), None);
    for (t, task) in ir.tasks.iter().enumerate() {
        let mut numbered = Vec::new();
        for_each_transfer(&task.body, &mut |i, stmt| {
            let port = match stmt {
                wsel_ir::kernel::Stmt::Recv { port, .. } => Some(PortOp::Recv(*port)),
                wsel_ir::kernel::Stmt::SendSlice { port, .. }
                | wsel_ir::kernel::Stmt::SendScalar { port, .. } => Some(PortOp::Send(*port)),
                _ => None,
            };
            if let Some(op) = port {
                numbered.push((i, op));
            }
        });
        let walked: Vec<(usize, PortOp)> = everything
            .ops
            .iter()
            .filter(|(s, _)| s.task == TaskId(t as u32))
            .map(|(s, op)| (s.index, *op))
            .collect();
        if everything.tasks[t] {
            assert_eq!(walked, numbered, "task {}", task.name);
        }
        assert!(spans.tasks[t].transfers.len() >= numbered.len());
    }
    // `unused` is the only task nothing activates.
    let dead: Vec<&str> = ir
        .tasks
        .iter()
        .zip(&everything.tasks)
        .filter(|(_, alive)| !**alive)
        .map(|(t, _)| t.name.as_str())
        .collect();
    assert_eq!(dead, ["unused"]);
}

#[test]
fn a_full_wafer_has_a_handful_of_groups() {
    // A halo exchange in four directions, guarded by the region's edges.
    let src = r"
kernel halo() {
    var a: [f32; 4];
    in  fromn: stream<f32> from north;
    out tos:   stream<f32> to south;
    in  froms: stream<f32> from south;
    out ton:   stream<f32> to north;
    in  fromw: stream<f32> from west;
    out toe:   stream<f32> to east;
    in  frome: stream<f32> from east;
    out tow:   stream<f32> to west;
    task main() {
        if pe.row > 0 { send(ton, a[0..1]); recv(fromn, a[0..1]) then done; }
        if pe.row < region.rows - 1 { send(tos, a[0..1]); recv(froms, a[0..1]) then done; }
        if pe.col > 0 { send(tow, a[0..1]); recv(fromw, a[0..1]) then done; }
        if pe.col < region.cols - 1 { send(toe, a[0..1]); recv(frome, a[0..1]) then done; }
    }
    task done() { }
}
";
    let (ir, _) = lower(src, "halo", &[]);
    let started = std::time::Instant::now();
    let c = classes(&ir, &Facts::of(&ir, &[]), 750, 994);
    assert_eq!(c.bases.len(), 9, "first/other/last rows × columns");
    // Rows: first, second, middle, second to last, last (their neighbours differ).
    assert_eq!(c.groups.len(), 25);
    let total: u64 = c.groups.iter().map(|g| g.pes.len()).sum();
    assert_eq!(total, 750 * 994);
    assert!(c.groups.iter().all(|g| g.neighbours[NORTH].is_some() || {
        matches!(&g.pes, crate::classes::PeSet::Grid { rows, .. } if rows == &[0])
    }));
    let ports = vec![
        port("fromn", true, Dir::North, false, false),
        port("tos", false, Dir::South, false, false),
        port("froms", true, Dir::South, false, false),
        port("ton", false, Dir::North, false, false),
        port("fromw", true, Dir::West, false, false),
        port("toe", false, Dir::East, false, false),
        port("frome", true, Dir::East, false, false),
        port("tow", false, Dir::West, false, false),
    ];
    let placed = layer(750, 994, ports);
    assert!(findings(&ir, &placed).is_empty());
    // Generous: the point is that it does not grow with the 745,500 PEs.
    assert!(started.elapsed().as_secs() < 5);
    assert_eq!(side_index(Dir::North), NORTH);
}

/// A placement of `layers` with no transfers, for the route check.
fn placement(layers: Vec<PlacedLayer>, transfers: Vec<Transfer>) -> Placement {
    Placement {
        model: "m".into(),
        target: "t".into(),
        fabric_width: 16,
        fabric_height: 16,
        mode: "pipelined".into(),
        batch: 1,
        samples_per_copy: 1,
        sram_bytes_available: 4096,
        colors_available: 24,
        colors_used: 4,
        stage_target: 0,
        copies: 1,
        phases: 1,
        micro_batches: 1,
        micro_batch_reason: String::new(),
        micro_traffic: None,
        one_region: None,
        estimated_cycles: 0,
        estimated_fill_cycles: 0,
        copies_reason: String::new(),
        layout_reason: String::new(),
        layers,
        transfers,
        inputs: Vec::new(),
        outputs: Vec::new(),
        defects: DefectMap::default(),
    }
}

fn graph(layers: usize) -> wsel_ir::graph::LayerGraph {
    let call = wsel_ir::graph::SourceSpan {
        file: PathBuf::from("m.wse"),
        span: 0..1,
    };
    wsel_ir::graph::LayerGraph {
        model: "m".into(),
        batch: 1,
        inputs: Vec::new(),
        params: Vec::new(),
        layers: (0..layers)
            .map(|i| wsel_ir::graph::LayerInstance {
                name: format!("l#{}", i + 1),
                layer: "l".into(),
                call: call.clone(),
                args: Vec::new(),
                arg_names: Vec::new(),
                output_name: "y".into(),
                output_elem: wsel_ir::kernel::ScalarTy::F32,
                output_shape: vec![1],
                dims: Default::default(),
                scalars: Vec::new(),
                cost: wsel_ir::graph::LayerCost {
                    flops: 0,
                    weight_bytes: 0,
                    activation_bytes: 0,
                },
                impls: Vec::new(),
            })
            .collect(),
        output: wsel_ir::graph::TensorRef::Layer(0),
    }
}

fn alternating(even: u8, odd: u8) -> ColorRule {
    ColorRule::Alternating {
        along_rows: false,
        even,
        odd,
        stride: 1,
    }
}

/// A row of PEs passing values east, on colors 1 and 2.
fn chain(rows: u32, cols: u32, out_colors: (u8, u8), in_colors: (u8, u8)) -> PlacedLayer {
    let mut toe = port("toe", false, Dir::East, false, false);
    toe.colors = alternating(out_colors.0, out_colors.1);
    let mut fromw = port("fromw", true, Dir::West, false, false);
    fromw.colors = alternating(in_colors.0, in_colors.1);
    let mut xs = port("xs", true, Dir::North, true, true);
    xs.colors = ColorRule::Fixed { color: 3 };
    layer(rows, cols, vec![toe, fromw, xs])
}

#[test]
fn entries_match_the_mappers_region_routes() {
    for (rows, cols) in [(1, 1), (1, 5), (4, 3), (7, 6)] {
        for orientation in [Orientation::Identity, Orientation::Transposed] {
            let mut l = chain(rows, cols, (1, 2), (2, 1));
            l.orientation = orientation;
            let (w, h) = orientation.extent(rows, cols);
            l.rect = Rect::new(2, 3, w, h);
            let mut mine = Vec::new();
            for r in 0..rows {
                for c in 0..cols {
                    for (_, color, e) in l.entries_at(r, c) {
                        mine.push(format!("{color} {:?} {:?} {:?}", e.at, e.rx, e.tx));
                    }
                }
            }
            let mut theirs: Vec<String> = l
                .region_routes()
                .into_iter()
                .map(|(color, e)| format!("{color} {:?} {:?} {:?}", e.at, e.rx, e.tx))
                .collect();
            mine.sort();
            theirs.sort();
            assert_eq!(mine, theirs, "{rows} × {cols} {orientation:?}");
        }
    }
}

#[test]
fn a_color_with_two_routes_at_one_router_is_reported() {
    // As the mapper colors it: no conflict.
    let good = placement(vec![chain(2, 4, (1, 2), (2, 1))], Vec::new());
    assert!(crate::routes::check(&graph(1), &good).is_empty());

    // The multicast port given a color the chain also uses at every PE.
    let mut clash = chain(2, 4, (1, 2), (2, 1));
    clash.ports[2].colors = ColorRule::Fixed { color: 1 };
    let found = crate::routes::check(&graph(1), &placement(vec![clash], Vec::new()));
    assert!(!found.is_empty());
    assert!(found.iter().all(|d| d.code == crate::E0704));
    assert!(
        found[0].message.contains("color 1 has two routes"),
        "{}",
        found[0].message
    );
    assert!(
        found[0].message.contains("port `toe` of `l#1`"),
        "{}",
        found[0].message
    );

    // A transfer crossing the region on a color the region uses there.
    let hop = |x, y| Hop {
        at: Coord::new(x, y),
        rx: PortSet::only(Port::N),
        tx: PortSet::only(Port::S),
    };
    let crossing = Transfer {
        tensor: "x".into(),
        copy: 0,
        part: 0,
        parts: 1,
        color: 3,
        source: wsel_map::Endpoint::Host {
            input: 0,
            at: Coord::new(1, 0),
            side: Dir::North,
        },
        destinations: Vec::new(),
        hops: vec![hop(1, 0), hop(1, 1)],
    };
    let found = crate::routes::check(
        &graph(1),
        &placement(vec![chain(2, 4, (1, 2), (2, 1))], vec![crossing.clone()]),
    );
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(
        found[0].message.contains("the stream of `x`"),
        "{}",
        found[0].message
    );

    // Two transfers through one router on one color.
    let mut other = crossing.clone();
    other.tensor = "w".into();
    other.hops = vec![hop(9, 9)];
    let mut first = crossing;
    first.hops = vec![hop(9, 9)];
    let found = crate::routes::check(&graph(1), &placement(Vec::new(), vec![first, other]));
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(found[0].message.contains("(9, 9)"), "{}", found[0].message);
}

#[test]
fn every_code_is_documented() {
    let doc = include_str!("../../../docs/diagnostics.md");
    let missing: Vec<&str> = crate::codes()
        .iter()
        .map(|(c, _)| *c)
        .filter(|c| !doc.contains(&format!("| {c} |")))
        .collect();
    assert!(
        missing.is_empty(),
        "codes missing from docs/diagnostics.md: {missing:?}"
    );
}

#[test]
fn locals_naming_coordinate_conditions_are_seen_through() {
    let src = r"
kernel k() {
    var a: [f32; 4];
    in  fromw: stream<f32> from west;
    out toe:   stream<f32> to east;
    task main() {
        let first = pe.col == 0;
        var inner: bool = !first;
        if inner { recv(fromw, a[0..1]) then t; } else { activate t; }
    }
    task t() {
        let last = pe.col + 1 == region.cols;
        var k: u32 = pe.col;
        k = 0;
        if !last { send(toe, a[0..1]); }
        if k == 5 { send(toe, a[0..1]); }
    }
}
";
    let (ir, _) = lower(src, "k", &[]);
    let ports = vec![
        port("fromw", true, Dir::West, false, false),
        port("toe", false, Dir::East, false, false),
    ];
    let placed = layer(1, 4, ports);
    let inlined = crate::inline::inline_coordinate_locals(&ir);
    let findings = by_classes(&inlined, &placed);
    // Only `k`, assigned twice, stays data: its send may run on the last column.
    assert_eq!(findings.len(), 1, "{findings:#?}");
    assert!(
        findings
            .iter()
            .all(|f| f.contains("index: 1") && f.ends_with("(0, 3)"))
    );
    // Without seeing through the locals, column 0 would wait on `fromw` too.
    assert!(by_classes(&ir, &placed).len() > 1);
    assert_eq!(
        by_classes(&inlined, &placed),
        brute_force(&inlined, &placed)
    );
}

/// The E0705 cycles of kernel `k` (source `tasks`, with one counter `a`) on a 4 × 4 region,
/// as task names, with how many PEs each may start on.
fn endless_in(tasks: &str) -> Vec<(Vec<String>, u64)> {
    let src = format!(
        "kernel k(n: u32) {{\n    var a: [u32; 1];\n    out ys: stream<u32> to south;\n{tasks}\n}}\n"
    );
    let (ir, _) = lower(&src, "k", &[("n", 3)]);
    let classes = classes(&ir, &Facts::of(&ir, &[]), 4, 4);
    let reaches: Vec<Reach> = classes
        .bases
        .iter()
        .map(|env| reach(&ir, &Facts::of(&ir, &[]), Some(env)))
        .collect();
    crate::endless_cycles(&ir, &classes, &reaches)
        .into_iter()
        .map(|(cycle, pes)| {
            let names = cycle
                .tasks
                .iter()
                .map(|t| ir.tasks[t.0 as usize].name.clone())
                .collect();
            (names, pes.iter().map(|s| s.len()).sum())
        })
        .collect()
}

#[test]
fn certain_activation_cycles_are_found_and_conditional_ones_are_not() {
    let spin = |main: &str, spin: &str| {
        endless_in(&format!(
            "task main() {{ {main} }}\n task spin() {{ a[0] += 1; {spin} }}"
        ))
    };
    let everywhere = |names: &[&str]| vec![(names.iter().map(|s| s.to_string()).collect(), 16)];
    // A task that ends by activating itself, started on every PE.
    assert_eq!(
        spin("activate spin;", "activate spin;"),
        everywhere(&["spin"])
    );
    // Through a send's completion too.
    assert_eq!(
        spin("activate spin;", "send(ys, a[0..1]) then spin;"),
        everywhere(&["spin"])
    );
    // Conditional activations, an early return before it, or a receive: the chain can end.
    assert!(spin("activate spin;", "if a[0] < n { activate spin; }").is_empty());
    assert!(spin("activate spin;", "if a[0] == n { return; } activate spin;").is_empty());
    assert!(
        spin(
            "activate spin;",
            "while a[0] < n { activate spin; a[0] += 1; }"
        )
        .is_empty()
    );
    // A cycle nothing starts is not reported (E0703 is about tasks nothing starts).
    assert!(spin("a[0] = 1;", "activate spin;").is_empty());
    // Started only where the coordinates allow: on the first row's 4 PEs, not on any PE of
    // a 4 × 4 region when the condition can never hold.
    assert_eq!(
        spin("if pe.row == 0 { activate spin; }", "activate spin;"),
        vec![(vec!["spin".to_string()], 4)]
    );
    assert!(spin("if pe.row > 9 { activate spin; }", "activate spin;").is_empty());
    // Two tasks activating each other: one cycle, from its lowest task.
    let pair = endless_in(
        "task main() { activate ping; }\n task ping() { a[0] += 1; activate pong; }\n task pong() { send(ys, a[0..1]) then ping; }",
    );
    assert_eq!(pair, everywhere(&["ping", "pong"]));
}

/// SUMMA's step k, forwarding tiles PE by PE (issue 27's shape): column k sends its A tile
/// east and row k its B tile south; a PE east of column k (south of row k) receives one and
/// passes it on. `k` is an SRAM counter, `step` a loop counter.
const SUMMA: &str = r"
kernel summa(n: u32, p: u32) {
    var a: [f32; n];
    var b: [f32; n];
    var c: [f32; n];
    var k: u32 = 0;
    in  from_w: stream<f32> from west;
    out to_e:   stream<f32> to east;
    in  from_n: stream<f32> from north;
    out to_s:   stream<f32> to south;
    task main() { activate step; }
    task step() {
        if pe.col == k {
            if pe.col < region.cols - 1 { send(to_e, a[0..n]); }
        } else if pe.col RELATION k {
            recv(from_w, a[0..n]) then pass_a;
        }
        if pe.row == k {
            if pe.row < region.rows - 1 { send(to_s, b[0..n]); }
        } else if pe.row > k {
            recv(from_n, b[0..n]) then pass_b;
        }
        for s in 0..p {
            if pe.col > s { c[0..n] += a[0..n]; }
        }
    }
    task pass_a() {
        if pe.col < region.cols - 1 { send(to_e, a[0..n]); }
        activate next;
    }
    task pass_b() {
        if pe.row < region.rows - 1 { send(to_s, b[0..n]); }
    }
    task next() {
        k += 1;
        if k < p { activate step; }
    }
}
";

#[test]
fn a_coordinate_compared_with_a_counter_is_decided_where_the_coordinate_settles_it() {
    let ports = || {
        vec![
            port("from_w", true, Dir::West, false, false),
            port("to_e", false, Dir::East, false, false),
            port("from_n", true, Dir::North, false, false),
            port("to_s", false, Dir::South, false, false),
        ]
    };
    // `pe.col > k`: column 0 never receives from the west, whatever k; no finding.
    let (ir, _) = lower(
        &SUMMA.replace("RELATION", ">"),
        "summa",
        &[("n", 2), ("p", 4)],
    );
    let placed = layer(4, 4, ports());
    assert_eq!(by_classes(&ir, &placed), BTreeSet::new());
    assert_eq!(by_classes(&ir, &placed), brute_force(&ir, &placed));
    // `pe.col >= k` holds on column 0 when k is 0: a real wait on the region's west edge.
    let (ir, _) = lower(
        &SUMMA.replace("RELATION", ">="),
        "summa",
        &[("n", 2), ("p", 4)],
    );
    let found = by_classes(&ir, &placed);
    assert!(!found.is_empty());
    assert!(
        found
            .iter()
            .all(|f| f.contains("EdgeUnbound") && f.contains(", 0)")),
        "{found:#?}"
    );
    assert_eq!(found, brute_force(&ir, &placed));
}
