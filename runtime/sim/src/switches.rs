//! Router switches (CSL's `switches`): a route's positions, each router's current position,
//! and the control wavelets that move it.
//!
//! A switched route ([`crate::program::Switch`]) has its base receive and forward sets
//! (position 0) and up to three more positions; the router's queues are those of every port
//! some position receives from, and a queue's head goes where the *current* position forwards
//! it — nowhere while the position does not receive from the queue's port, so the wavelet
//! waits (and backpressure builds behind it) until a switch opens its port.
//!
//! A **control wavelet** (`TaskCtx::send_control`) carries two bits of command per hop, the
//! first hop's lowest ([`encode`], `wsel_abi::control_payload`). A router routes it by its current position like any
//! wavelet of the color; when it has left the router's queue, the router applies the lowest
//! command (nop, advance, reset) to its position for the color, and the wavelet goes on with
//! its commands shifted down by one hop. The new position holds for every wavelet leaving the
//! router after that one — in the same cycle through a port the router serves later (links in
//! N, S, E, W order, then the ramp), else from the next cycle. A control wavelet is never
//! delivered to a PE (the CE filter of the CSL example): the ramp drops it.
//!
//! **Rate** (the target's `[switched]`, `wsel_target::Switched`): a switched route lets its
//! wavelets (control wavelets too) leave the router through a link port toward direction `d`
//! at most one every `P_d` cycles, `P_d` that direction's cycles per wavelet (thousandths
//! kept exactly): released at `r`, `r + P_d`, `r + 2·P_d`, … and each leaving at the first
//! whole cycle at or after its release, or later when the fabric holds it; one that leaves a
//! cycle or more after its release starts the next period when it left (no burst after a
//! pause; [`crate::pacer::Pacer`]). The route's
//! queues share its pace per direction; the ramp (delivery) is not paced. A wavelet held by
//! the pace waits in its queue like one without a credit, and the router steps again at its
//! release.
//!
//! Control wavelets are told apart by a tag per ring slot of each queue ([`Switches::tags`]),
//! kept only when the program has a switch; such a program runs in one partition (the tag
//! does not travel in cross-partition messages) and without express streams on switched
//! colors ([`Switches::blocks_express`]).

use crate::fabric::{Filter, Queue};
use crate::pacer::Pacer;
use crate::program::{Color, Program, Switch, SwitchCommand};
use crate::queue::Rings;
use crate::router::{CycleState, set_want};

use wsel_abi::COMMAND_BITS;
use wsel_target::{Dir, SWITCHED_PERIOD_UNITS, Target};

/// The payload of a control wavelet carrying `commands`, the first for the sender's router,
/// then one per router downstream (at most `wsel_abi::COMMAND_HOPS`; later hops get nops).
pub(crate) fn encode(commands: &[SwitchCommand]) -> u32 {
    wsel_abi::control_payload(commands.iter().map(|&c| c as u32))
}

/// The command a control wavelet with `payload` gives the router it leaves.
fn command(payload: u32) -> SwitchCommand {
    match payload & ((1 << COMMAND_BITS) - 1) {
        1 => SwitchCommand::Advance,
        2 => SwitchCommand::Reset,
        _ => SwitchCommand::Nop,
    }
}

/// The payload a control wavelet carries on after leaving a router.
#[inline]
pub(crate) fn forwarded(payload: u32) -> u32 {
    payload >> COMMAND_BITS
}

/// The position after `command` at a switch in position `pos` with `count` positions.
pub(crate) fn next_position(pos: u8, command: SwitchCommand, count: u8, ring: bool) -> u8 {
    match command {
        SwitchCommand::Nop => pos,
        SwitchCommand::Reset => 0,
        SwitchCommand::Advance if pos + 1 < count => pos + 1,
        SwitchCommand::Advance if ring => 0,
        SwitchCommand::Advance => pos,
    }
}

/// Where the head of one queue of a switched route goes, per position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SwitchHead {
    /// Per position: the ports its head goes to (0 when the position does not receive from
    /// the queue's port).
    pub tx_at: [u8; 4],
    /// The current position.
    pub pos: u8,
}

impl SwitchHead {
    /// The table of the queue receiving from port `rx` (index) under `switch`.
    pub(crate) fn new(switch: &Switch, rx: u8) -> SwitchHead {
        let mut tx_at = [0; 4];
        for (k, (prx, ptx)) in switch.positions[..usize::from(switch.count)]
            .iter()
            .enumerate()
        {
            if prx.0 & (1 << rx) != 0 {
                tx_at[k] = ptx.0 & !(1 << rx);
            }
        }
        SwitchHead {
            tx_at,
            pos: switch.current,
        }
    }

