//! E0701/E0702 for switched ports (`out p: stream<T> to D switch { ... }` with its partner
//! `in q: ... from opposite(D) switch`, `docs/language.md` §5.4; their routes:
//! `wsel_map::switched`, `docs/mapping.md` §3).
//!
//! A switched pair is one color along every line of the region along `D`'s axis, and its
//! wavelets only go toward `D`. Every router of a line but the far end toward `D` has the
//! port's positions: 0 = ramp → `D`, then each position changing the one before; the far end
//! has one fixed route, the positions that still forward somewhere inside the region joined.
//! The checks follow the positions each router can take:
//!
//! - its start position, and, when some control wavelet may give it `adv`, every position
//!   after the ones it can take (in ring mode, from the last to 0); when one may give it
//!   `reset`, position 0 (and the ones after it, with `adv`). A control wavelet sent on `p`
//!   by a PE gives its `i`-th command to the router `i` further toward `D`, counted as if it
//!   always got that far (which can only add positions).
//!
//! An operation is reported on a PE only when no order of events lets it finish:
//!
//! - a `recv` on `q`: no PE before it on its line (on the side it receives from) may send on
//!   `p` ([`Problem::SwitchedSilent`]); or no position its router can take delivers from that
//!   side to the ramp ([`Problem::SwitchNeverDelivers`]);
//! - a `send` on `p`: no PE after it on its line may receive on `q`
//!   ([`Problem::SwitchedSilent`]); or no position its router can take receives from the ramp
//!   ([`Problem::SwitchNeverTakes`]).
//!
//! Not followed: the order in which data and control wavelets reach a router. A router that
//! can reach a delivering position, but only before the data arrive or after they were passed
//! on, still deadlocks; the simulator reports that when the program runs.

use wsel_ir::graph::{Side, SwitchPort};
use wsel_ir::kernel::{PortId, SwitchCmd};
use wsel_map::PlacedLayer;
use wsel_target::Dir;

use crate::Problem;
use crate::classes::{BaseOf, Group, PeSet};
use crate::reach::Reach;

/// An operation on a switched port: the port, the port it pairs with (`None`: none does),
/// and whether it is a receive.
pub(crate) struct SwitchedOp {
    pub port: usize,
    pub partner: Option<usize>,
    pub recv: bool,
}

impl SwitchedOp {
    /// The `out` port whose switch carries the line.
    fn out(&self) -> Option<usize> {
        if self.recv {
            self.partner
        } else {
            Some(self.port)
        }
    }
}

/// The operation on `port` (a receive or not) as a switched one, if the port has a switch
/// and is declared in the operation's direction.
pub(crate) fn switched_op(
    placed: &PlacedLayer,
    paired: &[Option<usize>],
    port: PortId,
    recv: bool,
) -> Option<SwitchedOp> {
    let p = port.0 as usize;
    let placed_port = placed.ports.get(p)?;
    placed_port.switch.as_ref()?;
    (placed_port.input == recv).then(|| SwitchedOp {
        port: p,
        partner: paired.get(p).copied().flatten(),
        recv,
    })
}

/// The problems of `op` on the PEs of `group`, each with the PEs it concerns.
pub(crate) fn problems(
    op: &SwitchedOp,
    placed: &PlacedLayer,
    group: &Group,
    base_of: &BaseOf,
    reaches: &[Reach],
) -> Vec<(Problem, PeSet)> {
    let Some(out) = op.out() else {
        return vec![(Problem::NoPartner, group.pes.clone())];
    };
    let Some(line) = Line::new(out, placed) else {
        return Vec::new();
    };
    let mut lines: Vec<Option<LineFacts>> = Vec::new();
    let mut found: Vec<(Problem, Vec<(u32, u32)>)> = Vec::new();
    for (row, col) in group.pes.first(usize::MAX) {
        let key = line.key(row, col) as usize;
        if lines.len() <= key {
            lines.resize_with(key + 1, || None);
        }
        let f = lines[key].get_or_insert_with(|| line.facts(op, key as u32, base_of, reaches));
        let Some(problem) = pe_problem(op, out, &line, f, line.index(row, col)) else {
            continue;
        };
        match found.iter_mut().find(|(p, _)| *p == problem) {
            Some((_, at)) => at.push((row, col)),
            None => found.push((problem, vec![(row, col)])),
        }
    }
    found
        .into_iter()
        .map(|(problem, pes)| (problem, PeSet::List(pes)))
        .collect()
}

