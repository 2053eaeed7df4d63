//! How the fabric is split into partitions, one per worker thread.
//!
//! The routers (coordinates with a PE program or a route, in row-major order) are cut into
//! *blocks* of whole rows of about equal estimated work — a router weighs one plus its input
//! queues, the routes it carries — and the blocks are dealt to the partitions in turn, several
//! per partition. So each partition gets a share of every part of the fabric: activity
//! concentrated in one corner, or moving from one layer's region to the next over the run,
//! is spread over all threads instead of falling on the one that holds those rows. Idle parts
//! of the fabric (no routes) weigh nothing.
//!
//! A partition's routers are numbered locally in global order; its queues and output channels
//! follow its routers. Which partition holds what changes no result (`parallel.rs`).

use crate::layout::Numbering;

/// Blocks per partition when there are several (finer spreads concentrated work better,
/// coarser cuts fewer links between partitions).
const BLOCKS_PER_PART: usize = 8;

/// Where each router goes.
pub(crate) struct Split {
    /// Per global router: its partition and local index, and its partition's first local
    /// queue and output channel.
    pub part: Vec<u32>,
    pub local: Vec<u32>,
    pub q_start: Vec<u32>,
    pub o_start: Vec<u32>,
    /// Per partition: its global routers, ascending (local order).
    pub members: Vec<Vec<u32>>,
}

impl Split {
    /// The partition and local index of global queue `q` of global router `g`.
    pub(crate) fn queue(&self, n: &Numbering<'_>, g: u32, q: u32) -> (usize, u32) {
        let g = g as usize;
        (self.part[g] as usize, self.q_start[g] + q - n.q_base[g])
    }

    /// The local index of global output channel `o` of global router `g` in its partition.
    pub(crate) fn channel(&self, n: &Numbering<'_>, g: u32, o: u32) -> u32 {
        self.o_start[g as usize] + o - n.o_base[g as usize]
    }
}

/// Split `n`'s routers into (at most) `parts` partitions.
pub(crate) fn split(n: &Numbering<'_>, parts: usize) -> Split {
    let routers = n.keys.len();
    let parts = parts.clamp(1, usize::from(u16::MAX)).min(routers.max(1));
    let blocks = if parts == 1 {
        1
    } else {
        parts * BLOCKS_PER_PART
    };
    let weight = |g: usize| 1 + u64::from(n.q_base[g + 1] - n.q_base[g]);
    let total: u64 = (0..routers).map(weight).sum();
    let per = total.div_ceil(blocks as u64).max(1);
    let width = n.target.width;
    let mut members: Vec<Vec<u32>> = vec![Vec::new(); parts];
    let (mut block, mut filled) = (0usize, 0u64);
    for g in 0..routers {
        // A block ends at a row's end once it holds its share.
        let row_starts = g == 0 || n.keys[g] / width != n.keys[g - 1] / width;
        if row_starts && filled >= per {
            block += 1;
            filled = 0;
        }
        members[block % parts].push(g as u32);
        filled += weight(g);
    }
    // Few rows for many threads: some partitions got no block.
    members.retain(|m| !m.is_empty());
    if members.is_empty() {
        members.push(Vec::new());
    }
    let mut split = Split {
        part: vec![0; routers],
        local: vec![0; routers],
        q_start: vec![0; routers],
        o_start: vec![0; routers],
        members,
    };
    for (p, members) in split.members.iter().enumerate() {
        let (mut q, mut o) = (0, 0);
        for (local, &g) in members.iter().enumerate() {
            let g = g as usize;
            split.part[g] = p as u32;
            split.local[g] = local as u32;
            split.q_start[g] = q;
            split.o_start[g] = o;
            q += n.q_base[g + 1] - n.q_base[g];
            o += n.o_base[g + 1] - n.o_base[g];
        }
    }
    split
}
