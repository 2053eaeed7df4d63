//! The layer graph: a model as layer instances with concrete shapes, evaluated costs, and,
//! for each execution mode a layer implements, everything the mapper needs to place it.
//!
//! Facts that depend on the region size the mapper has not chosen yet (the `where`
//! conditions, the kernel's arguments, its SRAM words) are kept as small compile-time
//! expressions ([`CExpr`]) over the layer's dimension variables and the region names `R`/`C`,
//! so the mapper can try candidate shapes without going back to the front end.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

use crate::kernel::ScalarTy;

/// Where something is written in the source, for diagnostics at a layer call.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct SourceSpan {
    pub file: PathBuf,
    pub span: Range<usize>,
}

/// A model lowered for one batch size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LayerGraph {
    pub model: String,
    /// Samples per batch (the value of every sample dimension).
    pub batch: u64,
    /// The model's activation inputs, in declaration order.
    pub inputs: Vec<TensorDecl>,
    /// The model's weight tensors, in declaration order.
    pub params: Vec<ParamDecl>,
    /// Layer instances in a topological order (every argument is defined before its use).
    pub layers: Vec<LayerInstance>,
    /// The model's result.
    pub output: TensorRef,
}

impl LayerGraph {
    /// Whether the graph is a chain: one model input read by the first layer alone, every
    /// later layer reading the result of the layer before it and no other activation, and the
    /// last layer's result the model's.
    pub fn is_chain(&self) -> bool {
        let n = self.layers.len();
        n > 0
            && self.inputs.len() == 1
            && self.output == TensorRef::Layer(n - 1)
            && self.layers.iter().enumerate().all(|(l, layer)| {
                let mut acts = layer.activations();
                let wanted = match l {
                    0 => TensorRef::Input(0),
                    _ => TensorRef::Layer(l - 1),
                };
                acts.next() == Some(wanted) && acts.next().is_none()
            })
    }
}

/// A tensor the graph refers to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum TensorRef {
    /// Index into [`LayerGraph::inputs`].
    Input(usize),
    /// Index into [`LayerGraph::params`].
    Param(usize),
    /// The result of [`LayerGraph::layers`]`[i]`.
    Layer(usize),
}

/// A named tensor with a concrete shape. For activations the first dimension is the batch.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TensorDecl {
    pub name: String,
    pub elem: ScalarTy,
    pub shape: Vec<u64>,
    pub span: SourceSpan,
}

/// A weight tensor and the `.npy` file it is loaded from (resolved against the model's file).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ParamDecl {
    pub tensor: TensorDecl,
    pub path: PathBuf,
    /// For a chunk of a layer (layer-major micro-batches, `docs/running.md`): the columns of
    /// the weight in `path` this tensor is; `None` for the whole file.
    #[serde(default)]
    pub columns: Option<ParamColumns>,
}

/// Columns of a weight's last dimension, every `step`-th from `first`: chunk `first` of
/// `step` of a layer whose weights are too big to hold at once. `whole` is the weight's
/// shape in its file and `of` its name (for weights given in memory).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParamColumns {
    pub of: String,
    pub whole: Vec<u64>,
    pub first: u64,
    pub step: u64,
}

impl ParamColumns {
    /// How many of a last dimension's `width` columns the chunk takes.
    pub fn taken(&self, width: u64) -> u64 {
        width.saturating_sub(self.first).div_ceil(self.step.max(1))
    }
}

/// One call of a layer in the model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LayerInstance {
    /// A unique, readable name: the layer's name and a counter, e.g. `dense#2`.
    pub name: String,
    /// The layer called.
    pub layer: String,
    /// The call, for diagnostics.
    pub call: SourceSpan,
    /// Arguments in the layer's parameter order.
    pub args: Vec<TensorRef>,
    /// The layer's input names, parallel to `args` (used by `bind`).
    pub arg_names: Vec<String>,
    /// The layer's output name.
    pub output_name: String,
    /// The result's element type and shape (batch first).
    pub output_elem: ScalarTy,
    pub output_shape: Vec<u64>,
    /// Every dimension variable bound at this call, including the batch (`B` or its name).
    pub dims: BTreeMap<String, u64>,
    /// Every scalar input of the layer with its value at this call (given or default), in
    /// the signature's order. Lowering has already put them into the expressions below.
    pub scalars: Vec<(String, CValue)>,
    pub cost: LayerCost,
    /// The implementations, at most one per mode.
    pub impls: Vec<LayerImpl>,
}

