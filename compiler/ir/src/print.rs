//! A readable text form of kernel IR, for `--emit ir` and for snapshot tests.
//!
//! The form resembles the source language: arrays with their SRAM offsets, ports, then each
//! task's statements with locals named `name%index` and arrays and ports by name.

use std::fmt::Write;

use crate::kernel::{
    AssignOp, BinaryOp, Coord, Expr, KernelIr, MathFn, PortDirection, ReduceOp, ScalarTy, Slice,
    Stmt, Task, UnaryOp, VExpr,
};

/// Prints `kernel` in the readable form.
pub fn print_kernel(kernel: &KernelIr) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "kernel {} (entry: {}) {{",
        kernel.name,
        kernel.task(kernel.entry).name
    );
    for array in &kernel.arrays {
        let _ = writeln!(
            out,
            "    sram {}: [{}; {}] @ word {} = {}",
            array.name,
            array.elem.name(),
            array.len,
            array.offset_words,
            const_text(array.init.ty, array.init.bits)
        );
    }
    for port in &kernel.ports {
        let dir = match port.direction {
            PortDirection::In => "in",
            PortDirection::Out => "out",
        };
        let _ = writeln!(out, "    {dir} {}: stream<{}>", port.name, port.elem.name());
    }
    for task in &kernel.tasks {
        let printer = Printer { kernel, task };
        let _ = writeln!(out, "    task {}() {{", task.name);
        printer.stmts(&task.body, 2, &mut out);
        let _ = writeln!(out, "    }}");
    }
    out.push_str("}\n");
    out
}

struct Printer<'a> {
    kernel: &'a KernelIr,
    task: &'a Task,
}

impl Printer<'_> {
    fn stmts(&self, stmts: &[Stmt], depth: usize, out: &mut String) {
        for stmt in stmts {
            self.stmt(stmt, depth, out);
        }
    }

    fn stmt(&self, stmt: &Stmt, depth: usize, out: &mut String) {
        let pad = "    ".repeat(depth);
        match stmt {
            Stmt::SetLocal { local, value } => {
                let _ = writeln!(out, "{pad}{} = {};", self.local(local.0), self.expr(value));
            }
            Stmt::Store {
                array,
                index,
                op,
                value,
            } => {
                let _ = writeln!(
                    out,
                    "{pad}{}[{}] {} {};",
                    self.kernel.array(*array).name,
                    self.expr(index),
                    assign_text(*op),
                    self.expr(value)
                );
            }
            Stmt::Vector { dst, op, value } => {
                let _ = writeln!(
                    out,
                    "{pad}{} {} {};",
                    self.slice(dst),
                    assign_text(*op),
                    self.vexpr(value)
                );
            }
            Stmt::For {
                local,
                lo,
                hi,
                body,
            } => {
                let _ = writeln!(
                    out,
                    "{pad}for {} in {}..{} {{",
                    self.local(local.0),
                    self.expr(lo),
                    self.expr(hi)
                );
                self.stmts(body, depth + 1, out);
                let _ = writeln!(out, "{pad}}}");
            }
            Stmt::While { cond, body } => {
                let _ = writeln!(out, "{pad}while {} {{", self.expr(cond));
                self.stmts(body, depth + 1, out);
                let _ = writeln!(out, "{pad}}}");
            }
            Stmt::If {
                cond,
                then_body,
                else_body,
            } => {
                let _ = writeln!(out, "{pad}if {} {{", self.expr(cond));
                self.stmts(then_body, depth + 1, out);
                if !else_body.is_empty() {
                    let _ = writeln!(out, "{pad}}} else {{");
                    self.stmts(else_body, depth + 1, out);
                }
                let _ = writeln!(out, "{pad}}}");
            }
            Stmt::SendSlice { port, src, then } => {
                let _ = writeln!(
                    out,
                    "{pad}send({}, {}){};",
                    self.kernel.port(*port).name,
                    self.slice(src),
                    self.then_text(*then)
                );
            }
            Stmt::SendScalar { port, value, then } => {
                let _ = writeln!(
                    out,
                    "{pad}send({}, {}){};",
                    self.kernel.port(*port).name,
                    self.expr(value),
                    self.then_text(*then)
                );
            }
            Stmt::Recv { port, dst, then } => {
                let _ = writeln!(
                    out,
                    "{pad}recv({}, {}){};",
                    self.kernel.port(*port).name,
                    self.slice(dst),
                    self.then_text(Some(*then))
                );
            }
            Stmt::Activate(task) => {
                let _ = writeln!(out, "{pad}activate {};", self.kernel.task(*task).name);
            }
            Stmt::Control { port, commands } => {
                let names: Vec<&str> = commands.iter().map(|c| c.name()).collect();
                let _ = writeln!(
                    out,
                    "{pad}control({}, [{}]);",
                    self.kernel.port(*port).name,
                    names.join(", ")
                );
            }
            Stmt::Return => {
                let _ = writeln!(out, "{pad}return;");
            }
            Stmt::CheckLength { len, expected } => {
                let _ = writeln!(
                    out,
                    "{pad}check_length({}, {});",
                    self.expr(len),
                    self.expr(expected)
                );
            }
        }
    }

    fn then_text(&self, then: Option<crate::kernel::TaskId>) -> String {
        then.map_or(String::new(), |t| {
            format!(" then {}", self.kernel.task(t).name)
        })
    }

    fn local(&self, index: u32) -> String {
        let name = self
            .task
            .locals
            .get(index as usize)
            .map_or("?", |l| l.name.as_str());
        format!("{name}%{index}")
    }

    fn slice(&self, slice: &Slice) -> String {
        format!(
            "{}[{} +: {}]",
            self.kernel.array(slice.array).name,
            self.expr(&slice.start),
            self.expr(&slice.len)
        )
    }

    fn expr(&self, expr: &Expr) -> String {
        match expr {
            Expr::Const(c) => const_text(c.ty, c.bits),
            Expr::Local(l) => self.local(l.0),
            Expr::Coord(c) => coord_text(*c).to_string(),
            Expr::Load { array, index } => {
                format!("{}[{}]", self.kernel.array(*array).name, self.expr(index))
            }
            Expr::Unary { op, ty, operand } => {
                format!("{}.{}({})", unary_text(*op), ty.name(), self.expr(operand))
            }
            Expr::Binary { op, ty, lhs, rhs } => format!(
                "{}.{}({}, {})",
                binary_text(*op),
                ty.name(),
                self.expr(lhs),
                self.expr(rhs)
            ),
            Expr::Cast { from, to, value } => {
                format!(
                    "({} as {} from {})",
                    self.expr(value),
                    to.name(),
                    from.name()
                )
            }
            Expr::Math { func, ty, arg } => {
                format!("{}.{}({})", math_text(*func), ty.name(), self.expr(arg))
            }
            Expr::Reduce { op, ty, src } => {
                format!("{}.{}({})", reduce_text(*op), ty.name(), self.slice(src))
            }
            Expr::Select {
                ty,
                cond,
                on_true,
                on_false,
            } => format!(
                "select.{}({}, {}, {})",
                ty.name(),
                self.expr(cond),
                self.expr(on_true),
                self.expr(on_false)
            ),
        }
    }

    fn vexpr(&self, value: &VExpr) -> String {
        match value {
            VExpr::Scalar(e) => self.expr(e),
            VExpr::Elem { array, start } => {
                format!(
                    "{}[{} + i]",
                    self.kernel.array(*array).name,
                    self.expr(start)
                )
            }
            VExpr::Unary { op, ty, operand } => {
                format!("{}.{}({})", unary_text(*op), ty.name(), self.vexpr(operand))
            }
            VExpr::Binary { op, ty, lhs, rhs } => format!(
                "{}.{}({}, {})",
                binary_text(*op),
                ty.name(),
                self.vexpr(lhs),
                self.vexpr(rhs)
            ),
            VExpr::Cast { from, to, value } => {
                format!(
                    "({} as {} from {})",
                    self.vexpr(value),
                    to.name(),
                    from.name()
                )
            }
            VExpr::Math { func, ty, arg } => {
                format!("{}.{}({})", math_text(*func), ty.name(), self.vexpr(arg))
            }
            VExpr::Select {
                ty,
                cond,
                on_true,
                on_false,
            } => format!(
                "select.{}({}, {}, {})",
                ty.name(),
                self.vexpr(cond),
                self.vexpr(on_true),
                self.vexpr(on_false)
            ),
        }
    }
}

