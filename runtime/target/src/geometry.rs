//! Fabric geometry: PE coordinates, link directions, router ports and port sets.

use serde::{Deserialize, Serialize};
use std::fmt;

/// A PE's position on the fabric: `x` is the column (growing eastward), `y` the row (growing
/// southward). Ordered row-major: by `y`, then `x`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Coord {
    /// Column, 0 = west edge.
    pub x: u32,
    /// Row, 0 = north edge.
    pub y: u32,
}

impl Coord {
    /// The PE at column `x`, row `y`.
    pub const fn new(x: u32, y: u32) -> Coord {
        Coord { x, y }
    }

    /// Manhattan distance in hops.
    pub fn manhattan(self, other: Coord) -> u32 {
        self.x.abs_diff(other.x) + self.y.abs_diff(other.y)
    }
}

impl Ord for Coord {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        (self.y, self.x).cmp(&(other.y, other.x))
    }
}

impl PartialOrd for Coord {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Display for Coord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "({}, {})", self.x, self.y)
    }
}

/// A compass direction: the direction of a link leaving a PE.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dir {
    /// Toward row `y - 1`.
    North,
    /// Toward row `y + 1`.
    South,
    /// Toward column `x + 1`.
    East,
    /// Toward column `x - 1`.
    West,
}

impl Dir {
    /// All four directions in their fixed order (N, S, E, W).
    pub const ALL: [Dir; 4] = [Dir::North, Dir::South, Dir::East, Dir::West];

    /// The direction pointing back.
    pub const fn opposite(self) -> Dir {
        match self {
            Dir::North => Dir::South,
            Dir::South => Dir::North,
            Dir::East => Dir::West,
            Dir::West => Dir::East,
        }
    }

    /// 0..4 in the order of [`Dir::ALL`]; equal to the matching [`Port::index`].
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The router port facing this direction.
    pub const fn port(self) -> Port {
        match self {
            Dir::North => Port::N,
            Dir::South => Port::S,
            Dir::East => Port::E,
            Dir::West => Port::W,
        }
    }

    /// The neighbour of `c` in this direction on a `width` × `height` fabric, if any.
    pub fn step(self, c: Coord, width: u32, height: u32) -> Option<Coord> {
        match self {
            Dir::North => c.y.checked_sub(1).map(|y| Coord::new(c.x, y)),
            Dir::South => (c.y + 1 < height).then(|| Coord::new(c.x, c.y + 1)),
            Dir::East => (c.x + 1 < width).then(|| Coord::new(c.x + 1, c.y)),
            Dir::West => c.x.checked_sub(1).map(|x| Coord::new(x, c.y)),
        }
    }
}

impl fmt::Display for Dir {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Dir::North => "north",
            Dir::South => "south",
            Dir::East => "east",
            Dir::West => "west",
        })
    }
}

/// One of a router's five ports: the four links and the ramp to its own PE.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Debug, Serialize, Deserialize)]
pub enum Port {
    /// The north link.
    N,
    /// The south link.
    S,
    /// The east link.
    E,
    /// The west link.
    W,
    /// The ramp between the router and its own PE.
    Ramp,
}

impl Port {
    /// All five ports in their fixed order (N, S, E, W, Ramp).
    pub const ALL: [Port; 5] = [Port::N, Port::S, Port::E, Port::W, Port::Ramp];

    /// 0..5 in the order of [`Port::ALL`].
    pub const fn index(self) -> usize {
        self as usize
    }

    /// The link direction of this port, or `None` for the ramp.
    pub const fn dir(self) -> Option<Dir> {
        match self {
            Port::N => Some(Dir::North),
            Port::S => Some(Dir::South),
            Port::E => Some(Dir::East),
            Port::W => Some(Dir::West),
            Port::Ramp => None,
        }
    }

    /// The port at `index` (0..5), if any.
    pub const fn from_index(index: usize) -> Option<Port> {
        match index {
            0 => Some(Port::N),
            1 => Some(Port::S),
            2 => Some(Port::E),
            3 => Some(Port::W),
            4 => Some(Port::Ramp),
            _ => None,
        }
    }
}

