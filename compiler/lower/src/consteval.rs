//! Compile-time evaluation of kernel member declarations (array lengths, initialisers,
//! constants) once the kernel's parameters are known. Typing follows the checker (literals take
//! the type the context needs); integer arithmetic is exact and every intermediate result must
//! fit its type, float arithmetic is done in `f64` and rounded when the value is stored —
//! the same rules as the checker's constant evaluation.

use wsel_ir::kernel::ScalarTy;
use wsel_sema::ty::Value;
use wsel_syntax::ast::{self, BinaryOp, UnaryOp};

use crate::value::{ElemTy, int_range, is_int, scalar_ty};

/// The compile-time names visible to an expression.
pub trait ConstNames {
    /// The value and type of `name`, if it is a compile-time value.
    fn const_name(&self, name: &str) -> Option<(Value, ScalarTy)>;
}

/// Evaluates `expr` as a value of type `ty`.
pub fn eval_as(names: &dyn ConstNames, expr: &ast::Expr, ty: ScalarTy) -> Result<Value, String> {
    let (value, elem) = eval(names, expr, Some(ty))?;
    let found = elem.resolve(Some(ty));
    if found != ty {
        return Err(format!(
            "expected a {} value, found {}",
            ty.name(),
            found.name()
        ));
    }
    Ok(value)
}

/// Evaluates `expr` where the context wants `hint`; gives the value and its type.
pub fn eval(
    names: &dyn ConstNames,
    expr: &ast::Expr,
    hint: Option<ScalarTy>,
) -> Result<(Value, ElemTy), String> {
    match expr {
        ast::Expr::Int(v, _) => {
            let ty = ElemTy::literal(true, hint);
            let value = Value::Int(i128::from(*v));
            check_range(value, ty)?;
            Ok((value, ty))
        }
        ast::Expr::Float(v, _) => Ok((Value::Float(*v), ElemTy::literal(false, hint))),
        ast::Expr::Bool(v, _) => Ok((Value::Bool(*v), ElemTy::Known(ScalarTy::Bool))),
        ast::Expr::Name(id) => match names.const_name(&id.name) {
            Some((value, ty)) => Ok((value, ElemTy::Known(ty))),
            None => Err(format!("`{}` is not a compile-time value", id.name)),
        },
        ast::Expr::Unary { op, operand, .. } => {
            let (value, ty) = eval(names, operand, hint)?;
            let value = match (op, value) {
                (UnaryOp::Neg, Value::Int(v)) => Value::Int(-v),
                (UnaryOp::Neg, Value::Float(v)) => Value::Float(-v),
                (UnaryOp::Not, Value::Bool(v)) => Value::Bool(!v),
                _ => return Err("invalid operand".into()),
            };
            check_range(value, ty)?;
            Ok((value, ty))
        }
        ast::Expr::Binary { op, lhs, rhs, .. } => binary(names, *op, lhs, rhs, hint),
        ast::Expr::Cast { value, ty, .. } => {
            let (inner, _) = eval(names, value, None)?;
            let to = scalar_ty(*ty);
            let converted = match inner {
                Value::Int(v) if to.is_float() => Value::Float(v as f64),
                Value::Float(v) if is_int(to) => Value::Int(v.trunc() as i128),
                other => other,
            };
            check_range(converted, ElemTy::Known(to))?;
            Ok((converted, ElemTy::Known(to)))
        }
        ast::Expr::Call { callee, args, .. }
            if (callee.name == "max" || callee.name == "min") && args.len() == 2 =>
        {
            let (a, ta, b, tb) = operands(names, &args[0], &args[1], hint)?;
            let pick_a = match (a, b) {
                (Value::Int(x), Value::Int(y)) => (callee.name == "max") == (x > y),
                (Value::Float(x), Value::Float(y)) => (callee.name == "max") == (x > y),
                _ => return Err("invalid operands".into()),
            };
            Ok((if pick_a { a } else { b }, ta.unify(tb)))
        }
        _ => Err("this expression is not a compile-time value".into()),
    }
}