fn const_text(ty: ScalarTy, bits: u32) -> String {
    match ty {
        ScalarTy::F32 | ScalarTy::F16 => format!("{:?}", f32::from_bits(bits)),
        ScalarTy::I32 => format!("{}i", bits as i32),
        ScalarTy::U32 => format!("{bits}u"),
        ScalarTy::Bool => (bits != 0).to_string(),
    }
}

fn coord_text(coord: Coord) -> &'static str {
    match coord {
        Coord::PeRow => "pe.row",
        Coord::PeCol => "pe.col",
        Coord::RegionRows => "region.rows",
        Coord::RegionCols => "region.cols",
        Coord::Cycle => "pe.cycle",
    }
}

fn assign_text(op: AssignOp) -> &'static str {
    match op {
        AssignOp::Set => "=",
        AssignOp::Add => "+=",
        AssignOp::Sub => "-=",
        AssignOp::Mul => "*=",
        AssignOp::Div => "/=",
    }
}

fn unary_text(op: UnaryOp) -> &'static str {
    match op {
        UnaryOp::Neg => "neg",
        UnaryOp::Not => "not",
    }
}

fn binary_text(op: BinaryOp) -> &'static str {
    match op {
        BinaryOp::Add => "add",
        BinaryOp::Sub => "sub",
        BinaryOp::Mul => "mul",
        BinaryOp::Div => "div",
        BinaryOp::Rem => "rem",
        BinaryOp::Min => "min",
        BinaryOp::Max => "max",
        BinaryOp::Eq => "eq",
        BinaryOp::Ne => "ne",
        BinaryOp::Lt => "lt",
        BinaryOp::Le => "le",
        BinaryOp::Gt => "gt",
        BinaryOp::Ge => "ge",
        BinaryOp::And => "and",
        BinaryOp::Or => "or",
    }
}

fn math_text(func: MathFn) -> &'static str {
    match func {
        MathFn::Exp => "exp",
        MathFn::Log => "log",
        MathFn::Sqrt => "sqrt",
        MathFn::Tanh => "tanh",
        MathFn::Abs => "abs",
    }
}

fn reduce_text(op: ReduceOp) -> &'static str {
    match op {
        ReduceOp::Sum => "sum",
        ReduceOp::Max => "max",
        ReduceOp::Min => "min",
    }
}
