//! The pictures at wse2 scale, legible (`docs/mapping.md` §5): the placement of digits on
//! wse2 in 60 copies, of the 96-layer benchmark model on wse2, and a heat map of a run; and the
//! timeline of a streamed run (`docs/running.md`, "How weight streaming runs"). Each is
//! drawn as SVG, rendered to PNG with the bundled font, and checked from the rendered text:
//! no two labels overlap and every label lies on the canvas. The PNGs are the ones
//! the docs show (`docs/img/`): a missing one is written, `UPDATE_EXPECT=1` rewrites
//! them, and otherwise a PNG that no longer matches its picture fails the test.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use support::temp_dir;

use wsel::png::{labels, legibility, to_png};
use wsel_ir::graph::{Mode, TensorRef};
use wsel_map::{MapOptions, fixtures};
use wsel_target::Target;

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn wsel(args: &[&str]) {
    let out = Command::new(env!("CARGO_BIN_EXE_wsel"))
        .current_dir(repo())
        .args(args)
        .args(["--color", "never"])
        .output()
        .expect("wsel runs");
    assert!(
        out.status.success(),
        "wsel {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Checks that `svg` is legible, renders it and compares the PNG with `docs/img/<name>.png`.
fn check(name: &str, svg: &str) {
    let (canvas, texts) = labels(svg).expect("the picture parses");
    assert!(texts.len() > 5, "{name}: only {} texts", texts.len());
    let problems = legibility(canvas, &texts);
    assert!(problems.is_empty(), "{name}:\n{}", problems.join("\n"));
    let png = to_png(svg).expect("the picture renders");
    let path = repo().join("docs/img").join(format!("{name}.png"));
    let update = std::env::var_os("UPDATE_EXPECT").is_some();
    match std::fs::read(&path) {
        Ok(old) if old == png => {}
        Ok(_) if !update => panic!(
            "{}: the picture changed (UPDATE_EXPECT=1 to accept)",
            path.display()
        ),
        _ => std::fs::write(&path, png).expect("write the PNG"),
    }
}

#[test]
fn digits_in_copies_on_wse2_is_legible() {
    let dir = temp_dir("digits");
    let svg = dir.join("digits-wse2.svg");
    let svg_arg = svg.to_str().expect("utf-8 path");
    wsel(&[
        "map",
        "examples/digits/main.wse",
        "--target",
        "wse2",
        "--copies",
        "60",
        "--svg",
        svg_arg,
    ]);
    check("digits-wse2", &std::fs::read_to_string(&svg).expect("svg"));
}

#[test]
fn the_96_layer_model_on_wse2_is_legible() {
    // The model of `cargo bench -p wsel-map --bench map96`.
    let cycle = [256u64, 512, 1024, 384, 128, 768];
    let widths: Vec<u64> = (0..49).map(|i| cycle[i % cycle.len()]).collect();
    let mut graph = fixtures::mlp(&widths, 1, true);
    let last = graph.layers.len() - 1;
    graph
        .layers
        .push(fixtures::relu(48, TensorRef::Layer(last), widths[48], 1));
    graph.output = TensorRef::Layer(last + 1);
    let result = wsel_map::map(
        &graph,
        &Target::wse2(),
        Mode::Pipelined,
        &MapOptions::default(),
    );
    let placement = result.placement.expect("map96 maps");
    assert_eq!(placement.layers.len(), 96);
    let svg = wsel_map::svg::render(&placement, wsel_map::svg::SvgOptions::default());
    check("map96-wse2", &svg);
}

#[test]
fn a_heat_map_of_a_run_is_legible() {
    let dir = temp_dir("heat");
    let svg = dir.join("heat.svg");
    let out = dir.join("out.npy");
    wsel(&[
        "run",
        "examples/digits/main.wse",
        "--no-cache",
        "--output",
        out.to_str().expect("utf-8 path"),
        "--heatmap",
        svg.to_str().expect("utf-8 path"),
    ]);
    check(
        "heatmap-digits-dev",
        &std::fs::read_to_string(&svg).expect("svg"),
    );
}

#[test]
fn the_timeline_of_a_streamed_run_is_legible() {
    let dir = temp_dir("timeline");
    let svg = dir.join("timeline.svg");
    let out = dir.join("out.npy");
    wsel(&[
        "run",
        "examples/mlp_streaming/main.wse",
        "--no-cache",
        "--output",
        out.to_str().expect("utf-8 path"),
        "--timeline",
        svg.to_str().expect("utf-8 path"),
    ]);
    let svg = std::fs::read_to_string(&svg).expect("svg");
    for phase in ["dense#1", "dense#2", "dense#3", "store → fabric"] {
        assert!(svg.contains(phase), "no `{phase}` in the timeline");
    }
    check("timeline-mlp-streaming-dev", &svg);
}
