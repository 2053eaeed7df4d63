//! What can run on a PE: the tasks reachable from `main` through `then` and `activate`, and
//! the transfer statements of those tasks that the PE's coordinates do not rule out.
//!
//! A statement **may run** unless the coordinates (or constants, or the ranges of values the
//! checks know, [`facts`](crate::facts)) decide against it: an `if` branch whose condition is
//! known to go the other way, the body of a `while` whose condition
//! is known false, the body of a `for` whose range is known empty, anything after a `return`
//! that is always reached. Conditions on data (SRAM, task-locals) may go either way. Tasks
//! are activated per PE, so a task may run on a PE only if a `then`/`activate` that may run
//! on that PE names it (or it is `main`).

use wsel_ir::kernel::{KernelIr, KernelSpans, PortId, Stmt, SwitchCmd, TaskId};

use crate::classes::loop_runs;
use crate::eval::{CoordEnv, Ctx, eval_bool};
use crate::facts::Facts;

/// A transfer statement: its task and number ([`wsel_ir::kernel::KernelSpans`] numbering).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct StmtRef {
    pub task: TaskId,
    pub index: usize,
}

/// What a transfer statement does with a port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum PortOp {
    Recv(PortId),
    Send(PortId),
}

/// What may run on one PE.
#[derive(Debug, Clone, Default)]
pub(crate) struct Reach {
    /// Per task: whether it may run.
    pub tasks: Vec<bool>,
    /// The `recv`s and `send`s that may run, in task and statement order.
    pub ops: Vec<(StmtRef, PortOp)>,
    /// The control wavelets that may be sent: the port and the commands, without repeats.
    pub controls: Vec<(PortId, Vec<SwitchCmd>)>,
}

impl Reach {
    pub(crate) fn sends_on(&self, port: PortId) -> bool {
        self.ops.iter().any(|(_, op)| *op == PortOp::Send(port))
    }

    pub(crate) fn receives_on(&self, port: PortId) -> bool {
        self.ops.iter().any(|(_, op)| *op == PortOp::Recv(port))
    }
}

/// What may run on the PE `env`; with `env` `None`, on a PE whose coordinates are unknown
/// (only constants and the ranges of `facts` decide).
pub(crate) fn reach(ir: &KernelIr, facts: &Facts, env: Option<&CoordEnv>) -> Reach {
    walk(ir, facts, env, None)
}

/// The tasks that a `then` or `activate` of a task reachable from `main` names, whatever the
/// conditions around it, counting the branches that lowering dropped because their condition
/// is constant for this instance (`spans`' `folded_targets`): the tasks that may run for some
/// values of the kernel's parameters and of its data.
pub(crate) fn named_tasks(ir: &KernelIr, facts: &Facts, spans: Option<&KernelSpans>) -> Vec<bool> {
    walk(
        ir,
        facts,
        None,
        Some(spans.unwrap_or(&KernelSpans::default())),
    )
    .tasks
}

/// [`reach`]; with `named`, every condition may go either way and the tasks of dropped
/// branches are named too ([`named_tasks`]).
fn walk(
    ir: &KernelIr,
    facts: &Facts,
    env: Option<&CoordEnv>,
    named: Option<&KernelSpans>,
) -> Reach {
    let mut out = Reach {
        tasks: vec![false; ir.tasks.len()],
        ops: Vec::new(),
        controls: Vec::new(),
    };
    let mut queue = vec![ir.entry];
    if let Some(t) = out.tasks.get_mut(ir.entry.0 as usize) {
        *t = true;
    }
    while let Some(task) = queue.pop() {
        let Some(body) = ir.tasks.get(task.0 as usize).map(|t| &t.body) else {
            continue;
        };
        let mut walker = Walker {
            ir,
            task,
            ctx: facts.ctx(ir, task.0 as usize, env),
            decide: named.is_none(),
            next: 0,
            targets: Vec::new(),
            ops: Vec::new(),
            controls: Vec::new(),
        };
        walker.block(body, true);
        if let Some(spans) = named.and_then(|f| f.tasks.get(task.0 as usize)) {
            walker.targets.extend(&spans.folded_targets);
        }
        out.ops.extend(walker.ops);
        for control in walker.controls {
            if !out.controls.contains(&control) {
                out.controls.push(control);
            }
        }
        for t in walker.targets {
            if let Some(seen) = out.tasks.get_mut(t.0 as usize)
                && !*seen
            {
                *seen = true;
                queue.push(t);
            }
        }
    }
    out.ops.sort_by_key(|(s, _)| *s);
    out
}

struct Walker<'a> {
    ir: &'a KernelIr,
    task: TaskId,
    ctx: Ctx<'a>,
    /// Whether conditions are evaluated (otherwise every branch and loop may run).
    decide: bool,
    /// The number of the next transfer statement.
    next: usize,
    targets: Vec<TaskId>,
    ops: Vec<(StmtRef, PortOp)>,
    controls: Vec<(PortId, Vec<SwitchCmd>)>,
}

impl Walker<'_> {
    /// Walks `body`, of which the start may run when `live`; returns whether its end may be
    /// reached. Statements that cannot run are still walked, to keep the numbering.
    fn block(&mut self, body: &[Stmt], live: bool) -> bool {
        let mut live = live;
        for stmt in body {
            match stmt {
                Stmt::Recv { port, then, .. } => {
                    self.transfer(live, Some(PortOp::Recv(*port)), Some(*then));
                }
                Stmt::SendSlice { port, then, .. } | Stmt::SendScalar { port, then, .. } => {
                    self.transfer(live, Some(PortOp::Send(*port)), *then);
                }
                Stmt::Activate(task) => self.transfer(live, None, Some(*task)),
                Stmt::Return => live = false,
                Stmt::If {
                    cond,
                    then_body,
                    else_body,
                } => {
                    let known = self.decide(live, cond);
                    let then_live = live && known != Some(false);
                    let else_live = live && known != Some(true);
                    let then_end = self.block(then_body, then_live);
                    let else_end = self.block(else_body, else_live);
                    live = then_end || else_end;
                }
                Stmt::While { cond, body } => {
                    let known = self.decide(live, cond);
                    self.block(body, live && known != Some(false));
                }
                Stmt::For {
                    local,
                    lo,
                    hi,
                    body,
                } => {
                    let task = &self.ir.tasks[self.task.0 as usize];
                    let known = self.decide(live, &loop_runs(task, *local, lo, hi));
                    self.block(body, live && known != Some(false));
                }
                // A control wavelet completes nothing and is never delivered to a PE; it moves
                // switches (`switched`).
                Stmt::Control { port, commands } => {
                    if live {
                        self.controls.push((*port, commands.clone()));
                    }
                }
                Stmt::SetLocal { .. }
                | Stmt::Store { .. }
                | Stmt::Vector { .. }
                | Stmt::CheckLength { .. } => {}
            }
        }
        live
    }

    /// The value of `cond` where the statement may run and conditions are decided.
    fn decide(&self, live: bool, cond: &wsel_ir::kernel::Expr) -> Option<bool> {
        if live && self.decide {
            eval_bool(cond, &self.ctx)
        } else {
            None
        }
    }

    fn transfer(&mut self, live: bool, op: Option<PortOp>, then: Option<TaskId>) {
        let at = StmtRef {
            task: self.task,
            index: self.next,
        };
        self.next += 1;
        if !live {
            return;
        }
        if let Some(op) = op {
            self.ops.push((at, op));
        }
        self.targets.extend(then);
    }
}
