//! Test support: the invariants every placement must satisfy, checked from the placement's
//! own data (regions, port rules, transfers, routes) against the target.

#![allow(dead_code)]

use std::collections::{BTreeSet, HashMap, HashSet};

use wsel_map::{Endpoint, Placement};
use wsel_target::{Coord, Dir, Port, PortSet, Target};

/// Panics with a description of the first broken invariant.
pub fn check_placement(p: &Placement, t: &Target) {
    // Regions: on the fabric, disjoint, without dead PEs or dead links inside.
    for (i, l) in p.layers.iter().enumerate() {
        let r = l.rect;
        assert!(
            r.x + r.width <= t.width && r.y + r.height <= t.height,
            "{} leaves the fabric: {r:?}",
            l.name
        );
        let (w, h) = l.orientation.extent(l.rows, l.cols);
        assert_eq!(
            (w, h),
            (r.width, r.height),
            "{}: rect and size disagree",
            l.name
        );
        for d in &t.defects.dead_pes {
            assert!(!r.contains(*d), "{} contains dead PE {d}", l.name);
        }
        for dl in &t.defects.dead_links {
            let a = Coord::new(dl.x, dl.y);
            if let Some(b) = t.neighbor(a, dl.dir) {
                assert!(
                    !(r.contains(a) && r.contains(b)),
                    "{} contains dead link {a} {}",
                    l.name,
                    dl.dir
                );
            }
        }
        // Layers of different phases of weight streaming time-share their PEs.
        for other in p.layers[i + 1..].iter().filter(|o| o.phase == l.phase) {
            let o = other.rect;
            let apart = r.x + r.width <= o.x
                || o.x + o.width <= r.x
                || r.y + r.height <= o.y
                || o.y + o.height <= r.y;
            assert!(apart, "{} and {} overlap", l.name, other.name);
        }
        // SRAM plan fits.
        assert!(
            l.sram_bytes <= u64::from(t.sram_bytes),
            "{} needs {} bytes per PE",
            l.name,
            l.sram_bytes
        );
        // Port tables use colors within the limit.
        for c in l.colors() {
            assert!(u32::from(c) < t.colors, "{} uses color {c}", l.name);
        }
    }
    assert!(p.colors_used <= t.colors);
    for phase in 0..p.phases {
        check_routes(p, t, phase);
    }
}

/// The routes and transfers of one phase (the whole program outside weight streaming).
fn check_routes(p: &Placement, t: &Target, phase: u32) {
    // Routes: one entry per (router, color), on live routers.
    let mut table: HashMap<(Coord, u8), (PortSet, PortSet)> = HashMap::new();
    for (color, e) in p.phase_routes(phase) {
        assert!(u32::from(color) < t.colors, "route color {color}");
        assert!(t.contains(e.at), "route at {} off the fabric", e.at);
        assert!(!t.defects.pe_dead(e.at), "route through dead PE {}", e.at);
        let old = table.insert((e.at, color), (e.rx, e.tx));
        assert!(
            old.is_none(),
            "two routes for color {color} at {}: {old:?} and {:?}",
            e.at,
            (e.rx, e.tx)
        );
    }
    // Every link a route forwards on is live and lands on a route of the same color.
    for (&(at, color), &(_, tx)) in &table {
        for port in tx.iter() {
            let Some(d) = port.dir() else { continue };
            let Some(n) = t.neighbor(at, d) else { continue };
            assert!(
                !t.defects.link_dead(at, d),
                "color {color} crosses the dead link {at} {d}"
            );
            let next = table.get(&(n, color));
            assert!(
                next.is_some_and(|(rx, _)| rx.contains(d.opposite().port())),
                "color {color} leaves {at} toward {d} but {n} does not receive it: {next:?}"
            );
        }
    }
    // Every transfer reaches each of its destinations.
    let in_phase = |tr: &&wsel_map::Transfer| {
        p.transfer_layer(tr)
            .is_none_or(|l| p.layers[l].phase == phase)
    };
    for tr in p.transfers.iter().filter(in_phase) {
        let (start, from) = match tr.source {
            Endpoint::LayerOutput { at, .. } => (at, Port::Ramp),
            Endpoint::Host { at, side, .. } | Endpoint::WeightStore { at, side, .. } => {
                assert!(
                    t.neighbor(at, side).is_none(),
                    "{} part {} enters at {at} from {side}, not on the fabric's edge",
                    tr.tensor,
                    tr.part
                );
                (at, side.port())
            }
            other => panic!("transfer starts at {other:?}"),
        };
        let (delivered, exits) = walk(&table, t, start, tr.color, from)
            .unwrap_or_else(|e| panic!("{} part {}: {e}", tr.tensor, tr.part));
        for d in &tr.destinations {
            match *d {
                Endpoint::LayerInput { at, .. } => assert!(
                    delivered.contains(&at),
                    "{} part {} never reaches {at} (delivered to {delivered:?})",
                    tr.tensor,
                    tr.part
                ),
                Endpoint::HostOutput { at, side } => assert!(
                    exits.contains(&(at, side)),
                    "{} part {} never leaves at {at} {side} (exits {exits:?})",
                    tr.tensor,
                    tr.part
                ),
                other => panic!("transfer ends at {other:?}"),
            }
        }
    }
}