fn operands(
    names: &dyn ConstNames,
    lhs: &ast::Expr,
    rhs: &ast::Expr,
    hint: Option<ScalarTy>,
) -> Result<(Value, ElemTy, Value, ElemTy), String> {
    let (a, ta) = eval(names, lhs, hint)?;
    let (b, tb) = eval(names, rhs, ta.known().or(hint))?;
    Ok((a, ta, b, tb))
}

fn binary(
    names: &dyn ConstNames,
    op: BinaryOp,
    lhs: &ast::Expr,
    rhs: &ast::Expr,
    hint: Option<ScalarTy>,
) -> Result<(Value, ElemTy), String> {
    let cmp = matches!(
        op,
        BinaryOp::Eq | BinaryOp::Ne | BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge
    );
    let logic = matches!(op, BinaryOp::And | BinaryOp::Or);
    let operand_hint = if cmp {
        None
    } else if logic {
        Some(ScalarTy::Bool)
    } else {
        hint
    };
    let (a, ta, b, tb) = operands(names, lhs, rhs, operand_hint)?;
    let elem = ta.unify(tb);
    let value = fold(op, a, b)?;
    let ty = if cmp {
        ElemTy::Known(ScalarTy::Bool)
    } else {
        elem
    };
    check_range(value, ty)?;
    Ok((value, ty))
}

/// One operation on two known values, exactly (integers) or in `f64` (floats).
pub fn fold(op: BinaryOp, a: Value, b: Value) -> Result<Value, String> {
    use Value::{Bool, Float, Int};
    let overflow = || "the value overflows".to_string();
    Ok(match (a, b) {
        (Int(x), Int(y)) => match op {
            BinaryOp::Add => Int(x.checked_add(y).ok_or_else(overflow)?),
            BinaryOp::Sub => Int(x.checked_sub(y).ok_or_else(overflow)?),
            BinaryOp::Mul => Int(x.checked_mul(y).ok_or_else(overflow)?),
            BinaryOp::Div | BinaryOp::Rem if y == 0 => return Err("division by zero".into()),
            BinaryOp::Div => Int(x.checked_div(y).ok_or_else(overflow)?),
            BinaryOp::Rem => Int(x.checked_rem(y).ok_or_else(overflow)?),
            BinaryOp::Eq => Bool(x == y),
            BinaryOp::Ne => Bool(x != y),
            BinaryOp::Lt => Bool(x < y),
            BinaryOp::Le => Bool(x <= y),
            BinaryOp::Gt => Bool(x > y),
            BinaryOp::Ge => Bool(x >= y),
            BinaryOp::And | BinaryOp::Or => return Err("invalid operands".into()),
        },
        (Float(x), Float(y)) => match op {
            BinaryOp::Add => Float(x + y),
            BinaryOp::Sub => Float(x - y),
            BinaryOp::Mul => Float(x * y),
            BinaryOp::Div if y == 0.0 => return Err("division by zero".into()),
            BinaryOp::Div => Float(x / y),
            BinaryOp::Eq => Bool(x == y),
            BinaryOp::Ne => Bool(x != y),
            BinaryOp::Lt => Bool(x < y),
            BinaryOp::Le => Bool(x <= y),
            BinaryOp::Gt => Bool(x > y),
            BinaryOp::Ge => Bool(x >= y),
            _ => return Err("invalid operands".into()),
        },
        (Bool(x), Bool(y)) => match op {
            BinaryOp::And => Bool(x && y),
            BinaryOp::Or => Bool(x || y),
            BinaryOp::Eq => Bool(x == y),
            BinaryOp::Ne => Bool(x != y),
            _ => return Err("invalid operands".into()),
        },
        _ => return Err("invalid operands".into()),
    })
}

fn check_range(value: Value, ty: ElemTy) -> Result<(), String> {
    if let (Value::Int(v), ElemTy::Known(t)) = (value, ty)
        && is_int(t)
    {
        let (lo, hi) = int_range(t);
        if v < lo || v > hi {
            return Err(format!("the value {v} does not fit {}", t.name()));
        }
    }
    Ok(())
}
