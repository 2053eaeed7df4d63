//! E0705: tasks that activate each other on every run, so that once one of them runs, the PE
//! never stops (a task that ends with `activate spin;` is `spin`'s own next activation).
//!
//! An activation is **certain** when every run of its task reaches it: an `activate t;` or a
//! `send(...) then t;` in the task body's top level, before anything that may end the task
//! early (a `return`, at any depth). Activations inside an `if`, `while` or `for` depend on
//! the condition, and a `recv(...) then t;` on wavelets arriving; neither is certain (an
//! endless chain through a receive that stops getting data ends in a deadlock, which the
//! simulator reports). A cycle of certain activations among tasks that may run on some PE
//! of the region never ends there.

use wsel_ir::kernel::{Stmt, TaskId, for_each_transfer};

/// One certain activation: transfer statement `index` of its task activates `target`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Certain {
    pub index: usize,
    pub target: TaskId,
}

/// A cycle of certain activations: the tasks in order, each activating the next and the last
/// the first, and the statement of the last that closes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Cycle {
    pub tasks: Vec<TaskId>,
    pub closing: Certain,
}

/// The certain activations of a task body, in statement order.
pub(crate) fn certain_activations(body: &[Stmt]) -> Vec<Certain> {
    let mut out = Vec::new();
    let mut index = 0;
    for stmt in body {
        let target = match stmt {
            Stmt::Activate(task) => Some(*task),
            Stmt::SendSlice { then, .. } | Stmt::SendScalar { then, .. } => *then,
            _ => None,
        };
        if let Some(target) = target {
            out.push(Certain { index, target });
        }
        if may_end_task(stmt) {
            break;
        }
        index += transfers_in(stmt);
    }
    out
}

/// Whether `stmt` may end its task (a `return` in it, at any depth).
fn may_end_task(stmt: &Stmt) -> bool {
    match stmt {
        Stmt::Return => true,
        Stmt::If {
            then_body,
            else_body,
            ..
        } => then_body.iter().chain(else_body).any(may_end_task),
        Stmt::While { body, .. } | Stmt::For { body, .. } => body.iter().any(may_end_task),
        _ => false,
    }
}

/// How many transfer statements `stmt` holds (itself included), in the IR's numbering.
fn transfers_in(stmt: &Stmt) -> usize {
    let mut n = 0;
    for_each_transfer(std::slice::from_ref(stmt), &mut |_, _| n += 1);
    n
}

/// The cycles of certain activations through tasks `alive` allows: for each task, the first
/// cycle found that starts at it and otherwise passes only through higher-numbered tasks (so
/// a cycle is reported once, from its lowest task).
pub(crate) fn cycles(certain: &[Vec<Certain>], alive: &[bool]) -> Vec<Cycle> {
    let alive = |t: usize| alive.get(t).copied().unwrap_or(false);
    (0..certain.len())
        .filter(|&start| alive(start))
        .filter_map(|start| cycle_from(certain, start, &alive))
        .collect()
}

/// A depth-first search from `start` along certain activations into live tasks numbered above
/// it, each visited once per path, until one leads back to `start`.
fn cycle_from(
    certain: &[Vec<Certain>],
    start: usize,
    alive: &dyn Fn(usize) -> bool,
) -> Option<Cycle> {
    let mut path = vec![TaskId(start as u32)];
    // Per task on the path: how many of its activations have been followed.
    let mut followed = vec![0usize];
    while let Some(&task) = path.last() {
        let depth = path.len() - 1;
        let Some(edge) = certain[task.0 as usize].get(followed[depth]).copied() else {
            path.pop();
            followed.pop();
            continue;
        };
        followed[depth] += 1;
        let target = edge.target.0 as usize;
        if target == start {
            return Some(Cycle {
                tasks: path,
                closing: edge,
            });
        }
        if target > start && alive(target) && !path.contains(&edge.target) {
            path.push(edge.target);
            followed.push(0);
        }
    }
    None
}
