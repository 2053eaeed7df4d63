//! How a kernel passes messages along a chain, as the dry runs of a region's centre PE
//! measure it for the mapper's estimate (`docs/mapping.md` §5, `wsel_map::ChainFlow`): nine
//! kernels on a 1 × 5 row of `dev` (2 cycles a task switch, 2 f32 adds a cycle), 8 words per
//! PE and sample, measured at columns 0, 2 and 4.

use std::path::Path;

use wsel_estimate::KernelDryRuns;
use wsel_ir::graph::LayerInstance;
use wsel_map::{ChainFlow, KernelWork, PhaseDryRun};
use wsel_sema::Database;
use wsel_target::Target;

/// The model: nine layers on `[1, C]`, each running one kernel of `KERNELS`.
fn program() -> String {
    let layer = |name: &str, kernel: &str| {
        format!(
            "layer {name}(x: f32[B, N]) -> y: f32[B, N] {{
    cost {{ flops = N; weights = 0; activations = 4 * (N + N); }}
    pipelined on [1, C] where N % C == 0 {{
        run {kernel}(n = N / C, samples = B);
        bind x to port xs split [cols];
        bind y to port ys split [cols];
    }}
}}
"
        )
    };
    let model = "model m(x: f32[B, 40]) -> f32[B, 40] {
    return answer(turns(root(enter(gather(alt(trip(swap(relay(x)))))))));
}
";
    [
        model.to_string(),
        layer("relay", "relay_row"),
        layer("swap", "swap_row"),
        layer("trip", "trip_row"),
        layer("alt", "alt_row"),
        layer("gather", "gather_row"),
        layer("enter", "enter_row"),
        layer("root", "root_row"),
        layer("turns", "turns_row"),
        layer("answer", "answer_row"),
        KERNELS.to_string(),
        enter_row(),
    ]
    .concat()
}

const KERNELS: &str = "
// A broadcast on the row's bus: column 0 sends its part to every other PE of the row.
kernel root_row(n: u32, samples: u32) {
    var v: [f32; n];
    var done: u32 = 0;
    in  xs:    stream<f32> from north;
    out ys:    stream<f32> to south;
    out brow:  stream<f32> to row;
    in  rrow:  stream<f32> from row;

    task main() {
        if samples > 0 { recv(xs, v[0..n]) then got; }
    }
    task got() {
        if pe.col == 0 { send(brow, v[0..n]); activate pass; } else { recv(rrow, v[0..n]) then pass; }
    }
    task pass() {
        send(ys, v[0..n]);
        done += 1;
        if done < samples { recv(xs, v[0..n]) then got; }
    }
}

// Turns on the row's bus: column c sends its part once it took the parts of the c columns
// west of it, then takes the rest; every PE takes every other PE's part.
kernel turns_row(n: u32, samples: u32) {
    var v: [f32; n];
    var u: [f32; n];
    var heard: u32 = 0;
    var done: u32 = 0;
    in  xs:    stream<f32> from north;
    out ys:    stream<f32> to south;
    out brow:  stream<f32> to row;
    in  rrow:  stream<f32> from row;

    task main() {
        if samples > 0 { recv(xs, v[0..n]) then got; }
    }
    task got() {
        heard = 0;
        activate next;
    }
    task next() {
        if heard == pe.col { send(brow, v[0..n]); }
        if heard < region.cols - 1 { recv(rrow, u[0..n]) then add; } else { activate pass; }
    }
    task add() {
        v[0..n] += u[0..n];
        heard += 1;
        activate next;
    }
    task pass() {
        send(ys, v[0..n]);
        done += 1;
        if done < samples { recv(xs, v[0..n]) then got; }
    }
}

