//! Putting regions on the fabric (`docs/mapping.md` §2): in topological order, each layer next
//! to the output edge of the layer that feeds it, turned (transposed) so that its input edge
//! faces that output edge and aligned part for part, so the streams between them are one hop
//! long, or folded (`crate::fold`). Of the ways a layer can lie the snuggest is taken first,
//! so the chain runs along the fabric's edges and then along its own earlier regions, a spiral
//! from the north-west corner; a layer that finds no room moves an earlier one (`backtrack`).
//! A position whose rectangle holds a dead PE or a dead link, or whose seam crosses one, is
//! skipped: the region moves away from its producer by a gap of a few PEs (its parts still
//! travel in straight lines), and failing that to the first free place in row-major order
//! (bottom-left packing).

use wsel_target::{Coord, Dir, Rect, Target};

use crate::placement::Orientation;
use crate::search::Problem;

mod backtrack;
mod chain;

/// The largest gap tried between a producer's output edge and its consumer.
const MAX_GAP: u32 = 32;
/// The most positions the fallback packing examines for one region.
const MAX_FALLBACK_POSITIONS: usize = 20_000;

/// Dead PEs and links, indexed for rectangle queries.
pub(crate) struct DeadIndex {
    width: u32,
    height: u32,
    /// Dead PEs in row-major order.
    pes: Vec<Coord>,
    /// `(width + 1) × (height + 1)` prefix counts of dead PEs, when there are many.
    prefix: Option<Vec<u32>>,
    /// Dead links as `(from, east|south)`.
    links: Vec<(Coord, Dir)>,
    /// Packing corners beside dead PEs: the columns just east of a dead PE whose east
    /// neighbour lives (and one further), and the rows just south of one, at most
    /// [`MAX_CORNERS`] each.
    corner_xs: Vec<u32>,
    corner_ys: Vec<u32>,
}

/// The most packing corners kept per axis beside dead PEs.
const MAX_CORNERS: usize = 512;

/// Above this many dead PEs, rectangle queries use prefix sums.
const PREFIX_THRESHOLD: usize = 64;

impl DeadIndex {
    pub(crate) fn new(target: &Target) -> DeadIndex {
        let pes: Vec<Coord> = target.defects.dead_pes.iter().copied().collect();
        let prefix = (pes.len() > PREFIX_THRESHOLD).then(|| prefix_counts(target, &pes));
        let links = target
            .defects
            .dead_links
            .iter()
            .map(|l| (Coord::new(l.x, l.y), l.dir))
            .collect();
        let dead = |c: Coord| pes.binary_search(&c).is_ok();
        let mut corner_xs = Vec::new();
        let mut corner_ys = Vec::new();
        for c in &pes {
            if !dead(Coord::new(c.x + 1, c.y)) {
                corner_xs.extend([c.x + 1, c.x + 2]);
            }
            if !dead(Coord::new(c.x, c.y + 1)) {
                corner_ys.extend([c.y + 1, c.y + 2]);
            }
        }
        DeadIndex {
            width: target.width,
            height: target.height,
            corner_xs: thin(corner_xs),
            corner_ys: thin(corner_ys),
            pes,
            prefix,
            links,
        }
    }

    /// The dead PEs, in row-major order.
    pub(crate) fn pes(&self) -> &[Coord] {
        &self.pes
    }

    pub(crate) fn dead_pe_count(&self) -> u64 {
        self.pes.len() as u64
    }

    /// Whether `rect` holds a dead PE.
    pub(crate) fn any_dead_in(&self, rect: Rect) -> bool {
        match &self.prefix {
            Some(grid) => {
                let w = self.width as usize + 1;
                let (x0, y0) = (rect.x as usize, rect.y as usize);
                let (x1, y1) = (x0 + rect.width as usize, y0 + rect.height as usize);
                if x1 > self.width as usize || y1 > self.height as usize {
                    return false;
                }
                grid[y1 * w + x1] + grid[y0 * w + x0] > grid[y0 * w + x1] + grid[y1 * w + x0]
            }
            None => self.pes.iter().any(|&c| rect.contains(c)),
        }
    }

