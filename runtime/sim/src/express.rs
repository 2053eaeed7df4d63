//! Streams along chains of routers as a few events, in closed form, exact for the model
//! ("express" streams).
//!
//! # The closed form
//!
//! A *chain* is a stream of one color from a *feed* — a PE's send, or an edge source (host or
//! weight store) — through routers `r_0 … r_h`: at each, the color's queue forwards to at most
//! one link port (to the next router) and, at a *receiver*, to the ramp. A receiver either
//! takes every wavelet that reaches it (multicast) or, with a ramp filter, keeps its part and
//! passes the rest on (see `RampFilter`). While nothing else wants any port the chain uses,
//! every queue on it holds its credits (at least twice its link's latency: `Q ≥ 2L`, and a
//! queue behind a boundary always has `max(Q, 2·(L + B))`), and every receiver has a receive
//! posted for each wavelet when it arrives, the hop-by-hop simulation is known in closed
//! form: wavelet `i` enters `r_0` at `at(i)` (`t0 + i` for a send; for a paced edge source
//! the cycles its pacer releases them, see `Schedule`), leaves router `k` at `at(i) + D_k`
//! and is delivered there in that cycle if router `k` keeps it, where `D_k` is the sum of
//! the latencies of the chain's first `k` links (`L` each, `L + B` for one crossing a
//! boundary of the target): [`Hop::delay`]. A wavelet takes a slot of the queue behind link
//! `k` when it leaves router `k − 1` and frees it `ℓ_k` cycles later; the credit is back
//! `ℓ_k` cycles after that, so at most `2·ℓ_k` slots are ever taken at one wavelet a cycle,
//! and a queue of that depth never throttles the stream.
//!
//! With filters the chain is periodic: each period of `P` wavelets (the first filter's
//! period) reaches router `k` from offset `c_k` on, and a filtering receiver keeps offsets
//! `[c_k, c_k + keep)` and passes the rest, so the next router is reached from
//! `c_k + keep` on. Every filter on the chain must have period `P − c_k` and be in phase with
//! the stream; otherwise the stream stays hop by hop.
//!
//! # What it costs
//!
//! A stream reserves the ports it uses and costs events, not hops: the feed's end, each
//! receive's completion (at the receiver's router step of the cycle its last wavelet lands),
//! and a release after the last wavelet has moved. Receive areas are written lazily: before
//! any task of the receiver runs, and when a receive completes. Receives may be posted while
//! the stream runs: a receiver whose posted receives run out is checked when its first
//! wavelet without a receive arrives (after that cycle's PE wakes), and only then does the
//! stream fall back.
//!
//! # Falling back
//!
//! If anything is about to compete — a wavelet arriving in a queue that wants a reserved
//! port, another send at a PE whose sends could use one, a receiver without a posted receive
//! when its wavelet arrives — the stream is *materialized*: the exact state it would have at
//! that cycle (wavelets present and in flight in every queue, credits on their way back,
//! counters, round-robin positions, filter positions, the feed's position and pacer) is
//! rebuilt from the closed form, and simulation continues wavelet by wavelet. A stream may
//! start in the middle of its feed: the wavelets already on the chain are *adopted* if every
//! one of them is exactly where the closed form puts it.
//!
//! `SimOptions::express_streams = false` turns all of this off; `tests/express.rs` and
//! `tests/chains.rs` check that both ways agree.

use crate::events::Calendar;
use crate::pe::SendState;

/// One router of a chain.
#[derive(Clone, Debug)]
pub(crate) struct Hop {
    pub node: u32,
    /// The stream's queue at this router.
    pub queue: u32,
    /// Cycles from a wavelet's entry into the chain's first router to its arrival here: the
    /// sum of the latencies of the links before it (`D_k`).
    pub delay: u64,
    /// The link port it forwards through, or `NONE8` (the chain's end).
    pub link: u8,
    /// That port's output channel, or NONE.
    pub out_channel: u32,
    /// Whether the router delivers to its PE (a receiver: see `Express::receivers`).
    pub ramp: bool,
    /// Period offsets of the wavelets that reach this router, of those it delivers to its PE
    /// and of those it passes on.
    pub reach: Window,
    pub keep: Window,
    pub pass: Window,
    /// At the start: the router's filter position (filtered routers), the stream indices that
    /// had left it (`0 .. out0`; the credits of those still on their way are among
    /// `credits0`), of those the wavelets that reached it, that it kept and that it passed
    /// on, and the cycles the credits of its queue's free slots were due back (those still
    /// on their way).
    pub filter0: Option<u32>,
    /// Its receiver's index in `Express::receivers`, or NONE.
    pub receiver: u32,
    pub out0: u64,
    pub left0: u64,
    pub kept0: u64,
    pub passed0: u64,
    pub credits0: Vec<u64>,
}

