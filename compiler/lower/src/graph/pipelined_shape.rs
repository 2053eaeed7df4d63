//! The graphs pipelined training takes (`docs/language.md` §11.2): one model input, read by the
//! first layer alone; the model's result its last layer's; every other layer's result read by
//! one layer or more (branches), and the branches joined by layers of several activation
//! inputs:
//! - a layer with a backward layer per input (`L_train_back_<input>`, [`Role::Pair`]:
//!   `matmul_qk(q, k)`, the fused attention's `pack_qkv(q, k, v)`), its inputs any earlier
//!   layers' results;
//! - any other layer of two inputs (`add`, [`Role::BlockEnd`]) closes a residual block
//!   `add(h, f(h))`: one input is the layer before it, the other the result `h` of an earlier
//!   layer `p` or the model's input (whose first reader, the first layer, then opens the
//!   branch; the model's input needs no gradient, so the skip's is dropped). Blocks nest: a
//!   block that closes between `h` and it starts there too, at `h` or a later layer's result.
//!
//! E1115 otherwise, at the first call that breaks it, saying how: a layer of three or more
//! activation inputs without a gradient layer per input, blocks that cross, the model's input
//! read by a layer that is neither the first nor a block's end.

use wsel_ir::graph::{LayerGraph, SourceSpan, TensorRef};
use wsel_sema::{Diagnostic, Location};

use crate::diagnostics;

/// How a model layer enters pipelined training's backward graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Role {
    /// One activation input: `L_train_back` gives its gradient.
    Single,
    /// Two activation inputs or more, each with its own gradient layer `L_train_back_<input>`.
    Pair,
    /// Closes the residual block opened by `start` (a layer's result, or the model's input):
    /// `L_train_back(dy, dr)` is the sum of a layer's gradients through the skip and through
    /// the branch; the model's input gets none.
    BlockEnd { start: TensorRef },
}

/// The role of every layer of `graph`, `paired(l)` when layer `l` has a gradient layer per
/// input; E1115 when `graph` is none of the graphs pipelined training takes.
pub(super) fn roles(
    graph: &LayerGraph,
    paired: &dyn Fn(usize) -> bool,
    located: &dyn Fn(&SourceSpan) -> Location,
) -> Result<Vec<Role>, Vec<Diagnostic>> {
    let mut roles: Vec<Role> = Vec::with_capacity(graph.layers.len());
    for (l, layer) in graph.layers.iter().enumerate() {
        let broken = |why: &str| {
            vec![diagnostics::not_a_chain(
                located(&layer.call),
                &layer.layer,
                why,
            )]
        };
        let feeds: Vec<TensorRef> = layer.activations().collect();
        if graph.inputs.len() != 1 {
            return Err(broken("the model has more than one input"));
        }
        if l + 1 == graph.layers.len() && graph.output != TensorRef::Layer(l) {
            return Err(broken("the model's result is not its last layer's"));
        }
        let role = match feeds.as_slice() {
            [only] if l == 0 || *only != TensorRef::Input(0) => Role::Single,
            [_] => {
                return Err(broken(
                    "it reads the model's input, which only the first layer and a residual block's end may",
                ));
            }
            [_, _, ..] if paired(l) => {
                if feeds.iter().any(|t| matches!(t, TensorRef::Input(_))) {
                    return Err(broken(
                        "a layer of several inputs must read layers' results",
                    ));
                }
                Role::Pair
            }
            [a, b] if l > 0 && (*a == TensorRef::Layer(l - 1) || *b == TensorRef::Layer(l - 1)) => {
                let other = if *a == TensorRef::Layer(l - 1) {
                    *b
                } else {
                    *a
                };
                let start = block_start(&roles, other, l).map_err(broken)?;
                Role::BlockEnd { start }
            }
            [_, _] if l == 0 => {
                return Err(broken(
                    "it joins the model's input to itself: a residual block from the model's input needs a layer in its branch",
                ));
            }
            [_, _] => {
                return Err(broken(
                    "a layer of two inputs without a gradient layer per input closes a residual block, and neither input is the layer before it",
                ));
            }
            _ => {
                return Err(broken(
                    "a layer of more than two activation inputs needs a gradient layer per input",
                ));
            }
        };
        roles.push(role);
    }
    check_read(graph, &located)?;
    Ok(roles)
}

/// The start of the block that layer `end` closes, `skip` (a layer's result, or the model's
/// input, which the first layer reads too); why not, when it cannot. Blocks nest: a block that
/// closes inside this one starts inside it too, at `skip` or at a later layer's result (a
/// block that starts before `skip` would cross this one).
fn block_start(roles: &[Role], skip: TensorRef, end: usize) -> Result<TensorRef, &str> {
    // The block's layers: after `skip`'s producer, or from the first (the model's input).
    let first = match skip {
        TensorRef::Layer(p) => p + 1,
        _ => 0,
    };
    let inside =
        |start: TensorRef| start == skip || matches!(start, TensorRef::Layer(q) if q >= first);
    let crosses = roles[first..end]
        .iter()
        .any(|r| matches!(*r, Role::BlockEnd { start } if !inside(start)));
    if crosses {
        return Err(
            "a residual block that closes inside it starts before it: blocks may nest, not cross",
        );
    }
    Ok(skip)
}

/// E1115 at a layer (but the last) whose result no layer reads: its backward would get no
/// gradient.
fn check_read(
    graph: &LayerGraph,
    located: &dyn Fn(&SourceSpan) -> Location,
) -> Result<(), Vec<Diagnostic>> {
    let last = graph.layers.len().saturating_sub(1);
    for (l, layer) in graph.layers.iter().enumerate().take(last) {
        let read = graph.layers[l + 1..]
            .iter()
            .any(|r| r.args.contains(&TensorRef::Layer(l)));
        if !read {
            return Err(vec![diagnostics::not_a_chain(
                located(&layer.call),
                &layer.layer,
                "no layer reads its result",
            )]);
        }
    }
    Ok(())
}

/// The readings of every layer's result in `graph`, as (reader, argument position), in the
/// readers' order.
pub(super) fn readings(graph: &LayerGraph) -> Vec<Vec<(usize, usize)>> {
    let mut out = vec![Vec::new(); graph.layers.len()];
    for (r, layer) in graph.layers.iter().enumerate() {
        for (i, arg) in layer.args.iter().enumerate() {
            if let TensorRef::Layer(p) = *arg {
                out[p].push((r, i));
            }
        }
    }
    out
}
