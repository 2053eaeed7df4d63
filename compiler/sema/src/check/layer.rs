//! Layers: `layer_signature` (tensors and dimension variables, for model checks and lowering)
//! and `check_layer` (sample dimensions, cost, implementations, `run` and `bind`).
//!
//! Scoping: a layer's tensors, its dimension variables and (inside one implementation) its
//! region names share one namespace; expressions in the cost, conditions and kernel arguments
//! see dimension variables and region names as `u32` compile-time values, and module
//! constants. A dimension variable is an identifier in a dimension position that does not name
//! a module constant; it is defined at its first occurrence.

use std::collections::BTreeMap;

use salsa::Accumulator;
use wsel_syntax::ast::{self, BindKind, Mode, PortDirection, ScalarType, Span, SplitAxis};

use crate::analysis::{DeclaredKind, ItemAnalysis, LayerScalar, LayerSig, LayerTensor};
use crate::check::dim_expr::output_dim;
use crate::check::expr::{Checker, Local, LocalKind, written_type};
use crate::check::kernel::{BUS_SIDES, kernel_signature};
use crate::check::train_as::check_train_as;
use crate::db::{Db, Reported};
use crate::diagnostics::{did_you_mean, layers, resolve, types};
use crate::items::{ItemId, ItemKind, item_ast, item_location};
use crate::ty::{Dim, TensorType, Ty, Value, scalar_name};

/// A layer's signature. Does not report; `check_layer` does.
#[salsa::tracked(returns(ref))]
pub fn layer_signature<'db>(db: &'db dyn Db, item: ItemId<'db>) -> LayerSig {
    let Some(ast::Item::Layer(layer)) = item_ast(db, item) else {
        return LayerSig::default();
    };
    let mut checker = Checker::new(db, item.file(db));
    let mut sig = declare_signature(&mut checker, layer);
    sig.def = item_location(db, item);
    sig
}

/// Checks one layer and reports its diagnostics.
#[salsa::tracked(returns(ref))]
pub fn check_layer<'db>(db: &'db dyn Db, item: ItemId<'db>) -> ItemAnalysis {
    let Some(ast::Item::Layer(layer)) = item_ast(db, item) else {
        return ItemAnalysis::default();
    };
    let mut c = Checker::new(db, item.file(db));
    let sig = declare_signature(&mut c, layer);
    check_sample_dims(&mut c, layer, &sig);
    check_cost(&mut c, layer);
    let mut modes: BTreeMap<&'static str, Span> = BTreeMap::new();
    for imp in &layer.impls {
        for (mode, span) in &imp.modes {
            let name = match mode {
                Mode::Pipelined => "pipelined",
                Mode::Streaming => "streaming",
            };
            if let Some(first) = modes.get(name) {
                let d = layers::duplicate_mode(c.loc(span), name, c.loc(first));
                c.report(d);
            } else {
                modes.insert(name, span.clone());
            }
        }
        c.push_scope();
        check_impl(&mut c, layer, &sig, imp);
        c.pop_scope();
    }
    let clause = &check_train_as(db, item).analysis;
    c.analysis.uses.extend(clause.uses.iter().cloned());
    for d in c.diags {
        Reported(d).accumulate(db);
    }
    c.analysis
}

/// Defines the tensors and dimension variables of `layer` and returns its signature.
fn declare_signature(c: &mut Checker<'_>, layer: &ast::Layer) -> LayerSig {
    let mut sig = LayerSig {
        name: layer.name.name.clone(),
        ..LayerSig::default()
    };
    for p in &layer.inputs {
        if let ast::Type::Scalar(elem, _) = &p.ty {
            declare_scalar(c, p, *elem, &mut sig);
            continue;
        }
        c.define(&p.name, Local::Tensor, 1);
        let ty = tensor_type(c, &p.ty, &mut sig.dim_vars, "a layer input", false);
        let (_, span) = written_type(&p.ty);
        sig.inputs.push(LayerTensor {
            name: p.name.name.clone(),
            is_param: p.is_param,
            ty,
            def: c.loc(&span),
        });
    }
    c.define(&layer.output, Local::Tensor, 1);
    let ty = tensor_type(
        c,
        &layer.output_ty,
        &mut sig.dim_vars,
        "a layer output",
        true,
    );
    let (_, span) = written_type(&layer.output_ty);
    sig.output = Some(LayerTensor {
        name: layer.output.name.clone(),
        is_param: false,
        ty,
        def: c.loc(&span),
    });
    sig
}

