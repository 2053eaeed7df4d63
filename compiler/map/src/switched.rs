//! The routes of switched ports (`docs/mapping.md` §3, "Switched ports"; CSL's `switches`).
//!
//! A switched `out p to D switch { ... }` with its `in q from opposite(D) switch` is one color
//! along every line of the region (the lines along `D`'s axis). At every PE the color's route
//! has the base position 0, receiving from the ramp and forwarding toward `D`, and the port's
//! positions 1, 2, … each changing the one before it (their logical sides turned into the
//! region's physical ones). Each PE starts at the position the port's `start` gives for its
//! logical place, evaluated before the run ([`switch_starts`]).
//!
//! The line never leaves the region: at the last PE toward `D` the link out of the region is
//! taken off every position, and the router gets a fixed route instead of a switch — the
//! union of the positions that still forward somewhere (in the CSL example, the east end's
//! `WEST → RAMP`). The first PE keeps its positions as written: nothing reaches it from
//! behind, since no route of the color leads into the region there.

use serde::{Deserialize, Serialize};
use wsel_ir::graph::{CExpr, CValue, LayerImpl, SwitchOverride, SwitchPort};
use wsel_ir::kernel::PortDirection;
use wsel_target::{Port, PortSet};

use crate::expr::{Env, show};
use crate::placement::{Color, PlacedLayer, dir_side};

/// A switched port's switch as placed: its positions' logical overrides, every PE's start
/// position (logical row-major) and ring mode; an `in` port's has none of them.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlacedSwitch {
    pub positions: Vec<SwitchOverride>,
    pub starts: Vec<u8>,
    pub ring: bool,
}

/// One router's switch for a color, on the fabric: what positions 1, 2, … change (receive
/// set, forward set), the position at the start of the run and ring mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SwitchAt {
    pub color: Color,
    pub overrides: Vec<(Option<PortSet>, Option<PortSet>)>,
    pub start: u8,
    pub ring: bool,
}

/// Every port's per-PE start positions on a logical `rows × cols` region (`None` for a port
/// without a switch, and for an `in` port's bare `switch`), or why a start is not one of
/// its switch's positions.
pub(crate) fn switch_starts(
    imp: &LayerImpl,
    env: &Env<'_>,
    rows: u32,
    cols: u32,
) -> Result<Vec<Option<Vec<u8>>>, String> {
    imp.ports
        .iter()
        .map(|p| {
            let Some(switch) = p
                .switch
                .as_ref()
                .filter(|_| p.direction == PortDirection::Out)
            else {
                return Ok(None);
            };
            let count = switch.positions.len() as i64 + 1;
            let mut starts = Vec::with_capacity((rows * cols) as usize);
            for row in 0..rows {
                for col in 0..cols {
                    let start = start_at(&switch.start, env, row, col);
                    match start {
                        Ok(s) if (0..count).contains(&s) => starts.push(s as u8),
                        Ok(s) => {
                            return Err(format!(
                                "the start `{}` of port `{}` is {s} on PE ({row}, {col}), but \
                                 its switch has positions 0 to {}",
                                show(&switch.start),
                                p.name,
                                count - 1
                            ));
                        }
                        Err(e) => {
                            return Err(format!(
                                "the start `{}` of port `{}` cannot be evaluated on PE ({row}, \
                                 {col}) ({e:?})",
                                show(&switch.start),
                                p.name
                            ));
                        }
                    }
                }
            }
            Ok(Some(starts))
        })
        .collect()
}

/// The start expression's value on logical `(row, col)`.
fn start_at(
    start: &CExpr,
    env: &Env<'_>,
    row: u32,
    col: u32,
) -> Result<i64, wsel_ir::graph::CEvalError> {
    start.eval_int(&|s| match s {
        "pe.row" => Some(CValue::Int(i64::from(row))),
        "pe.col" => Some(CValue::Int(i64::from(col))),
        _ => env.lookup(s),
    })
}

