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
            // The same placement, which says why it is one copy.
            prop_assert!(p.copies_reason.starts_with("auto: one copy"), "{}", p.copies_reason);
            let unexplained = wsel_map::Placement { copies_reason: String::new(), ..p.clone() };
            prop_assert_eq!(&unexplained, one);
        }
    }
}

/// A layer's result consumed by several layers reaches every one of them: the consumers
/// placed straight on from the producer pass each part on through their input lines (a row
/// of PEs, or a multicast line), and the routes go on from there. A residual block's shape
/// (`relu#1` read by `relu#2` and by `add#9`, which adds it to `relu#3(relu#2)`), and three
/// readers (and `add#10`, which adds it to `add#9`), each tensor's parts on one color, every
/// route followed hop by hop by `check_placement`.
#[test]
fn a_result_feeding_several_layers() {
    use wsel_ir::graph::TensorRef;
    let relu = |i: usize, x: usize| fixtures::relu(i, TensorRef::Layer(x), 16, 1);
    let add = |i: usize, a: usize, b: usize| {
        fixtures::add(i, TensorRef::Layer(a), TensorRef::Layer(b), 16, 1)
    };
    // mlp: dense#1, relu#1; then relu#2, relu#3 and the sum.
    let mut two = fixtures::mlp(&[16, 16], 1, true);
    two.layers
        .push(fixtures::relu(1, TensorRef::Layer(0), 16, 1));
    two.layers.extend([relu(2, 1), relu(3, 2), add(9, 1, 3)]);
    two.output = TensorRef::Layer(4);
    let mut three = two.clone();
    three.layers.push(add(10, 1, 4));
    three.output = TensorRef::Layer(5);
    for (graph, readers) in [(&two, 2), (&three, 3)] {
        for size in [16u32, 24] {
            let target = target_with_defects(size, &[], &[]);
            let what = format!("{size}");
            let (p, _) = fanned_out(graph, &target, &MapOptions::default(), readers, &what);
            let passing = p
                .layers
                .iter()
                .flat_map(|l| &l.ports)
                .filter(|port| port.passes_on)
                .count();
            assert!(passing > 0, "no consumer passes relu#1.y on");
        }
    }
}

/// A residual block whose branch reads the block's start itself (`h = relu#1`, read by
/// `dense#2` and by `add#9`, which adds it to `dense#2`'s result): `add` lies a PE away from
/// `dense#2`, whose PEs carry `h` on `h`'s color, so that `h` reaches the PEs beside `add`'s
/// edge (E0603 when `add` touched `dense#2`). Every route is followed hop by hop by
/// `check_placement`, and each part of `h` reaches both readers.
#[test]
fn a_residual_block_whose_branch_reads_its_start() {
    use wsel_ir::graph::TensorRef;
    // mlp: dense#1, relu#1, dense#2 (reading relu#1); then the sum.
    let mut graph = fixtures::mlp(&[16, 16, 16], 1, true);
    graph.layers.push(fixtures::add(
        9,
        TensorRef::Layer(1),
        TensorRef::Layer(2),
        16,
        1,
    ));
    graph.output = TensorRef::Layer(3);
    for size in [16u32, 24] {
        let target = target_with_defects(size, &[], &[]);
        let (p, _) = fanned_out(
            &graph,
            &target,
            &MapOptions::default(),
            2,
            &format!("{size}"),
        );
        let (dense, add) = (p.layers[2].rect, p.layers[3].rect);
        // The PEs between two spans (negative when they overlap).
        let gap = |a0: u32, a_len: u32, b0: u32, b_len: u32| {
            let (a0, a1, b0, b1) = (
                a0 as i64,
                (a0 + a_len) as i64,
                b0 as i64,
                (b0 + b_len) as i64,
            );
            (b0 - a1).max(a0 - b1)
        };
        let apart = gap(dense.x, dense.width, add.x, add.width) >= 1
            || gap(dense.y, dense.height, add.y, add.height) >= 1;
        assert!(apart, "{size}: add#9 touches dense#2: {dense:?} {add:?}");
    }
}

