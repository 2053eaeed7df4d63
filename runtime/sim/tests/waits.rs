//! Receive waits per PE and color (`PeActivity::waits`), each derived by hand in the comments.
//!
//! The rule (see the crate README): a cycle counts as a wait on color `c` for a PE when the
//! PE runs no task in it and has a posted receive on `c` that is not complete. A receive is
//! posted at its issue cycle and complete at the cycle its last wavelet is written (so that
//! cycle is not a wait). Waits before the first wavelet of `c` is written to the PE go to
//! `before_first`, the rest (from that cycle on) to `after_first`.

mod common;

use common::{route, run_agreeing, target};
use wsel_sim::{ColorWait, EdgeInput, EdgeSource, Outcome, Program, TaskContext, task};
use wsel_target::{Coord, Dir, Port, PortSet};

/// The waits of the PE at `at`.
fn waits(out: &Outcome, at: Coord) -> Vec<ColorWait> {
    out.report
        .pes
        .iter()
        .find(|p| p.x == at.x && p.y == at.y)
        .map(|p| p.waits.clone())
        .expect("a PE there")
}

fn wait(color: u8, first: u64, before: u64, after: u64) -> ColorWait {
    ColorWait {
        color,
        first_delivery: Some(first),
        before_first: before,
        after_first: after,
    }
}

/// L = 2, S = 2, queue depth 4. A sender at `(0, 0)` sends `n` words on color 0 to a PE
/// `hops` east at its launch (issued at t0 = S = 2). The receiver's launch task posts
/// receives of `parts` words (all at its issue cycle 2), then charges `compute` cycles; each
/// receive's completion task charges nothing.
fn stream(hops: u32, n: u32, parts: &[u32], compute: u64) -> Outcome {
    let t = target(2, 2, 4);
    let mut p = Program::new();
    let send = p.add_kernel(
        "send",
        vec![(
            "main",
            task(move |ctx: &mut TaskContext<'_>| ctx.send(0, 0, n, None)),
        )],
    );
    let parts = parts.to_vec();
    let recv = p.add_kernel(
        "recv",
        vec![
            (
                "main",
                task(move |ctx: &mut TaskContext<'_>| {
                    let mut at = 0;
                    for &k in &parts {
                        ctx.recv(0, k, 4 * at, 1)?;
                        at += k;
                    }
                    ctx.add_cycles(compute);
                    Ok(())
                }),
            ),
            ("done", task(|_: &mut TaskContext<'_>| Ok(()))),
        ],
    );
    let (a, b) = (Coord::new(0, 0), Coord::new(hops, 0));
    p.add_pe(a, send, 4 * n, &[0], &[0]);
    p.add_pe(b, recv, 4 * n, &[0], &[0]);
    route(&t, &mut p, 0, a, b);
    run_agreeing(&t, &p)
}

#[test]
fn a_receive_waits_for_the_hops_then_for_the_stream() {
    // h = 6, L = 2, n = 50. The receive is posted at 2, when the launch task (busy
    // max(1, S) = 2 cycles from 0) has ended. Wavelet i is written at 2 + i + h·L = 14 + i:
    // the first at 14, the last at 63, which completes the receive.
    // before_first = [2, 14) = h·L = 12 cycles; after_first = [14, 63) = n − 1 = 49 cycles.
    let out = stream(6, 50, &[50], 0);
    assert_eq!(waits(&out, Coord::new(6, 0)), vec![wait(0, 14, 12, 49)]);
    // The sender never received anything.
    assert!(waits(&out, Coord::new(0, 0)).is_empty());
    assert_eq!(out.express.started, 1);
}

#[test]
fn a_pe_computing_while_its_data_arrives_does_not_wait() {
    // As above, but the launch task computes 200 cycles after posting the receive: it runs
    // until 2 + 200 = 202, and the data is complete at 63. No idle cycle had an open
    // receive.
    let out = stream(6, 50, &[50], 200);
    assert_eq!(waits(&out, Coord::new(6, 0)), vec![wait(0, 14, 0, 0)]);
    // Computing 30 cycles (until 32): the PE waits from 32 to 63, all after the first
    // delivery at 14.
    let out = stream(6, 50, &[50], 30);
    assert_eq!(waits(&out, Coord::new(6, 0)), vec![wait(0, 14, 0, 31)]);
}

#[test]
fn the_task_between_two_receives_is_not_a_wait() {
    // h = 6, n = 10 in two receives of 5, both posted at 2. Wavelet i is written at 14 + i;
    // the first receive completes at 18 (the second is still open), its task is ready at 19
    // and runs S = 2 cycles, [19, 21); the second completes at 23.
    // before_first = [2, 14) = 12; after_first = [14, 19) + [21, 23) = 5 + 2 = 7 = n − 1 − S.
    let out = stream(6, 10, &[5, 5], 0);
    assert_eq!(waits(&out, Coord::new(6, 0)), vec![wait(0, 14, 12, 7)]);
    assert_eq!(out.cycles, 26);
}

#[test]
fn a_paced_stream_stalls_its_receiver_between_wavelets() {
    // L = 2, S = 2: one host stream in a pool of 1 byte/cycle moves one wavelet every 4
    // cycles. Wavelet j enters (0, 0) at 4j and is written at the PE h = 3 hops east at
    // 4j + h·L = 4j + 6. The receive of n = 10 is posted at S = 2.
    // before_first = [2, 6) = 4; after_first = [6, 6 + 4(n − 1)) = 36 cycles. The task is
    // ready at 43 and ends at 45.
    let mut t = target(2, 2, 4);
    t.host_io.bandwidth_bytes_per_cycle = 1;
    let mut p = Program::new();
    let recv = p.add_kernel(
        "recv",
        vec![
            (
                "main",
                task(|ctx: &mut TaskContext<'_>| ctx.recv(0, 10, 0, 1)),
            ),
            ("done", task(|_: &mut TaskContext<'_>| Ok(()))),
        ],
    );
    p.inputs.push(EdgeInput {
        at: Coord::new(0, 0),
        side: Dir::West,
        color: 0,
        data: (0..10).collect(),
        source: EdgeSource::Host,
        start: 0,
        phase: 0,
    });
    for x in 0..3 {
        p.add_route(
            Coord::new(x, 0),
            0,
            PortSet::only(Port::W),
            PortSet::only(Port::E),
        );
    }
    p.add_route(
        Coord::new(3, 0),
        0,
        PortSet::only(Port::W),
        PortSet::only(Port::Ramp),
    );
    p.add_pe(Coord::new(3, 0), recv, 40, &[0], &[0]);
    let out = run_agreeing(&t, &p);
    assert_eq!(waits(&out, Coord::new(3, 0)), vec![wait(0, 6, 4, 36)]);
    assert_eq!(out.cycles, 45);
    let json: serde_json::Value = serde_json::from_str(&out.report.to_json()).expect("JSON");
    assert_eq!(json["pes"][0]["waits"][0]["after_first"], 36);
    assert_eq!(json["pes"][0]["waits"][0]["first_delivery"], 6);
}
