//! Models: `check_model` type-checks a model's graph of layer calls, unifying the layers'
//! dimension variables with the argument shapes at each call, and returns the graph with its
//! shapes and the bindings of every call.
//!
//! Scoping: inputs, `param`s and `let`s share one namespace (a later one may not reuse a
//! name); a name is visible after its definition. Dimension variables of the inputs (`B`) are
//! model-level symbols; parameters have constant shapes.

use std::collections::{BTreeMap, BTreeSet};

use salsa::Accumulator;
use wsel_syntax::ast::{self, Span};

use crate::analysis::{CallBinding, ItemAnalysis, LayerSig, ModelGraph, ModelNode, ValueRef};
use crate::check::expr::{Checker, Local, written_type};
use crate::check::layer::{layer_signature, tensor_type};
use crate::db::{Db, Reported};
use crate::diagnostics::{did_you_mean, layers, models, resolve, types};
use crate::items::{ItemId, ItemKind, item_ast, item_location};
use crate::ty::{Dim, DimError, TensorType, Ty, Value, scalar_name};
use wsel_diagnostic::Diagnostic;

mod reshape;

/// What `check_model` found: name uses and types, and the model graph.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ModelCheck {
    pub analysis: ItemAnalysis,
    pub graph: ModelGraph,
}

/// Checks one model, reports its diagnostics and returns its graph.
#[salsa::tracked(returns(ref))]
pub fn check_model<'db>(db: &'db dyn Db, item: ItemId<'db>) -> ModelCheck {
    let Some(ast::Item::Model(model)) = item_ast(db, item) else {
        return ModelCheck::default();
    };
    let mut m = ModelChecker {
        c: Checker::new(db, item.file(db)),
        sample_error: false,
        values: BTreeMap::new(),
        graph: ModelGraph {
            name: model.name.name.clone(),
            ..ModelGraph::default()
        },
    };
    m.check(model);
    for d in m.c.diags {
        Reported(d).accumulate(db);
    }
    ModelCheck {
        analysis: m.c.analysis,
        graph: m.graph,
    }
}

/// A tensor value in a model: where it comes from, its type (`None` is the error type of a
/// broken definition or call, which unifies with anything), and where a `param` is declared.
#[derive(Debug, Clone)]
struct TensorValue {
    source: ValueRef,
    ty: Option<TensorType>,
    param_def: Option<Span>,
    /// The `reshape` call that gave the value its type, if it is a relabelled one.
    relabelled: Option<Span>,
}

struct ModelChecker<'db> {
    c: Checker<'db>,
    /// Set when a sample dimension was reported (E0408): the result's first dimension is then
    /// not compared again.
    sample_error: bool,
    values: BTreeMap<String, TensorValue>,
    graph: ModelGraph,
}

