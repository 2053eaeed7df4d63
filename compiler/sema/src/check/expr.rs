//! The expression checker shared by every item check: scopes, name lookup, typing with
//! literal inference, and the compile-time values of expressions, computed node by node with
//! the rules of [`crate::consteval`] and reported there as overflow and division errors.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use wsel_syntax::ast::{self, BinaryOp, ScalarType, Span, UnaryOp};

use crate::analysis::{Declared, DeclaredKind, ItemAnalysis, NameUse};
use crate::builtins::{BUILTINS, PART_FUNCTIONS, builtin, part};
use crate::consteval::{self, Elem, EvalError, unify};
use crate::db::{Db, SourceFile};
use crate::diagnostics::{did_you_mean, resolve, types};
use crate::items::{
    ItemId, ItemKind, ModuleScope, item_ast, item_location, module_scope, unresolved_imports,
};
use crate::ty::{Ty, Value, describe, is_float, is_int, is_numeric, scalar_name};
use wsel_diagnostic::{Diagnostic, Location};

/// What a local name (anything below module level) refers to.
#[derive(Debug, Clone)]
pub enum Local {
    /// A scalar or array value: kernel parameters, constants, vars, task locals, loop
    /// variables, dimension variables and region names.
    Value {
        kind: LocalKind,
        ty: Ty,
        value: Option<Value>,
    },
    Port {
        direction: ast::PortDirection,
        elem: Option<ScalarType>,
        /// Declared with a switch (`control` may name it).
        switched: bool,
    },
    Task,
    /// A layer or model tensor; not a value in expressions.
    Tensor,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LocalKind {
    Param,
    Const,
    Var,
    Let,
    Loop,
    Dim,
    Region,
}

impl LocalKind {
    fn is_compile_time(self) -> bool {
        matches!(
            self,
            LocalKind::Param | LocalKind::Const | LocalKind::Dim | LocalKind::Region
        )
    }

    fn describe(self) -> &'static str {
        match self {
            LocalKind::Param => "parameter",
            LocalKind::Const => "constant",
            LocalKind::Var => "variable",
            LocalKind::Let => "`let` binding",
            LocalKind::Loop => "loop variable",
            LocalKind::Dim => "dimension variable",
            LocalKind::Region => "region size",
        }
    }
}

/// A local name with where it is defined.
#[derive(Debug, Clone)]
pub struct Binding {
    pub name: String,
    pub def: Span,
    pub local: Local,
}

/// The result of checking an expression: its type, its value when known at compile time,
/// and whether it is a compile-time expression at all.
#[derive(Debug, Clone, PartialEq)]
pub struct Typed {
    pub ty: Ty,
    pub value: Option<Value>,
    pub compile_time: bool,
}

impl Typed {
    pub fn error() -> Self {
        Typed {
            ty: Ty::Error,
            value: None,
            compile_time: true,
        }
    }
}

/// The checker state for one item.
pub struct Checker<'db> {
    pub db: &'db dyn Db,
    pub file: SourceFile,
    pub path: PathBuf,
    pub module: &'db ModuleScope<'db>,
    /// Names whose import failed (E0101/E0102): defined, with the error type.
    pub failed_imports: &'db BTreeSet<String>,
    /// Innermost scope last.
    pub scopes: Vec<Vec<Binding>>,
    pub diags: Vec<Diagnostic>,
    pub analysis: ItemAnalysis,
    /// Constant lengths of the slices of the current statement, for E0207.
    pub slice_lengths: Vec<(u64, Span)>,
    /// `Some` while evaluating module constants: the constants being evaluated, to detect
    /// cycles without a salsa cycle. `cyclic` is set when one is found.
    pub const_stack: Option<Vec<ItemId<'db>>>,
    pub cyclic: bool,
    /// The written length of every array whose length is not a known constant, by the start
    /// of its name's definition, to print its type as `[f32; 2 * n]`.
    pub array_lengths: BTreeMap<usize, String>,
    /// The first cycle found while evaluating constants: its members in dependency order
    /// (each defined in terms of the next, the last in terms of the first).
    pub const_cycle: Option<Vec<ItemId<'db>>>,
}

impl<'db> Checker<'db> {
    pub fn new(db: &'db dyn Db, file: SourceFile) -> Self {
        Checker {
            db,
            file,
            path: file.path(db).clone(),
            module: module_scope(db, file),
            failed_imports: unresolved_imports(db, file),
            scopes: vec![Vec::new()],
            diags: Vec::new(),
            analysis: ItemAnalysis::default(),
            slice_lengths: Vec::new(),
            const_stack: None,
            cyclic: false,
            const_cycle: None,
            array_lengths: BTreeMap::new(),
        }
    }

    pub fn loc(&self, span: &Span) -> Location {
        Location {
            file: self.path.clone(),
            span: span.clone(),
        }
    }

    pub fn report(&mut self, diagnostic: Diagnostic) {
        self.diags.push(diagnostic);
    }

    pub fn record_type(&mut self, span: &Span, ty: &Ty) {
        if *ty != Ty::Error {
            self.analysis.types.push((span.clone(), ty.to_string()));
        }
    }

    pub fn record_use(&mut self, span: &Span, def: Location) {
        self.analysis.uses.push(NameUse {
            span: span.clone(),
            def,
        });
    }

    /// Records that the name at `span` declares a dimension variable or a region size.
    pub fn declared(&mut self, span: &Span, kind: DeclaredKind) {
        self.analysis.declared.push(Declared {
            span: span.clone(),
            kind,
        });
    }

