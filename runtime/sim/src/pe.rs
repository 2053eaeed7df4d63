//! A PE's record and its communication bookkeeping: the sends in progress and the posted
//! receives.
//!
//! A PE has one **send slot** per color its router takes from the ramp and one **receive
//! slot** per color its router delivers to the ramp, numbered in color order and kept in the
//! partition's `sends` and `recvs` arrays from the PE's `send_base` and `recv_base` on. The
//! router's queues name their slot (`Queue::slot`), so neither injecting a wavelet nor
//! delivering one searches anything.
//!
//! - A send slot holds the color's current send (the first issued of its not finished sends);
//!   the others wait in `Pe::waiting_sends`, in issue order. The ramp injects from the slots
//!   round-robin (slot order is color order).
//! - A receive slot holds the color's open receive (the first posted of its not complete
//!   receives) and the number of identical receives posted right after it (`repeat`: std.nn's
//!   `dense_stream` posts one per region column per weight row, most alike); the others wait
//!   in `Pe::queued_recvs`, in post order. A completed receive is replaced by a repeat of it,
//!   else by the next queued one on its color.

use crate::fabric::{LocalLink, NONE};
use crate::program::{Color, Program, TaskId};
use crate::waits::Wait;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// A posted receive, and as many identical ones posted right after it on its color.
#[derive(Clone, Debug)]
pub(crate) struct RecvState {
    pub color: Color,
    /// Identical receives (same color, size, offset and task) that follow this one.
    pub repeat: u16,
    pub n: u32,
    pub done: u32,
    pub offset: u32,
    pub then: TaskId,
}

impl RecvState {
    /// How many wavelets it and each of its repeats still take.
    pub(crate) fn missing(&self) -> impl Iterator<Item = u32> + use<> {
        std::iter::once(self.n - self.done).chain(std::iter::repeat_n(self.n, self.repeat.into()))
    }

    fn same(&self, r: &RecvState) -> bool {
        (self.color, self.n, self.offset, self.then) == (r.color, r.n, r.offset, r.then)
            && self.repeat < u16::MAX
    }
}

/// A send that is not in its color's slot yet (issued, or waiting behind the slot's send).
#[derive(Clone, Debug)]
pub(crate) struct SendState {
    pub color: Color,
    pub data: Vec<u32>,
    pub then: Option<TaskId>,
    /// Issue order among the PE's sends (the deadlock report lists stuck sends in it).
    pub seq: u32,
    /// A send of one control wavelet (see `switches.rs`).
    pub control: bool,
}

/// A color's send slot: the send in progress on it, if any (one cache line, as a receive
/// slot).
#[derive(Clone, Debug)]
#[repr(align(64))]
pub(crate) struct SendSlot {
    /// The send's data (empty when the slot is idle).
    pub data: Vec<u32>,
    /// The next wavelet to inject.
    pub pos: u32,
    /// Its completion task, or NONE.
    pub then: u32,
    pub seq: u32,
    /// The router's ramp queue for the color.
    pub queue: u32,
    /// The output channel of that queue's solo link port, or NONE (see `Queue::solo`).
    pub out: u32,
    /// That channel's link when its downstream queue is in this partition (else
    /// `LocalLink::NONE`): an injection forwarding through the solo port reads it here, in
    /// the line it reads anyway, instead of the channel's record.
    pub link: LocalLink,
    /// Wavelets this slot's injections forwarded through `link` that the channel's `sent`
    /// does not count yet (added when the run's traffic is gathered, see `finish.rs`).
    pub hops: u32,
    pub color: Color,
    /// The solo link port (0..4), else `NONE8`.
    pub solo: u8,
    /// The send in progress is one control wavelet.
    pub control: bool,
}

/// A color's receive slot: its open receive, if any. One cache line: a delivery touches it
/// alone, and a PE's slots are fetched whole before it wakes.
#[derive(Clone, Debug)]
#[repr(align(64))]
pub(crate) struct RecvSlot {
    pub offset: u32,
    pub n: u32,
    pub done: u32,
    pub then: TaskId,
    /// The express stream feeding this slot, or NONE.
    pub express: u32,
    /// The color's receive waits (`waits.rs`).
    pub wait: Wait,
    /// Wavelets of receives posted since the express stream feeding the slot last counted them.
    pub xwords: u32,
    pub repeat: u16,
    pub color: Color,
    pub open: bool,
}

