//! Unit tests of the plain-data analyses on an in-memory program (offsets in, spans and
//! strings out), without the protocol.

use std::path::Path;

use crate::completion::completions;
use crate::context::FileCtx;
use crate::definition::{definition, references};
use crate::hover::hover;
use crate::inlay_hints::inlay_hints;
use crate::semantic_tokens::{Class, DECLARATION, DEFAULT_LIBRARY, classify};

const SRC: &str = "import std.nn.{dense, relu as r};

const WIDTH: u32 = 2 * 4;

model m(x: f32[B, 16]) -> f32[B, 8] {
    param w: f32[16, WIDTH];
    param b: f32[8];
    let h = r(dense(x, w, b));
    return h;
}
";

fn with_ctx(check: impl FnOnce(&FileCtx<'_>)) {
    with_src(SRC, check);
}

/// Runs `check` on `src` (file `/project/m.wse`), which must check cleanly.
fn with_src(src: &str, check: impl FnOnce(&FileCtx<'_>)) {
    let mut db = wsel_sema::Database::default();
    let path = Path::new("/project/m.wse");
    let file = wsel_sema::load_program(&mut db, path, &mut |_| Ok(src.to_string()));
    let file = file.unwrap_or_else(|e| panic!("{e}"));
    assert!(wsel_sema::diagnostics(&db, file).is_empty());
    check(&FileCtx::new(&db, file));
}

fn at(needle: &str) -> usize {
    SRC.find(needle).unwrap_or_else(|| panic!("{needle}"))
}

#[test]
fn hover_on_an_aliased_layer_call_and_a_constant() {
    with_ctx(|ctx| {
        let h = hover(ctx, at("r(dense"))
            .map(|h| h.markdown)
            .unwrap_or_default();
        assert!(
            h.contains("layer relu(x: f32[B, N]) -> y: f32[B, N]"),
            "{h}"
        );
        assert!(h.contains("`N = 8`") && h.contains("`f32[B, 8]`"), "{h}");
        let h = hover(ctx, at("dense(x") + 1)
            .map(|h| h.markdown)
            .unwrap_or_default();
        assert!(h.contains("flops: 264 per sample"), "{h}");
        let h = hover(ctx, at("WIDTH]"))
            .map(|h| h.markdown)
            .unwrap_or_default();
        assert!(h.contains("const WIDTH: u32 = 2 * 4  // = 8"), "{h}");
    });
}

#[test]
fn definitions_and_references_span_files() {
    with_ctx(|ctx| {
        let def = definition(ctx, at("dense(x")).unwrap_or_else(|| panic!("no definition"));
        assert_eq!(def.file, Path::new("<std>/nn.wse"));
        let alias = definition(ctx, at("relu as")).map(|l| l.file);
        assert_eq!(alias.as_deref(), Some(Path::new("<std>/nn.wse")));
        let refs = references(ctx, at("h;"), true);
        let spans: Vec<_> = refs.iter().map(|l| l.span.clone()).collect();
        assert_eq!(
            spans,
            vec![at("h =")..at("h =") + 1, at("h;")..at("h;") + 1]
        );
    });
}

/// A layer's `train as` clause: its callees and the inputs it names go to their
/// definitions, as in a model's body.
#[test]
fn definitions_in_a_train_as_clause() {
    let src = "import std.nn.{dense};

layer twice(x: f32[B, N], param w1: f32[N, N], param b1: f32[N], param w2: f32[N, N],
        param b2: f32[N]) -> y: f32[B, N]
    train as dense(dense(x, w1, b1), w2, b2) {
    cost { flops = 4 * N * N; weights = 2 * N * N + 2 * N; activations = 2 * N; }
}
";
    let at = |needle: &str| src.find(needle).unwrap_or_else(|| panic!("{needle}"));
    with_src(src, |ctx| {
        let callee = definition(ctx, at("dense(dense") + 1).map(|l| l.file);
        assert_eq!(callee.as_deref(), Some(Path::new("<std>/nn.wse")));
        let input = definition(ctx, at("w2, b2)") + 1).unwrap_or_else(|| panic!("no w2"));
        assert_eq!(input.file, Path::new("/project/m.wse"));
        assert_eq!(input.span.start, at("w2:"));
    });
}

#[test]
fn completion_in_a_model_and_in_an_import() {
    with_ctx(|ctx| {
        let labels: Vec<String> = completions(ctx, at("return"))
            .into_iter()
            .map(|c| c.label)
            .collect();
        for wanted in ["x", "w", "h", "dense", "r", "WIDTH", "softmax", "return"] {
            assert!(labels.contains(&wanted.to_string()), "{wanted}: {labels:?}");
        }
        let labels: Vec<String> = completions(ctx, at("dense,"))
            .into_iter()
            .map(|c| c.label)
            .collect();
        assert!(labels.contains(&"softmax".to_string()), "{labels:?}");
        assert!(!labels.contains(&"return".to_string()), "{labels:?}");
    });
}

#[test]
fn inlay_hints_and_semantic_classes() {
    with_ctx(|ctx| {
        let hints = inlay_hints(ctx, 0..SRC.len());
        let shown: Vec<(usize, &str)> =
            hints.iter().map(|h| (h.offset, h.label.as_str())).collect();
        assert_eq!(
            shown,
            vec![
                (at("h =") + 1, ": f32[B, 8]"),
                (at("b));") + 2, ": f32[B, 8]")
            ]
        );
        let classes = classify(ctx);
        let class_at = |offset: usize| {
            classes
                .iter()
                .find(|c| c.span.start == offset)
                .map(|c| (c.class, c.modifiers))
        };
        assert_eq!(
            class_at(at("dense(x")),
            Some((Class::Function, DEFAULT_LIBRARY))
        );
        assert_eq!(class_at(at("m(x")), Some((Class::Function, DECLARATION)));
        // A name in an import list is a use of the item (sema records it), a module path is
        // not classified by what it names.
        assert_eq!(
            class_at(at("dense,")),
            Some((Class::Function, DEFAULT_LIBRARY))
        );
        assert_eq!(class_at(at("r(dense")), class_at(at("relu as")));
        assert_eq!(class_at(at("std.nn")), Some((Class::Variable, 0)));
        assert_eq!(
            class_at(at("B, 16")),
            Some((Class::TypeParameter, DECLARATION))
        );
        assert_eq!(
            class_at(at("WIDTH]")),
            Some((Class::Variable, crate::semantic_tokens::READONLY))
        );
    });
}

const MASKS: &str = "kernel clip(n: u32) {
    var x: [f32; n];
    var keep: [bool; n];
    task main() {
        keep[0..n] = x[0..n] > 0.0;
        x[0..n] = select(keep[0..n], x[0..n], 0.0);
    }
}
";

#[test]
fn builtin_functions_have_hover_completion_and_a_class() {
    with_src(MASKS, |ctx| {
        let at = |needle: &str| MASKS.find(needle).unwrap_or_else(|| panic!("{needle}"));
        let h = hover(ctx, at("select(") + 2)
            .map(|h| h.markdown)
            .unwrap_or_default();
        assert!(
            h.contains("select(mask, a, b)") && h.contains("element-wise"),
            "{h}"
        );
        let h = hover(ctx, at("> 0.0"))
            .map(|h| h.markdown)
            .unwrap_or_default();
        assert!(h.contains("bool"), "{h}");
        let items = completions(ctx, at("x[0..n] = select"));
        let select = items.iter().find(|c| c.label == "select");
        assert_eq!(
            select.and_then(|c| c.detail.as_deref()),
            Some("select(mask, a, b)")
        );
        let classes = classify(ctx);
        let class = classes.iter().find(|c| c.span.start == at("select("));
        assert_eq!(
            class.map(|c| (c.class, c.modifiers)),
            Some((Class::Function, DEFAULT_LIBRARY))
        );
    });
}

const BUS: &str = "kernel k(n: u32) {
    var v: [f32; n];
    out bx: stream<f32> to row;
    in  rx: stream<f32> from row;
    task main() {
        if pe.col == 0 { send(bx, v[0..n]); } else { recv(rx, v[0..n]) then main; }
    }
}
";

