//! Turning a [`Program`] into partition state: numbering the routers, queues and output
//! channels, then building each partition's records.
//!
//! Numbering is global and row-major (every coordinate with a PE program or a route is a
//! router, in fabric order; its queues follow its routes by color, one per receive port; its
//! output channels one per route and forward link), so it does not depend on the number of
//! partitions; each partition holds a contiguous range of routers, queues and output
//! channels (`bands.rs` chooses the ranges).

use crate::error::SimError;
use crate::events::{NodeSet, Timers, Wakes};
use crate::fabric::{
    CROSSING, LocalLink, MAX_QUEUES_PER_ROUTER, NONE, NONE8, OutChannel, Queue, RAMP, REMOTE_UP,
    Router, RouterInfo, SOURCES, Sink, Source,
};
use crate::pacer::Pacer;
use crate::partition::{Clock, Events, Fabric, Output, Partition, Setup, Stats, Tasks};
use crate::pe::{Pe, RecvSlot, SendSlot};
use crate::phases::Phases;
use crate::program::{Color, EdgeSource, Program, Route};
use crate::queue::Rings;
use crate::router::RemoteUp;
use crate::switches::SwitchHead;
use crate::validate::{check_edge, check_pe, check_route, check_routes, program_error};
use std::collections::{BTreeMap, BTreeSet};
use wsel_target::{Coord, Dir, Port, Target};

/// The global numbering of routers, queues and output channels.
pub(crate) struct Numbering<'p> {
    pub target: &'p Target,
    pub program: &'p Program,
    /// Per global router: its fabric index (row-major), ascending.
    pub keys: Vec<u32>,
    /// The routes, sorted by (fabric index, color).
    routes: Vec<Route>,
    /// Per global router: the start of its routes in `routes` (one more entry at the end).
    route_start: Vec<u32>,
    /// Fabric index → index in `Program::pes`.
    pub pe_at: BTreeMap<u32, u32>,
    /// The westernmost column with a PE program, where the launch starts.
    pub first_column: u32,
    /// (fabric index, side, color) → index in `Program::outputs`.
    pub outputs_at: BTreeMap<(u32, Dir, Color), u32>,
    /// Per global router: its first queue and output channel (one more entry at the end).
    pub q_base: Vec<u32>,
    pub o_base: Vec<u32>,
}

impl<'p> Numbering<'p> {
    /// Validate `program` against `target` and number it.
    pub(crate) fn new(target: &'p Target, program: &'p Program) -> Result<Self, SimError> {
        let mut pe_at = BTreeMap::new();
        for (i, p) in program.pes.iter().enumerate() {
            check_pe(target, program, p)?;
            if pe_at.insert(target.pe_index(p.at), i as u32).is_some() {
                return Err(program_error(
                    Some(p.at),
                    "two programs are placed on this PE".into(),
                ));
            }
        }
        let routes = sorted_routes(target, program)?;
        let mut keys: Vec<u32> = pe_at.keys().copied().collect();
        keys.extend(routes.iter().map(|r| target.pe_index(r.at)));
        keys.sort_unstable();
        keys.dedup();
        let mut route_start = Vec::with_capacity(keys.len() + 1);
        let mut i = 0;
        for &k in &keys {
            route_start.push(i as u32);
            while i < routes.len() && target.pe_index(routes[i].at) == k {
                i += 1;
            }
        }
        route_start.push(routes.len() as u32);
        let mut n = Numbering {
            target,
            program,
            keys,
            routes,
            route_start,
            pe_at,
            first_column: program.pes.iter().map(|p| p.at.x).min().unwrap_or(0),
            outputs_at: BTreeMap::new(),
            q_base: Vec::new(),
            o_base: Vec::new(),
        };
        n.outputs_at = edge_streams(&n)?;
        check_routes(target, &n)?;
        n.count_queues()?;
        Ok(n)
    }

    /// The coordinate of fabric index `k`.
    pub(crate) fn coord_of(&self, k: u32) -> Coord {
        Coord::new(k % self.target.width, k / self.target.width)
    }

    /// The global router at `c`, or NONE: a search of `keys`, so that no table is sized for
    /// the whole fabric (a phase of weight streaming uses a few hundred of wse2's 745,500
    /// coordinates, and filling such a table cost more than building the phase's records).
    pub(crate) fn node_at(&self, c: Coord) -> u32 {
        self.keys
            .binary_search(&self.target.pe_index(c))
            .map_or(NONE, |g| g as u32)
    }