/// Defines the scalar input `p` of type `elem` (a compile-time value in the layer's body) and
/// adds it to `sig`, with its default value when it has one. A scalar input cannot be a
/// weight (E0214).
fn declare_scalar(c: &mut Checker<'_>, p: &ast::Param, elem: ScalarType, sig: &mut LayerSig) {
    if p.is_param {
        let (printed, span) = written_type(&p.ty);
        let d = types::type_not_allowed(c.loc(&span), &printed, "a layer `param` input")
            .with_help("a weight is a tensor; a scalar input is written without `param`");
        c.report(d);
    }
    let default = p
        .default
        .as_ref()
        .and_then(|e| c.expect_const(e, elem, "a default value").value);
    let local = Local::Value {
        kind: LocalKind::Param,
        ty: Ty::Scalar(elem),
        value: None,
    };
    c.define(&p.name, local, 1);
    c.record_type(&p.name.span, &Ty::Scalar(elem));
    sig.scalars.push(LayerScalar {
        name: p.name.name.clone(),
        ty: elem,
        default,
        def: c.loc(&p.name.span),
    });
}

/// Resolves a written tensor type, defining new dimension variables (shared by layers and
/// models). Reports E0214 for non-tensor types and E0217 for unsupported dimensions. With
/// `exprs` (a layer's output) a dimension may also be an expression of the dimension
/// variables and scalar inputs defined so far (E0442–E0444 when it is not one).
pub fn tensor_type(
    c: &mut Checker<'_>,
    ty: &ast::Type,
    dim_vars: &mut Vec<String>,
    position: &str,
    exprs: bool,
) -> Option<TensorType> {
    let (elem, dims) = match ty {
        ast::Type::Tensor { elem, dims, .. } => (*elem, dims),
        ast::Type::Error(_) => return None,
        other => {
            let (printed, span) = written_type(other);
            let d = types::type_not_allowed(c.loc(&span), &printed, position)
                .with_help("tensors are written like `f32[B, 64]`");
            c.report(d);
            return None;
        }
    };
    let mut out = Vec::new();
    let mut ok = true;
    for dim in dims {
        if let ast::Expr::Name(id) = dim {
            let is_const = match c.lookup(&id.name) {
                Some(b) => !matches!(
                    b.local,
                    Local::Value {
                        kind: LocalKind::Dim,
                        ..
                    }
                ),
                None => c
                    .module
                    .get(&id.name)
                    .is_some_and(|i| i.kind(c.db) == ItemKind::Const),
            };
            if !is_const {
                match c.lookup(&id.name).cloned() {
                    Some(b) => {
                        let def = c.loc(&b.def);
                        c.record_use(&id.span, def);
                    }
                    None => {
                        let local = Local::Value {
                            kind: LocalKind::Dim,
                            ty: Ty::Scalar(ScalarType::U32),
                            value: None,
                        };
                        c.define(id, local, 1);
                        c.declared(&id.span, DeclaredKind::DimVar);
                        dim_vars.push(id.name.clone());
                    }
                }
                c.record_type(&id.span, &Ty::Scalar(ScalarType::U32));
                out.push(Dim::Var(id.name.clone()));
                continue;
            }
        }
        if exprs {
            match output_dim(c, dim) {
                Some(d) => out.push(d),
                None => ok = false,
            }
            continue;
        }
        let typed = c.expect_const(dim, ScalarType::U32, "a tensor dimension");
        match typed.value.and_then(Value::as_size) {
            Some(n) => out.push(Dim::Known(n)),
            None => {
                if typed.ty != Ty::Error {
                    let d = types::bad_dimension(c.loc(&dim.span()));
                    c.report(d);
                }
                ok = false;
            }
        }
    }
    ok.then_some(TensorType { elem, dims: out })
}

