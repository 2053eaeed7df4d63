//! What the checks know about values that are not coordinates: the range of every SRAM scalar
//! (the values it can hold: its initial value and everything stored into it) and of every
//! task-local whose value is fixed by its definition (a loop variable: its loop's bounds; a
//! local assigned once: that value) — so that a condition mixing a coordinate with such a
//! value (`pe.col > k`, `k` a loop counter or an SRAM counter) can be decided where the
//! coordinate alone settles it (`pe.col == 0`: `0 > k` is false for every `u32` `k`).
//!
//! A value read from the fabric (`recv` into a scalar), changed in place (`+=`, a vector
//! statement), loaded from a tensor (`bind t to array s`) or of a float type gets the whole
//! range of its type. Ranges of locals are kept
//! only where their definitions read no coordinate, so they are the same on every PE and the
//! PE classes need not know about them.

use wsel_ir::kernel::{ArrayId, AssignOp, Const, Expr, KernelIr, LocalId, ScalarTy, Stmt, Task};

use crate::eval::{CoordEnv, Ctx, Range, range, reads};

/// The facts of one kernel: its scalars, and the ranges of every task's locals.
#[derive(Debug, Clone, Default)]
pub(crate) struct Facts {
    pub scalars: Scalars,
    /// Per task, per local.
    pub locals: Vec<Vec<Option<Range>>>,
}

impl Facts {
    /// The facts of `ir`, whose arrays named in `loaded` get a bound tensor's values at launch.
    pub(crate) fn of(ir: &KernelIr, loaded: &[&str]) -> Facts {
        let scalars = Scalars::of(ir, loaded);
        let locals = ir
            .tasks
            .iter()
            .map(|task| local_ranges(task, &scalars))
            .collect();
        Facts { scalars, locals }
    }

    /// Where to evaluate an expression of task `task` of `ir`, on the PE `env`.
    pub(crate) fn ctx<'a>(
        &'a self,
        ir: &'a KernelIr,
        task: usize,
        env: Option<&'a CoordEnv>,
    ) -> Ctx<'a> {
        let locals = self.locals.get(task).map_or(&[][..], Vec::as_slice);
        Ctx::new(env, &self.scalars, &ir.tasks[task], locals)
    }
}

/// What every SRAM scalar of a kernel may hold.
#[derive(Debug, Clone, Default)]
pub(crate) struct Scalars {
    /// Per array: `None` when it is not a scalar or any value may be in it; else its initial
    /// value and the values stored into it.
    pub values: Vec<Option<(Const, Vec<Expr>)>>,
    /// Per array: its element type.
    pub elems: Vec<ScalarTy>,
}

impl Scalars {
    /// The facts of `ir`'s scalars; those named in `loaded` hold a bound tensor's value from
    /// launch on, not their initial value.
    pub(crate) fn of(ir: &KernelIr, loaded: &[&str]) -> Scalars {
        let mut values: Vec<Option<(Const, Vec<Expr>)>> = ir
            .arrays
            .iter()
            .map(|a| {
                let known = a.len == 1 && !a.elem.is_float() && !loaded.contains(&a.name.as_str());
                known.then(|| (a.init, Vec::new()))
            })
            .collect();
        for task in &ir.tasks {
            collect_stores(&task.body, &mut values);
        }
        let elems = ir.arrays.iter().map(|a| a.elem).collect();
        Scalars { values, elems }
    }

    /// The values stored into `array` besides its initial value, if they are all known.
    pub(crate) fn stores(&self, array: ArrayId) -> Option<&(Const, Vec<Expr>)> {
        self.values.get(array.0 as usize)?.as_ref()
    }
}

