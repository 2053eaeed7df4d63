//! Partial evaluation of kernel IR expressions on one PE: the PE's coordinates and the
//! region's size are known; other values are known by their **range** (`facts`): an SRAM
//! scalar by the values stored into it, a loop variable by its bounds, anything else by its
//! type (`u32`: 0 ..= 2^32 - 1).
//!
//! The result is three-valued: `Some(value)` when the expression has that value on every run
//! of the PE, `None` when it may depend on data. Integer operations work on ranges, following
//! the IR's run-time rules: a result that may wrap is any value of its type; a division whose
//! divisor may be zero may stop the run and is unknown. A comparison is decided when the
//! ranges of its operands settle it (`0 > k` is false for every `u32` `k`), `&&` and `||` by
//! one known operand (`false && x` is false whatever `x`). Float arithmetic is not evaluated:
//! coordinates decide control flow through integer comparisons.
//!
//! One condition leaf that reads data and *both* coordinates is never decided: the PE classes
//! ([`classes`](crate::classes)) then need not separate PEs by it one by one.

use wsel_ir::kernel::{BinaryOp, Const, Coord, Expr, ScalarTy, Task, UnaryOp};

use crate::facts::{Scalars, type_range};

/// A PE's logical position and its region's size, as the kernel reads them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CoordEnv {
    pub row: u32,
    pub col: u32,
    pub rows: u32,
    pub cols: u32,
}

/// The values an integer or `bool` expression may take: `lo ..= hi`, as numbers (`u32` and
/// `i32` by their value, `bool` as 0 and 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Range {
    pub lo: i64,
    pub hi: i64,
}

impl Range {
    fn exact(v: i64) -> Range {
        Range { lo: v, hi: v }
    }

    fn union(self, other: Range) -> Range {
        Range {
            lo: self.lo.min(other.lo),
            hi: self.hi.max(other.hi),
        }
    }

    fn known(self) -> Option<i64> {
        (self.lo == self.hi).then_some(self.lo)
    }
}

/// Where an expression is evaluated: the PE (unknown when `None`), the kernel's scalars and
/// the task's locals with their ranges.
#[derive(Clone, Copy)]
pub(crate) struct Ctx<'a> {
    pub env: Option<&'a CoordEnv>,
    pub scalars: &'a Scalars,
    pub task: &'a Task,
    pub locals: &'a [Option<Range>],
    /// How many scalars' stored values are being evaluated (a stored value reading another
    /// scalar is not followed further).
    depth: u8,
}

impl<'a> Ctx<'a> {
    pub(crate) fn new(
        env: Option<&'a CoordEnv>,
        scalars: &'a Scalars,
        task: &'a Task,
        locals: &'a [Option<Range>],
    ) -> Ctx<'a> {
        Ctx {
            env,
            scalars,
            task,
            locals,
            depth: 0,
        }
    }
}

/// The value of `expr` on the PE, when it has one value on every run.
pub(crate) fn eval(expr: &Expr, ctx: &Ctx<'_>) -> Option<Const> {
    let ty = type_of(expr, ctx)?;
    let v = range(expr, ctx)?.known()?;
    Some(Const { ty, bits: v as u32 })
}

/// The value of a boolean condition, if known. A leaf reading data and both coordinates is
/// unknown (see the module doc).
pub(crate) fn eval_bool(expr: &Expr, ctx: &Ctx<'_>) -> Option<bool> {
    match expr {
        Expr::Binary {
            op: op @ (BinaryOp::And | BinaryOp::Or),
            ty: ScalarTy::Bool,
            lhs,
            rhs,
        } => {
            let (a, b) = (eval_bool(lhs, ctx), eval_bool(rhs, ctx));
            let decisive = *op == BinaryOp::Or;
            if a == Some(decisive) || b == Some(decisive) {
                Some(decisive)
            } else {
                a.zip(b).map(|_| !decisive)
            }
        }
        Expr::Unary {
            op: UnaryOp::Not,
            ty: ScalarTy::Bool,
            operand,
        } => eval_bool(operand, ctx).map(|v| !v),
        leaf => {
            let r = reads(leaf, ctx.scalars);
            if r.data && r.row && r.col {
                return None;
            }
            range(leaf, ctx)?.known().map(|v| v != 0)
        }
    }
}