// An allreduce answered on the row's bus, three rounds a sample (csl's bicgstab's dot
// products): each PE adds its part's sum to the running sum from the west and passes it east;
// the last column sends the total back on the bus, and every PE takes it before its next round.
kernel answer_row(n: u32, samples: u32) {
    var v: [f32; n];
    var total: f32 = 0.0;
    var part: f32 = 0.0;
    var round: u32 = 0;
    var done: u32 = 0;
    in  xs:    stream<f32> from north;
    out ys:    stream<f32> to south;
    in  fromw: stream<f32> from west;
    out toe:   stream<f32> to east;
    out brow:  stream<f32> to row;
    in  rrow:  stream<f32> from row;

    task main() {
        if samples > 0 { recv(xs, v[0..n]) then got; }
    }
    task got() {
        round = 0;
        activate start;
    }
    task start() {
        total = sum(v[0..n]);
        if pe.col == 0 { activate pass; } else { recv(fromw, part) then add; }
    }
    task add() {
        total += part;
        activate pass;
    }
    task pass() {
        if pe.col < region.cols - 1 {
            send(toe, total);
            recv(rrow, total) then answered;
        } else {
            send(brow, total);
            activate answered;
        }
    }
    task answered() {
        v[0..n] += total;
        round += 1;
        if round < 3 {
            activate start;
        } else {
            send(ys, v[0..n]);
            done += 1;
            if done < samples { recv(xs, v[0..n]) then got; }
        }
    }
}

// A running sum east: PE c > 0 adds what the west sent before it passes it on.
kernel relay_row(n: u32, samples: u32) {
    var v: [f32; n];
    var s: [f32; n];
    var done: u32 = 0;
    in  xs:    stream<f32> from north;
    out ys:    stream<f32> to south;
    in  fromw: stream<f32> from west;
    out toe:   stream<f32> to east;

    task main() {
        if samples > 0 { recv(xs, v[0..n]) then got; }
    }
    task got() {
        if pe.col == 0 { activate pass; } else { recv(fromw, s[0..n]) then add; }
    }
    task add() {
        v[0..n] += s[0..n];
        activate pass;
    }
    task pass() {
        if pe.col < region.cols - 1 { send(toe, v[0..n]); }
        send(ys, v[0..n]);
        done += 1;
        if done < samples { recv(xs, v[0..n]) then got; }
    }
}

// An exchange: every PE sends its own part east and takes its west neighbour's.
kernel swap_row(n: u32, samples: u32) {
    var v: [f32; n];
    var s: [f32; n];
    var done: u32 = 0;
    in  xs:    stream<f32> from north;
    out ys:    stream<f32> to south;
    in  fromw: stream<f32> from west;
    out toe:   stream<f32> to east;

    task main() {
        if samples > 0 { recv(xs, v[0..n]) then got; }
    }
    task got() {
        if pe.col < region.cols - 1 { send(toe, v[0..n]); }
        if pe.col > 0 { recv(fromw, s[0..n]) then emit; } else { activate emit; }
    }
    task emit() {
        send(ys, s[0..n]);
        done += 1;
        if done < samples { recv(xs, v[0..n]) then got; }
    }
}

// A round trip: a word east from PE to PE, the last one's back west; the next sample waits.
kernel trip_row(n: u32, samples: u32) {
    var v: [f32; n];
    var s: [f32; 1];
    var t: [f32; 1];
    var done: u32 = 0;
    in  xs:    stream<f32> from north;
    out ys:    stream<f32> to south;
    in  fromw: stream<f32> from west;
    out toe:   stream<f32> to east;
    in  frome: stream<f32> from east;
    out tow:   stream<f32> to west;

    task main() {
        if samples > 0 { recv(xs, v[0..n]) then got; }
    }
    task got() {
        if pe.col == 0 { activate east; } else { recv(fromw, s[0..1]) then east; }
    }
    task east() {
        if pe.col == region.cols - 1 {
            activate west;
        } else {
            send(toe, v[0..1]);
            recv(frome, t[0..1]) then west;
        }
    }
    task west() {
        if pe.col > 0 { send(tow, t[0..1]); }
        send(ys, v[0..n]);
        done += 1;
        if done < samples { recv(xs, v[0..n]) then got; }
    }
}

