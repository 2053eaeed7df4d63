//! Kernels: `kernel_signature` (parameters, arrays, ports — what layers and lowering see) and
//! `check_kernel` (members, ports, tasks and every statement).
//!
//! Scoping: parameters and members (vars, consts, ports, tasks) share one namespace per
//! kernel and may hide module-level names. Tasks see every member; a member's declaration
//! (array length, initialiser, constant value) sees parameters and the members declared
//! before it. Task-local `let`/`var` and `for` variables are visible from their declaration
//! to the end of their block; they may hide kernel members and module names, but not another
//! local of the same task.

use std::collections::BTreeMap;

use salsa::Accumulator;
use wsel_syntax::ast::{self, AssignOp, PortDirection, ScalarType, Span};

use crate::analysis::{ItemAnalysis, KernelArray, KernelParam, KernelPort, KernelSig};
use crate::check::expr::{Checker, Local, LocalKind, Typed, written_type};
use crate::db::{Db, Reported};
use crate::diagnostics::{did_you_mean, kernels, resolve, types};
use crate::items::{ItemId, ItemKind, item_ast, item_location};
use crate::ty::{Ty, Value, is_int, scalar_name};

/// Every word a port declaration may name after `from`/`to`: the four sides, then the buses.
pub const PORT_SIDES: &[&str] = &["north", "south", "east", "west", "row", "col", "region"];

/// The sides of [`PORT_SIDES`] that name a bus.
pub const BUS_SIDES: &[&str] = &["row", "col", "region"];

/// A kernel's parameters, arrays and ports. Does not report; `check_kernel` does.
#[salsa::tracked(returns(ref))]
pub fn kernel_signature<'db>(db: &'db dyn Db, item: ItemId<'db>) -> KernelSig {
    let Some(ast::Item::Kernel(kernel)) = item_ast(db, item) else {
        return KernelSig::default();
    };
    let mut checker = Checker::new(db, item.file(db));
    declare_members(&mut checker, kernel);
    let mut sig = KernelSig {
        name: kernel.name.name.clone(),
        def: item_location(db, item),
        ..KernelSig::default()
    };
    for p in &kernel.params {
        let ty = match &p.ty {
            ast::Type::Scalar(t, _) => Some(*t),
            _ => None,
        };
        sig.params.push(KernelParam {
            name: p.name.name.clone(),
            ty,
            def: checker.loc(&p.name.span),
        });
    }
    for member in &kernel.members {
        match member {
            ast::KernelMember::Var(v) => {
                if let ast::Type::Array { elem, len, .. } = &v.ty {
                    let len_value = match checker.lookup(&v.name.name).map(|b| &b.local) {
                        Some(Local::Value {
                            ty: Ty::Array(_, n),
                            ..
                        }) => *n,
                        _ => None,
                    };
                    sig.arrays.push(KernelArray {
                        name: v.name.name.clone(),
                        elem: *elem,
                        len: len_value,
                        len_expr: (**len).clone(),
                        def: checker.loc(&v.name.span),
                    });
                }
            }
            ast::KernelMember::Port(p) => sig.ports.push(KernelPort {
                name: p.name.name.clone(),
                direction: p.direction,
                elem: match &p.ty {
                    ast::Type::Stream(t, _) => Some(*t),
                    _ => None,
                },
                side: p.side.name.clone(),
                multicast: p.multicast,
                distance: p.distance.clone(),
                switch: p.switch.clone(),
                def: checker.loc(&p.name.span),
            }),
            _ => {}
        }
    }
    sig
}

/// Checks one kernel and reports its diagnostics. Depends only on this kernel's syntax, the
/// module scope and the constants it names, so editing another item does not re-run it.
#[salsa::tracked(returns(ref))]
pub fn check_kernel<'db>(db: &'db dyn Db, item: ItemId<'db>) -> ItemAnalysis {
    let Some(ast::Item::Kernel(kernel)) = item_ast(db, item) else {
        return ItemAnalysis::default();
    };
    let mut checker = Checker::new(db, item.file(db));
    declare_members(&mut checker, kernel);
    // Slices in member declarations are not compile-time (reported there); they do not
    // belong to the first statement.
    checker.slice_lengths.clear();
    check_ports(&mut checker, kernel);
    let mains = kernel
        .members
        .iter()
        .filter(|m| matches!(m, ast::KernelMember::Task(t) if t.name.name == "main"))
        .count();
    if mains == 0 && !checker.is_cut_short(&kernel.span) {
        let d = kernels::missing_main(checker.loc(&kernel.name.span), &kernel.name.name);
        checker.report(d);
    }
    for member in &kernel.members {
        if let ast::KernelMember::Task(task) = member {
            block(&mut checker, &task.body);
        }
    }
    for d in checker.diags {
        Reported(d).accumulate(db);
    }
    checker.analysis
}

