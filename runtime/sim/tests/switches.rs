//! Router switches and control wavelets: exact cycle counts, derived by hand in the comments.
//!
//! The rules (see the crate README, "Router switches"): a switched route's queues forward
//! their head where the router's *current* position sends it, and hold it while the position
//! does not receive from the queue's port. A control wavelet is routed by the current
//! position; when it has left the router's queue the router applies its command (the lowest
//! two bits: nop, advance, reset) and the wavelet goes on with its commands shifted by one
//! hop. The ramp never delivers a control wavelet to a PE. The new position holds for the
//! wavelets leaving after it (a queue it opens moves from the next cycle when its port was
//! served before in that cycle).
//!
//! All runs: hop latency L = 2, task switch S = 2, queue depth 4. A send issued at `t0`
//! injects its wavelet at `t0` (one per cycle per PE, in issue order on one color) and the
//! router forwards it in the same cycle; it arrives one hop on at `+ L` and can be forwarded
//! or delivered in that cycle; a receive completing at `d` readies its task at `d + 1`, which
//! runs `S` cycles.

mod common;

use common::{run_agreeing, streams, target, threads};
use std::sync::Arc;
use wsel_abi::{CONTROL_PORT, NO_TASK, STATUS_OK, TaskCtx};
use wsel_sim::{
    AbiTask, Program, SwitchCommand, SwitchPosition, TaskCode, TaskContext, simulate, task,
};
use wsel_target::{Coord, Port, PortSet};

use SwitchCommand::{Advance, Nop, Reset};

const EAST: PortSet = PortSet::only(Port::E);
const WEST: PortSet = PortSet::only(Port::W);
const RAMP: PortSet = PortSet::only(Port::Ramp);

/// Three PEs in a row: A sends 7 east at launch; B's route is RAMP → EAST in position 0 and
/// WEST → EAST in position 1 (CSL `pos1 = {rx = WEST}`), starting at 0; B waits `wait`
/// cycles, sends 8 and then (if `control`) a control wavelet advancing its own switch; C
/// receives two words.
fn held_back(wait: u64, control: bool) -> Result<wsel_sim::Outcome, wsel_sim::SimError> {
    held_back_by(task(move |ctx: &mut TaskContext<'_>| {
        ctx.add_cycles(wait);
        ctx.send_scalar(0, 8, None)?;
        if control {
            ctx.send_control(0, &[Advance], None)?;
        }
        Ok(())
    }))
}

