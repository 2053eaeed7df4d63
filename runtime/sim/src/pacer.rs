//! Rate limiting for edge streams (and switched routes, `switches.rs`): a stream that may move one wavelet every `num / den`
//! cycles (never faster than one per cycle), without bursts after idle periods.

/// Paces one edge stream. Times are kept in units of `1 / den` cycle so that fractional rates
/// stay exact.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Pacer {
    num: u64,
    den: u64,
    next: u128,
}

impl Pacer {
    /// A stream in a pool of `pool_bytes_per_cycle` shared by `streams` streams, starting at
    /// cycle `start`: each stream gets `pool / streams` bytes per cycle, at most one wavelet
    /// (4 bytes) per cycle.
    pub(crate) fn new(pool_bytes_per_cycle: u32, streams: usize, start: u64) -> Pacer {
        let den = u64::from(pool_bytes_per_cycle.max(1));
        let num = (4 * streams as u64).max(den);
        Pacer {
            num,
            den,
            next: u128::from(start) * u128::from(den),
        }
    }

    /// A stream that may move one wavelet every `num / den` cycles (`num >= den`) from cycle 0.
    pub(crate) fn periodic(num: u64, den: u64) -> Pacer {
        debug_assert!(num >= den && den > 0);
        Pacer { num, den, next: 0 }
    }

    /// The first cycle at or after which the next wavelet may move.
    pub(crate) fn ready_at(&self) -> u64 {
        // The release almost always fits 64 bits: divide there, one instruction instead of a
        // call to the 128-bit division (a router pass asks this of every paced stream).
        match u64::try_from(self.next) {
            Ok(next) => next.div_ceil(self.den),
            Err(_) => {
                let den = u128::from(self.den);
                self.next.div_ceil(den).min(u128::from(u64::MAX)) as u64
            }
        }
    }

    /// Whether a wavelet may move at cycle `t`.
    pub(crate) fn allows(&self, t: u64) -> bool {
        u128::from(t) * u128::from(self.den) >= self.next
    }

    /// The release of the next wavelet, in units of `1 / den` cycle, and the period `num /
    /// den` (for the closed form of a stream that moves every wavelet at its release, see
    /// `express.rs`).
    pub(crate) fn parts(&self) -> (u128, u64, u64) {
        (self.next, self.num, self.den)
    }

    /// Set the release of the next wavelet (in units of `1 / den` cycle), as `moved` at each
    /// release time would have.
    pub(crate) fn set_next(&mut self, next: u128) {
        self.next = next;
    }

    /// Record a wavelet moved at cycle `t`. A wavelet that moves within a cycle of its
    /// (fractional) release time was only rounded up to a whole cycle: the next release keeps
    /// the exact period from the release time. One that moved later waited (for the fabric,
    /// or nothing was sent): the next period starts at `t`, so there is no burst after a pause.
    pub(crate) fn moved(&mut self, t: u64) {
        let now = u128::from(t) * u128::from(self.den);
        let base = if now < self.next + u128::from(self.den) {
            self.next
        } else {
            now
        };
        self.next = base + u128::from(self.num);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_quarter_rate_stream_moves_every_fourth_cycle() {
        // 4 bytes/cycle shared by 4 streams: one wavelet every 4 cycles each.
        let mut p = Pacer::new(4, 4, 10);
        let mut moves = vec![];
        for t in 0..30 {
            if p.allows(t) {
                p.moved(t);
                moves.push(t);
            }
        }
        assert_eq!(moves, vec![10, 14, 18, 22, 26]);
    }

    #[test]
    fn a_fractional_period_is_kept_exactly() {
        // 3 bytes/cycle for one stream: a wavelet every 4/3 cycles, released at 0, 4/3, 8/3,
        // 4, 16/3, ... and moved at the next whole cycle: 0, 2, 3, 4, 6, 7, 8 — three every
        // four cycles, not one every two.
        let mut p = Pacer::new(3, 1, 0);
        let mut moves = vec![];
        for t in 0..9 {
            if p.allows(t) {
                p.moved(t);
                moves.push(t);
            }
        }
        assert_eq!(moves, vec![0, 2, 3, 4, 6, 7, 8]);
    }

    #[test]
    fn a_stream_that_waited_does_not_burst() {
        // One wavelet every 2 cycles; the third waits until cycle 20 (the fabric was full):
        // the next may move at 22, not at once.
        let mut p = Pacer::new(2, 1, 0);
        p.moved(0);
        p.moved(2);
        assert!(p.allows(4));
        p.moved(20);
        assert!(!p.allows(21));
        assert!(p.allows(22));
    }

    #[test]
    fn a_fast_pool_is_capped_at_one_per_cycle() {
        let mut p = Pacer::new(176, 2, 0);
        assert!(p.allows(0));
        p.moved(0);
        assert!(!p.allows(0));
        assert_eq!(p.ready_at(), 1);
    }

    #[test]
    fn ready_at_rounds_the_release_up_on_both_sides_of_64_bits() {
        // Releases in thirds of a cycle: 7/3 is ready at 3, 9/3 at 3; past 2^64 thirds the
        // cycle is still the release rounded up, and past u64::MAX cycles it saturates.
        let mut p = Pacer::periodic(4, 3);
        for (next, ready) in [
            (7, 3),
            (9, 3),
            (u128::from(u64::MAX), u64::MAX / 3),
            (u128::from(u64::MAX) + 2, u64::MAX / 3 + 1),
            (u128::MAX, u64::MAX),
        ] {
            p.set_next(next);
            assert_eq!(p.ready_at(), ready, "release {next}");
        }
    }
}
