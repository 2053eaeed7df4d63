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

/// One dimension of a tensor type: a known size or a symbolic variable (`B`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Dim {
    Known(u64),
    Var(String),
}

impl fmt::Display for Dim {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Dim::Known(n) => write!(f, "{n}"),
            Dim::Var(v) => write!(f, "{v}"),
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