    /// The column just east of the last dead PE in `rect`, for skipping ahead in a scan.
    fn skip_past_dead(&self, rect: Rect) -> Option<u32> {
        if !self.any_dead_in(rect) {
            return None;
        }
        if self.prefix.is_none() {
            let last = self
                .pes
                .iter()
                .filter(|&&c| rect.contains(c))
                .map(|c| c.x)
                .max()?;
            return Some(last + 1);
        }
        // The columns from `x` to the rectangle's east side hold a dead PE for every `x` up
        // to the last dead column: search for it.
        let end = rect.x + rect.width;
        let (mut lo, mut hi) = (rect.x, end - 1);
        while lo < hi {
            let mid = lo + (hi - lo).div_ceil(2);
            if self.any_dead_in(Rect::new(mid, rect.y, end - mid, rect.height)) {
                lo = mid;
            } else {
                hi = mid - 1;
            }
        }
        Some(lo + 1)
    }

    /// Whether a dead link joins two PEs of `rect`.
    pub(crate) fn dead_link_inside(&self, rect: Rect) -> bool {
        self.links.iter().any(|&(c, d)| {
            rect.contains(c)
                && match d {
                    Dir::East => rect.contains(Coord::new(c.x + 1, c.y)),
                    Dir::South => rect.contains(Coord::new(c.x, c.y + 1)),
                    _ => false,
                }
        })
    }

    pub(crate) fn pe_dead(&self, c: Coord) -> bool {
        !self.pes.is_empty() && self.pes.binary_search(&c).is_ok()
    }

    /// Whether the link from `c` toward `d` is dead.
    pub(crate) fn link_dead(&self, c: Coord, d: Dir) -> bool {
        if self.links.is_empty() {
            return false;
        }
        let canon = match d {
            Dir::East | Dir::South => (c, d),
            Dir::West => (Coord::new(c.x.wrapping_sub(1), c.y), Dir::East),
            Dir::North => (Coord::new(c.x, c.y.wrapping_sub(1)), Dir::South),
        };
        self.links.contains(&canon)
    }

    /// Whether `rect` is on the fabric, free of dead PEs and of dead links inside.
    pub(crate) fn clean(&self, rect: Rect) -> bool {
        rect.x
            .checked_add(rect.width)
            .is_some_and(|e| e <= self.width)
            && rect
                .y
                .checked_add(rect.height)
                .is_some_and(|e| e <= self.height)
            && !self.any_dead_in(rect)
            && !self.dead_link_inside(rect)
    }
}

/// `(width + 1) × (height + 1)` prefix counts of the dead PEs `pes` on `target`.
fn prefix_counts(target: &Target, pes: &[Coord]) -> Vec<u32> {
    let (w, h) = (target.width as usize + 1, target.height as usize + 1);
    let mut grid = vec![0u32; w * h];
    for c in pes {
        grid[(c.y as usize + 1) * w + c.x as usize + 1] += 1;
    }
    for y in 1..h {
        for x in 1..w {
            grid[y * w + x] +=
                grid[(y - 1) * w + x] + grid[y * w + x - 1] - grid[(y - 1) * w + x - 1];
        }
    }
    grid
}

