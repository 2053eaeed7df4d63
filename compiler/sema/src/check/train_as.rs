//! A layer's `train as` clause (docs/language.md §6.4): `train_as` checks it — every callee a
//! layer of the module or imported (E0451), every argument one of the layer's inputs or a
//! call and every call's arguments as at a model call (E0452), every shape and the result's
//! type the layer's (E0453), no call leading back to the layer through clauses (E0218) — and
//! gives its calls as data, which pipelined training puts in place of the layer's calls.

use std::collections::BTreeMap;

use salsa::Accumulator;
use wsel_syntax::ast::{self, Span};

use crate::analysis::{ItemAnalysis, LayerScalar, LayerSig};
use crate::check::expr::{Checker, Local, LocalKind};
use crate::check::layer::{layer_signature, tensor_inputs};
use crate::db::{Db, Reported};
use crate::diagnostics::train_as as diags;
use crate::items::{ItemId, ItemKind, item_ast, item_location, module_scope};
use crate::ty::{Dim, DimExpr, TensorType, Ty, Value};

mod dims;

/// A checked `train as` clause: its calls with every argument before the call that reads it;
/// the last call's result is the layer's.
#[derive(Debug, Clone, PartialEq, Eq, salsa::SalsaValue)]
pub struct TrainAs<'db> {
    pub calls: Vec<TrainCall<'db>>,
    /// The clause's span, in the declaring layer's file.
    pub span: Span,
}

/// One call of a clause.
#[derive(Debug, Clone, PartialEq, Eq, salsa::SalsaValue)]
pub struct TrainCall<'db> {
    pub layer: ItemId<'db>,
    /// The tensor arguments, in the called layer's order.
    pub args: Vec<TrainArg>,
    /// The scalar inputs the call gives, in the called layer's order (the others take their
    /// default).
    pub scalars: Vec<(String, TrainScalar)>,
}

/// A tensor argument of a clause's call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, salsa::SalsaValue)]
pub enum TrainArg {
    /// The declaring layer's tensor input of this index (its call's argument).
    Input(usize),
    /// The result of the clause's call of this index.
    Call(usize),
}

/// A scalar argument of a clause's call.
#[derive(Debug, Clone, PartialEq, Eq, salsa::SalsaValue)]
pub enum TrainScalar {
    /// The declaring layer's scalar input of this name (its call's value).
    Input(String),
    Value(Value),
}

/// What checking a layer's `train as` clause found: the clause's calls (`None` without a
/// clause or when it does not check) and its name uses, for the language server.
#[derive(Debug, Clone, PartialEq, Eq, Default, salsa::SalsaValue)]
pub struct TrainAsCheck<'db> {
    pub clause: Option<TrainAs<'db>>,
    pub analysis: ItemAnalysis,
}

/// The checked `train as` clause of `item` (a layer): `None` when it has none or when the
/// clause does not check (the errors are reported by `check_layer`).
pub fn train_as<'db>(db: &'db dyn Db, item: ItemId<'db>) -> Option<&'db TrainAs<'db>> {
    check_train_as(db, item).clause.as_ref()
}

/// Checks the `train as` clause of `item` (a layer) and reports its diagnostics.
#[salsa::tracked(returns(ref))]
pub fn check_train_as<'db>(db: &'db dyn Db, item: ItemId<'db>) -> TrainAsCheck<'db> {
    let Some(ast::Item::Layer(layer)) = item_ast(db, item) else {
        return TrainAsCheck::default();
    };
    let Some(clause) = &layer.train_as else {
        return TrainAsCheck::default();
    };
    let mut c = ClauseChecker {
        c: Checker::new(db, item.file(db)),
        item,
        sig: layer_signature(db, item),
        names: tensor_inputs(layer).map(|p| p.name.span.clone()).collect(),
        calls: Vec::new(),
        ok: true,
    };
    c.define_scalars();
    let result = c.value(&clause.value);
    let expected = c.sig.output.as_ref().and_then(|o| o.ty.as_ref());
    match (&result, expected) {
        (Some((TrainArg::Input(_), _)), _) => {
            let d = diags::not_a_call(c.c.loc(&clause.value.span()));
            c.c.report(d);
            c.ok = false;
        }
        (Some((_, found)), Some(expected)) if !dims::same_type(found, expected) => {
            let at = c.c.loc(&clause.value.span());
            let (expected, found) = (expected.to_string(), found.to_string());
            let d = diags::result_mismatch(at, &layer.name.name, &expected, &found);
            c.c.report(d);
            c.ok = false;
        }
        _ => {}
    }
    for d in std::mem::take(&mut c.c.diags) {
        Reported(d).accumulate(db);
    }
    let ok = c.ok && result.is_some();
    TrainAsCheck {
        clause: ok.then(|| TrainAs {
            calls: c.calls,
            span: clause.span.clone(),
        }),
        analysis: c.c.analysis,
    }
}