/// The range of an integer or `bool` expression; `None` for floats.
pub(crate) fn range(expr: &Expr, ctx: &Ctx<'_>) -> Option<Range> {
    let ty = type_of(expr, ctx)?;
    let full = type_range(ty)?;
    let within = |r: Range| {
        if r.lo >= full.lo && r.hi <= full.hi {
            r
        } else {
            full
        }
    };
    Some(match expr {
        Expr::Const(c) => Range::exact(number(c.ty, c.bits)),
        Expr::Coord(coord) => match ctx.env {
            Some(env) => Range::exact(i64::from(match coord {
                Coord::PeRow => env.row,
                Coord::PeCol => env.col,
                Coord::RegionRows => env.rows,
                Coord::RegionCols => env.cols,
                // The PE's clock may be anything.
                Coord::Cycle => return Some(full),
            })),
            None => full,
        },
        Expr::Local(l) => ctx
            .locals
            .get(l.0 as usize)
            .copied()
            .flatten()
            .unwrap_or(full),
        Expr::Load { array, .. } => scalar_range(*array, ctx).unwrap_or(full),
        Expr::Unary { op, operand, .. } => {
            let a = range(operand, ctx)?;
            match (op, ty) {
                (UnaryOp::Not, ScalarTy::Bool) => Range {
                    lo: 1 - a.hi,
                    hi: 1 - a.lo,
                },
                (UnaryOp::Neg, ScalarTy::I32) => within(Range {
                    lo: -a.hi,
                    hi: -a.lo,
                }),
                _ => full,
            }
        }
        Expr::Binary { op, ty, lhs, rhs } => binary(*op, *ty, lhs, rhs, ctx).unwrap_or(full),
        Expr::Cast { from, value, .. } if !from.is_float() => within(range(value, ctx)?),
        Expr::Select {
            cond,
            on_true,
            on_false,
            ..
        } => match eval_bool(cond, ctx) {
            Some(true) => range(on_true, ctx)?,
            Some(false) => range(on_false, ctx)?,
            None => range(on_true, ctx)?.union(range(on_false, ctx)?),
        },
        Expr::Cast { .. } | Expr::Math { .. } | Expr::Reduce { .. } => full,
    })
}

/// The range of a binary operation with operands of type `ty`; `None` where it is any value
/// of its result type.
fn binary(op: BinaryOp, ty: ScalarTy, lhs: &Expr, rhs: &Expr, ctx: &Ctx<'_>) -> Option<Range> {
    if ty == ScalarTy::Bool && matches!(op, BinaryOp::And | BinaryOp::Or) {
        let cond = Expr::Binary {
            op,
            ty,
            lhs: Box::new(lhs.clone()),
            rhs: Box::new(rhs.clone()),
        };
        return eval_bool(&cond, ctx).map(|v| Range::exact(i64::from(v)));
    }
    let (a, b) = (range(lhs, ctx)?, range(rhs, ctx)?);
    if op.is_comparison() {
        return compare(op, a, b).map(|v| Range::exact(i64::from(v)));
    }
    let full = type_range(ty)?;
    let r = match op {
        BinaryOp::Add => Range {
            lo: a.lo + b.lo,
            hi: a.hi + b.hi,
        },
        BinaryOp::Sub => Range {
            lo: a.lo - b.hi,
            hi: a.hi - b.lo,
        },
        BinaryOp::Mul if a.lo >= 0 && b.lo >= 0 => Range {
            lo: a.lo.checked_mul(b.lo)?,
            hi: a.hi.checked_mul(b.hi)?,
        },
        // A divisor that may be zero may stop the run: unknown.
        BinaryOp::Div if a.lo >= 0 && b.lo > 0 => Range {
            lo: a.lo / b.hi,
            hi: a.hi / b.lo,
        },
        BinaryOp::Rem if a.lo >= 0 && b.lo > 0 => match (a.known(), b.known()) {
            (Some(x), Some(y)) => Range::exact(x % y),
            _ => Range {
                lo: 0,
                hi: a.hi.min(b.hi - 1),
            },
        },
        BinaryOp::Min => Range {
            lo: a.lo.min(b.lo),
            hi: a.hi.min(b.hi),
        },
        BinaryOp::Max => Range {
            lo: a.lo.max(b.lo),
            hi: a.hi.max(b.hi),
        },
        _ => return None,
    };
    (r.lo >= full.lo && r.hi <= full.hi).then_some(r)
}