    pub fn push_scope(&mut self) {
        self.scopes.push(Vec::new());
    }

    pub fn pop_scope(&mut self) {
        self.scopes.pop();
    }

    /// The local binding of `name`, innermost first.
    pub fn lookup(&self, name: &str) -> Option<&Binding> {
        self.scopes
            .iter()
            .rev()
            .flat_map(|s| s.iter().rev())
            .find(|b| b.name == name)
    }

    /// Defines `name` in the innermost scope; reports E0106 if `check_scopes` of the enclosing
    /// scopes (counted from the innermost) already define it. Either way the new definition
    /// is the one later uses see, so they are checked against what they will be once the
    /// duplicate is renamed.
    pub fn define(&mut self, ident: &ast::Ident, local: Local, check_scopes: usize) {
        let existing = self
            .scopes
            .iter()
            .rev()
            .take(check_scopes)
            .flat_map(|s| s.iter())
            .find(|b| b.name == ident.name)
            .map(|b| b.def.clone());
        if let Some(first) = existing {
            let d = resolve::duplicate_local(self.loc(&ident.span), &ident.name, self.loc(&first));
            self.report(d);
        }
        if let Some(scope) = self.scopes.last_mut() {
            scope.push(Binding {
                name: ident.name.clone(),
                def: ident.span.clone(),
                local,
            });
        }
    }

