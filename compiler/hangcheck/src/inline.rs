//! Task-locals that only name a coordinate condition (`let first = pe.col == 0;`) are seen
//! through: before the checks, every use of a local assigned exactly once in its task, from
//! an expression of coordinates, constants and other such locals, is replaced by that
//! expression. Without this, `if first { ... }` would count as a condition on data and the
//! checks would look at both branches on every PE.
//!
//! Sound because such a local has one value on a PE for the whole task: it is assigned once
//! (a `let`, or a `var` never assigned again, not a loop variable), from coordinates that do
//! not change, and every use comes after the assignment (a local is in scope only after its
//! declaration). Only expressions change, so statements keep their numbering.

use std::collections::HashMap;

use wsel_ir::kernel::{Expr, KernelIr, LocalId, Stmt, Task};

use crate::eval::reads;
use crate::facts::Scalars;

/// `ir` with the coordinate-only locals of every task replaced by their definitions.
pub(crate) fn inline_coordinate_locals(ir: &KernelIr) -> KernelIr {
    let mut out = ir.clone();
    for task in &mut out.tasks {
        inline_task(task);
    }
    out
}

fn inline_task(task: &mut Task) {
    let mut assigned: HashMap<LocalId, usize> = HashMap::new();
    count_assignments(&task.body, &mut assigned);
    let once = |l: &LocalId| assigned.get(l) == Some(&1);
    let mut known: HashMap<LocalId, Expr> = HashMap::new();
    rewrite_block(&mut task.body, &once, &mut known);
}

/// How often each local is assigned; a loop variable counts twice (it changes every
/// iteration).
fn count_assignments(body: &[Stmt], out: &mut HashMap<LocalId, usize>) {
    for stmt in body {
        match stmt {
            Stmt::SetLocal { local, .. } => *out.entry(*local).or_default() += 1,
            Stmt::For { local, body, .. } => {
                *out.entry(*local).or_default() += 2;
                count_assignments(body, out);
            }
            Stmt::While { body, .. } => count_assignments(body, out),
            Stmt::If {
                then_body,
                else_body,
                ..
            } => {
                count_assignments(then_body, out);
                count_assignments(else_body, out);
            }
            _ => {}
        }
    }
}

fn rewrite_block(
    body: &mut [Stmt],
    once: &dyn Fn(&LocalId) -> bool,
    known: &mut HashMap<LocalId, Expr>,
) {
    for stmt in body {
        match stmt {
            Stmt::SetLocal { local, value } => {
                substitute(value, known);
                let r = reads(value, &Scalars::default());
                if once(local) && !r.data {
                    known.insert(*local, value.clone());
                }
            }
            Stmt::If {
                cond,
                then_body,
                else_body,
            } => {
                substitute(cond, known);
                rewrite_block(then_body, once, known);
                rewrite_block(else_body, once, known);
            }
            Stmt::While { cond, body } => {
                substitute(cond, known);
                rewrite_block(body, once, known);
            }
            Stmt::For { lo, hi, body, .. } => {
                substitute(lo, known);
                substitute(hi, known);
                rewrite_block(body, once, known);
            }
            // Only conditions decide what runs; other expressions are left alone.
            _ => {}
        }
    }
}

fn substitute(expr: &mut Expr, known: &HashMap<LocalId, Expr>) {
    match expr {
        Expr::Local(l) => {
            if let Some(value) = known.get(l) {
                *expr = value.clone();
            }
        }
        Expr::Unary { operand, .. } => substitute(operand, known),
        Expr::Binary { lhs, rhs, .. } => {
            substitute(lhs, known);
            substitute(rhs, known);
        }
        Expr::Cast { value, .. } => substitute(value, known),
        Expr::Load { index, .. } => substitute(index, known),
        Expr::Select {
            cond,
            on_true,
            on_false,
            ..
        } => {
            substitute(cond, known);
            substitute(on_true, known);
            substitute(on_false, known);
        }
        Expr::Const(_) | Expr::Coord(_) | Expr::Math { .. } | Expr::Reduce { .. } => {}
    }
}
