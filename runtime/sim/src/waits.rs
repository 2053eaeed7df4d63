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
//!
//! A color's record lives in the PE's receive slot for the color (`pe.rs`), which every post,
//! delivery and completion touches anyway.

use crate::report::ColorWait;

/// The waiting record of one color at one PE: four words, so that a receive slot, which
/// holds it, fits one cache line.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Wait {
    /// Start of the interval not yet accounted (meaningful while a receive is open), or
    /// [`NEVER`] while no receive was ever posted on the color (then it is not reported).
    since: u64,
    /// The cycle of the first delivery, or [`NEVER`].
    first: u64,
    before: u64,
    after: u64,
}

/// "No cycle" in a [`Wait`]'s fields.
const NEVER: u64 = u64::MAX;

impl Default for Wait {
    fn default() -> Wait {
        Wait {
            since: NEVER,
            first: NEVER,
            before: 0,
            after: 0,
        }
    }
}

impl Wait {
    /// A receive on the color was posted at cycle `t`; `open` says whether another receive on
    /// the color was already waiting.
    pub(crate) fn posted(&mut self, t: u64, open: bool) {
        // The first receive posted on a color finds none open: `since` leaves NEVER here.
        if !open {
            self.since = t;
        }
    }

    /// A wavelet of the color was written to the PE at cycle `t`.
    #[inline(always)]
    pub(crate) fn delivered(&mut self, t: u64) {
        if self.first == NEVER {
            self.first = t;
        }
    }

    /// The last open receive on the color completed at cycle `d`.
    pub(crate) fn closed(&mut self, d: u64, busy_until: u64) {
        self.account(d, busy_until);
    }

    /// A task starts at cycle `t` on a PE whose previous task ended at `busy_until`, with a
    /// receive open on the color.
    pub(crate) fn task_start(&mut self, t: u64, busy_until: u64) {
        self.account(t, busy_until);
        self.since = t;
    }

    /// The finished record for `color`, if a receive was ever posted on it.
    pub(crate) fn report(&self, color: u8) -> Option<ColorWait> {
        (self.since != NEVER).then_some(ColorWait {
            color,
            first_delivery: (self.first != NEVER).then_some(self.first),
            before_first: self.before,
            after_first: self.after,
        })
    }

    /// Add the idle cycles of `[since, u)` (the PE is busy until `busy_until`).
    fn account(&mut self, u: u64, busy_until: u64) {
        let a = self.since.max(busy_until);
        if a >= u {
            return;
        }
        let f = self.first;
        if f <= a {
            self.after += u - a;
        } else if f < u {
            self.before += f - a;
            self.after += u - f;
        } else {
            self.before += u - a;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interval_splits_at_the_first_delivery_and_skips_the_busy_part() {
        let mut w = Wait::default();
        // Posted at 10 while a task runs until 14; first delivery at 20; done at 30.
        w.posted(10, false);
        w.delivered(20);
        w.closed(30, 14);
        let r = w.report(3).expect("used");
        assert_eq!((r.before_first, r.after_first), (6, 10));
        // A task from 40 to 50 interrupts a later wait that started at 35 and ends at 60.
        w.posted(35, false);
        w.task_start(40, 30);
        w.closed(60, 50);
        let r = w.report(3).expect("used");
        assert_eq!((r.before_first, r.after_first), (6, 10 + 5 + 10));
    }

    #[test]
    fn a_color_is_reported_once_a_receive_was_posted_on_it() {
        let mut w = Wait::default();
        assert!(w.report(2).is_none());
        // Posted at 5, nothing delivered, the PE idle: every cycle so far is before the first.
        w.posted(5, false);
        w.task_start(9, 0);
        let r = w.report(2).expect("posted");
        assert_eq!(
            (r.first_delivery, r.before_first, r.after_first),
            (None, 4, 0)
        );
    }
}