impl<'db> ModelChecker<'db> {
    fn check(&mut self, model: &ast::Model) {
        let mut dim_vars = Vec::new();
        let mut sample: Option<String> = None;
        for (i, p) in model.inputs.iter().enumerate() {
            let ty = tensor_type(&mut self.c, &p.ty, &mut dim_vars, "a model input", false);
            if let Some(ty) = &ty {
                self.check_sample(ty, &p.ty, &mut sample, &format!("input `{}`", p.name.name));
                self.graph.inputs.push((p.name.name.clone(), ty.clone()));
            }
            self.define(&p.name, ValueRef::Input(i), ty, None);
        }
        let output_ty = tensor_type(
            &mut self.c,
            &model.output_ty,
            &mut dim_vars,
            "a model output",
            false,
        );
        if let Some(ty) = &output_ty {
            self.check_sample(ty, &model.output_ty, &mut sample, "the result");
        }
        self.graph.output_ty = output_ty.clone();
        let mut returned: Option<Span> = None;
        for stmt in &model.body {
            if let Some(ret) = &returned
                && !matches!(stmt, ast::ModelStmt::Error(_))
            {
                let d = models::bad_return(
                    self.c.loc(&model_stmt_span(stmt)),
                    "statements after `return` are never reached",
                    "after the return",
                )
                .with_secondary(self.c.loc(ret), "the model returns here");
                self.c.report(d);
                break;
            }
            match stmt {
                ast::ModelStmt::Param { name, ty, path, .. } => {
                    let mut param_vars = Vec::new();
                    let tensor =
                        tensor_type(&mut self.c, ty, &mut param_vars, "a model parameter", false);
                    let tensor = match tensor {
                        Some(t) if t.dims.iter().any(|d| matches!(d, Dim::Var(_))) => {
                            let mut d = layers::bad_sample_dim(
                                self.c.loc(&written_type(ty).1),
                                format!("parameter `{}` must have a constant shape", name.name),
                                "symbolic dimension",
                            );
                            d.notes = vec![
                                "a parameter is loaded from a `.npy` file of a fixed shape"
                                    .to_string(),
                            ];
                            self.c.report(d);
                            None
                        }
                        other => other,
                    };
                    let index = self.graph.params.len();
                    if let Some(t) = &tensor {
                        let file = path
                            .as_ref()
                            .map(|(p, _)| p.clone())
                            .unwrap_or_else(|| format!("{}.npy", name.name));
                        self.graph.params.push((name.name.clone(), t.clone(), file));
                    }
                    self.define(
                        name,
                        ValueRef::Param(index),
                        tensor,
                        Some(name.span.clone()),
                    );
                }
                ast::ModelStmt::Let { name, value, .. } => {
                    let v = self.value(value, Some(&name.name));
                    match v {
                        Some(v) => self.define(name, v.source, v.ty, v.param_def),
                        None => {
                            // A broken value: the name has the error type from here on.
                            self.values.remove(&name.name);
                            self.c.define(name, Local::Tensor, 1);
                        }
                    }
                }
                ast::ModelStmt::Return { value, span } => {
                    returned = Some(span.clone());
                    let v = self.value(value, None);
                    if let Some(at) = v.as_ref().and_then(|v| v.relabelled.clone()) {
                        let d = models::reshape_not_a_result(self.c.loc(&at), "the model's result");
                        self.c.report(d);
                    } else if let Some(v) = v {
                        self.graph.output = Some(v.source);
                        if let (Some(found), Some(expected)) = (&v.ty, &output_ty)
                            && found != expected
                            && !(self.sample_error && same_but_sample(found, expected))
                        {
                            let d = models::result_mismatch(
                                self.c.loc(&value.span()),
                                &expected.to_string(),
                                &found.to_string(),
                                self.c.loc(&written_type(&model.output_ty).1),
                            );
                            self.c.report(d);
                        }
                    }
                }
                ast::ModelStmt::Error(_) => {}
            }
        }
        if returned.is_none() && !self.c.is_cut_short(&model.span) {
            let d = models::bad_return(
                self.c.loc(&model.name.span),
                format!("model `{}` has no `return`", model.name.name),
                "no `return`",
            )
            .with_help("end the model with `return tensor;`");
            self.c.report(d);
        }
    }

    fn check_sample(
        &mut self,
        ty: &TensorType,
        written: &ast::Type,
        sample: &mut Option<String>,
        what: &str,
    ) {
        let span = match written {
            ast::Type::Tensor { dims, span, .. } => {
                dims.first().map(|d| d.span()).unwrap_or(span.clone())
            }
            other => written_type(other).1,
        };
        match (ty.dims.first(), sample.as_ref()) {
            (Some(Dim::Var(v)), None) => *sample = Some(v.clone()),
            (Some(Dim::Var(v)), Some(s)) if v == s => {}
            (Some(Dim::Var(v)), Some(s)) => {
                let d = layers::bad_sample_dim(
                    self.c.loc(&span),
                    format!(
                        "all activations of a model share one sample dimension, but this is `{v}` and an earlier one is `{s}`"
                    ),
                    "different sample dimension",
                );
                self.c.report(d);
                self.sample_error = true;
            }
            _ => {
                let d = layers::bad_sample_dim(
                    self.c.loc(&span),
                    format!("the first dimension of {what} must be the sample dimension variable"),
                    "not a dimension variable",
                );
                self.c.report(d);
                self.sample_error = true;
            }
        }
    }