    /// The ports the head goes to now.
    #[inline]
    pub(crate) fn tx(&self) -> u8 {
        self.tx_at[usize::from(self.pos)]
    }
}

/// One switched route of the partition: its router, color, position and queues.
#[derive(Clone, Debug)]
struct SwitchedRoute {
    node: u32,
    color: Color,
    pos: u8,
    count: u8,
    ring: bool,
    /// Its local queues (each with a [`Filter`] holding its [`SwitchHead`]).
    queues: Vec<u32>,
    /// Its pace per link port (N, S, E, W), when the target slows a direction down.
    pace: Option<[Pacer; 4]>,
}

/// The switch state of a partition.
#[derive(Debug, Default)]
pub(crate) struct Switches {
    /// Per local queue: the ring slots holding a control wavelet (bit per slot). Empty when
    /// the program has no switch.
    tags: Vec<u64>,
    /// The switched routes, by (router, color).
    routes: Vec<SwitchedRoute>,
    /// Colors with a switch somewhere (bit per color).
    colors: u64,
    /// A control wavelet that left a queue in the port serve going on: (queue, payload).
    pub left: Option<(u32, u32)>,
    /// Per link port (N, S, E, W): the cycles per wavelet of a switched route, in
    /// [`SWITCHED_PERIOD_UNITS`]; `None` when every direction moves a wavelet per cycle.
    periods: Option<[u64; 4]>,
}

/// Whether `program` has a switched route (then it runs in one partition).
pub(crate) fn any(program: &Program) -> bool {
    program.routes.iter().any(|r| r.switch.is_some())
}

impl Switches {
    /// The state for a partition of `queues` queues of `program` on `target`.
    pub(crate) fn new(program: &Program, target: &Target, queues: usize) -> Switches {
        let colors = program
            .routes
            .iter()
            .filter(|r| r.switch.is_some())
            .fold(0u64, |m, r| m | 1 << r.color);
        Switches {
            tags: if colors == 0 {
                Vec::new()
            } else {
                vec![0; queues]
            },
            routes: Vec::new(),
            colors,
            left: None,
            periods: (!target.switched.is_default())
                .then(|| Dir::ALL.map(|d| target.switched.period_units(d))),
        }
    }

    /// Whether the program has a switch (control wavelets are tagged).
    pub(crate) fn on(&self) -> bool {
        !self.tags.is_empty()
    }

    /// Whether `color` has a switch somewhere (control wavelets may travel on it).
    pub(crate) fn switched_color(&self, color: Color) -> bool {
        self.colors & (1 << color) != 0
    }

    /// Whether an express stream must not start on `color`: its routes have switch positions,
    /// which express streams do not model.
    pub(crate) fn blocks_express(&self, color: Color) -> bool {
        self.switched_color(color)
    }

    /// Record the switched route of `color` at local router `node` with local queues `queues`.
    pub(crate) fn add_route(&mut self, node: u32, color: Color, switch: &Switch, queues: Vec<u32>) {
        self.routes.push(SwitchedRoute {
            node,
            color,
            pos: switch.current,
            count: switch.count,
            ring: switch.ring,
            queues,
            pace: self
                .periods
                .map(|p| p.map(|num| Pacer::periodic(num, SWITCHED_PERIOD_UNITS))),
        });
    }

    /// The pace of the switched route of `color` at local router `node` toward link port `o`,
    /// if the target slows switched routes down and the router has one for the color.
    fn pace(&mut self, node: u32, color: Color, o: usize) -> Option<&mut Pacer> {
        self.periods?;
        let i = self
            .routes
            .binary_search_by_key(&(node, color), |r| (r.node, r.color))
            .ok()?;
        self.routes[i].pace.as_mut().map(|p| &mut p[o])
    }

    /// Whether the head wavelet of local queue `qi` is a control wavelet.
    #[inline(always)]
    pub(crate) fn head_is_control(&self, q: &Queue, qi: u32) -> bool {
        self.on() && self.tags[qi as usize] >> q.head & 1 != 0
    }

    /// Tag the wavelet just written last into local queue `qi` as control or not.
    #[inline(always)]
    pub(crate) fn tag_tail(&mut self, rings: &Rings, q: &Queue, qi: u32, control: bool) {
        if self.tags.is_empty() {
            return;
        }
        let used = u32::from(q.len) + u32::from(q.fly);
        let slot = rings.pos::<true>(q, used - 1);
        let tags = &mut self.tags[qi as usize];
        *tags = (*tags & !(1 << slot)) | u64::from(control) << slot;
    }

