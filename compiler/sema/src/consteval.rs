//! Compile-time constant evaluation, the one set of rules the checker and lowering share:
//! literals take the type their context needs, integer arithmetic is exact and every
//! intermediate result must fit its type, float arithmetic is done in `f64` (a value is
//! rounded to its type only where it is stored, by whoever stores it).
//!
//! The checker applies the rules node by node while it types an expression
//! ([`crate::check::expr`]) and reports an [`EvalError`] as E0203 or E0204 at the node.
//! [`eval`] and [`eval_as`] apply them to a whole expression whose compile-time names a
//! [`ConstNames`] gives, as lowering does once a kernel's parameters are bound; their
//! errors print as one phrase ("the value 6000000000 does not fit u32").

use std::fmt;

use wsel_syntax::ast::{self, BinaryOp, ScalarType, UnaryOp};

use crate::ty::{Ty, Value, int_range, is_float, is_int, scalar_name};

/// The compile-time names visible to an expression.
pub trait ConstNames {
    /// The value and type of `name`, if it is a compile-time value.
    fn const_name(&self, name: &str) -> Option<(Value, ScalarType)>;
}

/// The element type of an operand: a known scalar type, or an integer or float literal whose
/// type no context has fixed yet. `Error` is an operand the checker has already reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Elem {
    Known(ScalarType),
    Int,
    Float,
    Error,
}

impl Elem {
    /// The known scalar type, if there is one.
    pub fn known(self) -> Option<ScalarType> {
        match self {
            Elem::Known(t) => Some(t),
            _ => None,
        }
    }

    /// The scalar [`Ty`] of a value of this element type.
    pub fn scalar_ty(self) -> Ty {
        match self {
            Elem::Known(t) => Ty::Scalar(t),
            Elem::Int => Ty::IntLiteral,
            Elem::Float => Ty::FloatLiteral,
            Elem::Error => Ty::Error,
        }
    }
}

/// Why a compile-time expression has no value. `Display` gives the phrase lowering puts in
/// its errors; the checker reports `Overflow`, `OutOfRange` as E0203 and `DivisionByZero`
/// as E0204 (it reports the others as type errors before evaluating).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EvalError {
    /// An exact integer result beyond what any integer type holds.
    Overflow,
    /// A division or remainder by zero.
    DivisionByZero,
    /// An integer value outside the range of its type (`ty` is its name; an untyped integer
    /// literal must fit `i64` or `u64` and is named `i64`).
    OutOfRange { value: i128, ty: &'static str },
    /// A name that is not a compile-time value.
    NotCompileTime(String),
    /// An expression that has no compile-time value (an index, a field, a math function).
    NotConstant,
    /// A unary operator applied to a value of the wrong kind.
    InvalidOperand,
    /// A binary operator (or `min`/`max`) applied to values of the wrong kinds.
    InvalidOperands,
    /// The expression's type is not the one wanted.
    Mismatch {
        expected: ScalarType,
        found: ScalarType,
    },
}

impl fmt::Display for EvalError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            EvalError::Overflow => write!(f, "the value overflows"),
            EvalError::DivisionByZero => write!(f, "division by zero"),
            EvalError::OutOfRange { value, ty } => write!(f, "the value {value} does not fit {ty}"),
            EvalError::NotCompileTime(name) => write!(f, "`{name}` is not a compile-time value"),
            EvalError::NotConstant => write!(f, "this expression is not a compile-time value"),
            EvalError::InvalidOperand => write!(f, "invalid operand"),
            EvalError::InvalidOperands => write!(f, "invalid operands"),
            EvalError::Mismatch { expected, found } => write!(
                f,
                "expected a {} value, found {}",
                scalar_name(*expected),
                scalar_name(*found)
            ),
        }
    }
}

/// Evaluates `expr` as a value of type `ty`.
pub fn eval_as(
    names: &dyn ConstNames,
    expr: &ast::Expr,
    ty: ScalarType,
) -> Result<Value, EvalError> {
    let (value, elem) = eval(names, expr, Some(ty))?;
    // A literal the context could not type takes its default type (`i32`, `f32`).
    let found = match elem {
        Elem::Known(t) => t,
        Elem::Int if is_int(ty) => ty,
        Elem::Float if is_float(ty) => ty,
        Elem::Int => ScalarType::I32,
        Elem::Float | Elem::Error => ScalarType::F32,
    };
    if found != ty {
        return Err(EvalError::Mismatch {
            expected: ty,
            found,
        });
    }
    Ok(value)
}

