//! A fake runtime: a `RuntimeCalls` table of `extern "C"` functions that record every call
//! (with the context's cycle count at the call, i.e. its issue time) into a `FakeRuntime`
//! reached through `ctx.runtime`.

use std::ffi::c_void;

use wsel_abi::{RuntimeCalls, STATUS_OK, STATUS_OUT_OF_BOUNDS, TaskCtx};
use wsel_codegen::CompiledKernel;
use wsel_ir::kernel::TaskId;

/// This PE's place in its region.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pe {
    pub x: u32,
    pub y: u32,
    pub width: u32,
    pub height: u32,
}

/// One runtime call, with `ctx.cycles` when it was made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A slice send, with the words it read from SRAM at the call.
    Send {
        port: u32,
        offset: u32,
        data: Vec<u32>,
        then: u32,
        cycles: u64,
    },
    SendScalar {
        port: u32,
        value: u32,
        then: u32,
        cycles: u64,
    },
    Recv {
        port: u32,
        n: u32,
        offset: u32,
        then: u32,
        cycles: u64,
    },
    Activate {
        task: u32,
        cycles: u64,
    },
    OutOfBounds {
        array: u32,
        index: u64,
        bound: u64,
        cycles: u64,
    },
}

pub struct FakeRuntime {
    pub events: Vec<Event>,
    /// Fail the n-th call (not counting out-of-bounds reports) with this status.
    fail_call: Option<(usize, u32)>,
}

pub const CALLS: RuntimeCalls = RuntimeCalls {
    send,
    send_scalar,
    recv,
    activate,
    out_of_bounds,
};

impl FakeRuntime {
    pub fn new(fail_call: Option<(usize, u32)>) -> Self {
        FakeRuntime {
            events: Vec::new(),
            fail_call,
        }
    }

    /// Runs `task` over `memory`, of which the first `sram_words` are the PE's SRAM, with loops
    /// stopping past `cycle_limit`; gives the status and the final cycle count.
    pub fn call(
        &mut self,
        compiled: &CompiledKernel,
        task: TaskId,
        memory: &mut [u32],
        sram_words: usize,
        pe: Pe,
        cycle_limit: u64,
    ) -> (u32, u64) {
        assert!(sram_words <= memory.len());
        let mut ctx = TaskCtx {
            sram: memory.as_mut_ptr().cast(),
            sram_len: (sram_words * 4) as u32,
            task: task.0,
            x: pe.x,
            y: pe.y,
            width: pe.width,
            height: pe.height,
            args: std::ptr::null(),
            n_args: 0,
            reserved: 0,
            cycles: 0,
            runtime: (self as *mut FakeRuntime).cast::<c_void>(),
            calls: &CALLS,
            cycle_limit,
            clock: 0,
        };
        // SAFETY: the context points at live memory of `sram_words` words, a valid table and
        // this runtime, all outliving the call.
        let status = unsafe { compiled.run(task, &mut ctx) };
        (status, ctx.cycles)
    }

    fn record(&mut self, event: Event) -> u32 {
        let calls = self
            .events
            .iter()
            .filter(|e| !matches!(e, Event::OutOfBounds { .. }))
            .count();
        self.events.push(event);
        match self.fail_call {
            Some((n, status)) if n == calls => status,
            _ => STATUS_OK,
        }
    }
}

/// # Safety
/// `ctx` must be the context `FakeRuntime::call` built.
unsafe fn runtime<'a>(ctx: *mut TaskCtx) -> (&'a mut FakeRuntime, &'a TaskCtx) {
    // SAFETY: `ctx.runtime` is the `FakeRuntime` that made the call, alive and not otherwise
    // borrowed during it.
    unsafe { (&mut *(*ctx).runtime.cast::<FakeRuntime>(), &*ctx) }
}

unsafe extern "C" fn send(ctx: *mut TaskCtx, port: u32, offset: u32, n: u32, then: u32) -> u32 {
    // SAFETY: called by compiled code with its context.
    let (rt, ctx) = unsafe { runtime(ctx) };
    assert!(u64::from(offset) + 4 * u64::from(n) <= u64::from(ctx.sram_len));
    let data = (0..n as usize)
        // SAFETY: the range is inside SRAM (asserted above) and word-aligned.
        .map(|i| unsafe { ctx.sram.add(offset as usize).cast::<u32>().add(i).read() })
        .collect();
    rt.record(Event::Send {
        port,
        offset,
        data,
        then,
        cycles: ctx.cycles,
    })
}

unsafe extern "C" fn send_scalar(ctx: *mut TaskCtx, port: u32, value: u32, then: u32) -> u32 {
    // SAFETY: called by compiled code with its context.
    let (rt, ctx) = unsafe { runtime(ctx) };
    rt.record(Event::SendScalar {
        port,
        value,
        then,
        cycles: ctx.cycles,
    })
}

unsafe extern "C" fn recv(ctx: *mut TaskCtx, port: u32, n: u32, offset: u32, then: u32) -> u32 {
    // SAFETY: called by compiled code with its context.
    let (rt, ctx) = unsafe { runtime(ctx) };
    assert!(u64::from(offset) + 4 * u64::from(n) <= u64::from(ctx.sram_len));
    rt.record(Event::Recv {
        port,
        n,
        offset,
        then,
        cycles: ctx.cycles,
    })
}

unsafe extern "C" fn activate(ctx: *mut TaskCtx, task: u32) -> u32 {
    // SAFETY: called by compiled code with its context.
    let (rt, ctx) = unsafe { runtime(ctx) };
    rt.record(Event::Activate {
        task,
        cycles: ctx.cycles,
    })
}

unsafe extern "C" fn out_of_bounds(ctx: *mut TaskCtx, array: u32, index: u64, bound: u64) -> u32 {
    // SAFETY: called by compiled code with its context.
    let (rt, ctx) = unsafe { runtime(ctx) };
    rt.events.push(Event::OutOfBounds {
        array,
        index,
        bound,
        cycles: ctx.cycles,
    });
    STATUS_OUT_OF_BOUNDS
}
