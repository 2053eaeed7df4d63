//! Turning a [`Program`] into partition state: validation (every problem becomes a
//! [`SimError`] naming PE and color), node and queue numbering, and the split of the fabric
//! into bands of rows, one per worker thread.
//!
//! Numbering is global and row-major, so it does not depend on the number of partitions;
//! each partition holds a contiguous range of nodes, queues and output channels.

use crate::error::SimError;
use crate::events::{NodeSet, Timers, Wheel};
use crate::fabric::Msg;
use crate::fabric::{
    INLINE_SLOTS, MAX_QUEUES_PER_ROUTER, NONE, Node, NodeInfo, OUTPUTS, OutChannel, Pe, Queue,
    RAMP, SOURCES, Sink, Source,
};
use crate::pacer::Pacer;
use crate::partition::{Partition, Stats};
use crate::phases::Phases;
use crate::program::{Color, EdgeSource, Program, Route};
use std::cmp::Reverse;
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use wsel_target::{Coord, Dir, Port, Target};

fn program_error(at: Option<Coord>, message: String) -> SimError {
    SimError::Program { at, message }
}

fn dir_bit(d: Dir) -> u8 {
    1 << d.index()
}

/// Validate `program` against `target` and build `parts` partitions.
pub(crate) fn build<'p>(
    target: &'p Target,
    program: &'p Program,
    parts: usize,
) -> Result<Vec<Partition<'p>>, SimError> {
    target
        .validate()
        .map_err(|e| SimError::Target(e.to_string()))?;
    let width = target.width;
    let pe_count = target.pe_count() as usize;
    let idx = |c: Coord| (c.y as usize) * width as usize + c.x as usize;

    // PEs.
    let mut pe_at: BTreeMap<u32, u32> = BTreeMap::new();
    for (i, p) in program.pes.iter().enumerate() {
        check_pe(target, program, p)?;
        if pe_at.insert(target.pe_index(p.at), i as u32).is_some() {
            return Err(program_error(
                Some(p.at),
                "two programs are placed on this PE".into(),
            ));
        }
    }

    // Routes, sorted by (PE index, color).
    let mut routes: Vec<Route> = program.routes.clone();
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

    // Nodes: every coordinate with a PE program or a route, row-major.
    let mut keys: Vec<u32> = pe_at.keys().copied().collect();
    keys.extend(routes.iter().map(|r| target.pe_index(r.at)));
    keys.sort_unstable();
    keys.dedup();
    let n_nodes = keys.len();
    let mut node_of = vec![NONE; pe_count];
    for (g, &k) in keys.iter().enumerate() {
        node_of[k as usize] = g as u32;
    }
    let coord_of = |k: u32| Coord::new(k % width, k / width);
    // Routes of each node: range into `routes`.
    let mut route_start = vec![0u32; n_nodes + 1];
    {
        let mut g = 0usize;
        for (i, r) in routes.iter().enumerate() {
            let k = target.pe_index(r.at);
            while keys[g] != k {
                g += 1;
                route_start[g] = i as u32;
            }
        }
        for s in route_start.iter_mut().skip(g + 1) {
            *s = routes.len() as u32;
        }
    }
    let node_routes = |g: usize| &routes[route_start[g] as usize..route_start[g + 1] as usize];
    let find_route = |g: usize, color: Color| -> Option<(usize, &Route)> {
        let rs = node_routes(g);
        rs.binary_search_by_key(&color, |r| r.color)
            .ok()
            .map(|i| (i, &rs[i]))
    };

    // Edge streams.
    let mut outputs_at: BTreeMap<(u32, Dir, Color), u32> = BTreeMap::new();
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
    let mut inputs_at: BTreeSet<(u32, Dir, Color)> = BTreeSet::new();
    let mut weight_bytes = 0u64;
    for i in &program.inputs {
        check_edge(target, i.at, i.side)?;
        if !inputs_at.insert((target.pe_index(i.at), i.side, i.color)) {
            return Err(program_error(
                Some(i.at),
                format!("two inputs enter from {} on color {}", i.side, i.color),
            ));
        }
        let g = node_of[idx(i.at)];
        let ok = g != NONE
            && find_route(g as usize, i.color).is_some_and(|(_, r)| r.rx.contains(i.side.port()));
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

    // Route consistency: links, defects, neighbours, ramps, edges.
    for (g, &k) in keys.iter().enumerate() {
        let at = coord_of(k);
        for r in node_routes(g) {
            let has_pe = pe_at.contains_key(&k);
            if (r.rx.contains(Port::Ramp) || r.tx.contains(Port::Ramp)) && !has_pe {
                return Err(program_error(
                    Some(at),
                    format!(
                        "the route for color {} uses the ramp, but no program runs on this PE",
                        r.color
                    ),
                ));
            }
            for d in Dir::ALL {
                let (rx, tx) = (r.rx.contains(d.port()), r.tx.contains(d.port()));
                if !rx && !tx {
                    continue;
                }
                match target.neighbor(at, d) {
                    None => {
                        if tx && !outputs_at.contains_key(&(k, d, r.color)) {
                            return Err(program_error(
                                Some(at),
                                format!(
                                    "the route for color {} forwards {d} off the fabric, but no output is declared there",
                                    r.color
                                ),
                            ));
                        }
                    }
                    Some(n) => {
                        if target.defects.link_dead(at, d) {
                            return Err(SimError::DeadRoute {
                                at,
                                color: r.color,
                                element: format!("the dead {d} link between PE {at} and PE {n}"),
                            });
                        }
                        if target.defects.pe_dead(n) {
                            return Err(SimError::DeadRoute {
                                at,
                                color: r.color,
                                element: format!("the dead PE {n}"),
                            });
                        }
                        if tx {
                            let ng = node_of[idx(n)];
                            let port = d.opposite().port();
                            let ok = ng != NONE
                                && find_route(ng as usize, r.color)
                                    .is_some_and(|(_, nr)| nr.rx.contains(port));
                            if !ok {
                                return Err(SimError::RouteMismatch {
                                    at,
                                    color: r.color,
                                    to: n,
                                    port,
                                });
                            }
                        }
                    }
                }
            }
        }
    }

    // Bands of rows, balanced by node count.
    let parts = parts.clamp(1, usize::from(u16::MAX));
    let mut part_base = vec![0u32];
    {
        let per = n_nodes.div_ceil(parts).max(1);
        let mut g = 0usize;
        while part_base.len() < parts {
            // Advance by `per` nodes, then to the end of that row so bands are whole rows.
            let mut end = (g + per).min(n_nodes);
            if end < n_nodes && end > 0 {
                let row = keys[end - 1] / width;
                while end < n_nodes && keys[end] / width == row {
                    end += 1;
                }
            }
            part_base.push(end as u32);
            g = end;
        }
        part_base.push(n_nodes as u32);
    }
    let part_of = |g: u32| part_base.partition_point(|&b| b <= g) - 1;

    // Global prefix sums of queues (one per route and receive port) and output channels (one
    // per route and forward link direction).
    let mut q_base = vec![0u32; n_nodes + 1];
    let mut o_base = vec![0u32; n_nodes + 1];
    for g in 0..n_nodes {
        let rs = node_routes(g);
        q_base[g + 1] = q_base[g] + rs.iter().map(|r| r.rx.0.count_ones()).sum::<u32>();
        o_base[g + 1] = o_base[g] + rs.iter().map(|r| (r.tx.0 & 0xf).count_ones()).sum::<u32>();
        if q_base[g + 1] - q_base[g] > MAX_QUEUES_PER_ROUTER {
            return Err(program_error(
                Some(coord_of(keys[g])),
                format!(
                    "the router has {} (color, receive port) pairs; at most {MAX_QUEUES_PER_ROUTER} are supported",
                    q_base[g + 1] - q_base[g]
                ),
            ));
        }
    }
    // Global index of the queue of node `g`, color, receive port.
    let queue_of = |g: usize, color: Color, port: Port| -> u32 {
        let rs = node_routes(g);
        let mut q = q_base[g];
        for r in rs {
            if r.color == color {
                return q + (r.rx.0 & ((1u8 << port.index()) - 1)).count_ones();
            }
            q += r.rx.0.count_ones();
        }
        NONE
    };
    let och_of = |g: usize, color: Color, d: Dir| -> u32 {
        let rs = node_routes(g);
        let mut o = o_base[g];
        for r in rs {
            let links = r.tx.0 & 0xf;
            if r.color == color {
                return o + (links & (dir_bit(d) - 1)).count_ones();
            }
            o += links.count_ones();
        }
        NONE
    };

    let depth = target.queue_depth;
    let host_streams = program
        .inputs
        .iter()
        .filter(|i| i.source == EdgeSource::Host)
        .count()
        + program.outputs.len();
    // Weight phases: the distinct phases in ascending order are the groups (see `phases.rs`).
    let mut groups: Vec<u32> = program
        .inputs
        .iter()
        .filter(|i| i.source == EdgeSource::WeightStore)
        .map(|i| i.phase)
        .collect();
    groups.sort_unstable();
    groups.dedup();
    let group_of = |phase: u32| groups.partition_point(|&g| g < phase) as u32;
    let mut group_streams = vec![0u32; groups.len()];
    let mut group_nonempty = vec![0u32; groups.len()];
    for i in program.inputs.iter() {
        if i.source == EdgeSource::WeightStore {
            let g = group_of(i.phase) as usize;
            group_streams[g] += 1;
            group_nonempty[g] += u32::from(!i.data.is_empty());
        }
    }

    let mut partitions = Vec::with_capacity(parts);
    for p in 0..parts {
        let (n0, n1) = (part_base[p] as usize, part_base[p + 1] as usize);
        let (qb, ob) = (q_base[n0], o_base[n0]);
        let mut nodes = Vec::with_capacity(n1 - n0);
        let mut info = Vec::with_capacity(n1 - n0);
        let mut queues = Vec::with_capacity((q_base[n1] - qb) as usize);
        let mut outch = Vec::with_capacity((o_base[n1] - ob) as usize);
        let mut pes = Vec::new();
        let mut sources = Vec::new();
        let mut sinks = Vec::new();
        let mut wakes: Vec<(u64, u32)> = Vec::new();
        let mut phases = Phases {
            streams: group_streams.clone(),
            nonempty: group_nonempty.clone(),
            members: vec![Vec::new(); groups.len()],
            done: vec![0; groups.len()],
            last: vec![None; groups.len()],
            requested: 0,
            end: None,
            local: parts == 1,
            pool: target.weight_store.bandwidth_bytes_per_cycle,
            latency: u64::from(target.weight_store.latency_cycles)
                .saturating_sub(program.weight_store_warm),
        };
        for g in n0..n1 {
            let k = keys[g];
            let at = coord_of(k);
            let local = (g - n0) as u32;
            let q_start = q_base[g] - qb;
            let mut send_colors = 0u64;
            let mut recv_colors = 0u64;
            for r in node_routes(g) {
                if r.rx.contains(Port::Ramp) {
                    send_colors |= 1 << r.color;
                }
                if r.tx.contains(Port::Ramp) {
                    recv_colors |= 1 << r.color;
                }
                // Output channels of this route, N, S, E, W order.
                for d in Dir::ALL {
                    if !r.tx.contains(d.port()) {
                        continue;
                    }
                    let ch = match target.neighbor(at, d) {
                        Some(n) => {
                            let ng = node_of[idx(n)] as usize;
                            let dq = queue_of(ng, r.color, d.opposite().port());
                            let dp = part_of(ng as u32);
                            OutChannel {
                                credits: depth,
                                dest_part: dp as u32,
                                dest_queue: dq - q_base[part_base[dp] as usize],
                                dest_node: ng as u32 - part_base[dp],
                                sink: NONE,
                                node: local,
                                sent: 0,
                                early_until: 0,
                            }
                        }
                        None => {
                            let output = outputs_at.get(&(k, d, r.color)).copied().unwrap_or(NONE);
                            sinks.push(Sink {
                                output,
                                data: Vec::new(),
                                pacer: Pacer::new(
                                    target.host_io.bandwidth_bytes_per_cycle,
                                    host_streams,
                                    0,
                                ),
                                first: None,
                                last: None,
                            });
                            OutChannel {
                                credits: depth,
                                dest_part: p as u32,
                                dest_queue: NONE,
                                dest_node: NONE,
                                sink: (sinks.len() - 1) as u32,
                                node: local,
                                sent: 0,
                                early_until: 0,
                            }
                        }
                    };
                    outch.push(ch);
                }
                // Queues of this route, one per receive port. A wavelet never leaves by the
                // port it arrived on: a queue forwards to the route's ports but its own.
                for port in r.rx.iter() {
                    let tx = r.tx.0 & !(1u8 << port.index());
                    let mut och = [NONE; 4];
                    for d in Dir::ALL {
                        if tx & (1 << d.port().index()) != 0 {
                            och[d.index()] = och_of(g, r.color, d) - ob;
                        }
                    }
                    let (up_och, up_node, up_part) = match port
                        .dir()
                        .and_then(|d| target.neighbor(at, d).map(|n| (d, n)))
                    {
                        Some((d, n)) => {
                            let ng = node_of[idx(n)];
                            let back = d.opposite();
                            let has = ng != NONE
                                && find_route(ng as usize, r.color)
                                    .is_some_and(|(_, nr)| nr.tx.contains(back.port()));
                            if has {
                                let up_part = part_of(ng);
                                (
                                    och_of(ng as usize, r.color, back)
                                        - o_base[part_base[up_part] as usize],
                                    ng - part_base[up_part],
                                    up_part as u16,
                                )
                            } else {
                                (NONE, NONE, 0)
                            }
                        }
                        None => (NONE, NONE, 0),
                    };
                    queues.push(Queue {
                        node: local,
                        och,
                        up_och,
                        up_node,
                        up_part,
                        color: r.color,
                        rx: port.index() as u8,
                        tx,
                        sent: 0,
                        solo: 0xFF,
                        head: 0,
                        len: 0,
                        slots: [0; INLINE_SLOTS],
                    });
                }
            }
            // Queues that alone forward through their one link port.
            let mine = (q_start as usize)..queues.len();
            for q in mine.clone() {
                let tx = queues[q].tx;
                let alone = tx.count_ones() == 1
                    && usize::from(tx.trailing_zeros() as u8) < RAMP
                    && mine.clone().all(|o| o == q || queues[o].tx & tx == 0);
                if alone {
                    queues[q].solo = tx.trailing_zeros() as u8;
                }
            }
            let q_len = q_base[g + 1] - q_base[g];
            // Edge sources into this node.
            let src_start = sources.len() as u32;
            for (index, i) in program
                .inputs
                .iter()
                .enumerate()
                .filter(|(_, i)| i.at == at)
            {
                // Host streams move from their start; weight streams when their phase is
                // requested (`Phases::advance`, below).
                let group = match i.source {
                    EdgeSource::Host => {
                        wakes.push((i.start, local));
                        NONE
                    }
                    EdgeSource::WeightStore => {
                        let group = group_of(i.phase);
                        phases.members[group as usize].push(sources.len() as u32);
                        group
                    }
                };
                sources.push(Source {
                    queue: queue_of(g, i.color, i.side.port()) - qb,
                    data: i.data.clone(),
                    pos: 0,
                    pacer: Pacer::new(
                        target.host_io.bandwidth_bytes_per_cycle,
                        host_streams,
                        i.start,
                    ),
                    input: index as u32,
                    group,
                    waiting: group != NONE,
                    requested: i.start,
                    first: None,
                    last: None,
                    held_back: 0,
                });
            }
            let src_len = sources.len() as u32 - src_start;
            let pe = match pe_at.get(&k) {
                Some(&prog) => {
                    let pp = &program.pes[prog as usize];
                    let mut pe = Pe {
                        node: local,
                        prog,
                        sram: Vec::new(),
                        busy_until: 0,
                        ready: Default::default(),
                        seq: 0,
                        pending: Default::default(),
                        recvs: Vec::new(),
                        sends: Vec::new(),
                        send_mask: 0,
                        express: NONE,
                        last_color: u8::MAX,
                        send_colors,
                        recv_colors,
                        delivered: 0,
                        open_recvs: 0,
                        queued_recvs: VecDeque::new(),
                        queued_colors: 0,
                        busy_cycles: 0,
                        tasks_run: 0,
                    };
                    for &t in &pp.launch {
                        pe.ready.push(Reverse((0, pe.seq, t)));
                        pe.seq += 1;
                    }
                    if !pp.launch.is_empty() {
                        wakes.push((0, local));
                    }
                    pes.push(pe);
                    (pes.len() - 1) as u32
                }
                None => NONE,
            };
            nodes.push(Node {
                want: [0; OUTPUTS],
                ramp_full: 0,
                q_start,
                pe,
                rr: [0; OUTPUTS],
                q_len: q_len as u8,
                flags: if src_len > 0 { SOURCES } else { 0 },
                ports: 0,
            });
            info.push(NodeInfo {
                wake: u64::MAX,
                at,
                src_start,
                src_len,
                express: NONE,
                reserved: 0,
            });
        }
        // The first weight group (and any empty groups after it) is requested now.
        let mut requests = Vec::new();
        phases.advance(&|_| (0, None), program, &mut sources, &mut requests);
        for (s, t) in requests {
            let q = sources[s as usize].queue;
            wakes.push((t, queues[q as usize].node));
        }
        let qstride = depth.max(1).next_power_of_two();
        let pes_len = pes.len();
        let mut part = Partition {
            id: p as u32,
            program,
            depth,
            latency: u64::from(target.hop_latency),
            switch: u64::from(target.task_switch_cycles),
            // Depths up to `INLINE_SLOTS` keep their wavelets in the queue records.
            qdata: if crate::fabric::inline_slots(qstride) {
                Vec::new()
            } else {
                vec![0; queues.len() * qstride as usize]
            },
            qstride,
            qmask: qstride - 1,
            nodes,
            info,
            queues,
            outch,
            pes,
            sources,
            sinks,
            wheel: Wheel::new(u64::from(target.hop_latency)),
            timers: Timers::new(n1 - n0),
            pending: NodeSet::new(n1 - n0),
            list: Vec::new(),
            due_head: vec![NONE; n1 - n0],
            due_next: Vec::new(),
            now: 0,
            floor: 0,
            bucket: Default::default(),
            outbox: (0..parts).map(|_| Vec::<Msg>::new()).collect(),
            express: Vec::new(),
            xevents: Default::default(),
            express_on: false,
            defer: false,
            early_credits: true,
            max_cycles: u64::MAX,
            livelock_tasks: u64::MAX,
            closed_tasks: vec![0; pes_len],
            xcandidates: Vec::new(),
            waits: vec![Default::default(); pes_len],
            first_task: vec![u64::MAX; pes_len],
            phases,
            errors: Vec::new(),
            stats: Stats::new(target.colors as usize),
            trace: None,
            ops: Vec::new(),
            spare: Default::default(),
            node_base: part_base[p],
        };
        for (t, node) in wakes {
            part.schedule(node, t);
        }
        partitions.push(part);
    }
    Ok(partitions)
}