/// What stops `op` on the PE at `index` of its line, if anything.
fn pe_problem(
    op: &SwitchedOp,
    out: usize,
    line: &Line,
    f: &LineFacts,
    index: u32,
) -> Option<Problem> {
    let i = index as usize;
    let Some(partner) = op.partner else {
        return Some(Problem::NoPartner);
    };
    if op.recv {
        if !f.sender_before[i] {
            return Some(Problem::SwitchedSilent(out));
        }
        let from = SwitchPort::Side(line.toward.opposite());
        let delivers = |(rx, tx): (SwitchPort, SwitchPort)| rx == from && tx == SwitchPort::Ramp;
        (!f.routes[i].iter().any(|&r| delivers(r))).then_some(Problem::SwitchNeverDelivers(out))
    } else {
        if !f.receiver_after[i] {
            return Some(Problem::SwitchedSilent(partner));
        }
        let takes = |(rx, _): (SwitchPort, SwitchPort)| rx == SwitchPort::Ramp;
        (!f.routes[i].iter().any(|&r| takes(r))).then_some(Problem::SwitchNeverTakes)
    }
}

/// The line of a switched `out` port: its direction, positions and start positions.
struct Line<'a> {
    /// The `out` port.
    out: PortId,
    /// The logical direction the wavelets go.
    toward: Side,
    /// Whether the line is a column (`D` north or south).
    along_rows: bool,
    /// Whether the wavelets go toward higher indices (`D` east or south).
    forward: bool,
    /// The PEs along the line.
    len: u32,
    /// Per position: (receive side, forward side), the overrides accumulated.
    positions: Vec<(SwitchPort, SwitchPort)>,
    ring: bool,
    starts: &'a [u8],
    cols: u32,
}

/// What the PEs of one line may do, by index along the line.
struct LineFacts {
    /// Some PE before it (toward the side wavelets come from) may send on the `out` port.
    sender_before: Vec<bool>,
    /// Some PE after it may receive on the partner.
    receiver_after: Vec<bool>,
    /// The (receive, forward) pairs its router may take.
    routes: Vec<Vec<(SwitchPort, SwitchPort)>>,
}