/// Whether `a op b` holds for every pair of values of the ranges (`Some(true)`), for none
/// (`Some(false)`), or either way (`None`).
fn compare(op: BinaryOp, a: Range, b: Range) -> Option<bool> {
    let always_less = a.hi < b.lo;
    let never_less = a.lo >= b.hi;
    let always_greater = a.lo > b.hi;
    let never_greater = a.hi <= b.lo;
    let equal = a.known().is_some() && a.known() == b.known();
    let disjoint = a.hi < b.lo || b.hi < a.lo;
    let decide = |yes: bool, no: bool| {
        if yes {
            Some(true)
        } else if no {
            Some(false)
        } else {
            None
        }
    };
    match op {
        BinaryOp::Lt => decide(always_less, never_less),
        BinaryOp::Ge => decide(never_less, always_less),
        BinaryOp::Gt => decide(always_greater, never_greater),
        BinaryOp::Le => decide(never_greater, always_greater),
        BinaryOp::Eq => decide(equal, disjoint),
        BinaryOp::Ne => decide(disjoint, equal),
        _ => None,
    }
}

/// The range of a load of `array`: when it is a scalar whose stored values are known, the
/// union of its initial value and their ranges (on this PE, without the task's locals; a
/// scalar read by a stored value is not followed).
fn scalar_range(array: wsel_ir::kernel::ArrayId, ctx: &Ctx<'_>) -> Option<Range> {
    let (init, stored) = ctx.scalars.stores(array)?;
    if ctx.depth > 0 {
        return None;
    }
    let inner = Ctx {
        locals: &[],
        depth: ctx.depth + 1,
        ..*ctx
    };
    let mut r = Range::exact(number(init.ty, init.bits));
    for value in stored {
        r = r.union(range(value, &inner)?);
    }
    Some(r)
}

/// The number a constant's bits stand for (`i32` signed, others unsigned).
fn number(ty: ScalarTy, bits: u32) -> i64 {
    match ty {
        ScalarTy::I32 => i64::from(bits as i32),
        _ => i64::from(bits),
    }
}

/// The type of `expr`'s value.
fn type_of(expr: &Expr, ctx: &Ctx<'_>) -> Option<ScalarTy> {
    Some(match expr {
        Expr::Const(c) => c.ty,
        Expr::Coord(_) => ScalarTy::U32,
        Expr::Local(l) => ctx.task.locals.get(l.0 as usize)?.ty,
        Expr::Load { array, .. } => *ctx.scalars.elems.get(array.0 as usize)?,
        Expr::Binary { op, .. } if op.is_comparison() => ScalarTy::Bool,
        Expr::Unary { ty, .. }
        | Expr::Binary { ty, .. }
        | Expr::Math { ty, .. }
        | Expr::Reduce { ty, .. }
        | Expr::Select { ty, .. } => *ty,
        Expr::Cast { to, .. } => *to,
    })
}

/// Which coordinates an expression reads, and whether it reads anything else.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Reads {
    pub row: bool,
    pub col: bool,
    /// SRAM, a task-local, or a float function: a value the coordinates do not decide.
    pub data: bool,
}

/// What `expr` reads; a load of an SRAM scalar reads what the values stored into it read
/// (one level: a scalar read by a stored value counts as data).
pub(crate) fn reads(expr: &Expr, scalars: &Scalars) -> Reads {
    let mut r = Reads::default();
    visit_reads(expr, scalars, true, &mut r);
    r
}