fn check_sample_dims(c: &mut Checker<'_>, layer: &ast::Layer, sig: &LayerSig) {
    let mut sample: Option<(String, Span)> = None;
    let activations = tensor_inputs(layer)
        .zip(&sig.inputs)
        .filter(|(p, _)| !p.is_param)
        .map(|(p, t)| (&p.ty, t))
        .chain(
            std::iter::once((&layer.output_ty, sig.output.as_ref()))
                .filter(|_| !layer.output_is_param)
                .filter_map(|(w, t)| t.map(|t| (w, t))),
        );
    for (written, tensor) in activations {
        let Some(ty) = &tensor.ty else { continue };
        let first_span = match written {
            ast::Type::Tensor { dims, span, .. } => {
                dims.first().map(|d| d.span()).unwrap_or(span.clone())
            }
            other => written_type(other).1,
        };
        match ty.dims.first() {
            Some(Dim::Var(v)) => match &sample {
                None => sample = Some((v.clone(), first_span)),
                Some((s, _)) if s == v => {}
                Some((s, _)) => {
                    let d = layers::bad_sample_dim(
                        c.loc(&first_span),
                        format!(
                            "all activations of a layer share one sample dimension, but this is `{v}` and an earlier one is `{s}`"
                        ),
                        "different sample dimension",
                    );
                    c.report(d);
                }
            },
            _ => {
                let d = layers::bad_sample_dim(
                    c.loc(&first_span),
                    format!(
                        "the first dimension of activation `{}` must be the sample dimension variable",
                        tensor.name
                    ),
                    "not a dimension variable",
                );
                c.report(d);
            }
        }
    }
    if let Some((s, _)) = &sample {
        for (p, t) in tensor_inputs(layer).zip(&sig.inputs) {
            if p.is_param
                && let Some(ty) = &t.ty
                && ty.dims.iter().any(|d| d == &Dim::Var(s.clone()))
            {
                let d = layers::bad_sample_dim(
                    c.loc(&written_type(&p.ty).1),
                    format!(
                        "weight `{}` cannot depend on the sample dimension `{s}`",
                        p.name.name
                    ),
                    "uses the sample dimension",
                );
                c.report(d);
            }
        }
    }
    // Output dimension variables must be determined by the inputs, and an expression must
    // not use the sample dimension.
    if let Some(out) = sig.output.as_ref().and_then(|o| o.ty.as_ref()) {
        if let (Some((s, _)), ast::Type::Tensor { dims, .. }) = (&sample, &layer.output_ty) {
            for (d, written) in out.dims.iter().zip(dims) {
                if let Dim::Expr(e) = d
                    && e.names().contains(&s.as_str())
                {
                    let diag = layers::dim_expr_uses_sample(c.loc(&written.span()), s);
                    c.report(diag);
                }
            }
        }
        for d in &out.dims {
            if let Dim::Var(v) = d {
                let bound = sig
                    .inputs
                    .iter()
                    .filter_map(|i| i.ty.as_ref())
                    .any(|t| t.dims.contains(d));
                if !bound {
                    let span = dim_span(&layer.output_ty, v)
                        .unwrap_or_else(|| written_type(&layer.output_ty).1);
                    let diag = layers::undetermined_output_dim(c.loc(&span), v);
                    c.report(diag);
                }
            }
        }
    }
}

/// The tensor inputs of `layer` (every input that is not a scalar), parallel to
/// [`LayerSig::inputs`].
pub fn tensor_inputs(layer: &ast::Layer) -> impl Iterator<Item = &ast::Param> {
    layer
        .inputs
        .iter()
        .filter(|p| !matches!(p.ty, ast::Type::Scalar(..)))
}

fn dim_span(ty: &ast::Type, var: &str) -> Option<Span> {
    match ty {
        ast::Type::Tensor { dims, .. } => dims.iter().find_map(|d| match d {
            ast::Expr::Name(id) if id.name == var => Some(id.span.clone()),
            _ => None,
        }),
        _ => None,
    }
}

const COST_KEYS: &[&str] = &["flops", "weights", "activations"];