impl LayerInstance {
    /// The arguments that are activations (model inputs or layers' results), in order.
    pub fn activations(&self) -> impl Iterator<Item = TensorRef> + '_ {
        self.args
            .iter()
            .copied()
            .filter(|a| !matches!(a, TensorRef::Param(_)))
    }

    /// The arguments that are parameters, in order.
    pub fn params(&self) -> impl Iterator<Item = TensorRef> + '_ {
        self.args
            .iter()
            .copied()
            .filter(|a| matches!(a, TensorRef::Param(_)))
    }

    /// For a streaming layer that moves a resident activation between rows (`std.resident`'s
    /// `relayout`: scalars `from_rows` and `to_rows`), the rows its input is split over and
    /// the rows its result is split over, each from the region's first row; `None` for
    /// every other layer, whose resident tensors are split over all its region's rows.
    pub fn row_move(&self) -> Option<(u32, u32)> {
        let scalar = |name: &str| {
            self.scalars.iter().find_map(|(n, v)| match v {
                CValue::Int(i) if n == name => u32::try_from(*i).ok(),
                _ => None,
            })
        };
        Some((scalar("from_rows")?, scalar("to_rows")?))
    }
}

/// Where weight streaming inserts a relayout (`docs/running.md`, "How weight streaming
/// runs"): before layer `before` of a staged graph, its resident activation moved from the
/// first `from_rows` rows of the region to the first `to_rows`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowMove {
    pub before: usize,
    pub from_rows: u32,
    pub to_rows: u32,
}

/// The cost block evaluated at the call's shapes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct LayerCost {
    /// Floating-point operations per sample.
    pub flops: u64,
    /// Bytes of parameters.
    pub weight_bytes: u64,
    /// Bytes moved per sample.
    pub activation_bytes: u64,
}

/// The execution modes of `docs/language.md` §6.3.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Mode {
    Pipelined,
    Streaming,
}

/// The size of one side of the region: fixed, or chosen by the mapper under a name.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum RegionSide {
    /// A name (`R`, `C`) the mapper chooses; the conditions may mention it.
    Free(String),
    /// A fixed size (any compile-time expression, e.g. `1` or `N / 4`).
    Fixed(CExpr),
}

/// One implementation of a layer, for the modes it serves.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LayerImpl {
    pub modes: Vec<Mode>,
    pub rows: RegionSide,
    pub cols: RegionSide,
    /// The `where` conditions; each must evaluate to true for a region size to be allowed.
    pub conditions: Vec<CExpr>,
    /// The kernel that runs on every PE of the region.
    pub kernel: KernelRef,
    /// The kernel's arguments in its parameter order, as expressions over dims and `R`/`C`.
    pub kernel_args: Vec<(String, CExpr)>,
    /// The kernel's SRAM words per PE, as an expression over dims and `R`/`C`.
    pub sram_words: CExpr,
    /// The words of those in its `held_*` arrays: the weights a layer holds on the fabric
    /// between micro-batches (`docs/running.md`, "Micro-batches"); 0 for most kernels.
    pub held_words: CExpr,
    /// The kernel's ports, in declaration order.
    pub ports: Vec<PortInfo>,
    /// The `bind` statements.
    pub binds: Vec<BindInfo>,
    pub span: SourceSpan,
}

/// Which kernel an implementation runs: its defining file and name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct KernelRef {
    pub file: PathBuf,
    pub name: String,
}

/// A side of a PE or a region.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Side {
    North,
    South,
    East,
    West,
}

impl Side {
    pub fn opposite(self) -> Side {
        match self {
            Side::North => Side::South,
            Side::South => Side::North,
            Side::East => Side::West,
            Side::West => Side::East,
        }
    }
}

/// The PEs a bus port reaches: every other PE of the sender's row, of its column, or of the
/// whole region (`out p: stream<T> to row;` / `in q: stream<T> from row;`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Bus {
    Row,
    Col,
    Region,
}

impl Bus {
    /// The side word of the declaration.
    pub fn name(self) -> &'static str {
        match self {
            Bus::Row => "row",
            Bus::Col => "col",
            Bus::Region => "region",
        }
    }

    /// The side whose axis a bus runs along, which its ports carry as their `side`: west for
    /// a row, north for a column and the whole region.
    pub fn side(self) -> Side {
        match self {
            Bus::Row => Side::West,
            Bus::Col | Bus::Region => Side::North,
        }
    }
}

/// A kernel port as the mapper sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PortInfo {
    pub name: String,
    pub direction: crate::kernel::PortDirection,
    pub elem: ScalarTy,
    /// The side it faces; a bus port carries its bus's [`Bus::side`].
    pub side: Side,
    pub multicast: bool,
    /// `Some` for a bus port (`to row`, `from col`, ...).
    pub bus: Option<Bus>,
    /// `by k`: the distance to the PE the stream goes to or comes from, as an expression over
    /// the dims and the region size like the kernel's arguments (`None`: the neighbour).
    #[serde(default)]
    pub distance: Option<CExpr>,
    /// A switched port's switch (`docs/language.md` §5.4, "Switched ports"); an `in` port's
    /// bare `switch` has no positions.
    #[serde(default)]
    pub switch: Option<SwitchInfo>,
    pub span: SourceSpan,
}

