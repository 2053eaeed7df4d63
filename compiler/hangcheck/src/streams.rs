//! Logical sides of a placed layer's ports, for the stream checks. Which port pairs with
//! which is the mapper's rule (`wsel_map::pairing`, `docs/mapping.md` §3); a multicast port
//! is fed only through the region's edge, by a bound tensor; on the region's edge on a port's
//! side, a port has a stream only when the layer binds a tensor to it.

use wsel_target::Dir;

use crate::classes::{EAST, NORTH, SOUTH, WEST};

/// The index into `Group::neighbours` of a logical side.
pub(crate) fn side_index(side: Dir) -> usize {
    match side {
        Dir::North => NORTH,
        Dir::South => SOUTH,
        Dir::East => EAST,
        Dir::West => WEST,
    }
}

pub(crate) fn side_name(side: Dir) -> &'static str {
    match side {
        Dir::North => "north",
        Dir::South => "south",
        Dir::East => "east",
        Dir::West => "west",
    }
}
