//! Smoke test: print a small placement.
use wsel_ir::graph::Mode;
use wsel_map::{MapOptions, fixtures, map, report};
use wsel_target::Target;

#[test]
fn digits_like_on_dev() {
    let g = fixtures::mlp(&[64, 32, 16, 10], 1, true);
    let r = map(&g, &Target::dev(), Mode::Pipelined, &MapOptions::default());
    for d in &r.diagnostics {
        eprintln!("{d:?}");
    }
    let p = r.placement.expect("placement");
    println!("{}", report::render(&p));
}
