//! Host inputs and weights (`docs/mapping.md` §3): each consumer port gets its own stream per
//! part, entering the fabric edge straight out from the part's PE.

use wsel_ir::graph::{LayerGraph, TensorRef};

use super::{Failed, Found, PathFinder, RawEdge, RawTransfer, Wiring};
use crate::placement::{EdgeSource, Endpoint};
use crate::ports::{BoundTensor, lines_on};

/// Routes every port bound to a model input or a parameter from the fabric's edge.
pub(super) fn route_bound_inputs(
    finder: &mut PathFinder<'_, '_>,
    wiring: &Wiring<'_, '_>,
    found: &mut Found,
    failed: &mut Failed<'_>,
) {
    let graph = wiring.problem.graph;
    for (l, layer) in graph.layers.iter().enumerate() {
        let plan = &wiring.problem.layers[l].plan;
        for (q, port) in plan.ports.iter().enumerate() {
            let Some(bind) = &port.bind else { continue };
            let BoundTensor::Arg(i) = bind.tensor else {
                continue;
            };
            let Some(source) = edge_source(graph, layer.args.get(i)) else {
                continue;
            };
            route_bound_port(finder, wiring, (l, q), source, found, failed);
        }
    }
}

/// What feeds an argument from outside the fabric: the tensor's index and name and where it
/// comes from; `None` for a layer's result.
fn edge_source<'g>(
    graph: &'g LayerGraph,
    arg: Option<&TensorRef>,
) -> Option<(usize, &'g str, EdgeSource)> {
    match arg {
        Some(TensorRef::Input(k)) => Some((
            *k,
            graph.inputs.get(*k).map_or("?", |t| t.name.as_str()),
            EdgeSource::Host,
        )),
        Some(TensorRef::Param(k)) => Some((
            *k,
            graph.params.get(*k).map_or("?", |t| t.tensor.name.as_str()),
            EdgeSource::WeightStore,
        )),
        _ => None,
    }
}

/// Routes port `q` of layer `l`, fed from `source`, part by part from the fabric's edge.
fn route_bound_port(
    finder: &mut PathFinder<'_, '_>,
    wiring: &Wiring<'_, '_>,
    (l, q): (usize, usize),
    (index, name, source): (usize, &str, EdgeSource),
    found: &mut Found,
    failed: &mut Failed<'_>,
) {
    let (region, orientation) = wiring.choice.regions[l];
    let port = &wiring.problem.layers[l].plan.ports[q];
    let (rows, cols) = wiring.choice.sizes[l];
    let parts = lines_on(port.side, rows, cols);
    let din = wiring.phys(l, q);
    let class = wiring.class(l, q);
    let routed = finder.in_some_order(class, parts, false, |finder, j| {
        let cp = orientation.part_pe(region, din, j);
        finder.edge_stream_to(class, cp, din)
    });
    let routed = match routed {
        Ok(r) => r,
        Err((j, why)) => {
            let what = format!("part {j} of `{name}`");
            failed.unroutable(wiring.problem.graph, l, &what, &why);
            return;
        }
    };
    for (j, (entry, side, hops)) in routed.into_iter().enumerate() {
        let j = j as u32;
        let cp = orientation.part_pe(region, din, j);
        let endpoint = match source {
            EdgeSource::Host => Endpoint::Host {
                input: index,
                at: entry,
                side,
            },
            EdgeSource::WeightStore => Endpoint::WeightStore {
                param: index,
                at: entry,
                side,
            },
        };
        found.inputs.push(RawEdge {
            tensor: name.to_string(),
            index,
            part: j,
            parts,
            at: entry,
            side,
            class,
            source,
            layer: l,
        });
        found.transfers.push(RawTransfer {
            tensor: name.to_string(),
            part: j,
            parts,
            class,
            source: endpoint,
            destinations: vec![Endpoint::LayerInput {
                layer: l,
                port: q,
                at: cp,
            }],
            hops,
        });
    }
}