/// The ways to place every layer at its chosen size, one after another.
///
/// `variant` 0 prefers, for a layer fed from the host, the orientation whose input faces west
/// or north, and away from producers tries identity first; variant 1 turns both preferences
/// around (the search tries it when variant 0 cannot be routed). When `strict`, a layer fed a
/// tensor of several parts by another layer must sit beside it (aligned, in straight lines):
/// placements that would need long multi-part routes are refused rather than tried.
///
/// Each layer has a few ways to lie ([`chain::Chain::picks`]: straight on from its producer
/// in each orientation that takes the parts in order, or folded each way), when `snug` the
/// snuggest first (most border against the fabric's edge and the regions placed), else
/// straight on first as the staircase has them; the first is taken, and
/// when a later layer finds no room the latest layer with an untried way is moved (depth
/// first, at most [`MAX_PICKS`] layers placed in all), so that a chain that boxed itself in
/// can turn earlier instead. A placement whose routes fail can be rejected at a layer: that
/// layer then lies its next way, the search going on from there ([`Placements::reject`]).
pub(crate) struct Placements<'a> {
    problem: &'a Problem<'a>,
    sizes: &'a [(u32, u32)],
    chain: chain::Chain<'a>,
    search: backtrack::DepthFirst<chain::Pick>,
}

impl<'a> Placements<'a> {
    pub(crate) fn new(
        problem: &'a Problem<'a>,
        sizes: &'a [(u32, u32)],
        variant: u32,
        snug: bool,
        strict: bool,
    ) -> Placements<'a> {
        Placements {
            problem,
            sizes,
            chain: chain::Chain::new(problem, sizes, variant, snug, strict),
            search: backtrack::DepthFirst::new(sizes.len(), MAX_PICKS),
        }
    }

    /// The first placement, or after [`Placements::reject`] the next one; on failure the
    /// deepest layer that found no room and the PEs of the layers before it.
    pub(crate) fn next(&mut self) -> Result<Vec<(Rect, Orientation)>, (usize, u64)> {
        let (problem, sizes) = (self.problem, self.sizes);
        if let Some(rect) = problem.region {
            let fits = sizes == [(rect.height, rect.width)] && problem.dead.clean(rect);
            return if fits {
                Ok(vec![(rect, Orientation::Identity)])
            } else {
                Err((0, 0))
            };
        }
        if let Some(regions) = &problem.regions {
            return pinned(problem, regions, sizes);
        }
        let chain = &self.chain;
        let picks = self
            .search
            .next(|l, before: &[chain::Pick]| {
                let placed: Vec<(Rect, Orientation)> =
                    before.iter().map(|p| (p.rect, p.orientation)).collect();
                // The squares where bundles of routes turn (the fold), kept free of regions.
                let squares: Vec<Rect> = before.iter().filter_map(|p| p.square).collect();
                chain.picks(l, &placed, &squares)
            })
            .map_err(|l| chain.failure(l))?;
        Ok(picks.iter().map(|p| (p.rect, p.orientation)).collect())
    }

    /// Gives up the last placement: layer `l` lies its next way and the layers after it are
    /// placed anew (or, when `l` has no other way, the latest layer before it that has).
    /// `false` when there is none, or the regions are the whole fabric's or pinned.
    pub(crate) fn reject(&mut self, l: usize) -> bool {
        let free = self.problem.region.is_none() && self.problem.regions.is_none();
        free && self.search.reject(l)
    }
}

/// The most layers one placement places, counting those placed again after a dead end.
const MAX_PICKS: usize = 200;

/// The pinned `regions` ([`crate::MapOptions::regions`]) when every one is clean, does not
/// overlap another and has the size the search settled on; else the first that is not.
fn pinned(
    problem: &Problem<'_>,
    regions: &[(Rect, Orientation)],
    sizes: &[(u32, u32)],
) -> Result<Vec<(Rect, Orientation)>, (usize, u64)> {
    for (l, &(rect, o)) in regions.iter().enumerate() {
        let (rows, cols) = sizes.get(l).copied().unwrap_or_default();
        let fits = o.extent(rows, cols) == (rect.width, rect.height)
            && problem.dead.clean(rect)
            && regions[..l].iter().all(|(p, _)| !overlaps(*p, rect));
        if !fits {
            return Err((l, 0));
        }
    }
    if regions.len() == sizes.len() {
        Ok(regions.to_vec())
    } else {
        Err((regions.len().min(sizes.len()), 0))
    }
}

