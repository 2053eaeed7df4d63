//! Boundaries on the fabric (between dies or reticles of a wafer): lines of links that cost
//! extra cycles to cross, every `columns` columns and every `rows` rows.
//!
//! A link crossing a boundary takes `hop_latency + extra_cycles` cycles, for wavelets and for
//! the flow-control credits coming back. The boundary brings its own buffering: the queue
//! behind such a link holds [`Target::boundary_queue_depth`] wavelets, twice the link's
//! latency (or the target's `queue_depth` if that is more), so that its credits never
//! throttle a stream: a boundary delays wavelets without slowing a stream down.

use crate::geometry::{Coord, Dir};
use crate::target::{MAX_FABRIC_SIDE, MAX_HOP_LATENCY, MAX_QUEUE_DEPTH, Target};
use serde::{Deserialize, Serialize};

/// Where the boundaries are and what crossing one costs (the target's `[boundary]`; by
/// default there are none).
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Boundary {
    /// Columns from one vertical boundary to the next (0: none).
    pub columns: u32,
    /// Rows from one horizontal boundary to the next (0: none).
    pub rows: u32,
    /// A column just east of a vertical boundary (below `columns`): the boundaries run
    /// between columns `c − 1` and `c` for every `c ≡ first_column (mod columns)`.
    pub first_column: u32,
    /// A row just south of a horizontal boundary (below `rows`), likewise.
    pub first_row: u32,
    /// Cycles a crossing adds to the hop latency (0: boundaries cost nothing).
    pub extra_cycles: u32,
}

impl Boundary {
    /// Whether no field is set (the target file then leaves the table out).
    pub fn is_absent(&self) -> bool {
        *self == Boundary::default()
    }

    /// Whether any link crosses a boundary at a cost.
    pub fn is_free(&self) -> bool {
        self.extra_cycles == 0 || (self.columns == 0 && self.rows == 0)
    }

    /// Whether the link from `at` toward `dir` crosses a boundary.
    pub fn crosses(&self, at: Coord, dir: Dir) -> bool {
        let on = |c: u32, period: u32, first: u32| period > 0 && c % period == first;
        match dir {
            Dir::East => on(at.x + 1, self.columns, self.first_column),
            Dir::West => on(at.x, self.columns, self.first_column),
            Dir::South => on(at.y + 1, self.rows, self.first_row),
            Dir::North => on(at.y, self.rows, self.first_row),
        }
    }

    /// What is wrong with the figures, if anything: the field and the problem.
    pub(crate) fn problem(&self, hop_latency: u32) -> Option<(&'static str, String)> {
        let firsts = [
            ("first_column", self.first_column, self.columns),
            ("first_row", self.first_row, self.rows),
        ];
        if let Some((field, first, period)) = firsts
            .into_iter()
            .find(|&(_, first, period)| first >= period.max(1))
        {
            return Some((field, format!("{first} is not below the period {period}")));
        }
        if let Some((field, period)) = [("columns", self.columns), ("rows", self.rows)]
            .into_iter()
            .find(|&(_, p)| p > MAX_FABRIC_SIDE)
        {
            return Some((
                field,
                format!("{period} is over the limit of {MAX_FABRIC_SIDE}"),
            ));
        }
        let latency = u64::from(hop_latency) + u64::from(self.extra_cycles);
        let too_long =
            2 * latency > u64::from(MAX_QUEUE_DEPTH) || latency > u64::from(MAX_HOP_LATENCY);
        (!self.is_free() && too_long).then(|| {
            let most = (u64::from(MAX_QUEUE_DEPTH) / 2).saturating_sub(u64::from(hop_latency));
            (
                "extra_cycles",
                format!(
                    "{} is over the limit of {most} cycles (a boundary queue holds twice \
                         the crossing's latency, at most {MAX_QUEUE_DEPTH} wavelets)",
                    self.extra_cycles
                ),
            )
        })
    }
}

impl Target {
    /// Cycles the link from `at` toward `dir` takes (for wavelets and credits).
    pub fn link_latency(&self, at: Coord, dir: Dir) -> u32 {
        if self.boundary.crosses(at, dir) {
            self.hop_latency + self.boundary.extra_cycles
        } else {
            self.hop_latency
        }
    }

    /// The longest latency of any link.
    pub fn max_link_latency(&self) -> u32 {
        if self.boundary.is_free() {
            self.hop_latency
        } else {
            self.hop_latency + self.boundary.extra_cycles
        }
    }

    /// The depth of a queue behind a link that crosses a boundary: `max(Q, 2·(L + B))`.
    pub fn boundary_queue_depth(&self) -> u32 {
        self.queue_depth
            .max(2 * (self.hop_latency + self.boundary.extra_cycles))
    }

    /// The depth of the queue behind the link from `at` toward `dir`.
    pub fn link_queue_depth(&self, at: Coord, dir: Dir) -> u32 {
        if self.boundary.crosses(at, dir) && !self.boundary.is_free() {
            self.boundary_queue_depth()
        } else {
            self.queue_depth
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn every_66() -> Boundary {
        Boundary {
            columns: 66,
            rows: 0,
            first_column: 10,
            first_row: 0,
            extra_cycles: 15,
        }
    }

    #[test]
    fn links_into_a_boundary_column_cross_it_both_ways() {
        let b = every_66();
        // Between columns 9 and 10, and 75 and 76.
        assert!(b.crosses(Coord::new(9, 3), Dir::East));
        assert!(b.crosses(Coord::new(10, 3), Dir::West));
        assert!(b.crosses(Coord::new(75, 0), Dir::East));
        assert!(b.crosses(Coord::new(76, 0), Dir::West));
        assert!(!b.crosses(Coord::new(10, 3), Dir::East));
        assert!(!b.crosses(Coord::new(9, 3), Dir::West));
        assert!(!b.crosses(Coord::new(9, 3), Dir::South));
        assert!(!b.crosses(Coord::new(9, 65), Dir::North));
    }

    #[test]
    fn latency_and_depth_of_a_crossing() {
        let mut t = Target::dev();
        t.boundary = every_66();
        t.width = 100;
        assert_eq!(
            t.link_latency(Coord::new(9, 0), Dir::East),
            t.hop_latency + 15
        );
        assert_eq!(t.link_latency(Coord::new(8, 0), Dir::East), t.hop_latency);
        assert_eq!(t.max_link_latency(), t.hop_latency + 15);
        assert_eq!(
            t.link_queue_depth(Coord::new(9, 0), Dir::East),
            2 * (t.hop_latency + 15)
        );
        assert_eq!(
            t.link_queue_depth(Coord::new(8, 0), Dir::East),
            t.queue_depth
        );
        t.boundary.extra_cycles = 0;
        assert_eq!(t.link_latency(Coord::new(9, 0), Dir::East), t.hop_latency);
        assert_eq!(
            t.link_queue_depth(Coord::new(9, 0), Dir::East),
            t.queue_depth
        );
    }

    #[test]
    fn bad_figures_name_their_field() {
        let mut b = every_66();
        b.first_column = 66;
        assert_eq!(b.problem(1).map(|p| p.0), Some("first_column"));
        let mut b = every_66();
        b.extra_cycles = 200;
        assert_eq!(b.problem(1).map(|p| p.0), Some("extra_cycles"));
        b.columns = 0;
        b.first_column = 0;
        b.first_row = 1;
        assert_eq!(b.problem(1).map(|p| p.0), Some("first_row"));
        assert_eq!(every_66().problem(1), None);
    }
}