fn check_cost(c: &mut Checker<'_>, layer: &ast::Layer) {
    let Some(cost) = &layer.cost else {
        if c.is_cut_short(&layer.span) {
            return;
        }
        let d = layers::bad_cost(
            c.loc(&layer.name.span),
            format!("layer `{}` has no `cost` block", layer.name.name),
            "no cost",
        );
        c.report(d);
        return;
    };
    let mut seen: BTreeMap<&str, Span> = BTreeMap::new();
    // Entries a misspelt one is taken for: not reported missing as well.
    let mut suggested: Vec<&str> = Vec::new();
    for (key, value) in &cost.entries {
        if !COST_KEYS.contains(&key.name.as_str()) {
            let d = layers::bad_cost(
                c.loc(&key.span),
                format!("unknown cost entry `{}`", key.name),
                "unknown entry",
            );
            let d = match did_you_mean(&key.name, COST_KEYS.iter().copied()) {
                Some(s) => {
                    let d = d.with_help(format!("did you mean `{s}`?"));
                    if let Some(k) = COST_KEYS.iter().find(|k| **k == s) {
                        suggested.push(k);
                    }
                    d
                }
                None => d,
            };
            c.report(d);
            c.expr(value, Some(ScalarType::U32));
            continue;
        }
        if let Some(first) = seen.get(key.name.as_str()) {
            let d = layers::bad_cost(
                c.loc(&key.span),
                format!("cost entry `{}` is given more than once", key.name),
                "given again",
            )
            .with_secondary(c.loc(first), "first given here");
            c.report(d);
        } else {
            seen.insert(&key.name, key.span.clone());
        }
        c.expect_const(value, ScalarType::U32, "a cost entry");
    }
    let missing: Vec<String> = COST_KEYS
        .iter()
        .filter(|k| !seen.contains_key(*k) && !suggested.contains(k))
        .map(|k| format!("`{k}`"))
        .collect();
    if !missing.is_empty() && !c.is_cut_short(&cost.span) {
        let d = layers::bad_cost(
            c.loc(&cost.span),
            format!("the cost block has no {}", missing.join(", ")),
            "missing entries",
        );
        c.report(d);
    }
}

fn check_impl(c: &mut Checker<'_>, layer: &ast::Layer, sig: &LayerSig, imp: &ast::LayerImpl) {
    for size in [&imp.rows, &imp.cols] {
        region_size(c, size);
    }
    for cond in &imp.conditions {
        c.expect_const(cond, ScalarType::Bool, "an implementation condition");
    }
    let Some(run) = &imp.run else {
        if c.is_cut_short(&imp.span) {
            return;
        }
        let start = imp.span.start;
        let head = start..imp.modes.last().map(|(_, s)| s.end).unwrap_or(start);
        let d = layers::missing_run(c.loc(&head));
        c.report(d);
        return;
    };
    let kernel = resolve_kernel(c, &run.kernel);
    let ksig = kernel.map(|k| kernel_signature(c.db, k).clone());
    let mut given: BTreeMap<String, Span> = BTreeMap::new();
    // Parameters a misspelt argument is taken for: not reported missing as well.
    let mut suggested: Vec<String> = Vec::new();
    for (name, value) in &run.args {
        let Some(ksig) = &ksig else {
            c.expr(value, Some(ScalarType::U32));
            continue;
        };
        let Some(param) = ksig.params.iter().find(|p| p.name == name.name) else {
            let suggestion = did_you_mean(&name.name, ksig.params.iter().map(|p| p.name.as_str()));
            suggested.extend(suggestion.clone());
            let d =
                layers::unknown_kernel_param(c.loc(&name.span), &ksig.name, &name.name, suggestion);
            c.report(d);
            c.expr(value, Some(ScalarType::U32));
            continue;
        };
        c.record_use(&name.span, param.def.clone());
        if let Some(first) = given.get(&name.name) {
            let d = layers::duplicate_kernel_arg(c.loc(&name.span), &name.name, c.loc(first));
            c.report(d);
        } else {
            given.insert(name.name.clone(), name.span.clone());
        }
        match param.ty {
            Some(t) => {
                c.expect_const(value, t, "a kernel argument");
            }
            None => {
                c.expr(value, None);
            }
        }
    }
    if let Some(ksig) = &ksig {
        let missing: Vec<String> = ksig
            .params
            .iter()
            .filter(|p| !given.contains_key(&p.name) && !suggested.contains(&p.name))
            .map(|p| p.name.clone())
            .collect();
        if !missing.is_empty() && !c.is_cut_short(&run.span) {
            let d = layers::missing_kernel_args(
                c.loc(&run.kernel.span),
                &ksig.name,
                &missing,
                ksig.def.clone(),
            );
            c.report(d);
        }
    }
    let mut bound: BTreeMap<&str, Span> = BTreeMap::new();
    // A `bind` of something that is not a tensor of the layer (E0416) may be the output
    // misspelt: the output is then not reported unbound as well.
    let mut unknown_bind = false;
    let tensor_count = |name: &str| {
        sig.inputs
            .iter()
            .chain(sig.output.iter())
            .filter(|t| t.name == name)
            .count()
    };
    for bind in &imp.binds {
        check_bind(c, layer, sig, ksig.as_ref(), imp, bind);
        let known = tensor_count(&bind.tensor.name);
        unknown_bind |= known == 0;
        match bound.get(bind.tensor.name.as_str()) {
            // A name declared twice (E0106) is bound once per declaration.
            Some(_) if known > 1 => {}
            Some(first) => {
                let d =
                    layers::bound_twice(c.loc(&bind.tensor.span), &bind.tensor.name, c.loc(first));
                c.report(d);
            }
            None => {
                bound.insert(&bind.tensor.name, bind.tensor.span.clone());
            }
        }
    }
    // The result must leave the region. (An unnamed result is a syntax error already, and an
    // implementation cut short may have lost its `bind`. An implementation without any `bind`
    // is a stub that moves no data; it is not reported.)
    let output = &layer.output;
    if !output.name.is_empty()
        && !imp.binds.is_empty()
        && !unknown_bind
        && !bound.contains_key(output.name.as_str())
        && !c.is_cut_short(&imp.span)
    {
        let start = imp.span.start;
        let head = start..imp.modes.last().map(|(_, s)| s.end).unwrap_or(start);
        let d = layers::output_not_bound(c.loc(&head), &output.name, c.loc(&output.span));
        c.report(d);
    }
}

