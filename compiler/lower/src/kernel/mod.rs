//! Kernel lowering: one kernel instance (a kernel with its compile-time parameters fixed) to
//! kernel IR. `kernel_instance` is a tracked query keyed by an interned [`KernelInstanceKey`],
//! so within a run each distinct instance is lowered once.
//!
//! What lowering does, in order: binds the parameters to the given arguments; lays out SRAM
//! (arrays and SRAM scalars packed from word 0 in declaration order, a scalar being an array
//! of length 1, every element initialised from the declaration; lengths, initial values and
//! constants are evaluated by the checker's evaluator, `wsel_sema::consteval`, now that the
//! parameters have values); numbers the ports and tasks
//! in declaration order; then lowers every task body (`stmt`) with its expressions typed as
//! the checker types them (`infer`, `expr`). Parameters and constants are folded into the
//! code, and integer and boolean operations on constants are folded with the IR's own
//! run-time semantics (wrapping), so folding never changes what a kernel computes.

mod expr;
mod fold;
mod infer;
mod same_length;
mod stmt;

use std::collections::BTreeMap;
use std::path::PathBuf;

use wsel_ir::graph::CValue;
use wsel_ir::kernel::{
    Array, ArrayId, KernelIr, KernelSpans, Local, LocalId, Port, PortDirection, PortId, ScalarTy,
    Task, TaskId, TaskSpans,
};
use wsel_sema::consteval::{ConstNames, eval_as};
use wsel_sema::items::ModuleScope;
use wsel_sema::ty::Value;
use wsel_sema::{Db, ItemId, ItemKind, Location, const_value, item_ast, module_scope};
use wsel_syntax::ast::{self, ScalarType, Span};

use crate::error::LowerError;
use crate::value::{ArgValue, scalar_ty, to_const, zero};

/// A kernel instance: the kernel item and its arguments, sorted by parameter name.
#[salsa::interned(debug)]
pub struct KernelInstanceKey<'db> {
    #[returns(copy)]
    pub kernel: ItemId<'db>,
    #[returns(ref)]
    pub args: Vec<(String, ArgValue)>,
}

/// Lowers the kernel `kernel` with its parameters bound to `args` (name, value; any order).
/// The result is memoized per distinct instance.
pub fn lower_kernel<'db>(
    db: &'db dyn Db,
    kernel: ItemId<'db>,
    args: &[(String, CValue)],
) -> Result<KernelIr, LowerError> {
    kernel_instance(db, instance_key(db, kernel, args)).clone()
}

/// As [`lower_kernel`], with the side table of where the instance's tasks and transfer
/// statements are written (for diagnostics about the IR, such as the static hang checks).
/// Not memoized: it lowers the instance again.
pub fn lower_kernel_with_spans<'db>(
    db: &'db dyn Db,
    kernel: ItemId<'db>,
    args: &[(String, CValue)],
) -> Result<(KernelIr, KernelSpans), LowerError> {
    let key = instance_key(db, kernel, args);
    lower_instance(db, key)
}

/// The interned key of a kernel instance.
pub fn instance_key<'db>(
    db: &'db dyn Db,
    kernel: ItemId<'db>,
    args: &[(String, CValue)],
) -> KernelInstanceKey<'db> {
    let mut key_args: Vec<(String, ArgValue)> = args
        .iter()
        .map(|(name, value)| (name.clone(), ArgValue::from(*value)))
        .collect();
    key_args.sort_by(|a, b| a.0.cmp(&b.0));
    KernelInstanceKey::new(db, kernel, key_args)
}

/// The kernel IR of one kernel instance.
#[salsa::tracked(returns(ref))]
pub fn kernel_instance<'db>(
    db: &'db dyn Db,
    key: KernelInstanceKey<'db>,
) -> Result<KernelIr, LowerError> {
    lower_instance(db, key).map(|(ir, _)| ir)
}

