//! The causal order of one PE's transfers in a dry run ([`crate::dry_run`]): for every send
//! the PE issues and every receive it posts, the latest transfer on each port it follows.
//!
//! An activation follows what the activation that queued it followed, and a receive's `then`
//! task follows that receive too. The **causal clock** of a statement is the work and task
//! switches on the chain of activations leading to it: an activation starts when the one
//! that queued it ended (a receive completes at once in a dry run, so a receive's task starts
//! there too), and every activation is charged its switch first. Waiting is not in it: the
//! clock measures the work between two transfers, for instance from a message's arrival to its
//! relay (the mapper's chain estimate, `docs/mapping.md` §5).

use std::collections::VecDeque;

/// The latest transfer on a port in a statement's causal past.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mark {
    /// Its number among the port's transfers, from 1.
    pub ordinal: u32,
    /// The causal clock of a send; for a receive, where its `then` task started.
    pub at: u64,
}

/// A send issued, or a receive posted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Transfer {
    /// The kernel port (an index into its ports).
    pub port: u32,
    /// A send (else a receive).
    pub send: bool,
    /// Its number among the port's transfers, from 1.
    pub ordinal: u32,
    /// Wavelets.
    pub words: u32,
    /// The causal clock at the statement.
    pub at: u64,
    /// Per port, the latest transfer this one follows: for an `in` port the latest receive
    /// completed, for an `out` port the latest send issued.
    pub after: Vec<Option<Mark>>,
}

/// What an activation follows.
#[derive(Debug, Clone)]
struct Cause {
    start: u64,
    marks: Vec<Option<Mark>>,
}

/// The causal bookkeeping of one dry run.
#[derive(Debug)]
pub(crate) struct Tracer {
    /// Transfers so far on every port.
    counts: Vec<u32>,
    /// The causes of the tasks in the PE's ready queue, in its order.
    ready: VecDeque<Cause>,
    /// The causes of the tasks of receives on late ports, in posting order
    /// ([`crate::dry_run::DryRunner::trace_late`]), and which ports are late.
    late_ready: VecDeque<Cause>,
    late: Vec<bool>,
    /// The running activation's.
    current: Cause,
    /// The running activation's causal clock at its start, after its switch, and the work
    /// count then.
    base: u64,
    work_at_start: u64,
    /// Tasks the running activation queued: for a receive's task, the receive's port and
    /// number.
    queued: Vec<Option<(u32, u32)>>,
    pub(crate) transfers: Vec<Transfer>,
}

impl Tracer {
    /// A tracer for a kernel of `ports` ports whose entry task is queued; a receive on a port
    /// `late` marks runs its task only when no other is ready.
    pub(crate) fn new(ports: usize, late: Vec<bool>) -> Tracer {
        let entry = Cause {
            start: 0,
            marks: vec![None; ports],
        };
        Tracer {
            counts: vec![0; ports],
            ready: VecDeque::from([entry.clone()]),
            late_ready: VecDeque::new(),
            late,
            current: entry,
            base: 0,
            work_at_start: 0,
            queued: Vec::new(),
            transfers: Vec::new(),
        }
    }

    /// The next ready task starts, with the work count at `work`.
    pub(crate) fn begin(&mut self, work: u64, switch_cycles: u64) {
        if let Some(cause) = self
            .ready
            .pop_front()
            .or_else(|| self.late_ready.pop_front())
        {
            self.current = cause;
        }
        self.base = self.current.start + switch_cycles;
        self.work_at_start = work;
    }

    /// The running task ended after `busy` cycles (its switch included): the tasks it queued
    /// start then.
    pub(crate) fn end(&mut self, busy: u64) {
        let start = self.current.start + busy;
        for queued in std::mem::take(&mut self.queued) {
            let mut marks = self.current.marks.clone();
            let mut late = false;
            if let Some((port, ordinal)) = queued {
                marks[port as usize] = Some(Mark { ordinal, at: start });
                late = self.late.get(port as usize).copied().unwrap_or(false);
            }
            let queue = if late {
                &mut self.late_ready
            } else {
                &mut self.ready
            };
            queue.push_back(Cause { start, marks });
        }
    }

    /// A send of `words` on `port` at work count `work`.
    pub(crate) fn send(&mut self, port: u32, words: u32, work: u64) {
        let transfer = self.transfer(port, true, words, work);
        let mark = Mark {
            ordinal: transfer.ordinal,
            at: transfer.at,
        };
        self.transfers.push(transfer);
        if let Some(m) = self.current.marks.get_mut(port as usize) {
            *m = Some(mark);
        }
    }

    /// A receive of `words` posted on `port` at work count `work`; its task is queued.
    pub(crate) fn recv(&mut self, port: u32, words: u32, work: u64) {
        let transfer = self.transfer(port, false, words, work);
        self.queued.push(Some((port, transfer.ordinal)));
        self.transfers.push(transfer);
    }

    /// A task queued by `activate` or a send's `then`.
    pub(crate) fn activate(&mut self) {
        self.queued.push(None);
    }

    fn transfer(&mut self, port: u32, send: bool, words: u32, work: u64) -> Transfer {
        let ordinal = match self.counts.get_mut(port as usize) {
            Some(count) => {
                *count += 1;
                *count
            }
            None => 0,
        };
        Transfer {
            port,
            send,
            ordinal,
            words,
            at: self.base + work.saturating_sub(self.work_at_start),
            after: self.current.marks.clone(),
        }
    }
}