/// The PEs a stream is delivered to, and the fabric-edge exits it takes.
type Reached = (BTreeSet<Coord>, BTreeSet<(Coord, Dir)>);

/// Follows `color` from `start` (entered from `from`): the PEs it is delivered to and the
/// fabric-edge exits it takes.
fn walk(
    table: &HashMap<(Coord, u8), (PortSet, PortSet)>,
    t: &Target,
    start: Coord,
    color: u8,
    from: Port,
) -> Result<Reached, String> {
    let mut delivered = BTreeSet::new();
    let mut exits = BTreeSet::new();
    let mut seen = HashSet::new();
    let mut stack = vec![(start, from)];
    while let Some((at, came)) = stack.pop() {
        let Some(&(rx, tx)) = table.get(&(at, color)) else {
            return Err(format!("no route for color {color} at {at}"));
        };
        if !rx.contains(came) {
            return Err(format!("{at} does not receive color {color} from {came}"));
        }
        if !seen.insert(at) {
            return Err(format!("color {color} loops back to {at}"));
        }
        for port in tx.iter() {
            match port.dir() {
                None => {
                    delivered.insert(at);
                }
                Some(d) => match t.neighbor(at, d) {
                    None => {
                        exits.insert((at, d));
                    }
                    Some(n) => stack.push((n, d.opposite().port())),
                },
            }
        }
    }
    Ok((delivered, exits))
}

/// Panics unless the copies of the pipeline are apart: every copy has the graph's layers in
/// order, and no router (a region's PE or a route's hop, including the edge PEs where streams
/// enter and leave) serves two copies.
pub fn check_copies(p: &Placement, layers_per_copy: usize) {
    assert_eq!(p.layers.len(), layers_per_copy * p.copies as usize);
    assert_eq!(p.batch, p.samples_per_copy * u64::from(p.copies));
    let mut owner: HashMap<Coord, u32> = HashMap::new();
    let mut claim = |at: Coord, copy: u32, what: &str| {
        let old = owner.insert(at, copy);
        assert!(
            old.is_none_or(|o| o == copy),
            "{what} of copy {copy} at {at} is a router of copy {old:?} too"
        );
    };
    for (i, l) in p.layers.iter().enumerate() {
        assert_eq!(
            l.copy as usize,
            i / layers_per_copy,
            "{} is out of order",
            l.name
        );
        assert_eq!(l.name, p.layers[p.instance(i)].name);
        for y in l.rect.y..l.rect.y + l.rect.height {
            for x in l.rect.x..l.rect.x + l.rect.width {
                claim(Coord::new(x, y), l.copy, &l.name);
            }
        }
    }
    for t in &p.transfers {
        for h in &t.hops {
            claim(h.at, t.copy, &t.tensor);
        }
        for e in std::iter::once(&t.source).chain(&t.destinations) {
            if let Endpoint::LayerInput { layer, .. } | Endpoint::LayerOutput { layer, .. } = e {
                assert_eq!(p.layers[*layer].copy, t.copy, "{} crosses copies", t.tensor);
            }
        }
    }
    for e in p.inputs.iter().chain(&p.outputs) {
        assert_eq!(
            p.layers[e.layer].copy, e.copy,
            "edge stream of {}",
            e.tensor
        );
        assert_eq!(
            owner.get(&e.at),
            Some(&e.copy),
            "edge PE {} of copy {}",
            e.at,
            e.copy
        );
    }
    for c in 0..p.copies {
        assert!(
            p.inputs.iter().any(|e| e.copy == c) && p.outputs.iter().any(|e| e.copy == c),
            "copy {c} has no edge streams of its own"
        );
    }
}