// relay_row's running sum on two colours, like csl's gemv-08: even columns receive on
// colour 2 and send on colour 1, odd ones the reverse.
kernel alt_row(n: u32, samples: u32) {
    var v: [f32; n];
    var s: [f32; n];
    var done: u32 = 0;
    var odd: u32 = 0;
    in  xs:      stream<f32> from north;
    out ys:      stream<f32> to south;
    in  fromw_1: stream<f32> from west;
    out toe_1:   stream<f32> to east;
    in  fromw_2: stream<f32> from west;
    out toe_2:   stream<f32> to east;

    task main() {
        odd = pe.col % 2;
        if samples > 0 { recv(xs, v[0..n]) then got; }
    }
    task got() {
        if pe.col == 0 {
            activate pass;
        } else if odd == 0 {
            recv(fromw_2, s[0..n]) then add;
        } else {
            recv(fromw_1, s[0..n]) then add;
        }
    }
    task add() {
        v[0..n] += s[0..n];
        activate pass;
    }
    task pass() {
        if pe.col < region.cols - 1 {
            if odd == 0 { send(toe_1, v[0..n]); } else { send(toe_2, v[0..n]); }
        }
        send(ys, v[0..n]);
        done += 1;
        if done < samples { recv(xs, v[0..n]) then got; }
    }
}
// A gather run once, whatever the batch (csl's bandwidth-test): column c passes the c blocks
// from the west on east, then its own.
kernel gather_row(n: u32, samples: u32) {
    var v: [f32; n];
    var fwd: [f32; n];
    var passed: u32 = 0;
    in  xs:    stream<f32> from north;
    out ys:    stream<f32> to south;
    in  fromw: stream<f32> from west;
    out toe:   stream<f32> to east;

    task main() {
        recv(xs, v[0..n]) then start;
    }
    task start() {
        send(ys, v[0..n]);
        if pe.col == 0 { send(toe, v[0..n]); } else { recv(fromw, fwd[0..n]) then pass; }
    }
    task pass() {
        send(toe, fwd[0..n]);
        passed += 1;
        if passed < pe.col { recv(fromw, fwd[0..n]) then pass; } else { send(toe, v[0..n]); }
    }
}
";

/// relay_row with its input from the west: column 0 takes the sum's start from the region's
/// west edge (csl's gemv-09 takes b there) and relays it too.
fn enter_row() -> String {
    let start = KERNELS.find("kernel relay_row").expect("relay_row");
    let len = KERNELS[start..].find("\n}\n").expect("its end") + 3;
    KERNELS[start..start + len]
        .replace("kernel relay_row", "kernel enter_row")
        .replace(
            "xs:    stream<f32> from north",
            "xs:    stream<f32> from west",
        )
}

/// The flow of layer `layer`'s chain `out`/`inp` on 1 × 5, measured on `dev`.
fn flow(layer: usize, out: &str, inp: &str) -> ChainFlow {
    let mut db = Database::default();
    let file = wsel_sema::set_file(&mut db, Path::new("/chains.wse"), program());
    assert!(wsel_sema::diagnostics(&db, file).is_empty());
    let model = wsel_lower::find_model(&db, file, "m").expect("the model `m`");
    let target = Target::preset("dev").expect("dev");
    let work = wsel_estimate::KernelDryRuns::new(&db, model, &target);
    work.chain_flow(layer, 0, 1, 5, out, inp).expect("measured")
}

#[test]
fn a_running_sum_relays() {
    // Relay work, from `add`'s start to the send in `pass`: add = switch 2 + `v += s` (8
    // adds at 2 a cycle) 4 + `activate` 1 = 7; then pass = switch 2 + `if` (1, its
    // compare 1, `region.cols - 1` 1) 3 + the send's issue 1 = 6. 13 in all.
    let f = flow(0, "toe", "fromw");
    assert_eq!(
        f,
        ChainFlow {
            messages: 1,
            words: 8,
            relays: 1,
            relay_words: 8,
            relay_work: 7 + 6,
            first_relays: false,
            round_trip: false,
            handovers: 0,
            ..ChainFlow::default()
        }
    );
}

#[test]
fn an_exchange_does_not_relay() {
    // Sample k's send east follows only sample k − 1's receive from the west.
    let f = flow(1, "toe", "fromw");
    assert_eq!(
        f,
        ChainFlow {
            messages: 1,
            words: 8,
            ..ChainFlow::default()
        }
    );
}

