//! Colors for every slot class (`docs/mapping.md` §3): a router holds one route per color, so
//! two classes that use a common router need different colors; classes that never meet may
//! share one. A class uses every router of the regions it belongs to, and the routers its
//! hops cross. Colors are a greedy colouring of that conflict graph, most-constrained class
//! first; more colors than the target has is E0602 at the layer whose streams found none free.

use std::collections::BTreeSet;

use wsel_diagnostic::Diagnostic;
use wsel_target::{Coord, Rect};

use crate::diagnostics as diag;
use crate::placement::{Color, Orientation};
use crate::routes::{RawTransfer, Routed};
use crate::search::{Choice, Problem};

/// The color of every slot class.
pub(crate) struct Coloring {
    pub class_color: Vec<Color>,
    pub colors_used: u32,
}

pub(crate) fn assign(
    problem: &Problem<'_>,
    choice: &Choice,
    routed: &Routed,
    diagnostics: &mut Vec<Diagnostic>,
    blamed: &mut Vec<usize>,
) -> Option<Coloring> {
    let n = routed.class_count;
    let layer_count = problem.layers.len();
    let mut layer_classes: Vec<Vec<usize>> = vec![Vec::new(); layer_count];
    for (c, layers) in routed.class_layers.iter().enumerate() {
        for &l in layers {
            layer_classes[l].push(c);
        }
    }
    let mut adjacent: Vec<BTreeSet<usize>> = vec![BTreeSet::new(); n];
    let mut connect = |a: usize, b: usize| {
        if a != b {
            adjacent[a].insert(b);
            adjacent[b].insert(a);
        }
    };
    for classes in &layer_classes {
        for (i, &a) in classes.iter().enumerate() {
            for &b in &classes[i + 1..] {
                connect(a, b);
            }
        }
    }
    // Routers crossed by hops: the classes there, and the classes of a region there.
    for (a, b) in crossings(&routed.transfers, &choice.regions) {
        match b {
            Met::Class(b) => connect(a, b),
            Met::Region(l) => {
                for &b in &layer_classes[l] {
                    connect(a, b);
                }
            }
        }
    }

    // Greedy colouring, most neighbours first.
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by_key(|&c| (std::cmp::Reverse(adjacent[c].len()), c));
    let mut color: Vec<Option<u32>> = vec![None; n];
    let mut first_over: Option<usize> = None;
    for &c in &order {
        let taken: BTreeSet<u32> = adjacent[c].iter().filter_map(|&d| color[d]).collect();
        let pick = (0..).find(|k| !taken.contains(k)).unwrap_or(0);
        if pick >= problem.target.colors && first_over.is_none() {
            first_over = Some(c);
        }
        color[c] = Some(pick);
    }
    let colors_used = color.iter().flatten().map(|&k| k + 1).max().unwrap_or(0);
    if let Some(c) = first_over {
        let l = routed.class_layers[c].first().copied().unwrap_or(0);
        let layer = &problem.graph.layers[l];
        blamed.push(l);
        diagnostics.push(diag::too_many_colors(
            &layer.name,
            &layer.call,
            colors_used,
            problem.target.colors,
            layer_classes[l].len() as u32,
        ));
        return None;
    }
    Some(Coloring {
        class_color: color
            .into_iter()
            .map(|k| Color::try_from(k.unwrap_or(0)).unwrap_or(Color::MAX))
            .collect(),
        colors_used,
    })
}

/// What a class's hop meets at a router: another class's hop, or a layer's region.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Met {
    Class(usize),
    Region(usize),
}

/// Every distinct `(class, what it meets)` at the routers the `transfers`' hops cross: the
/// other classes whose hops cross the same router, and the region holding it. The hops are
/// sorted by router rather than gathered in a map, and each pair is kept once, however many
/// routers it meets at.
fn crossings(transfers: &[RawTransfer], regions: &[(Rect, Orientation)]) -> Vec<(usize, Met)> {
    let mut hops: Vec<(Coord, usize)> = transfers
        .iter()
        .flat_map(|t| t.hops.iter().map(move |h| (h.at, t.class)))
        .collect();
    hops.sort_unstable();
    hops.dedup();
    let mut met: Vec<(usize, Met)> = Vec::new();
    for router in hops.chunk_by(|x, y| x.0 == y.0) {
        let region = region_at(regions, router[0].0);
        for (i, &(_, a)) in router.iter().enumerate() {
            met.extend(router[i + 1..].iter().map(|&(_, b)| (a, Met::Class(b))));
            met.extend(region.map(|l| (a, Met::Region(l))));
        }
    }
    met.sort_unstable();
    met.dedup();
    met
}

/// Which of `regions` holds PE `c`: the last that does (the phases of weight streaming share
/// one). Found among the few regions rather than in a grid of the whole fabric, which on wse2
/// was 3 MB written for every mapping: 1.4% of examples/mlp_streaming's instructions
/// (BENCHMARKS.md, "mlp_streaming's last 11%").
fn region_at(regions: &[(Rect, Orientation)], c: Coord) -> Option<usize> {
    regions.iter().rposition(|(rect, _)| rect.contains(c))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::placement::{Endpoint, Hop};
    use wsel_target::{Dir, PortSet};

    /// A transfer of `class` whose hops cross the routers at `at`.
    fn crossing(class: usize, at: &[(u32, u32)]) -> RawTransfer {
        RawTransfer {
            tensor: format!("t{class}"),
            part: 0,
            parts: 1,
            class,
            source: Endpoint::Host {
                input: 0,
                at: Coord::new(0, 0),
                side: Dir::West,
            },
            destinations: Vec::new(),
            hops: at
                .iter()
                .map(|&(x, y)| Hop {
                    at: Coord::new(x, y),
                    rx: PortSet::EMPTY,
                    tx: PortSet::EMPTY,
                })
                .collect(),
        }
    }

    /// Hand-derived: class 0 crosses (1, 1) and (2, 1) with class 1 (one pair, however many
    /// routers), class 2 crosses (2, 1) too and (5, 5) in region 1 twice (two transfers);
    /// class 1's (1, 1) lies in region 0, where region 1 overlaps it later (the last wins).
    #[test]
    fn each_meeting_is_kept_once() {
        let regions = [
            (Rect::new(0, 0, 2, 2), Orientation::Identity),
            (Rect::new(1, 1, 5, 5), Orientation::Identity),
        ];
        let transfers = [
            crossing(0, &[(1, 1), (2, 1), (8, 8)]),
            crossing(1, &[(1, 1), (2, 1)]),
            crossing(2, &[(2, 1), (5, 5)]),
            crossing(2, &[(5, 5)]),
        ];
        let met = crossings(&transfers, &regions);
        assert_eq!(
            met,
            vec![
                (0, Met::Class(1)),
                (0, Met::Class(2)),
                (0, Met::Region(1)),
                (1, Met::Class(2)),
                (1, Met::Region(1)),
                (2, Met::Region(1)),
            ]
        );
    }
}
