//! E0704: no router may hold two entries for one color. A router keeps one route per color,
//! so two streams that meet at a router on one color would be merged or misdirected.
//!
//! The router entries of a program are those of every region's port rules
//! (`PlacedLayer::region_routes` in the mapper) and the explicit hops of the transfers between
//! regions ([`Placement::routes`] gathers both). Instead of listing every entry (one per port
//! per PE, millions on a large fabric), this check looks at the entries of a few PEs per
//! region — every combination of first/last/other row and column and of row and column
//! parity, which is all a port's rule depends on — and at each hop, with the region entries
//! of the PE the hop crosses.

use std::collections::HashMap;

use wsel_diagnostic::Diagnostic;
use wsel_ir::graph::LayerGraph;
use wsel_map::{Color, Endpoint, Placement, Transfer};
use wsel_target::Coord;

use crate::diagnostics::{E0704, at};

/// The phase of the layer a transfer starts or ends at (`None` for a transfer between the
/// host and the store only, which no placement makes).
fn transfer_phase(placement: &Placement, transfer: &Transfer) -> Option<u32> {
    std::iter::once(&transfer.source)
        .chain(&transfer.destinations)
        .find_map(|e| match e {
            Endpoint::LayerOutput { layer, .. } | Endpoint::LayerInput { layer, .. } => {
                placement.layers.get(*layer).map(|l| l.phase)
            }
            _ => None,
        })
}

/// Every pair of router entries with one color at one router.
pub(crate) fn check(graph: &LayerGraph, placement: &Placement) -> Vec<Diagnostic> {
    let mut out = Vec::new();
    let mut reported: Vec<(Owner, Owner, Color)> = Vec::new();
    let mut report = |a: Owner, b: Owner, color: Color, pe: Coord, out: &mut Vec<Diagnostic>| {
        let key = if a <= b { (a, b, color) } else { (b, a, color) };
        if reported.contains(&key) {
            return;
        }
        reported.push(key);
        out.push(conflict(graph, placement, a, b, color, pe));
    };
    for (l, layer) in placement.layers.iter().enumerate() {
        for row in representatives(layer.rows) {
            for col in representatives(layer.cols) {
                let entries = layer.entries_at(row, col);
                for (i, (pa, ca, _)) in entries.iter().enumerate() {
                    for (pb, cb, _) in &entries[i + 1..] {
                        if ca == cb {
                            let pe = layer.pe(row, col);
                            report(Owner::Port(l, *pa), Owner::Port(l, *pb), *ca, pe, &mut out);
                        }
                    }
                }
            }
        }
    }
    // Weight streaming's phases are programs of their own, one after another: only streams
    // of one phase can meet.
    let mut hops: HashMap<(Coord, Color, Option<u32>), usize> = HashMap::new();
    for (t, transfer) in placement.transfers.iter().enumerate() {
        let phase = transfer_phase(placement, transfer);
        for hop in &transfer.hops {
            if let Some(&other) = hops.get(&(hop.at, transfer.color, phase))
                && other != t
            {
                report(
                    Owner::Transfer(other),
                    Owner::Transfer(t),
                    transfer.color,
                    hop.at,
                    &mut out,
                );
            }
            hops.insert((hop.at, transfer.color, phase), t);
            for (l, layer) in placement.layers.iter().enumerate() {
                if phase.is_some_and(|p| p != layer.phase) {
                    continue;
                }
                let Some((row, col)) = layer.orientation.logical(layer.rect, hop.at) else {
                    continue;
                };
                for (p, color, _) in layer.entries_at(row, col) {
                    if color == transfer.color {
                        report(
                            Owner::Port(l, p),
                            Owner::Transfer(t),
                            color,
                            hop.at,
                            &mut out,
                        );
                    }
                }
            }
        }
    }
    out
}

/// What a router entry belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Owner {
    /// Port `1` of layer `0`.
    Port(usize, usize),
    /// Transfer number `0`.
    Transfer(usize),
}

/// Rows (or columns) covering every combination of first, last, other and parity.
fn representatives(n: u32) -> Vec<u32> {
    let mut out: Vec<u32> = [0, 1, 2, 3]
        .into_iter()
        .chain((1..=4).filter_map(|k| n.checked_sub(k)))
        .filter(|&i| i < n)
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

fn conflict(
    graph: &LayerGraph,
    placement: &Placement,
    a: Owner,
    b: Owner,
    color: Color,
    pe: Coord,
) -> Diagnostic {
    let (a_text, a_layer) = owner_text(placement, a);
    let (b_text, b_layer) = owner_text(placement, b);
    let call = |l: Option<usize>| l.and_then(|l| graph.layers.get(l)).map(|g| at(&g.call));
    let primary = call(a_layer)
        .or_else(|| call(b_layer))
        .or_else(|| graph.layers.first().map(|g| at(&g.call)))
        .unwrap_or(wsel_diagnostic::Location {
            file: std::path::PathBuf::new(),
            span: 0..0,
        });
    let mut d = Diagnostic::error(
        E0704,
        format!(
            "color {color} has two routes at the router of PE ({}, {}): {a_text} and {b_text}",
            pe.x, pe.y
        ),
        primary,
        format!("{a_text} uses color {color} at ({}, {})", pe.x, pe.y),
    );
    if b_layer != a_layer
        && let Some(location) = call(b_layer)
    {
        d = d.with_secondary(location, format!("{b_text} uses it too"));
    }
    d.with_note("a router holds one route per color, so these streams would be merged or misdirected there")
        .with_help("the mapper should have given them different colors: this is a bug in wsel, please report it with this program")
}

/// A readable name of an entry's owner, and the layer to point at.
fn owner_text(placement: &Placement, owner: Owner) -> (String, Option<usize>) {
    match owner {
        Owner::Port(l, p) => {
            let layer = &placement.layers[l];
            (
                format!("port `{}` of `{}`", layer.ports[p].name, layer.name),
                Some(l),
            )
        }
        Owner::Transfer(t) => {
            let transfer = &placement.transfers[t];
            (
                format!(
                    "the stream of `{}` (part {} of {})",
                    transfer.tensor,
                    transfer.part + 1,
                    transfer.parts
                ),
                transfer_layer(transfer),
            )
        }
    }
}

fn transfer_layer(t: &Transfer) -> Option<usize> {
    let of = |e: &Endpoint| match e {
        Endpoint::LayerOutput { layer, .. } | Endpoint::LayerInput { layer, .. } => Some(*layer),
        _ => None,
    };
    of(&t.source).or_else(|| t.destinations.iter().find_map(of))
}