/// Defines the parameters and members of `kernel` in the checker's outer scope, checking
/// their declarations (types, lengths, initialisers) and duplicate names.
fn declare_members(c: &mut Checker<'_>, kernel: &ast::Kernel) {
    // Duplicates over parameters and members, in source order.
    let mut first: BTreeMap<&str, Span> = BTreeMap::new();
    let mut skip = vec![false; kernel.members.len()];
    for p in &kernel.params {
        if let Some(prev) = first.get(p.name.name.as_str()) {
            let d = resolve::duplicate_local(c.loc(&p.name.span), &p.name.name, c.loc(prev));
            c.report(d);
        } else {
            first.insert(&p.name.name, p.name.span.clone());
        }
    }
    for (i, m) in kernel.members.iter().enumerate() {
        let Some(name) = member_name(m) else { continue };
        if let Some(prev) = first.get(name.name.as_str()) {
            let d = resolve::duplicate_local(c.loc(&name.span), &name.name, c.loc(prev));
            c.report(d);
            skip[i] = true;
        } else {
            first.insert(&name.name, name.span.clone());
        }
    }
    for p in &kernel.params {
        if c.lookup(&p.name.name).is_some() {
            continue;
        }
        let ty = match &p.ty {
            ast::Type::Scalar(t, _) => Ty::Scalar(*t),
            ast::Type::Error(_) => Ty::Error,
            other => {
                let (printed, span) = written_type(other);
                let d = types::type_not_allowed(c.loc(&span), &printed, "a kernel parameter");
                c.report(d);
                Ty::Error
            }
        };
        let local = Local::Value {
            kind: LocalKind::Param,
            ty,
            value: None,
        };
        c.define(&p.name, local, 0);
    }
    // Ports and tasks are visible everywhere; declare them first.
    for (i, m) in kernel.members.iter().enumerate() {
        if skip[i] {
            continue;
        }
        match m {
            ast::KernelMember::Port(p) => {
                let elem = match &p.ty {
                    ast::Type::Stream(t, _) => Some(*t),
                    _ => None,
                };
                let local = Local::Port {
                    direction: p.direction,
                    elem,
                    switched: p.switch.is_some(),
                };
                c.define(&p.name, local, 0);
            }
            ast::KernelMember::Task(t) => c.define(&t.name, Local::Task, 0),
            _ => {}
        }
    }
    for (i, m) in kernel.members.iter().enumerate() {
        if skip[i] {
            continue;
        }
        match m {
            ast::KernelMember::Var(v) => {
                let ty = c.storage_type(&v.ty, "a kernel variable", true);
                if let (Ty::Array(_, None), ast::Type::Array { len, .. }) = (&ty, &v.ty) {
                    c.array_lengths
                        .insert(v.name.span.start, crate::check::expr::print_expr(len));
                }
                if let Some(init) = &v.init
                    && let Some(elem) = scalar_of(&ty)
                {
                    c.expect_const(init, elem, "a variable's initial value");
                }
                let local = Local::Value {
                    kind: LocalKind::Var,
                    ty,
                    value: None,
                };
                c.define(&v.name, local, 0);
            }
            ast::KernelMember::Const(k) => {
                let ty = c.storage_type(&k.ty, "a constant", false);
                let value = match scalar_of(&ty) {
                    Some(t) => c.expect_const(&k.value, t, "a constant").value,
                    None => None,
                };
                let local = Local::Value {
                    kind: LocalKind::Const,
                    ty,
                    value,
                };
                c.define(&k.name, local, 0);
            }
            _ => {}
        }
    }
}

