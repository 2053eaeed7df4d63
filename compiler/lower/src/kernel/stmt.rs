//! Lowering of task-body statements: locals for `let`/`var`/`for`, assignments to locals, SRAM
//! scalars, elements and slices (vector statements), control flow, and the transfers
//! (`recv`/`send`/`activate`). A branch or loop whose condition folds to a constant is
//! resolved here.

use wsel_ir::kernel::{AssignOp, BinaryOp, Const, Expr, ScalarTy, Slice, Stmt, SwitchCmd, TaskId};
use wsel_syntax::ast;

use super::{Lowerer, Member, NameRef, fold, same_length};
use crate::error::LowerError;
use crate::value::{ElemTy, is_int, scalar_ty, zero};

type Lowered<T> = Result<T, LowerError>;

impl Lowerer<'_> {
    /// Lowers a block in a new scope.
    pub(super) fn block(&mut self, block: &ast::Block) -> Lowered<Vec<Stmt>> {
        self.scopes.push(Vec::new());
        let mut out = Vec::new();
        for stmt in &block.stmts {
            self.stmt(stmt, &mut out)?;
        }
        self.scopes.pop();
        Ok(out)
    }

    fn stmt(&mut self, stmt: &ast::Stmt, out: &mut Vec<Stmt>) -> Lowered<()> {
        match stmt {
            ast::Stmt::Let {
                name, ty, value, ..
            } => {
                let ty = match ty {
                    Some(written) => self.scalar_type(written)?,
                    None => self.infer(value, None).elem.resolve(None),
                };
                let (value, _) = self.expr(value, Some(ty))?;
                let local = self.declare_local(&name.name, ty);
                out.push(Stmt::SetLocal { local, value });
            }
            ast::Stmt::Var(v) => {
                let ty = self.scalar_type(&v.ty)?;
                let value = match &v.init {
                    Some(init) => self.expr(init, Some(ty))?.0,
                    None => Expr::Const(zero(ty)),
                };
                let local = self.declare_local(&v.name.name, ty);
                out.push(Stmt::SetLocal { local, value });
            }
            ast::Stmt::Assign {
                place, op, value, ..
            } => self.assign(place, assign_op(*op), value, out)?,
            ast::Stmt::For {
                var, lo, hi, body, ..
            } => {
                let ty = self.loop_type(lo, hi);
                let (lo, _) = self.expr(lo, Some(ty))?;
                let (hi, _) = self.expr(hi, Some(ty))?;
                self.scopes.push(Vec::new());
                let local = self.declare_local(&var.name, ty);
                let body = self.block(body);
                self.scopes.pop();
                out.push(Stmt::For {
                    local,
                    lo,
                    hi,
                    body: body?,
                });
            }
            ast::Stmt::While { cond, body, .. } => {
                let (cond, _) = self.expr(cond, Some(ScalarTy::Bool))?;
                let start = self.transfer_spans.len();
                let body = self.block(body)?;
                if fold::as_bool(&cond) != Some(false) {
                    out.push(Stmt::While { cond, body });
                } else {
                    self.transfer_spans.truncate(start);
                }
            }
            ast::Stmt::If {
                cond,
                then_block,
                else_block,
                ..
            } => {
                let (cond, _) = self.expr(cond, Some(ScalarTy::Bool))?;
                let start = self.transfer_spans.len();
                let then_body = self.block(then_block)?;
                let middle = self.transfer_spans.len();
                let else_body = match else_block {
                    Some(block) => self.block(block)?,
                    None => Vec::new(),
                };
                let end = self.transfer_spans.len();
                match fold::as_bool(&cond) {
                    Some(true) => {
                        self.transfer_spans.drain(middle..end);
                        named_tasks(&else_body, &mut self.folded_targets);
                        out.extend(then_body);
                    }
                    Some(false) => {
                        self.transfer_spans.drain(start..middle);
                        named_tasks(&then_body, &mut self.folded_targets);
                        out.extend(else_body);
                    }
                    None => out.push(Stmt::If {
                        cond,
                        then_body,
                        else_body,
                    }),
                }
            }
            ast::Stmt::Recv {
                port,
                target,
                then,
                span,
            } => {
                let port = self.port(port)?;
                let dst = self.recv_target(target)?;
                let then = self.task(then)?;
                self.transfer_spans.push(span.clone());
                out.push(Stmt::Recv { port, dst, then });
            }
            ast::Stmt::Send {
                port,
                value,
                then,
                span,
            } => {
                self.transfer_spans.push(span.clone());
                let (port, elem) = self.port_with_elem(port)?;
                let then = match then {
                    Some(t) => Some(self.task(t)?),
                    None => None,
                };
                if let ast::Expr::Slice { base, lo, hi, .. } = value {
                    let src = self.slice(base, lo, hi)?;
                    out.push(Stmt::SendSlice { port, src, then });
                } else {
                    let (value, _) = self.expr(value, Some(elem))?;
                    out.push(Stmt::SendScalar { port, value, then });
                }
            }
            ast::Stmt::Activate { task, span } => {
                let task = self.task(task)?;
                self.transfer_spans.push(span.clone());
                out.push(Stmt::Activate(task));
            }
            ast::Stmt::Control {
                port,
                commands,
                span,
            } => {
                let port = self.port(port)?;
                let counted = commands
                    .iter()
                    .map(|c| self.command(c))
                    .collect::<Lowered<Vec<_>>>()?;
                // Counted before the list is built: a count may be as large as a u32.
                let total: u64 = counted.iter().map(|&(_, n)| n as u64).sum();
                if total == 0 || total > wsel_abi::COMMAND_HOPS as u64 {
                    let message = format!(
                        "its control wavelet has {total} commands with these arguments; it \
                         carries 1 to {}, one per router",
                        wsel_abi::COMMAND_HOPS
                    );
                    return Err(self.error(span, message));
                }
                let commands = counted
                    .into_iter()
                    .flat_map(|(word, n)| std::iter::repeat_n(word, n))
                    .collect();
                out.push(Stmt::Control { port, commands });
            }
            ast::Stmt::Return(_) => out.push(Stmt::Return),
            // An expression statement has no effect (and is reported by the checker).
            ast::Stmt::Expr(_) => {}
            ast::Stmt::Error(span) => return Err(self.error(span, "the task has syntax errors")),
        }
        Ok(())
    }

    /// A control statement's command and how many times it is sent: its count, which must
    /// fold to a constant once the kernel's parameters are bound.
    fn command(&mut self, command: &ast::Command) -> Lowered<(SwitchCmd, usize)> {
        let word = match command.word.name.as_str() {
            "adv" => SwitchCmd::Adv,
            "reset" => SwitchCmd::Reset,
            "nop" => SwitchCmd::Nop,
            other => {
                let message = format!("`{other}` is not a command");
                return Err(self.error(&command.word.span, message));
            }
        };
        let Some(count) = &command.count else {
            return Ok((word, 1));
        };
        match self.expr(count, Some(ScalarTy::U32))? {
            (Expr::Const(c), _) => Ok((word, c.bits as usize)),
            _ => Err(self.error(
                &count.span(),
                "a command's count is not known when the kernel is built",
            )),
        }
    }

    /// `place op= value`, appended to `out`.
    fn assign(
        &mut self,
        place: &ast::Expr,
        op: AssignOp,
        value: &ast::Expr,
        out: &mut Vec<Stmt>,
    ) -> Lowered<()> {
        let stmt = match place {
            ast::Expr::Name(id) => match self.resolve(&id.name) {
                Some(NameRef::Local(local, ty)) => {
                    let (value, _) = self.expr(value, Some(ty))?;
                    let value = match compound(op) {
                        None => value,
                        Some(bin) => fold::binary(bin, ty, Expr::Local(local), value),
                    };
                    Ok(Stmt::SetLocal { local, value })
                }
                Some(NameRef::Member(Member::Scalar { id: array, elem })) => {
                    let (value, _) = self.expr(value, Some(elem))?;
                    Ok(Stmt::Store {
                        array,
                        index: Expr::Const(Const::u32(0)),
                        op,
                        value,
                    })
                }
                _ => Err(self.error(&id.span, format!("`{}` cannot be assigned", id.name))),
            },
            ast::Expr::Index { base, index, .. } => {
                let array = self.array_of(base)?;
                let elem = self.array(array).elem;
                let (index, _) = self.expr(index, Some(ScalarTy::U32))?;
                let (value, _) = self.expr(value, Some(elem))?;
                Ok(Stmt::Store {
                    array,
                    index,
                    op,
                    value,
                })
            }
            ast::Expr::Slice { base, lo, hi, .. } => {
                let dst = self.slice(base, lo, hi)?;
                let elem = self.array(dst.array).elem;
                self.slice_lens.clear();
                let value = self.vexpr(value, elem);
                let lens = std::mem::take(&mut self.slice_lens);
                let value = value?;
                for (len, at) in lens {
                    if let (Expr::Const(a), Expr::Const(b)) = (&dst.len, &len)
                        && a.bits != b.bits
                    {
                        return Err(self.error(
                            &at,
                            format!(
                                "this slice has {} elements but the slice it is assigned to has {}",
                                b.bits, a.bits
                            ),
                        ));
                    }
                    // Lengths known only at run time are compared then.
                    if !same_length::always_equal(&len, &dst.len) {
                        out.push(Stmt::CheckLength {
                            len,
                            expected: dst.len.clone(),
                        });
                    }
                }
                Ok(Stmt::Vector { dst, op, value })
            }
            other => Err(self.error(&other.span(), "this cannot be assigned")),
        }?;
        out.push(stmt);
        Ok(())
    }

    /// The slice a `recv` writes: a slice, one element, or an SRAM scalar.
    fn recv_target(&mut self, target: &ast::Expr) -> Lowered<Slice> {
        let one = Expr::Const(Const::u32(1));
        match target {
            ast::Expr::Slice { base, lo, hi, .. } => self.slice(base, lo, hi),
            ast::Expr::Index { base, index, .. } => {
                let array = self.array_of(base)?;
                let (start, _) = self.expr(index, Some(ScalarTy::U32))?;
                Ok(Slice {
                    array,
                    start,
                    len: one,
                })
            }
            ast::Expr::Name(id) => match self.resolve(&id.name) {
                Some(NameRef::Member(Member::Scalar { id: array, .. })) => Ok(Slice {
                    array,
                    start: Expr::Const(Const::u32(0)),
                    len: one,
                }),
                Some(NameRef::Local(..)) => Err(self.error(
                    &id.span,
                    format!(
                        "`{}` is a task-local variable; a receive completes after the task ends, so it must write SRAM (declare it as a kernel `var`)",
                        id.name
                    ),
                )),
                _ => Err(self.error(&id.span, format!("cannot receive into `{}`", id.name))),
            },
            other => Err(self.error(&other.span(), "cannot receive into this expression")),
        }
    }

    /// The type of a `for` loop's variable: the bounds' integer type, `i32` for literals.
    fn loop_type(&self, lo: &ast::Expr, hi: &ast::Expr) -> ScalarTy {
        match self.infer(lo, None).elem {
            ElemTy::Known(t) if is_int(t) => t,
            _ => match self.infer(hi, None).elem {
                ElemTy::Known(t) if is_int(t) => t,
                _ => ScalarTy::I32,
            },
        }
    }

    fn scalar_type(&self, ty: &ast::Type) -> Lowered<ScalarTy> {
        match ty {
            ast::Type::Scalar(t, _) => Ok(scalar_ty(*t)),
            ast::Type::Array { span, .. }
            | ast::Type::Stream(_, span)
            | ast::Type::Tensor { span, .. }
            | ast::Type::Error(span) => {
                Err(self.error(span, "a task-local variable must be a scalar"))
            }
        }
    }

    fn port(&self, name: &ast::Ident) -> Lowered<wsel_ir::kernel::PortId> {
        self.port_with_elem(name).map(|(id, _)| id)
    }

    fn port_with_elem(&self, name: &ast::Ident) -> Lowered<(wsel_ir::kernel::PortId, ScalarTy)> {
        match self.resolve(&name.name) {
            Some(NameRef::Member(Member::Port { id, elem })) => Ok((id, elem)),
            _ => Err(self.error(&name.span, format!("`{}` is not a port", name.name))),
        }
    }

    fn task(&self, name: &ast::Ident) -> Lowered<wsel_ir::kernel::TaskId> {
        match self.resolve(&name.name) {
            Some(NameRef::Member(Member::Task(id))) => Ok(id),
            _ => Err(self.error(&name.span, format!("`{}` is not a task", name.name))),
        }
    }
}