    fn define(
        &mut self,
        name: &ast::Ident,
        source: ValueRef,
        ty: Option<TensorType>,
        param_def: Option<Span>,
    ) {
        // A second definition is reported as E0106 by `define`; later uses see it.
        self.c.define(name, Local::Tensor, 1);
        if let Some(t) = &ty {
            self.c.record_type(&name.span, &Ty::Tensor(t.clone()));
        }
        self.values.insert(
            name.name.clone(),
            TensorValue {
                source,
                ty,
                param_def,
                relabelled: None,
            },
        );
    }

    /// Checks a model expression: a tensor name or a layer call.
    fn value(&mut self, expr: &ast::Expr, let_name: Option<&str>) -> Option<TensorValue> {
        match expr {
            ast::Expr::Name(id) => {
                let Some(v) = self.values.get(&id.name).cloned() else {
                    match self.c.lookup(&id.name).cloned() {
                        Some(b) => {
                            // A broken definition, already reported.
                            let def = self.c.loc(&b.def);
                            self.c.record_use(&id.span, def);
                        }
                        None if self.c.is_failed_import(&id.name) => {}
                        None => {
                            let names: Vec<String> = self.values.keys().cloned().collect();
                            let suggestion =
                                did_you_mean(&id.name, names.iter().map(String::as_str));
                            let d = resolve::unresolved_name(
                                self.c.loc(&id.span),
                                &id.name,
                                "tensor",
                                suggestion,
                            );
                            self.c.report(d);
                        }
                    }
                    return None;
                };
                if let Some(b) = self.c.lookup(&id.name).cloned() {
                    let def = self.c.loc(&b.def);
                    self.c.record_use(&id.span, def);
                }
                if let Some(t) = &v.ty {
                    self.c.record_type(&id.span, &Ty::Tensor(t.clone()));
                }
                Some(v)
            }
            ast::Expr::Call {
                callee,
                args,
                named,
                span,
            } if self.is_reshape(callee) => self.reshape(args, named, span),
            ast::Expr::Call {
                callee,
                args,
                named,
                span,
            } => self.call(callee, args, named, span, let_name),
            ast::Expr::Error(_) => None,
            other => {
                let d =
                    types::mismatched_types(self.c.loc(&other.span()), "a tensor", "an expression")
                        .with_note("a model computes with tensor names and layer calls");
                self.c.report(d);
                None
            }
        }
    }

