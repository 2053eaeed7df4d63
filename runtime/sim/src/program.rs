//! What the simulator runs: a [`Program`] is per-PE code and data, router configuration and
//! the streams between the host (or weight store) and the fabric edge. Plain data; the
//! compiler's driver or a test builds it.

use crate::task::TaskCode;
use std::sync::Arc;
use wsel_target::{Coord, Dir, PortSet, Rect, RouteEntry};

/// A color (virtual channel), `0 .. target.colors`.
pub type Color = u8;
/// A task's index in its kernel's task table.
pub type TaskId = u32;
/// A kernel's index in [`Program::kernels`].
pub type KernelId = u32;

/// One task: a name for reports and traces, and its code.
#[derive(Clone)]
pub struct Task {
    /// Shown in errors and traces.
    pub name: String,
    /// What runs.
    pub code: Arc<dyn TaskCode>,
}

/// Code shared by many PEs: a task table. PEs running the same kernel share it; per-PE values
/// are the PE's argument words.
#[derive(Clone)]
pub struct Kernel {
    /// Shown in reports.
    pub name: String,
    /// The task table; [`TaskId`]s index it.
    pub tasks: Vec<Task>,
}

/// What one PE runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PeProgram {
    /// The PE.
    pub at: Coord,
    /// Its code.
    pub kernel: KernelId,
    /// The region this PE belongs to (physical); tasks see their coordinates relative to it.
    pub region: Rect,
    /// Whether the region is placed transposed: tasks then see logical rows along physical
    /// columns (`coords` and `region_size` swap their axes).
    pub transposed: bool,
    /// Whether the region is mirrored east–west and north–south (after any transposition):
    /// tasks then count the mirrored axis from the region's far side.
    pub mirrored: (bool, bool),
    /// SRAM bytes the program uses on this PE (at most the target's `sram_bytes`).
    pub sram_bytes: u32,
    /// Initial SRAM contents from byte 0 (the rest is zero).
    pub sram_init: Vec<u8>,
    /// Per-instance argument words.
    pub args: Vec<u32>,
    /// Port table: port `i` is bound to color `ports[i]`.
    pub ports: Vec<Color>,
    /// Tasks activated at cycle 0, in order.
    pub launch: Vec<TaskId>,
}

impl PeProgram {
    /// This PE's logical `(column, row)` inside its region.
    pub fn logical(&self) -> (u32, u32) {
        logical_coords(self.at, self.region, self.transposed, self.mirrored)
    }
}

/// The logical `(column, row)` of PE `at` in `region`, placed transposed and mirrored as
/// given: the mirrors undone first, then the transposition.
pub(crate) fn logical_coords(
    at: Coord,
    region: Rect,
    transposed: bool,
    (mirror_x, mirror_y): (bool, bool),
) -> (u32, u32) {
    let dx = at.x.saturating_sub(region.x);
    let dy = at.y.saturating_sub(region.y);
    let dx = if mirror_x { region.width - 1 - dx } else { dx };
    let dy = if mirror_y { region.height - 1 - dy } else { dy };
    if transposed { (dy, dx) } else { (dx, dy) }
}

/// One router's configuration for one color.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Route {
    /// The router.
    pub at: Coord,
    /// The color.
    pub color: Color,
    /// Ports wavelets of this color are accepted from.
    pub rx: PortSet,
    /// Ports they are forwarded to (several = multicast, the ramp = deliver to the PE). A link
    /// port facing off the fabric sends to a host output declared there.
    pub tx: PortSet,
    /// Split the stream between the ramp and the link ports instead of multicasting it
    /// (see [`RampFilter`]).
    pub filter: Option<RampFilter>,
    /// Switch positions advanced by control wavelets (see [`Switch`]); `rx` and `tx` are then
    /// the union over the positions.
    pub switch: Option<Switch>,
}

/// What a position of a switch changes from the position before it (CSL's `pos1`, `pos2`,
/// `pos3`): the receive set, the forward set, or both.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SwitchPosition {
    /// The new receive set, if it changes.
    pub rx: Option<PortSet>,
    /// The new forward set, if it changes.
    pub tx: Option<PortSet>,
}

impl SwitchPosition {
    /// A position receiving from `rx` instead.
    pub fn rx(rx: PortSet) -> SwitchPosition {
        SwitchPosition {
            rx: Some(rx),
            tx: None,
        }
    }

    /// A position forwarding to `tx` instead.
    pub fn tx(tx: PortSet) -> SwitchPosition {
        SwitchPosition {
            rx: None,
            tx: Some(tx),
        }
    }
}

