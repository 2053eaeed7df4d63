//! The hover of a layer call that pipelined inference fuses (`docs/mapping.md` §4, "Fusion"):
//! examples/digits' first `dense` and the `relu` that alone reads it run as one stage,
//! `dense#1+relu#1`, so both calls' hovers show that stage's figures under its name and say
//! it is fused (`protocol.rs` checks those figures against `wsel map`'s); the last `dense`,
//! which softmax reads, stays a stage of its own.

use std::path::Path;

use wsel_lsp::context::FileCtx;
use wsel_lsp::hover::hover;
use wsel_sema::{Database, SourceFile};

/// The mapping part of the hover at the first occurrence of `at` in the file's text.
fn mapping_at(db: &Database, file: SourceFile, at: &str) -> String {
    let ctx = FileCtx::new(db, file);
    let offset = ctx.text.find(at).expect("the call") + 1;
    let shown = hover(&ctx, offset).map(|h| h.markdown).expect("a hover");
    let mapping = shown.split("**Mapping on `dev`**").nth(1);
    mapping
        .unwrap_or_else(|| panic!("no mapping in:\n{shown}"))
        .to_string()
}

#[test]
fn both_calls_of_a_fused_pair_show_their_stage() {
    let digits = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/digits/main.wse");
    let mut db = Database::default();
    let read = &mut |p: &Path| std::fs::read_to_string(p);
    let file = wsel_sema::load_program(&mut db, &digits, read).expect("examples/digits");
    let dense = mapping_at(&db, file, "dense(x");
    assert!(dense.starts_with(" (`dense#1+relu#1`, batch 1)"), "{dense}");
    assert!(
        dense.contains("- fused into the stage `dense#1+relu#1`"),
        "{dense}"
    );
    assert_eq!(mapping_at(&db, file, "relu(dense(x"), dense);
    let last = mapping_at(&db, file, "dense(h2");
    assert!(last.starts_with(" (`dense#3`, batch 1)"), "{last}");
    assert!(!last.contains("fused"), "{last}");
}