fn check_pe(
    target: &Target,
    program: &Program,
    p: &crate::program::PeProgram,
) -> Result<(), SimError> {
    let at = Some(p.at);
    if !target.contains(p.at) {
        return Err(program_error(
            at,
            format!(
                "the PE is outside the {}×{} fabric",
                target.width, target.height
            ),
        ));
    }
    if target.defects.pe_dead(p.at) {
        return Err(program_error(
            at,
            "this PE is dead in the target's defect map; nothing may run on it".into(),
        ));
    }
    let Some(kernel) = program.kernels.get(p.kernel as usize) else {
        return Err(program_error(
            at,
            format!("kernel {} does not exist", p.kernel),
        ));
    };
    if let Some(&t) = p.launch.iter().find(|&&t| t as usize >= kernel.tasks.len()) {
        return Err(program_error(
            at,
            format!("launch task {t} does not exist in kernel `{}`", kernel.name),
        ));
    }
    if p.sram_bytes > target.sram_bytes {
        return Err(SimError::SramOverflow {
            at: p.at,
            needed: p.sram_bytes.into(),
            capacity: target.sram_bytes,
        });
    }
    if p.sram_init.len() > p.sram_bytes as usize {
        return Err(SimError::SramOverflow {
            at: p.at,
            needed: p.sram_init.len() as u64,
            capacity: p.sram_bytes.min(target.sram_bytes),
        });
    }
    if let Some(&c) = p.ports.iter().find(|&&c| u32::from(c) >= target.colors) {
        return Err(program_error(
            at,
            format!(
                "a port is bound to color {c}, but the target has {} colors",
                target.colors
            ),
        ));
    }
    if !p.region.contains(p.at) {
        return Err(program_error(at, "the PE is outside its own region".into()));
    }
    Ok(())
}