#[test]
fn a_bus_is_seen_at_its_root() {
    // Column 0 sends its 8 words on the row's bus once a sample; the centre (column 2) only
    // receives: the bus's flow is the root's, one message of 8 words that nothing relays
    // (the centre's would be no message at all).
    let f = flow(6, "brow", "rrow");
    assert_eq!(
        f,
        ChainFlow {
            messages: 1,
            words: 8,
            ..ChainFlow::default()
        }
    );
}

#[test]
fn a_bus_whose_senders_take_turns_hands_over() {
    // Each of the 5 columns sends one message of 8 words a sample on the row's bus, in
    // turn, and takes the other 4: a PE receives 4 messages for every one the busiest
    // sender sends, so the sending passes to another PE 4 / 1 − 1 = 3 times.
    let f = flow(7, "brow", "rrow");
    assert_eq!((f.messages, f.words, f.handovers), (1, 8, 3));
    // A broadcast from one root (column 0): every PE receives as many as the root sends.
    assert_eq!(flow(6, "brow", "rrow").handovers, 0);
}

#[test]
fn a_round_trip_is_seen_on_the_answering_chain() {
    // East: a word relayed after `east`'s switch 2, `if` (1 + compare 1 + subtraction 1) 3
    // and the send's issue 1 = 6 cycles.
    let east = flow(2, "toe", "fromw");
    assert_eq!(
        east,
        ChainFlow {
            messages: 1,
            words: 1,
            relays: 1,
            relay_words: 1,
            relay_work: 6,
            first_relays: false,
            round_trip: false,
            handovers: 0,
            ..ChainFlow::default()
        }
    );
    // West: relayed after `west`'s switch 2, `if` (1 + compare 1) 2 and the issue 1 = 5;
    // the next sample's input waits for it, and its receive was posted after the PE's own
    // send east: a round trip.
    let west = flow(2, "tow", "frome");
    assert_eq!(
        west,
        ChainFlow {
            relay_work: 5,
            round_trip: true,
            handovers: 0,
            ..east
        }
    );
    // A pair that is no chain's: the east sends follow no receive from the east of the same
    // sample.
    assert_eq!(flow(2, "toe", "frome").relays, 0);
}

#[test]
fn a_running_sum_over_two_colours_relays_across_them() {
    // Column 2 receives on colour 2 and sends on colour 1: the chain of colour 1 relays what
    // came on colour 2, its near side (an `in` port from the west; the PE receives nothing on
    // colour 1's own and sends east on nothing else). Relay work as relay_row's, with the
    // colour's `if odd == 0` (the `if`, a load, a compare: 3) in `pass`: add 7, then pass =
    // switch 2 + 3 + 3 + the send's issue 1 = 9. 16 in all. (Before, colour 1's sends followed
    // no receive on its own `in` port: an exchange, one step instead of the row's four.)
    assert_eq!(
        flow(3, "toe_1", "fromw_1"),
        ChainFlow {
            messages: 1,
            words: 8,
            relays: 1,
            relay_words: 8,
            relay_work: 7 + 9,
            first_relays: false,
            round_trip: false,
            handovers: 0,
            ..ChainFlow::default()
        }
    );
    // Colour 2's chain: the centre PE sends nothing on it.
    assert_eq!(flow(3, "toe_2", "fromw_2"), ChainFlow::default());
}

#[test]
fn a_gather_run_once_is_its_far_end_relays() {
    // The kernel sends as much for two samples as for one: its messages pass once, and the
    // first sample waits for them all. Column 4, the far end, relays the 4 blocks from the
    // west (column 2 relays 2), each 3 cycles after it arrives (`pass`'s switch 2, the send's
    // issue 1), then sends its own: 5 messages of 8 words. (Before: no flow per sample, the
    // chain added nothing.)
    assert_eq!(
        flow(4, "toe", "fromw"),
        ChainFlow {
            messages: 5,
            words: 40,
            relays: 4,
            relay_words: 32,
            relay_work: 3,
            first_relays: false,
            round_trip: false,
            handovers: 0,
            ..ChainFlow::default()
        }
    );
}