fn region_size(c: &mut Checker<'_>, size: &ast::Expr) {
    if let ast::Expr::Name(id) = size {
        // A module constant or a scalar input of the layer fixes the size.
        let is_const = match c.lookup(&id.name) {
            Some(b) => matches!(
                b.local,
                Local::Value {
                    kind: LocalKind::Param,
                    ..
                }
            ),
            None => c
                .module
                .get(&id.name)
                .is_some_and(|i| i.kind(c.db) == ItemKind::Const),
        };
        if !is_const {
            if let Some(b) = c.lookup(&id.name).cloned() {
                let d = layers::bad_region(
                    c.loc(&id.span),
                    format!(
                        "region size `{}` must be a new name, but it is already defined",
                        id.name
                    ),
                )
                .with_secondary(c.loc(&b.def), "defined here");
                c.report(d);
                return;
            }
            let local = Local::Value {
                kind: LocalKind::Region,
                ty: Ty::Scalar(ScalarType::U32),
                value: None,
            };
            c.define(id, local, 1);
            c.declared(&id.span, DeclaredKind::RegionSize);
            c.record_type(&id.span, &Ty::Scalar(ScalarType::U32));
            return;
        }
    }
    let typed = c.expect_const(size, ScalarType::U32, "a region size");
    if typed.value == Some(Value::Int(0)) {
        let d = layers::bad_region(
            c.loc(&size.span()),
            "a region needs at least one PE in each direction",
        );
        c.report(d);
    }
}

fn resolve_kernel<'db>(c: &mut Checker<'db>, name: &ast::Ident) -> Option<ItemId<'db>> {
    if let Some(b) = c.lookup(&name.name).cloned() {
        let found = crate::check::expr::describe_local(&b.local);
        let d = layers::run_not_kernel(c.loc(&name.span), &name.name, found, Some(c.loc(&b.def)));
        c.report(d);
        return None;
    }
    match c.module.get(&name.name) {
        Some(item) if item.kind(c.db) == ItemKind::Kernel => {
            if let Some(def) = item_location(c.db, item) {
                c.record_use(&name.span, def);
            }
            Some(item)
        }
        Some(item) => {
            let def = item_location(c.db, item);
            let d = layers::run_not_kernel(
                c.loc(&name.span),
                &name.name,
                item.kind(c.db).keyword(),
                def,
            );
            c.report(d);
            None
        }
        None if c.is_failed_import(&name.name) => None,
        None => {
            let kernels: Vec<&String> = c
                .module
                .names
                .iter()
                .filter(|(_, i)| i.kind(c.db) == ItemKind::Kernel)
                .map(|(n, _)| n)
                .collect();
            let suggestion = did_you_mean(&name.name, kernels.iter().map(|s| s.as_str()));
            let d = resolve::unresolved_name(c.loc(&name.span), &name.name, "kernel", suggestion);
            c.report(d);
            None
        }
    }
}