// A slot is one cache line.
const _: () = assert!(std::mem::size_of::<RecvSlot>() == 64);
const _: () = assert!(std::mem::size_of::<SendSlot>() == 64);

impl RecvSlot {
    pub(crate) fn new(color: Color) -> RecvSlot {
        RecvSlot {
            offset: 0,
            n: 0,
            done: 0,
            then: 0,
            express: NONE,
            wait: Wait::default(),
            xwords: 0,
            repeat: 0,
            color,
            open: false,
        }
    }

    fn state(&self) -> RecvState {
        RecvState {
            color: self.color,
            repeat: self.repeat,
            n: self.n,
            done: self.done,
            offset: self.offset,
            then: self.then,
        }
    }

    fn open(&mut self, r: RecvState) {
        (self.offset, self.n, self.done, self.then, self.repeat) =
            (r.offset, r.n, r.done, r.then, r.repeat);
        self.open = true;
    }
}

/// A runtime call whose issue time has not come yet.
#[derive(Debug)]
pub(crate) enum Pending {
    Send(SendState),
    Recv(RecvState),
}

/// A PE, packed by what touches it, one cache line per group:
///
/// 0. what a router step reads and writes when it injects or delivers (send and receive
///    state, SRAM, slot bases);
/// 1. the activations ([`Ready`]): a wake looks at the earliest, a completed receive or send
///    adds one;
/// 2. what every wake reads: busy time, the delayed calls, the node to reschedule and the
///    express state;
/// 3. what a task start reads and writes: the color masks its runtime calls check, the
///    livelock count, the PE's busy figures;
/// 4. rarely used: receives queued behind an open one and sends waiting behind one in
///    progress, looked at only when `queued_colors` or `n_waiting` says there are any.
///
/// So a wake that carries out delayed calls touches lines 0 to 2, one that starts a task
/// line 3 too, and the timer pass fetches those four lines before the wake
/// (`prefetch::wakes_ahead`).
#[derive(Debug)]
#[repr(C, align(64))]
pub(crate) struct Pe {
    // Line 0: the router step.
    /// Send slots with a send in progress.
    pub sending: u64,
    /// Send slots whose ramp queue is full (the PE cannot inject on them).
    pub full: u64,
    /// Colors with an open receive.
    pub open_recvs: u64,
    /// Lazily allocated: empty until first used.
    pub sram: Vec<u8>,
    /// The PE's first send and receive slot in the partition's arrays, and their numbers.
    pub send_base: u32,
    pub recv_base: u32,
    pub n_sends: u8,
    pub n_recvs: u8,
    /// The send slot the ramp injected from last (round-robin), or `NONE8`.
    pub last_slot: u8,
    /// The send slot an express stream holds (its color's new sends wait behind it), or
    /// `NONE8`.
    pub xslot: u8,
    pub seq: u32,
    // Line 1: the activations.
    /// Activations: (ready cycle, sequence number, task), earliest first.
    pub ready: Ready,
    // Line 2: every wake.
    pub busy_until: u64,
    /// Future runtime calls, (issue cycle, sequence number) order. Calls only ever join at
    /// the back: a task starts no earlier than the last one ended, so its calls are issued no
    /// earlier than any of the last one's.
    pub pending: VecDeque<(u64, u32, Pending)>,
    /// Colors an express stream feeds on which receives were posted since the PE woke.
    pub xposted: u64,
    pub node: u32,
    /// Index into `Program::pes`.
    pub prog: u32,
    /// The express stream this PE is sending, or NONE.
    pub express: u32,
    /// The number of sends in `waiting_sends`.
    pub n_waiting: u32,
    // Line 3: a task start.
    pub send_colors: u64,
    pub recv_colors: u64,
    /// Send colors with a switch somewhere: control wavelets may be sent on them.
    pub control_colors: u64,
    /// Colors that may have a receive in `queued_recvs` (a superset: cleared when a
    /// completion finds none; 0 exactly when `queued_recvs` is empty).
    pub queued_colors: u64,
    /// The tasks it ran in a row that only activated tasks while nothing of its own was
    /// open (against `Setup::livelock_tasks`).
    pub closed: u64,
    pub busy_cycles: u64,
    pub tasks_run: u64,
    /// The cycle its first task started (`u64::MAX` until one has): with `busy_until`, the
    /// PE's span of work (`PeActivity::first_task_start`).
    pub first: u64,
    // Line 4: rarely used.
    /// Receives posted while one on their color was open, in post order.
    pub queued_recvs: VecDeque<RecvState>,
    /// Sends issued while one on their color was in progress, in issue order.
    waiting_sends: VecDeque<SendState>,
}