    fn resolve_layer(&mut self, callee: &ast::Ident) -> Option<ItemId<'db>> {
        let db = self.c.db;
        if let Some(b) = self.c.lookup(&callee.name).cloned() {
            let def = self.c.loc(&b.def);
            let d =
                models::not_a_layer(self.c.loc(&callee.span), &callee.name, "tensor", Some(def));
            self.c.report(d);
            return None;
        }
        match self.c.module.get(&callee.name) {
            Some(item) if item.kind(db) == ItemKind::Layer => {
                if let Some(def) = item_location(db, item) {
                    self.c.record_use(&callee.span, def);
                }
                Some(item)
            }
            Some(item) => {
                let def = item_location(db, item);
                let d = models::not_a_layer(
                    self.c.loc(&callee.span),
                    &callee.name,
                    item.kind(db).keyword(),
                    def,
                );
                self.c.report(d);
                None
            }
            None if self.c.is_failed_import(&callee.name) => None,
            None => {
                let layers: Vec<&String> = self
                    .c
                    .module
                    .names
                    .iter()
                    .filter(|(_, i)| i.kind(db) == ItemKind::Layer)
                    .map(|(n, _)| n)
                    .collect();
                let suggestion = did_you_mean(&callee.name, layers.iter().map(|s| s.as_str()));
                let d = resolve::unresolved_name(
                    self.c.loc(&callee.span),
                    &callee.name,
                    "layer",
                    suggestion,
                );
                self.c.report(d);
                None
            }
        }
    }

    fn call(
        &mut self,
        callee: &ast::Ident,
        args: &[ast::Expr],
        named: &[(ast::Ident, ast::Expr)],
        span: &Span,
        let_name: Option<&str>,
    ) -> Option<TensorValue> {
        let db = self.c.db;
        let layer = self.resolve_layer(callee);
        let sig = layer.map(|l| layer_signature(db, l).clone());
        // A literal past the tensors of a layer with scalar inputs is a scalar given by
        // position: E0405 below says so, and the literal is not also reported as no tensor.
        let scalar_by_position = |i: usize, arg: &ast::Expr| {
            sig.as_ref()
                .is_some_and(|s| !s.scalars.is_empty() && i >= s.inputs.len())
                && matches!(
                    arg,
                    ast::Expr::Int(..) | ast::Expr::Float(..) | ast::Expr::Bool(..)
                )
        };
        let arg_values: Vec<Option<TensorValue>> = args
            .iter()
            .enumerate()
            .map(|(i, a)| {
                if scalar_by_position(i, a) {
                    None
                } else {
                    self.value(a, None)
                }
            })
            .collect();
        let (Some(layer), Some(sig)) = (layer, sig) else {
            for (_, value) in named {
                self.c.expr(value, None);
            }
            return None;
        };
        // A tensor given by name is reported as such, not as a missing positional one.
        let tensors_by_name: Vec<&ast::Ident> = named
            .iter()
            .map(|(n, _)| n)
            .filter(|n| sig.inputs.iter().any(|t| t.name == n.name))
            .collect();
        if !tensors_by_name.is_empty() {
            for name in tensors_by_name {
                let d = self.unknown_scalar(&sig, name);
                self.c.report(d);
            }
            return None;
        }
        if sig.inputs.len() != args.len() {
            let mut d = models::layer_arg_count(
                self.c.loc(span),
                &sig.name,
                sig.inputs.len(),
                args.len(),
                sig.def.clone(),
            );
            if let Some(first) = sig
                .scalars
                .first()
                .filter(|_| args.len() > sig.inputs.len())
            {
                d = d.with_help(format!(
                    "a scalar input is given by name after the tensors: `{} = ...`",
                    first.name
                ));
            }
            self.c.report(d);
            return None;
        }
        let scalars = self.scalar_args(&sig, named, span)?;
        let mut bindings: BTreeMap<String, Dim> = BTreeMap::new();
        let mut ok = true;
        // Activations first: their shapes come from checked computations, while a `param`'s
        // shape is a declaration that can be wrong on its own. So a conflict between the two
        // is blamed on the `param` ("parameter `w` is declared `f32[32, 16]`, but the call
        // needs `f32[64, 16]`"), and the dimensions in conflict make the result the error
        // type when it depends on them, so nothing downstream is reported again.
        let mut order: Vec<usize> = (0..args.len()).collect();
        order.sort_by_key(|&i| sig.inputs[i].is_param);
        let mut conflicts: BTreeSet<String> = BTreeSet::new();
        let mut mismatched: Vec<usize> = Vec::new();
        for i in order {
            let (input, arg, value) = (&sig.inputs[i], &args[i], &arg_values[i]);
            let Some(value) = value else {
                ok = false;
                continue;
            };
            // A weight given for an activation (or the reverse) is reported once, without a
            // follow-on shape error.
            match (input.is_param, &value.param_def) {
                (true, None) => {
                    let d = models::needs_param(
                        self.c.loc(&arg.span()),
                        &sig.name,
                        &input.name,
                        input.def.clone(),
                    );
                    self.c.report(d);
                    ok = false;
                    continue;
                }
                (false, Some(_)) => {
                    let d = models::param_as_activation(
                        self.c.loc(&arg.span()),
                        &sig.name,
                        &input.name,
                        input.def.clone(),
                    );
                    self.c.report(d);
                    ok = false;
                    continue;
                }
                _ => {}
            }
            let (Some(expected), Some(found)) = (&input.ty, &value.ty) else {
                ok = false;
                continue;
            };
            // Only the element type differs: say so, rather than "mismatched shapes".
            let same_shape = TensorType {
                elem: found.elem,
                ..expected.clone()
            };
            if expected.elem != found.elem
                && unify(&same_shape, found, &mut bindings.clone()).is_ok()
            {
                ok = false;
                let d = models::elem_mismatch(
                    self.c.loc(&arg.span()),
                    &sig.name,
                    &input.name,
                    (scalar_name(expected.elem), scalar_name(found.elem)),
                    &found.to_string(),
                    input.def.clone(),
                    &expected.to_string(),
                );
                self.c.report(d);
                continue;
            }
            let mut trial = bindings.clone();
            match unify(expected, found, &mut trial) {
                Ok(()) => bindings = trial,
                Err(vars) => {
                    ok = false;
                    conflicts.extend(vars);
                    mismatched.push(i);
                }
            }
        }
        // Reported with every other argument's bindings, so the expected shape is complete.
        for i in mismatched {
            self.report_mismatch(&sig, i, &args[i], &arg_values[i], &bindings);
        }
        let out_ty = sig.output.as_ref().and_then(|o| o.ty.as_ref())?;
        let result = substitute(out_ty, &bindings);
        let Some(result) = self.output_sizes(&sig, result, (&bindings, &scalars), span, ok) else {
            return Some(TensorValue {
                source: ValueRef::Node(self.graph.nodes.len()),
                ty: None,
                param_def: None,
                relabelled: None,
            });
        };
        // A call with a broken argument has the error type when its result depends on a
        // dimension the argument should have bound: the error type unifies with anything,
        // so one mistake is reported once, not again at every use of the result.
        let unbound = out_ty.dims.iter().any(
            |d| matches!(d, Dim::Var(v) if !bindings.contains_key(v) || conflicts.contains(v)),
        );
        if !ok && unbound {
            return Some(TensorValue {
                source: ValueRef::Node(self.graph.nodes.len()),
                ty: None,
                param_def: None,
                relabelled: None,
            });
        }
        self.c.record_type(span, &Ty::Tensor(result.clone()));
        self.c.analysis.calls.push(CallBinding {
            span: span.clone(),
            layer: sig.name.clone(),
            dims: sig
                .dim_vars
                .iter()
                .filter_map(|v| bindings.get(v).map(|d| (v.clone(), d.clone())))
                .collect(),
            scalars: scalars.clone(),
            result: result.clone(),
        });
        if !ok {
            return Some(TensorValue {
                source: ValueRef::Node(self.graph.nodes.len()),
                ty: Some(result),
                param_def: None,
                relabelled: None,
            });
        }
        let node = ModelNode {
            layer_file: layer.file(db).path(db).clone(),
            layer: sig.name.clone(),
            args: arg_values.iter().flatten().map(|v| v.source).collect(),
            arg_types: arg_values
                .iter()
                .flatten()
                .filter_map(|v| v.ty.clone())
                .collect(),
            scalars,
            result: result.clone(),
            name: let_name.map(str::to_string),
            span: span.clone(),
        };
        self.graph.nodes.push(node);
        Some(TensorValue {
            source: ValueRef::Node(self.graph.nodes.len() - 1),
            ty: Some(result),
            param_def: None,
            relabelled: None,
        })
    }

    /// Reports argument `i` of a call, whose type does not unify with the layer's input:
    /// for a model `param`, as a declaration that does not fit the call; for an activation,
    /// as the shape the layer expected.
    fn report_mismatch(
        &mut self,
        sig: &LayerSig,
        i: usize,
        arg: &ast::Expr,
        value: &Option<TensorValue>,
        bindings: &BTreeMap<String, Dim>,
    ) {
        let input = &sig.inputs[i];
        let (Some(expected), Some(value)) = (&input.ty, value) else {
            return;
        };
        let Some(found) = &value.ty else {
            return;
        };
        let shown = substitute(expected, bindings);
        let d = match (&value.param_def, arg) {
            (Some(def), ast::Expr::Name(name)) => models::param_shape_mismatch(
                self.c.loc(&arg.span()),
                &sig.name,
                &name.name,
                (&shown.to_string(), &found.to_string()),
                self.c.loc(def),
            ),
            _ => models::shape_mismatch(
                self.c.loc(&arg.span()),
                &sig.name,
                &input.name,
                &shown.to_string(),
                &found.to_string(),
                input.def.clone(),
                &expected.to_string(),
            ),
        };
        self.c.report(d);
    }
}

