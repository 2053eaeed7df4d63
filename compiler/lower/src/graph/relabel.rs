//! Relabelled edges: a layer that reads another layer's result through `reshape`
//! (docs/language.md §7.1). The words of a sample are the same on both sides, in row-major
//! order, so nothing moves; what must agree is where the edge's parts begin. Both layers cut
//! the tensor into contiguous parts along its first feature dimension (the only split this
//! allows), the producer's `T` rows of `f32[B, T, D]` and the consumer's `T·D` features of
//! `f32[B, T·D]`, in the same number of parts (the mapper makes the counts agree). Their
//! boundaries coincide when the part count divides both first dimensions: every part is then
//! `T / P` whole rows on one side and `T·D / P` features on the other. That is added to the
//! `where` conditions of both layers' implementations, so the mapper only picks such sizes.
//!
//! A resident activation (weight streaming, bound to an array `split [cols, rows, _, ...]`:
//! samples over the columns, the first feature dimension over the rows) lines up the same
//! way, its parts being the region's rows: the row count must divide both first dimensions.
//! Weight streaming's staged graph relabels a model input or result of rank 3 or 4 too, since
//! std.resident's stage layers take `f32[B, N]` ([`line_up_staged`]).

use wsel_ir::graph::{
    BindTarget, CBinOp, CExpr, LayerImpl, LayerInstance, RegionSide, SourceSpan, SplitAxis,
};
use wsel_sema::{Diagnostic, Location};

use crate::diagnostics;

/// Restricts `producer`'s and `consumer`'s implementations to region sizes whose parts line up
/// for the relabelled edge: the producer's result of per-sample shape `from` read as `to` by
/// the consumer's input `arg`. An implementation that splits the tensor other than along its
/// first feature dimension is dropped; a layer left with none is E0457.
pub(super) fn line_up(
    producer: &mut LayerInstance,
    consumer: &mut LayerInstance,
    arg: usize,
    (from, to): (&[u64], &[u64]),
    diags: &mut Vec<Diagnostic>,
) {
    let firsts = (
        from.get(1).copied().unwrap_or(1),
        to.get(1).copied().unwrap_or(1),
    );
    let output = producer.output_name.clone();
    constrain(producer, &output, firsts, Some(&mut *diags));
    if let Some(name) = consumer.arg_names.get(arg).cloned() {
        constrain(consumer, &name, firsts, Some(diags));
    }
}

/// Restricts `layer`'s implementations as [`line_up`] does for its tensor `tensor`, of
/// per-sample shape `shape`, which weight streaming stages as `f32[B, N]` (a model input read
/// by `layer`, or the model's result made by it). No diagnostic: a layer left without a
/// streaming implementation is E0606 when the model is mapped.
pub(super) fn line_up_staged(layer: &mut LayerInstance, tensor: &str, shape: &[u64]) {
    let first = shape.get(1).copied().unwrap_or(1);
    let all = shape.iter().skip(1).product();
    constrain(layer, tensor, (first, all), None);
}

/// Keeps the implementations of `layer` that stream `tensor` through ports split along its
/// first feature dimension at most, each with the condition that its part count divides both `firsts`.
fn constrain(
    layer: &mut LayerInstance,
    tensor: &str,
    firsts: (u64, u64),
    diags: Option<&mut Vec<Diagnostic>>,
) {
    let before = layer.impls.len();
    layer.impls.retain_mut(|imp| match part_side(imp, tensor) {
        Some(Some(side)) => {
            for n in [firsts.0, firsts.1] {
                let cond = divides(&side, n);
                // A layer between two reshapes is constrained twice: once is enough.
                if !imp.conditions.contains(&cond) {
                    imp.conditions.push(cond);
                }
            }
            true
        }
        Some(None) => true,
        None => false,
    });
    if let (true, Some(diags)) = (before > 0 && layer.impls.is_empty(), diags) {
        diags.push(diagnostics::relabel_split(
            location(&layer.call),
            &layer.layer,
            tensor,
        ));
    }
}

/// The region side that cuts `tensor` into parts in `imp`: `Some(None)` when nothing does
/// (one part), `None` when a bind splits it other than along its first feature dimension.
/// A port's split names the feature dimensions only; an array's (a resident activation)
/// starts with the sample dimension, which must go over the columns.
fn part_side(imp: &LayerImpl, tensor: &str) -> Option<Option<CExpr>> {
    let mut side = None;
    for bind in imp.binds.iter().filter(|b| b.tensor == tensor) {
        let features = match bind.target {
            BindTarget::Array if bind.split.first() == Some(&SplitAxis::Cols) => &bind.split[1..],
            BindTarget::Array => return None,
            _ => &bind.split[..],
        };
        let rest_whole = features.iter().skip(1).all(|a| *a == SplitAxis::Whole);
        if !rest_whole || !bind.tiles.is_empty() {
            return None;
        }
        side = match features.first() {
            Some(SplitAxis::Rows) => Some(size(&imp.rows)),
            Some(SplitAxis::Cols) => Some(size(&imp.cols)),
            Some(SplitAxis::Whole) | None => side,
        };
    }
    Some(side)
}

fn size(side: &RegionSide) -> CExpr {
    match side {
        RegionSide::Free(name) => CExpr::Var(name.clone()),
        RegionSide::Fixed(e) => e.clone(),
    }
}

/// `n % side == 0`.
fn divides(side: &CExpr, n: u64) -> CExpr {
    let rem = CExpr::Binary(
        CBinOp::Rem,
        Box::new(CExpr::Int(i64::try_from(n).unwrap_or(i64::MAX))),
        Box::new(side.clone()),
    );
    CExpr::Binary(CBinOp::Eq, Box::new(rem), Box::new(CExpr::Int(0)))
}

fn location(span: &SourceSpan) -> Location {
    Location {
        file: span.file.clone(),
        span: span.span.clone(),
    }
}