/// The lines of a PE's record that a wake and a task start touch (see `Pe`).
pub(crate) const WAKE_LINES: usize = 4;

// Each group of fields in its own cache line (see `Pe`).
const _: () = {
    use std::mem::offset_of;
    assert!(offset_of!(Pe, seq) < 64 && offset_of!(Pe, ready) == 64);
    assert!(std::mem::size_of::<Ready>() == 64 && offset_of!(Pe, busy_until) == 128);
    assert!(offset_of!(Pe, n_waiting) < 192 && offset_of!(Pe, send_colors) == 192);
    assert!(offset_of!(Pe, first) < 256 && offset_of!(Pe, queued_recvs) == 256);
    assert!(std::mem::size_of::<Pe>() == 320 && offset_of!(Pe, queued_recvs) == 64 * WAKE_LINES);
};

/// An activation: (ready cycle, sequence number, task).
pub(crate) type Activation = (u64, u32, TaskId);

/// A PE's activations, earliest (then first activated) first. The first few live in the PE's
/// record (a PE rarely has more than two at a time), the rest in a heap behind a pointer, so
/// that the record's line holds everything the common case reads.
#[derive(Debug, Default)]
pub(crate) struct Ready {
    near: [Activation; NEAR],
    /// Allocated when a PE first has more than [`NEAR`] activations. Boxed so that the
    /// record holds one word of it, not the heap's three (the line is full otherwise).
    #[allow(clippy::box_collection)]
    far: Option<Box<BinaryHeap<Reverse<Activation>>>>,
    n: u8,
    /// Whether `far` holds any (so that the common case does not follow the pointer).
    any_far: bool,
}

/// Activations kept in the record.
const NEAR: usize = 3;

impl Ready {
    pub(crate) fn push(&mut self, a: Activation) {
        if usize::from(self.n) < NEAR {
            self.near[usize::from(self.n)] = a;
            self.n += 1;
        } else {
            self.far.get_or_insert_default().push(Reverse(a));
            self.any_far = true;
        }
    }

    /// The index in `near` of the earliest kept there.
    fn near_min(&self) -> Option<usize> {
        (0..usize::from(self.n)).min_by_key(|&i| self.near[i])
    }

    /// The far activations, if any.
    fn far(&self) -> Option<&BinaryHeap<Reverse<Activation>>> {
        self.far.as_deref().filter(|_| self.any_far)
    }

    /// Take the earliest far activation (there is one).
    fn pop_far(&mut self) -> Option<Activation> {
        let far = self.far.as_deref_mut()?;
        let a = far.pop().map(|r| r.0);
        self.any_far = !far.is_empty();
        a
    }

