//! Types of task-body expressions, derived as the checker derives them: literals take the type
//! their context needs (the `hint`), operands of arithmetic share a type, comparisons give
//! `bool`, and an expression that mentions a slice is a vector of its element type.

use wsel_ir::kernel::ScalarTy;
use wsel_syntax::ast::{self, BinaryOp};

use super::{Lowerer, Member, NameRef};
use crate::value::ElemTy;

/// The inferred type of an expression.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Inferred {
    pub elem: ElemTy,
    /// Whether the expression mentions a slice (outside a reduction).
    pub vector: bool,
}

impl Inferred {
    fn scalar(elem: ElemTy) -> Self {
        Inferred {
            elem,
            vector: false,
        }
    }
}

pub(super) fn is_comparison(op: BinaryOp) -> bool {
    matches!(
        op,
        BinaryOp::Eq | BinaryOp::Ne | BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge
    )
}

pub(super) fn is_logic(op: BinaryOp) -> bool {
    matches!(op, BinaryOp::And | BinaryOp::Or)
}

/// The math functions of one argument that take floats only.
pub(super) fn float_only(name: &str) -> bool {
    matches!(name, "exp" | "log" | "sqrt" | "tanh")
}

/// Whether a call is a reduction of one slice (`sum(s)`, `max(s)`, `min(s)`).
pub(super) fn is_reduction(name: &str, args: &[ast::Expr]) -> bool {
    name == "sum" || ((name == "max" || name == "min") && args.len() == 1)
}

impl Lowerer<'_> {
    /// The type of `expr` where the context wants `hint`.
    pub(super) fn infer(&self, expr: &ast::Expr, hint: Option<ScalarTy>) -> Inferred {
        match expr {
            ast::Expr::Int(..) => Inferred::scalar(ElemTy::literal(true, hint)),
            ast::Expr::Float(..) => Inferred::scalar(ElemTy::literal(false, hint)),
            ast::Expr::Bool(..) => Inferred::scalar(ElemTy::Known(ScalarTy::Bool)),
            ast::Expr::Name(id) => Inferred::scalar(match self.resolve(&id.name) {
                Some(NameRef::Local(_, ty)) => ElemTy::Known(ty),
                Some(NameRef::Const(_, ty) | NameRef::Member(Member::Value(_, ty))) => {
                    ElemTy::Known(crate::value::scalar_ty(ty))
                }
                Some(NameRef::Member(
                    Member::Scalar { elem: ty, .. } | Member::Array { elem: ty, .. },
                )) => ElemTy::Known(ty),
                _ => ElemTy::IntLit,
            }),
            ast::Expr::Field { .. } => Inferred::scalar(ElemTy::Known(ScalarTy::U32)),
            ast::Expr::Unary { operand, .. } => self.infer(operand, hint),
            ast::Expr::Binary { op, lhs, rhs, .. } => {
                let operand_hint = if is_comparison(*op) {
                    None
                } else if is_logic(*op) {
                    Some(ScalarTy::Bool)
                } else {
                    hint
                };
                let both = self.infer_operands(lhs, rhs, operand_hint);
                if is_comparison(*op) {
                    Inferred {
                        elem: ElemTy::Known(ScalarTy::Bool),
                        ..both
                    }
                } else {
                    both
                }
            }
            ast::Expr::Cast { value, ty, .. } => Inferred {
                elem: ElemTy::Known(crate::value::scalar_ty(*ty)),
                vector: self.infer(value, None).vector,
            },
            ast::Expr::Index { base, .. } => Inferred::scalar(self.infer(base, None).elem),
            ast::Expr::Slice { base, .. } => Inferred {
                elem: self.infer(base, None).elem,
                vector: true,
            },
            ast::Expr::Call { callee, args, .. } => {
                let name = callee.name.as_str();
                match args.as_slice() {
                    [arg] if is_reduction(name, args) => {
                        Inferred::scalar(self.infer(arg, hint).elem)
                    }
                    [_, _, _] if name == "part_len" || name == "part_start" => {
                        Inferred::scalar(ElemTy::Known(ScalarTy::U32))
                    }
                    [cond, a, b] if name == "select" => {
                        let values = self.infer_operands(a, b, hint);
                        Inferred {
                            vector: values.vector || self.infer(cond, None).vector,
                            ..values
                        }
                    }
                    [a, b] => self.infer_operands(a, b, hint),
                    [arg] => {
                        let arg_hint = if float_only(name) {
                            hint.filter(|t| t.is_float()).or(Some(ScalarTy::F32))
                        } else {
                            hint
                        };
                        self.infer(arg, arg_hint)
                    }
                    _ => Inferred::scalar(ElemTy::IntLit),
                }
            }
            ast::Expr::Str(..) | ast::Expr::Error(_) => Inferred::scalar(ElemTy::IntLit),
        }
    }

    /// The common type of two operands: the left one is typed first, and its type (when
    /// known) is the right one's hint.
    pub(super) fn infer_operands(
        &self,
        lhs: &ast::Expr,
        rhs: &ast::Expr,
        hint: Option<ScalarTy>,
    ) -> Inferred {
        let l = self.infer(lhs, hint);
        let r = self.infer(rhs, l.elem.known().or(hint));
        Inferred {
            elem: l.elem.unify(r.elem),
            vector: l.vector || r.vector,
        }
    }

    /// The concrete operand type of a binary operation (or two-argument `max`/`min`) whose
    /// result is wanted as `want`.
    pub(super) fn operand_type(
        &self,
        op: Option<BinaryOp>,
        lhs: &ast::Expr,
        rhs: &ast::Expr,
        want: Option<ScalarTy>,
    ) -> ScalarTy {
        match op {
            Some(op) if is_comparison(op) => self.infer_operands(lhs, rhs, None).elem.resolve(None),
            Some(op) if is_logic(op) => ScalarTy::Bool,
            _ => self.infer_operands(lhs, rhs, want).elem.resolve(want),
        }
    }
}