fn lower_instance<'db>(
    db: &'db dyn Db,
    key: KernelInstanceKey<'db>,
) -> Result<(KernelIr, KernelSpans), LowerError> {
    let item = key.kernel(db);
    let Some(ast::Item::Kernel(kernel)) = item_ast(db, item) else {
        return Err(LowerError::new(
            item.name(db),
            format!("`{}` is not a kernel", item.name(db)),
            None,
        ));
    };
    let mut lowerer = Lowerer::new(db, item, kernel.name.name.clone());
    lowerer.bind_params(kernel, key.args(db))?;
    lowerer.declare_members(kernel)?;
    lowerer.lower_tasks(kernel)
}

/// What a kernel-level name means.
#[derive(Debug, Clone)]
enum Member {
    /// A parameter or constant: a compile-time value and its type as written (the IR type
    /// is `scalar_ty` of it).
    Value(Value, ScalarType),
    Array {
        id: ArrayId,
        elem: ScalarTy,
    },
    /// An SRAM scalar (an array of length 1).
    Scalar {
        id: ArrayId,
        elem: ScalarTy,
    },
    Port {
        id: PortId,
        elem: ScalarTy,
    },
    Task(TaskId),
}

/// What a name in a task body refers to.
#[derive(Debug, Clone)]
enum NameRef {
    Local(LocalId, ScalarTy),
    Member(Member),
    /// A module constant, with its type as written.
    Const(Value, ScalarType),
}

/// The state of lowering one kernel instance.
struct Lowerer<'db> {
    db: &'db dyn Db,
    file: PathBuf,
    module: &'db ModuleScope<'db>,
    /// The instance's name, e.g. `dense_tile<n=4,m=2,samples=3>`.
    name: String,
    members: BTreeMap<String, Member>,
    arrays: Vec<Array>,
    ports: Vec<Port>,
    // Per task:
    locals: Vec<Local>,
    scopes: Vec<Vec<(String, LocalId)>>,
    /// The lengths of the slices read by the vector statement being lowered.
    slice_lens: Vec<(wsel_ir::kernel::Expr, Span)>,
    /// The spans of the task's transfer statements lowered so far, in the numbering of
    /// [`KernelSpans`] (statements of branches that folding drops are removed again).
    transfer_spans: Vec<Span>,
    /// The task being lowered's [`TaskSpans::folded_targets`].
    folded_targets: Vec<TaskId>,
}

impl ConstNames for Lowerer<'_> {
    fn const_name(&self, name: &str) -> Option<(Value, ScalarType)> {
        match self.members.get(name) {
            Some(Member::Value(value, ty)) => Some((*value, *ty)),
            Some(_) => None,
            None => self.module_const(name),
        }
    }
}

impl<'db> Lowerer<'db> {
    fn new(db: &'db dyn Db, item: ItemId<'db>, name: String) -> Self {
        let file = item.file(db);
        Lowerer {
            db,
            file: file.path(db).clone(),
            module: module_scope(db, file),
            name,
            members: BTreeMap::new(),
            arrays: Vec::new(),
            ports: Vec::new(),
            locals: Vec::new(),
            scopes: Vec::new(),
            slice_lens: Vec::new(),
            transfer_spans: Vec::new(),
            folded_targets: Vec::new(),
        }
    }

    fn error(&self, span: &Span, message: impl Into<String>) -> LowerError {
        let location = Location {
            file: self.file.clone(),
            span: span.clone(),
        };
        LowerError::new(&self.name, message, Some(location))
    }

