//! The kernel IR: one kernel instance (a kernel with its compile-time parameters fixed) as
//! SRAM arrays, ports and tasks whose bodies are structured, typed statements.
//!
//! The IR is deliberately structured (loops and branches as trees, not basic blocks): lowering
//! from the checked AST is direct, the reference interpreter walks it, and the Cranelift and
//! LLVM backends translate it with their own SSA builders. Every construct's meaning is fixed
//! here, precisely enough that all backends produce bit-identical results and identical cycle
//! counts:
//!
//! - Every SRAM element is one 32-bit word. `f32` is IEEE binary32; `f16` values are held as
//!   binary32 rounded to binary16 after every operation; `i32` and `u32` arithmetic wraps;
//!   `bool` is 0 or 1.
//! - Integer division or remainder by zero stops the run with an error; `i32::MIN / -1` wraps.
//! - `min`/`max` on floats propagate NaN, and order `-0.0` below `+0.0`.
//! - Float-to-integer casts saturate and map NaN to 0 (Rust `as` semantics).
//! - A vector statement is the loop `for i in 0..len { dst[start+i] op= value(i) }` run in
//!   increasing `i`, each element reading its sources when it is computed. Scalar operands
//!   are evaluated once, before the first element; every slice of the statement is
//!   bounds-checked before the first element is written. An operand slice whose length is not
//!   known to equal the statement's is checked by a [`Stmt::CheckLength`] before it.
//! - A reduction folds its slice left to right from the first element.
//! - `select(cond, on_true, on_false)` evaluates all three operands (in that order, so a fault
//!   in the operand not chosen still stops the run) and gives `on_true`'s bits when `cond` is
//!   true, `on_false`'s otherwise; element-wise in a vector statement.
//! - Every array access is checked against the array's length; an access out of range stops
//!   the run with an error naming the array, the index and the length.

use serde::{Deserialize, Serialize};

/// Index of an SRAM array in [`KernelIr::arrays`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct ArrayId(pub u32);

/// Index of a port in [`KernelIr::ports`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct PortId(pub u32);

/// Index of a task in [`KernelIr::tasks`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct TaskId(pub u32);

/// Index of a task-local scalar in [`Task::locals`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct LocalId(pub u32);

/// The scalar types of the IR.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ScalarTy {
    F32,
    F16,
    I32,
    U32,
    Bool,
}

impl ScalarTy {
    pub fn is_float(self) -> bool {
        matches!(self, ScalarTy::F32 | ScalarTy::F16)
    }

    pub fn name(self) -> &'static str {
        match self {
            ScalarTy::F32 => "f32",
            ScalarTy::F16 => "f16",
            ScalarTy::I32 => "i32",
            ScalarTy::U32 => "u32",
            ScalarTy::Bool => "bool",
        }
    }
}

/// A constant: its type and its 32-bit pattern (floats as binary32 bits).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Const {
    pub ty: ScalarTy,
    pub bits: u32,
}

impl Const {
    pub fn f32(value: f32) -> Self {
        Const {
            ty: ScalarTy::F32,
            bits: value.to_bits(),
        }
    }

    pub fn i32(value: i32) -> Self {
        Const {
            ty: ScalarTy::I32,
            bits: value as u32,
        }
    }

    pub fn u32(value: u32) -> Self {
        Const {
            ty: ScalarTy::U32,
            bits: value,
        }
    }

    pub fn bool(value: bool) -> Self {
        Const {
            ty: ScalarTy::Bool,
            bits: u32::from(value),
        }
    }
}

/// One kernel instance: everything a backend needs to produce code for its tasks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KernelIr {
    /// The kernel's name with its parameter values, e.g. `gemv_tile<n=16,m=8>`.
    pub name: String,
    pub arrays: Vec<Array>,
    pub ports: Vec<Port>,
    pub tasks: Vec<Task>,
    /// The task activated once on every PE at launch (the kernel's `main`).
    pub entry: TaskId,
}

impl KernelIr {
    /// SRAM words the kernel's arrays occupy.
    pub fn sram_words(&self) -> u32 {
        self.arrays
            .iter()
            .map(|a| a.offset_words + a.len)
            .max()
            .unwrap_or(0)
    }

    /// The PE's SRAM at launch, as words: every array filled with its initial value.
    pub fn initial_sram(&self) -> Vec<u32> {
        let mut sram = vec![0u32; self.sram_words() as usize];
        for array in &self.arrays {
            let start = array.offset_words as usize;
            sram[start..start + array.len as usize].fill(array.init.bits);
        }
        sram
    }

    pub fn array(&self, id: ArrayId) -> &Array {
        &self.arrays[id.0 as usize]
    }

    pub fn port(&self, id: PortId) -> &Port {
        &self.ports[id.0 as usize]
    }

    pub fn task(&self, id: TaskId) -> &Task {
        &self.tasks[id.0 as usize]
    }
}

