//! Which elements of a tensor each PE gets: the blocks of `bind ... split [...]` and the parts
//! of edge streams, as defined in `docs/mapping.md` §4.
//!
//! One rule serves both: a dimension split over `rows` gives PE row `r` the `r`-th of `R`
//! blocks, over `cols` column `c` the `c`-th of `C`, and `_` (or a dimension past the end of
//! the split list) stays whole; the selected elements are listed in row-major order — or,
//! with `tiles [t0, t1, ...]`, the block is cut by the same rule into `t0 × t1 × ...` tiles,
//! listed tile after tile in row-major tile order, each tile row-major. A dimension of length
//! `L` in `P` blocks gives block `i` `L / P` elements, one more for the first `L % P` blocks
//! ([`part_range`], the `part_len`/`part_start` of kernel code).
//!
//! A PE's array holds a weight's block as if it had the largest block's shape
//! ([`padded_slots`]), so that kernels index every PE's block with the same compile-time
//! strides. (A resident activation, in weight streaming, is the exception: it stays in SRAM
//! as the kernels that made it wrote it, `std.resident`'s compact layout.)

use wsel_ir::graph::SplitAxis;

/// The position of a PE (or an edge part) in a region of `rows × cols`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cell {
    pub row: u64,
    pub col: u64,
    pub rows: u64,
    pub cols: u64,
}

/// The row-major indices, into a tensor of `shape`, of the block that `cell` receives.
pub fn block_indices(shape: &[u64], split: &[SplitAxis], cell: Cell) -> Vec<usize> {
    tiled_block_indices(shape, split, &[], cell)
}

/// The indices, into a tensor of `shape`, of the block that `cell` receives, listed tile by
/// tile: `tiles[d]` tiles along dimension `d` (a missing or zero count is one tile).
pub fn tiled_block_indices(
    shape: &[u64],
    split: &[SplitAxis],
    tiles: &[u64],
    cell: Cell,
) -> Vec<usize> {
    let ranges = block_ranges(shape, split, cell);
    let strides = row_major_strides(shape);
    let mut indices =
        Vec::with_capacity(ranges.iter().map(|(lo, hi)| (hi - lo) as usize).product());
    let counts: Vec<u64> = (0..shape.len())
        .map(|d| tiles.get(d).copied().unwrap_or(1).max(1))
        .collect();
    let mut tile = vec![0u64; shape.len()];
    loop {
        let sub: Vec<(u64, u64)> = ranges
            .iter()
            .zip(&tile)
            .zip(&counts)
            .map(|(((lo, hi), &t), &n)| {
                let (a, b) = part_range(hi - lo, t, n);
                (lo + a, lo + b)
            })
            .collect();
        collect(&sub, &strides, 0, &mut indices);
        if !next_index(&mut tile, &counts) {
            return indices;
        }
    }
}

/// Steps `index` to the next tuple in row-major order below `counts`; false after the last.
fn next_index(index: &mut [u64], counts: &[u64]) -> bool {
    for d in (0..index.len()).rev() {
        index[d] += 1;
        if index[d] < counts[d] {
            return true;
        }
        index[d] = 0;
    }
    false
}

/// Where each element of `cell`'s block (in [`block_indices`] order) sits in a PE's array:
/// the block laid out row-major with the extents of the largest block (block 0 of every
/// split dimension), so that a smaller block leaves the rest of each row, and the last rows,
/// to the array's initial value. Gives the positions and the largest block's size.
pub fn padded_slots(shape: &[u64], split: &[SplitAxis], cell: Cell) -> (Vec<usize>, usize) {
    let first = Cell {
        row: 0,
        col: 0,
        ..cell
    };
    let largest: Vec<u64> = block_ranges(shape, split, first)
        .iter()
        .map(|(lo, hi)| hi - lo)
        .collect();
    let own: Vec<(u64, u64)> = block_ranges(shape, split, cell)
        .iter()
        .map(|(lo, hi)| (0, hi - lo))
        .collect();
    let mut slots = Vec::with_capacity(own.iter().map(|(_, n)| *n as usize).product());
    collect(&own, &row_major_strides(&largest), 0, &mut slots);
    (slots, largest.iter().product::<u64>() as usize)
}

