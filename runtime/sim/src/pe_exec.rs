//! What a PE does when it wakes: carry out runtime calls whose issue cycle has come, and run
//! the next ready task to completion, charging its cost (plus the task-switch cost, at least
//! one cycle in all) to the PE's clock.

use crate::error::SimError;
use crate::fabric::NONE;
use crate::partition::Partition;
use crate::pe::{Pe, Pending, RecvSlot, RecvState, SendSlot, SendState};
use crate::task::{Budget, Op, TaskContext, TaskRuntime};

impl Partition<'_> {
    /// The PE `pe` wakes at cycle `t`.
    pub(crate) fn wake_pe(&mut self, pe: u32, t: u64) {
        self.apply_due(pe, t);
        let p = &self.fab.pes[pe as usize];
        let runnable = p.busy_until <= t && p.ready.peek().is_some_and(|(r, _, _)| r <= t);
        if runnable {
            self.express_before_task(pe, t);
            self.run_task(pe, t);
        }
        let p = &self.fab.pes[pe as usize];
        if p.xposted != 0 {
            self.express_posted(pe);
        }
        let p = &self.fab.pes[pe as usize];
        if p.sending != 0 {
            let node = p.node;
            self.fab.routers[node as usize].flags |= crate::fabric::SENDING;
            self.express_after_wake(pe, t);
        }
        self.schedule_pe(pe);
    }

    /// Set the PE's node timer for its next pending call or runnable task.
    pub(crate) fn schedule_pe(&mut self, pe: u32) {
        let p = &self.fab.pes[pe as usize];
        let mut next = p.pending.front().map(|(when, _, _)| *when);
        if let Some((ready, _, _)) = p.ready.peek() {
            let start = ready.max(p.busy_until);
            next = Some(next.map_or(start, |n| n.min(start)));
        }
        if let Some(when) = next {
            let node = p.node;
            self.schedule(node, when);
        }
    }

    /// Carry out the PE's delayed runtime calls issued at or before `t`, in issue order.
    fn apply_due(&mut self, pe: u32, t: u64) {
        let fab = &mut self.fab;
        let p = &mut fab.pes[pe as usize];
        if p.pending.front().is_none_or(|(when, _, _)| *when > t) {
            return;
        }
        let mut slots = Slots {
            sends: &mut fab.sends,
            recvs: &mut fab.recvs,
        };
        while let Some((when, _, op)) = p.pending.pop_front_if(|(when, _, _)| *when <= t) {
            issue(p, &mut slots, when, op);
        }
        if p.pending.is_empty() {
            // Back to the buffer's start (`VecDeque::clear` moves it there): the next task's
            // calls are written where the timer pass fetched them (`prefetch::wakes_ahead`).
            p.pending.clear();
        }
        self.out.stats.event(t);
    }

    fn run_task(&mut self, pe: u32, t: u64) {
        let program = self.setup.program;
        let switch = self.setup.switch;
        let fab = &mut self.fab;
        let p = &mut fab.pes[pe as usize];
        let Some((_, _, task)) = p.ready.pop() else {
            return;
        };
        let prog = &program.pes[p.prog as usize];
        let kernel = &program.kernels[prog.kernel as usize];
        let node = p.node;
        let Some(def) = kernel.tasks.get(task as usize) else {
            let e = SimError::Task {
                at: prog.at,
                task,
                task_name: String::new(),
                cycle: t,
                fault: crate::error::TaskFault::NoSuchTask { task },
            };
            self.fail(t, node, e);
            return;
        };
        if p.sram.len() != prog.sram_bytes as usize {
            materialize(&mut p.sram, prog.sram_bytes, &prog.sram_init);
        }
        let mut ops = std::mem::take(&mut self.tasks.ops);
        let mut spare = std::mem::take(&mut self.tasks.spare);
        let mut ctx = TaskContext {
            sram: &mut p.sram,
            rt: TaskRuntime {
                at: prog.at,
                region: prog.region,
                transposed: prog.transposed,
                mirrored: prog.mirrored,
                args: &prog.args,
                ports: &prog.ports,
                send_colors: p.send_colors,
                recv_colors: p.recv_colors,
                control_colors: p.control_colors,
                n_tasks: kernel.tasks.len() as u32,
                task,
                cycles: 0,
                clock: t + switch,
                budget: Budget {
                    max_cycles: self.setup.max_cycles,
                    left: self.setup.max_cycles.saturating_sub(t + switch),
                },
                ops: &mut ops,
                spare: &mut spare,
                fault: None,
            },
        };
        let result = def.code.run(&mut ctx);
        let fault = match result {
            Err(f) => Some(f),
            Ok(()) => ctx.rt.fault.take(),
        };
        let cost = ctx.rt.cycles;
        self.tasks.spare = spare;
        if let Some(fault) = fault {
            ops.clear();
            self.tasks.ops = ops;
            let e = SimError::Task {
                at: prog.at,
                task,
                task_name: def.name.clone(),
                cycle: t,
                fault,
            };
            self.fail(t, node, e);
            return;
        }
        p.closed = if is_closed(p, &ops) { p.closed + 1 } else { 0 };
        if p.closed >= self.setup.livelock_tasks {
            let e = SimError::Task {
                at: prog.at,
                task,
                task_name: def.name.clone(),
                cycle: t,
                fault: crate::error::TaskFault::Livelock { tasks: p.closed },
            };
            ops.clear();
            self.tasks.ops = ops;
            self.fail(t, node, e);
            return;
        }
        let busy = switch.saturating_add(cost).max(1);
        if p.open_recvs != 0 {
            let base = p.recv_base as usize;
            for s in &mut fab.recvs[base..base + usize::from(p.n_recvs)] {
                if p.open_recvs & (1u64 << s.color) != 0 {
                    s.wait.task_start(t, p.busy_until);
                }
            }
        }
        p.busy_until = t + busy;
        p.busy_cycles += busy;
        p.first = p.first.min(t);
        p.tasks_run += 1;
        let issue0 = t + switch;
        let mut slots = Slots {
            sends: &mut fab.sends,
            recvs: &mut fab.recvs,
        };
        for op in ops.drain(..) {
            match op {
                Op::Activate { at, task } => {
                    p.ready.push((issue0 + at, p.seq, task));
                    p.seq += 1;
                }
                Op::Send {
                    at,
                    color,
                    data,
                    then,
                    control,
                } => {
                    let s = SendState {
                        color,
                        data,
                        then,
                        seq: 0,
                        control,
                    };
                    push_pending(p, &mut slots, issue0 + at, t, Pending::Send(s));
                }
                Op::Recv {
                    at,
                    color,
                    n,
                    offset,
                    then,
                } => {
                    let r = RecvState {
                        color,
                        repeat: 0,
                        n,
                        done: 0,
                        offset,
                        then,
                    };
                    push_pending(p, &mut slots, issue0 + at, t, Pending::Recv(r));
                }
            }
        }
        self.tasks.ops = ops;
        let end = t + busy;
        if end > self.out.stats.max_busy {
            self.out.stats.max_busy = end;
        }
        self.out.stats.event(t);
        if let Some(trace) = &mut self.out.trace {
            trace.task(node, task, t, busy);
        }
    }
}

