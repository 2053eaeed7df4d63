//! The adapter that runs compiled task code (a [`wsel_abi::TaskFn`]) as [`TaskCode`]: it fills a
//! [`wsel_abi::TaskCtx`] and provides the C runtime calls.
//!
//! The SRAM slice and the rest of the task's view are kept apart: native code gets a raw
//! pointer to the SRAM, the runtime calls get a pointer to the other half (`TaskRuntime`), so
//! the two never alias.

use crate::error::TaskFault;
use crate::task::{TaskCode, TaskContext, TaskRuntime, extend_words};
use std::ffi::c_void;
use std::sync::Arc;
use wsel_abi::{
    NO_TASK, RuntimeCalls, STATUS_CYCLE_LIMIT, STATUS_ERROR, STATUS_OK, STATUS_OUT_OF_BOUNDS,
    TaskCtx, TaskFn,
};

/// Something that runs one task activation through the `wsel_abi` conventions: a native
/// function, or an interpreter that reads and writes the context the same way.
pub trait AbiEntry: Send + Sync {
    /// Runs the task.
    ///
    /// # Safety
    ///
    /// `ctx` must point to a fully initialised [`TaskCtx`] upholding the invariants of
    /// `wsel_abi` for the whole call.
    unsafe fn call(&self, ctx: *mut TaskCtx) -> u32;
}

impl AbiEntry for TaskFn {
    unsafe fn call(&self, ctx: *mut TaskCtx) -> u32 {
        // SAFETY: forwarded from this method's contract.
        unsafe { self(ctx) }
    }
}

/// Compiled task code following the `wsel_abi` conventions, run as [`TaskCode`].
#[derive(Clone)]
pub struct AbiTask {
    entry: Arc<dyn AbiEntry>,
}

impl AbiTask {
    /// Wrap a compiled task.
    ///
    /// # Safety
    ///
    /// `f` must follow the `wsel_abi` contract: it may only touch the SRAM bytes and argument
    /// words its context describes, must pass its context to runtime calls unchanged, and must
    /// not unwind.
    pub unsafe fn new(f: TaskFn) -> AbiTask {
        AbiTask { entry: Arc::new(f) }
    }

    /// Wrap any ABI entry point (e.g. an interpreter of the same IR).
    ///
    /// # Safety
    ///
    /// As for [`AbiTask::new`]: `entry` may only touch what the context describes, must pass
    /// the context to runtime calls unchanged, and must not unwind.
    pub unsafe fn from_entry(entry: Arc<dyn AbiEntry>) -> AbiTask {
        AbiTask { entry }
    }
}

static CALLS: RuntimeCalls = RuntimeCalls {
    send: abi_send,
    send_scalar: abi_send_scalar,
    recv: abi_recv,
    activate: abi_activate,
    out_of_bounds: abi_out_of_bounds,
};

impl TaskCode for AbiTask {
    fn run(&self, ctx: &mut TaskContext<'_>) -> Result<(), TaskFault> {
        let (x, y) = ctx.coords();
        let (width, height) = ctx.region_size();
        let TaskContext { sram, rt } = ctx;
        let mut abi = TaskCtx {
            sram: sram.as_mut_ptr(),
            sram_len: sram.len() as u32,
            task: rt.task,
            x,
            y,
            width,
            height,
            args: rt.args.as_ptr(),
            n_args: rt.args.len() as u32,
            reserved: 0,
            cycles: rt.cycles,
            runtime: (rt as *mut TaskRuntime<'_>).cast::<c_void>(),
            calls: &CALLS,
            cycle_limit: rt.budget.left,
            clock: rt.clock,
        };
        // SAFETY: `abi` describes this PE's SRAM (exclusively borrowed for the call), the
        // argument words and a runtime pointer that the calls below cast back to the
        // `TaskRuntime` it came from; all outlive the call. `AbiTask::new`'s caller vouched
        // that `f` honours the ABI.
        let status = unsafe { self.entry.call(&mut abi) };
        rt.cycles = abi.cycles;
        if let Some(fault) = rt.fault.clone() {
            return Err(fault);
        }
        match status {
            STATUS_OK => {}
            STATUS_CYCLE_LIMIT => {
                return Err(TaskFault::PastCycleBudget {
                    max_cycles: rt.budget.max_cycles,
                });
            }
            status => return Err(TaskFault::Status(status)),
        }
        Ok(())
    }
}

/// The runtime half behind a context, with the task's current cycle count copied in.
///
/// # Safety
///
/// `ctx` must be the context `AbiTask::run` built, during that call.
unsafe fn runtime<'c>(ctx: *mut TaskCtx) -> &'c mut TaskRuntime<'c> {
    // SAFETY: per this function's contract `ctx` is live and its `runtime` field is the
    // `TaskRuntime` that `AbiTask::run` borrows mutably for the duration of the native call;
    // nothing else uses it while a runtime call runs.
    unsafe {
        let rt = &mut *(*ctx).runtime.cast::<TaskRuntime<'c>>();
        rt.cycles = (*ctx).cycles;
        rt
    }
}

