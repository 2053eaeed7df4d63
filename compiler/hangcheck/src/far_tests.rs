//! Unit tests of the checks on ports with a distance (`by k`): the class-based findings
//! against every PE looked at on its own, and hand-derived findings on a small row.

use std::collections::BTreeSet;

use wsel_ir::kernel::PortId;
use wsel_map::{PlacedPort, pairing};
use wsel_target::Dir;

use crate::Problem;
use crate::eval::CoordEnv;
use crate::facts::Facts;
use crate::reach::{PortOp, Reach, reach};
use crate::tests::{by_classes, layer, lower, port};

/// Far ports along both axes, used on and off their stride, one without a partner, and a
/// receive that may run on the diagonal only (which makes the classes per PE).
const FAR: &str = r"
kernel k(h: u32) {
    var a: [f32; 4];
    out toe:   stream<f32> to east by h;
    in  fromw: stream<f32> from west by h;
    out tow:   stream<f32> to west by h;
    in  frome: stream<f32> from east by h;
    out tos:   stream<f32> to south by 2;
    in  fromn: stream<f32> from north by 2;
    out ton:   stream<f32> to north by 2;
    task main() {
        if pe.col % 2 == 0 { send(toe, a[0..1]); }
        if pe.col > 0 { recv(fromw, a[0..1]) then t; }
        if pe.col == region.cols - 1 { send(tow, a[0..1]); }
        if DIAGONAL { recv(frome, a[0..1]) then t; }
        if pe.row < 3 { send(tos, a[0..1]); }
        if pe.row % 2 == 0 && pe.row > 0 { recv(fromn, a[0..1]) then t; }
        if pe.row == 2 { send(ton, a[0..1]); }
    }
    task t() { }
}
";

fn far(name: &str, input: bool, side: Dir, k: u32, bound: bool) -> PlacedPort {
    PlacedPort {
        distance: Some(k),
        ..port(name, input, side, false, bound)
    }
}

fn far_ports(h: u32, bound: bool) -> Vec<PlacedPort> {
    vec![
        far("toe", false, Dir::East, h, bound),
        far("fromw", true, Dir::West, h, false),
        far("tow", false, Dir::West, h, false),
        far("frome", true, Dir::East, h, bound),
        far("tos", false, Dir::South, 2, false),
        far("fromn", true, Dir::North, 2, false),
        far("ton", false, Dir::North, 2, false),
    ]
}

/// Every (statement, problem, PE), PE by PE: each PE's own reach, and the reach of the PE
/// `k` away, by the rule of `docs/language.md` §5.4 (only indices that are multiples of `k`
/// take part; the last index along the port's side is the region's edge).
fn brute_force(ir: &wsel_ir::kernel::KernelIr, placed: &wsel_map::PlacedLayer) -> BTreeSet<String> {
    let (rows, cols) = (placed.rows, placed.cols);
    let facts = Facts::of(ir, &[]);
    let reach_at = |row, col| {
        let env = CoordEnv {
            row,
            col,
            rows,
            cols,
        };
        reach(ir, &facts, Some(&env))
    };
    let reaches: Vec<Vec<Reach>> = (0..rows)
        .map(|r| (0..cols).map(|c| reach_at(r, c)).collect())
        .collect();
    let paired = pairing(&placed.ports);
    let mut out = BTreeSet::new();
    for r in 0..rows {
        for c in 0..cols {
            for &(stmt, op) in &reaches[r as usize][c as usize].ops {
                let (p, recv) = match op {
                    PortOp::Recv(p) => (p.0 as usize, true),
                    PortOp::Send(p) => (p.0 as usize, false),
                };
                let pp = &placed.ports[p];
                let k = pp.distance.expect("every port has a distance") as i64;
                let (dr, dc) = match pp.side {
                    Dir::North => (-1, 0),
                    Dir::South => (1, 0),
                    Dir::East => (0, 1),
                    Dir::West => (0, -1),
                };
                let index = if dr != 0 { r } else { c } as i64;
                let inside = |d: i64| {
                    let (nr, nc) = (r as i64 + d * dr, c as i64 + d * dc);
                    ((0..rows as i64).contains(&nr) && (0..cols as i64).contains(&nc))
                        .then_some((nr as usize, nc as usize))
                };
                let problem = if index % k != 0 {
                    Some(Problem::OffStride(k as u32))
                } else if inside(1).is_none() {
                    pp.bound.is_none().then_some(Problem::EdgeUnbound)
                } else if let Some((fr, fc)) = inside(k) {
                    match paired[p] {
                        None => Some(Problem::NoPartner),
                        Some(q) => {
                            let other = &reaches[fr][fc];
                            let used = if recv {
                                other.sends_on(PortId(q as u32))
                            } else {
                                other.receives_on(PortId(q as u32))
                            };
                            (!used).then_some(Problem::NeighbourSilent(q))
                        }
                    }
                } else {
                    Some(Problem::BeyondRegion(k as u32))
                };
                if let Some(problem) = problem {
                    out.insert(format!("{stmt:?} {problem:?} ({r}, {c})"));
                }
            }
        }
    }
    out
}