/// The range of block `part` of `parts` over a dimension of `len` elements: `len / parts`
/// elements, one more for each of the first `len % parts` blocks.
pub fn part_range(len: u64, part: u64, parts: u64) -> (u64, u64) {
    let parts = parts.max(1);
    let (size, extra) = (len / parts, len % parts);
    let start = part * size + part.min(extra);
    (start, start + size + u64::from(part < extra))
}

/// The range `cell` takes in every dimension of `shape`.
fn block_ranges(shape: &[u64], split: &[SplitAxis], cell: Cell) -> Vec<(u64, u64)> {
    shape
        .iter()
        .enumerate()
        .map(
            |(d, &len)| match split.get(d).copied().unwrap_or(SplitAxis::Whole) {
                SplitAxis::Rows => part_range(len, cell.row, cell.rows),
                SplitAxis::Cols => part_range(len, cell.col, cell.cols),
                SplitAxis::Whole => (0, len),
            },
        )
        .collect()
}

/// The elements of `data` at `indices`.
pub fn gather(data: &[u32], indices: &[usize]) -> Vec<u32> {
    indices.iter().map(|&i| data[i]).collect()
}

/// Writes `values` into `data` at `indices` (the inverse of [`gather`]).
pub fn scatter(data: &mut [u32], indices: &[usize], values: &[u32]) {
    for (&i, &v) in indices.iter().zip(values) {
        data[i] = v;
    }
}

fn row_major_strides(shape: &[u64]) -> Vec<u64> {
    let mut strides = vec![1u64; shape.len()];
    for d in (0..shape.len().saturating_sub(1)).rev() {
        strides[d] = strides[d + 1] * shape[d + 1];
    }
    strides
}

