//! Property tests over random layer chains and random defect maps: regions never overlap
//! and never contain dead PEs, every SRAM plan fits, every route is connected and avoids the
//! defects, colors stay within the target's limit — or mapping fails with a diagnostic whose
//! code is one of the mapper's, never a panic. With several copies of the pipeline, the
//! copies also never share a router, and each has its own edge streams.

mod common;

use proptest::prelude::*;
use wsel_ir::graph::Mode;
use wsel_map::{Copies, MapOptions, fixtures, map, map_batch};
use wsel_target::{Coord, Dir, Target};

fn target_with_defects(size: u32, dead: &[(u32, u32)], links: &[(u32, u32, u8)]) -> Target {
    let mut t = Target::dev();
    t.width = size;
    t.height = size;
    t.sram_bytes = 16 * 1024;
    t.sram_banks = 2;
    for &(x, y) in dead {
        t.defects.add_dead_pe(Coord::new(x % size, y % size));
    }
    for &(x, y, d) in links {
        let c = Coord::new(x % size, y % size);
        let dir = Dir::ALL[usize::from(d % 4)];
        if t.neighbor(c, dir).is_some() {
            t.defects.add_dead_link(c, dir);
        }
    }
    t
}

fn widths() -> impl Strategy<Value = Vec<u64>> {
    prop::collection::vec(
        prop::sample::select(vec![4u64, 8, 12, 16, 24, 32, 48, 64]),
        2..7,
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn random_chains_on_random_defects(
        widths in widths(),
        batch in 1u64..4,
        relus in any::<bool>(),
        streaming in any::<bool>(),
        size in prop::sample::select(vec![12u32, 16, 24]),
        dead in prop::collection::vec((0u32..64, 0u32..64), 0..12),
        links in prop::collection::vec((0u32..64, 0u32..64, 0u8..4), 0..6),
    ) {
        let graph = fixtures::mlp(&widths, batch, relus);
        let target = target_with_defects(size, &dead, &links);
        let mode = if streaming { Mode::Streaming } else { Mode::Pipelined };
        let result = map(&graph, &target, mode, &MapOptions::default());
        match &result.placement {
            Some(p) => {
                prop_assert_eq!(p.layers.len(), graph.layers.len());
                common::check_placement(p, &target);
            }
            None => {
                prop_assert!(!result.diagnostics.is_empty(), "no placement and no diagnostic");
                let known: Vec<&str> = wsel_map::codes().iter().map(|(c, _)| *c).collect();
                for d in &result.diagnostics {
                    prop_assert!(known.contains(&d.code), "unknown code {}", d.code);
                }
            }
        }
    }

    #[test]
    fn chains_without_defects_map(
        widths in prop::collection::vec(prop::sample::select(vec![8u64, 16, 32]), 2..5),
        relus in any::<bool>(),
    ) {
        let graph = fixtures::mlp(&widths, 1, relus);
        let target = target_with_defects(24, &[], &[]);
        let result = map(&graph, &target, Mode::Pipelined, &MapOptions::default());
        prop_assert!(result.placement.is_some(), "{:#?}", result.diagnostics);
        if let Some(p) = &result.placement {
            common::check_placement(p, &target);
        }
    }
}

fn assert_known_codes(diagnostics: &[wsel_diagnostic::Diagnostic]) -> Result<(), TestCaseError> {
    prop_assert!(!diagnostics.is_empty(), "no placement and no diagnostic");
    let known: Vec<&str> = wsel_map::codes().iter().map(|(c, _)| *c).collect();
    for d in diagnostics {
        prop_assert!(known.contains(&d.code), "unknown code {}", d.code);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    /// `copies` copies of a random chain on a random fabric: exactly that many, apart from
    /// each other and from the dead PEs, every route connected and defect-free, colors within
    /// the limit — or E0610 (they do not all fit) or another mapper diagnostic.
    #[test]
    fn copies_of_random_chains_stay_apart(
        widths in prop::collection::vec(prop::sample::select(vec![4u64, 8, 16]), 2..5),
        relus in any::<bool>(),
        copies in 2u32..5,
        size in prop::sample::select(vec![24u32, 32, 48]),
        dead in prop::collection::vec((0u32..64, 0u32..64), 0..10),
        links in prop::collection::vec((0u32..64, 0u32..64, 0u8..4), 0..4),
    ) {
        let graph = fixtures::mlp(&widths, 2, relus);
        let target = target_with_defects(size, &dead, &links);
        let options = MapOptions { copies, ..MapOptions::default() };
        let result = map(&graph, &target, Mode::Pipelined, &options);
        match &result.placement {
            Some(p) => {
                prop_assert_eq!(p.copies, copies);
                prop_assert_eq!(p.samples_per_copy, 2);
                common::check_placement(p, &target);
                common::check_copies(p, graph.layers.len());
            }
            None => assert_known_codes(&result.diagnostics)?,
        }
    }

    /// The number of copies chosen for a batch divides it, every copy runs the same share,
    /// and more than one copy is chosen only when the estimate of the batch is shorter.
    #[test]
    fn chosen_copies_divide_the_batch_and_pay(
        widths in prop::collection::vec(prop::sample::select(vec![4u64, 8, 16]), 2..4),
        batch in 1u64..13,
        size in prop::sample::select(vec![16u32, 32]),
    ) {
        let graph = fixtures::mlp(&widths, batch, true);
        let target = target_with_defects(size, &[], &[]);
        let mut per_copy = |b: u64| Ok(fixtures::mlp(&widths, b, true));
        let options = MapOptions::default();
        let chosen = map_batch(&graph, &mut per_copy, &target, Mode::Pipelined, &options, Copies::Auto);
        let single = map(&graph, &target, Mode::Pipelined, &options);
        let (Some(p), Some(one)) = (&chosen.result.placement, &single.placement) else {
            prop_assert!(chosen.result.placement.is_none() && single.placement.is_none());
            return Ok(());
        };
        prop_assert_eq!(p.batch, batch);
        prop_assert_eq!(u64::from(p.copies) * p.samples_per_copy, batch);
        prop_assert_eq!(chosen.graph.batch, p.samples_per_copy);
        if p.copies > 1 {
            prop_assert!(p.estimated_cycles < one.estimated_cycles,
                "{} copies estimated at {} cycles, one at {}", p.copies, p.estimated_cycles, one.estimated_cycles);
            common::check_placement(p, &target);
            common::check_copies(p, graph.layers.len());
        } else {
            prop_assert_eq!(p, one);
        }
    }
}

/// A layer's result consumed by two layers travels as one multicast tree per part — or,
/// where the first consumer sits right beside the producer so that no part can branch (the
/// current placement always puts it there), mapping fails with E0603 instead of producing
/// routes that cross.
#[test]
fn a_result_feeding_two_layers() {
    use wsel_ir::graph::TensorRef;
    let mut graph = fixtures::mlp(&[16, 16, 16], 1, true);
    // mlp: dense#1, relu#1, dense#2; add relu#9 reading relu#1 too.
    graph
        .layers
        .push(fixtures::relu(9, TensorRef::Layer(1), 16, 1));
    for size in [16u32, 24] {
        let target = target_with_defects(size, &[], &[]);
        let result = map(&graph, &target, Mode::Pipelined, &MapOptions::default());
        match &result.placement {
            Some(p) => {
                common::check_placement(p, &target);
                let fan_out = p
                    .transfers
                    .iter()
                    .filter(|t| t.destinations.len() == 2)
                    .count();
                assert!(fan_out > 0, "no transfer reaches both consumers");
            }
            None => {
                let codes: Vec<&str> = result.diagnostics.iter().map(|d| d.code).collect();
                assert_eq!(codes, ["E0603"], "{:#?}", result.diagnostics);
            }
        }
    }
}