fn assign_op(op: ast::AssignOp) -> AssignOp {
    match op {
        ast::AssignOp::Set => AssignOp::Set,
        ast::AssignOp::Add => AssignOp::Add,
        ast::AssignOp::Sub => AssignOp::Sub,
        ast::AssignOp::Mul => AssignOp::Mul,
        ast::AssignOp::Div => AssignOp::Div,
    }
}

/// The operation a compound assignment applies (`None` for `=`).
fn compound(op: AssignOp) -> Option<BinaryOp> {
    match op {
        AssignOp::Set => None,
        AssignOp::Add => Some(BinaryOp::Add),
        AssignOp::Sub => Some(BinaryOp::Sub),
        AssignOp::Mul => Some(BinaryOp::Mul),
        AssignOp::Div => Some(BinaryOp::Div),
    }
}

/// Adds the tasks that a `then` or `activate` in `body` names to `out`.
fn named_tasks(body: &[Stmt], out: &mut Vec<TaskId>) {
    for stmt in body {
        match stmt {
            Stmt::Recv { then, .. } => out.push(*then),
            Stmt::SendSlice { then, .. } | Stmt::SendScalar { then, .. } => out.extend(*then),
            Stmt::Activate(task) => out.push(*task),
            Stmt::If {
                then_body,
                else_body,
                ..
            } => {
                named_tasks(then_body, out);
                named_tasks(else_body, out);
            }
            Stmt::While { body, .. } | Stmt::For { body, .. } => named_tasks(body, out),
            Stmt::Return
            | Stmt::SetLocal { .. }
            | Stmt::Store { .. }
            | Stmt::Vector { .. }
            | Stmt::CheckLength { .. }
            | Stmt::Control { .. } => {}
        }
    }
}