fn check_ports(c: &mut Checker<'_>, kernel: &ast::Kernel) {
    for m in &kernel.members {
        let ast::KernelMember::Port(p) = m else {
            continue;
        };
        match &p.ty {
            ast::Type::Stream(..) | ast::Type::Error(_) => {}
            other => {
                let (printed, span) = written_type(other);
                let d = types::type_not_allowed(c.loc(&span), &printed, "a port")
                    .with_help("ports carry scalars: `stream<f32>`");
                c.report(d);
            }
        }
        // A declaration broken after its name (a syntax error) has no side.
        let broken = matches!(p.ty, ast::Type::Error(_)) && p.side.name.is_empty();
        if !broken && !PORT_SIDES.contains(&p.side.name.as_str()) {
            let suggestion = did_you_mean(&p.side.name, PORT_SIDES.iter().copied());
            let d = kernels::unknown_side(c.loc(&p.side.span), &p.side.name, suggestion);
            c.report(d);
        }
        if p.multicast && BUS_SIDES.contains(&p.side.name.as_str()) {
            let d = kernels::multicast_bus(c.loc(&p.side.span), &p.side.name);
            c.report(d);
        }
        // `multicast` after `to` is a syntax error (the grammar accepts it only after
        // `from`), so an `out` port is never multicast here.
        if let Some(distance) = &p.distance {
            if BUS_SIDES.contains(&p.side.name.as_str()) {
                let d = kernels::distance_on_bus(c.loc(&distance.span()), &p.side.name);
                c.report(d);
            }
            c.expect_const(distance, ScalarType::U32, "a port's distance");
        }
        crate::check::switch::check_port(c, p);
    }
}

fn member_name(m: &ast::KernelMember) -> Option<&ast::Ident> {
    match m {
        ast::KernelMember::Var(v) => Some(&v.name),
        ast::KernelMember::Const(k) => Some(&k.name),
        ast::KernelMember::Port(p) => Some(&p.name),
        ast::KernelMember::Task(t) => Some(&t.name),
        ast::KernelMember::Error(_) => None,
    }
}

fn scalar_of(ty: &Ty) -> Option<ScalarType> {
    match ty {
        Ty::Scalar(t) | Ty::Array(t, _) => Some(*t),
        _ => None,
    }
}

/// The number of task scopes (all scopes but the kernel's), for duplicate checks of locals.
fn task_scopes(c: &Checker<'_>) -> usize {
    c.scopes.len().saturating_sub(1)
}

fn block(c: &mut Checker<'_>, b: &ast::Block) {
    c.push_scope();
    for s in &b.stmts {
        stmt(c, s);
        c.finish_statement();
    }
    c.pop_scope();
}

fn stmt(c: &mut Checker<'_>, s: &ast::Stmt) {
    match s {
        ast::Stmt::Let {
            name, ty, value, ..
        } => let_stmt(c, name, ty.as_ref(), value),
        ast::Stmt::Var(v) => {
            let ty = c.storage_type(&v.ty, "a task-local variable", false);
            if let (Some(init), Ty::Scalar(t)) = (&v.init, &ty) {
                c.expect(init, *t, false);
            }
            define_value(c, &v.name, LocalKind::Var, ty);
        }
        ast::Stmt::Assign {
            place, op, value, ..
        } => assign(c, place, *op, value),
        ast::Stmt::For {
            var, lo, hi, body, ..
        } => {
            let t = loop_counter_type(c, lo, hi);
            c.finish_statement();
            c.push_scope();
            define_value(c, var, LocalKind::Loop, Ty::Scalar(t));
            block(c, body);
            c.pop_scope();
        }
        ast::Stmt::While { cond, body, .. } => {
            c.expect(cond, ScalarType::Bool, false);
            c.finish_statement();
            block(c, body);
        }
        ast::Stmt::If {
            cond,
            then_block,
            else_block,
            ..
        } => {
            c.expect(cond, ScalarType::Bool, false);
            c.finish_statement();
            block(c, then_block);
            if let Some(e) = else_block {
                block(c, e);
            }
        }
        ast::Stmt::Recv {
            port, target, then, ..
        } => {
            recv(c, port, target);
            task_use(c, then);
        }
        ast::Stmt::Send {
            port, value, then, ..
        } => {
            send(c, port, value);
            if let Some(t) = then {
                task_use(c, t);
            }
        }
        ast::Stmt::Activate { task, .. } => task_use(c, task),
        ast::Stmt::Control {
            port,
            commands,
            span,
        } => crate::check::switch::control(c, port, commands, span),
        ast::Stmt::Return(_) | ast::Stmt::Error(_) => {}
        ast::Stmt::Expr(e) => {
            c.expr(e, None);
            let d = types::useless_expression(c.loc(&e.span()));
            c.report(d);
        }
    }
}

