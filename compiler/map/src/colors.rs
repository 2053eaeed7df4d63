//! Colors for every slot class (`docs/mapping.md` §3): a router holds one route per color, so
//! two classes that use a common router need different colors; classes that never meet may
//! share one. A class uses every router of the regions it belongs to, and the routers its
//! hops cross. Colors are a greedy colouring of that conflict graph, most-constrained class
//! first; more colors than the target has is E0602 at the layer whose streams found none free.

use std::collections::{BTreeSet, HashMap};

use wsel_diagnostic::Diagnostic;
use wsel_target::{Coord, Rect};

use crate::diagnostics as diag;
use crate::placement::{Color, Orientation};
use crate::routes::Routed;
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
    let mut at: HashMap<Coord, Vec<usize>> = HashMap::new();
    for t in &routed.transfers {
        for h in &t.hops {
            let v = at.entry(h.at).or_default();
            if !v.contains(&t.class) {
                v.push(t.class);
            }
        }
    }
    for (coord, classes) in &at {
        let region = region_at(&choice.regions, *coord);
        for (i, &a) in classes.iter().enumerate() {
            for &b in &classes[i + 1..] {
                connect(a, b);
            }
            if let Some(l) = region {
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

/// Which of `regions` holds PE `c`: the last that does (the phases of weight streaming share
/// one). Found among the few regions rather than in a grid of the whole fabric, which on wse2
/// was 3 MB written for every mapping: 1.4% of examples/mlp_streaming's instructions
/// (BENCHMARKS.md, "mlp_streaming's last 11%").
fn region_at(regions: &[(Rect, Orientation)], c: Coord) -> Option<usize> {
    regions.iter().rposition(|(rect, _)| rect.contains(c))
}
