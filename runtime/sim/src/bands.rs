//! How the fabric is split into partitions, one per worker thread: each partition is a
//! contiguous range of routers (in row-major order) made of whole rows.
//!
//! The split balances the routers of each band: only coordinates with a PE program or a
//! route are routers, so idle parts of the fabric weigh nothing.

use crate::layout::Numbering;

/// The first global router of each of (at most) `parts` partitions, then the number of
/// routers: partition `p` holds routers `bases[p] .. bases[p + 1]`.
pub(crate) fn split(n: &Numbering<'_>, parts: usize) -> Vec<u32> {
    let width = n.target.width;
    let n_nodes = n.keys.len();
    let parts = parts.clamp(1, usize::from(u16::MAX));
    let mut bases = vec![0u32];
    let per = n_nodes.div_ceil(parts).max(1);
    let mut g = 0usize;
    while bases.len() < parts {
        // Advance by `per` routers, then to the end of that row so bands are whole rows.
        let mut end = (g + per).min(n_nodes);
        if end < n_nodes && end > 0 {
            let row = n.keys[end - 1] / width;
            while end < n_nodes && n.keys[end] / width == row {
                end += 1;
            }
        }
        bases.push(end as u32);
        g = end;
    }
    bases.push(n_nodes as u32);
    bases
}
