//! Partial evaluation of kernel IR expressions on one PE: the PE's coordinates and the
//! region's size are known, everything read from SRAM or a task-local is not.
//!
//! The result is three-valued: `Some(value)` when the expression has that value on every run
//! of the PE, `None` when it may depend on data. `&&` and `||` are decided by one known
//! operand (`false && x` is false whatever `x`); every other operation with an unknown operand
//! is unknown. Integer arithmetic follows the IR's run-time rules (wrapping; division by zero
//! is unknown here, because it stops the run instead of producing a value). Float arithmetic
//! is not evaluated: coordinates decide control flow through integer comparisons.

use wsel_ir::kernel::{BinaryOp, Const, Coord, Expr, ScalarTy, UnaryOp};

/// A PE's logical position and its region's size, as the kernel reads them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CoordEnv {
    pub row: u32,
    pub col: u32,
    pub rows: u32,
    pub cols: u32,
}

/// The value of `expr` on the PE `env` (coordinates unknown when `env` is `None`).
pub(crate) fn eval(expr: &Expr, env: Option<&CoordEnv>) -> Option<Const> {
    match expr {
        Expr::Const(c) => Some(*c),
        Expr::Local(_) | Expr::Load { .. } | Expr::Reduce { .. } | Expr::Math { .. } => None,
        Expr::Coord(coord) => {
            let env = env?;
            Some(Const::u32(match coord {
                Coord::PeRow => env.row,
                Coord::PeCol => env.col,
                Coord::RegionRows => env.rows,
                Coord::RegionCols => env.cols,
            }))
        }
        Expr::Unary { op, ty, operand } => {
            let v = eval(operand, env)?;
            match (op, ty) {
                (UnaryOp::Not, ScalarTy::Bool) => Some(Const::bool(v.bits == 0)),
                (UnaryOp::Neg, ScalarTy::I32 | ScalarTy::U32) => Some(Const {
                    ty: *ty,
                    bits: v.bits.wrapping_neg(),
                }),
                _ => None,
            }
        }
        Expr::Binary { op, ty, lhs, rhs } => binary(*op, *ty, lhs, rhs, env),
        Expr::Select {
            cond,
            on_true,
            on_false,
            ..
        } => match eval_bool(cond, env) {
            Some(true) => eval(on_true, env),
            Some(false) => eval(on_false, env),
            None => Some(eval(on_true, env)?).filter(|a| eval(on_false, env) == Some(*a)),
        },
        Expr::Cast { from, to, value } => {
            let v = eval(value, env)?;
            match (from, to) {
                (a, b) if a == b => Some(v),
                (ScalarTy::I32 | ScalarTy::U32 | ScalarTy::Bool, ScalarTy::I32 | ScalarTy::U32) => {
                    Some(Const {
                        ty: *to,
                        bits: v.bits,
                    })
                }
                _ => None,
            }
        }
    }
}

/// The value of a boolean expression, if known.
pub(crate) fn eval_bool(expr: &Expr, env: Option<&CoordEnv>) -> Option<bool> {
    eval(expr, env).map(|c| c.bits != 0)
}

fn binary(
    op: BinaryOp,
    ty: ScalarTy,
    lhs: &Expr,
    rhs: &Expr,
    env: Option<&CoordEnv>,
) -> Option<Const> {
    if matches!(op, BinaryOp::And | BinaryOp::Or) {
        let (a, b) = (eval_bool(lhs, env), eval_bool(rhs, env));
        let decisive = op == BinaryOp::Or;
        return if a == Some(decisive) || b == Some(decisive) {
            Some(Const::bool(decisive))
        } else if a.is_some() && b.is_some() {
            Some(Const::bool(!decisive))
        } else {
            None
        };
    }
    let (a, b) = (eval(lhs, env)?.bits, eval(rhs, env)?.bits);
    let signed = ty == ScalarTy::I32;
    let int = |bits: u32| Some(Const { ty, bits });
    match ty {
        ScalarTy::I32 | ScalarTy::U32 => match op {
            BinaryOp::Add => int(a.wrapping_add(b)),
            BinaryOp::Sub => int(a.wrapping_sub(b)),
            BinaryOp::Mul => int(a.wrapping_mul(b)),
            BinaryOp::Div | BinaryOp::Rem if b == 0 => None,
            BinaryOp::Div if signed => int((a as i32).wrapping_div(b as i32) as u32),
            BinaryOp::Rem if signed => int((a as i32).wrapping_rem(b as i32) as u32),
            BinaryOp::Div => int(a / b),
            BinaryOp::Rem => int(a % b),
            BinaryOp::Min if signed => int((a as i32).min(b as i32) as u32),
            BinaryOp::Max if signed => int((a as i32).max(b as i32) as u32),
            BinaryOp::Min => int(a.min(b)),
            BinaryOp::Max => int(a.max(b)),
            cmp => {
                let ord = if signed {
                    (a as i32).cmp(&(b as i32))
                } else {
                    a.cmp(&b)
                };
                compare(cmp, ord)
            }
        },
        ScalarTy::Bool => match op {
            BinaryOp::Eq => Some(Const::bool(a == b)),
            BinaryOp::Ne => Some(Const::bool(a != b)),
            _ => None,
        },
        ScalarTy::F32 | ScalarTy::F16 => None,
    }
}

fn compare(op: BinaryOp, ord: std::cmp::Ordering) -> Option<Const> {
    use std::cmp::Ordering::{Equal, Greater, Less};
    let v = match op {
        BinaryOp::Eq => ord == Equal,
        BinaryOp::Ne => ord != Equal,
        BinaryOp::Lt => ord == Less,
        BinaryOp::Le => ord != Greater,
        BinaryOp::Gt => ord == Greater,
        BinaryOp::Ge => ord != Less,
        _ => return None,
    };
    Some(Const::bool(v))
}