fn collect_stores(body: &[Stmt], values: &mut [Option<(Const, Vec<Expr>)>]) {
    fn forget(values: &mut [Option<(Const, Vec<Expr>)>], array: ArrayId) {
        if let Some(v) = values.get_mut(array.0 as usize) {
            *v = None;
        }
    }
    for stmt in body {
        match stmt {
            Stmt::Store {
                array,
                op: AssignOp::Set,
                value,
                ..
            } => {
                if let Some(Some((_, stored))) = values.get_mut(array.0 as usize) {
                    stored.push(value.clone());
                }
            }
            Stmt::Store { array, .. } => forget(values, *array),
            Stmt::Vector { dst, .. } | Stmt::Recv { dst, .. } => forget(values, dst.array),
            Stmt::For { body, .. } | Stmt::While { body, .. } => collect_stores(body, values),
            Stmt::If {
                then_body,
                else_body,
                ..
            } => {
                collect_stores(then_body, values);
                collect_stores(else_body, values);
            }
            _ => {}
        }
    }
}

/// The range of every local of `task` whose definition fixes it without reading coordinates:
/// a loop variable (from its bounds), a local assigned once (from its value). `None` for the
/// others, which may hold any value of their type.
pub(crate) fn local_ranges(task: &Task, scalars: &Scalars) -> Vec<Option<Range>> {
    let mut assigned = vec![0u32; task.locals.len()];
    count(&task.body, &mut assigned);
    let mut ranges = vec![None; task.locals.len()];
    define(&task.body, task, scalars, &assigned, &mut ranges);
    ranges
}

fn count(body: &[Stmt], assigned: &mut [u32]) {
    for stmt in body {
        match stmt {
            Stmt::SetLocal { local, .. } => bump(assigned, *local),
            Stmt::For { local, body, .. } => {
                bump(assigned, *local);
                count(body, assigned);
            }
            Stmt::While { body, .. } => count(body, assigned),
            Stmt::If {
                then_body,
                else_body,
                ..
            } => {
                count(then_body, assigned);
                count(else_body, assigned);
            }
            _ => {}
        }
    }
}

fn bump(assigned: &mut [u32], local: LocalId) {
    if let Some(n) = assigned.get_mut(local.0 as usize) {
        *n += 1;
    }
}

/// Sets the ranges of the locals defined in `body`, in order (a definition may use earlier
/// ones).
fn define(
    body: &[Stmt],
    task: &Task,
    scalars: &Scalars,
    assigned: &[u32],
    ranges: &mut Vec<Option<Range>>,
) {
    for stmt in body {
        let fixed = |ranges: &Vec<Option<Range>>, value: &Expr| {
            let ctx = Ctx::new(None, scalars, task, ranges);
            let r = reads(value, scalars);
            if r.row || r.col {
                None
            } else {
                range(value, &ctx)
            }
        };
        match stmt {
            Stmt::SetLocal { local, value } if assigned.get(local.0 as usize) == Some(&1) => {
                let r = fixed(ranges, value);
                ranges[local.0 as usize] = r;
            }
            Stmt::For {
                local,
                lo,
                hi,
                body,
            } => {
                if assigned.get(local.0 as usize) == Some(&1)
                    && let (Some(lo), Some(hi)) = (fixed(ranges, lo), fixed(ranges, hi))
                {
                    // The body runs with lo <= local < hi.
                    ranges[local.0 as usize] = (lo.lo < hi.hi).then(|| Range {
                        lo: lo.lo,
                        hi: hi.hi - 1,
                    });
                }
                define(body, task, scalars, assigned, ranges);
            }
            Stmt::While { body, .. } => define(body, task, scalars, assigned, ranges),
            Stmt::If {
                then_body,
                else_body,
                ..
            } => {
                define(then_body, task, scalars, assigned, ranges);
                define(else_body, task, scalars, assigned, ranges);
            }
            _ => {}
        }
    }
}

/// The values of a scalar type, as a range; `None` for floats.
pub(crate) fn type_range(ty: ScalarTy) -> Option<Range> {
    Some(match ty {
        ScalarTy::U32 => Range {
            lo: 0,
            hi: i64::from(u32::MAX),
        },
        ScalarTy::I32 => Range {
            lo: i64::from(i32::MIN),
            hi: i64::from(i32::MAX),
        },
        ScalarTy::Bool => Range { lo: 0, hi: 1 },
        ScalarTy::F32 | ScalarTy::F16 => return None,
    })
}