    /// Binds every parameter to its argument and names the instance.
    fn bind_params(
        &mut self,
        kernel: &ast::Kernel,
        args: &[(String, ArgValue)],
    ) -> Result<(), LowerError> {
        let mut shown = Vec::new();
        for p in &kernel.params {
            let ast::Type::Scalar(written, _) = &p.ty else {
                return Err(self.error(
                    &p.span,
                    format!("parameter `{}` is not a scalar", p.name.name),
                ));
            };
            let ty = scalar_ty(*written);
            let Some((_, arg)) = args.iter().find(|(n, _)| *n == p.name.name) else {
                return Err(self.error(
                    &p.name.span,
                    format!("no argument for parameter `{}`", p.name.name),
                ));
            };
            let value = arg.to_value();
            if to_const(value, ty).is_none() {
                return Err(self.error(
                    &p.name.span,
                    format!(
                        "the argument {arg} does not fit parameter `{}` of type {}",
                        p.name.name,
                        ty.name()
                    ),
                ));
            }
            shown.push(format!("{}={arg}", p.name.name));
            self.members
                .insert(p.name.name.clone(), Member::Value(value, *written));
        }
        if !shown.is_empty() {
            self.name = format!("{}<{}>", kernel.name.name, shown.join(","));
        }
        if let Some((name, _)) = args
            .iter()
            .find(|(n, _)| !kernel.params.iter().any(|p| p.name.name == *n))
        {
            return Err(self.error(
                &kernel.name.span,
                format!("kernel `{}` has no parameter `{name}`", kernel.name.name),
            ));
        }
        Ok(())
    }

    /// Numbers ports and tasks, lays out SRAM and evaluates constants, in declaration order.
    fn declare_members(&mut self, kernel: &ast::Kernel) -> Result<(), LowerError> {
        let mut tasks = 0u32;
        for member in &kernel.members {
            match member {
                ast::KernelMember::Port(p) => {
                    let ast::Type::Stream(elem, _) = &p.ty else {
                        return Err(self.error(&p.span, "a port without a stream type"));
                    };
                    let id = PortId(self.ports.len() as u32);
                    let elem = scalar_ty(*elem);
                    self.ports.push(Port {
                        name: p.name.name.clone(),
                        direction: match p.direction {
                            ast::PortDirection::In => PortDirection::In,
                            ast::PortDirection::Out => PortDirection::Out,
                        },
                        elem,
                    });
                    self.members
                        .insert(p.name.name.clone(), Member::Port { id, elem });
                }
                ast::KernelMember::Task(t) => {
                    self.members
                        .insert(t.name.name.clone(), Member::Task(TaskId(tasks)));
                    tasks += 1;
                }
                _ => {}
            }
        }
        let mut offset: u32 = 0;
        for member in &kernel.members {
            match member {
                ast::KernelMember::Var(v) => {
                    // An SRAM scalar is an array of length 1.
                    let (written, len, is_scalar) = match &v.ty {
                        ast::Type::Scalar(elem, _) => (*elem, 1, true),
                        ast::Type::Array { elem, len, .. } => {
                            let value = eval_as(self, len, ScalarType::U32).map_err(|m| {
                                self.error(&len.span(), format!("array length: {m}"))
                            })?;
                            let len = match value {
                                Value::Int(n) => u32::try_from(n).ok(),
                                _ => None,
                            }
                            .ok_or_else(|| self.error(&len.span(), "an invalid array length"))?;
                            (*elem, len, false)
                        }
                        _ => return Err(self.error(&v.span, "storage of an invalid type")),
                    };
                    let elem = scalar_ty(written);
                    let id = ArrayId(self.arrays.len() as u32);
                    let member = if is_scalar {
                        Member::Scalar { id, elem }
                    } else {
                        Member::Array { id, elem }
                    };
                    let init = match &v.init {
                        Some(init) => {
                            let value = eval_as(self, init, written).map_err(|m| {
                                self.error(&init.span(), format!("initial value: {m}"))
                            })?;
                            to_const(value, elem).ok_or_else(|| {
                                self.error(&init.span(), "the initial value does not fit")
                            })?
                        }
                        None => zero(elem),
                    };
                    self.arrays.push(Array {
                        name: v.name.name.clone(),
                        elem,
                        len,
                        offset_words: offset,
                        init,
                    });
                    offset = offset.checked_add(len).ok_or_else(|| {
                        self.error(&v.span, "the kernel's SRAM exceeds 2^32 words")
                    })?;
                    self.members.insert(v.name.name.clone(), member);
                }
                ast::KernelMember::Const(c) => {
                    let ast::Type::Scalar(ty, _) = &c.ty else {
                        return Err(self.error(&c.span, "a constant of a non-scalar type"));
                    };
                    let value = eval_as(self, &c.value, *ty).map_err(|m| {
                        self.error(&c.value.span(), format!("constant `{}`: {m}", c.name.name))
                    })?;
                    if to_const(value, scalar_ty(*ty)).is_none() {
                        return Err(
                            self.error(&c.value.span(), "the constant does not fit its type")
                        );
                    }
                    self.members
                        .insert(c.name.name.clone(), Member::Value(value, *ty));
                }
                ast::KernelMember::Error(span) => {
                    return Err(self.error(span, "the kernel has syntax errors"));
                }
                ast::KernelMember::Port(_) | ast::KernelMember::Task(_) => {}
            }
        }
        Ok(())
    }