impl From<Dir> for Port {
    fn from(d: Dir) -> Port {
        d.port()
    }
}

impl fmt::Display for Port {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Port::N => "N",
            Port::S => "S",
            Port::E => "E",
            Port::W => "W",
            Port::Ramp => "ramp",
        })
    }
}

/// A set of router ports, as a 5-bit mask in the order of [`Port::ALL`].
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default, Debug, Serialize, Deserialize)]
pub struct PortSet(pub u8);

impl PortSet {
    /// No port.
    pub const EMPTY: PortSet = PortSet(0);

    /// The set holding exactly `p`.
    pub const fn only(p: Port) -> PortSet {
        PortSet(1 << p as u8)
    }

    /// The set holding the given ports.
    pub fn of(ports: &[Port]) -> PortSet {
        ports.iter().fold(PortSet::EMPTY, |s, &p| s.with(p))
    }

    /// This set plus `p`.
    pub const fn with(self, p: Port) -> PortSet {
        PortSet(self.0 | (1 << p as u8))
    }

    /// Whether `p` is in the set.
    pub const fn contains(self, p: Port) -> bool {
        self.0 & (1 << p as u8) != 0
    }

    /// Whether the set is empty.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The ports in the set, in their fixed order.
    pub fn iter(self) -> impl Iterator<Item = Port> {
        Port::ALL.into_iter().filter(move |&p| self.contains(p))
    }
}

impl fmt::Display for PortSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("{")?;
        for (i, p) in self.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{p}")?;
        }
        f.write_str("}")
    }
}

/// An axis-aligned rectangle of PEs: columns `x .. x + width`, rows `y .. y + height`.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rect {
    /// West-most column.
    pub x: u32,
    /// North-most row.
    pub y: u32,
    /// Width in PEs.
    pub width: u32,
    /// Height in PEs.
    pub height: u32,
}

impl Rect {
    /// The rectangle with north-west corner `(x, y)` and the given size.
    pub const fn new(x: u32, y: u32, width: u32, height: u32) -> Rect {
        Rect {
            x,
            y,
            width,
            height,
        }
    }

    /// Whether `c` lies inside.
    pub fn contains(&self, c: Coord) -> bool {
        c.x >= self.x && c.y >= self.y && c.x - self.x < self.width && c.y - self.y < self.height
    }

    /// Whether `c` lies on this rectangle's edge facing `side`.
    pub fn on_edge(&self, c: Coord, side: Dir) -> bool {
        self.contains(c)
            && match side {
                Dir::North => c.y == self.y,
                Dir::South => c.y + 1 == self.y + self.height,
                Dir::West => c.x == self.x,
                Dir::East => c.x + 1 == self.x + self.width,
            }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_stay_on_the_fabric() {
        let c = Coord::new(0, 0);
        assert_eq!(Dir::North.step(c, 4, 4), None);
        assert_eq!(Dir::West.step(c, 4, 4), None);
        assert_eq!(Dir::East.step(c, 4, 4), Some(Coord::new(1, 0)));
        assert_eq!(Dir::South.step(Coord::new(3, 3), 4, 4), None);
        for d in Dir::ALL {
            assert_eq!(d.opposite().opposite(), d);
            assert_eq!(d.port().dir(), Some(d));
            assert_eq!(d.index(), d.port().index());
        }
    }

    #[test]
    fn port_sets() {
        let s = PortSet::of(&[Port::E, Port::Ramp]);
        assert!(s.contains(Port::E) && s.contains(Port::Ramp) && !s.contains(Port::W));
        assert_eq!(s.to_string(), "{E, ramp}");
        assert_eq!(s.iter().count(), 2);
    }

    #[test]
    fn coords_order_row_major() {
        assert!(Coord::new(5, 0) < Coord::new(0, 1));
        assert!(Coord::new(1, 2) < Coord::new(2, 2));
    }
}