/// Pushes the flat index (`base` plus each index times its stride) of every element of the
/// box `ranges`, in row-major order; the last dimension in one run.
fn collect(ranges: &[(u64, u64)], strides: &[u64], base: u64, out: &mut Vec<usize>) {
    match (ranges, strides) {
        ([(lo, hi)], [stride, ..]) => out.extend((*lo..*hi).map(|i| (base + i * stride) as usize)),
        ([(lo, hi), ranges @ ..], [stride, strides @ ..]) => {
            for i in *lo..*hi {
                collect(ranges, strides, base + i * stride, out);
            }
        }
        _ => out.push(base as usize),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use SplitAxis::{Cols, Rows, Whole};

    fn cell(row: u64, col: u64, rows: u64, cols: u64) -> Cell {
        Cell {
            row,
            col,
            rows,
            cols,
        }
    }

    #[test]
    fn weight_tile_of_a_dense_layer() {
        // W[4, 6] over a 2 × 3 region: PE (1, 2) gets rows 2..4, columns 4..6.
        let indices = block_indices(&[4, 6], &[Rows, Cols], cell(1, 2, 2, 3));
        assert_eq!(indices, vec![2 * 6 + 4, 2 * 6 + 5, 3 * 6 + 4, 3 * 6 + 5]);
    }

    #[test]
    fn a_vector_split_over_columns_is_replicated_down_the_rows() {
        let top = block_indices(&[6], &[Cols], cell(0, 1, 4, 3));
        let bottom = block_indices(&[6], &[Cols], cell(3, 1, 4, 3));
        assert_eq!(top, vec![2, 3]);
        assert_eq!(top, bottom);
    }

    #[test]
    fn whole_and_missing_axes_keep_the_dimension() {
        assert_eq!(
            block_indices(&[2, 3], &[], cell(0, 0, 2, 2)),
            vec![0, 1, 2, 3, 4, 5]
        );
        assert_eq!(
            block_indices(&[2, 3], &[Whole, Cols], cell(1, 0, 2, 3)),
            vec![0, 3]
        );
        assert_eq!(
            block_indices(&[4, 2], &[Rows], cell(1, 0, 2, 5)),
            vec![4, 5, 6, 7]
        );
    }

    #[test]
    fn blocks_of_all_cells_cover_the_tensor_once() {
        let shape = [6, 4];
        let mut seen = [0; 24];
        for row in 0..3 {
            for col in 0..2 {
                for i in block_indices(&shape, &[Rows, Cols], cell(row, col, 3, 2)) {
                    seen[i] += 1;
                }
            }
        }
        assert!(seen.iter().all(|&n| n == 1));
    }

    #[test]
    fn uneven_dimensions_give_the_first_blocks_one_more() {
        // 7 over 3: 3, 2, 2 elements starting at 0, 3, 5.
        assert_eq!(part_range(7, 0, 3), (0, 3));
        assert_eq!(part_range(7, 1, 3), (3, 5));
        assert_eq!(part_range(7, 2, 3), (5, 7));
        // Fewer elements than parts: the last parts are empty.
        assert_eq!(part_range(2, 2, 3), (2, 2));
        // W[5, 3] over a 2 x 2 region: PE (1, 1) gets rows 3..5, column 2.
        let indices = block_indices(&[5, 3], &[Rows, Cols], cell(1, 1, 2, 2));
        assert_eq!(indices, vec![3 * 3 + 2, 4 * 3 + 2]);
        let shape = [5, 3];
        let mut seen = [0; 15];
        for row in 0..2 {
            for col in 0..2 {
                for i in block_indices(&shape, &[Rows, Cols], cell(row, col, 2, 2)) {
                    seen[i] += 1;
                }
            }
        }
        assert!(seen.iter().all(|&n| n == 1));
    }

    #[test]
    fn a_smaller_block_keeps_the_largest_blocks_strides() {
        // W[5, 3] over 2 x 2: the largest block is 3 x 2. PE (1, 1)'s 2 x 1 block sits at
        // (0, 0) and (1, 0) of a 3 x 2 layout: slots 0 and 2.
        assert_eq!(
            padded_slots(&[5, 3], &[Rows, Cols], cell(1, 1, 2, 2)),
            (vec![0, 2], 6)
        );
        // The largest block fills its layout in order.
        assert_eq!(
            padded_slots(&[5, 3], &[Rows, Cols], cell(0, 0, 2, 2)),
            (vec![0, 1, 2, 3, 4, 5], 6)
        );
        // An even split is the plain layout.
        let (slots, size) = padded_slots(&[4, 6], &[Rows, Cols], cell(1, 2, 2, 3));
        assert_eq!((slots, size), (vec![0, 1, 2, 3], 4));
    }

    #[test]
    fn tiles_list_a_block_tile_by_tile() {
        // W[2, 4], row 1 of 2 (the block W[1, 0..4]) in tiles [1, 2]: columns 0..2 then 2..4.
        let indices = tiled_block_indices(&[2, 4], &[Rows, Whole], &[1, 2], cell(1, 0, 2, 1));
        assert_eq!(indices, vec![4, 5, 6, 7]);
        // W[2, 4] whole, tiles [1, 2]: the left 2 × 2 tile, then the right one.
        let indices = tiled_block_indices(&[2, 4], &[], &[1, 2], cell(0, 0, 1, 1));
        assert_eq!(indices, vec![0, 1, 4, 5, 2, 3, 6, 7]);
        // Uneven tiles: 5 columns in 2 tiles of 3 and 2.
        let indices = tiled_block_indices(&[1, 5], &[], &[1, 2], cell(0, 0, 1, 1));
        assert_eq!(indices, vec![0, 1, 2, 3, 4]);
    }

    #[test]
    fn gather_and_scatter_are_inverse() {
        let data: Vec<u32> = (0..12).collect();
        let indices = block_indices(&[3, 4], &[Whole, Cols], cell(0, 1, 1, 2));
        let part = gather(&data, &indices);
        assert_eq!(part, vec![2, 3, 6, 7, 10, 11]);
        let mut back = vec![0; 12];
        scatter(&mut back, &indices, &part);
        assert_eq!(gather(&back, &indices), part);
    }
}