    /// Every name visible here, for suggestions.
    fn visible_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .scopes
            .iter()
            .flat_map(|s| s.iter().map(|b| b.name.clone()))
            .collect();
        names.extend(self.module.names.keys().cloned());
        names
    }

    /// Whether `name` (not defined locally or at module level) comes from a failed import,
    /// already reported as E0101 or E0102.
    pub fn is_failed_import(&self, name: &str) -> bool {
        self.failed_imports.contains(name)
    }

    /// How the type `ty` of `expr` is named in a message: see [`crate::ty::describe`]; an
    /// array whose length depends on parameters shows its written length.
    pub fn type_text(&self, ty: &Ty, expr: &ast::Expr) -> String {
        if let (Ty::Array(elem, None), ast::Expr::Name(id)) = (ty, expr)
            && let Some(b) = self.lookup(&id.name)
            && let Some(len) = self.array_lengths.get(&b.def.start)
        {
            return format!("`[{}; {len}]`", scalar_name(*elem));
        }
        describe(ty)
    }

    /// Whether the item spanning `span` was cut short by an unterminated comment or a missing
    /// `}` (already reported): what it lacks is not reported.
    pub fn is_cut_short(&self, span: &Span) -> bool {
        crate::syntax::is_cut_short(self.db, self.file, span)
    }

    /// Reports E0105 for `ident`, suggesting a visible name; nothing when the name comes from
    /// a failed import.
    pub fn unresolved(&mut self, ident: &ast::Ident, what: &str) {
        if self.is_failed_import(&ident.name) {
            return;
        }
        let names = self.visible_names();
        let suggestion = did_you_mean(&ident.name, names.iter().map(String::as_str));
        let d = resolve::unresolved_name(self.loc(&ident.span), &ident.name, what, suggestion);
        self.report(d);
    }

    // ----- expressions -----

    /// Checks `expr` where a value of scalar type `expected` is needed, reporting E0201 when
    /// it has another type. Vectors of `expected` are accepted when `allow_vector`.
    pub fn expect(&mut self, expr: &ast::Expr, expected: ScalarType, allow_vector: bool) -> Typed {
        let typed = self.expr(expr, Some(expected));
        let found = match &typed.ty {
            Ty::Scalar(s) => Some(*s),
            Ty::Vector(s, _) if allow_vector => Some(*s),
            Ty::Vector(..) | Ty::Array(..) => {
                let d = types::vector_not_allowed(
                    self.loc(&expr.span()),
                    &self.type_text(&typed.ty, expr),
                );
                self.report(d);
                return Typed::error();
            }
            Ty::Error => return typed,
            _ => None,
        };
        if found != Some(expected) {
            let d = types::mismatched_types(
                self.loc(&expr.span()),
                scalar_name(expected),
                &self.type_text(&typed.ty, expr),
            );
            self.report(d);
            return Typed {
                ty: Ty::Error,
                ..typed
            };
        }
        typed
    }

    /// Checks `expr` where a compile-time value of type `expected` is needed, for `what`
    /// (e.g. "an array length"). Reports E0205 when it is not compile-time.
    pub fn expect_const(&mut self, expr: &ast::Expr, expected: ScalarType, what: &str) -> Typed {
        let typed = self.expect(expr, expected, false);
        if !typed.compile_time {
            let d = types::not_constant(self.loc(&expr.span()), what);
            self.report(d);
            return Typed::error();
        }
        typed
    }

    /// Checks an expression; `hint` is the scalar type the context wants, used to type
    /// literals. Returned literal types (`IntLiteral`, `FloatLiteral`) mean no context fixed
    /// them.
    pub fn expr(&mut self, expr: &ast::Expr, hint: Option<ScalarType>) -> Typed {
        let typed = self.expr_inner(expr, hint);
        match &typed.ty {
            Ty::IntLiteral | Ty::FloatLiteral | Ty::Error => {}
            ty => {
                if !matches!(
                    expr,
                    ast::Expr::Int(..) | ast::Expr::Float(..) | ast::Expr::Bool(..)
                ) {
                    if matches!(ty, Ty::Array(_, None)) {
                        // `[f32; 2 * n]` rather than `[f32; _]`.
                        let text = self.type_text(ty, expr).trim_matches('`').to_string();
                        self.analysis.types.push((expr.span(), text));
                    } else {
                        let ty = ty.clone();
                        self.record_type(&expr.span(), &ty);
                    }
                }
            }
        }
        typed
    }

    fn expr_inner(&mut self, expr: &ast::Expr, hint: Option<ScalarType>) -> Typed {
        match expr {
            ast::Expr::Int(v, span) => self.int_literal(i128::from(*v), span, hint),
            ast::Expr::Float(v, _) => Typed {
                ty: consteval::literal_elem(false, hint).scalar_ty(),
                value: Some(Value::Float(*v)),
                compile_time: true,
            },
            ast::Expr::Bool(v, _) => Typed {
                ty: Ty::Scalar(ScalarType::Bool),
                value: Some(Value::Bool(*v)),
                compile_time: true,
            },
            ast::Expr::Str(_, span) => {
                let d = types::mismatched_types(
                    self.loc(span),
                    hint.map(scalar_name).unwrap_or("a number"),
                    "string",
                )
                .with_note("strings are only used for file paths");
                self.report(d);
                Typed::error()
            }
            ast::Expr::Name(ident) => self.name(ident),
            ast::Expr::Field { base, field, span } => self.field(base, field, span),
            ast::Expr::Unary { op, operand, span } => self.unary(*op, operand, span, hint),
            ast::Expr::Binary { op, lhs, rhs, span } => self.binary(*op, lhs, rhs, span, hint),
            ast::Expr::Cast { value, ty, span } => self.cast(value, *ty, span),
            ast::Expr::Index { base, index, span } => self.index(base, index, span),
            ast::Expr::Slice { base, lo, hi, span } => self.slice(base, lo, hi, span),
            ast::Expr::Call {
                callee,
                args,
                named,
                span,
            } => {
                if let Some((name, _)) = named.first() {
                    let d = types::named_argument(self.loc(&name.span), &callee.name);
                    self.report(d);
                    return Typed::error();
                }
                self.call(callee, args, span, hint)
            }
            ast::Expr::Error(_) => Typed::error(),
        }
    }

    fn int_literal(&mut self, v: i128, span: &Span, hint: Option<ScalarType>) -> Typed {
        let ty = consteval::literal_elem(true, hint).scalar_ty();
        // A typed literal out of range is an error; the literal is not typed further.
        let value = self.check_range(Some(Value::Int(v)), &ty, span);
        if value.is_none() {
            return Typed::error();
        }
        Typed {
            ty,
            value,
            compile_time: true,
        }
    }

    fn name(&mut self, ident: &ast::Ident) -> Typed {
        if let Some(binding) = self.lookup(&ident.name).cloned() {
            let def = self.loc(&binding.def);
            self.record_use(&ident.span, def.clone());
            return match binding.local {
                Local::Value { kind, ty, value } => Typed {
                    ty,
                    value,
                    compile_time: kind.is_compile_time(),
                },
                Local::Port { .. } => {
                    self.wrong_kind(ident, "port", "a value", Some(def));
                    Typed::error()
                }
                Local::Task => {
                    self.wrong_kind(ident, "task", "a value", Some(def));
                    Typed::error()
                }
                Local::Tensor => {
                    self.wrong_kind(ident, "tensor", "a value", Some(def));
                    Typed::error()
                }
            };
        }
        match self.module.get(&ident.name) {
            Some(item) => {
                let def = item_location(self.db, item);
                if let Some(def) = def.clone() {
                    self.record_use(&ident.span, def);
                }
                if item.kind(self.db) != ItemKind::Const {
                    self.wrong_kind(ident, item.kind(self.db).keyword(), "a value", def);
                    return Typed::error();
                }
                let (ty, value) = self.module_const(item);
                match ty {
                    Some(t) => Typed {
                        ty: Ty::Scalar(t),
                        value,
                        compile_time: true,
                    },
                    None => Typed::error(),
                }
            }
            None => {
                if ident.name == "pe" || ident.name == "region" {
                    let fields: &[&str] = if ident.name == "pe" {
                        &["row", "col", "cycle"]
                    } else {
                        &["rows", "cols"]
                    };
                    let d = resolve::unknown_field(self.loc(&ident.span), &ident.name, "", fields);
                    let mut d = Diagnostic {
                        message: format!("`{}` is not a value on its own", ident.name),
                        ..d
                    };
                    d.primary.message = "needs a field".to_string();
                    self.report(d);
                } else {
                    self.unresolved(ident, "value");
                }
                Typed::error()
            }
        }
    }

    pub fn wrong_kind(
        &mut self,
        ident: &ast::Ident,
        found: &str,
        expected: &str,
        def: Option<Location>,
    ) {
        let d = resolve::wrong_kind(self.loc(&ident.span), &ident.name, found, expected, def);
        self.report(d);
    }

    /// The type and value of a module constant, evaluating through a cycle-safe path while
    /// constants are being evaluated.
    fn module_const(&mut self, item: ItemId<'db>) -> (Option<ScalarType>, Option<Value>) {
        match self.const_stack.clone() {
            None => {
                let info = crate::check::consts::const_value(self.db, item);
                (info.ty, info.value)
            }
            Some(mut stack) => {
                if let Some(at) = stack.iter().position(|i| *i == item) {
                    self.cyclic = true;
                    self.const_cycle.get_or_insert_with(|| stack[at..].to_vec());
                    return (None, None);
                }
                stack.push(item);
                let (ty, value, cycle) = evaluate_const_with_cycle(self.db, item, stack);
                if let Some(cycle) = cycle {
                    self.cyclic = true;
                    self.const_cycle.get_or_insert(cycle);
                }
                (ty, value)
            }
        }
    }

    fn field(&mut self, base: &ast::Expr, field: &ast::Ident, span: &Span) -> Typed {
        let base_name = match base {
            ast::Expr::Name(id) if self.lookup(&id.name).is_none() => Some(id.name.as_str()),
            _ => None,
        };
        let fields: &[&str] = match base_name {
            Some("pe") => &["row", "col", "cycle"],
            Some("region") => &["rows", "cols"],
            _ => {
                let printed = match base {
                    ast::Expr::Name(id) => id.name.clone(),
                    _ => "this expression".to_string(),
                };
                let d = resolve::unknown_field(self.loc(&field.span), &printed, &field.name, &[]);
                self.report(d);
                return Typed::error();
            }
        };
        if !fields.contains(&field.name.as_str()) {
            let base = base_name.unwrap_or_default();
            let d = resolve::unknown_field(self.loc(&field.span), base, &field.name, fields);
            self.report(d);
            return Typed::error();
        }
        let _ = span;
        Typed {
            ty: Ty::Scalar(ScalarType::U32),
            value: None,
            compile_time: false,
        }
    }

    fn unary(
        &mut self,
        op: UnaryOp,
        operand: &ast::Expr,
        span: &Span,
        hint: Option<ScalarType>,
    ) -> Typed {
        let inner = self.expr(operand, hint);
        let elem = elem_of(&inner.ty);
        let ok = match op {
            UnaryOp::Neg => {
                matches!(elem, Elem::Int | Elem::Float | Elem::Error)
                    || matches!(elem, Elem::Known(t) if t != ScalarType::Bool && t != ScalarType::U32)
            }
            UnaryOp::Not => matches!(elem, Elem::Known(ScalarType::Bool) | Elem::Error),
        };
        if !ok || matches!(inner.ty, Ty::Array(..)) {
            let sym = if op == UnaryOp::Neg { "-" } else { "!" };
            let d = types::bad_operands(
                self.loc(span),
                sym,
                &self.type_text(&inner.ty, operand),
                None,
            );
            self.report(d);
            return Typed::error();
        }
        let value = inner.value.and_then(|v| consteval::unary(op, v).ok());
        let value = self.check_range(value, &inner.ty, span);
        Typed { value, ..inner }
    }

    fn cast(&mut self, value: &ast::Expr, to: ScalarType, span: &Span) -> Typed {
        let inner = self.expr(value, None);
        let from = elem_of(&inner.ty);
        let scalar = matches!(
            inner.ty,
            Ty::Scalar(_) | Ty::IntLiteral | Ty::FloatLiteral | Ty::Vector(..) | Ty::Error
        );
        let numeric_from = match from {
            Elem::Known(t) => is_numeric(t),
            Elem::Int | Elem::Float | Elem::Error => true,
        };
        if !scalar || !numeric_from || !is_numeric(to) {
            let d = types::invalid_cast(
                self.loc(span),
                &self.type_text(&inner.ty, value),
                scalar_name(to),
            );
            self.report(d);
            return Typed::error();
        }
        let converted = inner.value.map(|v| consteval::cast(v, to));
        let ty = match inner.ty {
            Ty::Vector(_, len) => Ty::Vector(to, len),
            _ => Ty::Scalar(to),
        };
        let value = self.check_range(converted, &ty, span);
        Typed {
            ty,
            value,
            compile_time: inner.compile_time,
        }
    }

    /// Reports E0203 when a known integer value does not fit its scalar type (an untyped
    /// integer, `i64` or `u64`); gives the value when it fits.
    pub(crate) fn check_range(
        &mut self,
        value: Option<Value>,
        ty: &Ty,
        span: &Span,
    ) -> Option<Value> {
        let elem = match ty {
            Ty::Scalar(t) => Elem::Known(*t),
            Ty::IntLiteral => Elem::Int,
            _ => return value,
        };
        if let Some(v) = value
            && let Err(EvalError::OutOfRange { ty, .. }) = consteval::check_range(v, elem)
        {
            let d = types::overflow(self.loc(span), ty);
            self.report(d);
            return None;
        }
        value
    }

    fn binary(
        &mut self,
        op: BinaryOp,
        lhs: &ast::Expr,
        rhs: &ast::Expr,
        span: &Span,
        hint: Option<ScalarType>,
    ) -> Typed {
        self.binary_named(op, op_symbol(op), lhs, rhs, span, hint)
    }

    /// A binary operation, or a two-argument `max`/`min` (named `sym` in messages), which
    /// type like arithmetic.
    fn binary_named(
        &mut self,
        op: BinaryOp,
        sym: &str,
        lhs: &ast::Expr,
        rhs: &ast::Expr,
        span: &Span,
        hint: Option<ScalarType>,
    ) -> Typed {
        let operand_hint = consteval::operand_hint(op, hint);
        // A literal left operand keeps its literal type; it is checked against the right
        // operand's type below.
        let l = self.expr(lhs, operand_hint);
        let r = self.expr(rhs, elem_of(&l.ty).known().or(operand_hint));
        if l.ty == Ty::Error || r.ty == Ty::Error {
            return Typed {
                ty: Ty::Error,
                value: None,
                compile_time: l.compile_time && r.compile_time,
            };
        }
        let bad = |this: &mut Self| {
            let d = types::bad_operands(
                this.loc(span),
                sym,
                &this.type_text(&l.ty, lhs),
                Some(&this.type_text(&r.ty, rhs)),
            );
            this.report(d);
            Typed::error()
        };
        if matches!(l.ty, Ty::Array(..) | Ty::Stream(_) | Ty::Tensor(_))
            || matches!(r.ty, Ty::Array(..) | Ty::Stream(_) | Ty::Tensor(_))
        {
            let which = if matches!(l.ty, Ty::Array(..)) {
                lhs
            } else {
                rhs
            };
            let ty = if matches!(l.ty, Ty::Array(..)) {
                &l.ty
            } else {
                &r.ty
            };
            let d = types::vector_not_allowed(self.loc(&which.span()), &self.type_text(ty, which));
            self.report(d);
            return Typed::error();
        }
        let Some(elem) = unify(elem_of(&l.ty), elem_of(&r.ty)) else {
            return bad(self);
        };
        let elem_ok = match (op, elem) {
            (BinaryOp::And | BinaryOp::Or, e) => e == Elem::Known(ScalarType::Bool),
            (BinaryOp::Eq | BinaryOp::Ne, _) => true,
            (_, Elem::Known(ScalarType::Bool)) => false,
            (BinaryOp::Rem, Elem::Float) => false,
            (BinaryOp::Rem, Elem::Known(t)) => is_int(t),
            _ => true,
        };
        if !elem_ok {
            return bad(self);
        }
        // Slices of different constant lengths are reported once per statement, by
        // `finish_statement`.
        let vector = vector_len(&l.ty).or(vector_len(&r.ty));
        // Literal operands must fit the unified type.
        if let Elem::Known(t) = elem {
            for (side, typed) in [(lhs, &l), (rhs, &r)] {
                if matches!(typed.ty, Ty::IntLiteral) {
                    let _ = self.check_range(typed.value, &Ty::Scalar(t), &side.span());
                }
            }
        }
        let ty = match (vector, consteval::result_elem(op, elem)) {
            (Some(len), Elem::Known(t)) => Ty::Vector(t, len),
            (_, result) => result.scalar_ty(),
        };
        let is_division = matches!(op, BinaryOp::Div | BinaryOp::Rem);
        if is_division && matches!(r.value, Some(Value::Int(0))) && r.compile_time {
            let d = types::division_by_zero(self.loc(&rhs.span()));
            self.report(d);
            return Typed {
                ty,
                value: None,
                compile_time: l.compile_time && r.compile_time,
            };
        }
        let value = match (l.value, r.value) {
            (Some(a), Some(b)) if vector.is_none() => match consteval::fold(op, a, b) {
                Ok(v) => Some(v),
                Err(e) => {
                    // An integer divisor of zero was reported above; a float one is here.
                    let d = match e {
                        EvalError::DivisionByZero => types::division_by_zero(self.loc(&rhs.span())),
                        _ => types::overflow(self.loc(span), &ty.to_string()),
                    };
                    self.report(d);
                    None
                }
            },
            _ => None,
        };
        let value = self.check_range(value, &ty, span);
        Typed {
            ty,
            value,
            compile_time: l.compile_time && r.compile_time,
        }
    }

    /// The array named by the base of an index or slice: its element type and length.
    fn array_base(&mut self, base: &ast::Expr) -> Option<(String, ScalarType, Option<u64>)> {
        let typed = self.expr(base, None);
        match typed.ty {
            Ty::Array(elem, len) => {
                let name = match base {
                    ast::Expr::Name(id) => id.name.clone(),
                    _ => "array".into(),
                };
                Some((name, elem, len))
            }
            Ty::Error => None,
            other => {
                let d = types::not_indexable(self.loc(&base.span()), &describe(&other));
                self.report(d);
                None
            }
        }
    }

    fn index_value(&mut self, index: &ast::Expr) -> Typed {
        let typed = self.expr(index, Some(ScalarType::U32));
        match &typed.ty {
            Ty::Scalar(t) if is_int(*t) => typed,
            Ty::IntLiteral => typed,
            Ty::Error => typed,
            Ty::Vector(..) | Ty::Array(..) => {
                let d = types::vector_not_allowed(
                    self.loc(&index.span()),
                    &self.type_text(&typed.ty, index),
                );
                self.report(d);
                Typed::error()
            }
            other => {
                let d = types::mismatched_types(self.loc(&index.span()), "u32", &describe(other));
                self.report(d);
                Typed::error()
            }
        }
    }

    fn index(&mut self, base: &ast::Expr, index: &ast::Expr, span: &Span) -> Typed {
        let array = self.array_base(base);
        let idx = self.index_value(index);
        let Some((name, elem, len)) = array else {
            return Typed::error();
        };
        if let (Some(Value::Int(i)), Some(len)) = (idx.value, len)
            && (i < 0 || i >= i128::from(len))
        {
            let d = types::out_of_bounds(self.loc(&index.span()), &name, &i.to_string(), len);
            self.report(d);
        }
        let _ = span;
        Typed {
            ty: Ty::Scalar(elem),
            value: None,
            compile_time: false,
        }
    }

    fn slice(&mut self, base: &ast::Expr, lo: &ast::Expr, hi: &ast::Expr, span: &Span) -> Typed {
        let array = self.array_base(base);
        let lo_t = self.index_value(lo);
        let hi_t = self.index_value(hi);
        let Some((name, elem, len)) = array else {
            return Typed::error();
        };
        let lo_v = lo_t.value.and_then(Value::as_size);
        let hi_v = hi_t.value.and_then(Value::as_size);
        let mut slice_len = None;
        if let (Some(a), Some(b)) = (lo_v, hi_v) {
            if a > b {
                let d = types::reversed_slice(self.loc(span), a, b);
                self.report(d);
            } else {
                slice_len = Some(b - a);
            }
        }
        if let Some(len) = len {
            for (bound, expr, end) in [(lo_v, lo, false), (hi_v, hi, true)] {
                if let Some(b) = bound
                    && b > len
                {
                    let d = types::slice_out_of_bounds(self.loc(&expr.span()), &name, b, end, len);
                    self.report(d);
                }
            }
        }
        if let Some(n) = slice_len {
            self.slice_lengths.push((n, span.clone()));
        }
        Typed {
            ty: Ty::Vector(elem, slice_len),
            value: None,
            compile_time: false,
        }
    }

    fn call(
        &mut self,
        callee: &ast::Ident,
        args: &[ast::Expr],
        span: &Span,
        hint: Option<ScalarType>,
    ) -> Typed {
        let name = callee.name.as_str();
        if builtin(name).is_none() || self.lookup(name).is_some() {
            if let Some(b) = self.lookup(name).cloned() {
                let def = self.loc(&b.def);
                self.wrong_kind(callee, "local name", "a function", Some(def));
            } else if let Some(item) = self.module.get(name) {
                let def = item_location(self.db, item);
                let d = types::unknown_function(self.loc(&callee.span), name, None).with_secondary(
                    def.unwrap_or_else(|| self.loc(&callee.span)),
                    format!("`{name}` is a {}", item.kind(self.db).keyword()),
                );
                self.report(d);
            } else if !self.is_failed_import(name) {
                let suggestion = did_you_mean(name, BUILTINS.iter().map(|b| b.name));
                let d = types::unknown_function(self.loc(&callee.span), name, suggestion);
                self.report(d);
            }
            for a in args {
                self.expr(a, None);
            }
            return Typed::error();
        }
        if name == "select" {
            return self.select(args, span, hint);
        }
        if PART_FUNCTIONS.contains(&name) {
            return self.part(name, args, span);
        }
        let reduction = name == "sum" || ((name == "max" || name == "min") && args.len() == 1);
        if reduction {
            if args.len() != 1 {
                let d = types::wrong_arg_count(self.loc(span), name, "1 argument", args.len());
                self.report(d);
                return Typed::error();
            }
            let arg = self.expr(&args[0], hint);
            return match arg.ty {
                Ty::Vector(t, _) if t != ScalarType::Bool => Typed {
                    ty: Ty::Scalar(t),
                    value: None,
                    compile_time: false,
                },
                Ty::Error => Typed::error(),
                other => {
                    let d = types::needs_slice(
                        self.loc(&args[0].span()),
                        name,
                        &self.type_text(&other, &args[0]),
                    );
                    self.report(d);
                    Typed::error()
                }
            };
        }
        if name == "max" || name == "min" {
            if args.len() != 2 {
                let d =
                    types::wrong_arg_count(self.loc(span), name, "1 or 2 arguments", args.len());
                self.report(d);
                return Typed::error();
            }
            let typed = self.binary_named(BinaryOp::Add, name, &args[0], &args[1], span, hint);
            let value = match (
                self.const_value_of(&args[0], hint),
                self.const_value_of(&args[1], hint),
            ) {
                (Some(a), Some(b)) => consteval::extreme(name == "max", a, b).ok(),
                _ => None,
            };
            return Typed {
                value: if typed.ty == Ty::Error {
                    None
                } else {
                    value.or(None)
                },
                ..typed
            };
        }
        if args.len() != 1 {
            let d = types::wrong_arg_count(self.loc(span), name, "1 argument", args.len());
            self.report(d);
            return Typed::error();
        }
        let float_only = name != "abs";
        let arg_hint = if float_only {
            hint.filter(|t| is_float(*t)).or(Some(ScalarType::F32))
        } else {
            hint
        };
        let arg = self.expr(&args[0], arg_hint);
        let ok = match elem_of(&arg.ty) {
            Elem::Known(t) => {
                if float_only {
                    is_float(t)
                } else {
                    is_numeric(t)
                }
            }
            Elem::Float => true,
            Elem::Int => !float_only,
            Elem::Error => return Typed::error(),
        };
        if !ok || matches!(arg.ty, Ty::Array(..)) {
            let expected = if float_only { "f32" } else { "a number" };
            let d = types::mismatched_types(
                self.loc(&args[0].span()),
                expected,
                &self.type_text(&arg.ty, &args[0]),
            );
            self.report(d);
            return Typed::error();
        }
        Typed {
            ty: arg.ty,
            value: None,
            compile_time: false,
        }
    }

    /// `select(cond, on_true, on_false)`: a `bool` condition and two values of one type,
    /// element-wise when any of them is a slice expression. Never a compile-time value.
    fn select(&mut self, args: &[ast::Expr], span: &Span, hint: Option<ScalarType>) -> Typed {
        let [cond, on_true, on_false] = args else {
            let d = types::wrong_arg_count(self.loc(span), "select", "3 arguments", args.len());
            self.report(d);
            return Typed::error();
        };
        let c = self.expect(cond, ScalarType::Bool, true);
        let a = self.expr(on_true, hint);
        let b = self.expr(on_false, elem_of(&a.ty).known().or(hint));
        if c.ty == Ty::Error || a.ty == Ty::Error || b.ty == Ty::Error {
            return Typed::error();
        }
        let elem = unify(elem_of(&a.ty), elem_of(&b.ty));
        let arrays = [&a.ty, &b.ty].iter().any(|t| matches!(t, Ty::Array(..)));
        let Some(elem) = elem.filter(|_| !arrays) else {
            let d = types::bad_operands(
                self.loc(span),
                "select",
                &self.type_text(&a.ty, on_true),
                Some(&self.type_text(&b.ty, on_false)),
            );
            self.report(d);
            return Typed::error();
        };
        if let Elem::Known(t) = elem {
            for (side, typed) in [(on_true, &a), (on_false, &b)] {
                if matches!(typed.ty, Ty::IntLiteral) {
                    let _ = self.check_range(typed.value, &Ty::Scalar(t), &side.span());
                }
            }
        }
        let vector = [&c.ty, &a.ty, &b.ty].into_iter().find_map(vector_len);
        let ty = match (vector, elem) {
            (Some(len), Elem::Known(t)) => Ty::Vector(t, len),
            (_, elem) => elem.scalar_ty(),
        };
        Typed {
            ty,
            value: None,
            compile_time: false,
        }
    }

    /// `part_len(total, parts, index)` / `part_start(...)`: three `u32` scalars, a `u32`
    /// that is a compile-time value when the arguments are.
    fn part(&mut self, name: &str, args: &[ast::Expr], span: &Span) -> Typed {
        if args.len() != 3 {
            let d = types::wrong_arg_count(self.loc(span), name, "3 arguments", args.len());
            self.report(d);
            return Typed::error();
        }
        let typed: Vec<Typed> = args
            .iter()
            .map(|a| self.expect(a, ScalarType::U32, false))
            .collect();
        if typed.iter().any(|t| t.ty == Ty::Error) {
            return Typed::error();
        }
        let values: Vec<Option<u64>> = typed
            .iter()
            .map(|t| t.value.and_then(Value::as_size))
            .collect();
        if values[1] == Some(0) {
            let d = types::division_by_zero(self.loc(&args[1].span()));
            self.report(d);
        }
        let value = match values[..] {
            [Some(total), Some(parts), Some(index)] => {
                part(name == "part_start", total, parts, index).map(|v| Value::Int(v.into()))
            }
            _ => None,
        };
        let value = self.check_range(value, &Ty::Scalar(ScalarType::U32), span);
        Typed {
            ty: Ty::Scalar(ScalarType::U32),
            value,
            compile_time: typed.iter().all(|t| t.compile_time),
        }
    }

    /// The compile-time value of an already checked expression (re-evaluated silently).
    fn const_value_of(&mut self, expr: &ast::Expr, hint: Option<ScalarType>) -> Option<Value> {
        let saved_diags = self.diags.len();
        let saved_uses = self.analysis.uses.len();
        let saved_types = self.analysis.types.len();
        let saved_slices = self.slice_lengths.len();
        let v = self.expr(expr, hint).value;
        self.diags.truncate(saved_diags);
        self.analysis.uses.truncate(saved_uses);
        self.analysis.types.truncate(saved_types);
        self.slice_lengths.truncate(saved_slices);
        v
    }

    /// Reports E0207 (once) for the slices of the statement just checked, and clears them.
    pub fn finish_statement(&mut self) {
        let lengths = std::mem::take(&mut self.slice_lengths);
        if let Some((first_len, first_span)) = lengths.first().cloned() {
            for (len, span) in &lengths[1..] {
                if *len != first_len {
                    let d = types::slice_lengths(
                        self.loc(span),
                        *len,
                        self.loc(&first_span),
                        first_len,
                    );
                    self.report(d);
                    break;
                }
            }
        }
    }

    /// Resolves a written scalar or array type in a kernel; arrays need a compile-time `u32`
    /// length.
    pub fn storage_type(&mut self, ty: &ast::Type, position: &str, allow_array: bool) -> Ty {
        match ty {
            ast::Type::Scalar(s, _) => Ty::Scalar(*s),
            ast::Type::Array { elem, len, span } if allow_array => {
                let typed = self.expect_const(len, ScalarType::U32, "an array length");
                let _ = span;
                Ty::Array(*elem, typed.value.and_then(Value::as_size))
            }
            ast::Type::Error(_) => Ty::Error,
            other => {
                let (printed, span) = written_type(other);
                let d = types::type_not_allowed(self.loc(&span), &printed, position);
                self.report(d);
                Ty::Error
            }
        }
    }
}