/// The rectangle of size `w × h` beside `p`'s `side` at distance `gap`, aligned with `p`'s
/// north-west corner along that side.
pub(crate) fn beside(p: Rect, side: Dir, w: u32, h: u32, gap: u32) -> Option<Rect> {
    Some(match side {
        Dir::South => Rect::new(p.x, p.y + p.height + gap, w, h),
        Dir::East => Rect::new(p.x + p.width + gap, p.y, w, h),
        Dir::North => Rect::new(p.x, p.y.checked_sub(gap + h)?, w, h),
        Dir::West => Rect::new(p.x.checked_sub(gap + w)?, p.y, w, h),
    })
}

/// Whether the `lines` straight paths from `p`'s `side` edge across a gap of `gap` PEs into
/// the next region cross no dead PE or link.
fn seam_clear(dead: &DeadIndex, p: Rect, side: Dir, lines: u32, gap: u32) -> bool {
    // At once when no dead PE lies in the `(gap + 1)`-deep strip the paths cross, and no link
    // is dead (the usual case), else path by path.
    let depth = gap + 1;
    let crossed = match side {
        Dir::South => Some(Rect::new(p.x, p.y + p.height, lines, depth)),
        Dir::North => {
            p.y.checked_sub(depth)
                .map(|y| Rect::new(p.x, y, lines, depth))
        }
        Dir::East => Some(Rect::new(p.x + p.width, p.y, depth, lines)),
        Dir::West => {
            p.x.checked_sub(depth)
                .map(|x| Rect::new(x, p.y, depth, lines))
        }
    };
    let on_fabric = |r: Rect| {
        let width = r.width.min(dead.width.saturating_sub(r.x));
        Rect::new(
            r.x,
            r.y,
            width,
            r.height.min(dead.height.saturating_sub(r.y)),
        )
    };
    if crossed.is_some_and(|r| dead.links.is_empty() && !dead.any_dead_in(on_fabric(r))) {
        return true;
    }
    for i in 0..lines {
        let mut c = match side {
            Dir::South => Coord::new(p.x + i, p.y + p.height - 1),
            Dir::North => Coord::new(p.x + i, p.y),
            Dir::East => Coord::new(p.x + p.width - 1, p.y + i),
            Dir::West => Coord::new(p.x, p.y + i),
        };
        for _ in 0..=gap {
            if dead.link_dead(c, side) {
                return false;
            }
            let Some(next) = step(c, side) else {
                return false;
            };
            if dead.pe_dead(next) {
                return false;
            }
            c = next;
        }
    }
    true
}

fn step(c: Coord, d: Dir) -> Option<Coord> {
    Some(match d {
        Dir::North => Coord::new(c.x, c.y.checked_sub(1)?),
        Dir::South => Coord::new(c.x, c.y + 1),
        Dir::East => Coord::new(c.x + 1, c.y),
        Dir::West => Coord::new(c.x.checked_sub(1)?, c.y),
    })
}

/// The first free position in row-major order, trying only the corners that packing can
/// produce: x from the fabric's west edge or just east of a region or dead PE, y from the north
/// edge or just south of one.
fn first_fit(
    problem: &Problem<'_>,
    placed: &[(Rect, Orientation)],
    rows: u32,
    cols: u32,
    orientations: &[Orientation],
    free: impl Fn(Rect, Orientation, &[(Rect, Orientation)]) -> bool,
) -> Option<(Rect, Orientation)> {
    let target = problem.target;
    let (xs, ys) = corners(problem, placed);
    let mut examined = 0;
    for &y in &ys {
        for &o in orientations {
            let (w, h) = o.extent(rows, cols);
            if y + h > target.height {
                continue;
            }
            let mut x_index = 0;
            while let Some(&x) = xs.get(x_index) {
                x_index += 1;
                if x + w > target.width {
                    break;
                }
                examined += 1;
                if examined > MAX_FALLBACK_POSITIONS {
                    return None;
                }
                let rect = Rect::new(x, y, w, h);
                if free(rect, o, placed) {
                    return Some((rect, o));
                }
                // Skip columns a dead PE in the way rules out.
                if let Some(past) = problem.dead.skip_past_dead(rect) {
                    while xs.get(x_index).is_some_and(|&nx| nx < past) {
                        x_index += 1;
                    }
                }
            }
        }
    }
    None
}

