//! Benchmark: map copies of a small pipeline (a 64 → 32 → 16 → 10 chain of `dense` layers
//! with `relu`s between them, 180 samples per copy) onto the full WSE-2 fabric: the time to
//! place 1, 4 and 16 copies, and to find out that 32 do not fit. Run with
//! `cargo bench -p wsel-map --bench copies`.

use std::time::Instant;

use wsel_ir::graph::Mode;
use wsel_map::{MapOptions, fixtures, map};
use wsel_target::Target;

fn main() {
    let graph = fixtures::mlp(&[64, 32, 16, 10], 180, true);
    let target = Target::wse2();
    for copies in [1u32, 4, 16, 32] {
        let options = MapOptions {
            copies,
            ..MapOptions::default()
        };
        let start = Instant::now();
        let result = map(&graph, &target, Mode::Pipelined, &options);
        let took = start.elapsed().as_secs_f64() * 1e3;
        match result.placement {
            Some(p) => println!(
                "copies: {copies} asked, {} placed on {} PEs in {took:.1} ms; estimated batch {} cycles",
                p.copies,
                p.pes_used(),
                p.estimated_cycles
            ),
            None => println!(
                "copies: {copies} asked in {took:.1} ms: {}",
                result
                    .diagnostics
                    .first()
                    .map_or("no placement", |d| d.message.as_str())
            ),
        }
    }
}
