//! E0701/E0702 for ports with a distance (`to D by k`, `docs/language.md` §5.4). Such a port
//! links only the PEs whose index along `D`'s axis (`pe.col` for `east`/`west`, `pe.row`
//! for `north`/`south`) is a multiple of `k`: each sends to, or receives from, the PE `k`
//! further toward `D`, and the routers between pass the stream through (the mapper's
//! `links::link_entry`). So an operation on such a port may never finish on a PE
//!
//! - whose index is not a multiple of `k` (its router passes the stream on, or has no route
//!   for it: [`Problem::OffStride`]);
//! - on the region's edge on the port's side, when the layer binds nothing to the port
//!   ([`Problem::EdgeUnbound`]);
//! - not on that edge, but with the PE `k` further outside the region (no route:
//!   [`Problem::BeyondRegion`]);
//! - where no port pairs with it ([`Problem::NoPartner`]), or where the PE `k` further never
//!   uses the paired port ([`Problem::NeighbourSilent`]).
//!
//! The groups of [`classes`](crate::classes) describe neighbours one apart, so the PEs of one
//! group may differ here: each line of the group along the port's axis is looked at once,
//! with the base class of its partner line ([`BaseOf`]).

use wsel_ir::kernel::PortId;
use wsel_map::PlacedPort;
use wsel_target::Dir;

use crate::Problem;
use crate::classes::{BaseOf, Group, PeSet};
use crate::reach::Reach;

/// A far port's operation on one group: the port, the port it pairs with, and whether the
/// operation is a receive.
pub(crate) struct FarOp<'a> {
    pub port: &'a PlacedPort,
    pub distance: u32,
    pub partner: Option<usize>,
    pub recv: bool,
}

/// The problems of `op` on the PEs of `group` of a `rows × cols` region, each with the PEs
/// it concerns.
pub(crate) fn problems(
    op: &FarOp<'_>,
    (rows, cols): (u32, u32),
    group: &Group,
    base_of: &BaseOf,
    reaches: &[Reach],
) -> Vec<(Problem, PeSet)> {
    let along_rows = matches!(op.port.side, Dir::North | Dir::South);
    let len = if along_rows { rows } else { cols };
    let problem_at = |row: u32, col: u32| {
        let index = if along_rows { row } else { col };
        let partner = |i: u32| if along_rows { (i, col) } else { (row, i) };
        pe_problem(op, index, len, |i| {
            let (r, c) = partner(i);
            &reaches[base_of.at(r, c)]
        })
    };
    match &group.pes {
        PeSet::Grid { rows: rs, cols: cs } => {
            // Every PE of a grid group has the same base class and so do its rows (columns):
            // only the index along the port's axis decides.
            let lines = if along_rows { rs } else { cs };
            let found = lines.iter().filter_map(|&i| {
                let problem = if along_rows {
                    problem_at(i, cs[0])
                } else {
                    problem_at(rs[0], i)
                };
                problem.map(|p| (p, i))
            });
            gather(found)
                .into_iter()
                .map(|(problem, lines)| {
                    let set = if along_rows {
                        PeSet::Grid {
                            rows: lines,
                            cols: cs.clone(),
                        }
                    } else {
                        PeSet::Grid {
                            rows: rs.clone(),
                            cols: lines,
                        }
                    };
                    (problem, set)
                })
                .collect()
        }
        PeSet::List(pes) => {
            let found = pes
                .iter()
                .filter_map(|&(r, c)| problem_at(r, c).map(|p| (p, (r, c))));
            gather(found)
                .into_iter()
                .map(|(problem, pes)| (problem, PeSet::List(pes)))
                .collect()
        }
    }
}

/// The items of `found` by problem, in order of first appearance.
fn gather<T>(found: impl Iterator<Item = (Problem, T)>) -> Vec<(Problem, Vec<T>)> {
    let mut out: Vec<(Problem, Vec<T>)> = Vec::new();
    for (problem, item) in found {
        match out.iter_mut().find(|(p, _)| *p == problem) {
            Some((_, items)) => items.push(item),
            None => out.push((problem, vec![item])),
        }
    }
    out
}

/// The problem of `op` on the PE at `index` along the port's axis (of `len` PEs), given the
/// reach of the PE at any index of its line.
fn pe_problem<'r>(
    op: &FarOp<'_>,
    index: u32,
    len: u32,
    reach_at: impl Fn(u32) -> &'r Reach,
) -> Option<Problem> {
    let k = op.distance;
    if !index.is_multiple_of(k) {
        return Some(Problem::OffStride(k));
    }
    let forward = matches!(op.port.side, Dir::South | Dir::East);
    let step = |by: u32| {
        let to = if forward {
            index.checked_add(by)?
        } else {
            index.checked_sub(by)?
        };
        (to < len).then_some(to)
    };
    if step(1).is_none() {
        return op.port.bound.is_none().then_some(Problem::EdgeUnbound);
    }
    let Some(far) = step(k) else {
        return Some(Problem::BeyondRegion(k));
    };
    let Some(partner) = op.partner else {
        return Some(Problem::NoPartner);
    };
    let other = reach_at(far);
    let port = PortId(partner as u32);
    let used = if op.recv {
        other.sends_on(port)
    } else {
        other.receives_on(port)
    };
    (!used).then_some(Problem::NeighbourSilent(partner))
}