    /// The earliest activation.
    pub(crate) fn peek(&self) -> Option<Activation> {
        let near = self.near_min().map(|i| self.near[i]);
        let far = self.far().and_then(|f| f.peek()).map(|r| r.0);
        match (near, far) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    /// Take the earliest activation.
    pub(crate) fn pop(&mut self) -> Option<Activation> {
        let far = self.far().and_then(|f| f.peek()).map(|r| r.0);
        match self.near_min() {
            Some(i) if far.is_none_or(|f| self.near[i] < f) => {
                let a = self.near[i];
                self.n -= 1;
                self.near[i] = self.near[usize::from(self.n)];
                if far.is_some()
                    && let Some(f) = self.pop_far()
                {
                    self.push(f);
                }
                Some(a)
            }
            _ if far.is_some() => self.pop_far(),
            _ => None,
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.n == 0 && !self.any_far
    }

    /// Prefetch the far activations' heap record, if there are any (a hint: see
    /// `prefetch.rs`); [`Ready::prefetch_far`] reads it a stage later.
    #[inline(always)]
    pub(crate) fn prefetch_heap(&self) {
        if self.any_far
            && let Some(far) = self.far.as_deref()
        {
            crate::prefetch::fetch(std::ptr::from_ref(far));
        }
    }

    /// Prefetch the earliest far activation, if any (a hint: see `prefetch.rs`).
    #[inline(always)]
    pub(crate) fn prefetch_far(&self) {
        if let Some(first) = self.far().and_then(|f| f.peek()) {
            crate::prefetch::fetch(std::ptr::from_ref(first));
        }
    }
}

/// What [`deliver`] did with a wavelet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Delivery {
    /// No receive on its color is posted: the wavelet stays where it is.
    NoReceive,
    Written,
    /// It completed a receive, whose task is now ready: the PE must wake at `t + 1`.
    Completed,
}

impl Pe {
    /// A PE at local router `node` running `Program::pes[prog]`, with its slots from the
    /// given bases.
    pub(crate) fn new(node: u32, prog: u32, sends: (u32, u8), recvs: (u32, u8)) -> Pe {
        Pe {
            sending: 0,
            full: 0,
            open_recvs: 0,
            sram: Vec::new(),
            send_base: sends.0,
            recv_base: recvs.0,
            busy_until: 0,
            ready: Ready::default(),
            node,
            prog,
            seq: 0,
            express: NONE,
            n_sends: sends.1,
            n_recvs: recvs.1,
            last_slot: crate::fabric::NONE8,
            xposted: 0,
            xslot: crate::fabric::NONE8,
            pending: VecDeque::new(),
            queued_recvs: VecDeque::new(),
            waiting_sends: VecDeque::new(),
            send_colors: 0,
            recv_colors: 0,
            control_colors: 0,
            n_waiting: 0,
            queued_colors: 0,
            busy_cycles: 0,
            tasks_run: 0,
            closed: 0,
            first: u64::MAX,
        }
    }

