//! The abstract syntax tree of a `.wse` module, with byte spans on every node.
//!
//! The tree mirrors `docs/language.md` section by section. It is plain data: no salsa, no
//! IO. Nodes that the parser could not build after a syntax error are represented by the
//! `Error` variants, so later passes can keep going on a partial tree without reporting
//! follow-on errors for the broken part.

use std::ops::Range;

/// A byte range into the source text.
pub type Span = Range<usize>;

/// A name with the span where it is written.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

/// One entry of a `control` statement's list: a command word, repeated `count` times
/// (`nop * k`; once without a count).
#[derive(Debug, Clone, PartialEq)]
pub struct Command {
    pub word: Ident,
    pub count: Option<Expr>,
}

/// One parsed file.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Module {
    pub items: Vec<Item>,
}

/// A top-level item.
#[derive(Debug, Clone, PartialEq)]
pub enum Item {
    Import(Import),
    Const(ConstDecl),
    Kernel(Kernel),
    Layer(Layer),
    Model(Model),
    Run(RunConfig),
    /// `train model { ... }` (docs/language.md §11): what `wsel train` does.
    Train(RunConfig),
    /// An item the parser skipped after a syntax error.
    Error(Span),
}

/// `import std.nn.{dense, relu as r};`
#[derive(Debug, Clone, PartialEq)]
pub struct Import {
    /// The module path, e.g. `std`, `nn`.
    pub path: Vec<Ident>,
    pub names: Vec<ImportName>,
    pub span: Span,
}

/// One name in an import list, with its optional `as` rename.
#[derive(Debug, Clone, PartialEq)]
pub struct ImportName {
    pub name: Ident,
    pub alias: Option<Ident>,
}

/// `const NAME: T = e;` at module level or inside a kernel.
#[derive(Debug, Clone, PartialEq)]
pub struct ConstDecl {
    pub doc: Option<String>,
    pub name: Ident,
    pub ty: Type,
    pub value: Expr,
    pub span: Span,
}

/// A written type.
#[derive(Debug, Clone, PartialEq)]
pub enum Type {
    Scalar(ScalarType, Span),
    /// `[T; n]`
    Array {
        elem: ScalarType,
        len: Box<Expr>,
        span: Span,
    },
    /// `stream<T>`
    Stream(ScalarType, Span),
    /// `f32[B, 784]`
    Tensor {
        elem: ScalarType,
        dims: Vec<Expr>,
        span: Span,
    },
    Error(Span),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScalarType {
    F32,
    F16,
    I32,
    U32,
    Bool,
}

/// A parameter `name: T` of a kernel, layer or model (`param` marks layer weight inputs).
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    pub is_param: bool,
    pub name: Ident,
    pub ty: Type,
    /// `= e` after the type: only a layer's scalar inputs have one (their default value).
    pub default: Option<Expr>,
    pub span: Span,
}