fn check_bind(
    c: &mut Checker<'_>,
    layer: &ast::Layer,
    sig: &LayerSig,
    ksig: Option<&crate::analysis::KernelSig>,
    imp: &ast::LayerImpl,
    bind: &ast::Bind,
) {
    let tensor = sig
        .inputs
        .iter()
        .chain(sig.output.iter())
        .find(|t| t.name == bind.tensor.name);
    let is_output = layer.output.name == bind.tensor.name;
    match tensor {
        Some(_) => {
            if let Some(b) = c.lookup(&bind.tensor.name).cloned() {
                let def = c.loc(&b.def);
                c.record_use(&bind.tensor.span, def);
            }
        }
        // The result has no name (a syntax error): a `bind` of it cannot be told apart.
        None if layer.output.name.is_empty() => {}
        None => {
            let names = sig
                .inputs
                .iter()
                .chain(sig.output.iter())
                .map(|t| t.name.as_str());
            let suggestion = did_you_mean(&bind.tensor.name, names);
            let d = layers::bind_unknown_tensor(
                c.loc(&bind.tensor.span),
                &bind.tensor.name,
                suggestion,
            );
            c.report(d);
        }
    }
    // An activation in an array is resident: every sample in SRAM, its split covering the
    // sample dimension too. Only weight streaming keeps activations resident.
    let resident = bind.kind == BindKind::Array && tensor.is_some_and(|t| !t.is_param);
    if resident && imp.modes.iter().any(|(m, _)| *m == ast::Mode::Pipelined) {
        let d = layers::resident_in_pipelined(c.loc(&bind.tensor.span), &bind.tensor.name);
        c.report(d);
    }
    // A `param` result (a loss, a gradient) has no sample dimension either.
    let whole =
        tensor.is_some_and(|t| t.is_param) || resident || (is_output && layer.output_is_param);
    let part_rank = tensor.and_then(|t| t.ty.as_ref()).map(|ty| {
        if whole {
            ty.dims.len()
        } else {
            ty.dims.len().saturating_sub(1)
        }
    });
    check_tiles(c, bind, part_rank);
    // Split axes.
    if let Some(axes) = &bind.split {
        for axis in axes {
            if let SplitAxis::Unknown(id) = axis {
                let d = layers::unknown_axis(c.loc(&id.span), &id.name);
                c.report(d);
            }
        }
        if let Some(t) = tensor
            && let Some(rank) = part_rank
            && axes.len() > rank
        {
            let span = match (axes.first(), axes.last()) {
                (Some(a), Some(b)) => axis_span(a).start..axis_span(b).end,
                _ => bind.span.clone(),
            };
            let mut d = layers::split_too_long(c.loc(&span), &t.name, axes.len(), rank);
            if !whole {
                d = d.with_note(
                    "the first (sample) dimension of an activation is never split: samples \
                     stream through the region one after another",
                );
            }
            c.report(d);
        }
    }
    let Some(ksig) = ksig else { return };
    let tensor_elem = tensor.and_then(|t| t.ty.as_ref()).map(|t| t.elem);
    match bind.kind {
        BindKind::Array => match ksig.arrays.iter().find(|a| a.name == bind.target.name) {
            Some(array) => {
                c.record_use(&bind.target.span, array.def.clone());
                if let Some(e) = tensor_elem
                    && e != array.elem
                {
                    let d = layers::bind_elem_mismatch(
                        c.loc(&bind.target.span),
                        &bind.tensor.name,
                        scalar_name(e),
                        &array.name,
                        scalar_name(array.elem),
                    )
                    .with_secondary(
                        array.def.clone(),
                        format!("`{}` holds `{}`", array.name, scalar_name(array.elem)),
                    );
                    let d = with_tensor_def(d, tensor);
                    c.report(d);
                }
            }
            None => {
                let help = if ksig.ports.iter().any(|p| p.name == bind.target.name) {
                    Some(format!(
                        "`{}` is a port: write `to port {}`",
                        bind.target.name, bind.target.name
                    ))
                } else {
                    did_you_mean(
                        &bind.target.name,
                        ksig.arrays.iter().map(|a| a.name.as_str()),
                    )
                    .map(|s| format!("did you mean `{s}`?"))
                };
                let d = layers::bind_unknown_target(
                    c.loc(&bind.target.span),
                    "array",
                    &bind.target.name,
                    &ksig.name,
                    help,
                );
                c.report(d);
            }
        },
        BindKind::Port => match ksig.ports.iter().find(|p| p.name == bind.target.name) {
            Some(port) if port.switch.is_some() => {
                c.record_use(&bind.target.span, port.def.clone());
                let d = crate::diagnostics::switches::bind_to_switched(
                    c.loc(&bind.target.span),
                    &port.name,
                    port.def.clone(),
                );
                c.report(d);
            }
            Some(port) if BUS_SIDES.contains(&port.side.as_str()) => {
                c.record_use(&bind.target.span, port.def.clone());
                let d = layers::bind_to_bus(
                    c.loc(&bind.target.span),
                    &port.name,
                    &format!("{} {}", direction_word(port.direction), port.side),
                    port.def.clone(),
                );
                c.report(d);
            }
            Some(port) => {
                c.record_use(&bind.target.span, port.def.clone());
                let need = if is_output {
                    PortDirection::Out
                } else {
                    PortDirection::In
                };
                if tensor.is_some() && port.direction != need {
                    let need_name = if need == PortDirection::In {
                        "in"
                    } else {
                        "out"
                    };
                    let d = layers::bind_direction(
                        c.loc(&bind.target.span),
                        &bind.tensor.name,
                        &port.name,
                        need_name,
                        port.def.clone(),
                    );
                    c.report(d);
                }
                if let (Some(e), Some(pe)) = (tensor_elem, port.elem)
                    && e != pe
                {
                    let d = layers::bind_elem_mismatch(
                        c.loc(&bind.target.span),
                        &bind.tensor.name,
                        scalar_name(e),
                        &port.name,
                        scalar_name(pe),
                    )
                    .with_secondary(
                        port.def.clone(),
                        format!("`{}` carries `{}`", port.name, scalar_name(pe)),
                    );
                    let d = with_tensor_def(d, tensor);
                    c.report(d);
                }
            }
            None => {
                let help = if ksig.arrays.iter().any(|a| a.name == bind.target.name) {
                    Some(format!(
                        "`{}` is an array: write `to array {}`",
                        bind.target.name, bind.target.name
                    ))
                } else {
                    did_you_mean(
                        &bind.target.name,
                        ksig.ports.iter().map(|p| p.name.as_str()),
                    )
                    .map(|s| format!("did you mean `{s}`?"))
                };
                let d = layers::bind_unknown_target(
                    c.loc(&bind.target.span),
                    "port",
                    &bind.target.name,
                    &ksig.name,
                    help,
                );
                c.report(d);
            }
        },
    }
}

