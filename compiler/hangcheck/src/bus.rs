//! E0701/E0702 for bus ports (`to row` / `from row`, `col`, `region`): a PE's receive on a
//! bus is fed when another PE of its line may send on the paired port, and its send is
//! drained when another PE of its line may receive on it (`docs/mapping.md` §3).
//!
//! A group of PEs is reported only when *none* of its PEs has such a peer: either its line
//! is the PE alone, or no group sharing a line with it (another group on one of its rows, for
//! a row bus; any other PE, for the region) uses the paired port. Groups listed PE by PE are
//! never reported (the check stays silent where its grouping cannot decide).

use wsel_ir::graph::Bus;
use wsel_ir::kernel::PortId;

use crate::Problem;
use crate::classes::{Classes, Group, PeSet};
use crate::reach::Reach;

/// What may stop a bus operation in `group`: `partner` is the paired port (`None`: no port
/// pairs with it); `recv` whether the operation is a receive.
pub(crate) fn bus_problem(
    bus: Bus,
    size: (u32, u32),
    group: &Group,
    classes: &Classes,
    reaches: &[Reach],
    partner: Option<usize>,
    recv: bool,
) -> Option<Problem> {
    let (rows, cols) = size;
    let line = match bus {
        Bus::Row => cols,
        Bus::Col => rows,
        Bus::Region => rows * cols,
    };
    if line <= 1 {
        return Some(Problem::BusAlone);
    }
    let Some(partner) = partner else {
        return Some(Problem::NoPartner);
    };
    let port = PortId(partner as u32);
    let active = |g: &Group| {
        let reach = &reaches[g.base];
        if recv {
            reach.sends_on(port)
        } else {
            reach.receives_on(port)
        }
    };
    let peer = classes
        .groups
        .iter()
        .any(|other| active(other) && shares_a_line(bus, group, other));
    (!peer).then_some(Problem::BusSilent(partner))
}

/// Whether some PE of `other` is on the bus line of some PE of `group`, and is not that PE.
/// Groups listed PE by PE count as sharing (the caller then reports nothing).
fn shares_a_line(bus: Bus, group: &Group, other: &Group) -> bool {
    let same = std::ptr::eq(group, other);
    match (&group.pes, &other.pes) {
        (
            PeSet::Grid { rows, cols },
            PeSet::Grid {
                rows: o_rows,
                cols: o_cols,
            },
        ) => {
            let meets = |a: &[u32], b: &[u32]| a.iter().any(|x| b.contains(x));
            match bus {
                Bus::Row => meets(rows, o_rows) && (!same || cols.len() > 1),
                Bus::Col => meets(cols, o_cols) && (!same || rows.len() > 1),
                Bus::Region => !same || group.pes.len() > 1,
            }
        }
        _ => true,
    }
}