/// [`held_back`] with B running `b`.
fn held_back_by(b: Arc<dyn TaskCode>) -> Result<wsel_sim::Outcome, wsel_sim::SimError> {
    let t = target(2, 2, 4);
    let mut p = Program::new();
    let a = p.add_kernel(
        "a",
        vec![(
            "main",
            task(|ctx: &mut TaskContext<'_>| ctx.send_scalar(0, 7, None)),
        )],
    );
    let b = p.add_kernel("b", vec![("main", b)]);
    let c = streams::receiver(&mut p, 2, 0);
    let (pa, pb, pc) = (Coord::new(0, 0), Coord::new(1, 0), Coord::new(2, 0));
    p.add_pe(pa, a, 8, &[0], &[0]);
    p.add_pe(pb, b, 8, &[0], &[0]);
    p.add_pe(pc, c, 8, &[0], &[0]);
    p.add_route(pa, 0, RAMP, EAST);
    p.add_route(pb, 0, RAMP, EAST);
    assert!(p.set_switch(pb, 0, &[SwitchPosition::rx(WEST)], 0, false));
    p.add_route(pc, 0, WEST, RAMP);
    let out = simulate(&t, &p, &threads(1))?;
    assert_eq!(out.read_u32s(pc, 0, 2).expect("sram"), vec![8, 7]);
    // The same on two threads (a program with switches runs in one partition).
    assert_eq!(simulate(&t, &p, &threads(2))?.cycles, out.cycles);
    Ok(out)
}

#[test]
fn data_waits_until_a_control_wavelet_opens_the_switch() {
    // A's send is issued at S = 2: 7 leaves A at 2 and reaches B's west queue at 4, where
    // position 0 (RAMP → EAST) holds it. B charges 10 cycles: its two sends are issued at
    // S + 10 = 12; 8 is injected and forwarded east at 12 (reaching C at 14, delivered), the
    // control wavelet at 13. When it has left, B advances to position 1 (WEST → EAST); port E
    // was served in cycle 13, so 7 leaves at 14 and reaches C at 16: C's receive of two
    // completes at 16 (the control wavelet reached C at 15 and was dropped, not delivered),
    // its task is ready at 17 and runs S = 2 cycles: 19.
    let out = held_back(10, true).expect("runs");
    assert_eq!(out.cycles, 19);
    // B waiting 20 cycles more delays everything by 20: 7 waits for the switch.
    assert_eq!(held_back(30, true).expect("runs").cycles, 39);
}

/// B of [`held_back`] (`wait` = 10, with the control wavelet) as compiled code calls it:
/// `send_scalar` on the port marked `CONTROL_PORT` with the payload of `[adv]`.
unsafe extern "C" fn abi_b(ctx: *mut TaskCtx) -> u32 {
    // SAFETY: the runtime passes a valid context.
    unsafe {
        (*ctx).cycles += 10;
        let calls = &*(*ctx).calls;
        let s = (calls.send_scalar)(ctx, 0, 8, NO_TASK);
        if s != STATUS_OK {
            return s;
        }
        let payload = wsel_abi::control_payload([1]);
        (calls.send_scalar)(ctx, CONTROL_PORT, payload, NO_TASK)
    }
}

#[test]
fn compiled_code_sends_control_wavelets_through_the_abi() {
    // The same run as `data_waits_until_a_control_wavelet_opens_the_switch`: 19 cycles.
    // SAFETY: `abi_b` follows the ABI contract.
    let b: Arc<dyn TaskCode> = Arc::new(unsafe { AbiTask::new(abi_b) });
    assert_eq!(held_back_by(b).expect("runs").cycles, 19);
}

#[test]
fn without_the_control_wavelet_the_held_data_never_moves() {
    // Position 0 never receives from the west: 7 stays in B's queue and C waits for its
    // second word forever.
    assert!(held_back(10, false).is_err());
}

/// A sends five wavelets on color 0: 1, a control wavelet advancing B's switch (`[Nop, Advance]`: A's router has none), 2, a control
/// wavelet with `commands`, 3. B's switch (ring mode or not): position 0 WEST → RAMP, 1
/// WEST → EAST (CSL `pos1 = {tx = EAST}`); C takes what B passes on. Returns the cycles and
/// the words B and C received.
fn toggled(
    ring: bool,
    commands: &[SwitchCommand],
    b_n: u32,
    c_n: u32,
) -> (u64, Vec<u32>, Vec<u32>) {
    let t = target(2, 2, 4);
    let mut p = Program::new();
    let commands = commands.to_vec();
    let a = p.add_kernel(
        "a",
        vec![(
            "main",
            task(move |ctx: &mut TaskContext<'_>| {
                ctx.send_scalar(0, 1, None)?;
                ctx.send_control(0, &[Nop, Advance], None)?;
                ctx.send_scalar(0, 2, None)?;
                ctx.send_control(0, &commands, None)?;
                ctx.send_scalar(0, 3, None)
            }),
        )],
    );
    let b = streams::receiver(&mut p, b_n, 0);
    let c = streams::receiver(&mut p, c_n, 0);
    let (pa, pb, pc) = (Coord::new(0, 0), Coord::new(1, 0), Coord::new(2, 0));
    p.add_pe(pa, a, 8, &[0], &[0]);
    p.add_pe(pb, b, 8, &[0], &[0]);
    p.add_pe(pc, c, 8, &[0], &[0]);
    p.add_route(pa, 0, RAMP, EAST);
    p.add_route(pb, 0, WEST, RAMP);
    assert!(p.set_switch(pb, 0, &[SwitchPosition::tx(EAST)], 0, ring));
    p.add_route(pc, 0, WEST, RAMP);
    let out = run_agreeing(&t, &p);
    let got_b = out.read_u32s(pb, 0, b_n).expect("sram");
    let got_c = out.read_u32s(pc, 0, c_n).expect("sram");
    (out.cycles, got_b, got_c)
}

