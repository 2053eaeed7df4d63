//! The C ABI between compiled per-PE task code and the simulated fabric: `#[repr(C)]` types only.
//!
//! A compiled task is a plain native function, [`TaskFn`]:
//!
//! ```text
//! unsafe extern "C" fn(ctx: *mut TaskCtx) -> u32   // STATUS_OK or a nonzero status
//! ```
//!
//! The runtime fills a [`TaskCtx`] for one activation of one task on one PE and calls the
//! function. Through the context the task sees exactly:
//!
//! - its own PE's SRAM (`sram`, `sram_len` bytes) and nothing else;
//! - its coordinates inside its region (`x`, `y`) and the region's size (`width`, `height`);
//! - the per-instance argument words (`args`, `n_args`), which let PEs share machine code;
//! - a cycle counter `cycles` to which the task adds the cost of the work it does, and the
//!   `cycle_limit` past which its loops stop;
//! - a table of runtime calls, [`RuntimeCalls`], each taking the context as first argument.
//!
//! # Time
//!
//! A task runs to completion. The runtime reads `cycles` at every runtime call: a call made
//! when `cycles == k` is *issued* `k` cycles after the task started (after the task-switch
//! cost). When the function returns, the final value of `cycles` is the task's cost.
//!
//! Compiled code checks the count at every loop iteration, after charging the iteration: when
//! it is past `cycle_limit`, the task stops and returns [`STATUS_CYCLE_LIMIT`]. This is how an
//! endless loop inside one task is stopped (the runtime sets the limit from its cycle budget);
//! [`NO_CYCLE_LIMIT`] never stops anything.
//!
//! # Errors
//!
//! Every runtime call returns [`STATUS_OK`] or a nonzero status; on a nonzero status the runtime
//! has recorded a description of the error (PE, task, what went wrong) on its side and the task
//! must return that status (or any nonzero status) promptly. Compiled code reports its own
//! out-of-range array accesses with [`RuntimeCalls::out_of_bounds`] instead of touching memory
//! outside `sram`.
//!
//! # Invariants the runtime guarantees during a call of a [`TaskFn`]
//!
//! - `sram` is valid for reads and writes of `sram_len` bytes, exclusively for this task, and
//!   suitably aligned for `u32` accesses at offsets that are multiples of 4;
//! - `args` is valid for reads of `n_args` words (it may dangle when `n_args == 0`);
//! - `calls` points to a table valid for the whole call; `runtime` is opaque to the task and must
//!   be passed through unchanged (by passing `ctx` itself).
//!
//! This crate has no dependencies so that code generators can compile against it cheaply.

#![no_std]

use core::ffi::c_void;
use core::mem::offset_of;

/// Status returned by tasks and runtime calls: success.
pub const STATUS_OK: u32 = 0;
/// Status: a runtime error was recorded (the runtime holds the details).
pub const STATUS_ERROR: u32 = 1;
/// Status returned by [`RuntimeCalls::out_of_bounds`]: the access was reported.
pub const STATUS_OUT_OF_BOUNDS: u32 = 2;
/// Status returned by a task whose loops ran past [`TaskCtx::cycle_limit`].
pub const STATUS_CYCLE_LIMIT: u32 = 3;

/// A [`TaskCtx::cycle_limit`] that never stops a task.
pub const NO_CYCLE_LIMIT: u64 = u64::MAX;

/// "No task": pass as the `then_task` of a send when no completion task is wanted.
pub const NO_TASK: u32 = u32::MAX;

/// Or'ed into the port of a [`SendScalarFn`] call: the wavelet is a control wavelet (router
/// switches, `wsel-sim`'s `switches.rs`).
pub const CONTROL_PORT: u32 = 1 << 31;

/// Bits of switch command per hop in a control wavelet's payload.
pub const COMMAND_BITS: u32 = 2;
/// Routers one control wavelet carries commands for.
pub const COMMAND_HOPS: usize = 16;

/// The payload of a control wavelet carrying switch `commands` (0 nop, 1 advance, 2 reset),
/// the first for the sender's own router, then one per router downstream; at most
/// [`COMMAND_HOPS`] are kept, later routers get nops.
pub fn control_payload(commands: impl IntoIterator<Item = u32>) -> u32 {
    commands
        .into_iter()
        .take(COMMAND_HOPS)
        .enumerate()
        .fold(0, |w, (i, c)| w | (c & 3) << (COMMAND_BITS * i as u32))
}

