//! Semantic types and compile-time values, with the printed forms used in messages and hovers.

use std::fmt;

use wsel_syntax::ast::ScalarType;

/// The printed name of a scalar type.
pub fn scalar_name(ty: ScalarType) -> &'static str {
    match ty {
        ScalarType::F32 => "f32",
        ScalarType::F16 => "f16",
        ScalarType::I32 => "i32",
        ScalarType::U32 => "u32",
        ScalarType::Bool => "bool",
    }
}

pub fn is_float(ty: ScalarType) -> bool {
    matches!(ty, ScalarType::F32 | ScalarType::F16)
}

pub fn is_int(ty: ScalarType) -> bool {
    matches!(ty, ScalarType::I32 | ScalarType::U32)
}

pub fn is_numeric(ty: ScalarType) -> bool {
    is_float(ty) || is_int(ty)
}

/// A compile-time value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Value {
    /// Any integer, held wide; it has been checked against its type's range.
    Int(i128),
    Float(f64),
    Bool(bool),
}

impl Eq for Value {}

/// Hashes what `==` compares: equal floats (`0.0` and `-0.0` too) hash alike.
impl std::hash::Hash for Value {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        std::mem::discriminant(self).hash(state);
        match self {
            Value::Int(v) => v.hash(state),
            Value::Float(v) => (if *v == 0.0 { 0 } else { v.to_bits() }).hash(state),
            Value::Bool(v) => v.hash(state),
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Int(v) => write!(f, "{v}"),
            Value::Float(v) => write!(f, "{v:?}"),
            Value::Bool(v) => write!(f, "{v}"),
        }
    }
}

impl Value {
    /// The value as a non-negative size, if it is one.
    pub fn as_size(self) -> Option<u64> {
        match self {
            Value::Int(v) => u64::try_from(v).ok(),
            _ => None,
        }
    }
}

/// The range of an integer type, for overflow checks.
pub fn int_range(ty: ScalarType) -> (i128, i128) {
    match ty {
        ScalarType::I32 => (i128::from(i32::MIN), i128::from(i32::MAX)),
        _ => (0, i128::from(u32::MAX)),
    }
}

/// One dimension of a tensor type: a known size, a symbolic variable (`B`), or — in a layer's
/// output only — an integer expression of the layer's dimension variables and scalar inputs
/// (`heads * context`), evaluated at each call (docs/language.md §6.1).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Dim {
    Known(u64),
    Var(String),
    Expr(DimExpr),
}

impl fmt::Display for Dim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Dim::Known(n) => write!(f, "{n}"),
            Dim::Var(v) => write!(f, "{v}"),
            Dim::Expr(e) => write!(f, "{e}"),
        }
    }
}

impl Dim {
    /// The size of this dimension at a call, given the values of the names it may use
    /// (`value`): `Ok(None)` for a variable `value` does not know.
    pub fn size_at(&self, value: &dyn Fn(&str) -> Option<i128>) -> Result<Option<u64>, DimError> {
        match self {
            Dim::Known(n) => Ok(Some(*n)),
            Dim::Var(v) => Ok(value(v).and_then(|n| u64::try_from(n).ok())),
            Dim::Expr(e) => {
                let n = e.eval(value)?;
                match u64::try_from(n) {
                    Ok(n) if n > 0 && n <= u64::from(u32::MAX) => Ok(Some(n)),
                    _ => Err(DimError::NotPositive(n)),
                }
            }
        }
    }
}

/// An integer arithmetic operator of a dimension expression.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DimOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
}

/// An output dimension expression: integer literals (module constants folded in), dimension
/// variables and integer scalar inputs, combined with `+ - * / %` (all in `u32` at a call).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum DimExpr {
    Const(u64),
    Name(String),
    Bin(DimOp, Box<DimExpr>, Box<DimExpr>),
}

/// Why a dimension expression has no size at a call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DimError {
    /// It uses a name whose value the call does not fix (a symbolic model dimension).
    Unknown(String),
    /// A division or remainder by zero.
    DivisionByZero,
    /// Its value is zero, negative or above `u32::MAX`.
    NotPositive(i128),
}

impl DimExpr {
    /// The names the expression uses, in order, each once.
    pub fn names(&self) -> Vec<&str> {
        let mut out = Vec::new();
        self.collect_names(&mut out);
        out
    }