    /// The routes of global router `g`, by color.
    pub(crate) fn node_routes(&self, g: usize) -> &[Route] {
        &self.routes[self.route_start[g] as usize..self.route_start[g + 1] as usize]
    }

    /// The route of global router `g` for `color`.
    pub(crate) fn find_route(&self, g: usize, color: Color) -> Option<&Route> {
        let rs = self.node_routes(g);
        rs.binary_search_by_key(&color, |r| r.color)
            .ok()
            .map(|i| &rs[i])
    }

    /// Global prefix sums of queues (one per route and receive port) and output channels (one
    /// per route and forward link direction).
    fn count_queues(&mut self) -> Result<(), SimError> {
        let n = self.keys.len();
        self.q_base = vec![0; n + 1];
        self.o_base = vec![0; n + 1];
        for g in 0..n {
            let rs = self.node_routes(g);
            let queues: u32 = rs.iter().map(|r| r.rx.0.count_ones()).sum();
            let links: u32 = rs.iter().map(|r| (r.tx.0 & 0xf).count_ones()).sum();
            if queues > MAX_QUEUES_PER_ROUTER {
                return Err(program_error(
                    Some(self.coord_of(self.keys[g])),
                    format!(
                        "the router has {queues} (color, receive port) pairs; at most {MAX_QUEUES_PER_ROUTER} are supported"
                    ),
                ));
            }
            self.q_base[g + 1] = self.q_base[g] + queues;
            self.o_base[g + 1] = self.o_base[g] + links;
        }
        Ok(())
    }

    /// Global index of the queue of router `g` for `color` from `port`.
    pub(crate) fn queue_of(&self, g: usize, color: Color, port: Port) -> u32 {
        let mut q = self.q_base[g];
        for r in self.node_routes(g) {
            if r.color == color {
                return q + (r.rx.0 & ((1u8 << port.index()) - 1)).count_ones();
            }
            q += r.rx.0.count_ones();
        }
        NONE
    }

    /// Global index of the output channel of router `g` for `color` toward `d`.
    pub(crate) fn channel_of(&self, g: usize, color: Color, d: Dir) -> u32 {
        let mut o = self.o_base[g];
        for r in self.node_routes(g) {
            let links = r.tx.0 & 0xf;
            if r.color == color {
                return o + (links & ((1u8 << d.index()) - 1)).count_ones();
            }
            o += links.count_ones();
        }
        NONE
    }
}

/// The routes, checked one by one and sorted by (fabric index, color), one per pair.
fn sorted_routes(target: &Target, program: &Program) -> Result<Vec<Route>, SimError> {
    let mut routes = program.routes.clone();
    for r in &routes {
        check_route(target, r)?;
    }
    routes.sort_by_key(|r| (target.pe_index(r.at), r.color));
    for w in routes.windows(2) {
        if w[0].at == w[1].at && w[0].color == w[1].color {
            return Err(program_error(
                Some(w[0].at),
                format!("two routes are given for color {}", w[0].color),
            ));
        }
    }
    Ok(routes)
}

/// Check the edge streams; the outputs by (fabric index, side, color).
fn edge_streams(n: &Numbering<'_>) -> Result<BTreeMap<(u32, Dir, Color), u32>, SimError> {
    let (target, program) = (n.target, n.program);
    let mut outputs_at = BTreeMap::new();
    for (i, o) in program.outputs.iter().enumerate() {
        check_edge(target, o.at, o.side)?;
        if outputs_at
            .insert((target.pe_index(o.at), o.side, o.color), i as u32)
            .is_some()
        {
            return Err(program_error(
                Some(o.at),
                format!("two outputs leave {} on color {}", o.side, o.color),
            ));
        }
    }
    let mut inputs_at = BTreeSet::new();
    let mut weight_bytes = 0u64;
    for i in &program.inputs {
        check_edge(target, i.at, i.side)?;
        if !inputs_at.insert((target.pe_index(i.at), i.side, i.color)) {
            return Err(program_error(
                Some(i.at),
                format!("two inputs enter from {} on color {}", i.side, i.color),
            ));
        }
        let g = n.node_at(i.at);
        let ok = g != NONE
            && n.find_route(g as usize, i.color)
                .is_some_and(|r| r.rx.contains(i.side.port()));
        if !ok {
            return Err(program_error(
                Some(i.at),
                format!(
                    "an input enters from {} on color {} but no route there receives from {}",
                    i.side,
                    i.color,
                    i.side.port()
                ),
            ));
        }
        if i.source == EdgeSource::WeightStore {
            weight_bytes += 4 * i.data.len() as u64;
        }
    }
    if weight_bytes > target.weight_store.capacity_bytes {
        return Err(program_error(
            None,
            format!(
                "the weight streams hold {weight_bytes} bytes but the weight store holds {}",
                target.weight_store.capacity_bytes
            ),
        ));
    }
    Ok(outputs_at)
}