#[test]
fn a_chain_entered_at_the_edge_relays_at_its_first_pe() {
    // Column 0 passes on what it received from the west edge (the input's `xs`, the same
    // side as the chain's `fromw`, while it receives nothing on `fromw`): its relay is on the
    // sum's way as well. At the centre, the flow and relay work of relay_row (13).
    assert_eq!(
        flow(5, "toe", "fromw"),
        ChainFlow {
            messages: 1,
            words: 8,
            relays: 1,
            relay_words: 8,
            relay_work: 13,
            first_relays: true,
            round_trip: false,
            handovers: 0,
            ..ChainFlow::default()
        }
    );
}

#[test]
fn a_send_answered_by_the_reduction_waits_for_it() {
    // The centre sends its running sum east three times a sample; after each, the first
    // receive it posts is the total on the row's bus (one word), and its next send (the
    // third time: its part south) follows it: three sends wait for their answers.
    let f = flow(8, "toe", "rrow");
    assert_eq!(
        f,
        ChainFlow {
            messages: 3,
            words: 3,
            answered: 3,
            answer_words: 1,
            ..ChainFlow::default()
        }
    );
    // The running sum from the west is no answer: the PE posts its receive only after the
    // total came, though the next send follows it.
    let sum = flow(8, "toe", "fromw");
    assert_eq!((sum.relays, sum.answered), (3, 0));
    // trip_row's statistic east is answered once a sample, along the chain west.
    assert_eq!(flow(2, "toe", "frome").answered, 1);
}

/// The ports of the column kernels below: the layer's x and y, and the chain south.
const COLUMN_PORTS: &str = "    in  xs:    stream<f32> from west;
    out ys:    stream<f32> to east;
    in  fromn: stream<f32> from north;
    out tos:   stream<f32> to south;";

/// A weight-streaming phase's relay step (`KernelWork::phase_work`): a column of 5 PEs
/// on `dev` passes one message of 8 words south per sample, a batch of 3, measured at the
/// centre PE, row 2. `extra` adds work between a relay and the next.
fn phase_step(extra: &str) -> Option<u64> {
    column_relay_step(8, "pass_south", &pass_south(extra))
}

/// The kernel `pass_south(n, samples)`: a relay south per sample, `extra` after each.
fn pass_south(extra: &str) -> String {
    column_kernel(
        "pass_south",
        "pass",
        &format!("send(tos, v[0..n]);\n        {extra}"),
    )
}

/// A kernel `name(n, samples)` on [`COLUMN_PORTS`] whose task `task` takes each sample's
/// message from the north, runs `body` on it, and posts the next receive.
fn column_kernel(name: &str, task: &str, body: &str) -> String {
    format!(
        "kernel {name}(n: u32, samples: u32) {{
    var v: [f32; n];
    var done: u32 = 0;
{COLUMN_PORTS}

    task main() {{
        if samples > 0 {{ recv(fromn, v[0..n]) then {task}; }}
    }}
    task {task}() {{
        {body}
        done += 1;
        if done < samples {{ recv(fromn, v[0..n]) then {task}; }}
    }}
}}
"
    )
}

/// The relay step of `kernel` (named `name`, taking `n` and `samples`) as the streaming
/// implementation of a layer of `width` features, on a 5 × 1 region of `dev` for a batch of 3.
fn column_relay_step(width: u32, name: &str, kernel: &str) -> Option<u64> {
    column_phase(width, name, kernel, |new, layer| {
        new().phase_work(layer, 0, 5, 1)?.relay_step
    })
}