/// The first free position whose `in_side` (a host-fed input) lies on the fabric's edge, in
/// the order of `orientations`, along that edge from its north or west end.
#[allow(clippy::too_many_arguments)]
fn edge_fit(
    problem: &Problem<'_>,
    placed: &[(Rect, Orientation)],
    rows: u32,
    cols: u32,
    orientations: &[Orientation],
    in_side: wsel_ir::graph::Side,
    free: impl Fn(Rect, Orientation, &[(Rect, Orientation)]) -> bool,
) -> Option<(Rect, Orientation)> {
    let target = problem.target;
    let (xs, ys) = corners(problem, placed);
    for &o in orientations {
        let (w, h) = o.extent(rows, cols);
        if w > target.width || h > target.height {
            continue;
        }
        let rects: Vec<Rect> = match o.dir(in_side) {
            Dir::West => ys.iter().map(|&y| Rect::new(0, y, w, h)).collect(),
            Dir::East => ys
                .iter()
                .map(|&y| Rect::new(target.width - w, y, w, h))
                .collect(),
            Dir::North => xs.iter().map(|&x| Rect::new(x, 0, w, h)).collect(),
            Dir::South => xs
                .iter()
                .map(|&x| Rect::new(x, target.height - h, w, h))
                .collect(),
        };
        for rect in rects {
            let on_fabric =
                rect.x + rect.width <= target.width && rect.y + rect.height <= target.height;
            if on_fabric && free(rect, o, placed) {
                return Some((rect, o));
            }
        }
    }
    None
}

/// Packing corners: x from the fabric's west edge or just east of a region or dead PE (and one
/// PE further, room for a live strip beside a fed side), y likewise from the north.
fn corners(problem: &Problem<'_>, placed: &[(Rect, Orientation)]) -> (Vec<u32>, Vec<u32>) {
    let mut xs: Vec<u32> = vec![0];
    let mut ys: Vec<u32> = vec![0];
    for (r, _) in placed {
        xs.extend([r.x + r.width, r.x + r.width + 1]);
        ys.extend([r.y + r.height, r.y + r.height + 1]);
    }
    xs.extend(&problem.dead.corner_xs);
    ys.extend(&problem.dead.corner_ys);
    xs.sort_unstable();
    xs.dedup();
    ys.sort_unstable();
    ys.dedup();
    (xs, ys)
}

/// Sorted distinct values, thinned evenly to at most [`MAX_CORNERS`].
fn thin(mut values: Vec<u32>) -> Vec<u32> {
    values.sort_unstable();
    values.dedup();
    let step = values.len().div_ceil(MAX_CORNERS).max(1);
    values.into_iter().step_by(step).collect()
}

/// The one-PE-thick strip just outside `rect`'s `side`, if it is on the fabric's coordinates.
fn strip(rect: Rect, side: Dir) -> Option<Rect> {
    Some(match side {
        Dir::North => Rect::new(rect.x, rect.y.checked_sub(1)?, rect.width, 1),
        Dir::South => Rect::new(rect.x, rect.y + rect.height, rect.width, 1),
        Dir::West => Rect::new(rect.x.checked_sub(1)?, rect.y, 1, rect.height),
        Dir::East => Rect::new(rect.x + rect.width, rect.y, 1, rect.height),
    })
}