/// The printed form and span of a written type.
pub fn written_type(ty: &ast::Type) -> (String, Span) {
    match ty {
        ast::Type::Scalar(s, span) => (scalar_name(*s).to_string(), span.clone()),
        ast::Type::Array { elem, len, span } => (
            format!("[{}; {}]", scalar_name(*elem), print_expr(len)),
            span.clone(),
        ),
        ast::Type::Stream(s, span) => (format!("stream<{}>", scalar_name(*s)), span.clone()),
        ast::Type::Tensor { elem, dims, span } => {
            let dims: Vec<String> = dims.iter().map(print_expr).collect();
            (
                format!("{}[{}]", scalar_name(*elem), dims.join(", ")),
                span.clone(),
            )
        }
        ast::Type::Error(span) => ("{error}".to_string(), span.clone()),
    }
}

/// An expression as source text, for messages (`2 * n`, `N / R`, `pe.row`), with the
/// parentheses its operators need.
pub fn print_expr(expr: &ast::Expr) -> String {
    fn prec(op: BinaryOp) -> u8 {
        match op {
            BinaryOp::Or => 1,
            BinaryOp::And => 2,
            BinaryOp::Eq
            | BinaryOp::Ne
            | BinaryOp::Lt
            | BinaryOp::Le
            | BinaryOp::Gt
            | BinaryOp::Ge => 3,
            BinaryOp::Add | BinaryOp::Sub => 4,
            BinaryOp::Mul | BinaryOp::Div | BinaryOp::Rem => 5,
        }
    }
    // The text of `e` as an operand that binds at least as tightly as `min`.
    fn operand(e: &ast::Expr, min: u8) -> String {
        match e {
            ast::Expr::Binary { op, .. } if prec(*op) < min => format!("({})", print_expr(e)),
            ast::Expr::Cast { .. } if min > 5 => format!("({})", print_expr(e)),
            _ => print_expr(e),
        }
    }
    match expr {
        ast::Expr::Int(n, _) => n.to_string(),
        ast::Expr::Float(v, _) => format!("{v:?}"),
        ast::Expr::Bool(b, _) => b.to_string(),
        ast::Expr::Str(s, _) => format!("{s:?}"),
        ast::Expr::Name(id) => id.name.clone(),
        ast::Expr::Field { base, field, .. } => format!("{}.{}", operand(base, 7), field.name),
        ast::Expr::Unary { op, operand: e, .. } => {
            let sym = if *op == UnaryOp::Neg { "-" } else { "!" };
            format!("{sym}{}", operand(e, 6))
        }
        ast::Expr::Binary { op, lhs, rhs, .. } => {
            let p = prec(*op);
            format!(
                "{} {} {}",
                operand(lhs, p),
                op_symbol(*op),
                operand(rhs, p + 1)
            )
        }
        ast::Expr::Cast { value, ty, .. } => {
            format!("{} as {}", operand(value, 6), scalar_name(*ty))
        }
        ast::Expr::Index { base, index, .. } => {
            format!("{}[{}]", operand(base, 7), print_expr(index))
        }
        ast::Expr::Slice { base, lo, hi, .. } => format!(
            "{}[{}..{}]",
            operand(base, 7),
            print_expr(lo),
            print_expr(hi)
        ),
        ast::Expr::Call {
            callee,
            args,
            named,
            ..
        } => {
            let args = args.iter().map(print_expr);
            let named = named
                .iter()
                .map(|(n, v)| format!("{} = {}", n.name, print_expr(v)));
            let args: Vec<String> = args.chain(named).collect();
            format!("{}({})", callee.name, args.join(", "))
        }
        ast::Expr::Error(_) => "_".to_string(),
    }
}