    /// The PE's receive slots in `all`.
    pub(crate) fn recv_slots<'a>(&self, all: &'a [RecvSlot]) -> &'a [RecvSlot] {
        &all[self.recv_base as usize..self.recv_base as usize + usize::from(self.n_recvs)]
    }

    /// The PE's send slots in `all`.
    pub(crate) fn send_slots<'a>(&self, all: &'a [SendSlot]) -> &'a [SendSlot] {
        &all[self.send_base as usize..self.send_base as usize + usize::from(self.n_sends)]
    }

    /// The index in `all` of the PE's receive slot for `color` (routed: the task interface
    /// checked it).
    pub(crate) fn recv_slot(&self, all: &[RecvSlot], color: Color) -> usize {
        let at = self.recv_slots(all).iter().position(|s| s.color == color);
        self.recv_base as usize + at.unwrap_or(0)
    }

    /// The index in `all` of the PE's send slot for `color`.
    pub(crate) fn send_slot(&self, all: &[SendSlot], color: Color) -> usize {
        let at = self.send_slots(all).iter().position(|s| s.color == color);
        self.send_base as usize + at.unwrap_or(0)
    }

    /// Post receive `r` (n > 0, no repeats); whether a receive on its color was open already
    /// (then it waits behind those, as a repeat of the last if it is identical to it).
    pub(crate) fn post_recv(&mut self, all: &mut [RecvSlot], r: RecvState) -> bool {
        let bit = 1u64 << r.color;
        let slot = self.recv_slot(all, r.color);
        if self.open_recvs & bit == 0 {
            self.open_recvs |= bit;
            all[slot].open(r);
            return false;
        }
        // The receive it would follow: the last queued on its color, else the open one.
        let queued = (self.queued_colors & bit != 0)
            .then(|| self.queued_recvs.iter().rposition(|o| o.color == r.color))
            .flatten();
        match queued {
            Some(at) if self.queued_recvs[at].same(&r) => self.queued_recvs[at].repeat += 1,
            Some(_) => self.queued_recvs.push_back(r),
            None => {
                self.queued_colors &= !bit;
                if all[slot].state().same(&r) {
                    all[slot].repeat += 1;
                } else {
                    self.queued_colors |= bit;
                    self.queued_recvs.push_back(r);
                }
            }
        }
        true
    }

    /// How many wavelets each of the PE's posted receives on `color` still takes, in the
    /// order wavelets fill them.
    pub(crate) fn recvs_on<'a>(
        &'a self,
        all: &'a [RecvSlot],
        color: Color,
    ) -> impl Iterator<Item = u32> + 'a {
        let open = self
            .recv_slots(all)
            .iter()
            .filter(move |s| s.color == color && s.open)
            .map(RecvSlot::state);
        let queued = self
            .queued_recvs
            .iter()
            .filter(move |r| r.color == color)
            .cloned();
        open.chain(queued).flat_map(|r| r.missing())
    }

    /// All of the PE's posted receives, by color, each color's in the order they fill:
    /// (color, wavelets missing, wavelets requested).
    pub(crate) fn posted_recvs(&self, all: &[RecvSlot]) -> Vec<(Color, u32, u32)> {
        let mut out = Vec::new();
        for s in self.recv_slots(all).iter().filter(|s| s.open) {
            let queued = self.queued_recvs.iter().filter(|r| r.color == s.color);
            for r in std::iter::once(s.state()).chain(queued.cloned()) {
                out.extend(r.missing().map(|missing| (r.color, missing, r.n)));
            }
        }
        out
    }

    /// The open receive of slot `rs` completed at cycle `t`: a repeat of it, else the next
    /// one queued on its color takes its place, or the color closes. Returns the completed
    /// receive's task.
    fn complete_recv(&mut self, s: &mut RecvSlot, t: u64) -> TaskId {
        let then = s.then;
        if s.repeat > 0 {
            s.repeat -= 1;
            s.done = 0;
            return then;
        }
        let bit = 1u64 << s.color;
        if self.queued_colors & bit != 0 {
            // Usually at the front: a PE that queues many receives queues them on one color.
            let next = self.queued_recvs.iter().position(|r| r.color == s.color);
            if let Some(next) = next.and_then(|at| self.queued_recvs.remove(at)) {
                if self.queued_recvs.is_empty() {
                    self.queued_colors = 0;
                }
                s.open(next);
                return then;
            }
            // The last one on the color was taken before (the bit is cleared lazily).
            self.queued_colors &= !bit;
        }
        self.open_recvs &= !bit;
        s.open = false;
        s.wait.closed(t, self.busy_until);
        then
    }

    /// Issue send `s`: into its color's slot if that is idle (returns the slot), else behind
    /// the slot's send.
    pub(crate) fn issue_send(&mut self, all: &mut [SendSlot], s: SendState) -> Option<usize> {
        let slot = self.send_slot(all, s.color);
        let k = slot - self.send_base as usize;
        if self.sending & (1u64 << k) != 0 || k == usize::from(self.xslot) {
            self.waiting_sends.push_back(s);
            self.n_waiting += 1;
            return None;
        }
        self.sending |= 1u64 << k;
        install(&mut all[slot], s);
        Some(slot)
    }

    /// The sends issued while one on their color was in progress, in issue order.
    pub(crate) fn waiting_sends(&self) -> &VecDeque<SendState> {
        &self.waiting_sends
    }

    /// Take the first send waiting on `color`, if any.
    pub(crate) fn take_waiting(&mut self, color: Color) -> Option<SendState> {
        if self.n_waiting == 0 {
            return None;
        }
        let at = self.waiting_sends.iter().position(|w| w.color == color)?;
        self.n_waiting -= 1;
        self.waiting_sends.remove(at)
    }

    /// The send of slot `slot` injected its last wavelet: the next send waiting on its color
    /// takes the slot, else it goes idle. Returns the finished send's data (for reuse) and
    /// completion task.
    pub(crate) fn finish_send(&mut self, s: &mut SendSlot, bit: u64) -> (Vec<u32>, u32) {
        let done = (std::mem::take(&mut s.data), s.then);
        match self.take_waiting(s.color) {
            Some(next) => install(s, next),
            None => self.sending &= !bit,
        }
        done
    }

    /// The PE's sends not finished, in issue order: (color, wavelets not injected).
    pub(crate) fn unfinished_sends(&self, all: &[SendSlot]) -> Vec<(Color, u32)> {
        let mut sends: Vec<(u32, Color, u32)> = self
            .send_slots(all)
            .iter()
            .enumerate()
            .filter(|(k, _)| self.sending & (1u64 << k) != 0)
            .map(|(_, s)| (s.seq, s.color, s.data.len() as u32 - s.pos))
            .chain(
                self.waiting_sends
                    .iter()
                    .map(|w| (w.seq, w.color, w.data.len() as u32)),
            )
            .collect();
        sends.sort_by_key(|&(seq, ..)| seq);
        sends.into_iter().map(|(_, c, n)| (c, n)).collect()
    }

    /// Whether anything is left for the PE to do or wait for.
    pub(crate) fn has_work(&self) -> bool {
        !self.ready.is_empty()
            || !self.pending.is_empty()
            || self.open_recvs != 0
            || self.sending != 0
            || self.express != NONE
    }
}

