//! Lowering of task-body expressions: scalar expressions to `Expr`, the value of a vector
//! statement to `VExpr` (a slice operand is `VExpr::Elem`, a sub-expression without slices is
//! `VExpr::Scalar`, evaluated once), and slices.

use wsel_ir::kernel::{
    BinaryOp, Const, Coord, Expr, MathFn, ReduceOp, ScalarTy, Slice, UnaryOp, VExpr,
};
use wsel_syntax::ast::{self, Span};

use super::infer::{float_only, is_comparison, is_logic, is_reduction};
use super::{Lowerer, Member, NameRef, fold};
use crate::error::LowerError;
use crate::value::{scalar_ty, to_const};

type Lowered<T> = Result<T, LowerError>;

impl Lowerer<'_> {
    /// Lowers a scalar expression where the context wants `want`; gives it with its type.
    pub(super) fn expr(
        &mut self,
        expr: &ast::Expr,
        want: Option<ScalarTy>,
    ) -> Lowered<(Expr, ScalarTy)> {
        let inferred = self.infer(expr, want);
        if inferred.vector {
            return Err(self.error(
                &expr.span(),
                "a vector expression where the kernel IR needs a scalar (only a plain slice can be sent or reduced)",
            ));
        }
        let ty = inferred.elem.resolve(want);
        let lowered = match expr {
            ast::Expr::Int(v, span) => {
                self.literal(wsel_sema::ty::Value::Int(i128::from(*v)), ty, span)?
            }
            ast::Expr::Float(v, span) => self.literal(wsel_sema::ty::Value::Float(*v), ty, span)?,
            ast::Expr::Bool(v, _) => Expr::Const(Const::bool(*v)),
            ast::Expr::Name(id) => self.name(id)?,
            ast::Expr::Field { base, field, span } => {
                Expr::Coord(coord(base, field).ok_or_else(|| self.error(span, "an unknown field"))?)
            }
            ast::Expr::Unary { op, operand, .. } => {
                let (operand, ty) = self.expr(operand, Some(ty))?;
                fold::unary(unary_op(*op), ty, operand)
            }
            ast::Expr::Binary { op, lhs, rhs, .. } => {
                let operand_ty = self.operand_type(Some(*op), lhs, rhs, Some(ty));
                let (l, _) = self.expr(lhs, Some(operand_ty))?;
                let (r, _) = self.expr(rhs, Some(operand_ty))?;
                fold::binary(binary_op(*op), operand_ty, l, r)
            }
            ast::Expr::Cast { value, ty: to, .. } => {
                let from = self.infer(value, None).elem.resolve(None);
                let (value, from) = self.expr(value, Some(from))?;
                fold::cast(from, scalar_ty(*to), value)
            }
            ast::Expr::Index { base, index, .. } => {
                let array = self.array_of(base)?;
                let (index, _) = self.expr(index, Some(ScalarTy::U32))?;
                Expr::Load {
                    array,
                    index: Box::new(index),
                }
            }
            ast::Expr::Call {
                callee, args, span, ..
            } => self.call(callee, args, span, ty)?,
            ast::Expr::Slice { span, .. } | ast::Expr::Str(_, span) | ast::Expr::Error(span) => {
                return Err(self.error(span, "this expression has no scalar value"));
            }
        };
        Ok((lowered, ty))
    }

    /// Lowers the value of a vector statement whose elements have type `want`.
    pub(super) fn vexpr(&mut self, expr: &ast::Expr, want: ScalarTy) -> Lowered<VExpr> {
        let inferred = self.infer(expr, Some(want));
        if !inferred.vector {
            return Ok(VExpr::Scalar(self.expr(expr, Some(want))?.0));
        }
        let ty = inferred.elem.resolve(Some(want));
        Ok(match expr {
            ast::Expr::Slice { base, lo, hi, span } => {
                let slice = self.slice(base, lo, hi)?;
                self.slice_lens.push((slice.len.clone(), span.clone()));
                VExpr::Elem {
                    array: slice.array,
                    start: slice.start,
                }
            }
            ast::Expr::Unary { op, operand, .. } => VExpr::Unary {
                op: unary_op(*op),
                ty,
                operand: Box::new(self.vexpr(operand, ty)?),
            },
            ast::Expr::Binary { op, lhs, rhs, .. } => {
                let operand_ty = if is_comparison(*op) {
                    self.operand_type(Some(*op), lhs, rhs, None)
                } else if is_logic(*op) {
                    ScalarTy::Bool
                } else {
                    ty
                };
                VExpr::Binary {
                    op: binary_op(*op),
                    ty: operand_ty,
                    lhs: Box::new(self.vexpr(lhs, operand_ty)?),
                    rhs: Box::new(self.vexpr(rhs, operand_ty)?),
                }
            }
            ast::Expr::Cast { value, ty: to, .. } => {
                let from = self.infer(value, None).elem.resolve(None);
                let value = self.vexpr(value, from)?;
                let to = scalar_ty(*to);
                if from == to {
                    value
                } else {
                    VExpr::Cast {
                        from,
                        to,
                        value: Box::new(value),
                    }
                }
            }
            ast::Expr::Call {
                callee, args, span, ..
            } => match (callee.name.as_str(), args.as_slice()) {
                ("select", [cond, a, b]) => VExpr::Select {
                    ty,
                    cond: Box::new(self.vexpr(cond, ScalarTy::Bool)?),
                    on_true: Box::new(self.vexpr(a, ty)?),
                    on_false: Box::new(self.vexpr(b, ty)?),
                },
                ("max" | "min", [a, b]) => VExpr::Binary {
                    op: if callee.name == "max" {
                        BinaryOp::Max
                    } else {
                        BinaryOp::Min
                    },
                    ty,
                    lhs: Box::new(self.vexpr(a, ty)?),
                    rhs: Box::new(self.vexpr(b, ty)?),
                },
                (name, [arg]) => VExpr::Math {
                    func: math_fn(name).ok_or_else(|| self.error(span, "an unknown function"))?,
                    ty,
                    arg: Box::new(self.vexpr(arg, ty)?),
                },
                _ => return Err(self.error(span, "an unknown function")),
            },
            other => {
                return Err(self.error(&other.span(), "this vector expression cannot be lowered"));
            }
        })
    }

    /// Lowers `base[lo..hi]` to a slice `start = lo`, `len = hi - lo` (or `e` when `hi` is
    /// written `lo + e`).
    pub(super) fn slice(
        &mut self,
        base: &ast::Expr,
        lo: &ast::Expr,
        hi: &ast::Expr,
    ) -> Lowered<Slice> {
        let array = self.array_of(base)?;
        let (start, start_ty) = self.expr(lo, Some(ScalarTy::U32))?;
        let (end, end_ty) = self.expr(hi, Some(ScalarTy::U32))?;
        let len = match &end {
            Expr::Binary {
                op: BinaryOp::Add,
                lhs,
                rhs,
                ..
            } if **lhs == start => (**rhs).clone(),
            _ if start_ty == end_ty => fold::binary(BinaryOp::Sub, start_ty, end, start.clone()),
            _ => {
                let to_u32 = |e: Expr, ty: ScalarTy| fold::cast(ty, ScalarTy::U32, e);
                fold::binary(
                    BinaryOp::Sub,
                    ScalarTy::U32,
                    to_u32(end, end_ty),
                    to_u32(start.clone(), start_ty),
                )
            }
        };
        Ok(Slice { array, start, len })
    }

    /// The array a slice or index expression names.
    pub(super) fn array_of(&self, base: &ast::Expr) -> Lowered<wsel_ir::kernel::ArrayId> {
        if let ast::Expr::Name(id) = base
            && let Some(NameRef::Member(Member::Array { id, .. })) = self.resolve(&id.name)
        {
            return Ok(id);
        }
        Err(self.error(&base.span(), "not an array of this kernel"))
    }

    fn literal(&self, value: wsel_sema::ty::Value, ty: ScalarTy, span: &Span) -> Lowered<Expr> {
        to_const(value, ty)
            .map(Expr::Const)
            .ok_or_else(|| self.error(span, format!("the literal does not fit {}", ty.name())))
    }

    fn name(&self, id: &ast::Ident) -> Lowered<Expr> {
        let constant = |value, ty| {
            to_const(value, ty).map(Expr::Const).ok_or_else(|| {
                self.error(
                    &id.span,
                    format!("`{}` does not fit {}", id.name, ty.name()),
                )
            })
        };
        match self.resolve(&id.name) {
            Some(NameRef::Local(local, _)) => Ok(Expr::Local(local)),
            Some(NameRef::Member(Member::Value(value, ty)) | NameRef::Const(value, ty)) => {
                constant(value, scalar_ty(ty))
            }
            Some(NameRef::Member(Member::Scalar { id, .. })) => Ok(Expr::Load {
                array: id,
                index: Box::new(Expr::Const(Const::u32(0))),
            }),
            _ => Err(self.error(&id.span, format!("`{}` is not a scalar value", id.name))),
        }
    }

    fn call(
        &mut self,
        callee: &ast::Ident,
        args: &[ast::Expr],
        span: &Span,
        ty: ScalarTy,
    ) -> Lowered<Expr> {
        let name = callee.name.as_str();
        match args {
            [arg] if is_reduction(name, args) => {
                let ast::Expr::Slice { base, lo, hi, .. } = arg else {
                    return Err(self.error(
                        &arg.span(),
                        "the kernel IR reduces a plain slice only; compute this expression into an array first",
                    ));
                };
                let src = self.slice(base, lo, hi)?;
                let op = match name {
                    "sum" => ReduceOp::Sum,
                    "max" => ReduceOp::Max,
                    _ => ReduceOp::Min,
                };
                Ok(Expr::Reduce {
                    op,
                    ty,
                    src: Box::new(src),
                })
            }
            [total, parts, index] if name == "part_len" || name == "part_start" => {
                let [total, parts, index] = [total, parts, index]
                    .map(|a| self.expr(a, Some(ScalarTy::U32)).map(|(e, _)| e));
                Ok(part_expr(name == "part_start", total?, parts?, index?))
            }
            [cond, a, b] if name == "select" => {
                let value_ty = self.operand_type(None, a, b, Some(ty));
                let (cond, _) = self.expr(cond, Some(ScalarTy::Bool))?;
                let (on_true, _) = self.expr(a, Some(value_ty))?;
                let (on_false, _) = self.expr(b, Some(value_ty))?;
                Ok(Expr::Select {
                    ty: value_ty,
                    cond: Box::new(cond),
                    on_true: Box::new(on_true),
                    on_false: Box::new(on_false),
                })
            }
            [a, b] if name == "max" || name == "min" => {
                let operand_ty = self.operand_type(None, a, b, Some(ty));
                let (l, _) = self.expr(a, Some(operand_ty))?;
                let (r, _) = self.expr(b, Some(operand_ty))?;
                let op = if name == "max" {
                    BinaryOp::Max
                } else {
                    BinaryOp::Min
                };
                Ok(fold::binary(op, operand_ty, l, r))
            }
            [arg] => {
                let func = math_fn(name).ok_or_else(|| self.error(span, "an unknown function"))?;
                let arg_hint = if float_only(name) {
                    Some(ty).filter(|t| t.is_float()).or(Some(ScalarTy::F32))
                } else {
                    Some(ty)
                };
                let (arg, arg_ty) = self.expr(arg, arg_hint)?;
                Ok(Expr::Math {
                    func,
                    ty: arg_ty,
                    arg: Box::new(arg),
                })
            }
            _ => Err(self.error(span, "an unknown function")),
        }
    }
}

