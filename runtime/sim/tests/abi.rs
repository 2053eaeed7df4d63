//! Compiled task code through the C ABI: hand-written `extern "C"` functions run through the
//! `AbiTask` adapter and behave exactly like the equivalent Rust closures.

mod common;

use common::{route, target, threads};
use std::sync::Arc;
use wsel_abi::{NO_TASK, STATUS_CYCLE_LIMIT, STATUS_OK, TaskCtx};
use wsel_sim::{AbiTask, Program, SimError, TaskCode, TaskContext, TaskFault, simulate, task};
use wsel_target::Coord;

/// Sender: writes `args[0] + x` into SRAM word 0, charges 3 cycles, sends the word on port 0,
/// then sends the scalar `width * 100 + height` on port 0.
unsafe extern "C" fn abi_sender(ctx: *mut TaskCtx) -> u32 {
    // SAFETY: the runtime passes a valid context; `sram` holds at least 4 bytes (the program
    // gives this PE 16) and `args` at least one word.
    unsafe {
        let c = &mut *ctx;
        let v = *c.args + c.x;
        (c.sram as *mut u32).write_unaligned(v.to_le());
        c.cycles += 3;
        let calls = &*c.calls;
        let s = (calls.send)(ctx, 0, 0, 1, NO_TASK);
        if s != STATUS_OK {
            return s;
        }
        let c = &mut *ctx;
        (calls.send_scalar)(ctx, 0, c.width * 100 + c.height, NO_TASK)
    }
}

/// Receiver: posts a receive of 2 wavelets into byte 4, then task 1.
unsafe extern "C" fn abi_receiver(ctx: *mut TaskCtx) -> u32 {
    // SAFETY: the runtime passes a valid context.
    unsafe { ((*(*ctx).calls).recv)(ctx, 0, 2, 4, 1) }
}

/// Completion: charges 2 cycles.
unsafe extern "C" fn abi_done(ctx: *mut TaskCtx) -> u32 {
    // SAFETY: the runtime passes a valid context.
    unsafe { (*ctx).cycles += 2 };
    STATUS_OK
}

/// Reports an out-of-bounds access of array 4, index 9, length 3.
unsafe extern "C" fn abi_oob(ctx: *mut TaskCtx) -> u32 {
    // SAFETY: the runtime passes a valid context.
    unsafe { ((*(*ctx).calls).out_of_bounds)(ctx, 4, 9, 3) }
}

/// Sends past the end of SRAM.
unsafe extern "C" fn abi_bad_send(ctx: *mut TaskCtx) -> u32 {
    // SAFETY: the runtime passes a valid context.
    unsafe { ((*(*ctx).calls).send)(ctx, 0, 12, 2, NO_TASK) }
}

/// Spins like a compiled endless loop: 7 cycles per iteration, stopping with
/// `STATUS_CYCLE_LIMIT` once past the context's limit; returns 99 at once if the limit is not
/// the one `compiled_loops_stop_at_the_cycle_budget` derives (983).
unsafe extern "C" fn abi_spin(ctx: *mut TaskCtx) -> u32 {
    // SAFETY: the runtime passes a valid context.
    let c = unsafe { &mut *ctx };
    if c.cycle_limit != 983 {
        return 99;
    }
    loop {
        c.cycles += 7;
        if c.cycles > c.cycle_limit {
            return STATUS_CYCLE_LIMIT;
        }
    }
}

fn abi(f: wsel_abi::TaskFn) -> Arc<dyn TaskCode> {
    // SAFETY: the functions above follow the ABI contract.
    Arc::new(unsafe { AbiTask::new(f) })
}

