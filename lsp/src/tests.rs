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
    let mut db = wsel_sema::Database::default();
    let path = Path::new("/project/m.wse");
    let file = wsel_sema::load_program(&mut db, path, &mut |_| Ok(SRC.to_string()));
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