/// A PE taking wavelets from a chain.
#[derive(Clone, Debug)]
pub(crate) struct Receiver {
    /// Its router's index in `Express::hops`.
    pub hop: u32,
    pub pe: u32,
    /// Its receive slot (partition index).
    pub slot: u32,
    /// The period offsets it keeps.
    pub window: Window,
    /// Of the wavelets it keeps (its sequence): those written to it, those its posted
    /// receives take (completions scheduled), all of them.
    pub flushed: u64,
    pub covered: u64,
    pub total: u64,
    /// The cycle of its pending receive completion (a `RECV_DONE` event), or `u64::MAX`.
    pub done_at: u64,
}

/// Where a stream's wavelets come from.
#[derive(Debug)]
pub(crate) enum Feed {
    /// A PE's sends on one color, back to back (taken out of its slot for the stream's life):
    /// `send` holds the data of all of them, its task and issue order are the current one's,
    /// which starts at stream index `part`.
    Send {
        pe: u32,
        /// The send slot (partition index).
        slot: u32,
        send: SendState,
        part: u64,
    },
    /// An edge source (partition index), which skips injecting while the stream lives.
    Edge { source: u32 },
}

/// A stream simulated in closed form. Its wavelets are numbered from the oldest it holds:
/// stream index `i` is the feed's wavelet `first + i`.
#[derive(Debug)]
pub(crate) struct Express {
    pub alive: bool,
    /// Distinguishes the streams that reuse one slot (events name a generation).
    pub generation: u32,
    pub feed: Feed,
    /// The feed's index of stream index 0.
    pub first: u64,
    /// Wavelets in the stream.
    pub n: u64,
    pub sched: Schedule,
    pub period: Period,
    pub hops: Vec<Hop>,
    pub receivers: Vec<Receiver>,
    /// The last cycle in which it moves anything.
    pub end: u64,
    /// The feed's last wavelet has entered (its end is accounted).
    pub fed: bool,
}

impl Express {
    /// The cycle stream wavelet `i` leaves (or is delivered at) router `k`.
    pub(crate) fn leaves(&self, i: u64, k: usize) -> u64 {
        self.sched.at(i) + self.hops[k].delay
    }

    /// The cycle receiver `r` gets the `j`-th wavelet of its sequence.
    pub(crate) fn delivery(&self, r: u32, j: u64) -> u64 {
        let rc = &self.receivers[r as usize];
        let i = self.period.nth(rc.window, j);
        self.leaves(i, rc.hop as usize)
    }

    /// The cycle receiver `r`'s open receive (in `slot`) completes, if its wavelets are among
    /// the first `covered` of its sequence.
    pub(crate) fn completion(
        &self,
        r: u32,
        slot: &crate::pe::RecvSlot,
        covered: u64,
    ) -> Option<u64> {
        let rc = &self.receivers[r as usize];
        let last = rc.flushed + u64::from(slot.n - slot.done);
        (slot.open && last <= covered).then(|| self.delivery(r, last - 1))
    }

    /// Stream wavelets that left router `k` (if they reach it) before cycle `t`, counted
    /// among all stream indices: the prefix `0 .. moved(k, t)`.
    pub(crate) fn moved(&self, k: usize, t: u64) -> u64 {
        let before = t.checked_sub(1 + self.hops[k].delay);
        before.map_or(0, |c| self.sched.count_le(c, self.n))
    }
}

/// When a chain's wavelets enter its first router.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Schedule {
    /// Wavelet `i` at `t0 + i` (a PE's ramp injects one per cycle).
    Steady { t0: u64 },
    /// Wavelet `i` at `⌈(next0 + i·num) / den⌉`: a paced edge source that moves every
    /// wavelet as soon as its pacer releases it (see `pacer.rs`).
    Paced { next0: u128, num: u64, den: u64 },
}

impl Schedule {
    /// The cycle wavelet `i` enters.
    pub(crate) fn at(self, i: u64) -> u64 {
        match self {
            Schedule::Steady { t0 } => t0 + i,
            Schedule::Paced { next0, num, den } => {
                let x = next0 + u128::from(i) * u128::from(num);
                x.div_ceil(u128::from(den)) as u64
            }
        }
    }

    /// How many of wavelets `0 .. n` enter at or before cycle `t`.
    pub(crate) fn count_le(self, t: u64, n: u64) -> u64 {
        match self {
            Schedule::Steady { t0 } => {
                if t < t0 {
                    0
                } else {
                    (t - t0 + 1).min(n)
                }
            }
            Schedule::Paced { next0, num, den } => {
                let tt = u128::from(t) * u128::from(den);
                if tt < next0 {
                    0
                } else {
                    let k = (tt - next0) / u128::from(num) + 1;
                    k.min(u128::from(n)) as u64
                }
            }
        }
    }
}

/// A range of period offsets `[lo, hi)`.
pub(crate) type Window = (u64, u64);