/// Which coordinates an expression reads, and whether it reads anything else.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Reads {
    pub row: bool,
    pub col: bool,
    /// SRAM, a task-local, or a float function: a value the coordinates do not decide.
    pub data: bool,
}

pub(crate) fn reads(expr: &Expr) -> Reads {
    let mut r = Reads::default();
    visit_reads(expr, &mut r);
    r
}

fn visit_reads(expr: &Expr, r: &mut Reads) {
    match expr {
        Expr::Const(_) => {}
        Expr::Local(_) | Expr::Load { .. } | Expr::Reduce { .. } | Expr::Math { .. } => {
            r.data = true;
        }
        Expr::Coord(Coord::PeRow) => r.row = true,
        Expr::Coord(Coord::PeCol) => r.col = true,
        Expr::Coord(Coord::RegionRows | Coord::RegionCols) => {}
        Expr::Unary { operand, .. } => visit_reads(operand, r),
        Expr::Binary { lhs, rhs, .. } => {
            visit_reads(lhs, r);
            visit_reads(rhs, r);
        }
        Expr::Cast { value, .. } => visit_reads(value, r),
        Expr::Select {
            cond,
            on_true,
            on_false,
            ..
        } => {
            visit_reads(cond, r);
            visit_reads(on_true, r);
            visit_reads(on_false, r);
        }
    }
}

/// The **decisive atoms** of a condition: its largest subexpressions that read the PE's
/// coordinates and nothing else, in positions where their value can decide the condition
/// (the condition itself, or under `&&`, `||` and `!`). Any other use of a coordinate is
/// combined with data by an operation that is then unknown whatever the coordinate, so only
/// these atoms make PEs differ in what they can run.
pub(crate) fn decisive_atoms(cond: &Expr, out: &mut Vec<Expr>) {
    let r = reads(cond);
    if !r.data {
        if r.row || r.col {
            out.push(cond.clone());
        }
        return;
    }
    match cond {
        Expr::Binary {
            op: BinaryOp::And | BinaryOp::Or,
            lhs,
            rhs,
            ..
        } => {
            decisive_atoms(lhs, out);
            decisive_atoms(rhs, out);
        }
        Expr::Unary {
            op: UnaryOp::Not,
            operand,
            ..
        } => decisive_atoms(operand, out),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    const ENV: CoordEnv = CoordEnv {
        row: 0,
        col: 3,
        rows: 2,
        cols: 4,
    };

    #[test]
    fn coordinates_decide_comparisons_and_data_does_not() {
        let last = bin(
            BinaryOp::Eq,
            ScalarTy::U32,
            coord(Coord::PeCol),
            bin(BinaryOp::Sub, ScalarTy::U32, coord(Coord::RegionCols), u(1)),
        );
        assert_eq!(eval_bool(&last, Some(&ENV)), Some(true));
        assert_eq!(eval_bool(&last, None), None);
        let data = bin(
            BinaryOp::Lt,
            ScalarTy::U32,
            Expr::Load {
                array: wsel_ir::kernel::ArrayId(0),
                index: Box::new(u(0)),
            },
            u(3),
        );
        assert_eq!(eval_bool(&data, Some(&ENV)), None);
        let first_row = bin(BinaryOp::Eq, ScalarTy::U32, coord(Coord::PeRow), u(0));
        let not_first_row = Expr::Unary {
            op: UnaryOp::Not,
            ty: ScalarTy::Bool,
            operand: Box::new(first_row.clone()),
        };
        // `false && data` is false; `true && data` is unknown; `true || data` is true.
        let and = bin(
            BinaryOp::And,
            ScalarTy::Bool,
            not_first_row.clone(),
            data.clone(),
        );
        assert_eq!(eval_bool(&and, Some(&ENV)), Some(false));
        let and = bin(
            BinaryOp::And,
            ScalarTy::Bool,
            first_row.clone(),
            data.clone(),
        );
        assert_eq!(eval_bool(&and, Some(&ENV)), None);
        let or = bin(
            BinaryOp::Or,
            ScalarTy::Bool,
            data.clone(),
            first_row.clone(),
        );
        assert_eq!(eval_bool(&or, Some(&ENV)), Some(true));
        let mut atoms = Vec::new();
        decisive_atoms(&and, &mut atoms);
        assert_eq!(atoms, vec![first_row.clone()]);
        // A coordinate compared with data decides nothing.
        let mixed = bin(
            BinaryOp::Eq,
            ScalarTy::U32,
            coord(Coord::PeCol),
            Expr::Local(wsel_ir::kernel::LocalId(0)),
        );
        atoms.clear();
        decisive_atoms(&mixed, &mut atoms);
        assert!(atoms.is_empty());
    }

    #[test]
    fn integer_rules_follow_the_ir() {
        let div0 = bin(BinaryOp::Div, ScalarTy::U32, coord(Coord::PeRow), u(0));
        assert_eq!(eval(&div0, Some(&ENV)), None);
        let wrap = bin(BinaryOp::Sub, ScalarTy::U32, coord(Coord::PeRow), u(1));
        assert_eq!(eval(&wrap, Some(&ENV)), Some(Const::u32(u32::MAX)));
        let signed = bin(
            BinaryOp::Lt,
            ScalarTy::I32,
            Expr::Const(Const::i32(-1)),
            Expr::Const(Const::i32(0)),
        );
        assert_eq!(eval_bool(&signed, None), Some(true));
    }
}