fn program(
    sender: Arc<dyn TaskCode>,
    receiver: Arc<dyn TaskCode>,
    done: Arc<dyn TaskCode>,
) -> Program {
    let t = target(2, 2, 4);
    let mut p = Program::new();
    let ks = p.add_kernel("sender", vec![("send", sender)]);
    let kr = p.add_kernel("receiver", vec![("recv", receiver), ("done", done)]);
    let s = p.add_pe(Coord::new(1, 3), ks, 16, &[0], &[0]);
    p.pes[s].args = vec![40];
    p.pes[s].region = wsel_target::Rect::new(0, 3, 4, 2);
    p.add_pe(Coord::new(5, 3), kr, 16, &[0], &[0]);
    route(&t, &mut p, 0, Coord::new(1, 3), Coord::new(5, 3));
    p
}

#[test]
fn compiled_tasks_match_rust_closures() {
    let t = target(2, 2, 4);
    let native = program(abi(abi_sender), abi(abi_receiver), abi(abi_done));
    let closures = program(
        task(|ctx: &mut TaskContext<'_>| {
            let v = ctx.args()[0] + ctx.coords().0;
            ctx.write_u32(0, v)?;
            ctx.add_cycles(3);
            ctx.send(0, 0, 1, None)?;
            let (w, h) = ctx.region_size();
            ctx.send_scalar(0, w * 100 + h, None)
        }),
        task(|ctx: &mut TaskContext<'_>| ctx.recv(0, 2, 4, 1)),
        task(|ctx: &mut TaskContext<'_>| {
            ctx.add_cycles(2);
            Ok(())
        }),
    );
    let a = simulate(&t, &native, &threads(1)).expect("native runs");
    let b = simulate(&t, &closures, &threads(1)).expect("closures run");
    // Sender: launch at 0, sends issued at S + 3 = 5 (word) and 5 (scalar, injected at 6).
    // 4 hops of L = 2: the scalar is delivered at 6 + 8 = 14, `done` is ready at 15 and runs
    // S + 2 = 4 cycles: 19.
    assert_eq!(a.cycles, 19);
    assert_eq!(a.cycles, b.cycles);
    assert_eq!(a.report, b.report);
    // x = 1 inside the region starting at column 0: 40 + 1; region 4 × 2.
    assert_eq!(a.read_u32s(Coord::new(5, 3), 4, 2), Some(vec![41, 402]));
    assert_eq!(
        a.read_u32s(Coord::new(5, 3), 4, 2),
        b.read_u32s(Coord::new(5, 3), 4, 2)
    );
}

#[test]
fn compiled_tasks_report_errors_through_the_runtime() {
    let t = target(2, 2, 4);
    let p = program(abi(abi_oob), abi(abi_receiver), abi(abi_done));
    let err = simulate(&t, &p, &threads(1)).expect_err("oob");
    assert!(
        matches!(
            &err,
            SimError::Task {
                fault: TaskFault::OutOfBounds {
                    array: 4,
                    index: 9,
                    bound: 3
                },
                ..
            }
        ),
        "{err:?}"
    );
    let p = program(abi(abi_bad_send), abi(abi_receiver), abi(abi_done));
    let err = simulate(&t, &p, &threads(1)).expect_err("range");
    assert_eq!(
        err.to_string(),
        "PE (1, 3), task 0 `send`, cycle 0: SRAM access of 8 bytes at byte 12 is beyond this PE's 16 bytes of SRAM"
    );
}

#[test]
fn compiled_loops_stop_at_the_cycle_budget() {
    let t = target(2, 2, 4);
    let p = program(abi(abi_sender), abi(abi_receiver), abi(abi_spin));
    // As in `compiled_tasks_match_rust_closures`, `done` is ready at 15; it starts after the
    // task switch (S = 2) at 17, so of a budget of 1,000 cycles 983 are left for its loop.
    let options = wsel_sim::SimOptions {
        max_cycles: Some(1000),
        ..threads(1)
    };
    let err = simulate(&t, &p, &options).expect_err("the budget stops the loop");
    assert_eq!(
        err.to_string(),
        "PE (5, 3), task 1 `done`, cycle 15: the task was still running when the budget of 1000 cycles ran out (an endless loop?)"
    );
}
