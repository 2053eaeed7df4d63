//! Who does what: the batch's samples over the systems, and the systems over the processes.

use std::ops::Range;

/// The samples of each of `systems` systems, in order: consecutive blocks of the batch, the
/// first `batch mod systems` systems taking one sample more than the others
/// (`ceil(batch / systems)`, then `floor`). Every system gets at least one sample when
/// `systems <= batch`.
pub fn shares(batch: u64, systems: u32) -> Vec<Range<u64>> {
    let n = u64::from(systems.max(1));
    let (base, extra) = (batch / n, batch % n);
    let mut start = 0;
    (0..n)
        .map(|s| {
            let len = base + u64::from(s < extra);
            let range = start..start + len;
            start += len;
            range
        })
        .collect()
}

/// The sizes of `shares` as a report says them: `8`, or `6 or 5` when they differ.
pub fn share_sizes(shares: &[Range<u64>]) -> String {
    let len = |r: &Range<u64>| r.end - r.start;
    let most = shares.iter().map(len).max().unwrap_or(0);
    let least = shares.iter().map(len).min().unwrap_or(0);
    if most == least {
        most.to_string()
    } else {
        format!("{most} or {least}")
    }
}

/// The systems process `rank` of `ranks` simulates: consecutive blocks, the first
/// `systems mod ranks` processes taking one more (a process may have none).
pub fn systems_of_rank(systems: u32, ranks: usize, rank: usize) -> Range<u32> {
    let blocks = shares(u64::from(systems), ranks.max(1) as u32);
    blocks
        .get(rank)
        .map_or(0..0, |r| r.start as u32..r.end as u32)
}

/// The process that simulates the one-system run the cluster's scaling is measured against:
/// the last.
pub fn baseline_rank(ranks: usize) -> usize {
    ranks.max(1) - 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_splits_into_blocks_the_first_ones_longer() {
        assert_eq!(shares(10, 4), vec![0..3, 3..6, 6..8, 8..10]);
        assert_eq!(shares(8, 4), vec![0..2, 2..4, 4..6, 6..8]);
        assert_eq!(shares(5, 1), vec![0..5]);
        let s = shares(1000, 7);
        assert_eq!(s.iter().map(|r| r.end - r.start).sum::<u64>(), 1000);
        assert_eq!(s.last().map(|r| r.end), Some(1000));
        assert_eq!(share_sizes(&shares(10, 4)), "3 or 2");
        assert_eq!(share_sizes(&shares(8, 4)), "2");
    }

    #[test]
    fn systems_spread_over_ranks_and_every_system_has_one_rank() {
        assert_eq!(systems_of_rank(4, 2, 0), 0..2);
        assert_eq!(systems_of_rank(4, 2, 1), 2..4);
        assert_eq!(systems_of_rank(3, 2, 0), 0..2);
        assert_eq!(systems_of_rank(2, 3, 2), 2..2);
        for (systems, ranks) in [(8, 3), (1, 4), (5, 5)] {
            let all: Vec<u32> = (0..ranks)
                .flat_map(|r| systems_of_rank(systems, ranks, r))
                .collect();
            assert_eq!(all, (0..systems).collect::<Vec<_>>());
        }
    }
}
