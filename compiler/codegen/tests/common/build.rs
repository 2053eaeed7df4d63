//! Terse constructors for hand-built kernel IR.

use wsel_ir::kernel::*;

#[allow(unused_imports)]
pub use wsel_ir::kernel::ScalarTy::{Bool, F16, F32, I32, U32};

pub fn f32c(value: f32) -> Expr {
    Expr::Const(Const::f32(value))
}

pub fn f16c(value: f32) -> Expr {
    Expr::Const(Const {
        ty: ScalarTy::F16,
        bits: value.to_bits(),
    })
}

pub fn i32c(value: i32) -> Expr {
    Expr::Const(Const::i32(value))
}

pub fn u32c(value: u32) -> Expr {
    Expr::Const(Const::u32(value))
}

pub fn boolc(value: bool) -> Expr {
    Expr::Const(Const::bool(value))
}

pub fn local(index: u32) -> Expr {
    Expr::Local(LocalId(index))
}

pub fn coord(coord: Coord) -> Expr {
    Expr::Coord(coord)
}

pub fn load(array: u32, index: Expr) -> Expr {
    Expr::Load {
        array: ArrayId(array),
        index: Box::new(index),
    }
}

pub fn un(op: UnaryOp, ty: ScalarTy, operand: Expr) -> Expr {
    Expr::Unary {
        op,
        ty,
        operand: Box::new(operand),
    }
}

pub fn bin(op: BinaryOp, ty: ScalarTy, lhs: Expr, rhs: Expr) -> Expr {
    Expr::Binary {
        op,
        ty,
        lhs: Box::new(lhs),
        rhs: Box::new(rhs),
    }
}

pub fn cast(from: ScalarTy, to: ScalarTy, value: Expr) -> Expr {
    Expr::Cast {
        from,
        to,
        value: Box::new(value),
    }
}

pub fn math(func: MathFn, ty: ScalarTy, arg: Expr) -> Expr {
    Expr::Math {
        func,
        ty,
        arg: Box::new(arg),
    }
}

pub fn reduce(op: ReduceOp, ty: ScalarTy, src: Slice) -> Expr {
    Expr::Reduce {
        op,
        ty,
        src: Box::new(src),
    }
}

pub fn sel(ty: ScalarTy, cond: Expr, on_true: Expr, on_false: Expr) -> Expr {
    Expr::Select {
        ty,
        cond: Box::new(cond),
        on_true: Box::new(on_true),
        on_false: Box::new(on_false),
    }
}

pub fn slice(array: u32, start: Expr, len: Expr) -> Slice {
    Slice {
        array: ArrayId(array),
        start,
        len,
    }
}

pub fn set(local: u32, value: Expr) -> Stmt {
    Stmt::SetLocal {
        local: LocalId(local),
        value,
    }
}

pub fn store(array: u32, index: Expr, op: AssignOp, value: Expr) -> Stmt {
    Stmt::Store {
        array: ArrayId(array),
        index,
        op,
        value,
    }
}

pub fn vector(dst: Slice, op: AssignOp, value: VExpr) -> Stmt {
    Stmt::Vector { dst, op, value }
}

pub fn for_(local: u32, lo: Expr, hi: Expr, body: Vec<Stmt>) -> Stmt {
    Stmt::For {
        local: LocalId(local),
        lo,
        hi,
        body,
    }
}

pub fn while_(cond: Expr, body: Vec<Stmt>) -> Stmt {
    Stmt::While { cond, body }
}

pub fn if_(cond: Expr, then_body: Vec<Stmt>, else_body: Vec<Stmt>) -> Stmt {
    Stmt::If {
        cond,
        then_body,
        else_body,
    }
}

pub fn elem(array: u32, start: Expr) -> VExpr {
    VExpr::Elem {
        array: ArrayId(array),
        start,
    }
}

pub fn scalar(expr: Expr) -> VExpr {
    VExpr::Scalar(expr)
}

pub fn vbin(op: BinaryOp, ty: ScalarTy, lhs: VExpr, rhs: VExpr) -> VExpr {
    VExpr::Binary {
        op,
        ty,
        lhs: Box::new(lhs),
        rhs: Box::new(rhs),
    }
}

pub fn vun(op: UnaryOp, ty: ScalarTy, operand: VExpr) -> VExpr {
    VExpr::Unary {
        op,
        ty,
        operand: Box::new(operand),
    }
}

pub fn vcast(from: ScalarTy, to: ScalarTy, value: VExpr) -> VExpr {
    VExpr::Cast {
        from,
        to,
        value: Box::new(value),
    }
}

pub fn vmath(func: MathFn, ty: ScalarTy, arg: VExpr) -> VExpr {
    VExpr::Math {
        func,
        ty,
        arg: Box::new(arg),
    }
}

pub fn vsel(ty: ScalarTy, cond: VExpr, on_true: VExpr, on_false: VExpr) -> VExpr {
    VExpr::Select {
        ty,
        cond: Box::new(cond),
        on_true: Box::new(on_true),
        on_false: Box::new(on_false),
    }
}

/// Arrays laid out one after another from word 0.
pub fn arrays(specs: &[(&str, ScalarTy, u32)]) -> Vec<Array> {
    let mut offset = 0;
    specs
        .iter()
        .map(|&(name, elem, len)| {
            let array = Array {
                name: name.into(),
                elem,
                len,
                offset_words: offset,
                init: Const { ty: elem, bits: 0 },
            };
            offset += len;
            array
        })
        .collect()
}

pub fn port(name: &str, direction: PortDirection, elem: ScalarTy) -> Port {
    Port {
        name: name.into(),
        direction,
        elem,
    }
}

pub fn task(name: &str, locals: &[(&str, ScalarTy)], body: Vec<Stmt>) -> Task {
    Task {
        name: name.into(),
        locals: locals
            .iter()
            .map(|&(name, ty)| Local {
                name: name.into(),
                ty,
            })
            .collect(),
        body,
    }
}

/// A kernel with entry task 0.
pub fn kernel(name: &str, arrays: Vec<Array>, ports: Vec<Port>, tasks: Vec<Task>) -> KernelIr {
    KernelIr {
        name: name.into(),
        arrays,
        ports,
        tasks,
        entry: TaskId(0),
    }
}