/// Validate `program` against `target` and build `parts` partitions (one if the program has
/// switches: see `switches.rs`).
pub(crate) fn build<'p>(
    target: &'p Target,
    program: &'p Program,
    parts: usize,
) -> Result<Vec<Partition<'p>>, SimError> {
    target
        .validate()
        .map_err(|e| SimError::Target(e.to_string()))?;
    let n = Numbering::new(target, program)?;
    let switched = crate::switches::any(program);
    if switched && target.queue_depth.max(target.boundary_queue_depth()) > 64 {
        return Err(program_error(
            None,
            "router switches need queues of at most 64 wavelets".into(),
        ));
    }
    let split = crate::bands::split(&n, if switched { 1 } else { parts });
    let parts = split.members.len();
    let phases = Phases::of(program, target, parts == 1);
    let mut partitions = Vec::with_capacity(parts);
    for p in 0..parts {
        let builder = Builder {
            n: &n,
            split: &split,
            p,
            host_streams: host_streams(program),
        };
        partitions.push(builder.partition(phases.clone()));
    }
    Ok(partitions)
}

/// Host streams in and out: they share the host I/O bandwidth.
fn host_streams(program: &Program) -> usize {
    program
        .inputs
        .iter()
        .filter(|i| i.source == EdgeSource::Host)
        .count()
        + program.outputs.len()
}

/// Builds partition `p`: the global routers `split.members[p]`.
struct Builder<'a, 'p> {
    n: &'a Numbering<'p>,
    split: &'a crate::bands::Split,
    p: usize,
    host_streams: usize,
}

/// A partition's records while they are built, and the node timers to set.
struct Parts {
    fab: Fabric,
    wakes: Vec<(u64, u32)>,
    phases: Phases,
}

