//! Copies of the pipeline as tiles (`docs/mapping.md` §5): copy 0, mapped as usual, is cut
//! into its **core** — its regions and the routes between them, which fit in a rectangle —
//! and its **edge streams**, the parts of model inputs, weights and the result that cross the
//! fabric's edge. Every further copy is the core moved to another **slot** of a grid laid over
//! the fabric, with a gap between tiles for the edge streams' routes; `crate::io_routes`
//! then routes each copy's edge streams to the fabric's edge through those gaps.
//!
//! A moved copy keeps the core's routes and shifts its colors by an offset (the same
//! coloring, permuted), so that copies whose edge streams share routers can tell them apart.
//! Slots are taken nearest the fabric's edges first, ring after ring toward the centre, and
//! only where the moved core meets no dead PE, no dead link and nothing placed before.

use std::collections::BTreeMap;

use wsel_target::{Coord, Dir, Rect, Target};

use crate::place::DeadIndex;
use crate::placement::{
    ColorRule, EdgePoint, Endpoint, Hop, PlacedLayer, PlacedPort, Placement, Transfer,
};

/// Copy 0 cut into what every copy repeats and what each copy routes anew.
pub(crate) struct Core {
    /// Copy 0's layers, in the layer graph's order.
    pub layers: Vec<PlacedLayer>,
    /// Copy 0's transfers between its own regions.
    pub internal: Vec<Transfer>,
    /// Copy 0's edge streams, one per part.
    pub edge: Vec<EdgePart>,
    /// The rectangle its regions and internal routes cover.
    pub bounds: Rect,
    /// The colors copy 0 uses at each router of its regions and internal routes, a bit per
    /// color.
    pub uses: Vec<(Coord, u64)>,
    /// The links those routers forward on, which must live wherever the core is moved.
    sends: Vec<(Coord, Dir)>,
}

/// One part of a stream through the fabric's edge, as copy 0 has it.
#[derive(Clone)]
pub(crate) struct EdgePart {
    /// Copy 0's transfer and edge point for it.
    pub transfer: Transfer,
    pub point: EdgePoint,
    /// Into the fabric (a model input or a weight), else the model's result.
    pub input: bool,
    /// The region's PE the part enters or leaves, and the side of the region it crosses.
    pub pe: Coord,
    pub side: Dir,
}

impl Core {
    /// Cuts `copy0` (a placement of one copy). `None` when some tensor goes both to another
    /// region and off the fabric (the result feeding a layer too), which a tile cannot split.
    pub(crate) fn of(copy0: &Placement) -> Option<Core> {
        let mut internal = Vec::new();
        let mut edge = Vec::new();
        for t in &copy0.transfers {
            let to_host = t
                .destinations
                .iter()
                .filter(|d| matches!(d, Endpoint::HostOutput { .. }))
                .count();
            match (&t.source, to_host) {
                (Endpoint::LayerOutput { .. }, 0) => internal.push(t.clone()),
                (Endpoint::LayerOutput { layer, port, at }, 1) if t.destinations.len() == 1 => {
                    let point = copy0
                        .outputs
                        .iter()
                        .find(|o| o.layer == *layer && o.part == t.part)?;
                    edge.push(EdgePart {
                        transfer: t.clone(),
                        point: point.clone(),
                        input: false,
                        pe: *at,
                        side: copy0.layers.get(*layer)?.ports.get(*port)?.physical_side,
                    });
                }
                (Endpoint::Host { .. } | Endpoint::WeightStore { .. }, 0) => {
                    let [Endpoint::LayerInput { layer, port, at }] = t.destinations[..] else {
                        return None;
                    };
                    let point = copy0
                        .inputs
                        .iter()
                        .find(|i| i.layer == layer && i.part == t.part && i.tensor == t.tensor)?;
                    edge.push(EdgePart {
                        transfer: t.clone(),
                        point: point.clone(),
                        input: true,
                        pe: at,
                        side: copy0.layers.get(layer)?.ports.get(port)?.physical_side,
                    });
                }
                _ => return None,
            }
        }
        let mut covered: Vec<Rect> = copy0.layers.iter().map(|l| l.rect).collect();
        covered.extend(
            internal
                .iter()
                .flat_map(|t| &t.hops)
                .map(|h| Rect::new(h.at.x, h.at.y, 1, 1)),
        );
        let bounds = bounding(&covered)?;
        let mut uses: BTreeMap<Coord, u64> = BTreeMap::new();
        for l in &copy0.layers {
            for (color, entry) in l.region_routes() {
                *uses.entry(entry.at).or_default() |= 1 << color;
            }
        }
        for t in &internal {
            for h in &t.hops {
                *uses.entry(h.at).or_default() |= 1 << t.color;
            }
        }
        Some(Core {
            sends: Core::sends_of(&copy0.layers, &internal),
            layers: copy0.layers.clone(),
            internal,
            edge,
            bounds,
            uses: uses.into_iter().collect(),
        })
    }

