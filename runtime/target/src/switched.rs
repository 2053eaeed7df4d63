//! The rate of a switched route (CSL's `switches`): how often a router lets a color's wavelets
//! leave through a route with switch positions, per direction they leave in.
//!
//! A plain route forwards a wavelet per cycle per link; a switched one, on the CS-2 and in
//! Cerebras' simulator, is slower and not the same both ways (the `synchronous-slide`
//! figures, `examples/fidelity/README.md`). No public document gives the figure, so it is a
//! field, fitted in `examples/fidelity/cs2-slide.toml`; by default every direction moves a
//! wavelet per cycle, as a plain route does.

use crate::geometry::Dir;
use serde::{Deserialize, Serialize};

/// The longest period a switched route may have, in cycles per wavelet.
pub const MAX_SWITCHED_CYCLES_PER_WAVELET: f64 = 1024.0;

/// Periods are kept in thousandths of a cycle (the field is rounded to that).
pub const SWITCHED_PERIOD_UNITS: u64 = 1000;

/// The target's `[switched]`: cycles per wavelet leaving a router through a link port of a
/// switched route, per direction (at least 1; 1 = a link's full rate, the default).
#[derive(Clone, Copy, PartialEq, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Switched {
    /// Leaving northward.
    pub north: f64,
    /// Leaving southward.
    pub south: f64,
    /// Leaving eastward.
    pub east: f64,
    /// Leaving westward.
    pub west: f64,
}

impl Default for Switched {
    fn default() -> Switched {
        Switched {
            north: 1.0,
            south: 1.0,
            east: 1.0,
            west: 1.0,
        }
    }
}

impl Switched {
    /// Whether every direction moves a wavelet per cycle (the target file leaves it out).
    pub fn is_default(&self) -> bool {
        *self == Switched::default()
    }

    /// The cycles per wavelet leaving toward `dir`.
    pub fn cycles_per_wavelet(&self, dir: Dir) -> f64 {
        match dir {
            Dir::North => self.north,
            Dir::South => self.south,
            Dir::East => self.east,
            Dir::West => self.west,
        }
    }

    /// The period toward `dir` in [`SWITCHED_PERIOD_UNITS`] per cycle (rounded to the
    /// nearest; at least one cycle).
    pub fn period_units(&self, dir: Dir) -> u64 {
        let units = (self.cycles_per_wavelet(dir) * SWITCHED_PERIOD_UNITS as f64).round();
        (units as u64).max(SWITCHED_PERIOD_UNITS)
    }

    /// What is wrong with the figures, if anything: the field and the problem.
    pub(crate) fn problem(&self) -> Option<(&'static str, String)> {
        let fields = [
            ("north", self.north),
            ("south", self.south),
            ("east", self.east),
            ("west", self.west),
        ];
        let range = 1.0..=MAX_SWITCHED_CYCLES_PER_WAVELET;
        fields
            .into_iter()
            .find(|(_, v)| !range.contains(v))
            .map(|(field, v)| {
                let message = format!(
                    "{v} is not between 1 and {MAX_SWITCHED_CYCLES_PER_WAVELET} cycles per wavelet"
                );
                (field, message)
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn periods_are_thousandths_of_a_cycle() {
        let s = Switched {
            west: 2.5,
            east: 1.5385,
            ..Switched::default()
        };
        assert_eq!(s.period_units(Dir::West), 2500);
        assert_eq!(s.period_units(Dir::East), 1539);
        assert_eq!(s.period_units(Dir::North), 1000);
        assert!(Switched::default().is_default() && !s.is_default());
    }

    #[test]
    fn a_rate_above_a_link_or_not_a_number_is_refused() {
        for bad in [0.5, f64::NAN, 2000.0] {
            let s = Switched {
                south: bad,
                ..Switched::default()
            };
            assert_eq!(s.problem().map(|p| p.0), Some("south"));
        }
        assert_eq!(Switched::default().problem(), None);
    }
}