/// Evaluates a module constant for another constant's initialiser, with `stack` the
/// constants being evaluated (last = `item`). Returns its type, value and whether a cycle was
/// found. Not tracked: it runs inside `const_value` and `check_const`.
pub fn evaluate_const<'db>(
    db: &'db dyn Db,
    item: ItemId<'db>,
    stack: Vec<ItemId<'db>>,
) -> (Option<ScalarType>, Option<Value>, bool) {
    let (ty, value, cycle) = evaluate_const_with_cycle(db, item, stack);
    (ty, value, cycle.is_some())
}

/// Like [`evaluate_const`], but returns the cycle found (see [`Checker::const_cycle`]).
pub fn evaluate_const_with_cycle<'db>(
    db: &'db dyn Db,
    item: ItemId<'db>,
    stack: Vec<ItemId<'db>>,
) -> (Option<ScalarType>, Option<Value>, Option<Vec<ItemId<'db>>>) {
    let Some(ast::Item::Const(decl)) = item_ast(db, item) else {
        return (None, None, None);
    };
    let mut checker = Checker::new(db, item.file(db));
    checker.const_stack = Some(stack);
    let ty = match &decl.ty {
        ast::Type::Scalar(s, _) => Some(*s),
        _ => None,
    };
    let value = match ty {
        Some(t) => checker.expect_const(&decl.value, t, "a constant").value,
        None => None,
    };
    (ty, value, checker.const_cycle)
}