impl<'a> Line<'a> {
    /// The line of `out`, a port of `placed` (`None` if it has no switch).
    fn new(out: usize, placed: &'a PlacedLayer) -> Option<Line<'a>> {
        let port = placed.ports.get(out)?;
        let switch = port.switch.as_ref()?;
        let toward = side_of(port.side);
        let mut at = (SwitchPort::Ramp, SwitchPort::Side(toward));
        let mut positions = vec![at];
        for o in &switch.positions {
            at = (o.rx.unwrap_or(at.0), o.tx.unwrap_or(at.1));
            positions.push(at);
        }
        let along_rows = matches!(port.side, Dir::North | Dir::South);
        Some(Line {
            out: PortId(out as u32),
            toward,
            along_rows,
            forward: matches!(port.side, Dir::East | Dir::South),
            len: if along_rows { placed.rows } else { placed.cols },
            positions,
            ring: switch.ring,
            starts: &switch.starts,
            cols: placed.cols,
        })
    }

    /// The line a PE is on (its row, or its column for a vertical line).
    fn key(&self, row: u32, col: u32) -> u32 {
        if self.along_rows { col } else { row }
    }

    /// A PE's index along its line.
    fn index(&self, row: u32, col: u32) -> u32 {
        if self.along_rows { row } else { col }
    }

    /// The PE at `index` of line `key`.
    fn pe(&self, key: u32, index: u32) -> (u32, u32) {
        if self.along_rows {
            (index, key)
        } else {
            (key, index)
        }
    }

    /// The index `by` PEs further toward `D` from `index`, if on the line.
    fn step(&self, index: u32, by: u32) -> Option<u32> {
        let to = if self.forward {
            index.checked_add(by)?
        } else {
            index.checked_sub(by)?
        };
        (to < self.len).then_some(to)
    }

    /// The facts of line `key`.
    fn facts(&self, op: &SwitchedOp, key: u32, base_of: &BaseOf, reaches: &[Reach]) -> LineFacts {
        let len = self.len as usize;
        let reach = |i: u32| {
            let (r, c) = self.pe(key, i);
            &reaches[base_of.at(r, c)]
        };
        // Indices in the order the wavelets travel.
        let order: Vec<u32> = if self.forward {
            (0..self.len).collect()
        } else {
            (0..self.len).rev().collect()
        };
        let partner = op.partner.map(|p| PortId(p as u32));
        let (mut sender_before, mut receiver_after) = (vec![false; len], vec![false; len]);
        let mut seen = false;
        for &i in &order {
            sender_before[i as usize] = seen;
            seen |= reach(i).sends_on(self.out);
        }
        seen = false;
        for &i in order.iter().rev() {
            receiver_after[i as usize] = seen;
            seen |= partner.is_some_and(|q| reach(i).receives_on(q));
        }
        let mut commands = vec![(false, false); len];
        for i in 0..self.len {
            for (port, cmds) in &reach(i).controls {
                if *port != self.out {
                    continue;
                }
                for (h, cmd) in cmds.iter().enumerate() {
                    if let Some(to) = self.step(i, h as u32) {
                        let c = &mut commands[to as usize];
                        c.0 |= *cmd == SwitchCmd::Adv;
                        c.1 |= *cmd == SwitchCmd::Reset;
                    }
                }
            }
        }
        let routes = (0..self.len)
            .map(|i| {
                if self.step(i, 1).is_none() {
                    return self.far_end();
                }
                let (r, c) = self.pe(key, i);
                let start = self.starts.get((r * self.cols + c) as usize).copied();
                let (adv, reset) = commands[i as usize];
                let count = self.positions.len();
                reachable(count, self.ring, start.unwrap_or(0), adv, reset)
                    .into_iter()
                    .map(|k| self.positions[k])
                    .collect()
            })
            .collect();
        LineFacts {
            sender_before,
            receiver_after,
            routes,
        }
    }

    /// The far end's fixed route: every position without the link out of the region, those
    /// that still forward somewhere joined (`wsel_map::switched`), as (receive, forward) pairs.
    fn far_end(&self) -> Vec<(SwitchPort, SwitchPort)> {
        let out = SwitchPort::Side(self.toward);
        let kept: Vec<_> = self.positions.iter().filter(|(_, tx)| *tx != out).collect();
        kept.iter()
            .flat_map(|(rx, _)| kept.iter().map(move |(_, tx)| (*rx, *tx)))
            .collect()
    }
}

/// The positions (of `count`, in ring mode or not) a router starting at `start` can take,
/// given whether it may get `adv` and `reset`.
fn reachable(count: usize, ring: bool, start: u8, adv: bool, reset: bool) -> Vec<usize> {
    let mut can = vec![false; count];
    let mut todo = vec![usize::from(start).min(count - 1)];
    if reset {
        todo.push(0);
    }
    while let Some(k) = todo.pop() {
        if std::mem::replace(&mut can[k], true) {
            continue;
        }
        if adv && k + 1 < count {
            todo.push(k + 1);
        } else if adv && ring {
            todo.push(0);
        }
    }
    (0..count).filter(|&k| can[k]).collect()
}

/// The language's side for a direction.
fn side_of(d: Dir) -> Side {
    match d {
        Dir::North => Side::North,
        Dir::South => Side::South,
        Dir::East => Side::East,
        Dir::West => Side::West,
    }
}

#[cfg(test)]
mod tests {
    use super::reachable;

    #[test]
    fn a_router_reaches_its_start_and_what_its_commands_lead_to() {
        // Three positions, starting at 1.
        assert_eq!(reachable(3, false, 1, false, false), [1]);
        assert_eq!(reachable(3, false, 1, true, false), [1, 2]);
        assert_eq!(reachable(3, true, 1, true, false), [0, 1, 2]);
        assert_eq!(reachable(3, false, 1, false, true), [0, 1]);
        assert_eq!(reachable(3, false, 2, true, true), [0, 1, 2]);
    }
}