/// `let name[: ty] = value;` — an untyped integer literal is an `i32`, a float literal an
/// `f32`; a vector needs its type written.
fn let_stmt(c: &mut Checker<'_>, name: &ast::Ident, ty: Option<&ast::Type>, value: &ast::Expr) {
    let ty = match ty {
        Some(written) => {
            let ty = c.storage_type(written, "a `let`", false);
            if let Ty::Scalar(t) = ty {
                c.expect(value, t, false);
            }
            ty
        }
        None => {
            let typed = c.expr(value, None);
            match typed.ty {
                Ty::IntLiteral => {
                    let i32_ty = Ty::Scalar(ScalarType::I32);
                    c.check_range(typed.value, &i32_ty, &value.span());
                    i32_ty
                }
                Ty::FloatLiteral => Ty::Scalar(ScalarType::F32),
                Ty::Vector(..) | Ty::Array(..) => {
                    let d = types::vector_not_allowed(
                        c.loc(&value.span()),
                        &c.type_text(&typed.ty, value),
                    );
                    c.report(d);
                    Ty::Error
                }
                other => other,
            }
        }
    };
    define_value(c, name, LocalKind::Let, ty);
}

/// Records `name`'s type and defines it as a value in the current scope.
fn define_value(c: &mut Checker<'_>, name: &ast::Ident, kind: LocalKind, ty: Ty) {
    c.record_type(&name.span, &ty);
    let local = Local::Value {
        kind,
        ty,
        value: None,
    };
    let n = task_scopes(c);
    c.define(name, local, n);
}

/// `place op value;` — compound assignments need numbers.
fn assign(c: &mut Checker<'_>, place: &ast::Expr, op: AssignOp, value: &ast::Expr) {
    let Some((elem, vector)) = assign_place(c, place) else {
        c.expr(value, None);
        return;
    };
    if op != AssignOp::Set && elem == ScalarType::Bool {
        let d = types::bad_operands(
            c.loc(&place.span()),
            assign_symbol(op),
            "bool",
            Some("bool"),
        );
        c.report(d);
        return;
    }
    c.expect(value, elem, vector);
}

/// The type a `for` loop counts in: the bounds' integer type; `i32` when both are untyped
/// literals (which must then fit it) or in error.
fn loop_counter_type(c: &mut Checker<'_>, lo: &ast::Expr, hi: &ast::Expr) -> ScalarType {
    let l = c.expr(lo, None);
    let t = match l.ty {
        Ty::Scalar(t) if is_int(t) => Some(t),
        Ty::IntLiteral => None,
        Ty::Error => Some(ScalarType::I32),
        ref other => {
            let d =
                types::mismatched_types(c.loc(&lo.span()), "an integer", &c.type_text(other, lo));
            c.report(d);
            Some(ScalarType::I32)
        }
    };
    if let Some(t) = t {
        c.expect(hi, t, false);
        return t;
    }
    let h = c.expr(hi, None);
    match h.ty {
        Ty::Scalar(t) if is_int(t) => t,
        // Both bounds untyped: the loop counts in `i32`, which both must fit.
        Ty::IntLiteral => {
            let i32_ty = Ty::Scalar(ScalarType::I32);
            c.check_range(l.value, &i32_ty, &lo.span());
            c.check_range(h.value, &i32_ty, &hi.span());
            ScalarType::I32
        }
        Ty::Error => ScalarType::I32,
        other => {
            let d =
                types::mismatched_types(c.loc(&hi.span()), "an integer", &c.type_text(&other, hi));
            c.report(d);
            ScalarType::I32
        }
    }
}

/// `recv(port, target)`: the target's element type is the port's.
fn recv(c: &mut Checker<'_>, port: &ast::Ident, target: &ast::Expr) {
    let port_info = port_use(c, port, PortDirection::In, "recv");
    let target_elem = recv_target(c, target);
    check_element(c, port, port_info, target_elem, target);
}

/// `send(port, value)`: a scalar or vector of the port's element type.
fn send(c: &mut Checker<'_>, port: &ast::Ident, value: &ast::Expr) {
    let port_info = port_use(c, port, PortDirection::Out, "send");
    let hint = port_info.as_ref().map(|(e, _)| *e);
    let typed = c.expr(value, hint);
    let found = match &typed.ty {
        Ty::Scalar(t) | Ty::Vector(t, _) => Some(*t),
        Ty::IntLiteral => Some(ScalarType::I32),
        Ty::FloatLiteral => Some(ScalarType::F32),
        Ty::Array(..) => {
            let d = types::vector_not_allowed(c.loc(&value.span()), &c.type_text(&typed.ty, value));
            c.report(d);
            None
        }
        _ => None,
    };
    check_element(c, port, port_info, found, value);
}

