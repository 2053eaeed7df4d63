//! Receive waits per PE and color: idle cycles in which a PE has a posted, not yet complete
//! receive on a color, split at the first delivery of that color.
//!
//! Nothing is counted per cycle. A color's waiting is accounted in intervals: it opens when a
//! receive is posted on a color with none open, and is accounted (and restarted) whenever a
//! task starts and when the color's last open receive completes. Between two accountings at
//! most one task (the PE's last, `[s, busy_until)` with `s` at or before the interval's start)
//! overlaps the interval, so the idle part of `[since, u)` is `[max(since, busy_until), u)`.
//! A receive completing at cycle `d` (its last wavelet written at `d`) waits up to `d`,
//! exclusive. The cycle of the first delivery counts as after it.

use crate::report::ColorWait;

/// The waiting record of one color at one PE.
#[derive(Clone, Copy, Debug)]
struct Rec {
    color: u8,
    /// Start of the interval not yet accounted (meaningful while a receive is open).
    since: u64,
    first: Option<u64>,
    before: u64,
    after: u64,
}

/// The waiting records of one PE, by color.
#[derive(Clone, Debug, Default)]
pub(crate) struct PeWaits {
    recs: Vec<Rec>,
}

impl PeWaits {
    /// Fetch the records (up to four lines) into the cache ahead of a task start, which walks
    /// them all (a hint: see `prefetch.rs`).
    #[inline(always)]
    pub(crate) fn prefetch(&self) {
        crate::prefetch::fetch_lines::<_, 4>(&self.recs);
    }

    fn rec(&mut self, color: u8) -> &mut Rec {
        let i = match self.recs.binary_search_by_key(&color, |r| r.color) {
            Ok(i) => i,
            Err(i) => {
                self.recs.insert(
                    i,
                    Rec {
                        color,
                        since: 0,
                        first: None,
                        before: 0,
                        after: 0,
                    },
                );
                i
            }
        };
        &mut self.recs[i]
    }

    /// A receive on `color` was posted at cycle `t`; `open` says whether another receive on
    /// the color was already waiting.
    pub(crate) fn posted(&mut self, color: u8, t: u64, open: bool) {
        let r = self.rec(color);
        if !open {
            r.since = t;
        }
    }

    /// The first wavelet of `color` was written to the PE at cycle `t`.
    pub(crate) fn first_delivery(&mut self, color: u8, t: u64) {
        let r = self.rec(color);
        if r.first.is_none() {
            r.first = Some(t);
        }
    }

    /// The last open receive on `color` completed at cycle `d`.
    pub(crate) fn closed(&mut self, color: u8, d: u64, busy_until: u64) {
        account(self.rec(color), d, busy_until);
    }

    /// A task starts at cycle `t` on a PE whose previous task ended at `busy_until`; `open`
    /// has a bit per color with an open receive.
    pub(crate) fn task_start(&mut self, t: u64, busy_until: u64, open: u64) {
        for r in &mut self.recs {
            if open & (1u64 << r.color) != 0 {
                account(r, t, busy_until);
                r.since = t;
            }
        }
    }

    /// The finished records, by color.
    pub(crate) fn report(&self) -> Vec<ColorWait> {
        self.recs
            .iter()
            .map(|r| ColorWait {
                color: r.color,
                first_delivery: r.first,
                before_first: r.before,
                after_first: r.after,
            })
            .collect()
    }
}

/// Add the idle cycles of `[r.since, u)` (the PE is busy until `busy_until`).
fn account(r: &mut Rec, u: u64, busy_until: u64) {
    let a = r.since.max(busy_until);
    if a >= u {
        return;
    }
    match r.first {
        Some(f) if f <= a => r.after += u - a,
        Some(f) if f < u => {
            r.before += f - a;
            r.after += u - f;
        }
        _ => r.before += u - a,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interval_splits_at_the_first_delivery_and_skips_the_busy_part() {
        let mut w = PeWaits::default();
        // Posted at 10 while a task runs until 14; first delivery at 20; done at 30.
        w.posted(3, 10, false);
        w.first_delivery(3, 20);
        w.closed(3, 30, 14);
        let r = w.report();
        assert_eq!(r.len(), 1);
        assert_eq!((r[0].before_first, r[0].after_first), (6, 10));
        // A task from 40 to 50 interrupts a later wait that started at 35 and ends at 60.
        w.posted(3, 35, false);
        w.task_start(40, 30, 1 << 3);
        w.closed(3, 60, 50);
        let r = w.report();
        assert_eq!((r[0].before_first, r[0].after_first), (6, 10 + 5 + 10));
    }
}