/// Put send `s` (a control send or not) in slot `slot` (idle).
fn install(slot: &mut SendSlot, s: SendState) {
    slot.control = s.control;
    slot.data = s.data;
    slot.pos = 0;
    slot.then = s.then.unwrap_or(NONE);
    slot.seq = s.seq;
}

/// Write the wavelets `words`, the first arriving at cycle `t`, into the open receive of slot
/// `s` of PE `pe`, which takes more than them (none completes it): what [`deliver`] would do
/// one by one.
pub(crate) fn deliver_run(pe: &mut Pe, s: &mut RecvSlot, program: &Program, words: &[u32], t: u64) {
    debug_assert!(s.open && (words.len() as u32) < s.n - s.done);
    if pe.sram.is_empty() {
        let prog = &program.pes[pe.prog as usize];
        crate::pe_exec::materialize(&mut pe.sram, prog.sram_bytes, &prog.sram_init);
    }
    let at = s.offset as usize + 4 * s.done as usize;
    // The receive's range was checked against the SRAM size when it was posted.
    if let Some(dst) = pe.sram.get_mut(at..at + 4 * words.len()) {
        for (d, w) in dst.chunks_exact_mut(4).zip(words) {
            d.copy_from_slice(&w.to_le_bytes());
        }
    }
    s.done += words.len() as u32;
    s.wait.delivered(t);
}

/// Write wavelet `data`, arriving at cycle `t`, into receive slot `rs` of PE `pe` (allocating
/// the SRAM on first use); a receive it completes queues its task for `t + 1`. Both ways a
/// wavelet reaches a PE — a router's ramp and an express stream's closed form — come here.
#[inline(always)]
pub(crate) fn deliver(
    pe: &mut Pe,
    s: &mut RecvSlot,
    program: &Program,
    data: u32,
    t: u64,
) -> Delivery {
    if !s.open {
        return Delivery::NoReceive;
    }
    if pe.sram.is_empty() {
        let prog = &program.pes[pe.prog as usize];
        crate::pe_exec::materialize(&mut pe.sram, prog.sram_bytes, &prog.sram_init);
    }
    let at = s.offset as usize + 4 * s.done as usize;
    // The receive's range was checked against the SRAM size when it was posted.
    if let Some(dst) = pe.sram.get_mut(at..at + 4) {
        dst.copy_from_slice(&data.to_le_bytes());
    }
    s.done += 1;
    s.wait.delivered(t);
    if s.done < s.n {
        return Delivery::Written;
    }
    let then = pe.complete_recv(s, t);
    pe.ready.push((t + 1, pe.seq, then));
    pe.seq += 1;
    Delivery::Completed
}

#[cfg(test)]
mod tests {
    use super::{Activation, Ready};

    /// Pushes and pops interleaved so that the far heap fills, drains and fills again: the
    /// pops come out in (cycle, sequence) order, as from a sorted list of what was pushed.
    #[test]
    fn activations_come_out_earliest_first_through_the_far_heap() {
        let mut ready = Ready::default();
        let mut reference: Vec<Activation> = Vec::new();
        let mut seq = 0;
        for round in 0..6u64 {
            for k in 0..(round % 3) * 3 + 2 {
                let a = ((k * 7 + round * 5) % 11, seq, seq % 4);
                seq += 1;
                ready.push(a);
                reference.push(a);
            }
            for _ in 0..(round % 4) + 1 {
                reference.sort_unstable_by(|a, b| b.cmp(a));
                assert_eq!(ready.peek(), reference.last().copied());
                assert_eq!(ready.pop(), reference.pop());
            }
            assert_eq!(ready.is_empty(), reference.is_empty());
        }
        reference.sort_unstable_by(|a, b| b.cmp(a));
        while let Some(a) = reference.pop() {
            assert_eq!(ready.pop(), Some(a));
        }
        assert!(ready.is_empty() && ready.pop().is_none() && ready.peek().is_none());
    }
}
