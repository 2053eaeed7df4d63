//! The PEs a class's routes may never take — dead PEs and the regions of the class's layers —
//! as one grid per class, built the first time the class is routed. The path finder asks this
//! for every PE its searches reach; a search that fails floods the whole fabric, so the test
//! must cost one lookup rather than a scan of the class's regions.

use std::cell::OnceCell;

use wsel_target::{Coord, Rect};

use crate::place::DeadIndex;

pub(super) struct Blocked<'p> {
    width: u32,
    height: u32,
    dead: &'p DeadIndex,
    regions: &'p [Rect],
    class_layers: &'p [Vec<usize>],
    /// Per class, row-major: whether the PE is dead or in one of the class's regions.
    grids: Vec<OnceCell<Vec<bool>>>,
}

impl<'p> Blocked<'p> {
    pub(super) fn new(
        (width, height): (u32, u32),
        dead: &'p DeadIndex,
        regions: &'p [Rect],
        class_layers: &'p [Vec<usize>],
    ) -> Self {
        Blocked {
            width,
            height,
            dead,
            regions,
            class_layers,
            grids: (0..class_layers.len()).map(|_| OnceCell::new()).collect(),
        }
    }

    /// Whether `c` is dead or inside a region of `class` (`false` off the fabric).
    pub(super) fn contains(&self, class: usize, c: Coord) -> bool {
        if c.x >= self.width || c.y >= self.height {
            return false;
        }
        let grid = self.grids[class].get_or_init(|| self.grid(class));
        grid[(c.y * self.width + c.x) as usize]
    }

    fn grid(&self, class: usize) -> Vec<bool> {
        let w = self.width as usize;
        let mut grid = vec![false; w * self.height as usize];
        for c in self.dead.pes() {
            if c.x < self.width && c.y < self.height {
                grid[c.y as usize * w + c.x as usize] = true;
            }
        }
        for &l in &self.class_layers[class] {
            let r = self.regions[l];
            let x1 = (r.x + r.width).min(self.width) as usize;
            for y in r.y..(r.y + r.height).min(self.height) {
                let row = y as usize * w;
                grid[row + (r.x as usize).min(x1)..row + x1].fill(true);
            }
        }
        grid
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wsel_target::Target;

    /// Against the definition, PE by PE, on `dev` with a few dead PEs and two classes.
    #[test]
    fn dead_pes_and_the_class_regions() {
        let mut t = Target::dev();
        for c in [Coord::new(0, 0), Coord::new(5, 9), Coord::new(15, 15)] {
            t.defects.add_dead_pe(c);
        }
        let dead = DeadIndex::new(&t);
        let regions = [Rect::new(2, 3, 4, 2), Rect::new(10, 0, 6, 16)];
        let class_layers = [vec![0], vec![0, 1]];
        let blocked = Blocked::new((t.width, t.height), &dead, &regions, &class_layers);
        for (class, layers) in class_layers.iter().enumerate() {
            for y in 0..t.height {
                for x in 0..t.width {
                    let c = Coord::new(x, y);
                    let expected =
                        dead.pe_dead(c) || layers.iter().any(|&l| regions[l].contains(c));
                    assert_eq!(blocked.contains(class, c), expected, "{class} {c}");
                }
            }
        }
        assert!(blocked.contains(1, Coord::new(12, 4)));
        assert!(!blocked.contains(0, Coord::new(12, 4)));
        assert!(!blocked.contains(0, Coord::new(t.width, 0)));
    }
}