/// A port's element type (and its declaration) against the one found at `at`.
fn check_element(
    c: &mut Checker<'_>,
    port: &ast::Ident,
    port_info: Option<(ScalarType, wsel_diagnostic::Location)>,
    found: Option<ScalarType>,
    at: &ast::Expr,
) {
    if let (Some((elem, def)), Some(found)) = (port_info, found)
        && elem != found
    {
        let d = kernels::port_type_mismatch(
            c.loc(&at.span()),
            &port.name,
            scalar_name(elem),
            scalar_name(found),
            def,
        );
        c.report(d);
    }
}

fn assign_symbol(op: AssignOp) -> &'static str {
    match op {
        AssignOp::Set => "=",
        AssignOp::Add => "+=",
        AssignOp::Sub => "-=",
        AssignOp::Mul => "*=",
        AssignOp::Div => "/=",
    }
}

/// Checks an assignment target; returns its element type and whether it is a slice.
fn assign_place(c: &mut Checker<'_>, place: &ast::Expr) -> Option<(ScalarType, bool)> {
    let base = match place {
        ast::Expr::Name(id) => id,
        ast::Expr::Index { base, .. } | ast::Expr::Slice { base, .. } => match &**base {
            ast::Expr::Name(id) => id,
            _ => {
                c.expr(place, None);
                let d = types::not_assignable(c.loc(&place.span()), "this expression", None);
                c.report(d);
                return None;
            }
        },
        _ => {
            c.expr(place, None);
            let d = types::not_assignable(c.loc(&place.span()), "this expression", None);
            c.report(d);
            return None;
        }
    };
    if let Some(b) = c.lookup(&base.name).cloned()
        && let Local::Value { kind, .. } = &b.local
        && *kind != LocalKind::Var
    {
        c.expr(place, None);
        let what = format!(
            "{} `{}`",
            crate::check::expr::describe_local(&b.local),
            base.name
        );
        let def = c.loc(&b.def);
        let help = match kind {
            LocalKind::Let => Some("declare it with `var` to make it mutable"),
            LocalKind::Const => {
                Some("a constant never changes; declare a `var` to hold a value that does")
            }
            LocalKind::Param => Some(
                "a kernel parameter is fixed by the layer that runs the kernel; copy it into a `var` to change the copy",
            ),
            LocalKind::Loop => Some(
                "the loop sets its variable on every iteration; to step it yourself, use a `var` and a `while` loop",
            ),
            _ => None,
        };
        let d = types::not_assignable_because(c.loc(&base.span), &what, Some(def), help);
        c.report(d);
        return None;
    }
    if c.lookup(&base.name).is_none()
        && let Some(item) = c.module.get(&base.name)
    {
        c.expr(place, None);
        let what = format!("{} `{}`", item.kind(c.db).keyword(), base.name);
        let def = item_location(c.db, item);
        let help = (item.kind(c.db) == ItemKind::Const)
            .then_some("a constant never changes; declare a `var` to hold a value that does");
        let d = types::not_assignable_because(c.loc(&base.span), &what, None, help);
        let d = match def {
            Some(def) => d.with_secondary(def, "defined here"),
            None => d,
        };
        c.report(d);
        return None;
    }
    let typed: Typed = c.expr(place, None);
    match typed.ty {
        Ty::Scalar(t) => Some((t, false)),
        Ty::Vector(t, _) => Some((t, true)),
        Ty::Array(..) => {
            let d = types::vector_not_allowed(c.loc(&place.span()), &c.type_text(&typed.ty, place));
            c.report(d);
            None
        }
        _ => None,
    }
}