/// The counts of a `tiles [...]` clause: compile-time `u32`s (they may use the region's
/// size names), one per dimension of the bound parts (`rank`, when the tensor's type is
/// known).
fn check_tiles(c: &mut Checker<'_>, bind: &ast::Bind, rank: Option<usize>) {
    let Some(counts) = &bind.tiles else { return };
    for count in counts {
        c.expect_const(count, ScalarType::U32, "a tile count");
    }
    if let Some(rank) = rank
        && counts.len() != rank
    {
        let span = match (counts.first(), counts.last()) {
            (Some(a), Some(b)) => a.span().start..b.span().end,
            _ => bind.span.clone(),
        };
        let d = layers::tiles_rank(c.loc(&span), &bind.tensor.name, counts.len(), rank);
        c.report(d);
    }
}

/// `from` for an `in` port, `to` for an `out` port.
fn direction_word(direction: PortDirection) -> &'static str {
    match direction {
        PortDirection::In => "from",
        PortDirection::Out => "to",
    }
}

/// `d` with a secondary label at the written type of the bound tensor.
fn with_tensor_def(
    d: wsel_diagnostic::Diagnostic,
    tensor: Option<&LayerTensor>,
) -> wsel_diagnostic::Diagnostic {
    match tensor {
        Some(t) => {
            let ty = t.ty.as_ref().map(|t| t.to_string()).unwrap_or_default();
            d.with_secondary(t.def.clone(), format!("`{}` is `{ty}`", t.name))
        }
        None => d,
    }
}

fn axis_span(axis: &SplitAxis) -> Span {
    match axis {
        SplitAxis::Rows(s) | SplitAxis::Cols(s) | SplitAxis::Whole(s) => s.clone(),
        SplitAxis::Unknown(id) => id.span.clone(),
    }
}