/// Residual blocks `add(h, f(h))` whose `h` (`relu#1`) is 3, 4 and 6 parts wide on `add`'s
/// edge (sizes pinned), wider than the two parts a line of PEs beside the edge takes from its
/// two ends: `f` = `dense(dense(h))` (the branch's first layer reads `h` on a multicast line
/// and passes it on) and `f` = `relu(relu(h))`. `add` keeps the gap `h`'s parts need to turn
/// in one inside the other (`place/chain.rs`, `join_gap`). (A branch that turns its stream an
/// odd number of times, like one `dense`, reverses its parts' order against any route's, so
/// `h` reaches such an `add` in at most two parts, one from each end of the line beside its
/// edge: docs/mapping.md §4.) Every route is followed hop by hop by `check_placement`, and
/// each part of `h` reaches both readers.
#[test]
fn a_residual_block_of_any_width_routes_its_fork() {
    for branch in [Branch::Dense, Branch::Relus, Branch::Block] {
        for parts in [3u32, 4, 6] {
            let graph = wide_block(branch);
            let sizes: Vec<(u32, u32)> = graph
                .layers
                .iter()
                .map(|l| match l.layer.as_str() {
                    "dense" => (parts, parts),
                    _ => (1, parts),
                })
                .collect();
            let options = MapOptions {
                sizes: Some(&sizes),
                ..MapOptions::default()
            };
            let target = target_with_defects(32, &[], &[]);
            let what = format!("{branch:?}, {parts} parts");
            let (_, h_parts) = fanned_out(&graph, &target, &options, 2, &what);
            assert_eq!(h_parts, parts as usize, "{what}");
        }
    }
}

/// `graph` mapped pipelined on `target` with `options` (`what` names the case in a failure),
/// every route followed hop by hop, each part of `relu#1.y` checked to reach `readers` layers;
/// the placement and how many parts `relu#1.y` has.
fn fanned_out(
    graph: &wsel_ir::graph::LayerGraph,
    target: &Target,
    options: &MapOptions,
    readers: usize,
    what: &str,
) -> (wsel_map::Placement, usize) {
    let result = map(graph, target, Mode::Pipelined, options);
    let p = result
        .placement
        .unwrap_or_else(|| panic!("{what}: {:#?}", result.diagnostics));
    common::check_placement(&p, target);
    let parts: Vec<_> = p
        .transfers
        .iter()
        .filter(|t| t.tensor == "relu#1.y")
        .collect();
    assert!(!parts.is_empty(), "{what}");
    for t in &parts {
        assert_eq!(t.destinations.len(), readers, "{what}: {t:?}");
    }
    let count = parts.len();
    (p, count)
}

/// The branch of [`wide_block`].
#[derive(Debug, Clone, Copy)]
enum Branch {
    /// `dense(dense(h))`.
    Dense,
    /// `relu(relu(h))`.
    Relus,
    /// `dense(relu(dense(relu(h))))`, a transformer block's shape
    /// (`dense(attention(dense(layernorm(h))))`).
    Block,
}

/// `x → dense#1 → relu#1 = h → add#9(h, f(h))` over 24 features, so 3, 4 and 6 parts divide
/// them.
fn wide_block(branch: Branch) -> wsel_ir::graph::LayerGraph {
    use wsel_ir::graph::TensorRef;
    let mut graph = fixtures::mlp(&[24, 24, 24, 24], 1, true);
    graph.layers.truncate(2);
    let branch_layers = match branch {
        Branch::Dense => vec![
            fixtures::dense(
                2,
                TensorRef::Layer(1),
                TensorRef::Param(2),
                TensorRef::Param(3),
                24,
                24,
                1,
            ),
            fixtures::dense(
                3,
                TensorRef::Layer(2),
                TensorRef::Param(4),
                TensorRef::Param(5),
                24,
                24,
                1,
            ),
        ],
        Branch::Relus => vec![
            fixtures::relu(5, TensorRef::Layer(1), 24, 1),
            fixtures::relu(6, TensorRef::Layer(2), 24, 1),
        ],
        Branch::Block => vec![
            fixtures::relu(5, TensorRef::Layer(1), 24, 1),
            fixtures::dense(
                2,
                TensorRef::Layer(2),
                TensorRef::Param(2),
                TensorRef::Param(3),
                24,
                24,
                1,
            ),
            fixtures::relu(6, TensorRef::Layer(3), 24, 1),
            fixtures::dense(
                3,
                TensorRef::Layer(4),
                TensorRef::Param(4),
                TensorRef::Param(5),
                24,
                24,
                1,
            ),
        ],
    };
    graph.layers.extend(branch_layers);
    let last = graph.layers.len() - 1;
    graph.layers.push(fixtures::add(
        9,
        TensorRef::Layer(1),
        TensorRef::Layer(last),
        24,
        1,
    ));
    graph.output = TensorRef::Layer(last + 1);
    graph
}
