//! Plain-data results of checking, for the language server and for lowering: name uses and
//! their definitions, the printed type of every name use and checked expression, the
//! dimension variables and region sizes declared, evaluated constants, kernel, layer and model signatures, and the shape bindings at layer calls.
//! Everything here is `PartialEq`, holds no salsa ids, and is returned by tracked queries.

use std::path::PathBuf;

use wsel_syntax::ast::{PortDirection, ScalarType, Span};

use crate::ty::{Dim, TensorType, Value};
use wsel_diagnostic::Location;

/// A name written at `span` that refers to the definition at `def` (go-to-definition,
/// references).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct NameUse {
    pub span: Span,
    pub def: Location,
}

/// What checking one item found: name uses and printed types, all in the item's file.
///
/// `types` holds the type of every name use, field access, call and top-level expression
/// (span → printed type such as `f32`, `[f32; 8]`, `f32[B, 64]`), in checking order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ItemAnalysis {
    pub uses: Vec<NameUse>,
    pub types: Vec<(Span, String)>,
    /// The shape bindings at every layer call of a model (empty for other items).
    pub calls: Vec<CallBinding>,
    /// The names this item declares in dimension and region positions.
    pub declared: Vec<Declared>,
}

/// A name in a dimension position (`f32[B, N]`) or a region position (`on [R, C]`) that
/// declares a variable there, at its first occurrence. Whether such a name declares one or
/// uses a module constant (an imported one included) is the checker's decision, from the
/// module scope; the syntax alone cannot tell.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Declared {
    /// Where the name is written.
    pub span: Span,
    pub kind: DeclaredKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeclaredKind {
    /// A dimension variable of a layer or model signature.
    DimVar,
    /// A region size of a layer implementation.
    RegionSize,
}

/// A layer call in a model: which dimension variables it bound to what, and the result type
/// (for inlay hints).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallBinding {
    pub span: Span,
    pub layer: String,
    /// Dimension variable of the layer → bound dimension (`N` → `64`, `B` → `B`).
    pub dims: Vec<(String, Dim)>,
    /// Every scalar input of the layer → its value at this call (given or default).
    pub scalars: Vec<(String, Value)>,
    pub result: TensorType,
}

/// Everything checking one file found, in item order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FileAnalysis {
    pub file: PathBuf,
    pub uses: Vec<NameUse>,
    pub types: Vec<(Span, String)>,
    pub calls: Vec<CallBinding>,
    pub declared: Vec<Declared>,
}

impl FileAnalysis {
    /// The definition the name at byte `offset` refers to, if any.
    pub fn definition_at(&self, offset: usize) -> Option<&Location> {
        self.uses
            .iter()
            .find(|u| u.span.start <= offset && offset < u.span.end)
            .map(|u| &u.def)
    }

    /// The printed type of the innermost recorded expression around byte `offset`.
    pub fn type_at(&self, offset: usize) -> Option<&str> {
        self.types
            .iter()
            .filter(|(s, _)| s.start <= offset && offset < s.end)
            .min_by_key(|(s, _)| s.end - s.start)
            .map(|(_, t)| t.as_str())
    }
}

/// A module-level constant's evaluated value (`None` when it could not be evaluated; the
/// reason is reported by `check_const`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConstInfo {
    pub ty: Option<ScalarType>,
    pub value: Option<Value>,
}

/// A kernel's interface, as layers and lowering see it.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct KernelSig {
    pub name: String,
    pub params: Vec<KernelParam>,
    /// Array members (`var a: [T; n]`), in declaration order.
    pub arrays: Vec<KernelArray>,
    pub ports: Vec<KernelPort>,
    /// Where the kernel's name is written.
    pub def: Option<Location>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelParam {
    pub name: String,
    /// `None` when the written type is not a scalar (reported by `check_kernel`).
    pub ty: Option<ScalarType>,
    pub def: Location,
}

#[derive(Debug, Clone, PartialEq)]
pub struct KernelArray {
    pub name: String,
    pub elem: ScalarType,
    /// The length when it does not depend on kernel parameters.
    pub len: Option<u64>,
    /// The length expression, to evaluate once the parameters are known.
    pub len_expr: wsel_syntax::ast::Expr,
    pub def: Location,
}

#[derive(Debug, Clone, PartialEq)]
pub struct KernelPort {
    pub name: String,
    pub direction: PortDirection,
    pub elem: Option<ScalarType>,
    pub side: String,
    pub multicast: bool,
    /// `by k`: the distance to the PE the stream goes to or comes from, to evaluate once the
    /// parameters are known (`None`: the neighbour).
    pub distance: Option<wsel_syntax::ast::Expr>,
    /// `switch { ... }` (an `in` port's bare `switch`: no positions), lowered once the
    /// parameters are known.
    pub switch: Option<wsel_syntax::ast::SwitchSpec>,
    pub def: Location,
}

/// A tensor of a layer signature.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayerTensor {
    pub name: String,
    pub is_param: bool,
    /// `None` when the written type is not a valid tensor type (reported by `check_layer`).
    pub ty: Option<TensorType>,
    /// The span of the written type, for secondary labels at calls.
    pub def: Location,
}

/// A scalar input of a layer: a compile-time setting (an iteration count, an epsilon) given
/// by name at each call, or taking its default.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayerScalar {
    pub name: String,
    pub ty: ScalarType,
    /// The default value, when the signature gives one that checks.
    pub default: Option<Value>,
    /// The span of the name.
    pub def: Location,
}

/// A layer's signature with its dimension variables.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LayerSig {
    pub name: String,
    /// The tensor inputs, in declaration order (the positional arguments of a call).
    pub inputs: Vec<LayerTensor>,
    /// The scalar inputs, in declaration order (the named arguments of a call).
    pub scalars: Vec<LayerScalar>,
    pub output: Option<LayerTensor>,
    /// The dimension variables in first-use order; the first is usually the sample dimension.
    pub dim_vars: Vec<String>,
    pub def: Option<Location>,
}

/// A value in a model graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ValueRef {
    Input(usize),
    Param(usize),
    Node(usize),
}

/// A model as a graph of layer calls with concrete shapes where known (the sample dimension
/// stays symbolic, e.g. `B`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ModelGraph {
    pub name: String,
    pub inputs: Vec<(String, TensorType)>,
    /// Parameters: name, type, and the `.npy` path as written (default `name.npy`).
    pub params: Vec<(String, TensorType, String)>,
    pub nodes: Vec<ModelNode>,
    pub output: Option<ValueRef>,
    pub output_ty: Option<TensorType>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelNode {
    /// The layer called, by the file it is defined in and its name.
    pub layer_file: PathBuf,
    pub layer: String,
    pub args: Vec<ValueRef>,
    /// The arguments' types as the call sees them: the source's type, or the type a
    /// `reshape` gave it (docs/language.md §7.1).
    pub arg_types: Vec<TensorType>,
    /// Every scalar input of the layer → its value at this call (given or default).
    pub scalars: Vec<(String, Value)>,
    pub result: TensorType,
    /// The `let` name, if the call is the whole value of a `let`.
    pub name: Option<String>,
    pub span: Span,
}