/// A router's switch for one color: positions 0 (the route's base) to `count − 1`, each the
/// one before it with its [`SwitchPosition`] overrides applied (they accumulate, as in the
/// CSL example: base RAMP → EAST, `pos1 = {rx = WEST}`, `pos2 = {tx = RAMP}` gives
/// 1 = WEST → EAST, 2 = WEST → RAMP). Control wavelets move the current position (see the
/// crate README); in ring mode advancing past the last position wraps to 0, else it stays.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Switch {
    /// Per position, the receive and forward sets it routes by.
    pub positions: [(PortSet, PortSet); 4],
    /// Positions in use (1 to 4).
    pub count: u8,
    /// The position at the start of the run.
    pub current: u8,
    /// Advancing past the last position wraps to 0.
    pub ring: bool,
}

impl Switch {
    /// The switch with base `rx` → `tx` and positions 1, 2, … changed by `overrides` (at most
    /// three), starting at `current`; `None` if there are too many positions, `current` is
    /// not one of them, or a position receives or forwards nowhere.
    pub fn new(
        rx: PortSet,
        tx: PortSet,
        overrides: &[SwitchPosition],
        current: u8,
        ring: bool,
    ) -> Option<Switch> {
        if overrides.len() > 3 || usize::from(current) > overrides.len() {
            return None;
        }
        let mut positions = [(rx, tx); 4];
        for (k, o) in overrides.iter().enumerate() {
            let (prx, ptx) = positions[k];
            positions[k + 1] = (o.rx.unwrap_or(prx), o.tx.unwrap_or(ptx));
        }
        let count = overrides.len() as u8 + 1;
        let used = &positions[..usize::from(count)];
        if used.iter().any(|(r, t)| r.is_empty() || t.is_empty()) {
            return None;
        }
        Some(Switch {
            positions,
            count,
            current,
            ring,
        })
    }

    /// The ports some position receives from, and those some position forwards to.
    pub fn union(&self) -> (PortSet, PortSet) {
        self.positions[..usize::from(self.count)]
            .iter()
            .fold((PortSet::EMPTY, PortSet::EMPTY), |(r, t), (pr, pt)| {
                (PortSet(r.0 | pr.0), PortSet(t.0 | pt.0))
            })
    }
}

/// What a control wavelet tells one router to do with its switch for the wavelet's color.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum SwitchCommand {
    /// Nothing.
    Nop = 0,
    /// Go to the next position (past the last: wrap to 0 in ring mode, else stay).
    Advance = 1,
    /// Go to position 0.
    Reset = 2,
}

/// A router's ramp filter for one color: of the wavelets of the color passing the router,
/// counted from the start of the run, the one at position `p` goes to the ramp alone when
/// `p % period < keep`, and to the route's link ports alone otherwise. So a PE keeps its part
/// of a stream and passes the rest on: along a row of `C` PEs each taking `m` wavelets of
/// every `C·m`, PE `c` (counted from the stream's side) filters with `keep = m`,
/// `period = (C − c)·m` (the last one needs no filter: it keeps all that reaches it).
///
/// A filtered route receives from one port and forwards to the ramp and to at least one link
/// port; `1 ≤ keep ≤ period`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RampFilter {
    /// Wavelets of each period that go to the ramp (the first ones).
    pub keep: u32,
    /// The period.
    pub period: u32,
}

/// Where an edge input stream comes from; each has its own bandwidth pool in the target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EdgeSource {
    /// Host I/O (`target.host_io`).
    Host,
    /// The weight store (`target.weight_store`), which also adds its latency.
    WeightStore,
}

/// A tensor streamed into the fabric through an edge PE's off-fabric port.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EdgeInput {
    /// The edge PE.
    pub at: Coord,
    /// The side of the fabric it enters from (the PE must be on that edge).
    pub side: Dir,
    /// The color the wavelets carry; the route at `at` must receive from `side`.
    pub color: Color,
    /// The wavelets.
    pub data: Vec<u32>,
    /// Host or weight store.
    pub source: EdgeSource,
    /// Earliest cycle at which the stream is requested.
    pub start: u64,
    /// For weight-store streams: the layer phase (0 = the first). The store serves phases in
    /// order: a stream of a later phase is requested once every wavelet of the earlier
    /// phases has entered the fabric, and shares the store's bandwidth only with the streams
    /// of its own phase (see the crate README). Host streams ignore it.
    pub phase: u32,
}

/// Wavelets leaving the fabric through an edge PE's off-fabric port, collected for the host.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EdgeOutput {
    /// The edge PE.
    pub at: Coord,
    /// The side of the fabric they leave through.
    pub side: Dir,
    /// The color; the route at `at` must forward to `side`.
    pub color: Color,
}

/// A whole program for the fabric.
#[derive(Clone, Default)]
pub struct Program {
    /// Shared code.
    pub kernels: Vec<Kernel>,
    /// One entry per PE that runs code.
    pub pes: Vec<PeProgram>,
    /// Router configuration, one entry per (PE, color) used.
    pub routes: Vec<Route>,
    /// Streams into the fabric edge.
    pub inputs: Vec<EdgeInput>,
    /// Streams out of the fabric edge.
    pub outputs: Vec<EdgeOutput>,
    /// Cycles of the weight store's latency already past when the program starts: in weight
    /// streaming the store fetches a layer's weights while the layer before it still runs, so
    /// its streams move `weight_store.latency_cycles − weight_store_warm` cycles after their
    /// request (never less than 0).
    pub weight_store_warm: u64,
}