struct ClauseChecker<'db> {
    c: Checker<'db>,
    item: ItemId<'db>,
    sig: &'db LayerSig,
    /// Where the layer's tensor inputs are named, in order.
    names: Vec<Span>,
    calls: Vec<TrainCall<'db>>,
    ok: bool,
}

impl<'db> ClauseChecker<'db> {
    /// Defines the layer's scalar inputs: names a call's scalar argument may give on, not
    /// compile-time values.
    fn define_scalars(&mut self) {
        for s in &self.sig.scalars {
            let local = Local::Value {
                kind: LocalKind::Param,
                ty: Ty::Scalar(s.ty),
                value: None,
            };
            let name = ast::Ident {
                name: s.name.clone(),
                span: s.def.span.clone(),
            };
            self.c.define(&name, local, 0);
        }
    }

    /// Checks one expression of the clause: a tensor input of the layer or a layer call; its
    /// argument and type in the layer's terms, `None` after reporting.
    fn value(&mut self, expr: &ast::Expr) -> Option<(TrainArg, TensorType)> {
        let out = match expr {
            ast::Expr::Name(id) => self.input(id),
            ast::Expr::Call {
                callee,
                args,
                named,
                ..
            } => self.call(callee, args, named),
            ast::Expr::Error(_) => None,
            other => {
                let d = diags::bad_argument(
                    self.c.loc(&other.span()),
                    "a `train as` clause computes with the layer's tensor inputs and layer calls",
                );
                self.c.report(d);
                None
            }
        };
        self.ok &= out.is_some();
        out
    }

    fn input(&mut self, id: &ast::Ident) -> Option<(TrainArg, TensorType)> {
        let Some(i) = self.sig.inputs.iter().position(|t| t.name == id.name) else {
            let what = format!("`{}` is not a tensor input of `{}`", id.name, self.sig.name);
            let d = diags::bad_argument(self.c.loc(&id.span), &what);
            self.c.report(d);
            return None;
        };
        let input = &self.sig.inputs[i];
        if let Some(name) = self.names.get(i) {
            let def = self.c.loc(name);
            self.c.record_use(&id.span, def);
        }
        Some((TrainArg::Input(i), input.ty.clone()?))
    }