    /// Apply `command` to the switch of `color` at local router `node` (none: nothing);
    /// returns the route's queues when its position changed.
    fn apply(
        &mut self,
        node: u32,
        color: Color,
        command: SwitchCommand,
        filters: &mut [Filter],
    ) -> Option<&[u32]> {
        let i = self
            .routes
            .binary_search_by_key(&(node, color), |r| (r.node, r.color))
            .ok()?;
        let r = &mut self.routes[i];
        let pos = next_position(r.pos, command, r.count, r.ring);
        if pos == r.pos {
            return None;
        }
        r.pos = pos;
        for &q in &r.queues {
            if let Ok(f) = filters.binary_search_by_key(&q, |f| f.queue)
                && let Some(s) = &mut filters[f].switch
            {
                s.pos = pos;
            }
        }
        Some(&r.queues)
    }
}

impl CycleState<'_> {
    /// Whether the head of local queue `q` at `node` may leave through link port `o` now, as
    /// far as a switched route's pace goes; if it may not, the router steps again when it may.
    #[inline]
    pub(crate) fn switch_pace_allows(&mut self, node: u32, q: u32, o: usize) -> bool {
        let color = self.queues[q as usize].color();
        let t = self.t;
        let Some(pace) = self.switches.pace(node, color, o) else {
            return true;
        };
        if pace.allows(t) {
            return true;
        }
        let when = pace.ready_at();
        self.schedule(node, when);
        false
    }

    /// The head of local queue `q` at `node` left through link port `o` in this cycle.
    #[inline]
    pub(crate) fn switch_paced(&mut self, node: u32, q: u32, o: usize) {
        let color = self.queues[q as usize].color();
        let t = self.t;
        if let Some(pace) = self.switches.pace(node, color, o) {
            pace.moved(t);
        }
    }

    /// A port of `node` was served: if a control wavelet left a queue there, apply it.
    #[inline]
    pub(crate) fn control_served(&mut self, node: u32) {
        if let Some((qi, payload)) = self.switches.left.take() {
            self.control_left(node, qi, payload);
        }
    }

    /// The control wavelet `payload` left local queue `qi` of `node`: apply its command and
    /// point the want masks of the route's queues at the new position.
    #[cold]
    fn control_left(&mut self, node: u32, qi: u32, payload: u32) {
        let color = self.queues[qi as usize].color();
        let Some(queues) = self
            .switches
            .apply(node, color, command(payload), self.filters)
        else {
            return;
        };
        let r = &mut self.routers[node as usize];
        for &q in queues {
            let bit = 1u64 << (q - r.q_start);
            for w in &mut r.want {
                *w &= !bit;
            }
            let queue = &self.queues[q as usize];
            if queue.len > 0 {
                let tx = crate::fabric::head_tx(queue, q, self.filters) & !queue.sent;
                set_want(r, tx, bit);
            }
        }
        r.ports = r.want_ports();
        self.activate(node);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::program::SwitchPosition;
    use wsel_target::{Port, PortSet};

    /// The CSL example's east switch: base RAMP → EAST, pos1 = {rx = WEST}, pos2 = {tx =
    /// RAMP}: the overrides accumulate, so position 1 is WEST → EAST and 2 is WEST → RAMP.
    #[test]
    fn positions_accumulate_their_overrides() {
        let sw = Switch::new(
            PortSet::only(Port::Ramp),
            PortSet::only(Port::E),
            &[
                SwitchPosition::rx(PortSet::only(Port::W)),
                SwitchPosition::tx(PortSet::only(Port::Ramp)),
            ],
            0,
            false,
        )
        .expect("a valid switch");
        let west = SwitchHead::new(&sw, Port::W as u8);
        let ramp = SwitchHead::new(&sw, Port::Ramp as u8);
        let (e, r) = (1 << Port::E as u8, 1 << Port::Ramp as u8);
        assert_eq!(west.tx_at, [0, e, r, 0]);
        assert_eq!(ramp.tx_at, [e, 0, 0, 0]);
    }

    /// Advance stays at the last position, or wraps to 0 in ring mode; reset goes to 0.
    #[test]
    fn advance_stays_or_wraps_and_reset_returns_to_zero() {
        use SwitchCommand::*;
        assert_eq!(next_position(0, Advance, 3, false), 1);
        assert_eq!(next_position(2, Advance, 3, false), 2);
        assert_eq!(next_position(2, Advance, 3, true), 0);
        assert_eq!(next_position(2, Reset, 3, false), 0);
        assert_eq!(next_position(1, Nop, 3, true), 1);
    }

    /// Two bits per hop, the sender's router lowest; each router shifts its own off.
    #[test]
    fn commands_shift_one_hop_per_router() {
        use SwitchCommand::*;
        let w = encode(&[Advance, Nop, Reset]);
        assert_eq!(w, 0b10_00_01);
        assert_eq!(command(w), Advance);
        assert_eq!(command(forwarded(w)), Nop);
        assert_eq!(command(forwarded(forwarded(w))), Reset);
    }
}
