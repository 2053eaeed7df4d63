//! The estimate a layer call's hover shows is the one `wsel map` prints: the kernels' work
//! measured by dry runs (`wsel-estimate`), recomputed here as the driver's `map_graph` does in
//! auto mode; and an edit of a kernel's body, which leaves the layer graph as it was, changes
//! the hovered figure (the hover's mapping cache keys on the kernels' sources too).

use std::path::Path;

use wsel_ir::graph::{LayerGraph, Mode};
use wsel_lsp::context::FileCtx;
use wsel_lsp::hover::hover;
use wsel_map::{Copies, MapOptions, Placement};
use wsel_sema::{Database, SourceFile};
use wsel_target::Target;

const PATH: &str = "/project/scale.wse";

/// A model of one layer whose kernel comes last in the file, so that editing the kernel's body
/// moves no call: `WORK` marks where an edit adds work.
const PROGRAM: &str = "model m(x: f32[B, 64]) -> f32[B, 64] {
    return scale(x);
}

/// y = 2 x, element-wise.
layer scale(x: f32[B, N]) -> y: f32[B, N] {
    cost {
        flops = N;
        weights = 0;
        activations = 4 * (N + N);
    }
    pipelined, streaming on [1, C] where N % C == 0 {
        run scale_tile(n = N / C, samples = B);
        bind x to port xs split [cols];
        bind y to port ys split [cols];
    }
}

kernel scale_tile(n: u32, samples: u32) {
    var v: [f32; n];
    var done: u32 = 0;
    in  xs: stream<f32> from north;
    out ys: stream<f32> to south;

    task main() {
        if samples > 0 {
            recv(xs, v[0..n]) then apply;
        }
    }

    task apply() {
        v[0..n] = 2.0 * v[0..n];
        // WORK
        send(ys, v[0..n]);
        done += 1;
        if done < samples {
            recv(xs, v[0..n]) then apply;
        }
    }
}
";

/// `PROGRAM` with a loop of vector work where `// WORK` is.
fn with_more_work() -> String {
    PROGRAM.replace(
        "// WORK",
        "for k in 0..8 {\n            v[0..n] += 1.0;\n        }",
    )
}

/// The model `m` of `file` lowered as the hover lowers it (no `run` item: batch 1).
fn graph(db: &Database, file: SourceFile) -> LayerGraph {
    let model = wsel_lower::find_model(db, file, "m").expect("the model `m`");
    wsel_estimate::lower_for_batch(db, model, 1).expect("`m` lowers")
}

/// `m` mapped on `dev` as `wsel map --target dev` maps it: auto mode (pipelined, else
/// streaming), default copies, with `work` measuring the kernels, or the multiply-add
/// estimate when `measured` is false.
fn map_on_dev(db: &Database, file: SourceFile, measured: bool) -> Placement {
    let model = wsel_lower::find_model(db, file, "m").expect("the model `m`");
    let graph = graph(db, file);
    let target = Target::preset("dev").expect("the dev preset");
    let work = wsel_estimate::KernelDryRuns::new(db, model, &target);
    let options = MapOptions {
        work: measured.then_some(&work as &dyn wsel_map::KernelWork),
        ..MapOptions::default()
    };
    let map = |mode| {
        let per_copy = &mut |b| wsel_estimate::lower_for_batch(db, model, b);
        wsel_map::map_batch(&graph, per_copy, &target, mode, &options, Copies::Auto)
            .result
            .placement
    };
    let placement = map(Mode::Pipelined)
        .or_else(|| map(Mode::Streaming))
        .expect("`m` maps on dev");
    assert_eq!(placement.copies, 1, "batch 1: one copy, as the hover maps");
    placement
}

/// The estimated cycles per sample of `scale#1` in `placement`.
fn estimate(placement: &Placement) -> u64 {
    placement
        .layers
        .iter()
        .find(|l| l.name == "scale#1")
        .expect("`scale#1` is placed")
        .estimate
        .cycles
}

/// The hover of the `scale(x)` call.
fn call_hover(db: &Database, file: SourceFile) -> String {
    let ctx = FileCtx::new(db, file);
    let offset = ctx.text.find("scale(x)").expect("the call") + 1;
    hover(&ctx, offset)
        .map(|h| h.markdown)
        .expect("a hover on the call")
}

/// The estimated cycles per sample a hover shows.
fn hovered_cycles(hover: &str) -> u64 {
    let figure = hover
        .split("- estimated cycles: ")
        .nth(1)
        .and_then(|rest| rest.split(" per sample").next())
        .unwrap_or_else(|| panic!("no estimate in the hover:\n{hover}"));
    figure
        .replace(',', "")
        .parse()
        .unwrap_or_else(|_| panic!("`{figure}` is not a number"))
}

#[test]
fn hover_shows_the_estimate_wsel_map_prints() {
    let mut db = Database::default();
    let file = wsel_sema::set_file(&mut db, Path::new(PATH), PROGRAM.to_string());
    assert!(wsel_sema::diagnostics(&db, file).is_empty());
    let measured = estimate(&map_on_dev(&db, file, true));
    let multiply_adds = estimate(&map_on_dev(&db, file, false));
    assert_ne!(
        measured, multiply_adds,
        "the program tells the measured estimate from the multiply-add one"
    );
    assert_eq!(hovered_cycles(&call_hover(&db, file)), measured);
}

#[test]
fn editing_a_kernel_body_changes_the_hovered_estimate() {
    let mut db = Database::default();
    let file = wsel_sema::set_file(&mut db, Path::new(PATH), PROGRAM.to_string());
    let before_graph = graph(&db, file);
    let before = hovered_cycles(&call_hover(&db, file));
    assert_eq!(before, estimate(&map_on_dev(&db, file, true)));

    wsel_sema::set_file(&mut db, Path::new(PATH), with_more_work());
    assert!(wsel_sema::diagnostics(&db, file).is_empty());
    assert_eq!(
        graph(&db, file),
        before_graph,
        "the edit leaves the layer graph as it was"
    );
    let after = hovered_cycles(&call_hover(&db, file));
    assert_eq!(after, estimate(&map_on_dev(&db, file, true)));
    assert!(
        after > before,
        "8 more vector passes cost more: {before} → {after}"
    );

    // And back: the first figure again.
    wsel_sema::set_file(&mut db, Path::new(PATH), PROGRAM.to_string());
    assert_eq!(hovered_cycles(&call_hover(&db, file)), before);
}
