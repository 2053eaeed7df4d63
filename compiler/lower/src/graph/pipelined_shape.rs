//! The graphs pipelined training takes (`docs/language.md` §11.2): a chain of layers with
//! residual blocks. One model input; every layer fed by the one before (the first by the
//! input), the last giving the result; except that a layer of two activation inputs may take,
//! beside the one before it, the result of an earlier layer `p` whose chain it closes — the
//! residual `add(h, f(h))`, with `f` a chain of layers after `p` (or none: `add(h, h)`).
//! Blocks do not nest, and no result feeds more than its next layer and one such block's end.
//! E1115 otherwise, at the first call that breaks it, saying how.

use wsel_ir::graph::{LayerGraph, SourceSpan, TensorRef};
use wsel_sema::{Diagnostic, Location};

use crate::diagnostics;

/// For every layer of `graph`, `Some(p)` when it closes a residual block opened by layer `p`'s
/// result, else `None`; E1115 when `graph` is not a chain with residual blocks.
pub(super) fn residual_blocks(
    graph: &LayerGraph,
    located: &dyn Fn(&SourceSpan) -> Location,
) -> Result<Vec<Option<usize>>, Vec<Diagnostic>> {
    let mut blocks: Vec<Option<usize>> = Vec::with_capacity(graph.layers.len());
    for (l, layer) in graph.layers.iter().enumerate() {
        let broken = |why: &str| {
            vec![diagnostics::not_a_chain(
                located(&layer.call),
                &layer.layer,
                why,
            )]
        };
        let feeds: Vec<TensorRef> = layer.activations().collect();
        let before = if l == 0 {
            TensorRef::Input(0)
        } else {
            TensorRef::Layer(l - 1)
        };
        if graph.inputs.len() != 1 {
            return Err(broken("the model has more than one input"));
        }
        if l + 1 == graph.layers.len() && graph.output != TensorRef::Layer(l) {
            return Err(broken("the model's result is not its last layer's"));
        }
        let block = match feeds.as_slice() {
            [only] if *only == before => None,
            [a, b] if *a == before || *b == before => {
                let other = if *a == before { *b } else { *a };
                Some(block_start(&blocks, other, l).map_err(broken)?)
            }
            _ => return Err(broken("it is not fed by the layer before it")),
        };
        blocks.push(block);
    }
    check_uses(graph, &blocks, located)?;
    Ok(blocks)
}

/// The layer whose result `skip` is, opening a block that layer `end` closes; why not, when
/// it cannot (the model's input, or a block inside another).
fn block_start(blocks: &[Option<usize>], skip: TensorRef, end: usize) -> Result<usize, &str> {
    let TensorRef::Layer(p) = skip else {
        return Err("a residual block must start at a layer's result, not at the model's input");
    };
    if blocks[p + 1..end].iter().any(Option::is_some) {
        return Err("residual blocks inside residual blocks are not supported yet");
    }
    Ok(p)
}

/// E1115 when a layer's result feeds more layers than the next one and the end of the block
/// it opens, at the first extra consumer.
fn check_uses(
    graph: &LayerGraph,
    blocks: &[Option<usize>],
    located: &dyn Fn(&SourceSpan) -> Location,
) -> Result<(), Vec<Diagnostic>> {
    let mut uses = vec![0usize; graph.layers.len()];
    for layer in &graph.layers {
        for feed in layer.activations() {
            let TensorRef::Layer(k) = feed else { continue };
            uses[k] += 1;
            let allowed = 1 + blocks.iter().filter(|b| **b == Some(k)).count();
            if uses[k] > allowed.min(2) {
                return Err(vec![diagnostics::not_a_chain(
                    located(&layer.call),
                    &layer.layer,
                    "the result it takes already feeds two layers (a residual block's two paths)",
                )]);
            }
        }
    }
    Ok(())
}
