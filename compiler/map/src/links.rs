//! The router entries of neighbour ports and of ports with a distance (`docs/mapping.md` §3).
//!
//! A port `to D by k` (with its partner `from opposite(D) by k`) links the PEs whose index
//! along `D`'s axis (the logical column for `east`/`west`, the row for `north`/`south`) is a
//! multiple of `k`: such a PE sends to the PE `k` further toward `D`, and the routers of the
//! `k − 1` PEs between pass the stream on without delivering it (a pass-through route, as a
//! CSL color configured `rx = WEST, tx = EAST` there). A neighbour port is the case `k = 1`.
//! Consecutive segments alternate between the link class's two colors, so a PE that receives
//! a segment and sends the next one uses one color for each. A port without a partner is
//! routed only where it crosses the region's edge.

use wsel_target::{Dir, Port, PortSet};

use crate::placement::{Color, PlacedLayer, dir_side};

/// The entry of port `i` at logical `(row, col)`, if it has one: its color and the ports it
/// receives from and forwards to.
pub(crate) fn link_entry(
    layer: &PlacedLayer,
    row: u32,
    col: u32,
    i: usize,
    paired: bool,
) -> Option<(Color, PortSet, PortSet)> {
    let p = &layer.ports[i];
    let toward = layer.orientation.dir(dir_side(p.side));
    let k = p.distance.unwrap_or(1).max(1);
    let along_rows = matches!(p.side, Dir::North | Dir::South);
    let (index, len) = if along_rows {
        (row, layer.rows)
    } else {
        (col, layer.cols)
    };
    // +1 when the port's side is toward higher indices (south, east).
    let forward = matches!(p.side, Dir::South | Dir::East);
    let step = |from: u32, by: u32| -> Option<u32> {
        let to = if forward {
            from.checked_add(by)?
        } else {
            from.checked_sub(by)?
        };
        (to < len).then_some(to)
    };
    let at = |index: u32| {
        if along_rows {
            (index, col)
        } else {
            (row, index)
        }
    };
    let ramp = PortSet::only(Port::Ramp);
    if index % k != 0 {
        // Between two endpoints: the `out` port's segment passes through.
        let below = index - index % k;
        let sender = if forward {
            below
        } else {
            below.checked_add(k)?
        };
        if p.input || !paired || sender >= len || step(sender, k).is_none() {
            return None;
        }
        let (r, c) = at(sender);
        let through = (
            PortSet::only(toward.opposite().port()),
            PortSet::only(toward.port()),
        );
        return Some((p.colors.at(r, c), through.0, through.1));
    }
    let color = p.colors.at(row, col);
    let edge = step(index, 1).is_none();
    if edge {
        // On the region's edge on the port's side: a bound tensor crosses it.
        p.bound.as_ref()?;
    } else if !paired || step(index, k).is_none() {
        return None;
    }
    let side = PortSet::only(toward.port());
    Some(if p.input {
        (color, side, ramp)
    } else {
        (color, ramp, side)
    })
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use wsel_target::{Dir, PortSet, Rect};

    use crate::placement::{ColorRule, Estimate, Orientation, PlacedLayer, PlacedPort};

    fn port(name: &str, input: bool, side: Dir, colors: (u8, u8)) -> PlacedPort {
        PlacedPort {
            name: name.into(),
            input,
            multicast: false,
            side,
            physical_side: side,
            colors: ColorRule::Alternating {
                along_rows: false,
                even: colors.0,
                odd: colors.1,
                stride: 3,
            },
            bound: None,
            parts: 0,
            bus: None,
            passes_on: false,
            distance: Some(3),
            switch: None,
        }
    }

    /// A 1 × 8 row with `out far to east by 3` and `in near from west by 3` (colors 1 and 2).
    fn row() -> PlacedLayer {
        PlacedLayer {
            name: "l#1".into(),
            layer: "l".into(),
            copy: 0,
            phase: 0,
            implementation: 0,
            kernel: "k".into(),
            kernel_file: PathBuf::from("k.wse"),
            rows: 1,
            cols: 8,
            rect: Rect::new(0, 0, 8, 1),
            orientation: Orientation::Identity,
            kernel_args: Vec::new(),
            sram_bytes: 0,
            estimate: Estimate::default(),
            ports: vec![
                port("far", false, Dir::East, (1, 2)),
                port("near", true, Dir::West, (2, 1)),
            ],
        }
    }

    fn text(set: PortSet) -> String {
        set.iter()
            .map(|p| format!("{p:?}"))
            .collect::<Vec<_>>()
            .join("+")
    }

    /// Column by column: PEs 0 and 3 send (0 on color 1, 3 on color 2), 3 and 6 receive
    /// (the colors of the segment that reaches them), 1, 2, 4 and 5 pass the segment through
    /// on its color, and 6 and 7 send nothing: the segment from 6 would end past the region.
    #[test]
    fn segments_of_k_hops_pass_through_the_routers_between() {
        let layer = row();
        let got: Vec<String> = (0..8)
            .map(|col| {
                layer
                    .entries_at(0, col)
                    .iter()
                    .map(|(p, color, e)| format!("{p}:{color}:{}>{}", text(e.rx), text(e.tx)))
                    .collect::<Vec<_>>()
                    .join(" ")
            })
            .collect();
        let want = [
            "0:1:Ramp>E",
            "0:1:W>E",
            "0:1:W>E",
            "0:2:Ramp>E 1:1:W>Ramp",
            "0:2:W>E",
            "0:2:W>E",
            "1:2:W>Ramp",
            "",
        ];
        assert_eq!(got, want);
    }
}