    /// Lowers every task and assembles the instance.
    fn lower_tasks(mut self, kernel: &ast::Kernel) -> Result<(KernelIr, KernelSpans), LowerError> {
        let mut tasks = Vec::new();
        let mut spans = KernelSpans {
            file: self.file.clone(),
            tasks: Vec::new(),
        };
        let mut entry = None;
        for member in &kernel.members {
            let ast::KernelMember::Task(t) = member else {
                continue;
            };
            if t.name.name == "main" {
                entry = Some(TaskId(tasks.len() as u32));
            }
            self.locals.clear();
            self.scopes.clear();
            self.transfer_spans.clear();
            self.folded_targets.clear();
            let body = self.block(&t.body)?;
            spans.tasks.push(TaskSpans {
                name: t.name.span.clone(),
                transfers: std::mem::take(&mut self.transfer_spans),
                folded_targets: std::mem::take(&mut self.folded_targets),
            });
            tasks.push(Task {
                name: t.name.name.clone(),
                locals: std::mem::take(&mut self.locals),
                body,
            });
        }
        let entry =
            entry.ok_or_else(|| self.error(&kernel.name.span, "the kernel has no task `main`"))?;
        let ir = KernelIr {
            name: self.name,
            arrays: self.arrays,
            ports: self.ports,
            tasks,
            entry,
        };
        Ok((ir, spans))
    }

    /// The type and value of a module constant named `name`.
    fn module_const(&self, name: &str) -> Option<(Value, ScalarType)> {
        let item = self.module.get(name)?;
        if item.kind(self.db) != ItemKind::Const {
            return None;
        }
        let info = const_value(self.db, item);
        Some((info.value?, info.ty?))
    }

    /// What `name` refers to inside a task.
    fn resolve(&self, name: &str) -> Option<NameRef> {
        for scope in self.scopes.iter().rev() {
            if let Some((_, id)) = scope.iter().rev().find(|(n, _)| n == name) {
                return Some(NameRef::Local(*id, self.locals[id.0 as usize].ty));
            }
        }
        if let Some(member) = self.members.get(name) {
            return Some(NameRef::Member(member.clone()));
        }
        self.module_const(name)
            .map(|(value, ty)| NameRef::Const(value, ty))
    }

    /// Declares a task-local scalar in the innermost scope.
    fn declare_local(&mut self, name: &str, ty: ScalarTy) -> LocalId {
        let id = LocalId(self.locals.len() as u32);
        self.locals.push(Local {
            name: name.to_string(),
            ty,
        });
        if let Some(scope) = self.scopes.last_mut() {
            scope.push((name.to_string(), id));
        }
        id
    }

    fn array(&self, id: ArrayId) -> &Array {
        &self.arrays[id.0 as usize]
    }
}
