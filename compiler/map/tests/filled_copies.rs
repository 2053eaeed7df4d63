//! Copies that fill their tiles (`--copies fill:N`, `docs/mapping.md` §5): each copy's layers
//! take the PEs its share of the fabric holds, no layer slower than at the least-area sizes.

mod common;

use wsel_ir::graph::{LayerGraph, Mode};
use wsel_map::{Copies, KernelWork, MapOptions, Placement, fixtures, map_batch};
use wsel_target::Target;

fn square(size: u32) -> Target {
    let mut t = Target::dev();
    t.width = size;
    t.height = size;
    t
}

fn chain(batch: u64) -> LayerGraph {
    fixtures::mlp(&[16, 16, 8], batch, true)
}

/// Kernels whose busiest PE works the same whatever the region, the first layer ten times as
/// long as the others (as digits' softmax bounds its pipeline): the other layers' least-area
/// sizes are then small, and larger ones no slower.
struct Flat;

impl KernelWork for Flat {
    fn cycles_per_sample(&self, layer: usize, _: usize, _: u32, _: u32, _: u64) -> Option<u64> {
        Some(if layer == 0 { 500 } else { 50 })
    }
}

fn mapped(batch: u64, target: &Target, copies: Copies) -> Placement {
    let mut per_copy = |b: u64| Ok(chain(b));
    let options = MapOptions {
        work: Some(&Flat),
        ..MapOptions::default()
    };
    let m = map_batch(
        &chain(batch),
        &mut per_copy,
        target,
        Mode::Pipelined,
        &options,
        copies,
    );
    m.result
        .placement
        .unwrap_or_else(|| panic!("{copies}: {:#?}", m.result.diagnostics))
}

/// The PEs of copy 0's regions, and the slowest of its stages.
fn copy0(p: &Placement) -> (u64, u64) {
    let layers = &p.layers[..p.layers_per_copy()];
    let pes = layers
        .iter()
        .map(|l| u64::from(l.rect.width) * u64::from(l.rect.height))
        .sum();
    let period = layers.iter().map(|l| l.estimate.cycles).max().unwrap_or(0);
    (pes, period)
}

#[test]
fn filled_copies_take_more_of_the_fabric_and_keep_their_pace() {
    let target = square(96);
    let least = mapped(64, &target, Copies::Exactly(4));
    let filled = mapped(64, &target, Copies::Filled(4));
    assert_eq!((filled.copies, filled.samples_per_copy), (4, 16));
    common::check_placement(&filled, &target);
    common::check_copies(&filled, chain(1).layers.len());
    let ((least_pes, least_period), (pes, period)) = (copy0(&least), copy0(&filled));
    // Without the fill, a copy keeps the least-area sizes (288 PEs); filled, every layer
    // takes its largest size (400).
    assert!(
        pes > least_pes,
        "a filled copy takes {pes} PEs, one at the least-area sizes {least_pes}"
    );
    assert!(4 * pes <= u64::from(target.width * target.height));
    assert!(period <= least_period, "{period} > {least_period}");
    assert!(
        filled
            .copies_reason
            .contains("4 copies, as asked; filling their tiles"),
        "{}",
        filled.copies_reason
    );
}

#[test]
fn every_copy_is_copy_0_moved() {
    let target = square(96);
    let p = mapped(64, &target, Copies::Filled(4));
    let per_copy = p.layers_per_copy();
    for (i, l) in p.layers.iter().enumerate() {
        let first = &p.layers[i % per_copy];
        assert_eq!(
            (l.rows, l.cols, l.rect.width, l.rect.height),
            (first.rows, first.cols, first.rect.width, first.rect.height),
            "copy {}'s {}",
            l.copy,
            l.name
        );
    }
}

#[test]
fn fill_and_a_count_is_a_copies_request() {
    assert_eq!("fill:144".parse::<Copies>(), Ok(Copies::Filled(144)));
    assert_eq!(Copies::Filled(144).to_string(), "fill:144");
    assert_eq!("144".parse::<Copies>(), Ok(Copies::Exactly(144)));
    for bad in ["fill:", "fill:0", "fill", "fill:x"] {
        assert!(bad.parse::<Copies>().is_err(), "{bad}");
    }
}