/// What `ask` learns of the phase of `kernel` (named `name`, taking `n` and `samples`) as the
/// streaming implementation of a layer of `width` features, for a batch of 3 on `dev`, given
/// a maker of fresh `KernelDryRuns` and the layer.
fn column_phase<T>(
    width: u32,
    name: &str,
    kernel: &str,
    ask: impl for<'a> FnOnce(&'a dyn Fn() -> KernelDryRuns<'a>, &LayerInstance) -> T,
) -> T {
    let source = format!(
        "model m(x: f32[B, {width}]) -> f32[B, {width}] {{ return down(x); }}
layer down(x: f32[B, N]) -> y: f32[B, N] {{
    cost {{ flops = N; weights = 0; activations = 4 * (N + N); }}
    pipelined, streaming on [R, 1] {{
        run {name}(n = N, samples = B);
        bind x to port xs;
        bind y to port ys;
    }}
}}
{kernel}"
    );
    let mut db = Database::default();
    let file = wsel_sema::set_file(&mut db, Path::new("/phase.wse"), source);
    assert!(wsel_sema::diagnostics(&db, file).is_empty());
    let model = wsel_lower::find_model(&db, file, "m").expect("the model `m`");
    let target = Target::preset("dev").expect("dev");
    let graph = wsel_estimate::lower_for_batch(&db, model, 3).expect("lowers");
    ask(
        &|| KernelDryRuns::new(&db, model, &target),
        &graph.layers[0],
    )
}

/// A phase's floor (`KernelWork::phase_floor`: its centre PE, row 2, alone) for a batch of 3
/// on a column of 5 PEs of `dev` relaying 8 words south per sample, `extra` after each relay;
/// the measure asked after it of the same `KernelDryRuns` (its centre's run kept), and the
/// measure asked alone.
fn floor_and_measures(extra: &str) -> [Option<PhaseDryRun>; 3] {
    column_phase(8, "pass_south", &pass_south(extra), |new, layer| {
        let work = new();
        let floor = work.phase_floor(layer, 0, 5, 1);
        [
            floor,
            work.phase_work(layer, 0, 5, 1),
            new().phase_work(layer, 0, 5, 1),
        ]
    })
}

#[test]
fn a_phase_floor_is_its_centre_under_a_busier_first_row() {
    // Row 0 adds 8 words twice after every relay, the centre does not: its busy cycles are
    // below the measure's (the busiest PE's, row 0's), and its relay step is the measure's.
    let [floor, after_floor, alone] =
        floor_and_measures("if pe.row == 0 { v[0..n] += 1.0; v[0..n] += 1.0; }");
    let (floor, measured) = (floor.expect("a floor"), alone.expect("a measure"));
    assert!(floor.busy < measured.busy, "{floor:?} against {measured:?}");
    assert!(floor.relay_step.is_some());
    assert_eq!(floor.relay_step, measured.relay_step);
    assert_eq!(after_floor, Some(measured));
}

#[test]
fn a_phase_floor_is_its_measure_where_the_centre_is_the_busiest() {
    let [floor, after_floor, alone] = floor_and_measures("if pe.row == 2 { v[0..n] += 1.0; }");
    assert!(alone.is_some());
    assert_eq!([floor, after_floor], [alone, alone]);
}

#[test]
fn a_phase_failing_off_its_centre_has_a_floor_but_no_measure() {
    // The last row divides by zero: the measure fails (the mapper falls back to the
    // multiply-adds), and the floor, from the centre alone, does not see it — the one case
    // where a candidate dropped on its floor might have won (docs/mapping.md §5).
    let [floor, after_floor, alone] =
        floor_and_measures("if pe.row == 4 { done = done / (pe.row - 4); }");
    assert!(floor.is_some());
    assert_eq!([after_floor, alone], [None, None]);
    // A failing centre: neither.
    let centre = floor_and_measures("if pe.row == 2 { done = done / (pe.row - 2); }");
    assert_eq!(centre, [None, None, None]);
}