#[test]
fn bus_sides_complete_and_classify() {
    with_src(BUS, |ctx| {
        let at = |needle: &str| BUS.find(needle).unwrap_or_else(|| panic!("{needle}"));
        let labels: Vec<String> = completions(ctx, at("row;"))
            .into_iter()
            .map(|c| c.label)
            .collect();
        for side in ["north", "west", "row", "col", "region"] {
            assert!(labels.contains(&side.to_string()), "{labels:?}");
        }
        let classes = classify(ctx);
        let class = classes.iter().find(|c| c.span.start == at("row;"));
        assert_eq!(class.map(|c| c.class), Some(Class::EnumMember));
        let h = hover(ctx, at("rx, v"))
            .map(|h| h.markdown)
            .unwrap_or_default();
        assert!(h.contains("in rx: stream<f32> from row"), "{h}");
    });
}

const HEAT: &str = "import std.stencil.{jacobi};

model heat(plate: f32[B, 8, 8]) -> f32[B, 8, 8] {
    return jacobi(plate, steps = 3);
}
";

#[test]
fn layer_scalar_inputs_on_hover_completion_and_tokens() {
    with_src(HEAT, |ctx| {
        let at = |needle: &str| HEAT.find(needle).unwrap_or_else(|| panic!("{needle}"));
        let h = hover(ctx, at("jacobi(plate") + 1)
            .map(|h| h.markdown)
            .unwrap_or_default();
        assert!(h.contains("steps: u32 = 16"), "{h}");
        assert!(h.contains("`steps = 3`"), "{h}");
        // 4 flops per interior cell and step: 4 * 6 * 6 * 3.
        assert!(h.contains("flops: 432 per sample"), "{h}");
        let h = hover(ctx, at("steps ="))
            .map(|h| h.markdown)
            .unwrap_or_default();
        assert!(
            h.contains("steps: u32 = 16") && h.contains("layer scalar input"),
            "{h}"
        );
        let items = completions(ctx, at("steps ="));
        let steps = items.iter().find(|c| c.label == "steps");
        assert_eq!(
            steps.and_then(|c| c.detail.as_deref()),
            Some("scalar input of `jacobi`: u32 = 16")
        );
        let classes = classify(ctx);
        let class = classes.iter().find(|c| c.span.start == at("steps ="));
        assert_eq!(
            class.map(|c| (c.class, c.modifiers)),
            Some((
                Class::Parameter,
                crate::semantic_tokens::READONLY | DEFAULT_LIBRARY
            ))
        );
    });
}