    fn collect_names<'a>(&'a self, out: &mut Vec<&'a str>) {
        match self {
            DimExpr::Const(_) => {}
            DimExpr::Name(n) => {
                if !out.contains(&n.as_str()) {
                    out.push(n);
                }
            }
            DimExpr::Bin(_, a, b) => {
                a.collect_names(out);
                b.collect_names(out);
            }
        }
    }

    /// The value, with `value` giving each name's (truncating division; intermediate
    /// results are exact, so only the final value is range-checked).
    pub fn eval(&self, value: &dyn Fn(&str) -> Option<i128>) -> Result<i128, DimError> {
        match self {
            DimExpr::Const(n) => Ok(i128::from(*n)),
            DimExpr::Name(n) => value(n).ok_or_else(|| DimError::Unknown(n.clone())),
            DimExpr::Bin(op, a, b) => {
                let (a, b) = (a.eval(value)?, b.eval(value)?);
                let big = || DimError::NotPositive(i128::MAX);
                match op {
                    DimOp::Add => a.checked_add(b).ok_or_else(big),
                    DimOp::Sub => a.checked_sub(b).ok_or_else(big),
                    DimOp::Mul => a.checked_mul(b).ok_or_else(big),
                    DimOp::Div => a.checked_div(b).ok_or(DimError::DivisionByZero),
                    DimOp::Rem => a.checked_rem(b).ok_or(DimError::DivisionByZero),
                }
            }
        }
    }
}

impl fmt::Display for DimExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DimExpr::Const(n) => write!(f, "{n}"),
            DimExpr::Name(n) => write!(f, "{n}"),
            DimExpr::Bin(op, a, b) => {
                let sym = match op {
                    DimOp::Add => "+",
                    DimOp::Sub => "-",
                    DimOp::Mul => "*",
                    DimOp::Div => "/",
                    DimOp::Rem => "%",
                };
                // Operands that are themselves operations are parenthesised, so the printed
                // form reads back with the same meaning whatever the precedence.
                let side = |e: &DimExpr| match e {
                    DimExpr::Bin(..) => format!("({e})"),
                    _ => e.to_string(),
                };
                write!(f, "{} {sym} {}", side(a), side(b))
            }
        }
    }
}

/// A tensor type with symbolic or known dimensions, e.g. `f32[B, 64]`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TensorType {
    pub elem: ScalarType,
    pub dims: Vec<Dim>,
}

impl fmt::Display for TensorType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}[", scalar_name(self.elem))?;
        for (i, d) in self.dims.iter().enumerate() {
            if i > 0 {
                write!(f, ", ")?;
            }
            write!(f, "{d}")?;
        }
        write!(f, "]")
    }
}

impl TensorType {
    /// This type with every dimension expression replaced by its size at a call, `value`
    /// giving the values of the dimension variables and scalar inputs there; on an error, the
    /// expression (printed) and why.
    pub fn with_sizes(
        &self,
        value: &dyn Fn(&str) -> Option<i128>,
    ) -> Result<TensorType, (String, DimError)> {
        let dims = self
            .dims
            .iter()
            .map(|d| match d {
                Dim::Expr(e) => match d.size_at(value) {
                    Ok(Some(n)) => Ok(Dim::Known(n)),
                    Ok(None) => Err((e.to_string(), DimError::Unknown(e.to_string()))),
                    Err(err) => Err((e.to_string(), err)),
                },
                other => Ok(other.clone()),
            })
            .collect::<Result<_, _>>()?;
        Ok(TensorType {
            elem: self.elem,
            dims,
        })
    }
}

/// How a type is named in a message: in backticks (`` `[f32; 8]` ``), or for the value of a
/// slice expression, a phrase ("a slice of `f32` of length 8"), so that it does not read like
/// a tensor type.
pub fn describe(ty: &Ty) -> String {
    match ty {
        Ty::Vector(s, Some(n)) => format!("a slice of `{}` of length {n}", scalar_name(*s)),
        Ty::Vector(s, None) => format!("a slice of `{}`", scalar_name(*s)),
        other => format!("`{other}`"),
    }
}

/// The type of a kernel-level expression or name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ty {
    Scalar(ScalarType),
    /// An integer literal whose type the context has not fixed yet (defaults to `i32`).
    IntLiteral,
    /// A float literal whose type the context has not fixed yet (defaults to `f32`).
    FloatLiteral,
    /// A per-PE array, with its length when it is a known constant.
    Array(ScalarType, Option<u64>),
    /// The value of a slice expression or of an expression over slices: a vector of
    /// elements, with its length when it is a known constant.
    Vector(ScalarType, Option<u64>),
    Stream(ScalarType),
    Tensor(TensorType),
    /// A broken expression; never reported again.
    Error,
}

impl fmt::Display for Ty {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Ty::Scalar(s) => write!(f, "{}", scalar_name(*s)),
            Ty::IntLiteral => write!(f, "integer"),
            Ty::FloatLiteral => write!(f, "float"),
            Ty::Array(s, Some(n)) => write!(f, "[{}; {n}]", scalar_name(*s)),
            Ty::Array(s, None) => write!(f, "[{}; _]", scalar_name(*s)),
            Ty::Vector(s, Some(n)) => write!(f, "{} slice, length {n}", scalar_name(*s)),
            Ty::Vector(s, None) => write!(f, "{} slice", scalar_name(*s)),
            Ty::Stream(s) => write!(f, "stream<{}>", scalar_name(*s)),
            Ty::Tensor(t) => write!(f, "{t}"),
            Ty::Error => write!(f, "{{error}}"),
        }
    }
}