/// The switch of a switched port's color at every PE of its region: positions 1, 2, … each
/// change the receive and/or forward set of the one before (position 0, the base, receives
/// from the ramp and forwards to the port's side), the start position per PE, and ring mode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SwitchInfo {
    pub positions: Vec<SwitchOverride>,
    /// The position at the start of the run, over the dims, the region size and the PE's
    /// logical place (`pe.row`, `pe.col`).
    pub start: CExpr,
    pub ring: bool,
}

/// What one switch position changes: the link or ramp it receives from or forwards to
/// instead (`None`: unchanged).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SwitchOverride {
    pub rx: Option<SwitchPort>,
    pub tx: Option<SwitchPort>,
}

/// A logical side of the PE's router, or its ramp.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SwitchPort {
    Side(Side),
    Ramp,
}

/// What a `bind` statement loads or streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum BindTarget {
    /// Load the tensor into the named array of every PE before launch.
    Array,
    /// Stream the tensor into (or, for the output, out of) the named port.
    Port,
}

/// How one dimension of a bound tensor is spread over the region.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SplitAxis {
    Rows,
    Cols,
    Whole,
}

/// `bind tensor to array|port target split [...]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BindInfo {
    /// A layer input name or the output name.
    pub tensor: String,
    pub target: BindTarget,
    /// The array or port name in the kernel.
    pub target_name: String,
    /// One entry per split dimension (per-sample dimensions for activations bound to ports;
    /// every dimension for weights and for resident activations, those bound to arrays);
    /// empty when the whole tensor goes to every PE.
    pub split: Vec<SplitAxis>,
    /// `tiles [...]`: per dimension of a part, how many tiles it is cut into; the part's
    /// elements are listed tile after tile (row-major tile order), each tile row-major.
    /// Empty: one tile (plain row-major order). Expressions over dims and `R`/`C`.
    pub tiles: Vec<CExpr>,
    pub span: SourceSpan,
}

/// A compile-time expression over named integers (dimension variables, `R`, `C`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum CExpr {
    Int(i64),
    Float(f64),
    Bool(bool),
    Var(String),
    Neg(Box<CExpr>),
    Not(Box<CExpr>),
    Binary(CBinOp, Box<CExpr>, Box<CExpr>),
    Min(Box<CExpr>, Box<CExpr>),
    Max(Box<CExpr>, Box<CExpr>),
    /// `select(c, a, b)`: `a` where `c` holds, else `b` (a switch's per-PE start position).
    Select(Box<CExpr>, Box<CExpr>, Box<CExpr>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum CBinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
}

/// The value of a compile-time expression.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub enum CValue {
    Int(i64),
    Float(f64),
    Bool(bool),
}

/// Why a compile-time expression has no value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CEvalError {
    UnknownName(String),
    DivisionByZero,
    Overflow,
    TypeMismatch,
}

impl CExpr {
    /// Evaluates the expression with `env` giving the value of each name.
    pub fn eval(&self, env: &dyn Fn(&str) -> Option<CValue>) -> Result<CValue, CEvalError> {
        use CValue::{Bool, Float, Int};
        Ok(match self {
            CExpr::Int(v) => Int(*v),
            CExpr::Float(v) => Float(*v),
            CExpr::Bool(v) => Bool(*v),
            CExpr::Var(name) => env(name).ok_or_else(|| CEvalError::UnknownName(name.clone()))?,
            CExpr::Neg(e) => match e.eval(env)? {
                Int(v) => Int(v.checked_neg().ok_or(CEvalError::Overflow)?),
                Float(v) => Float(-v),
                Bool(_) => return Err(CEvalError::TypeMismatch),
            },
            CExpr::Not(e) => match e.eval(env)? {
                Bool(v) => Bool(!v),
                _ => return Err(CEvalError::TypeMismatch),
            },
            CExpr::Min(a, b) | CExpr::Max(a, b) => {
                let is_min = matches!(self, CExpr::Min(..));
                match (a.eval(env)?, b.eval(env)?) {
                    (Int(x), Int(y)) => Int(if is_min { x.min(y) } else { x.max(y) }),
                    (Float(x), Float(y)) => Float(if is_min { x.min(y) } else { x.max(y) }),
                    _ => return Err(CEvalError::TypeMismatch),
                }
            }
            CExpr::Binary(op, a, b) => eval_binary(*op, a.eval(env)?, b.eval(env)?)?,
            CExpr::Select(c, a, b) => match c.eval(env)? {
                Bool(true) => a.eval(env)?,
                Bool(false) => b.eval(env)?,
                _ => return Err(CEvalError::TypeMismatch),
            },
        })
    }