/// Evaluates `expr` where the context wants `hint`; gives the value and its element type.
pub fn eval(
    names: &dyn ConstNames,
    expr: &ast::Expr,
    hint: Option<ScalarType>,
) -> Result<(Value, Elem), EvalError> {
    let (value, elem) = match expr {
        ast::Expr::Int(v, _) => (Value::Int(i128::from(*v)), literal_elem(true, hint)),
        ast::Expr::Float(v, _) => (Value::Float(*v), literal_elem(false, hint)),
        ast::Expr::Bool(v, _) => (Value::Bool(*v), Elem::Known(ScalarType::Bool)),
        ast::Expr::Name(id) => match names.const_name(&id.name) {
            Some((value, ty)) => (value, Elem::Known(ty)),
            None => return Err(EvalError::NotCompileTime(id.name.clone())),
        },
        ast::Expr::Unary { op, operand, .. } => {
            let (value, elem) = eval(names, operand, hint)?;
            (unary(*op, value)?, elem)
        }
        ast::Expr::Binary { op, lhs, rhs, .. } => {
            let (a, b, elem) = operands(names, lhs, rhs, operand_hint(*op, hint))?;
            (fold(*op, a, b)?, result_elem(*op, elem))
        }
        ast::Expr::Cast { value, ty, .. } => {
            let (inner, _) = eval(names, value, None)?;
            (cast(inner, *ty), Elem::Known(*ty))
        }
        ast::Expr::Call { callee, args, .. }
            if (callee.name == "max" || callee.name == "min") && args.len() == 2 =>
        {
            let (a, b, elem) = operands(names, &args[0], &args[1], hint)?;
            (extreme(callee.name == "max", a, b)?, elem)
        }
        ast::Expr::Call { callee, args, .. }
            if crate::builtins::PART_FUNCTIONS.contains(&callee.name.as_str())
                && args.len() == 3 =>
        {
            let size = |a: &ast::Expr| -> Result<u64, EvalError> {
                let value = eval_as(names, a, ScalarType::U32)?;
                value.as_size().ok_or(EvalError::NotConstant)
            };
            let (total, parts, index) = (size(&args[0])?, size(&args[1])?, size(&args[2])?);
            let start = callee.name == "part_start";
            let value = crate::builtins::part(start, total, parts, index)
                .ok_or(EvalError::DivisionByZero)?;
            (Value::Int(value.into()), Elem::Known(ScalarType::U32))
        }
        _ => return Err(EvalError::NotConstant),
    };
    check_range(value, elem)?;
    Ok((value, elem))
}

/// The element type of a literal (`int`: an integer literal, else a float literal) where
/// the context wants `hint`: the hint when it is of the literal's kind, else untyped.
pub fn literal_elem(int: bool, hint: Option<ScalarType>) -> Elem {
    match hint {
        Some(t) if int && is_int(t) => Elem::Known(t),
        Some(t) if !int && is_float(t) => Elem::Known(t),
        _ if int => Elem::Int,
        _ => Elem::Float,
    }
}

/// Whether `op` compares its operands (and gives `bool`).
pub fn is_comparison(op: BinaryOp) -> bool {
    matches!(
        op,
        BinaryOp::Eq | BinaryOp::Ne | BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge
    )
}

/// The type the operands of `op` are wanted as when its result is wanted as `hint`:
/// comparisons fix nothing, `&&` and `||` want `bool`, arithmetic passes the hint on. The
/// right operand then wants the left one's type when that is known.
pub fn operand_hint(op: BinaryOp, hint: Option<ScalarType>) -> Option<ScalarType> {
    if is_comparison(op) {
        None
    } else if matches!(op, BinaryOp::And | BinaryOp::Or) {
        Some(ScalarType::Bool)
    } else {
        hint
    }
}

/// The element type of the result of `op` on operands of the common type `operands`.
pub fn result_elem(op: BinaryOp, operands: Elem) -> Elem {
    if is_comparison(op) {
        Elem::Known(ScalarType::Bool)
    } else {
        operands
    }
}

/// The common type of two operands, if they have one: a literal takes the other operand's
/// type when it is of the literal's kind; an operand already reported unifies with anything.
pub fn unify(a: Elem, b: Elem) -> Option<Elem> {
    match (a, b) {
        (Elem::Error, _) | (_, Elem::Error) => Some(Elem::Error),
        (Elem::Known(x), Elem::Known(y)) => (x == y).then_some(a),
        (Elem::Known(x), Elem::Int) | (Elem::Int, Elem::Known(x)) => {
            is_int(x).then_some(Elem::Known(x))
        }
        (Elem::Known(x), Elem::Float) | (Elem::Float, Elem::Known(x)) => {
            is_float(x).then_some(Elem::Known(x))
        }
        (Elem::Int, Elem::Int) => Some(Elem::Int),
        (Elem::Float, Elem::Float) => Some(Elem::Float),
        (Elem::Int, Elem::Float) | (Elem::Float, Elem::Int) => None,
    }
}