fn visit_reads(expr: &Expr, scalars: &Scalars, follow: bool, r: &mut Reads) {
    match expr {
        Expr::Const(_) => {}
        Expr::Load { array, .. } => {
            r.data = true;
            if follow && let Some((_, stored)) = scalars.stores(*array) {
                for value in stored {
                    visit_reads(value, scalars, false, r);
                }
            }
        }
        Expr::Local(_) | Expr::Reduce { .. } | Expr::Math { .. } | Expr::Coord(Coord::Cycle) => {
            r.data = true
        }
        Expr::Coord(Coord::PeRow) => r.row = true,
        Expr::Coord(Coord::PeCol) => r.col = true,
        Expr::Coord(Coord::RegionRows | Coord::RegionCols) => {}
        Expr::Unary { operand, .. } | Expr::Cast { value: operand, .. } => {
            visit_reads(operand, scalars, follow, r)
        }
        Expr::Binary { lhs, rhs, .. } => {
            visit_reads(lhs, scalars, follow, r);
            visit_reads(rhs, scalars, follow, r);
        }
        Expr::Select {
            cond,
            on_true,
            on_false,
            ..
        } => {
            for e in [cond, on_true, on_false] {
                visit_reads(e, scalars, follow, r);
            }
        }
    }
}

/// The **decisive atoms** of a condition: its leaves under `&&`, `||` and `!` that read a
/// coordinate (directly or through an SRAM scalar stored from one), where the coordinate can
/// decide the condition — with data beside it only when it reads one coordinate. Any other
/// leaf is decided alike on every PE (or never), so only these atoms make PEs differ in what
/// they can run.
pub(crate) fn decisive_atoms(cond: &Expr, scalars: &Scalars, out: &mut Vec<Expr>) {
    match cond {
        Expr::Binary {
            op: BinaryOp::And | BinaryOp::Or,
            ty: ScalarTy::Bool,
            lhs,
            rhs,
        } => {
            decisive_atoms(lhs, scalars, out);
            decisive_atoms(rhs, scalars, out);
        }
        Expr::Unary {
            op: UnaryOp::Not,
            operand,
            ..
        } => decisive_atoms(operand, scalars, out),
        leaf => {
            let r = reads(leaf, scalars);
            if (r.row || r.col) && !(r.data && r.row && r.col) {
                out.push(leaf.clone());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use wsel_ir::kernel::{ArrayId, Local, LocalId};

    fn coord(c: Coord) -> Expr {
        Expr::Coord(c)
    }
    fn u(v: u32) -> Expr {
        Expr::Const(Const::u32(v))
    }
    fn bin(op: BinaryOp, ty: ScalarTy, a: Expr, b: Expr) -> Expr {
        Expr::Binary {
            op,
            ty,
            lhs: Box::new(a),
            rhs: Box::new(b),
        }
    }
    /// A `u32` SRAM scalar whose stores are unknown.
    fn load() -> Expr {
        Expr::Load {
            array: ArrayId(0),
            index: Box::new(u(0)),
        }
    }
    const ENV: CoordEnv = CoordEnv {
        row: 0,
        col: 3,
        rows: 2,
        cols: 4,
    };

    /// Evaluates `check` in a kernel with one `u32` local (of range `local`) and one `u32`
    /// SRAM scalar that may hold anything.
    fn with_ctx(env: Option<&CoordEnv>, local: Option<Range>, check: impl FnOnce(&Ctx<'_>)) {
        let task = Task {
            name: "t".into(),
            locals: vec![Local {
                name: "k".into(),
                ty: ScalarTy::U32,
            }],
            body: Vec::new(),
        };
        let scalars = Scalars {
            values: vec![None],
            elems: vec![ScalarTy::U32],
        };
        let locals = [local];
        check(&Ctx::new(env, &scalars, &task, &locals));
    }

    #[test]
    fn coordinates_decide_comparisons_and_data_does_not() {
        let last = bin(
            BinaryOp::Eq,
            ScalarTy::U32,
            coord(Coord::PeCol),
            bin(BinaryOp::Sub, ScalarTy::U32, coord(Coord::RegionCols), u(1)),
        );
        let data = bin(BinaryOp::Lt, ScalarTy::U32, load(), u(3));
        let first_row = bin(BinaryOp::Eq, ScalarTy::U32, coord(Coord::PeRow), u(0));
        let not_first_row = Expr::Unary {
            op: UnaryOp::Not,
            ty: ScalarTy::Bool,
            operand: Box::new(first_row.clone()),
        };
        with_ctx(Some(&ENV), None, |ctx| {
            assert_eq!(eval_bool(&last, ctx), Some(true));
            assert_eq!(eval_bool(&data, ctx), None);
            // `false && data` is false; `true && data` is unknown; `true || data` is true.
            let and = bin(
                BinaryOp::And,
                ScalarTy::Bool,
                not_first_row.clone(),
                data.clone(),
            );
            assert_eq!(eval_bool(&and, ctx), Some(false));
            let and = bin(
                BinaryOp::And,
                ScalarTy::Bool,
                first_row.clone(),
                data.clone(),
            );
            assert_eq!(eval_bool(&and, ctx), None);
            let or = bin(
                BinaryOp::Or,
                ScalarTy::Bool,
                data.clone(),
                first_row.clone(),
            );
            assert_eq!(eval_bool(&or, ctx), Some(true));
            let mut atoms = Vec::new();
            decisive_atoms(&and, ctx.scalars, &mut atoms);
            assert_eq!(atoms, vec![first_row.clone()]);
        });
        with_ctx(None, None, |ctx| assert_eq!(eval_bool(&last, ctx), None));
    }

    #[test]
    fn ranges_decide_what_coordinates_settle_beside_data() {
        // `pe.col > k`: false on column 0 for every `u32` k, unknown elsewhere.
        let past = |k: Expr| bin(BinaryOp::Gt, ScalarTy::U32, coord(Coord::PeCol), k);
        let col0 = CoordEnv { col: 0, ..ENV };
        with_ctx(Some(&col0), None, |ctx| {
            assert_eq!(eval_bool(&past(load()), ctx), Some(false));
            assert_eq!(eval_bool(&past(Expr::Local(LocalId(0))), ctx), Some(false));
        });
        with_ctx(Some(&ENV), None, |ctx| {
            assert_eq!(eval_bool(&past(load()), ctx), None);
        });
        // A loop counter k in 0 ..= 2 on column 3: `pe.col > k` always holds.
        let counter = Some(Range { lo: 0, hi: 2 });
        with_ctx(Some(&ENV), counter, |ctx| {
            assert_eq!(eval_bool(&past(Expr::Local(LocalId(0))), ctx), Some(true));
        });
        // The atom reads one coordinate (and data): it separates columns.
        with_ctx(Some(&ENV), None, |ctx| {
            let mut atoms = Vec::new();
            decisive_atoms(&past(load()), ctx.scalars, &mut atoms);
            assert_eq!(atoms.len(), 1);
            // With both coordinates beside data it is never decided, and no atom.
            let both = bin(
                BinaryOp::Gt,
                ScalarTy::U32,
                bin(
                    BinaryOp::Add,
                    ScalarTy::U32,
                    coord(Coord::PeRow),
                    coord(Coord::PeCol),
                ),
                load(),
            );
            let origin = CoordEnv {
                row: 0,
                col: 0,
                ..ENV
            };
            assert_eq!(
                eval_bool(
                    &both,
                    &Ctx {
                        env: Some(&origin),
                        ..*ctx
                    }
                ),
                None
            );
            atoms.clear();
            decisive_atoms(&both, ctx.scalars, &mut atoms);
            assert!(atoms.is_empty());
        });
    }

    #[test]
    fn integer_rules_follow_the_ir() {
        let div0 = bin(BinaryOp::Div, ScalarTy::U32, coord(Coord::PeRow), u(0));
        let wrap = bin(BinaryOp::Sub, ScalarTy::U32, coord(Coord::PeRow), u(1));
        let signed = bin(
            BinaryOp::Lt,
            ScalarTy::I32,
            Expr::Const(Const::i32(-1)),
            Expr::Const(Const::i32(0)),
        );
        with_ctx(Some(&ENV), None, |ctx| {
            assert_eq!(eval(&div0, ctx), None);
            // 0 - 1 wraps: any u32, not a known value.
            assert_eq!(eval(&wrap, ctx), None);
            assert_eq!(eval_bool(&signed, ctx), Some(true));
        });
        let row1 = CoordEnv { row: 1, ..ENV };
        with_ctx(Some(&row1), None, |ctx| {
            assert_eq!(eval(&wrap, ctx), Some(Const::u32(0)));
        });
    }
}