    /// Evaluates to an integer, or fails.
    pub fn eval_int(&self, env: &dyn Fn(&str) -> Option<CValue>) -> Result<i64, CEvalError> {
        match self.eval(env)? {
            CValue::Int(v) => Ok(v),
            _ => Err(CEvalError::TypeMismatch),
        }
    }

    /// Evaluates to a boolean, or fails.
    pub fn eval_bool(&self, env: &dyn Fn(&str) -> Option<CValue>) -> Result<bool, CEvalError> {
        match self.eval(env)? {
            CValue::Bool(v) => Ok(v),
            _ => Err(CEvalError::TypeMismatch),
        }
    }
}

fn eval_binary(op: CBinOp, a: CValue, b: CValue) -> Result<CValue, CEvalError> {
    use CValue::{Bool, Float, Int};
    let overflow = CEvalError::Overflow;
    Ok(match (a, b) {
        (Int(x), Int(y)) => match op {
            CBinOp::Add => Int(x.checked_add(y).ok_or(overflow)?),
            CBinOp::Sub => Int(x.checked_sub(y).ok_or(overflow)?),
            CBinOp::Mul => Int(x.checked_mul(y).ok_or(overflow)?),
            CBinOp::Div | CBinOp::Rem if y == 0 => return Err(CEvalError::DivisionByZero),
            CBinOp::Div => Int(x.checked_div(y).ok_or(overflow)?),
            CBinOp::Rem => Int(x.checked_rem(y).ok_or(overflow)?),
            CBinOp::Eq => Bool(x == y),
            CBinOp::Ne => Bool(x != y),
            CBinOp::Lt => Bool(x < y),
            CBinOp::Le => Bool(x <= y),
            CBinOp::Gt => Bool(x > y),
            CBinOp::Ge => Bool(x >= y),
            CBinOp::And | CBinOp::Or => return Err(CEvalError::TypeMismatch),
        },
        (Float(x), Float(y)) => match op {
            CBinOp::Add => Float(x + y),
            CBinOp::Sub => Float(x - y),
            CBinOp::Mul => Float(x * y),
            CBinOp::Div => Float(x / y),
            CBinOp::Rem => Float(x % y),
            CBinOp::Eq => Bool(x == y),
            CBinOp::Ne => Bool(x != y),
            CBinOp::Lt => Bool(x < y),
            CBinOp::Le => Bool(x <= y),
            CBinOp::Gt => Bool(x > y),
            CBinOp::Ge => Bool(x >= y),
            CBinOp::And | CBinOp::Or => return Err(CEvalError::TypeMismatch),
        },
        (Bool(x), Bool(y)) => match op {
            CBinOp::And => Bool(x && y),
            CBinOp::Or => Bool(x || y),
            CBinOp::Eq => Bool(x == y),
            CBinOp::Ne => Bool(x != y),
            _ => return Err(CEvalError::TypeMismatch),
        },
        _ => return Err(CEvalError::TypeMismatch),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(name: &str) -> Option<CValue> {
        match name {
            "N" => Some(CValue::Int(64)),
            "R" => Some(CValue::Int(4)),
            _ => None,
        }
    }

    fn bin(op: CBinOp, a: CExpr, b: CExpr) -> CExpr {
        CExpr::Binary(op, Box::new(a), Box::new(b))
    }

    #[test]
    fn evaluates_conditions_and_arguments() {
        let n_over_r = bin(CBinOp::Div, CExpr::Var("N".into()), CExpr::Var("R".into()));
        assert_eq!(n_over_r.eval_int(&env), Ok(16));
        let divides = bin(
            CBinOp::Eq,
            bin(CBinOp::Rem, CExpr::Var("N".into()), CExpr::Var("R".into())),
            CExpr::Int(0),
        );
        assert_eq!(divides.eval_bool(&env), Ok(true));
    }

    #[test]
    fn reports_unknown_names_and_division_by_zero() {
        assert_eq!(
            CExpr::Var("M".into()).eval(&env),
            Err(CEvalError::UnknownName("M".into()))
        );
        let by_zero = bin(CBinOp::Div, CExpr::Int(1), CExpr::Int(0));
        assert_eq!(by_zero.eval(&env), Err(CEvalError::DivisionByZero));
        let overflow = bin(CBinOp::Mul, CExpr::Int(i64::MAX), CExpr::Int(2));
        assert_eq!(overflow.eval(&env), Err(CEvalError::Overflow));
    }
}