impl Program {
    /// An empty program.
    pub fn new() -> Program {
        Program::default()
    }

    /// Add a kernel with named tasks; returns its id.
    pub fn add_kernel(&mut self, name: &str, tasks: Vec<(&str, Arc<dyn TaskCode>)>) -> KernelId {
        let tasks = tasks
            .into_iter()
            .map(|(n, code)| Task {
                name: n.to_string(),
                code,
            })
            .collect();
        self.kernels.push(Kernel {
            name: name.to_string(),
            tasks,
        });
        (self.kernels.len() - 1) as KernelId
    }

    /// Add a PE running `kernel` in a 1 × 1 region of its own, with `sram_bytes` of SRAM, the
    /// given port table and launch tasks. Returns its index in [`Program::pes`] so that callers
    /// can set the region, arguments or initial SRAM.
    pub fn add_pe(
        &mut self,
        at: Coord,
        kernel: KernelId,
        sram_bytes: u32,
        ports: &[Color],
        launch: &[TaskId],
    ) -> usize {
        self.pes.push(PeProgram {
            at,
            kernel,
            region: Rect::new(at.x, at.y, 1, 1),
            transposed: false,
            mirrored: (false, false),
            sram_bytes,
            sram_init: Vec::new(),
            args: Vec::new(),
            ports: ports.to_vec(),
            launch: launch.to_vec(),
        });
        self.pes.len() - 1
    }

    /// Add one router entry.
    pub fn add_route(&mut self, at: Coord, color: Color, rx: PortSet, tx: PortSet) {
        self.routes.push(Route {
            at,
            color,
            rx,
            tx,
            filter: None,
            switch: None,
        });
    }

    /// Give the route for `color` at `at` (added before, its sets the base position) the
    /// switch positions `overrides`, starting at `current`, in ring mode or not; false if
    /// there is no such route or the switch is not valid (see [`Switch::new`]).
    pub fn set_switch(
        &mut self,
        at: Coord,
        color: Color,
        overrides: &[SwitchPosition],
        current: u8,
        ring: bool,
    ) -> bool {
        let Some(r) = self
            .routes
            .iter_mut()
            .rev()
            .find(|r| r.at == at && r.color == color)
        else {
            return false;
        };
        let Some(switch) = Switch::new(r.rx, r.tx, overrides, current, ring) else {
            return false;
        };
        (r.rx, r.tx) = switch.union();
        r.switch = Some(switch);
        true
    }

    /// Set the ramp filter of the route for `color` at `at` (added before); whether there was
    /// such a route. Routes are searched from the last added on.
    pub fn set_filter(&mut self, at: Coord, color: Color, filter: RampFilter) -> bool {
        match self
            .routes
            .iter_mut()
            .rev()
            .find(|r| r.at == at && r.color == color)
        {
            Some(r) => {
                r.filter = Some(filter);
                true
            }
            None => false,
        }
    }

    /// Add the entries the routing helper computed for `color`.
    pub fn add_route_entries(&mut self, color: Color, entries: &[RouteEntry]) {
        for e in entries {
            self.add_route(e.at, color, e.rx, e.tx);
        }
    }

    /// Merge `entries` for `color` into existing routes at the same PEs (union of receive and
    /// forward sets), adding entries where none exist. Useful to combine several paths of one
    /// color into a tree.
    pub fn merge_route_entries(&mut self, color: Color, entries: &[RouteEntry]) {
        for e in entries {
            if let Some(r) = self
                .routes
                .iter_mut()
                .find(|r| r.at == e.at && r.color == color)
            {
                r.rx = PortSet(r.rx.0 | e.rx.0);
                r.tx = PortSet(r.tx.0 | e.tx.0);
            } else {
                self.add_route(e.at, color, e.rx, e.tx);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Hand-derived: in a 2-wide, 4-tall region at (10, 20), the PE at (11, 20) is logical
    /// column 1, row 0; mirrored north–south it is row 3; mirrored east–west column 0;
    /// transposed (4 logical columns of 2 rows), then mirrored both ways, column 3, row 0.
    #[test]
    fn logical_coordinates_undo_the_mirrors_then_the_transposition() {
        let region = Rect::new(10, 20, 2, 4);
        let at = Coord::new(11, 20);
        assert_eq!(logical_coords(at, region, false, (false, false)), (1, 0));
        assert_eq!(logical_coords(at, region, false, (false, true)), (1, 3));
        assert_eq!(logical_coords(at, region, false, (true, false)), (0, 0));
        assert_eq!(logical_coords(at, region, true, (true, true)), (3, 0));
    }
}
