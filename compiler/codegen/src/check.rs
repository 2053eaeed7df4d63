//! Checks that a kernel is well-formed and well-typed before any backend sees it, and gives
//! the type of every expression. Backends may then assume what is checked here.

use wsel_ir::kernel::{
    BinaryOp, Expr, KernelIr, MathFn, PortDirection, ScalarTy, Slice, Stmt, Task, UnaryOp, VExpr,
};

use crate::CodegenError;

/// Checks every task of `kernel`: ids in range, operand types as each construct requires,
/// arrays that fit in a 32-bit SRAM plan.
pub fn check_kernel(kernel: &KernelIr) -> Result<(), CodegenError> {
    let fail = |message: String| CodegenError::new(format!("kernel {}: {message}", kernel.name));
    if u32::try_from(kernel.tasks.len()).is_err()
        || kernel.tasks.len() >= wsel_abi::NO_TASK as usize
    {
        return Err(fail("too many tasks".into()));
    }
    if kernel.entry.0 as usize >= kernel.tasks.len() {
        return Err(fail(format!(
            "entry task {} does not exist",
            kernel.entry.0
        )));
    }
    for array in &kernel.arrays {
        let end = u64::from(array.offset_words) + u64::from(array.len);
        // The SRAM plan must be addressable in bytes by a u32 (`TaskCtx::sram_len`).
        if end * 4 > u64::from(u32::MAX) {
            return Err(fail(format!(
                "array {} ends beyond 4 GiB of SRAM",
                array.name
            )));
        }
        if array.init.ty != array.elem {
            return Err(fail(format!(
                "array {} of {} has an initial value of type {}",
                array.name,
                array.elem.name(),
                array.init.ty.name()
            )));
        }
    }
    for task in &kernel.tasks {
        let checker = Checker { kernel, task };
        checker
            .stmts(&task.body)
            .map_err(|message| fail(format!("task {}: {message}", task.name)))?;
    }
    Ok(())
}

/// The type of `expr` in `task`. Assumes the kernel passed [`check_kernel`].
pub fn expr_ty(kernel: &KernelIr, task: &Task, expr: &Expr) -> ScalarTy {
    match expr {
        Expr::Const(c) => c.ty,
        Expr::Local(local) => task.locals[local.0 as usize].ty,
        Expr::Coord(_) => ScalarTy::U32,
        Expr::Load { array, .. } => kernel.array(*array).elem,
        Expr::Unary { ty, .. }
        | Expr::Math { ty, .. }
        | Expr::Reduce { ty, .. }
        | Expr::Select { ty, .. } => *ty,
        Expr::Binary { op, ty, .. } => binary_result(*op, *ty),
        Expr::Cast { to, .. } => *to,
    }
}

/// The element type of `value` in `task`. Assumes the kernel passed [`check_kernel`].
pub fn vexpr_ty(kernel: &KernelIr, task: &Task, value: &VExpr) -> ScalarTy {
    match value {
        VExpr::Scalar(expr) => expr_ty(kernel, task, expr),
        VExpr::Elem { array, .. } => kernel.array(*array).elem,
        VExpr::Unary { ty, .. } | VExpr::Math { ty, .. } | VExpr::Select { ty, .. } => *ty,
        VExpr::Binary { op, ty, .. } => binary_result(*op, *ty),
        VExpr::Cast { to, .. } => *to,
    }
}

fn binary_result(op: BinaryOp, ty: ScalarTy) -> ScalarTy {
    if op.is_comparison() {
        ScalarTy::Bool
    } else {
        ty
    }
}

fn is_integer(ty: ScalarTy) -> bool {
    matches!(ty, ScalarTy::I32 | ScalarTy::U32)
}

struct Checker<'a> {
    kernel: &'a KernelIr,
    task: &'a Task,
}

type Checked<T = ()> = Result<T, String>;