#[test]
fn ring_mode_wraps_to_position_zero() {
    // A's five sends are issued at S = 2 and leave A at 2, 3, 4, 5, 6, reaching B at 4 … 8.
    // 4: word 1, position 0 → B's ramp (delivered). 5: the control wavelet goes to the ramp
    // (dropped) and B advances to 1. 6: word 2 goes east (reaches C at 8, delivered).
    // 7: the second control wavelet goes east (C drops it at 9) and B, in ring mode, wraps
    // to 0. 8: word 3 → B's ramp. B's receive of two completes at 8, C's of one at 8: both
    // tasks are ready at 9 and run S = 2 cycles: 11.
    let (cycles, b, c) = toggled(true, &[Nop, Advance], 2, 1);
    assert_eq!((cycles, b, c), (11, vec![1, 3], vec![2]));
}

#[test]
fn without_ring_mode_the_last_position_stays() {
    // As in ring mode up to cycle 7, where B stays at position 1: word 3 goes east at 8 and
    // reaches C at 10. B's receive of one completed at 4 (its task ran 5..7); C's of two
    // completes at 10, its task is ready at 11 and ends at 13.
    let (cycles, b, c) = toggled(false, &[Nop, Advance], 1, 2);
    assert_eq!((cycles, b, c), (13, vec![1], vec![2, 3]));
}

#[test]
fn reset_returns_to_position_zero() {
    // As without ring mode, but the second control wavelet resets B to 0 at 7: word 3 goes to
    // B's ramp at 8, as in ring mode: 11.
    let (cycles, b, c) = toggled(false, &[Nop, Reset], 2, 1);
    assert_eq!((cycles, b, c), (11, vec![1, 3], vec![2]));
}

#[test]
fn a_control_wavelet_needs_a_switched_color() {
    // Color 0 has no switch anywhere: the send fails with a fault naming the port.
    let t = target(2, 2, 4);
    let mut p = Program::new();
    let a = p.add_kernel(
        "a",
        vec![(
            "main",
            task(|ctx: &mut TaskContext<'_>| ctx.send_control(0, &[Advance], None)),
        )],
    );
    let c = streams::receiver(&mut p, 1, 0);
    let (pa, pc) = (Coord::new(0, 0), Coord::new(1, 0));
    p.add_pe(pa, a, 8, &[0], &[0]);
    p.add_pe(pc, c, 8, &[0], &[0]);
    p.add_route(pa, 0, RAMP, EAST);
    p.add_route(pc, 0, WEST, RAMP);
    let err = simulate(&t, &p, &threads(1)).expect_err("fails");
    assert!(
        err.to_string().contains("has no switch"),
        "unexpected error: {err}"
    );
}

#[test]
fn one_control_wavelet_advances_a_chain_of_routers() {
    // A → B → C → D along a row. B and C: position 0 WEST → EAST (pass), 1 WEST → RAMP
    // (CSL `pos1 = {tx = RAMP}`); D takes what reaches it. A sends 1, a control wavelet
    // [nop, adv, adv] (A's router, B, C), 2, a control wavelet [nop, reset], 3: issued at
    // S = 2, they leave A at 2 … 6 and reach B at 4 … 8.
    // B: 4: 1 goes east (C at 6). 5: the first control wavelet goes east (C at 7), then B
    // advances to 1. 6: 2 goes to B's ramp (its receive completes). 7: the second control
    // wavelet goes to the ramp (dropped) and resets B to 0. 8: 3 goes east (C at 10).
    // C: 6: 1 goes east (D at 8, its receive completes). 7: the first control wavelet, its
    // commands shifted by B, goes east (D drops it at 9) and advances C to 1. 10: 3 goes to
    // C's ramp: its receive completes at 10, its task is ready at 11 and ends at 13.
    let t = target(2, 2, 4);
    let mut p = Program::new();
    let a = p.add_kernel(
        "a",
        vec![(
            "main",
            task(|ctx: &mut TaskContext<'_>| {
                ctx.send_scalar(0, 1, None)?;
                ctx.send_control(0, &[Nop, Advance, Advance], None)?;
                ctx.send_scalar(0, 2, None)?;
                ctx.send_control(0, &[Nop, Reset], None)?;
                ctx.send_scalar(0, 3, None)
            }),
        )],
    );
    let r = streams::receiver(&mut p, 1, 0);
    let at: Vec<Coord> = (0..4).map(|x| Coord::new(x, 0)).collect();
    p.add_pe(at[0], a, 8, &[0], &[0]);
    for &pe in &at[1..] {
        p.add_pe(pe, r, 8, &[0], &[0]);
    }
    p.add_route(at[0], 0, RAMP, EAST);
    for &pe in &at[1..3] {
        p.add_route(pe, 0, WEST, EAST);
        assert!(p.set_switch(pe, 0, &[SwitchPosition::tx(RAMP)], 0, false));
    }
    p.add_route(at[3], 0, WEST, RAMP);
    let out = run_agreeing(&t, &p);
    let got: Vec<u32> = at[1..]
        .iter()
        .map(|&pe| out.read_u32s(pe, 0, 1).expect("sram")[0])
        .collect();
    assert_eq!((out.cycles, got), (13, vec![2, 3, 1]));
}