/// One binary operation on two known values: exact for integers (an error where the exact
/// result overflows `i128`, or the divisor is zero), in `f64` for floats. The result's range
/// is checked separately ([`check_range`]).
pub fn fold(op: BinaryOp, a: Value, b: Value) -> Result<Value, EvalError> {
    use Value::{Bool, Float, Int};
    if is_comparison(op) {
        return compare(op, a, b)
            .map(Bool)
            .ok_or(EvalError::InvalidOperands);
    }
    Ok(match (a, b) {
        (Int(x), Int(y)) => {
            let exact = match op {
                BinaryOp::Add => x.checked_add(y),
                BinaryOp::Sub => x.checked_sub(y),
                BinaryOp::Mul => x.checked_mul(y),
                BinaryOp::Div | BinaryOp::Rem if y == 0 => return Err(EvalError::DivisionByZero),
                BinaryOp::Div => x.checked_div(y),
                BinaryOp::Rem => x.checked_rem(y),
                _ => return Err(EvalError::InvalidOperands),
            };
            Int(exact.ok_or(EvalError::Overflow)?)
        }
        (Float(x), Float(y)) => Float(match op {
            BinaryOp::Add => x + y,
            BinaryOp::Sub => x - y,
            BinaryOp::Mul => x * y,
            BinaryOp::Div if y == 0.0 => return Err(EvalError::DivisionByZero),
            BinaryOp::Div => x / y,
            _ => return Err(EvalError::InvalidOperands),
        }),
        (Bool(x), Bool(y)) => Bool(match op {
            BinaryOp::And => x && y,
            BinaryOp::Or => x || y,
            _ => return Err(EvalError::InvalidOperands),
        }),
        _ => return Err(EvalError::InvalidOperands),
    })
}

/// `-value` or `!value`.
pub fn unary(op: UnaryOp, value: Value) -> Result<Value, EvalError> {
    match (op, value) {
        (UnaryOp::Neg, Value::Int(v)) => v.checked_neg().map(Value::Int).ok_or(EvalError::Overflow),
        (UnaryOp::Neg, Value::Float(v)) => Ok(Value::Float(-v)),
        (UnaryOp::Not, Value::Bool(v)) => Ok(Value::Bool(!v)),
        _ => Err(EvalError::InvalidOperand),
    }
}

/// `value as to`: integers become floats exactly as `f64` holds them, floats become
/// integers truncated toward zero (the range is checked separately); anything else keeps its
/// value.
pub fn cast(value: Value, to: ScalarType) -> Value {
    match value {
        Value::Int(v) if is_float(to) => Value::Float(v as f64),
        Value::Float(v) if is_int(to) => Value::Int(v.trunc() as i128),
        other => other,
    }
}

/// `max(a, b)` (`is_max`) or `min(a, b)` of two numbers: on a tie, or floats that do not
/// compare, `b`.
pub fn extreme(is_max: bool, a: Value, b: Value) -> Result<Value, EvalError> {
    let a_greater = compare(BinaryOp::Gt, a, b).ok_or(EvalError::InvalidOperands)?;
    Ok(if is_max == a_greater { a } else { b })
}

/// Whether an integer `value` fits its element type: a known integer type's range, or for
/// an untyped literal the range of `i64` and `u64` together. Other values always fit.
pub fn check_range(value: Value, elem: Elem) -> Result<(), EvalError> {
    let Value::Int(v) = value else {
        return Ok(());
    };
    let (lo, hi, ty) = match elem {
        Elem::Known(t) if is_int(t) => {
            let (lo, hi) = int_range(t);
            (lo, hi, scalar_name(t))
        }
        Elem::Int => (i128::from(i64::MIN), i128::from(u64::MAX), "i64"),
        _ => return Ok(()),
    };
    if v < lo || v > hi {
        return Err(EvalError::OutOfRange { value: v, ty });
    }
    Ok(())
}

/// Evaluates two operands, the left first (its known type is the right one's hint); gives
/// their values and common type.
fn operands(
    names: &dyn ConstNames,
    lhs: &ast::Expr,
    rhs: &ast::Expr,
    hint: Option<ScalarType>,
) -> Result<(Value, Value, Elem), EvalError> {
    let (a, ta) = eval(names, lhs, hint)?;
    let (b, tb) = eval(names, rhs, ta.known().or(hint))?;
    let elem = unify(ta, tb).ok_or(EvalError::InvalidOperands)?;
    Ok((a, b, elem))
}

/// The comparison `op` of two numbers, or (`==`, `!=` only) two booleans; `None` for other
/// operands. Floats compare as IEEE numbers: NaN is unequal to everything and neither less
/// nor greater.
fn compare(op: BinaryOp, a: Value, b: Value) -> Option<bool> {
    use std::cmp::Ordering::{Equal, Greater, Less};
    let ordering = match (a, b) {
        (Value::Int(x), Value::Int(y)) => x.partial_cmp(&y),
        (Value::Float(x), Value::Float(y)) => x.partial_cmp(&y),
        (Value::Bool(x), Value::Bool(y)) if matches!(op, BinaryOp::Eq | BinaryOp::Ne) => {
            x.partial_cmp(&y)
        }
        _ => return None,
    };
    match op {
        BinaryOp::Eq => Some(ordering == Some(Equal)),
        BinaryOp::Ne => Some(ordering != Some(Equal)),
        BinaryOp::Lt => Some(ordering == Some(Less)),
        BinaryOp::Le => Some(matches!(ordering, Some(Less | Equal))),
        BinaryOp::Gt => Some(ordering == Some(Greater)),
        BinaryOp::Ge => Some(matches!(ordering, Some(Greater | Equal))),
        _ => None,
    }
}