/// Whether a task that issued `ops` on `p` continues a livelock: it only activated tasks,
/// and the PE has no receive, send or runtime call open that the fabric could complete.
/// (It reads the counts of queued receives and waiting sends, not the lists: those are in
/// the record's rarely used line.)
fn is_closed(p: &Pe, ops: &[Op]) -> bool {
    debug_assert_eq!(p.queued_colors == 0, p.queued_recvs.is_empty());
    debug_assert_eq!(p.n_waiting == 0, p.waiting_sends().is_empty());
    ops.iter().all(|op| matches!(op, Op::Activate { .. }))
        && p.open_recvs == 0
        && p.queued_colors == 0
        && p.sending == 0
        && p.n_waiting == 0
        && p.express == crate::fabric::NONE
        && p.pending.is_empty()
}

/// The partition's slot arrays, which carrying out a runtime call updates.
struct Slots<'a> {
    sends: &'a mut [SendSlot],
    recvs: &'a mut [RecvSlot],
}

/// Queue a runtime call issued at `when` (calls issued at the current cycle `now` take effect
/// at once, in order).
fn push_pending(p: &mut Pe, slots: &mut Slots<'_>, when: u64, now: u64, op: Pending) {
    if when <= now {
        issue(p, slots, when, op);
        return;
    }
    let seq = p.seq;
    p.seq += 1;
    debug_assert!(
        p.pending.back().is_none_or(|(w, _, _)| *w <= when),
        "runtime calls are issued in order"
    );
    p.pending.push_back((when, seq, op));
}

/// Carry out a runtime call at its issue cycle `when`.
fn issue(p: &mut Pe, slots: &mut Slots<'_>, when: u64, op: Pending) {
    match op {
        Pending::Send(mut s) => {
            s.seq = p.seq;
            p.seq += 1;
            p.issue_send(slots.sends, s);
        }
        Pending::Recv(r) if r.n == 0 => {
            p.ready.push((when, p.seq, r.then));
            p.seq += 1;
        }
        Pending::Recv(r) => {
            let (color, n) = (r.color, r.n);
            let open = p.post_recv(slots.recvs, r);
            let slot = &mut slots.recvs[p.recv_slot(slots.recvs, color)];
            slot.wait.posted(when, open);
            if slot.express != NONE {
                slot.xwords += n;
                p.xposted |= 1u64 << color;
            }
        }
    }
}

/// Allocate a PE's SRAM on first use: `size` bytes, starting with `init`.
pub(crate) fn materialize(sram: &mut Vec<u8>, size: u32, init: &[u8]) {
    sram.clear();
    sram.resize(size as usize, 0);
    let n = init.len().min(sram.len());
    sram[..n].copy_from_slice(&init[..n]);
}