/// An array (or an SRAM scalar, as an array of length 1) in the PE's SRAM.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Array {
    pub name: String,
    pub elem: ScalarTy,
    pub len: u32,
    /// Where the array starts in the PE's SRAM, in 32-bit words.
    pub offset_words: u32,
    /// The value every element holds at launch (before bound tensors are loaded).
    pub init: Const,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum PortDirection {
    In,
    Out,
}

/// A port of the kernel; the mapper binds it to a color per PE.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Port {
    pub name: String,
    pub direction: PortDirection,
    pub elem: ScalarTy,
}

/// A run-to-completion task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Task {
    pub name: String,
    /// Task-local scalars (`let`, `var`, loop variables); registers, not SRAM.
    pub locals: Vec<Local>,
    pub body: Vec<Stmt>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Local {
    pub name: String,
    pub ty: ScalarTy,
}

/// How an assignment combines the old value with the new one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum AssignOp {
    Set,
    Add,
    Sub,
    Mul,
    Div,
}

/// A contiguous range of an array: elements `start .. start + len`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Slice {
    pub array: ArrayId,
    pub start: Expr,
    pub len: Expr,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Stmt {
    /// `local = value` (locals are initialised before first use by lowering).
    SetLocal {
        local: LocalId,
        value: Expr,
    },
    /// `array[index] op= value`
    Store {
        array: ArrayId,
        index: Expr,
        op: AssignOp,
        value: Expr,
    },
    /// `dst[start + i] op= value(i)` for `i` in `0..dst.len`.
    Vector {
        dst: Slice,
        op: AssignOp,
        value: VExpr,
    },
    /// `for local in lo..hi { body }` — `hi` is evaluated once, before the first iteration.
    For {
        local: LocalId,
        lo: Expr,
        hi: Expr,
        body: Vec<Stmt>,
    },
    While {
        cond: Expr,
        body: Vec<Stmt>,
    },
    If {
        cond: Expr,
        then_body: Vec<Stmt>,
        else_body: Vec<Stmt>,
    },
    /// Send a slice's elements (read now) on an out port; optionally activate a task when the
    /// last wavelet has left the PE.
    SendSlice {
        port: PortId,
        src: Slice,
        then: Option<TaskId>,
    },
    /// Send one scalar on an out port.
    SendScalar {
        port: PortId,
        value: Expr,
        then: Option<TaskId>,
    },
    /// Post a receive of `dst.len` wavelets from an in port into `dst`; activate `then` when
    /// all have arrived.
    Recv {
        port: PortId,
        dst: Slice,
        then: TaskId,
    },
    /// Stop the run with an error naming both lengths when `len` differs from `expected`
    /// (both widened per their type): a vector statement's operand slice against the slice it
    /// assigns, when lowering cannot show they are equal. Costs no cycles, like bounds checks.
    CheckLength {
        len: Expr,
        expected: Expr,
    },
    /// Queue a task to run after the current one.
    Activate(TaskId),
    /// Send one control wavelet on a switched port: `commands[i]` is for the `i`-th router
    /// from this PE's own (router switches, `runtime/sim/README.md`; the kernel's
    /// `control(p, [...])`, `docs/language.md` §5.4 "Switched ports").
    Control {
        port: PortId,
        commands: Vec<SwitchCmd>,
    },
    /// Leave the task.
    Return,
}

/// What a control wavelet tells one router's switch (`wsel_abi::control_payload`'s codes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum SwitchCmd {
    /// Leave the position.
    Nop = 0,
    /// Go to the next position (past the last: to 0 in ring mode, else stay).
    Adv = 1,
    /// Go to position 0.
    Reset = 2,
}

impl SwitchCmd {
    /// The command's name in the language.
    pub fn name(self) -> &'static str {
        match self {
            SwitchCmd::Nop => "nop",
            SwitchCmd::Adv => "adv",
            SwitchCmd::Reset => "reset",
        }
    }
}

/// Values readable by per-PE code that differ between PEs sharing the same machine code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum Coord {
    PeRow,
    PeCol,
    RegionRows,
    RegionCols,
    /// `pe.cycle`: the PE's cycle counter (low 32 bits) when the expression is evaluated —
    /// the task's start plus the task switch plus every cycle the task charged so far,
    /// including the cost of the statement that reads it (the cycle a runtime call made there
    /// would be issued at).
    Cycle,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum UnaryOp {
    Neg,
    Not,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Min,
    Max,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
}

impl BinaryOp {
    /// Whether the result is `bool` whatever the operand type.
    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinaryOp::Eq | BinaryOp::Ne | BinaryOp::Lt | BinaryOp::Le | BinaryOp::Gt | BinaryOp::Ge
        )
    }
}

/// Unary math functions on floats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum MathFn {
    Exp,
    Log,
    Sqrt,
    Tanh,
    Abs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ReduceOp {
    Sum,
    Max,
    Min,
}