fn elem_of(ty: &Ty) -> Elem {
    match ty {
        Ty::Scalar(s) | Ty::Vector(s, _) => Elem::Known(*s),
        Ty::IntLiteral => Elem::Int,
        Ty::FloatLiteral => Elem::Float,
        _ => Elem::Error,
    }
}

fn vector_len(ty: &Ty) -> Option<Option<u64>> {
    match ty {
        Ty::Vector(_, len) => Some(*len),
        _ => None,
    }
}

fn op_symbol(op: BinaryOp) -> &'static str {
    match op {
        BinaryOp::Add => "+",
        BinaryOp::Sub => "-",
        BinaryOp::Mul => "*",
        BinaryOp::Div => "/",
        BinaryOp::Rem => "%",
        BinaryOp::Eq => "==",
        BinaryOp::Ne => "!=",
        BinaryOp::Lt => "<",
        BinaryOp::Le => "<=",
        BinaryOp::Gt => ">",
        BinaryOp::Ge => ">=",
        BinaryOp::And => "&&",
        BinaryOp::Or => "||",
    }
}

/// Describes a local binding kind for messages.
pub fn describe_local(local: &Local) -> &'static str {
    match local {
        Local::Value { kind, .. } => kind.describe(),
        Local::Port { .. } => "port",
        Local::Task => "task",
        Local::Tensor => "tensor",
    }
}