/// The signature of one compiled task.
///
/// # Safety
///
/// The caller (the runtime) must pass a pointer to a fully initialised [`TaskCtx`] that upholds
/// the invariants listed in the crate documentation for the whole call.
pub type TaskFn = unsafe extern "C" fn(ctx: *mut TaskCtx) -> u32;

/// Send `n` 32-bit wavelets read from SRAM bytes `sram_offset .. sram_offset + 4n` on output port
/// `port`; activate `then_task` (or [`NO_TASK`]) when the last wavelet has left the PE. The data
/// is read when the call is made.
pub type SendFn = unsafe extern "C" fn(
    ctx: *mut TaskCtx,
    port: u32,
    sram_offset: u32,
    n: u32,
    then_task: u32,
) -> u32;

/// Send one 32-bit wavelet `value` on output port `port`; activate `then_task` (or [`NO_TASK`])
/// when it has left the PE. With `port | CONTROL_PORT` the wavelet is a **control wavelet**
/// whose payload `value` holds switch commands ([`control_payload`]).
pub type SendScalarFn =
    unsafe extern "C" fn(ctx: *mut TaskCtx, port: u32, value: u32, then_task: u32) -> u32;

/// Post a receive: the next `n` wavelets arriving on input port `port` are written to SRAM from
/// byte `sram_offset` on, in order; when all `n` have arrived, `then_task` is activated.
pub type RecvFn = unsafe extern "C" fn(
    ctx: *mut TaskCtx,
    port: u32,
    n: u32,
    sram_offset: u32,
    then_task: u32,
) -> u32;

/// Activate task `task` on this PE; it runs after the current task has completed.
pub type ActivateFn = unsafe extern "C" fn(ctx: *mut TaskCtx, task: u32) -> u32;

/// Report that the task tried to access element `index` of array `array` whose length is
/// `bound`. Always returns a nonzero status ([`STATUS_OUT_OF_BOUNDS`]), which the task returns.
pub type OutOfBoundsFn =
    unsafe extern "C" fn(ctx: *mut TaskCtx, array: u32, index: u64, bound: u64) -> u32;

/// The runtime calls a compiled task may make, as a table of C function pointers.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct RuntimeCalls {
    /// See [`SendFn`].
    pub send: SendFn,
    /// See [`SendScalarFn`].
    pub send_scalar: SendScalarFn,
    /// See [`RecvFn`].
    pub recv: RecvFn,
    /// See [`ActivateFn`].
    pub activate: ActivateFn,
    /// See [`OutOfBoundsFn`].
    pub out_of_bounds: OutOfBoundsFn,
}

/// Everything one activation of a compiled task may see. Filled by the runtime.
#[repr(C)]
pub struct TaskCtx {
    /// This PE's SRAM: `sram_len` bytes.
    pub sram: *mut u8,
    /// Length of `sram` in bytes.
    pub sram_len: u32,
    /// Index of the running task in its PE's task table.
    pub task: u32,
    /// This PE's column inside its region (0 = the region's west edge).
    pub x: u32,
    /// This PE's row inside its region (0 = the region's north edge).
    pub y: u32,
    /// The region's width in PEs.
    pub width: u32,
    /// The region's height in PEs.
    pub height: u32,
    /// Per-instance argument words.
    pub args: *const u32,
    /// Number of words at `args`.
    pub n_args: u32,
    /// Reserved, zero. Keeps `cycles` 8-byte aligned on every platform.
    pub reserved: u32,
    /// Cycles spent so far by this activation; the task adds its costs here.
    pub cycles: u64,
    /// Opaque runtime state; never dereferenced by task code.
    pub runtime: *mut c_void,
    /// The runtime calls.
    pub calls: *const RuntimeCalls,
    /// A loop iteration that finds `cycles` past this stops the task with
    /// [`STATUS_CYCLE_LIMIT`] ([`NO_CYCLE_LIMIT`]: never).
    pub cycle_limit: u64,
    /// The PE's cycle when the activation's `cycles` were 0 (its start plus the task
    /// switch): `clock + cycles` is the PE's cycle counter, which `pe.cycle` reads.
    pub clock: u64,
}