/// The relay step of a column of 5 PEs on `dev` (a batch of 3, centre row 2) that, like
/// std.nn's `dense_resident`, applies a weight block per sample (from the bound port `xs`) and
/// relays the sample's message of `width` words south only once its block is applied, with
/// room for one applied block (`held` waits for the relay): `work` is the apply's work.
fn gated_step(width: u32, work: &str) -> Option<u64> {
    let kernel = format!(
        "kernel gated_south(n: u32, samples: u32) {{
    var v: [f32; n];
    var w: [f32; n];
    var acc: [f32; n];
    var computed: u32 = 0;
    var done: u32 = 0;
    var held: u32 = 0;
    var waiting: u32 = 0;
{COLUMN_PORTS}

    task main() {{
        recv(xs, w[0..n]) then arrived;
        recv(fromn, v[0..n]) then pass;
    }}
    task arrived() {{
        if computed > done {{ held = 1; }} else {{ activate apply; }}
    }}
    task apply() {{
        {work}
        computed += 1;
        if computed < samples {{ recv(xs, w[0..n]) then arrived; }}
        if waiting == 1 {{ waiting = 0; activate relay; }}
    }}
    task pass() {{
        if computed > done {{ activate relay; }} else {{ waiting = 1; }}
    }}
    task relay() {{
        send(tos, v[0..n]);
        done += 1;
        if done < samples {{ recv(fromn, v[0..n]) then pass; }}
        if held == 1 {{ held = 0; activate apply; }}
    }}
}}
"
    );
    column_relay_step(width, "gated_south", &kernel)
}

#[test]
fn a_phase_relay_step_leaves_out_the_weight_work_the_fabric_overlaps() {
    // The chain's receives come last in the dry run (`trace_late`): the PE applies the
    // blocks it can, then relay 1 (sent at the start of its task) frees `held`'s block and
    // posts receive 2, whose `pass` activates relay 2. From one send to the next: the send's
    // issue 1, `done += 1` 2 (an add and a store), `if done < samples` 3 (the `if`, a load, a
    // compare), the receive's issue 1, `if held == 1` 3, `held = 0` 1, `activate apply` 1;
    // `pass`'s switch 2, `if computed > done` 4 (two loads), `activate relay` 1; relay 2's
    // switch 2: 21 cycles, and no apply among them. The step adds the message's words.
    // (The step between the last two relays, before: no relay at all was seen, because
    // relay 2 followed apply 2, whose causal past holds receive 1 only; the default chain
    // took over. An apply on the path would have put its work in the step.)
    let one_add = "acc[0..n] += w[0..n];";
    let sixteen = "for t in 0 .. 16 { acc[0..n] += w[0..n]; }";
    assert_eq!(gated_step(8, one_add), Some(8 + 21));
    assert_eq!(gated_step(8, sixteen), Some(8 + 21));
    assert_eq!(gated_step(32, one_add), Some(32 + 21));
    assert_eq!(gated_step(32, sixteen), Some(32 + 21));
}

#[test]
fn a_phase_relay_step_is_a_message_and_the_work_between_two_relays() {
    // The message, 8 wavelets, and from one relay to the next: the send's issue 1, `done +=
    // 1` 2 (a store and its add), `if done < samples` 3 (the `if`, the compare, the load), the
    // receive's issue 1, and the next `pass`'s switch 2 = 9.
    assert_eq!(phase_step(""), Some(8 + 9));
    // `v += v`: 8 adds at 2 a cycle, 4 cycles more between one relay and the next.
    assert_eq!(phase_step("v[0..n] += v[0..n];"), Some(8 + 9 + 4));
}

/// The kernel `keep_north(n, samples)`: each sample's message from the north kept, `extra`
/// done on it, before the next receive is posted.
fn keep_north(extra: &str) -> String {
    column_kernel("keep_north", "keep", extra)
}

/// The keep turn of `kernel` (see [`column_relay_step`] for the phase).
fn column_keep_turn(name: &str, kernel: &str) -> Option<u64> {
    column_phase(8, name, kernel, |new, layer| {
        new().phase_work(layer, 0, 5, 1)?.keep_turn
    })
}

#[test]
fn a_phase_keep_turn_is_the_work_on_a_kept_message_before_the_next_transfer() {
    // A PE that passes on every message it takes keeps none.
    assert_eq!(column_keep_turn("pass_south", &pass_south("")), None);
    // One that keeps them: from the receive's task to the next receive's post. `v += v`
    // (8 adds at 2 a cycle) puts 4 cycles more between them.
    let plain = column_keep_turn("keep_north", &keep_north("")).expect("a keep");
    let more = column_keep_turn("keep_north", &keep_north("v[0..n] += v[0..n];"));
    assert_eq!(more, Some(plain + 4));
}