/// `kernel name(params) { members }`
#[derive(Debug, Clone, PartialEq)]
pub struct Kernel {
    pub doc: Option<String>,
    pub name: Ident,
    pub params: Vec<Param>,
    pub members: Vec<KernelMember>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum KernelMember {
    /// `var name: T [= init];` — SRAM storage.
    Var(VarDecl),
    Const(ConstDecl),
    Port(PortDecl),
    Task(Task),
    Error(Span),
}

/// `var name: T [= init];`, as a kernel member or as a statement.
#[derive(Debug, Clone, PartialEq)]
pub struct VarDecl {
    pub name: Ident,
    pub ty: Type,
    pub init: Option<Expr>,
    pub span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PortDirection {
    In,
    Out,
}

/// `in p: stream<T> from west [multicast];`, `out p: stream<T> to south;` or
/// `out p: stream<T> to east by k;`
#[derive(Debug, Clone, PartialEq)]
pub struct PortDecl {
    pub direction: PortDirection,
    pub name: Ident,
    pub ty: Type,
    /// The side named after `from`/`to`, checked by the resolver (`north`, `south`, ...).
    pub side: Ident,
    pub multicast: bool,
    /// `by k`: the stream goes to the PE `k` away on the port's side, through the routers
    /// between (`None`: the neighbour).
    pub distance: Option<Expr>,
    /// `switch { ... }` on an `out` port, a bare `switch` on an `in` port: the pair's color
    /// has router switch positions (`docs/language.md` §5.4, "Switched ports").
    pub switch: Option<SwitchSpec>,
    pub span: Span,
}

/// A switched port's switch: `switch { pos1: rx west; pos2: tx ramp; start: e; ring; }` (an
/// `in` port's bare `switch` has no positions, no start and no ring).
#[derive(Debug, Clone, PartialEq)]
pub struct SwitchSpec {
    /// The positions after the base, in the order written.
    pub positions: Vec<SwitchPos>,
    /// The per-PE initial position (`None`: 0).
    pub start: Option<Expr>,
    /// `ring`: advancing past the last position wraps to the base.
    pub ring: bool,
    /// Items that are neither a position, `start` nor `ring` (reported by the checker).
    pub unknown: Vec<Ident>,
    pub span: Span,
}

/// `posK: rx D`, `posK: tx D` or `posK: rx D tx D`: what position K changes from the one
/// before it.
#[derive(Debug, Clone, PartialEq)]
pub struct SwitchPos {
    /// `pos1`, `pos2`, ...
    pub key: Ident,
    /// `(rx or tx, side)` pairs as written.
    pub sets: Vec<(Ident, Ident)>,
    pub span: Span,
}

/// `task name() { body }`
#[derive(Debug, Clone, PartialEq)]
pub struct Task {
    pub name: Ident,
    pub body: Block,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Block {
    pub stmts: Vec<Stmt>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Stmt {
    /// `let name[: T] = e;`
    Let {
        name: Ident,
        ty: Option<Type>,
        value: Expr,
        span: Span,
    },
    /// `var name: T [= e];` inside a task: a mutable local.
    Var(VarDecl),
    /// `place op value;`
    Assign {
        place: Expr,
        op: AssignOp,
        value: Expr,
        span: Span,
    },
    /// `for v in lo..hi { body }`
    For {
        var: Ident,
        lo: Expr,
        hi: Expr,
        body: Block,
        span: Span,
    },
    While {
        cond: Expr,
        body: Block,
        span: Span,
    },
    If {
        cond: Expr,
        then_block: Block,
        /// `else { }` or `else if ...` (an `If` statement inside a block).
        else_block: Option<Block>,
        span: Span,
    },
    /// `recv(port, place) then task;`
    Recv {
        port: Ident,
        target: Expr,
        then: Ident,
        span: Span,
    },
    /// `send(port, value) [then task];`
    Send {
        port: Ident,
        value: Expr,
        then: Option<Ident>,
        span: Span,
    },
    /// `control(port, [adv, nop * k, reset]);`: one control wavelet on a switched port, a
    /// command per router from the sender's.
    Control {
        port: Ident,
        commands: Vec<Command>,
        span: Span,
    },
    /// `activate task;`
    Activate {
        task: Ident,
        span: Span,
    },
    Return(Span),
    /// An expression statement, e.g. a call whose value is unused (checked by sema).
    Expr(Expr),
    Error(Span),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AssignOp {
    Set,
    Add,
    Sub,
    Mul,
    Div,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Int(u64, Span),
    Float(f64, Span),
    Bool(bool, Span),
    Str(String, Span),
    Name(Ident),
    /// `base.field`, e.g. `pe.row` or `region.cols`.
    Field {
        base: Box<Expr>,
        field: Ident,
        span: Span,
    },
    Unary {
        op: UnaryOp,
        operand: Box<Expr>,
        span: Span,
    },
    Binary {
        op: BinaryOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
        span: Span,
    },
    /// `e as T`
    Cast {
        value: Box<Expr>,
        ty: ScalarType,
        span: Span,
    },
    /// `a[i]`
    Index {
        base: Box<Expr>,
        index: Box<Expr>,
        span: Span,
    },
    /// `a[lo..hi]`
    Slice {
        base: Box<Expr>,
        lo: Box<Expr>,
        hi: Box<Expr>,
        span: Span,
    },
    /// `f(args, name = value, ...)` — a built-in function, or a layer call inside a model
    /// (the named arguments give a layer's scalar inputs; kernel code has none).
    Call {
        callee: Ident,
        args: Vec<Expr>,
        named: Vec<(Ident, Expr)>,
        span: Span,
    },
    Error(Span),
}

impl Expr {
    pub fn span(&self) -> Span {
        match self {
            Expr::Int(_, s) | Expr::Float(_, s) | Expr::Bool(_, s) | Expr::Str(_, s) => s.clone(),
            Expr::Error(s) => s.clone(),
            Expr::Name(id) => id.span.clone(),
            Expr::Field { span, .. }
            | Expr::Unary { span, .. }
            | Expr::Binary { span, .. }
            | Expr::Cast { span, .. }
            | Expr::Index { span, .. }
            | Expr::Slice { span, .. }
            | Expr::Call { span, .. } => span.clone(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    Neg,
    Not,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BinaryOp {
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

/// `layer name(inputs) -> out: T [train as e] { cost {...} impls }`
#[derive(Debug, Clone, PartialEq)]
pub struct Layer {
    pub doc: Option<String>,
    pub name: Ident,
    pub inputs: Vec<Param>,
    pub output: Ident,
    pub output_ty: Type,
    /// `-> param dw: T`: the result is summed over the batch (a gradient, a loss) and has no
    /// sample dimension (docs/language.md §11).
    pub output_is_param: bool,
    /// `train as e` between the result and the body: the calls pipelined training runs in
    /// the layer's place (docs/language.md §6.4).
    pub train_as: Option<TrainAs>,
    pub cost: Option<Cost>,
    pub impls: Vec<LayerImpl>,
    pub span: Span,
}

/// `train as attention_qkv(pack_qkv(q, k, v, heads = heads), heads = heads)`: an expression of
/// layer calls over the layer's inputs, as in a model body.
#[derive(Debug, Clone, PartialEq)]
pub struct TrainAs {
    pub value: Expr,
    /// From `train` to the end of the expression.
    pub span: Span,
}

/// `cost { flops = e; weights = e; activations = e; }`
#[derive(Debug, Clone, PartialEq)]
pub struct Cost {
    /// Entries in source order; the checker requires exactly the three known keys.
    pub entries: Vec<(Ident, Expr)>,
    pub span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Mode {
    Pipelined,
    Streaming,
}

/// `pipelined, streaming on [R, C] where cond, ... { body }`
#[derive(Debug, Clone, PartialEq)]
pub struct LayerImpl {
    pub modes: Vec<(Mode, Span)>,
    /// The region's rows and columns: a name bound by the mapper, or a fixed expression.
    pub rows: Expr,
    pub cols: Expr,
    pub conditions: Vec<Expr>,
    pub run: Option<RunKernel>,
    pub binds: Vec<Bind>,
    pub span: Span,
}

/// `run kernel(p = e, ...);` inside a layer implementation.
#[derive(Debug, Clone, PartialEq)]
pub struct RunKernel {
    pub kernel: Ident,
    pub args: Vec<(Ident, Expr)>,
    pub span: Span,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BindKind {
    Array,
    Port,
}

/// `bind tensor to array|port target [split [..]];`
#[derive(Debug, Clone, PartialEq)]
pub struct Bind {
    pub tensor: Ident,
    pub kind: BindKind,
    pub target: Ident,
    /// One entry per split dimension; `None` when there is no `split` clause.
    pub split: Option<Vec<SplitAxis>>,
    /// `tiles [t0, t1, ...]`: each part is cut into that many tiles per dimension and its
    /// elements are listed tile after tile; `None` when there is no `tiles` clause.
    pub tiles: Option<Vec<Expr>>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum SplitAxis {
    Rows(Span),
    Cols(Span),
    Whole(Span),
    /// An identifier other than `rows`, `cols`, `_` (reported by the checker).
    Unknown(Ident),
}

/// `model name(inputs) -> T { params, lets, return }`
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    pub doc: Option<String>,
    pub name: Ident,
    pub inputs: Vec<Param>,
    pub output_ty: Type,
    pub body: Vec<ModelStmt>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ModelStmt {
    /// `param name: T [from "path"];`
    Param {
        name: Ident,
        ty: Type,
        path: Option<(String, Span)>,
        span: Span,
    },
    /// `let name = e;`
    Let {
        name: Ident,
        value: Expr,
        span: Span,
    },
    /// `return e;`
    Return {
        value: Expr,
        span: Span,
    },
    Error(Span),
}

/// `run model { setting; ... }`, or `train model { setting; ... }` (the same shape).
#[derive(Debug, Clone, PartialEq)]
pub struct RunConfig {
    pub model: Ident,
    pub settings: Vec<RunSetting>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum RunSetting {
    /// `input x = "path";`
    Input {
        name: Ident,
        path: String,
        span: Span,
    },
    /// `key = value;`: for `run`, `output`, `labels`, `target`, `mode`, `batch`; for `train`,
    /// also the training settings (docs/language.md §11).
    Key { key: Ident, value: Expr, span: Span },
}