/// Whether `rect`'s `side` lies on the fabric's edge.
/// Whether streams can cross `rect`'s `side` from outside it: the side is on the fabric's edge,
/// or the PEs just outside it and the links across are live.
pub(crate) fn side_open(dead: &DeadIndex, rect: Rect, side: Dir, target: &Target) -> bool {
    let lines = match side {
        Dir::West | Dir::East => rect.height,
        Dir::North | Dir::South => rect.width,
    };
    on_fabric_edge(rect, side, target) || seam_clear(dead, rect, side, lines, 0)
}

fn on_fabric_edge(rect: Rect, side: Dir, target: &Target) -> bool {
    match side {
        Dir::North => rect.y == 0,
        Dir::West => rect.x == 0,
        Dir::South => rect.y + rect.height >= target.height,
        Dir::East => rect.x + rect.width >= target.width,
    }
}

pub(crate) fn overlaps(a: Rect, b: Rect) -> bool {
    a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height
}

/// The PE of part `i` on a region's physical `side`: parts run east along north/south edges
/// and south along west/east edges, from the rectangle's north-west corner.
pub(crate) fn edge_pe(rect: Rect, side: Dir, i: u32) -> Coord {
    match side {
        Dir::North => Coord::new(rect.x + i, rect.y),
        Dir::South => Coord::new(rect.x + i, rect.y + rect.height - 1),
        Dir::West => Coord::new(rect.x, rect.y + i),
        Dir::East => Coord::new(rect.x + rect.width - 1, rect.y + i),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The strip test agrees with following every path, dead PEs anywhere near the seam,
    /// with and without prefix sums, at the fabric's edges too.
    #[test]
    fn seams_agree_with_the_paths() {
        let mut t = Target::dev();
        for (x, y) in [(5, 9), (12, 3), (0, 7), (15, 15), (8, 0)] {
            t.defects.add_dead_pe(Coord::new(x, y));
        }
        let list = DeadIndex::new(&t);
        let mut grid = DeadIndex::new(&t);
        grid.prefix = Some(prefix_counts(&t, &grid.pes));
        for dead in [&list, &grid] {
            for (x, y, w, h) in [
                (2, 2, 4, 5),
                (9, 1, 3, 3),
                (1, 10, 6, 4),
                (12, 12, 4, 4),
                (12, 12, 3, 4),
            ] {
                let p = Rect::new(x, y, w, h);
                for side in [Dir::North, Dir::South, Dir::East, Dir::West] {
                    let lines = if matches!(side, Dir::North | Dir::South) {
                        w
                    } else {
                        h
                    };
                    for gap in 0..6 {
                        let slow = (0..lines).all(|i| path_clear(dead, p, side, i, gap));
                        assert_eq!(
                            seam_clear(dead, p, side, lines, gap),
                            slow,
                            "{p:?} {side:?} {gap}"
                        );
                    }
                }
            }
        }
    }

    /// Part `i`'s straight path from `p`'s `side` across `gap` PEs, step by step.
    fn path_clear(dead: &DeadIndex, p: Rect, side: Dir, i: u32, gap: u32) -> bool {
        let mut c = edge_pe(p, side, i);
        (0..=gap).all(|_| match step(c, side) {
            Some(next) if !dead.pe_dead(next) => {
                c = next;
                true
            }
            _ => false,
        })
    }

    #[test]
    fn prefix_and_list_queries_agree() {
        let mut t = Target::dev();
        for x in 0..16u32 {
            for y in 0..16u32 {
                if (x + 2 * y) % 3 == 0 {
                    t.defects.add_dead_pe(Coord::new(x, y));
                }
            }
        }
        let many = DeadIndex::new(&t);
        assert!(many.prefix.is_some());
        let list = DeadIndex {
            prefix: None,
            ..DeadIndex::new(&t)
        };
        for x in 0..14 {
            for y in 0..14 {
                let r = Rect::new(x, y, 3, 2);
                assert_eq!(many.any_dead_in(r), list.any_dead_in(r), "{r:?}");
            }
        }
    }
}