/// Byte offset of [`TaskCtx::sram`], for code generators.
pub const CTX_SRAM: usize = offset_of!(TaskCtx, sram);
/// Byte offset of [`TaskCtx::sram_len`].
pub const CTX_SRAM_LEN: usize = offset_of!(TaskCtx, sram_len);
/// Byte offset of [`TaskCtx::task`].
pub const CTX_TASK: usize = offset_of!(TaskCtx, task);
/// Byte offset of [`TaskCtx::x`].
pub const CTX_X: usize = offset_of!(TaskCtx, x);
/// Byte offset of [`TaskCtx::y`].
pub const CTX_Y: usize = offset_of!(TaskCtx, y);
/// Byte offset of [`TaskCtx::width`].
pub const CTX_WIDTH: usize = offset_of!(TaskCtx, width);
/// Byte offset of [`TaskCtx::height`].
pub const CTX_HEIGHT: usize = offset_of!(TaskCtx, height);
/// Byte offset of [`TaskCtx::args`].
pub const CTX_ARGS: usize = offset_of!(TaskCtx, args);
/// Byte offset of [`TaskCtx::n_args`].
pub const CTX_N_ARGS: usize = offset_of!(TaskCtx, n_args);
/// Byte offset of [`TaskCtx::cycles`].
pub const CTX_CYCLES: usize = offset_of!(TaskCtx, cycles);
/// Byte offset of [`TaskCtx::runtime`].
pub const CTX_RUNTIME: usize = offset_of!(TaskCtx, runtime);
/// Byte offset of [`TaskCtx::calls`].
pub const CTX_CALLS: usize = offset_of!(TaskCtx, calls);
/// Byte offset of [`TaskCtx::cycle_limit`].
pub const CTX_CYCLE_LIMIT: usize = offset_of!(TaskCtx, cycle_limit);
/// Byte offset of [`TaskCtx::clock`].
pub const CTX_CLOCK: usize = offset_of!(TaskCtx, clock);

/// Byte offset of [`RuntimeCalls::send`].
pub const CALLS_SEND: usize = offset_of!(RuntimeCalls, send);
/// Byte offset of [`RuntimeCalls::send_scalar`].
pub const CALLS_SEND_SCALAR: usize = offset_of!(RuntimeCalls, send_scalar);
/// Byte offset of [`RuntimeCalls::recv`].
pub const CALLS_RECV: usize = offset_of!(RuntimeCalls, recv);
/// Byte offset of [`RuntimeCalls::activate`].
pub const CALLS_ACTIVATE: usize = offset_of!(RuntimeCalls, activate);
/// Byte offset of [`RuntimeCalls::out_of_bounds`].
pub const CALLS_OUT_OF_BOUNDS: usize = offset_of!(RuntimeCalls, out_of_bounds);

#[cfg(test)]
mod tests {
    use super::*;
    use core::mem::{align_of, size_of};

    #[test]
    fn layout_is_stable_on_64_bit_hosts() {
        if size_of::<usize>() != 8 {
            return;
        }
        assert_eq!(CTX_SRAM, 0);
        assert_eq!(CTX_SRAM_LEN, 8);
        assert_eq!(CTX_TASK, 12);
        assert_eq!(CTX_X, 16);
        assert_eq!(CTX_Y, 20);
        assert_eq!(CTX_WIDTH, 24);
        assert_eq!(CTX_HEIGHT, 28);
        assert_eq!(CTX_ARGS, 32);
        assert_eq!(CTX_N_ARGS, 40);
        assert_eq!(CTX_CYCLES, 48);
        assert_eq!(CTX_RUNTIME, 56);
        assert_eq!(CTX_CALLS, 64);
        assert_eq!(CTX_CYCLE_LIMIT, 72);
        assert_eq!(CTX_CLOCK, 80);
        assert_eq!(size_of::<TaskCtx>(), 88);
        assert_eq!(align_of::<TaskCtx>(), 8);
        assert_eq!(size_of::<RuntimeCalls>(), 5 * 8);
        assert_eq!(
            [
                CALLS_SEND,
                CALLS_SEND_SCALAR,
                CALLS_RECV,
                CALLS_ACTIVATE,
                CALLS_OUT_OF_BOUNDS
            ],
            [0, 8, 16, 24, 32]
        );
    }
}