impl ModelChecker<'_> {
    /// The result type `result` of a call (its dimension variables substituted) with its
    /// output dimension expressions evaluated with the call's `scalars`; `None` after
    /// reporting E0444/E0445 (only when the arguments are `ok`: a broken argument leaves
    /// dimensions unbound, and is reported already).
    fn output_sizes(
        &mut self,
        sig: &LayerSig,
        result: TensorType,
        (bindings, scalars): (&BTreeMap<String, Dim>, &[(String, Value)]),
        span: &Span,
        ok: bool,
    ) -> Option<TensorType> {
        let value = |name: &str| match bindings.get(name) {
            Some(Dim::Known(n)) => Some(i128::from(*n)),
            Some(_) => None,
            None => scalars
                .iter()
                .find(|(n, _)| n == name)
                .and_then(|(_, v)| match v {
                    Value::Int(v) => Some(*v),
                    _ => None,
                }),
        };
        let (expr, err) = match result.with_sizes(&value) {
            Ok(t) => return Some(t),
            Err(e) => e,
        };
        if ok {
            let def = sig.output.as_ref().map(|o| o.def.clone())?;
            let at = self.c.loc(span);
            let d = match err {
                DimError::Unknown(name) => layers::dim_expr_unknown_at_call(
                    at,
                    &expr,
                    &format!("`{name}` is not a known size there"),
                    def,
                ),
                DimError::DivisionByZero => {
                    layers::dim_expr_not_positive(at, Some((&expr, "a division by zero", def)))
                }
                DimError::NotPositive(v) => {
                    layers::dim_expr_not_positive(at, Some((&expr, &v.to_string(), def)))
                }
            };
            self.c.report(d);
        }
        None
    }

    /// The values of `sig`'s scalar inputs at a call with the named arguments `named`, in
    /// signature order: each given one checked as a compile-time value of its type, the others
    /// their default. `None` (after reporting E0436–E0438 or a type error) when one has no
    /// value.
    fn scalar_args(
        &mut self,
        sig: &LayerSig,
        named: &[(ast::Ident, ast::Expr)],
        span: &Span,
    ) -> Option<Vec<(String, Value)>> {
        let mut given: BTreeMap<String, (Span, Option<Value>)> = BTreeMap::new();
        let mut ok = true;
        for (name, value) in named {
            let Some(scalar) = sig.scalars.iter().find(|s| s.name == name.name) else {
                ok = false;
                self.c.expr(value, None);
                let d = self.unknown_scalar(sig, name);
                self.c.report(d);
                continue;
            };
            self.c.record_use(&name.span, scalar.def.clone());
            let typed = self
                .c
                .expect_const(value, scalar.ty, "a layer's scalar input");
            if let Some((first, _)) = given.get(&name.name) {
                let d =
                    models::scalar_arg_twice(self.c.loc(&name.span), &name.name, self.c.loc(first));
                self.c.report(d);
                ok = false;
                continue;
            }
            given.insert(name.name.clone(), (name.span.clone(), typed.value));
        }
        let missing: Vec<String> = sig
            .scalars
            .iter()
            .filter(|s| s.default.is_none() && !given.contains_key(&s.name))
            .map(|s| s.name.clone())
            .collect();
        if !missing.is_empty() {
            let d =
                models::missing_scalar_args(self.c.loc(span), &sig.name, &missing, sig.def.clone());
            self.c.report(d);
            return None;
        }
        let values: Option<Vec<(String, Value)>> = sig
            .scalars
            .iter()
            .map(|s| {
                let value = match given.get(&s.name) {
                    Some((_, value)) => *value,
                    None => s.default,
                };
                value.map(|v| (s.name.clone(), v))
            })
            .collect();
        values.filter(|_| ok)
    }

    /// E0436 for the named argument `name`, which names no scalar input of `sig`.
    fn unknown_scalar(&self, sig: &LayerSig, name: &ast::Ident) -> Diagnostic {
        let help = if sig.inputs.iter().any(|t| t.name == name.name) {
            Some(format!(
                "`{}` is a tensor input: tensors are given by position",
                name.name
            ))
        } else if sig.scalars.is_empty() {
            Some(format!("`{}` takes tensors only", sig.name))
        } else {
            did_you_mean(&name.name, sig.scalars.iter().map(|s| s.name.as_str()))
                .map(|s| format!("did you mean `{s}`?"))
        };
        models::unknown_scalar_arg(
            self.c.loc(&name.span),
            &sig.name,
            &name.name,
            help,
            sig.def.clone(),
        )
    }
}