/// `part_len(total, parts, index)` as `(total + parts - 1 - index) / parts`, or
/// `part_start(...)` as `index * (total / parts) + min(index, total % parts)`, in `u32`
/// (`docs/mapping.md` §4; a zero `parts` stops the run as any division by zero does).
fn part_expr(start: bool, total: Expr, parts: Expr, index: Expr) -> Expr {
    let bin = |op, a, b| fold::binary(op, ScalarTy::U32, a, b);
    if start {
        let size = bin(BinaryOp::Div, total.clone(), parts.clone());
        let extra = bin(BinaryOp::Rem, total, parts);
        let before = bin(BinaryOp::Min, index.clone(), extra);
        bin(BinaryOp::Add, bin(BinaryOp::Mul, index, size), before)
    } else {
        let rounded = bin(
            BinaryOp::Sub,
            bin(BinaryOp::Add, total, parts.clone()),
            Expr::Const(Const::u32(1)),
        );
        bin(BinaryOp::Div, bin(BinaryOp::Sub, rounded, index), parts)
    }
}

fn coord(base: &ast::Expr, field: &ast::Ident) -> Option<Coord> {
    let ast::Expr::Name(base) = base else {
        return None;
    };
    match (base.name.as_str(), field.name.as_str()) {
        ("pe", "row") => Some(Coord::PeRow),
        ("pe", "col") => Some(Coord::PeCol),
        ("region", "rows") => Some(Coord::RegionRows),
        ("region", "cols") => Some(Coord::RegionCols),
        ("pe", "cycle") => Some(Coord::Cycle),
        _ => None,
    }
}

