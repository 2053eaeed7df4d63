//! A vector statement's value with its scalar parts evaluated once, up front: the tree every
//! backend walks per element. Backends differ only in their leaves (a computed scalar, and a
//! source slice's checked start and base), so the tree and the walk that builds it are shared.

use wsel_ir::kernel::{ArrayId, BinaryOp, Expr, MathFn, ScalarTy, UnaryOp, VExpr};

/// What is left to compute per element. `V` is a backend's scalar value, `S` a slice start,
/// `B` the location of a slice's element 0 (meaningful once the slice is checked).
pub(crate) enum Prepared<V, S, B> {
    Value(V),
    Elem {
        array: ArrayId,
        start: S,
        base: B,
    },
    Unary {
        op: UnaryOp,
        ty: ScalarTy,
        operand: Box<Prepared<V, S, B>>,
    },
    Binary {
        op: BinaryOp,
        ty: ScalarTy,
        lhs: Box<Prepared<V, S, B>>,
        rhs: Box<Prepared<V, S, B>>,
    },
    Cast {
        from: ScalarTy,
        to: ScalarTy,
        value: Box<Prepared<V, S, B>>,
    },
    Math {
        func: MathFn,
        ty: ScalarTy,
        arg: Box<Prepared<V, S, B>>,
    },
    Select {
        cond: Box<Prepared<V, S, B>>,
        on_true: Box<Prepared<V, S, B>>,
        on_false: Box<Prepared<V, S, B>>,
    },
}

impl<V, S: Copy, B> Prepared<V, S, B> {
    /// Calls `visit` with every source slice (array and start) in order, left to right: the
    /// order every backend checks them in.
    pub(crate) fn try_for_each_source<E>(
        &self,
        visit: &mut impl FnMut(ArrayId, S) -> Result<(), E>,
    ) -> Result<(), E> {
        match self {
            Prepared::Value(_) => Ok(()),
            Prepared::Elem { array, start, .. } => visit(*array, *start),
            Prepared::Unary { operand: a, .. }
            | Prepared::Cast { value: a, .. }
            | Prepared::Math { arg: a, .. } => a.try_for_each_source(visit),
            Prepared::Binary { lhs, rhs, .. } => {
                lhs.try_for_each_source(visit)?;
                rhs.try_for_each_source(visit)
            }
            Prepared::Select {
                cond,
                on_true,
                on_false,
                ..
            } => {
                cond.try_for_each_source(visit)?;
                on_true.try_for_each_source(visit)?;
                on_false.try_for_each_source(visit)
            }
        }
    }
}

/// How a backend computes the leaves of a [`Prepared`] tree.
pub(crate) trait PrepareLeaves {
    type Value;
    type Start;
    type Base;
    type Error;

    /// A scalar operand, evaluated once before the loop.
    fn scalar(&mut self, expr: &Expr) -> Result<Self::Value, Self::Error>;

    /// A source slice `array[start..]`: its start and the location of its element 0.
    fn elem(
        &mut self,
        array: ArrayId,
        start: &Expr,
    ) -> Result<(Self::Start, Self::Base), Self::Error>;
}

/// The tree a backend's leaves build.
pub(crate) type PreparedBy<L> =
    Prepared<<L as PrepareLeaves>::Value, <L as PrepareLeaves>::Start, <L as PrepareLeaves>::Base>;

/// Evaluates the scalar parts of `value`, left to right, and keeps the element-wise rest.
pub(crate) fn prepare<L: PrepareLeaves>(
    leaves: &mut L,
    value: &VExpr,
) -> Result<PreparedBy<L>, L::Error> {
    Ok(match value {
        VExpr::Scalar(expr) => Prepared::Value(leaves.scalar(expr)?),
        VExpr::Elem { array, start } => {
            let (start, base) = leaves.elem(*array, start)?;
            Prepared::Elem {
                array: *array,
                start,
                base,
            }
        }
        VExpr::Unary { op, ty, operand } => Prepared::Unary {
            op: *op,
            ty: *ty,
            operand: Box::new(prepare(leaves, operand)?),
        },
        VExpr::Binary { op, ty, lhs, rhs } => {
            let lhs = Box::new(prepare(leaves, lhs)?);
            let rhs = Box::new(prepare(leaves, rhs)?);
            Prepared::Binary {
                op: *op,
                ty: *ty,
                lhs,
                rhs,
            }
        }
        VExpr::Cast { from, to, value } => Prepared::Cast {
            from: *from,
            to: *to,
            value: Box::new(prepare(leaves, value)?),
        },
        VExpr::Math { func, ty, arg } => Prepared::Math {
            func: *func,
            ty: *ty,
            arg: Box::new(prepare(leaves, arg)?),
        },
        VExpr::Select {
            cond,
            on_true,
            on_false,
            ..
        } => {
            let cond = Box::new(prepare(leaves, cond)?);
            let on_true = Box::new(prepare(leaves, on_true)?);
            let on_false = Box::new(prepare(leaves, on_false)?);
            Prepared::Select {
                cond,
                on_true,
                on_false,
            }
        }
    })
}