/// The route of switched port `i` (an `out` port) at logical `(row, col)`: its color, its
/// base (or, at the line's far end, fixed) receive and forward sets, and its switch (`None`
/// at the far end). `None` where the port has no route (the far end of a line none of whose
/// positions delivers anywhere inside the region).
pub(crate) fn switched_entry(
    layer: &PlacedLayer,
    row: u32,
    col: u32,
    i: usize,
) -> Option<(Color, PortSet, PortSet, Option<SwitchAt>)> {
    let p = layer.ports.get(i).filter(|p| !p.input)?;
    let switch = p.switch.as_ref()?;
    let color = p.colors.at(row, col);
    let physical = |o: Option<SwitchPort>| {
        o.map(|port| match port {
            SwitchPort::Ramp => PortSet::only(Port::Ramp),
            SwitchPort::Side(s) => PortSet::only(layer.orientation.dir(s).port()),
        })
    };
    let toward = layer.orientation.dir(dir_side(p.side));
    let overrides: Vec<(Option<PortSet>, Option<PortSet>)> = switch
        .positions
        .iter()
        .map(|o| (physical(o.rx), physical(o.tx)))
        .collect();
    let (rx, tx) = (PortSet::only(Port::Ramp), PortSet::only(toward.port()));
    if !layer.at_edge(row, col, p.side) {
        let start = *switch.starts.get((row * layer.cols + col) as usize)?;
        let at = SwitchAt {
            color,
            overrides,
            start,
            ring: switch.ring,
        };
        return Some((color, rx, tx, Some(at)));
    }
    // The far end: every position without the link out of the region, those that still
    // forward somewhere joined into one fixed route.
    let out = toward.port();
    let (mut fixed_rx, mut fixed_tx) = (PortSet::EMPTY, PortSet::EMPTY);
    let (mut prx, mut ptx) = (rx, tx);
    for position in std::iter::once((None, None)).chain(overrides) {
        prx = position.0.unwrap_or(prx);
        ptx = position.1.unwrap_or(ptx);
        let kept = PortSet(ptx.0 & !PortSet::only(out).0);
        if !kept.is_empty() {
            fixed_rx = PortSet(fixed_rx.0 | prx.0);
            fixed_tx = PortSet(fixed_tx.0 | kept.0);
        }
    }
    (!fixed_tx.is_empty()).then_some((color, fixed_rx, fixed_tx, None))
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use wsel_ir::graph::{Side, SwitchOverride, SwitchPort};
    use wsel_target::{Dir, PortSet, Rect};

    use super::PlacedSwitch;
    use crate::placement::{ColorRule, Estimate, Orientation, PlacedLayer, PlacedPort};

    /// A 1 × 4 row whose east line has the CSL example's positions (1 = W → E, 2 = W → RAMP),
    /// PE `c` starting at `starts[c]`, and its switched `in` partner.
    fn row(starts: Vec<u8>, orientation: Orientation) -> PlacedLayer {
        let port = |name: &str, input: bool, side: Dir, switch| PlacedPort {
            name: name.into(),
            input,
            multicast: false,
            side,
            physical_side: side,
            colors: ColorRule::Fixed { color: 5 },
            bound: None,
            parts: 0,
            bus: None,
            passes_on: false,
            distance: None,
            switch,
        };
        let positions = vec![
            SwitchOverride {
                rx: Some(SwitchPort::Side(Side::West)),
                tx: None,
            },
            SwitchOverride {
                rx: None,
                tx: Some(SwitchPort::Ramp),
            },
        ];
        let out = PlacedSwitch {
            positions,
            starts,
            ring: true,
        };
        let bare = PlacedSwitch {
            positions: Vec::new(),
            starts: Vec::new(),
            ring: false,
        };
        PlacedLayer {
            name: "l#1".into(),
            layer: "l".into(),
            copy: 0,
            phase: 0,
            implementation: 0,
            kernel: "k".into(),
            kernel_file: PathBuf::from("k.wse"),
            rows: 1,
            cols: 4,
            rect: Rect::new(0, 0, 4, 1),
            orientation,
            kernel_args: Vec::new(),
            sram_bytes: 0,
            estimate: Estimate::default(),
            ports: vec![
                port("line", false, Dir::East, Some(out)),
                port("ends", true, Dir::West, Some(bare)),
            ],
        }
    }

    fn text(set: Option<PortSet>) -> String {
        set.map_or("=".into(), |set| {
            set.iter()
                .map(|p| format!("{p:?}"))
                .collect::<Vec<_>>()
                .join("+")
        })
    }

    /// Column by column: the route (made by the `out` port only) and the switch. PEs 0–2
    /// have the base RAMP → E with their positions and starts; the last PE, the line's end,
    /// has the fixed route W → RAMP (position 2, the only one that still forwards somewhere
    /// once the link out of the region is removed) and no switch.
    #[test]
    fn a_line_has_switches_and_ends_in_a_fixed_route() {
        let layer = row(vec![0, 1, 2, 0], Orientation::Identity);
        let got: Vec<String> = (0..4)
            .map(|col| {
                let entries = layer.entries_at(0, col);
                let routes: Vec<String> = entries
                    .iter()
                    .map(|(p, c, e)| format!("{p}:{c}:{}>{}", text(Some(e.rx)), text(Some(e.tx))))
                    .collect();
                let switches: Vec<String> = layer
                    .switches_at(0, col)
                    .iter()
                    .map(|s| {
                        let pos: Vec<String> = s
                            .overrides
                            .iter()
                            .map(|(rx, tx)| format!("{}>{}", text(*rx), text(*tx)))
                            .collect();
                        format!("{} start {} ring {}", pos.join(","), s.start, s.ring)
                    })
                    .collect();
                format!("{} | {}", routes.join(" "), switches.join(" "))
            })
            .collect();
        let want = [
            "0:5:Ramp>E | W>=,=>Ramp start 0 ring true",
            "0:5:Ramp>E | W>=,=>Ramp start 1 ring true",
            "0:5:Ramp>E | W>=,=>Ramp start 2 ring true",
            "0:5:W>Ramp | ",
        ];
        assert_eq!(got, want);
    }

    /// Mirrored left to right, the logical east line runs physically west: its sides turn
    /// with the region.
    #[test]
    fn a_mirrored_region_turns_the_positions_sides() {
        let layer = row(vec![0, 0, 0, 0], Orientation::MirrorX);
        let entries = layer.entries_at(0, 0);
        assert_eq!(text(Some(entries[0].2.tx)), "W");
        let s = &layer.switches_at(0, 0)[0];
        assert_eq!(text(s.overrides[0].0), "E");
        assert_eq!(text(Some(layer.entries_at(0, 3)[0].2.rx)), "E");
    }
}
