//! The routes of a bus (`docs/mapping.md` §3): one color on which any PE of a line can send
//! to every other PE of it. Each router of the line receives from, and forwards to, its
//! neighbours on the line and its own PE; a router never sends a wavelet back the way it came
//! (`wsel-sim`'s routing rule), so what a PE sends spreads both ways along the line and every
//! other PE gets it once. The lines:
//!
//! - a **row**: logical west and east neighbours inside the region;
//! - a **column**: north and south neighbours;
//! - the **region**: a comb, every row's west–east line joined by column 0's north–south one
//!   (a tree, so each wavelet reaches each PE exactly once).
//!
//! A line of one PE has no route: a PE does not receive what it sends itself.

use wsel_ir::graph::{Bus, Side};

/// The logical sides the bus's route at logical `(row, col)` of a `rows × cols` region links,
/// besides the ramp; empty when the PE is alone on its line.
pub(crate) fn bus_sides(bus: Bus, rows: u32, cols: u32, row: u32, col: u32) -> Vec<Side> {
    let mut sides = Vec::new();
    let horizontal = matches!(bus, Bus::Row | Bus::Region);
    let vertical = bus == Bus::Col || (bus == Bus::Region && col == 0);
    if horizontal && col > 0 {
        sides.push(Side::West);
    }
    if horizontal && col + 1 < cols {
        sides.push(Side::East);
    }
    if vertical && row > 0 {
        sides.push(Side::North);
    }
    if vertical && row + 1 < rows {
        sides.push(Side::South);
    }
    sides
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_row_links_west_and_east_and_the_region_joins_rows_at_column_0() {
        assert_eq!(bus_sides(Bus::Row, 3, 4, 1, 0), vec![Side::East]);
        assert_eq!(
            bus_sides(Bus::Row, 3, 4, 1, 2),
            vec![Side::West, Side::East]
        );
        assert_eq!(bus_sides(Bus::Col, 3, 4, 2, 2), vec![Side::North]);
        assert_eq!(
            bus_sides(Bus::Region, 3, 4, 1, 0),
            vec![Side::East, Side::North, Side::South]
        );
        assert_eq!(bus_sides(Bus::Region, 3, 4, 1, 3), vec![Side::West]);
        // Alone on its line: no route.
        assert!(bus_sides(Bus::Row, 3, 1, 0, 0).is_empty());
        assert!(bus_sides(Bus::Region, 1, 1, 0, 0).is_empty());
        // The comb reaches every PE: R·C − 1 links, a tree.
        let links: usize = (0..3)
            .flat_map(|r| (0..4).map(move |c| bus_sides(Bus::Region, 3, 4, r, c).len()))
            .sum();
        assert_eq!(links, 2 * (3 * 4 - 1));
    }
}