/// Unifies a layer input type with an argument type, extending `bindings`. On a conflict
/// (element type, rank, or a dimension) gives the dimension variables in conflict: every
/// variable of `expected` when the element type or rank differs.
fn unify(
    expected: &TensorType,
    found: &TensorType,
    bindings: &mut BTreeMap<String, Dim>,
) -> Result<(), Vec<String>> {
    let vars = || {
        expected
            .dims
            .iter()
            .filter_map(|d| match d {
                Dim::Var(v) => Some(v.clone()),
                Dim::Known(_) | Dim::Expr(_) => None,
            })
            .collect()
    };
    if expected.elem != found.elem || expected.dims.len() != found.dims.len() {
        return Err(vars());
    }
    let mut conflicts = Vec::new();
    let mut constant_conflict = false;
    for (e, f) in expected.dims.iter().zip(&found.dims) {
        match e {
            // Inputs have no dimension expressions (only outputs do).
            Dim::Known(_) | Dim::Expr(_) => constant_conflict |= e != f,
            Dim::Var(v) => match bindings.get(v) {
                Some(bound) if bound != f => conflicts.push(v.clone()),
                Some(_) => {}
                None => {
                    bindings.insert(v.clone(), f.clone());
                }
            },
        }
    }
    if conflicts.is_empty() && !constant_conflict {
        Ok(())
    } else {
        Err(conflicts)
    }
}

/// `ty` with its bound dimension variables replaced.
fn substitute(ty: &TensorType, bindings: &BTreeMap<String, Dim>) -> TensorType {
    TensorType {
        elem: ty.elem,
        dims: ty
            .dims
            .iter()
            .map(|d| match d {
                Dim::Var(v) => bindings.get(v).cloned().unwrap_or_else(|| d.clone()),
                Dim::Known(_) | Dim::Expr(_) => d.clone(),
            })
            .collect(),
    }
}

/// Whether two tensor types differ at most in their first (sample) dimension.
fn same_but_sample(a: &TensorType, b: &TensorType) -> bool {
    a.elem == b.elem
        && a.dims.len() == b.dims.len()
        && a.dims.iter().skip(1).eq(b.dims.iter().skip(1))
}

fn model_stmt_span(stmt: &ast::ModelStmt) -> Span {
    match stmt {
        ast::ModelStmt::Param { span, .. }
        | ast::ModelStmt::Let { span, .. }
        | ast::ModelStmt::Return { span, .. }
        | ast::ModelStmt::Error(span) => span.clone(),
    }
}