pub(super) fn unary_op(op: ast::UnaryOp) -> UnaryOp {
    match op {
        ast::UnaryOp::Neg => UnaryOp::Neg,
        ast::UnaryOp::Not => UnaryOp::Not,
    }
}

pub(super) fn binary_op(op: ast::BinaryOp) -> BinaryOp {
    match op {
        ast::BinaryOp::Add => BinaryOp::Add,
        ast::BinaryOp::Sub => BinaryOp::Sub,
        ast::BinaryOp::Mul => BinaryOp::Mul,
        ast::BinaryOp::Div => BinaryOp::Div,
        ast::BinaryOp::Rem => BinaryOp::Rem,
        ast::BinaryOp::Eq => BinaryOp::Eq,
        ast::BinaryOp::Ne => BinaryOp::Ne,
        ast::BinaryOp::Lt => BinaryOp::Lt,
        ast::BinaryOp::Le => BinaryOp::Le,
        ast::BinaryOp::Gt => BinaryOp::Gt,
        ast::BinaryOp::Ge => BinaryOp::Ge,
        ast::BinaryOp::And => BinaryOp::And,
        ast::BinaryOp::Or => BinaryOp::Or,
    }
}

fn math_fn(name: &str) -> Option<MathFn> {
    Some(match name {
        "exp" => MathFn::Exp,
        "log" => MathFn::Log,
        "sqrt" => MathFn::Sqrt,
        "tanh" => MathFn::Tanh,
        "abs" => MathFn::Abs,
        _ => return None,
    })
}