/// A scalar expression. Every node carries the type of its result where it is not implied.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum Expr {
    Const(Const),
    Local(LocalId),
    Coord(Coord),
    /// `array[index]`
    Load {
        array: ArrayId,
        index: Box<Expr>,
    },
    Unary {
        op: UnaryOp,
        ty: ScalarTy,
        operand: Box<Expr>,
    },
    /// `lhs op rhs`; `ty` is the operand type (both operands have it).
    Binary {
        op: BinaryOp,
        ty: ScalarTy,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    Cast {
        from: ScalarTy,
        to: ScalarTy,
        value: Box<Expr>,
    },
    Math {
        func: MathFn,
        ty: ScalarTy,
        arg: Box<Expr>,
    },
    /// Fold a slice to one value.
    Reduce {
        op: ReduceOp,
        ty: ScalarTy,
        src: Box<Slice>,
    },
    /// `select(cond, on_true, on_false)`; `ty` is the type of both values.
    Select {
        ty: ScalarTy,
        cond: Box<Expr>,
        on_true: Box<Expr>,
        on_false: Box<Expr>,
    },
}

/// An element-wise expression inside a vector statement, evaluated at element `i`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum VExpr {
    /// A scalar, the same for every element (evaluated once, before the loop).
    Scalar(Expr),
    /// Element `i` of `array[start..]` (the slice's length equals the statement's).
    Elem { array: ArrayId, start: Expr },
    Unary {
        op: UnaryOp,
        ty: ScalarTy,
        operand: Box<VExpr>,
    },
    Binary {
        op: BinaryOp,
        ty: ScalarTy,
        lhs: Box<VExpr>,
        rhs: Box<VExpr>,
    },
    Cast {
        from: ScalarTy,
        to: ScalarTy,
        value: Box<VExpr>,
    },
    Math {
        func: MathFn,
        ty: ScalarTy,
        arg: Box<VExpr>,
    },
    /// Element-wise `select(cond, on_true, on_false)`; `ty` is the type of both values.
    Select {
        ty: ScalarTy,
        cond: Box<VExpr>,
        on_true: Box<VExpr>,
        on_false: Box<VExpr>,
    },
}

/// Where a kernel instance's tasks and transfer statements are written in the source: a side
/// table beside [`KernelIr`], for diagnostics about the IR (the static hang checks). Lowering
/// fills it (`wsel_lower::lower_kernel_with_spans`); hand-built IR has none, and nothing that
/// runs a kernel needs it.
///
/// The **transfer statements** of a task are its [`Stmt::Recv`], [`Stmt::SendSlice`],
/// [`Stmt::SendScalar`] and [`Stmt::Activate`] statements, numbered from 0 in the order
/// [`for_each_transfer`] visits them: the order they appear in the body, the statements of a
/// loop body where the loop is, an `If`'s then-branch before its else-branch.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct KernelSpans {
    /// The file the kernel is defined in.
    pub file: std::path::PathBuf,
    /// One entry per task, indexed like [`KernelIr::tasks`].
    pub tasks: Vec<TaskSpans>,
}

/// Where one task is written.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct TaskSpans {
    /// The task's name in its declaration.
    pub name: std::ops::Range<usize>,
    /// The whole statement of each transfer statement, in [`KernelSpans`]' numbering.
    pub transfers: Vec<std::ops::Range<usize>>,
    /// The tasks that a `then` or `activate` names in a branch that lowering dropped because
    /// its condition is constant for this instance: tasks that other parameter values run.
    #[serde(default)]
    pub folded_targets: Vec<TaskId>,
}

impl KernelSpans {
    /// The span of transfer statement `index` of `task`, if known.
    pub fn transfer(&self, task: TaskId, index: usize) -> Option<std::ops::Range<usize>> {
        self.tasks
            .get(task.0 as usize)?
            .transfers
            .get(index)
            .cloned()
    }

    /// The span of `task`'s name, if known.
    pub fn task_name(&self, task: TaskId) -> Option<std::ops::Range<usize>> {
        self.tasks.get(task.0 as usize).map(|t| t.name.clone())
    }
}

/// Calls `visit` on every transfer statement of `body` with its number (see [`KernelSpans`]).
pub fn for_each_transfer(body: &[Stmt], visit: &mut dyn FnMut(usize, &Stmt)) {
    fn walk(body: &[Stmt], next: &mut usize, visit: &mut dyn FnMut(usize, &Stmt)) {
        for stmt in body {
            match stmt {
                Stmt::Recv { .. }
                | Stmt::SendSlice { .. }
                | Stmt::SendScalar { .. }
                | Stmt::Activate(_) => {
                    visit(*next, stmt);
                    *next += 1;
                }
                Stmt::For { body, .. } | Stmt::While { body, .. } => walk(body, next, visit),
                Stmt::If {
                    then_body,
                    else_body,
                    ..
                } => {
                    walk(then_body, next, visit);
                    walk(else_body, next, visit);
                }
                Stmt::SetLocal { .. }
                | Stmt::Store { .. }
                | Stmt::Vector { .. }
                | Stmt::CheckLength { .. }
                | Stmt::Control { .. }
                | Stmt::Return => {}
            }
        }
    }
    let mut next = 0;
    walk(body, &mut next, visit);
}