    /// Every router the core uses, moved by `(dx, dy)`: its regions' PEs and its internal
    /// routes' hops.
    pub(crate) fn routers(&self, dx: i64, dy: i64) -> impl Iterator<Item = Coord> + '_ {
        let regions = self.layers.iter().flat_map(move |l| {
            let r = l.rect;
            (r.y..r.y + r.height)
                .flat_map(move |y| (r.x..r.x + r.width).map(move |x| Coord::new(x, y)))
                .map(move |c| shift(c, dx, dy))
        });
        let hops = self
            .internal
            .iter()
            .flat_map(|t| &t.hops)
            .map(move |h| shift(h.at, dx, dy));
        regions.chain(hops)
    }

    /// Whether the core moved by `(dx, dy)` lies on the fabric, clear of dead PEs and of dead
    /// links inside its regions, and every link its regions and routes send on lives.
    pub(crate) fn fits(&self, target: &Target, dead: &DeadIndex, dx: i64, dy: i64) -> bool {
        let b = self.bounds;
        let (x0, y0) = (i64::from(b.x) + dx, i64::from(b.y) + dy);
        let on_fabric = x0 >= 0
            && y0 >= 0
            && x0 + i64::from(b.width) <= i64::from(target.width)
            && y0 + i64::from(b.height) <= i64::from(target.height);
        if !on_fabric {
            return false;
        }
        let regions_clean = self
            .layers
            .iter()
            .all(|l| dead.clean(shift_rect(l.rect, dx, dy)));
        let hops_live = self
            .internal
            .iter()
            .flat_map(|t| &t.hops)
            .all(|h| !dead.pe_dead(shift(h.at, dx, dy)));
        let links_live = self
            .sends
            .iter()
            .all(|&(c, d)| !dead.link_dead(shift(c, dx, dy), d));
        regions_clean && hops_live && links_live
    }

    /// Every link copy 0's regions and internal routes forward on: the router and the
    /// direction.
    fn sends_of(layers: &[PlacedLayer], internal: &[Transfer]) -> Vec<(Coord, Dir)> {
        let entries = layers
            .iter()
            .flat_map(|l| l.region_routes())
            .map(|(_, e)| (e.at, e.tx))
            .chain(internal.iter().flat_map(|t| &t.hops).map(|h| (h.at, h.tx)));
        let mut out: Vec<(Coord, Dir)> = entries
            .flat_map(|(at, tx)| {
                Dir::ALL
                    .into_iter()
                    .filter(move |d| tx.contains(d.port()))
                    .map(move |d| (at, d))
            })
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    /// Copy `copy`'s layers and internal transfers: the core moved by `(dx, dy)`, its colors
    /// shifted by `offset` (modulo `colors`), its layer indices moved on by
    /// `copy · layers.len()`.
    pub(crate) fn moved(
        &self,
        copy: u32,
        (dx, dy): (i64, i64),
        offset: u8,
        colors: u32,
    ) -> (Vec<PlacedLayer>, Vec<Transfer>) {
        let recolor = |c: u8| shift_color(c, offset, colors);
        let by = copy as usize * self.layers.len();
        let layers = self
            .layers
            .iter()
            .map(|l| PlacedLayer {
                copy,
                rect: shift_rect(l.rect, dx, dy),
                ports: l
                    .ports
                    .iter()
                    .map(|p| PlacedPort {
                        colors: recolor_rule(p.colors, &recolor),
                        ..p.clone()
                    })
                    .collect(),
                ..l.clone()
            })
            .collect();
        let transfers = self
            .internal
            .iter()
            .map(|t| Transfer {
                copy,
                color: recolor(t.color),
                source: shift_endpoint(t.source, dx, dy).shifted(by),
                destinations: t
                    .destinations
                    .iter()
                    .map(|d| shift_endpoint(*d, dx, dy).shifted(by))
                    .collect(),
                hops: t
                    .hops
                    .iter()
                    .map(|h| Hop {
                        at: shift(h.at, dx, dy),
                        ..*h
                    })
                    .collect(),
                ..t.clone()
            })
            .collect();
        (layers, transfers)
    }
}