#[test]
fn far_ports_are_checked_on_every_pe_as_each_pe_would_be() {
    for diagonal in ["pe.row == pe.col", "pe.col % 3 == 0"] {
        for h in [1, 2, 3] {
            let src = FAR.replace("DIAGONAL", diagonal);
            let (ir, _) = lower(&src, "k", &[("h", h)]);
            for (rows, cols) in [(1, 7), (5, 7), (4, 9), (6, 5), (3, 1)] {
                for bound in [false, true] {
                    let placed = layer(rows, cols, far_ports(h as u32, bound));
                    let expected = brute_force(&ir, &placed);
                    assert!(!expected.is_empty());
                    assert_eq!(
                        by_classes(&ir, &placed),
                        expected,
                        "{diagonal}, h = {h}, {rows} × {cols}, bound {bound}"
                    );
                }
            }
        }
    }
}

/// `sliding-window-rpc`'s shape (`examples/fidelity`) on a row of 7 PEs, `by 3`: the edges
/// send to the middle, which sends on; `BREAK` removes one of its sends.
const RPC: &str = r"
kernel rpc(half: u32) {
    var a: [f32; 4];
    out to_east:   stream<f32> to east by half;
    in  from_west: stream<f32> from west by half;
    out to_west:   stream<f32> to west by half;
    in  from_east: stream<f32> from east by half;
    task main() {
        if pe.col == 0 {
            send(to_east, a[0..4]);
            recv(from_east, a[0..4]) then done;
        } else if pe.col == 2 * half {
            send(to_west, a[0..4]);
            recv(from_west, a[0..4]) then done;
        } else if pe.col == half {
            recv(from_west, a[0..4]) then got;
            recv(from_east, a[0..4]) then got;
        } else if pe.col == 1 {
            BREAK
        }
    }
    task got() {
        send(to_west, a[0..4]);
        SEND_EAST
    }
    task done() { }
}
";

fn rpc_ports() -> Vec<PlacedPort> {
    vec![
        far("to_east", false, Dir::East, 3, false),
        far("from_west", true, Dir::West, 3, false),
        far("to_west", false, Dir::West, 3, false),
        far("from_east", true, Dir::East, 3, false),
    ]
}

#[test]
fn a_far_round_trip_is_clean_and_its_broken_variants_are_found() {
    let run = |brk: &str, send_east: &str| {
        let src = RPC.replace("BREAK", brk).replace("SEND_EAST", send_east);
        let (ir, _) = lower(&src, "rpc", &[("half", 3)]);
        by_classes(&ir, &layer(1, 7, rpc_ports()))
    };
    let full = "send(to_east, a[0..4]);";
    // The port as written: PEs 0, 3 and 6 take part, and every operation has its partner.
    assert_eq!(run("", full), BTreeSet::new());
    // Without the middle's send east, PE 6's receive from the west waits for PE 3, 3
    // further west, which never sends on `to_east` (port 0).
    let found = run("", "");
    assert_eq!(found.len(), 1, "{found:#?}");
    let f = found.iter().next().expect("one");
    assert!(
        f.contains("NeighbourSilent(0)") && f.ends_with("(0, 6)"),
        "{f}"
    );
    // PE 1 is between 0 and 3: a send east there has no route from its ramp.
    let found = run("send(to_east, a[0..4]);", full);
    assert_eq!(found.len(), 1, "{found:#?}");
    let f = found.iter().next().expect("one");
    assert!(f.contains("OffStride(3)") && f.ends_with("(0, 1)"), "{f}");
}