impl Checker<'_> {
    fn stmts(&self, stmts: &[Stmt]) -> Checked {
        stmts.iter().try_for_each(|stmt| self.stmt(stmt))
    }

    fn stmt(&self, stmt: &Stmt) -> Checked {
        match stmt {
            Stmt::SetLocal { local, value } => {
                let want = self.local(local.0)?;
                self.expect(value, want, "local assignment")
            }
            Stmt::Store {
                array,
                index,
                op,
                value,
            } => {
                let elem = self.array(array.0)?;
                self.index(index)?;
                self.expect(value, elem, "stored value")?;
                self.assign_op(*op, elem)
            }
            Stmt::Vector { dst, op, value } => {
                let elem = self.slice(dst)?;
                let ty = self.vexpr(value)?;
                if ty != elem {
                    return Err(format!(
                        "vector statement writes {} values into {} array {}",
                        ty.name(),
                        elem.name(),
                        self.kernel.arrays[dst.array.0 as usize].name
                    ));
                }
                self.assign_op(*op, elem)
            }
            Stmt::For {
                local,
                lo,
                hi,
                body,
            } => {
                let ty = self.local(local.0)?;
                if !is_integer(ty) {
                    return Err(format!("loop variable of type {}", ty.name()));
                }
                self.expect(lo, ty, "loop start")?;
                self.expect(hi, ty, "loop end")?;
                self.stmts(body)
            }
            Stmt::While { cond, body } => {
                self.expect(cond, ScalarTy::Bool, "while condition")?;
                self.stmts(body)
            }
            Stmt::If {
                cond,
                then_body,
                else_body,
            } => {
                self.expect(cond, ScalarTy::Bool, "if condition")?;
                self.stmts(then_body)?;
                self.stmts(else_body)
            }
            Stmt::SendSlice { port, src, then } => {
                self.port(port.0, PortDirection::Out)?;
                self.slice(src)?;
                then.map_or(Ok(()), |task| self.task_id(task.0))
            }
            Stmt::SendScalar { port, value, then } => {
                self.port(port.0, PortDirection::Out)?;
                self.expr(value)?;
                then.map_or(Ok(()), |task| self.task_id(task.0))
            }
            Stmt::Recv { port, dst, then } => {
                self.port(port.0, PortDirection::In)?;
                self.slice(dst)?;
                self.task_id(then.0)
            }
            Stmt::Activate(task) => self.task_id(task.0),
            Stmt::Control { port, .. } => self.port(port.0, PortDirection::Out),
            Stmt::Return => Ok(()),
            Stmt::CheckLength { len, expected } => {
                self.index(len)?;
                self.index(expected)
            }
        }
    }

    fn expr(&self, expr: &Expr) -> Checked<ScalarTy> {
        match expr {
            Expr::Const(_) | Expr::Coord(_) => {}
            Expr::Local(local) => {
                self.local(local.0)?;
            }
            Expr::Load { array, index } => {
                self.array(array.0)?;
                self.index(index)?;
            }
            Expr::Unary { op, ty, operand } => {
                self.expect(operand, *ty, "operand")?;
                unary_ok(*op, *ty)?;
            }
            Expr::Binary { op, ty, lhs, rhs } => {
                self.expect(lhs, *ty, "left operand")?;
                self.expect(rhs, *ty, "right operand")?;
                binary_ok(*op, *ty)?;
            }
            Expr::Cast { from, value, .. } => self.expect(value, *from, "cast operand")?,
            Expr::Math { func, ty, arg } => {
                self.expect(arg, *ty, "math argument")?;
                math_ok(*func, *ty)?;
            }
            Expr::Reduce { ty, src, .. } => {
                let elem = self.slice(src)?;
                if elem != *ty || elem == ScalarTy::Bool {
                    return Err(format!(
                        "reduction of type {} over a {} slice",
                        ty.name(),
                        elem.name()
                    ));
                }
            }
            Expr::Select {
                ty,
                cond,
                on_true,
                on_false,
            } => {
                self.expect(cond, ScalarTy::Bool, "select condition")?;
                self.expect(on_true, *ty, "select value")?;
                self.expect(on_false, *ty, "select value")?;
            }
        }
        Ok(expr_ty(self.kernel, self.task, expr))
    }

    fn vexpr(&self, value: &VExpr) -> Checked<ScalarTy> {
        match value {
            VExpr::Scalar(expr) => {
                self.expr(expr)?;
            }
            VExpr::Elem { array, start } => {
                self.array(array.0)?;
                self.index(start)?;
            }
            VExpr::Unary { op, ty, operand } => {
                self.vexpect(operand, *ty)?;
                unary_ok(*op, *ty)?;
            }
            VExpr::Binary { op, ty, lhs, rhs } => {
                self.vexpect(lhs, *ty)?;
                self.vexpect(rhs, *ty)?;
                binary_ok(*op, *ty)?;
            }
            VExpr::Cast { from, value, .. } => self.vexpect(value, *from)?,
            VExpr::Math { func, ty, arg } => {
                self.vexpect(arg, *ty)?;
                math_ok(*func, *ty)?;
            }
            VExpr::Select {
                ty,
                cond,
                on_true,
                on_false,
            } => {
                self.vexpect(cond, ScalarTy::Bool)?;
                self.vexpect(on_true, *ty)?;
                self.vexpect(on_false, *ty)?;
            }
        }
        Ok(vexpr_ty(self.kernel, self.task, value))
    }

    fn vexpect(&self, value: &VExpr, want: ScalarTy) -> Checked {
        let ty = self.vexpr(value)?;
        if ty != want {
            return Err(format!(
                "element operand of type {} where {} is expected",
                ty.name(),
                want.name()
            ));
        }
        Ok(())
    }

    fn expect(&self, expr: &Expr, want: ScalarTy, what: &str) -> Checked {
        let ty = self.expr(expr)?;
        if ty != want {
            return Err(format!(
                "{what} of type {} where {} is expected",
                ty.name(),
                want.name()
            ));
        }
        Ok(())
    }

    fn index(&self, index: &Expr) -> Checked {
        let ty = self.expr(index)?;
        if !is_integer(ty) {
            return Err(format!("index or length of type {}", ty.name()));
        }
        Ok(())
    }

    fn slice(&self, slice: &Slice) -> Checked<ScalarTy> {
        let elem = self.array(slice.array.0)?;
        self.index(&slice.start)?;
        self.index(&slice.len)?;
        Ok(elem)
    }

    fn assign_op(&self, op: wsel_ir::kernel::AssignOp, elem: ScalarTy) -> Checked {
        if op != wsel_ir::kernel::AssignOp::Set && elem == ScalarTy::Bool {
            return Err("compound assignment to a bool".into());
        }
        Ok(())
    }

    fn local(&self, index: u32) -> Checked<ScalarTy> {
        self.task
            .locals
            .get(index as usize)
            .map(|local| local.ty)
            .ok_or_else(|| format!("local {index} does not exist"))
    }

    fn array(&self, index: u32) -> Checked<ScalarTy> {
        self.kernel
            .arrays
            .get(index as usize)
            .map(|array| array.elem)
            .ok_or_else(|| format!("array {index} does not exist"))
    }

    fn port(&self, index: u32, direction: PortDirection) -> Checked {
        match self.kernel.ports.get(index as usize) {
            None => Err(format!("port {index} does not exist")),
            Some(port) if port.direction != direction => {
                Err(format!("port {} used in the wrong direction", port.name))
            }
            Some(_) => Ok(()),
        }
    }

    fn task_id(&self, index: u32) -> Checked {
        if (index as usize) < self.kernel.tasks.len() {
            Ok(())
        } else {
            Err(format!("task {index} does not exist"))
        }
    }
}

fn unary_ok(op: UnaryOp, ty: ScalarTy) -> Checked {
    let ok = match op {
        UnaryOp::Neg => ty != ScalarTy::Bool,
        UnaryOp::Not => !ty.is_float(),
    };
    ok.then_some(())
        .ok_or_else(|| format!("{op:?} on {}", ty.name()))
}

fn binary_ok(op: BinaryOp, ty: ScalarTy) -> Checked {
    let ok = match op {
        BinaryOp::Add | BinaryOp::Sub | BinaryOp::Mul | BinaryOp::Div | BinaryOp::Rem => {
            ty != ScalarTy::Bool
        }
        BinaryOp::And | BinaryOp::Or => !ty.is_float(),
        _ => true,
    };
    ok.then_some(())
        .ok_or_else(|| format!("{op:?} on {}", ty.name()))
}

fn math_ok(func: MathFn, ty: ScalarTy) -> Checked {
    let ok = func == MathFn::Abs && is_integer(ty) || ty.is_float();
    ok.then_some(())
        .ok_or_else(|| format!("{func:?} on {}", ty.name()))
}