/// Checks a `recv` target and returns its element type.
fn recv_target(c: &mut Checker<'_>, target: &ast::Expr) -> Option<ScalarType> {
    let is_place = match target {
        ast::Expr::Name(_) => true,
        ast::Expr::Index { base, .. } | ast::Expr::Slice { base, .. } => {
            matches!(**base, ast::Expr::Name(_))
        }
        _ => false,
    };
    if !is_place {
        c.expr(target, None);
        let d = kernels::bad_recv_target(c.loc(&target.span()));
        c.report(d);
        return None;
    }
    // A named target must be a scalar `var`: a `let`, constant, parameter, loop variable or
    // whole array is E0306 (what `recv` needs), not an assignment or scalar error.
    if let ast::Expr::Name(id) = target {
        match c.lookup(&id.name).cloned() {
            Some(b) => {
                if let Local::Value { kind, ty, .. } = &b.local {
                    c.record_use(&id.span, c.loc(&b.def));
                    let what = crate::check::expr::describe_local(&b.local);
                    let def = c.loc(&b.def);
                    let bad = if *kind != LocalKind::Var {
                        Some((
                            format!("`{}` is a {what}", id.name),
                            Some((def, format!("{what} defined here"))),
                        ))
                    } else if matches!(ty, Ty::Array(..)) {
                        Some((
                            format!("`{}` is a whole array; receive into a slice", id.name),
                            Some((def, "array defined here".to_string())),
                        ))
                    } else {
                        None
                    };
                    if let Some((label, def)) = bad {
                        let mut d = kernels::bad_recv_into(c.loc(&id.span), &label, def);
                        if matches!(ty, Ty::Array(..)) {
                            d = d.with_help(format!("write `recv(port, {}[lo..hi])`", id.name));
                        }
                        c.report(d);
                        return None;
                    }
                }
            }
            None => {
                if let Some(item) = c.module.get(&id.name)
                    && item.kind(c.db) == ItemKind::Const
                {
                    let def = item_location(c.db, item).map(|l| (l, "defined here".to_string()));
                    let label = format!("`{}` is a {}", id.name, item.kind(c.db).keyword());
                    let d = kernels::bad_recv_into(c.loc(&id.span), &label, def);
                    c.report(d);
                    return None;
                }
            }
        }
        return match c.expr(target, None).ty {
            Ty::Scalar(t) => Some(t),
            _ => None,
        };
    }
    assign_place(c, target).map(|(t, _)| t)
}

/// Resolves the port of a `recv`/`send`; returns its element type and definition.
fn port_use(
    c: &mut Checker<'_>,
    port: &ast::Ident,
    need: PortDirection,
    op: &str,
) -> Option<(ScalarType, wsel_diagnostic::Location)> {
    let Some(b) = c.lookup(&port.name).cloned() else {
        let ports: Vec<String> = c
            .scopes
            .iter()
            .flat_map(|s| s.iter())
            .filter(|b| matches!(b.local, Local::Port { .. }))
            .map(|b| b.name.clone())
            .collect();
        let suggestion = did_you_mean(&port.name, ports.iter().map(String::as_str));
        let d = resolve::unresolved_name(c.loc(&port.span), &port.name, "port", suggestion);
        c.report(d);
        return None;
    };
    let def = c.loc(&b.def);
    c.record_use(&port.span, def.clone());
    match b.local {
        Local::Port {
            direction, elem, ..
        } => {
            if direction != need {
                let d =
                    kernels::wrong_port_direction(c.loc(&port.span), &port.name, op, def.clone());
                c.report(d);
            }
            if let Some(e) = elem {
                c.record_type(&port.span, &Ty::Stream(e));
            }
            elem.map(|e| (e, def))
        }
        ref other => {
            let found = crate::check::expr::describe_local(other);
            c.wrong_kind(port, found, "a port", Some(def));
            None
        }
    }
}

/// Checks that `name` (after `then` or `activate`) is a task of this kernel.
fn task_use(c: &mut Checker<'_>, name: &ast::Ident) {
    if let Some(b) = c.lookup(&name.name).cloned()
        && matches!(b.local, Local::Task)
    {
        let def = c.loc(&b.def);
        c.record_use(&name.span, def);
        return;
    }
    let tasks: Vec<String> = c
        .scopes
        .first()
        .map(|s| {
            s.iter()
                .filter(|b| matches!(b.local, Local::Task))
                .map(|b| b.name.clone())
                .collect()
        })
        .unwrap_or_default();
    let suggestion = did_you_mean(&name.name, tasks.iter().map(String::as_str));
    let mut d = kernels::not_a_task(c.loc(&name.span), &name.name, suggestion);
    // Something else of that name: point at it.
    if let Some(b) = c.lookup(&name.name).cloned() {
        let what = crate::check::expr::describe_local(&b.local);
        d = d.with_secondary(
            c.loc(&b.def),
            format!("`{}` is a {what}, declared here", name.name),
        );
    } else if let Some(item) = c.module.get(&name.name)
        && let Some(def) = item_location(c.db, item)
    {
        let what = item.kind(c.db).keyword();
        d = d.with_secondary(def, format!("`{}` is a {what}, declared here", name.name));
    }
    c.report(d);
}

#[allow(dead_code)]
fn _value_unused(_: Value) {}
