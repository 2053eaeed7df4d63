//! The defect map: dead PEs and dead links, and the questions routing asks of it.
//!
//! A dead link is given as a PE and a direction; the physical link between the two PEs is
//! unusable in both directions, so `(x, y, east)` and `(x + 1, y, west)` name the same link.
//! A dead PE's router is dead too: nothing may be routed through it.

use crate::geometry::{Coord, Dir};
use serde::{Deserialize, Serialize};
use std::collections::BTreeSet;

/// A dead link, named by one of its two ends.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DeadLink {
    /// Column of the PE at one end.
    pub x: u32,
    /// Row of the PE at one end.
    pub y: u32,
    /// Direction of the link leaving that PE.
    pub dir: Dir,
}

/// Dead PEs and dead links of one fabric. Empty by default.
#[derive(Clone, PartialEq, Eq, Default, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DefectMap {
    /// PEs (with their routers) that do not work.
    #[serde(default)]
    pub dead_pes: BTreeSet<Coord>,
    /// Links that do not work, each stored in canonical form (see [`DefectMap::add_dead_link`]).
    #[serde(default)]
    pub dead_links: BTreeSet<DeadLink>,
}

impl DefectMap {
    /// A map without defects.
    pub fn new() -> DefectMap {
        DefectMap::default()
    }

    /// Whether there is no defect at all.
    pub fn is_empty(&self) -> bool {
        self.dead_pes.is_empty() && self.dead_links.is_empty()
    }

    /// Mark the PE at `c` dead.
    pub fn add_dead_pe(&mut self, c: Coord) {
        self.dead_pes.insert(c);
    }

    /// Mark the link leaving `c` toward `dir` dead (in both directions).
    pub fn add_dead_link(&mut self, c: Coord, dir: Dir) {
        self.dead_links.insert(canonical(c, dir));
    }

    /// Whether the PE at `c` is dead.
    pub fn pe_dead(&self, c: Coord) -> bool {
        !self.dead_pes.is_empty() && self.dead_pes.contains(&c)
    }

    /// Whether the link leaving `c` toward `dir` is dead (the link itself, not its ends).
    pub fn link_dead(&self, c: Coord, dir: Dir) -> bool {
        !self.dead_links.is_empty() && self.dead_links.contains(&canonical(c, dir))
    }

    /// Whether a wavelet can go from `c` one hop toward `dir`: the link and both ends live.
    /// The caller checks that the neighbour `to` is on the fabric.
    pub fn hop_usable(&self, c: Coord, dir: Dir, to: Coord) -> bool {
        !self.pe_dead(c) && !self.pe_dead(to) && !self.link_dead(c, dir)
    }

    /// Rewrite every dead link into canonical form. Maps built with [`DefectMap::add_dead_link`]
    /// are already canonical; maps read from files are canonicalised by the loader.
    pub fn canonicalize(&mut self) {
        let links = std::mem::take(&mut self.dead_links);
        self.dead_links = links
            .into_iter()
            .map(|l| canonical(Coord::new(l.x, l.y), l.dir))
            .collect();
    }
}

/// Links are stored from their west or north end, pointing east or south.
fn canonical(c: Coord, dir: Dir) -> DeadLink {
    match dir {
        Dir::East | Dir::South => DeadLink {
            x: c.x,
            y: c.y,
            dir,
        },
        Dir::West => DeadLink {
            x: c.x.wrapping_sub(1),
            y: c.y,
            dir: Dir::East,
        },
        Dir::North => DeadLink {
            x: c.x,
            y: c.y.wrapping_sub(1),
            dir: Dir::South,
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dead_link_is_dead_both_ways() {
        let mut d = DefectMap::new();
        d.add_dead_link(Coord::new(3, 2), Dir::West);
        assert!(d.link_dead(Coord::new(2, 2), Dir::East));
        assert!(d.link_dead(Coord::new(3, 2), Dir::West));
        assert!(!d.link_dead(Coord::new(3, 2), Dir::East));
        d.add_dead_link(Coord::new(1, 1), Dir::South);
        assert!(d.link_dead(Coord::new(1, 2), Dir::North));
    }
}