/// The hover of the `dense` call in `src` (file `/project/m.wse`).
fn dense_call_hover(src: &str) -> String {
    let mut db = wsel_sema::Database::default();
    let path = Path::new("/project/m.wse");
    let file = wsel_sema::load_program(&mut db, path, &mut |_| Ok(src.to_string()));
    let file = file.unwrap_or_else(|e| panic!("{e}"));
    let ctx = FileCtx::new(&db, file);
    let offset = src
        .find("dense(x")
        .unwrap_or_else(|| panic!("no dense call"))
        + 1;
    hover(&ctx, offset).map(|h| h.markdown).unwrap_or_default()
}

fn one_dense(n: u32, run: &str) -> String {
    format!(
        "import std.nn.{{dense}};
model big(x: f32[B, {n}]) -> f32[B, {n}] {{
    param w: f32[{n}, {n}];
    param b: f32[{n}];
    return dense(x, w, b);
}}
{run}"
    )
}

#[test]
fn mapping_hover_falls_back_to_streaming_and_says_why() {
    // 4 MiB of weights cannot stay in the 1 MiB of SRAM `dev` has; streamed, they fit.
    let src = one_dense(1024, "run big { input x = \"x.npy\"; batch = 4; }\n");
    let h = dense_call_hover(&src);
    assert!(
        h.contains("**Mapping on `dev`** (`dense#1`, batch 4)"),
        "{h}"
    );
    assert!(
        h.contains(
            "- mode: streaming (auto; pipelined does not map: layer `dense#1` fits no region"
        ),
        "{h}"
    );
    assert!(
        h.contains("- SRAM per PE: ") && h.contains(" / 4,096 bytes"),
        "{h}"
    );
}

#[test]
fn mapping_hover_reports_a_model_that_does_not_map_or_has_errors() {
    let h = dense_call_hover(&one_dense(8192, ""));
    assert!(
        h.contains(
            "**Mapping on `dev`**: the model does not map on `dev` (neither pipelined nor \
             streaming): layer `dense#1` fits no region"
        ),
        "{h}"
    );
    assert!(!h.contains("- region:"), "{h}");
    // A `run` item without the model's input: an error, so nothing is mapped.
    let h = dense_call_hover(&one_dense(64, "run big { batch = 4; }\n"));
    assert!(
        h.contains("**Mapping on `dev`**: not computed while the program has errors"),
        "{h}"
    );
}

#[test]
fn cost_hover_is_the_lowered_cost_in_64_bits() {
    // `weights = 4 * (N * M + M)` is 6,400,160,000 bytes here: more than `u32` holds, which
    // is no limit for a cost (lowering evaluates costs in 64 bits; E0501 is for those that
    // overflow 64 bits), so the hover shows the value the layer graph and the mapper use.
    let h = dense_call_hover(&one_dense(40_000, ""));
    assert!(
        h.contains("- weights: 6,400,160,000 bytes (`4 * (N * M + M)`)"),
        "{h}"
    );
    assert!(
        h.contains("- flops: 3,200,040,000 per sample (`2 * N * M + M`)"),
        "{h}"
    );
}