/// The offsets `(dx, dy)` that move the core onto the slots of a grid over the fabric, `gap`
/// PEs apart, the slots nearest the fabric's edges first (ring by ring), then in row-major
/// order. The core's own place is the first.
pub(crate) fn slots(core: &Core, target: &Target, gap: u32) -> Vec<(i64, i64)> {
    let b = core.bounds;
    let (pitch_x, pitch_y) = (b.width + gap, b.height + gap);
    let mut out = Vec::new();
    let mut y = b.y % pitch_y;
    while y + b.height <= target.height {
        let mut x = b.x % pitch_x;
        while x + b.width <= target.width {
            out.push((i64::from(x) - i64::from(b.x), i64::from(y) - i64::from(b.y)));
            x += pitch_x;
        }
        y += pitch_y;
    }
    let ring = |&(dx, dy): &(i64, i64)| {
        let x0 = i64::from(b.x) + dx;
        let y0 = i64::from(b.y) + dy;
        let x1 = i64::from(target.width) - (x0 + i64::from(b.width));
        let y1 = i64::from(target.height) - (y0 + i64::from(b.height));
        (
            x0.min(y0).min(x1).min(y1) / i64::from(pitch_x.min(pitch_y)),
            dx != 0 || dy != 0,
        )
    };
    // Stable: within a ring, row-major.
    out.sort_by_key(|s| {
        let (r, moved) = ring(s);
        (moved, r)
    });
    out
}

/// `c` moved by `(dx, dy)`, which the caller has checked stays on the fabric.
pub(crate) fn shift(c: Coord, dx: i64, dy: i64) -> Coord {
    Coord::new(
        u32::try_from(i64::from(c.x) + dx).unwrap_or(u32::MAX),
        u32::try_from(i64::from(c.y) + dy).unwrap_or(u32::MAX),
    )
}

fn shift_rect(r: Rect, dx: i64, dy: i64) -> Rect {
    let c = shift(Coord::new(r.x, r.y), dx, dy);
    Rect::new(c.x, c.y, r.width, r.height)
}

fn shift_endpoint(e: Endpoint, dx: i64, dy: i64) -> Endpoint {
    match e {
        Endpoint::Host { input, at, side } => Endpoint::Host {
            input,
            at: shift(at, dx, dy),
            side,
        },
        Endpoint::WeightStore { param, at, side } => Endpoint::WeightStore {
            param,
            at: shift(at, dx, dy),
            side,
        },
        Endpoint::LayerOutput { layer, port, at } => Endpoint::LayerOutput {
            layer,
            port,
            at: shift(at, dx, dy),
        },
        Endpoint::LayerInput { layer, port, at } => Endpoint::LayerInput {
            layer,
            port,
            at: shift(at, dx, dy),
        },
        Endpoint::HostOutput { at, side } => Endpoint::HostOutput {
            at: shift(at, dx, dy),
            side,
        },
    }
}

/// The colors a copy moved by `(dx, dy)`, its colors shifted by `offset` among `colors`,
/// uses at each of its routers.
pub(crate) fn moved_uses(
    core: &Core,
    (dx, dy): (i64, i64),
    offset: u8,
    colors: u32,
) -> impl Iterator<Item = (Coord, u64)> + '_ {
    core.uses.iter().map(move |&(c, mask)| {
        let shifted = (0..64u8)
            .filter(|&k| mask & (1 << k) != 0)
            .fold(0u64, |m, k| m | 1 << shift_color(k, offset, colors));
        (shift(c, dx, dy), shifted)
    })
}

/// Color `c` shifted by `offset` among `colors` colors.
pub(crate) fn shift_color(c: u8, offset: u8, colors: u32) -> u8 {
    let colors = colors.clamp(1, 256);
    ((u32::from(c) + u32::from(offset)) % colors) as u8
}

fn recolor_rule(rule: ColorRule, recolor: &impl Fn(u8) -> u8) -> ColorRule {
    match rule {
        ColorRule::Fixed { color } => ColorRule::Fixed {
            color: recolor(color),
        },
        ColorRule::Alternating {
            along_rows,
            even,
            odd,
            stride,
        } => ColorRule::Alternating {
            along_rows,
            even: recolor(even),
            odd: recolor(odd),
            stride,
        },
    }
}

/// The smallest rectangle holding every rectangle of `rects`.
fn bounding(rects: &[Rect]) -> Option<Rect> {
    let x0 = rects.iter().map(|r| r.x).min()?;
    let y0 = rects.iter().map(|r| r.y).min()?;
    let x1 = rects.iter().map(|r| r.x + r.width).max()?;
    let y1 = rects.iter().map(|r| r.y + r.height).max()?;
    Some(Rect::new(x0, y0, x1 - x0, y1 - y0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colors_shift_around() {
        assert_eq!(shift_color(3, 2, 24), 5);
        assert_eq!(shift_color(23, 2, 24), 1);
    }

    #[test]
    fn the_rectangle_around_rectangles() {
        let r = bounding(&[Rect::new(2, 3, 4, 1), Rect::new(0, 5, 1, 2)]);
        assert_eq!(r, Some(Rect::new(0, 3, 6, 4)));
        assert_eq!(bounding(&[]), None);
    }
}