fn status(r: Result<(), TaskFault>) -> u32 {
    if r.is_ok() { STATUS_OK } else { STATUS_ERROR }
}

fn then_task(t: u32) -> Option<u32> {
    (t != NO_TASK).then_some(t)
}

unsafe extern "C" fn abi_send(ctx: *mut TaskCtx, port: u32, offset: u32, n: u32, then: u32) -> u32 {
    // SAFETY: native code passes back the context it was given (ABI contract).
    let (sram, len) = unsafe { ((*ctx).sram, (*ctx).sram_len) };
    // SAFETY: as above.
    let rt = unsafe { runtime(ctx) };
    let end = u64::from(offset) + 4 * u64::from(n);
    if end > u64::from(len) {
        rt.fail(TaskFault::SramRange {
            offset: offset.into(),
            len: 4 * u64::from(n),
            size: len,
        });
        return STATUS_ERROR;
    }
    // SAFETY: `sram` is valid for `len` bytes and `offset .. end` lies inside it; native code
    // is suspended in this call, so nothing writes the bytes while they are copied.
    let bytes = unsafe {
        std::slice::from_raw_parts(
            sram.add(offset as usize),
            (end - u64::from(offset)) as usize,
        )
    };
    let mut data = rt.buffer();
    extend_words(&mut data, bytes);
    status(rt.send(port, data, then_task(then)))
}

unsafe extern "C" fn abi_send_scalar(ctx: *mut TaskCtx, port: u32, value: u32, then: u32) -> u32 {
    // SAFETY: native code passes back the context it was given (ABI contract).
    let rt = unsafe { runtime(ctx) };
    if port & wsel_abi::CONTROL_PORT != 0 {
        let port = port & !wsel_abi::CONTROL_PORT;
        return status(rt.send_control(port, value, then_task(then)));
    }
    let mut data = rt.buffer();
    data.push(value);
    status(rt.send(port, data, then_task(then)))
}

unsafe extern "C" fn abi_recv(ctx: *mut TaskCtx, port: u32, n: u32, offset: u32, then: u32) -> u32 {
    // SAFETY: native code passes back the context it was given (ABI contract).
    let len = unsafe { (*ctx).sram_len };
    // SAFETY: as above.
    let rt = unsafe { runtime(ctx) };
    let end = u64::from(offset) + 4 * u64::from(n);
    if end > u64::from(len) {
        rt.fail(TaskFault::SramRange {
            offset: offset.into(),
            len: 4 * u64::from(n),
            size: len,
        });
        return STATUS_ERROR;
    }
    status(rt.recv(port, n, offset, then))
}

unsafe extern "C" fn abi_activate(ctx: *mut TaskCtx, task: u32) -> u32 {
    // SAFETY: native code passes back the context it was given (ABI contract).
    let rt = unsafe { runtime(ctx) };
    status(rt.activate(task))
}

unsafe extern "C" fn abi_out_of_bounds(
    ctx: *mut TaskCtx,
    array: u32,
    index: u64,
    bound: u64,
) -> u32 {
    // SAFETY: native code passes back the context it was given (ABI contract).
    let rt = unsafe { runtime(ctx) };
    rt.fail(TaskFault::OutOfBounds {
        array,
        index,
        bound,
    });
    STATUS_OUT_OF_BOUNDS
}