/// The periodic structure of a chain with filters: stream wavelet `i` is at offset
/// `(phase + i) mod p` of its period; `p == 0` means no filters (every window is [`ALL`]).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Period {
    pub p: u64,
    pub phase: u64,
}

impl Period {
    /// Positions `0 .. a` (absolute: stream index + phase) whose offset is in `w`.
    fn below(self, w: Window, a: u64) -> u64 {
        let width = w.1 - w.0;
        (a / self.p) * width + (a % self.p).saturating_sub(w.0).min(width)
    }

    /// Stream wavelets `0 .. n` in window `w`.
    pub(crate) fn count(self, w: Window, n: u64) -> u64 {
        if w.0 >= w.1 {
            return 0;
        }
        if self.p == 0 {
            return n;
        }
        self.below(w, self.phase + n) - self.below(w, self.phase)
    }

    /// The stream index of the `j`-th wavelet (from 0) in window `w`.
    pub(crate) fn nth(self, w: Window, j: u64) -> u64 {
        if self.p == 0 {
            return j;
        }
        let width = w.1 - w.0;
        let k = self.below(w, self.phase) + j;
        (k / width) * self.p + w.0 + k % width - self.phase
    }

    /// Whether stream wavelet `i` is in window `w`.
    pub(crate) fn contains(self, w: Window, i: u64) -> bool {
        if w.0 >= w.1 {
            return false;
        }
        if self.p == 0 {
            return true;
        }
        let o = (self.phase + i) % self.p;
        w.0 <= o && o < w.1
    }
}

/// Event kinds: the feed's last wavelet enters (its router steps), a receive completes (the
/// receiver's router steps), the stream turns back into wavelets (before the cycle's PE
/// wakes: something competes, or it has moved everything — when that is still its end); and,
/// checked after the PE wakes, a receiver's first wavelet without a receive arrives.
pub(crate) const FED: u8 = 0;
pub(crate) const RECV_DONE: u8 = 1;
pub(crate) const COMPETE: u8 = 2;
pub(crate) const STARVE: u8 = 3;
pub(crate) const END: u8 = 4;

/// An event: (cycle, stream, generation, kind, argument: a receiver's index).
pub(crate) type XEvent = (u64, u32, u32, u8, u32);

/// The partition's express streams and their events.
#[derive(Debug, Default)]
pub(crate) struct Streams {
    pub list: Vec<Express>,
    /// Events before the PE wakes of their cycle…
    pub events: Calendar<XEvent>,
    /// …and after them.
    pub late: Calendar<XEvent>,
    /// Whether new streams may start.
    pub on: bool,
    /// PEs that began a send in this cycle, and edge sources releasing a wavelet in it:
    /// candidates for new streams.
    pub sends: Vec<u32>,
    pub sources: Vec<u32>,
    /// Edge sources releasing a wavelet in the next cycle, found by their router's step.
    pub next_sources: Vec<u32>,
    /// Receivers (stream, receiver) whose coverage to extend after the router pass: their
    /// stream grew by a send joining it back to back.
    pub recover: Vec<(u32, u32)>,
}

impl Streams {
    /// The earliest cycle with an event.
    pub(crate) fn next(&self) -> Option<u64> {
        match (self.events.next(), self.late.next()) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Whether any stream may be alive.
    pub(crate) fn busy(&self) -> bool {
        !self.events.is_empty() || !self.late.is_empty()
    }

    /// Queue event `kind` of stream `x` at cycle `t`.
    pub(crate) fn push(&mut self, t: u64, x: u32, kind: u8, arg: u32) {
        let generation = self.list[x as usize].generation;
        let e = (t, x, generation, kind, arg);
        if kind == STARVE {
            self.late.push(t, e);
        } else {
            self.events.push(t, e);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_paced_schedule_counts_what_it_releases() {
        // A pool of 3 bytes per cycle for one stream: 4/3 cycles a wavelet, from cycle 10.
        let s = Schedule::Paced {
            next0: 30,
            num: 4,
            den: 3,
        };
        let at: Vec<u64> = (0..7).map(|i| s.at(i)).collect();
        assert_eq!(at, vec![10, 12, 13, 14, 16, 17, 18]);
        for t in 8..20 {
            let want = at.iter().filter(|&&a| a <= t).count() as u64;
            assert_eq!(s.count_le(t, 7), want, "cycle {t}");
        }
    }

    #[test]
    fn windows_of_a_period_count_and_index_alike() {
        let p = Period { p: 12, phase: 7 };
        for w in [(0, 12), (3, 8), (8, 12), (0, 1)] {
            let members: Vec<u64> = (0..100).filter(|&i| p.contains(w, i)).collect();
            for n in 0..100 {
                let want = members.iter().filter(|&&i| i < n).count() as u64;
                assert_eq!(p.count(w, n), want, "window {w:?}, n {n}");
            }
            for (j, &i) in members.iter().enumerate() {
                assert_eq!(p.nth(w, j as u64), i, "window {w:?}, j {j}");
            }
        }
    }
}
