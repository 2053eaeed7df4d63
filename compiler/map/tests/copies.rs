//! Replication for data parallelism (`docs/mapping.md` §5): how many copies of a pipeline the
//! mapper chooses for a batch, and what it says when the copies asked for cannot be placed.

mod common;

use wsel_ir::graph::{LayerGraph, Mode};
use wsel_map::{Copies, MapOptions, Mapped, fixtures, map, map_batch};
use wsel_target::Target;

const WIDTHS: [u64; 3] = [16, 16, 8];

fn square(size: u32) -> Target {
    let mut t = Target::dev();
    t.width = size;
    t.height = size;
    t
}

fn chain(batch: u64) -> LayerGraph {
    fixtures::mlp(&WIDTHS, batch, true)
}

fn choose(batch: u64, target: &Target, mode: Mode, copies: Copies) -> Mapped {
    let mut per_copy = |b: u64| Ok(chain(b));
    map_batch(
        &chain(batch),
        &mut per_copy,
        target,
        mode,
        &MapOptions::default(),
        copies,
    )
}

#[test]
fn a_small_chain_is_copied_across_a_larger_fabric() {
    let target = square(64);
    let mapped = choose(64, &target, Mode::Pipelined, Copies::Auto);
    let p = mapped.result.placement.expect("maps");
    assert!(p.copies > 1, "one copy on a 64 × 64 fabric");
    assert_eq!(p.batch, 64);
    assert_eq!(mapped.graph.batch * u64::from(p.copies), 64);
    common::check_placement(&p, &target);
    common::check_copies(&p, chain(1).layers.len());
    let one = choose(64, &target, Mode::Pipelined, Copies::Exactly(1));
    let one = one.result.placement.expect("maps");
    assert_eq!(one.copies, 1);
    assert!(p.estimated_cycles < one.estimated_cycles);
    // Copies repeat the colors of the first: they never share a router.
    assert_eq!(p.colors_used, one.colors_used);
}

#[test]
fn one_copy_where_no_second_fits() {
    // 16 × 16: the chain takes more than half of the fabric's room.
    let target = square(16);
    let mapped = choose(64, &target, Mode::Pipelined, Copies::Auto);
    let p = mapped.result.placement.expect("maps");
    assert_eq!(p.copies, 1);
    assert_eq!(mapped.graph.batch, 64);
    let asked = choose(64, &target, Mode::Pipelined, Copies::Exactly(2));
    assert!(asked.result.placement.is_none());
    let codes: Vec<&str> = asked.result.diagnostics.iter().map(|d| d.code).collect();
    assert_eq!(codes, ["E0610"]);
    let message = &asked.result.diagnostics[0].message;
    assert!(
        message.contains("2 copies") && message.contains("only 1 fit"),
        "{message}"
    );
}

#[test]
fn copies_must_divide_the_batch() {
    let asked = choose(10, &square(64), Mode::Pipelined, Copies::Exactly(3));
    let d = &asked.result.diagnostics;
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].code, "E0610");
    assert!(d[0].message.contains("batch of 10"), "{}", d[0].message);
}

#[test]
fn one_sample_or_one_copy_asked_for_is_not_copied() {
    let target = square(64);
    for (batch, copies) in [(1, Copies::Auto), (64, Copies::Exactly(1))] {
        let p = choose(batch, &target, Mode::Pipelined, copies)
            .result
            .placement
            .expect("maps");
        assert_eq!(p.copies, 1, "batch {batch}, {copies:?}");
    }
}

#[test]
fn streaming_is_never_copied() {
    // Weight streaming runs one layer at a time over its region.
    let target = square(64);
    for copies in [Copies::Auto, Copies::Exactly(2)] {
        let mapped = choose(8, &target, Mode::Streaming, copies);
        let p = mapped.result.placement.expect("maps");
        assert_eq!((p.copies, p.samples_per_copy), (1, 8), "{copies:?}");
        common::check_placement(&p, &target);
    }
}

#[test]
fn map_places_the_copies_asked_for() {
    let target = square(64);
    let options = MapOptions {
        copies: 3,
        ..MapOptions::default()
    };
    let r = map(&chain(4), &target, Mode::Pipelined, &options);
    let p = r
        .placement
        .unwrap_or_else(|| panic!("{:#?}", r.diagnostics));
    assert_eq!((p.copies, p.samples_per_copy, p.batch), (3, 4, 12));
    common::check_placement(&p, &target);
    common::check_copies(&p, chain(1).layers.len());
}