    /// The layer `callee` names, with its uses recorded (E0451 when it names none, E0218 when
    /// its clause leads back to the declaring layer).
    fn callee(&mut self, callee: &ast::Ident) -> Option<ItemId<'db>> {
        let db = self.c.db;
        let item = self
            .c
            .module
            .get(&callee.name)
            .filter(|i| i.kind(db) == ItemKind::Layer);
        let Some(item) = item else {
            if !self.c.is_failed_import(&callee.name) {
                let d = diags::not_a_layer(self.c.loc(&callee.span), &callee.name);
                self.c.report(d);
            }
            return None;
        };
        if let Some(def) = item_location(db, item) {
            self.c.record_use(&callee.span, def);
        }
        if leads_back(db, item, self.item, &mut Vec::new()) {
            let d = diags::recursive(self.c.loc(&callee.span), &self.sig.name, &callee.name);
            self.c.report(d);
            return None;
        }
        Some(item)
    }

    fn call(
        &mut self,
        callee: &ast::Ident,
        args: &[ast::Expr],
        named: &[(ast::Ident, ast::Expr)],
    ) -> Option<(TrainArg, TensorType)> {
        let values: Vec<Option<(TrainArg, TensorType)>> =
            args.iter().map(|a| self.value(a)).collect();
        let layer = self.callee(callee)?;
        let sig = layer_signature(self.c.db, layer);
        if sig.inputs.len() != args.len() {
            let what = format!(
                "`{}` takes {} tensors, but this call gives {}",
                sig.name,
                sig.inputs.len(),
                args.len()
            );
            let d = diags::bad_argument(self.c.loc(&callee.span), &what);
            self.c.report(d);
            return None;
        }
        let scalars = self.scalars(sig, callee, named)?;
        let mut bindings: BTreeMap<String, Dim> = BTreeMap::new();
        let mut tensors = Vec::new();
        for ((input, value), arg) in sig.inputs.iter().zip(values).zip(args) {
            let (value, found) = value?;
            let weight = matches!(value, TrainArg::Input(i) if self.sig.inputs[i].is_param);
            if weight != input.is_param {
                let what = match input.is_param {
                    true => format!(
                        "`{}` of `{}` is a weight: it takes a `param` input of the layer",
                        input.name, sig.name
                    ),
                    false => format!(
                        "`{}` of `{}` is an activation, not a weight",
                        input.name, sig.name
                    ),
                };
                let d = diags::bad_argument(self.c.loc(&arg.span()), &what);
                self.c.report(d);
                return None;
            }
            let expected = input.ty.as_ref()?;
            if !dims::bind(expected, &found, &mut bindings) {
                let d = diags::arg_mismatch(
                    self.c.loc(&arg.span()),
                    (&sig.name, &input.name),
                    &expected.to_string(),
                    &found.to_string(),
                );
                self.c.report(d);
                return None;
            }
            tensors.push(value);
        }
        let out = sig.output.as_ref().and_then(|o| o.ty.as_ref())?;
        let scalar = |name: &str| match scalars.iter().find(|(n, _)| n == name) {
            Some((_, TrainScalar::Input(n))) => Some(DimExpr::Name(n.clone())),
            Some((_, TrainScalar::Value(v))) => v.as_size().map(DimExpr::Const),
            None => sig
                .scalars
                .iter()
                .find(|s| s.name == name)?
                .default?
                .as_size()
                .map(DimExpr::Const),
        };
        let result = dims::result_type(out, &bindings, &scalar);
        self.calls.push(TrainCall {
            layer,
            args: tensors,
            scalars,
        });
        Some((TrainArg::Call(self.calls.len() - 1), result))
    }

    /// The named arguments of a call of `sig`: each one of its scalar inputs, given a scalar
    /// input of the declaring layer of the same type or a compile-time value; every scalar
    /// input without a default given.
    fn scalars(
        &mut self,
        sig: &LayerSig,
        callee: &ast::Ident,
        named: &[(ast::Ident, ast::Expr)],
    ) -> Option<Vec<(String, TrainScalar)>> {
        let mut given: Vec<(String, TrainScalar)> = Vec::new();
        for (name, value) in named {
            let Some(scalar) = sig.scalars.iter().find(|s| s.name == name.name) else {
                let what = format!("`{}` has no scalar input `{}`", sig.name, name.name);
                let d = diags::bad_argument(self.c.loc(&name.span), &what);
                self.c.report(d);
                return None;
            };
            self.c.record_use(&name.span, scalar.def.clone());
            let value = self.scalar(scalar, value)?;
            given.push((name.name.clone(), value));
        }
        let missing: Vec<&str> = sig
            .scalars
            .iter()
            .filter(|s| s.default.is_none() && !given.iter().any(|(n, _)| *n == s.name))
            .map(|s| s.name.as_str())
            .collect();
        if let Some(first) = missing.first() {
            let what = format!(
                "`{}` needs its scalar input `{first}` (`{first} = ...`)",
                sig.name
            );
            let d = diags::bad_argument(self.c.loc(&callee.span), &what);
            self.c.report(d);
            return None;
        }
        let order = |n: &String| sig.scalars.iter().position(|s| s.name == *n);
        given.sort_by_key(|(n, _)| order(n));
        Some(given)
    }

    fn scalar(&mut self, scalar: &LayerScalar, value: &ast::Expr) -> Option<TrainScalar> {
        if let ast::Expr::Name(id) = value
            && let Some(own) = self.sig.scalars.iter().find(|s| s.name == id.name)
        {
            self.c.record_use(&id.span, own.def.clone());
            if own.ty != scalar.ty {
                let what = format!(
                    "`{}` is a `{}`, but `{}` takes a `{}`",
                    id.name,
                    crate::ty::scalar_name(own.ty),
                    scalar.name,
                    crate::ty::scalar_name(scalar.ty)
                );
                let d = diags::bad_argument(self.c.loc(&id.span), &what);
                self.c.report(d);
                return None;
            }
            return Some(TrainScalar::Input(id.name.clone()));
        }
        let typed = self
            .c
            .expect_const(value, scalar.ty, "a layer's scalar input");
        typed.value.map(TrainScalar::Value)
    }
}

/// Whether a call of `from` leads back to `target`: `from` is `target`, or its `train as`
/// clause calls a layer that leads back (read from the syntax, so that no query waits on
/// itself; `seen` the layers walked).
fn leads_back<'db>(
    db: &'db dyn Db,
    from: ItemId<'db>,
    target: ItemId<'db>,
    seen: &mut Vec<ItemId<'db>>,
) -> bool {
    if from == target {
        return true;
    }
    if seen.contains(&from) {
        return false;
    }
    seen.push(from);
    let Some(ast::Item::Layer(layer)) = item_ast(db, from) else {
        return false;
    };
    let Some(clause) = &layer.train_as else {
        return false;
    };
    let scope = module_scope(db, from.file(db));
    let mut callees = Vec::new();
    callees_of(&clause.value, &mut callees);
    callees.into_iter().any(|name| {
        scope
            .get(name)
            .filter(|i| i.kind(db) == ItemKind::Layer)
            .is_some_and(|next| leads_back(db, next, target, seen))
    })
}

/// The names of the layers an expression of a clause calls.
fn callees_of<'a>(expr: &'a ast::Expr, out: &mut Vec<&'a str>) {
    if let ast::Expr::Call { callee, args, .. } = expr {
        out.push(&callee.name);
        for a in args {
            callees_of(a, out);
        }
    }
}