impl<'p> Builder<'_, 'p> {
    fn partition(&self, phases: Phases) -> Partition<'p> {
        let members = &self.split.members[self.p];
        let target = self.n.target;
        let queues = members
            .iter()
            .map(|&g| (self.n.q_base[g as usize + 1] - self.n.q_base[g as usize]) as usize)
            .sum();
        let mut parts = Parts {
            fab: Fabric {
                rings: Rings::new(
                    target.queue_depth,
                    target.hop_latency,
                    (target.boundary_queue_depth(), target.max_link_latency()),
                    queues,
                ),
                switches: crate::switches::Switches::new(self.n.program, target, queues),
                ..Fabric::default()
            },
            wakes: Vec::new(),
            phases,
        };
        self.reserve(&mut parts.fab, queues);
        for &g in members {
            self.router(&mut parts, g as usize);
        }
        mark_crossing(&mut parts.fab);
        // The first weight group (and any empty groups after it) is requested now.
        let mut requests = Vec::new();
        let fab = &mut parts.fab;
        parts.phases.advance(
            &|_| (0, None),
            self.n.program,
            &mut fab.sources,
            &mut requests,
        );
        for (s, t) in requests {
            let q = fab.sources[s as usize].queue;
            parts.wakes.push((t, fab.queues[q as usize].node));
        }
        self.finish(parts, members.len())
    }

    /// Sizes the per-router, per-queue, per-channel and per-PE records once (`queues`: the
    /// partition's queues), rather than letting pushes grow them by doubling: each growth
    /// was a fresh allocation, and with huge pages a fresh 2 MiB of zeroed memory per phase.
    fn reserve(&self, fab: &mut Fabric, queues: usize) {
        let n = self.n;
        let members = &self.split.members[self.p];
        let channels: u32 = members
            .iter()
            .map(|&g| n.o_base[g as usize + 1] - n.o_base[g as usize])
            .sum();
        let pes = members
            .iter()
            .filter(|&&g| n.pe_at.contains_key(&n.keys[g as usize]))
            .count();
        fab.routers.reserve_exact(members.len());
        fab.wake.reserve_exact(members.len());
        fab.info.reserve_exact(members.len());
        fab.queues.reserve_exact(queues);
        fab.outch.reserve_exact(channels as usize);
        fab.pes.reserve_exact(pes);
    }

    /// The partition around its records.
    fn finish(&self, parts: Parts, nodes: usize) -> Partition<'p> {
        let target = self.n.target;
        let latency = u64::from(target.hop_latency);
        let mut part = Partition {
            setup: Setup {
                id: self.p as u32,
                program: self.n.program,
                latency,
                switch: u64::from(target.task_switch_cycles),
                ramp_shared: target.ramp.shared,
                max_cycles: u64::MAX,
                livelock_tasks: u64::MAX,
                globals: self.split.members[self.p].clone(),
            },
            clock: Clock {
                now: 0,
                floor: 0,
                epoch: 0,
            },
            fab: parts.fab,
            events: Events {
                wakes: Wakes::new(u64::from(target.max_link_latency())),
                timers: Timers::new(nodes),
                pending: NodeSet::new(nodes),
                list: Vec::new(),
                bucket: Default::default(),
            },
            out: Output {
                outbox: (0..self.split.members.len()).map(|_| Vec::new()).collect(),
                errors: Vec::new(),
                stats: Stats::new(target.colors as usize),
                trace: None,
            },
            tasks: Tasks {
                ops: Vec::new(),
                spare: Default::default(),
            },
            streams: Default::default(),
            phases: parts.phases,
        };
        for (t, node) in parts.wakes {
            part.schedule(node, t);
        }
        part
    }

    /// The records of global router `g`.
    fn router(&self, parts: &mut Parts, g: usize) {
        let n = self.n;
        let k = n.keys[g];
        let at = n.coord_of(k);
        let local = self.split.local[g];
        let q_start = parts.fab.queues.len() as u32;
        for r in n.node_routes(g) {
            self.channels(parts, g, r);
            let first = parts.fab.queues.len() as u32;
            self.queues(parts, g, r);
            if let Some(switch) = &r.switch {
                let queues = (first..parts.fab.queues.len() as u32).collect();
                parts.fab.switches.add_route(local, r.color, switch, queues);
            }
        }
        let q_len = parts.fab.queues.len() as u32 - q_start;
        let switches = &parts.fab.switches;
        mark_solo(&mut parts.fab.queues[q_start as usize..], |c| {
            switches.switched_color(c)
        });
        let src_start = parts.fab.sources.len() as u32;
        self.sources(parts, at, g, local);
        let src_len = parts.fab.sources.len() as u32 - src_start;
        let pe = match n.pe_at.get(&k) {
            Some(&prog) => self.pe(parts, g, local, prog, q_start),
            None => NONE,
        };
        parts.fab.routers.push(Router {
            want: [0; crate::fabric::OUTPUTS],
            incoming: 0,
            q_start,
            pe,
            rr: [0; crate::fabric::OUTPUTS],
            q_len: q_len as u8,
            flags: if src_len > 0 { SOURCES } else { 0 },
            ports: 0,
        });
        parts.fab.wake.push(u64::MAX);
        parts.fab.info.push(RouterInfo {
            at,
            src_start,
            src_len,
            express: NONE,
            xhop: NONE,
            reserved: 0,
        });
    }

    /// The output channels of route `r` at global router `g`, in N, S, E, W order.
    fn channels(&self, parts: &mut Parts, g: usize, r: &Route) {
        let n = self.n;
        let target = n.target;
        let k = n.keys[g];
        let at = n.coord_of(k);
        let local = self.split.local[g];
        for d in Dir::ALL {
            if !r.tx.contains(d.port()) {
                continue;
            }
            let mut ch = OutChannel {
                dest_queue: NONE,
                dest_node: NONE,
                dest_part: self.p as u32,
                sink: NONE,
                credits: target.link_queue_depth(at, d),
                node: local,
                latency: target.link_latency(at, d),
                sent: 0,
            };
            match target.neighbor(at, d) {
                Some(nb) => {
                    let ng = n.node_at(nb);
                    let dq = n.queue_of(ng as usize, r.color, d.opposite().port());
                    let (dp, dq) = self.split.queue(n, ng, dq);
                    ch.dest_part = dp as u32;
                    ch.dest_queue = dq;
                    ch.dest_node = self.split.local[ng as usize];
                }
                None => {
                    let output = n.outputs_at.get(&(k, d, r.color)).copied().unwrap_or(NONE);
                    parts.fab.sinks.push(Sink {
                        output,
                        data: Vec::new(),
                        pacer: Pacer::new(
                            target.host_io.bandwidth_bytes_per_cycle,
                            self.host_streams,
                            0,
                        ),
                        first: None,
                        last: None,
                    });
                    ch.sink = (parts.fab.sinks.len() - 1) as u32;
                }
            }
            parts.fab.outch.push(ch);
        }
    }

    /// The queues of route `r` at global router `g`, one per receive port.
    fn queues(&self, parts: &mut Parts, g: usize, r: &Route) {
        let n = self.n;
        let local = self.split.local[g];
        for port in r.rx.iter() {
            // A wavelet never leaves by the port it arrived on: a queue forwards to the
            // route's ports but its own (so a bus's route may receive from and forward to
            // the same ports).
            let tx = r.tx.0 & !(1u8 << port.index());
            let mut q = Queue::new(local, r.color, port.index() as u8, tx);
            for d in Dir::ALL {
                if tx & (1 << d.port().index()) != 0 {
                    let ch = n.channel_of(g, r.color, d);
                    q.out[d.index()] = self.split.channel(n, g as u32, ch);
                }
            }
            q.up = self.upstream(parts, g, r.color, port);
            if let Some(f) = r.filter {
                q.bits |= crate::fabric::FILTERED;
                parts.fab.filters.push(crate::fabric::Filter {
                    queue: parts.fab.queues.len() as u32,
                    keep: f.keep,
                    period: f.period,
                    count: 0,
                    switch: None,
                });
            }
            if let Some(sw) = &r.switch {
                q.bits |= crate::fabric::FILTERED;
                parts.fab.filters.push(crate::fabric::Filter {
                    queue: parts.fab.queues.len() as u32,
                    keep: 0,
                    period: 1,
                    count: 0,
                    switch: Some(SwitchHead::new(sw, port.index() as u8)),
                });
            }
            let crosses = port.dir().is_some_and(|d| {
                !n.target.boundary.is_free() && n.target.boundary.crosses(n.coord_of(n.keys[g]), d)
            });
            let qi = parts.fab.queues.len() as u32;
            parts.fab.rings.place(&mut q, qi, crosses);
            parts.fab.queues.push(q);
        }
    }

    /// What a queue of `color` from `port` at global router `g` returns credits to (see
    /// `Queue::up`).
    fn upstream(&self, parts: &mut Parts, g: usize, color: Color, port: Port) -> u32 {
        let n = self.n;
        let at = n.coord_of(n.keys[g]);
        let Some((d, nb)) = port
            .dir()
            .and_then(|d| n.target.neighbor(at, d).map(|nb| (d, nb)))
        else {
            return NONE;
        };
        let ng = n.node_at(nb);
        let back = d.opposite();
        let forwards = ng != NONE
            && n.find_route(ng as usize, color)
                .is_some_and(|nr| nr.tx.contains(back.port()));
        if !forwards {
            return NONE;
        }
        let up_part = self.split.part[ng as usize] as usize;
        if up_part == self.p {
            return self.split.local[ng as usize];
        }
        let channel = self
            .split
            .channel(n, ng, n.channel_of(ng as usize, color, back));
        parts.fab.remote_ups.push(RemoteUp {
            part: up_part as u32,
            channel,
        });
        REMOTE_UP | (parts.fab.remote_ups.len() - 1) as u32
    }

    /// The edge sources into global router `g` (local `local`) at `at`.
    fn sources(&self, parts: &mut Parts, at: Coord, g: usize, local: u32) {
        let n = self.n;
        let target = n.target;
        for (index, i) in n
            .program
            .inputs
            .iter()
            .enumerate()
            .filter(|(_, i)| i.at == at)
        {
            // Host streams move from their start; weight streams when their phase is
            // requested (`Phases::advance`).
            let group = match i.source {
                EdgeSource::Host => {
                    parts.wakes.push((i.start, local));
                    NONE
                }
                EdgeSource::WeightStore => {
                    let group = parts.phases.group_of(i.phase);
                    parts.phases.members[group as usize].push(parts.fab.sources.len() as u32);
                    group
                }
            };
            parts.fab.sources.push(Source {
                queue: self
                    .split
                    .queue(n, g as u32, n.queue_of(g, i.color, i.side.port()))
                    .1,
                data: i.data.clone(),
                pos: 0,
                pacer: Pacer::new(
                    target.host_io.bandwidth_bytes_per_cycle,
                    self.host_streams,
                    i.start,
                ),
                input: index as u32,
                group,
                waiting: group != NONE,
                requested: i.start,
                first: None,
                last: None,
                held_back: 0,
                express: false,
                xskip: 0,
                xfail: 0,
            });
        }
    }

    /// The PE of global router `g` running `Program::pes[prog]`, with its send and receive
    /// slots (the router's queues start at local `q_start`); its local index.
    fn pe(&self, parts: &mut Parts, g: usize, local: u32, prog: u32, q_start: u32) -> u32 {
        let fab = &mut parts.fab;
        let pe_index = fab.pes.len() as u32;
        let (send_base, recv_base) = (fab.sends.len() as u32, fab.recvs.len() as u32);
        let (mut send_colors, mut recv_colors) = (0u64, 0u64);
        let mut q = q_start;
        for r in self.n.node_routes(g) {
            let route_queues = r.rx.0.count_ones();
            if r.tx.contains(Port::Ramp) {
                recv_colors |= 1 << r.color;
                let slot = (fab.recvs.len() as u32 - recv_base) as u8;
                for queue in &mut fab.queues[q as usize..(q + route_queues) as usize] {
                    queue.slot = slot;
                }
                fab.recvs.push(RecvSlot::new(r.color));
            }
            if r.rx.contains(Port::Ramp) {
                send_colors |= 1 << r.color;
                // The ramp is the last receive port of the route.
                let ramp_q = q + route_queues - 1;
                let queue = &mut fab.queues[ramp_q as usize];
                queue.slot = (fab.sends.len() as u32 - send_base) as u8;
                let solo = queue.solo();
                let out = if usize::from(solo) < RAMP {
                    queue.out[usize::from(solo)]
                } else {
                    NONE
                };
                let link = match fab.outch.get(out as usize) {
                    Some(ch) if ch.sink == NONE && ch.dest_part == self.p as u32 => LocalLink {
                        queue: ch.dest_queue,
                        node: ch.dest_node,
                        latency: ch.latency,
                    },
                    _ => LocalLink::NONE,
                };
                fab.sends.push(SendSlot {
                    data: Vec::new(),
                    pos: 0,
                    then: NONE,
                    seq: 0,
                    queue: ramp_q,
                    out,
                    link,
                    hops: 0,
                    color: r.color,
                    solo,
                    control: false,
                });
            }
            q += route_queues;
        }
        let sends = (send_base, (fab.sends.len() as u32 - send_base) as u8);
        let recvs = (recv_base, (fab.recvs.len() as u32 - recv_base) as u8);
        let mut pe = Pe::new(local, prog, sends, recvs);
        pe.send_colors = send_colors;
        pe.control_colors = (0..64u8)
            .filter(|&c| send_colors >> c & 1 != 0 && fab.switches.switched_color(c))
            .fold(0, |m, c| m | 1 << c);
        pe.recv_colors = recv_colors;
        let program = &self.n.program.pes[prog as usize];
        // The launch reaches the PE `columns` columns east of the first that runs a program.
        let columns = program.at.x.saturating_sub(self.n.first_column);
        let start = self.n.target.launch.start(columns);
        for &t in &program.launch {
            pe.ready.push((start, pe.seq, t));
            pe.seq += 1;
        }
        if !program.launch.is_empty() {
            parts.wakes.push((start, local));
        }
        fab.pes.push(pe);
        pe_index
    }
}

/// Mark the queues of one router that alone forward through their one link port (not on
/// `switched` colors, whose wavelets may be control wavelets or held by a switch).
fn mark_solo(queues: &mut [Queue], switched: impl Fn(Color) -> bool) {
    for q in 0..queues.len() {
        let tx = queues[q].tx;
        let alone = tx.count_ones() == 1
            && !switched(queues[q].color())
            && usize::from(tx.trailing_zeros() as u8) < RAMP
            && (0..queues.len()).all(|o| o == q || queues[o].tx & tx == 0);
        if alone {
            queues[q].set_solo(tx.trailing_zeros() as u8);
        }
    }
}

const _: () = assert!(NONE8 == u8::MAX);

/// Flag the routers whose steps touch a ring behind a boundary ([`CROSSING`]): a deep
/// queue's own router, and its upstream router when that is in this partition (it forwards
/// into the queue; from another partition the wavelets come as messages).
fn mark_crossing(fab: &mut Fabric) {
    for q in &fab.queues {
        if Rings::crosses(q) {
            fab.routers[q.node as usize].flags |= CROSSING;
            if q.up != NONE && q.up & REMOTE_UP == 0 {
                fab.routers[q.up as usize].flags |= CROSSING;
            }
        }
    }
}
