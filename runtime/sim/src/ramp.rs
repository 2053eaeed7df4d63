//! The shared ramp (`Target::ramp.shared`): a PE's ramp moves one wavelet per cycle, into
//! the router from the PE's sends or out of the router to its receives, and when both could
//! move, the transfer on the lower color goes — a PE serves its transfers in queue order, and
//! colors stand for the queues (a kernel's ports get colors in declaration order).
//!
//! The router step asks [`CycleState::deliver_first`] before injecting: if a queue of a lower
//! color than the send the ramp would inject from can deliver, it delivers and the send waits
//! a cycle; otherwise the send injects (if it can) and the ramp port does not deliver in that
//! cycle. Without sends the ramp delivers as on an unshared ramp. Express streams keep the
//! ramp of their feeding PE and of their receivers to themselves (`express_start.rs`).

use crate::fabric::{RAMP, Router};
use crate::router::{CycleState, next_bit};

impl CycleState<'_> {
    /// With a shared ramp, before PE `pe` (at router `node`) injects: deliver one wavelet of
    /// a color lower than the send the ramp would inject from, if one can go; whether it did.
    /// `r` is the router's record, held by the step.
    #[inline]
    pub(crate) fn deliver_first(&mut self, r: &mut Router, node: u32) -> bool {
        let (want, pe) = (r.want[RAMP], r.pe);
        if want == 0 {
            return false;
        }
        let p = &self.pes[pe as usize];
        let avail = p.sending & !p.full;
        if avail == 0 {
            return false;
        }
        let k = next_bit(avail, p.last_slot);
        let color = self.sends[(p.send_base + u32::from(k)) as usize].color;
        let lower = self.queues_below(r.q_start, want, color);
        if lower == 0 || !self.serve::<true>(r, node, RAMP, lower) {
            return false;
        }
        if self.switched {
            self.rare(r, node, Self::control_served);
        }
        true
    }

    /// The queues of `want` (a mask of a router's local queues, from `q_start`) whose color
    /// is below `color`.
    fn queues_below(&self, q_start: u32, mut want: u64, color: u8) -> u64 {
        let mut lower = 0;
        while want != 0 {
            let bit = want.trailing_zeros();
            want &= want - 1;
            if self.queues[(q_start + bit) as usize].color() < color {
                lower |= 1u64 << bit;
            }
        }
        lower
    }
}
