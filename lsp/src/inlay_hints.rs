//! Inlay hints for inferred shapes: the type of a `let` without a written type (model
//! tensors such as `let h1: f32[B, 32]`, task locals), and the result shape of a layer call
//! nested inside another call.

use crate::context::FileCtx;
use crate::defs::DefKind;

/// A hint: text shown at a byte offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InlayHint {
    pub offset: usize,
    pub label: String,
}

/// The hints whose offset lies in `range`, in source order.
pub fn inlay_hints(ctx: &FileCtx<'_>, range: std::ops::Range<usize>) -> Vec<InlayHint> {
    let mut out = Vec::new();
    for def in &ctx.defs {
        if !matches!(def.kind, DefKind::Let | DefKind::ModelLet) {
            continue;
        }
        let written = ctx
            .text
            .get(def.name_span.end..)
            .map(|rest| rest.trim_start().starts_with(':'))
            .unwrap_or(true);
        if written {
            continue;
        }
        if let Some(ty) = ctx.analysis.type_at(def.name_span.start) {
            out.push(InlayHint {
                offset: def.name_span.end,
                label: format!(": {ty}"),
            });
        }
    }
    for call in &ctx.analysis.calls {
        let nested = ctx
            .analysis
            .calls
            .iter()
            .any(|outer| outer.span.start < call.span.start && call.span.end <= outer.span.end);
        if nested {
            out.push(InlayHint {
                offset: call.span.end,
                label: format!(": {}", call.result),
            });
        }
    }
    out.retain(|h| range.start <= h.offset && h.offset <= range.end);
    out.sort_by_key(|h| h.offset);
    out
}