fn check_route(target: &Target, r: &Route) -> Result<(), SimError> {
    let at = Some(r.at);
    if !target.contains(r.at) {
        return Err(program_error(
            at,
            format!("a route for color {} is outside the fabric", r.color),
        ));
    }
    if u32::from(r.color) >= target.colors {
        return Err(program_error(
            at,
            format!(
                "color {} does not exist: the target has {} colors",
                r.color, target.colors
            ),
        ));
    }
    if target.defects.pe_dead(r.at) {
        return Err(SimError::DeadRoute {
            at: r.at,
            color: r.color,
            element: format!("the dead PE {}", r.at),
        });
    }
    if r.rx.is_empty() || r.tx.is_empty() {
        return Err(program_error(
            at,
            format!(
                "the route for color {} needs at least one receive and one forward port",
                r.color
            ),
        ));
    }
    // A port may both receive and forward (a bus: every PE of a line sends and receives on
    // one color); each receive port's queue forwards to the others, so some must be left.
    if r.rx.iter().any(|p| r.tx.0 & !(1u8 << p.index()) == 0) {
        return Err(program_error(
            at,
            format!(
                "the route for color {} forwards what one of its receive ports takes nowhere but back",
                r.color
            ),
        ));
    }
    Ok(())
}

fn check_edge(target: &Target, at: Coord, side: Dir) -> Result<(), SimError> {
    if !target.contains(at) || target.neighbor(at, side).is_some() {
        return Err(program_error(
            Some(at),
            format!(
                "an edge stream uses the {side} side, but the PE is not on the fabric's {side} edge"
            ),
        ));
    }
    if target.defects.pe_dead(at) {
        return Err(program_error(
            Some(at),
            "an edge stream uses a dead PE".into(),
        ));
    }
    Ok(())
}