/// A sends `n` words (1 … n) east through B to C on color 0, on `t`. A's route is RAMP →
/// EAST and B's WEST → EAST, both switched (a second position, `rx = WEST` at A, `tx = RAMP`
/// at B, that no control wavelet selects; B's PE idles); C's is a plain WEST → RAMP.
fn paced_chain(t: &wsel_target::Target, n: u32) -> u64 {
    let mut p = Program::new();
    let a = streams::sender(&mut p, n, 1);
    let idle = p.add_kernel(
        "idle",
        vec![("main", task(|_: &mut TaskContext<'_>| Ok(())))],
    );
    let c = streams::receiver(&mut p, n, 0);
    let (pa, pb, pc) = (Coord::new(0, 0), Coord::new(1, 0), Coord::new(2, 0));
    p.add_pe(pa, a, 4 * n, &[0], &[0]);
    p.add_pe(pb, idle, 4, &[0], &[0]);
    p.add_pe(pc, c, 4 * n, &[0], &[0]);
    p.add_route(pa, 0, RAMP, EAST);
    assert!(p.set_switch(pa, 0, &[SwitchPosition::rx(WEST)], 0, false));
    p.add_route(pb, 0, WEST, EAST);
    assert!(p.set_switch(pb, 0, &[SwitchPosition::tx(RAMP)], 0, false));
    p.add_route(pc, 0, WEST, RAMP);
    let out = run_agreeing(t, &p);
    let want: Vec<u32> = (1..=n).collect();
    assert_eq!(out.read_u32s(pc, 0, n).expect("sram"), want);
    out.cycles
}

#[test]
fn a_switched_route_moves_a_wavelet_every_period() {
    // East at 2.5 cycles per wavelet (`[switched] east = 2.5`). A's send of 5 is issued at
    // S = 2 and its ramp injects a wavelet per cycle from 2 (the queue holds 4). A's pace
    // releases at 0; the first wavelet leaves at 2, more than a cycle after its release, so
    // the period restarts there: releases 4.5, 7, 9.5, 12, each leaving at the first whole
    // cycle at or after it: A sends at 2, 5, 7, 10, 12, reaching B at 4, 7, 9, 12, 14.
    // B's pace: 4 (restarts: next 6.5), 7 (≥ 6.5, within a cycle: next 9), 9 (next 11.5),
    // 12 (next 14), 14: it passes each on as it arrives, reaching C at 6, 9, 11, 14, 16.
    // C's receive of 5 completes at 16, its task is ready at 17 and ends at 19.
    let mut t = target(2, 2, 4);
    t.switched.east = 2.5;
    assert_eq!(paced_chain(&t, 5), 19);
    // At a wavelet per cycle A sends at 2 … 6, C takes them at 6 … 10: its task ends at 13.
    assert_eq!(paced_chain(&target(2, 2, 4), 5), 13);
    // The pace is per direction: westward only leaves the eastward chain at 13.
    let mut west = target(2, 2, 4);
    west.switched.west = 2.5;
    assert_eq!(paced_chain(&west, 5), 13);
}

#[test]
fn a_pace_of_whole_cycles_spaces_every_wavelet() {
    // East at 3: A sends at 2, 5, 8, 11, 14, 17 (each a period after the one before, the
    // first restarting the pace), B passes each on as it arrives (4, 7, …, 19: its pace
    // allows one every 3), C takes them at 6, 9, …, 21: its task ends at 21 + 1 + 2 = 24.
    let mut t = target(2, 2, 4);
    t.switched.east = 3.0;
    assert_eq!(paced_chain(&t, 6), 24);
}
