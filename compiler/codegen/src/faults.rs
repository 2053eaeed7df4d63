//! How compiled code reports the run-time errors the ABI has no dedicated call for.
//!
//! The ABI's only error call is [`wsel_abi::RuntimeCalls::out_of_bounds`]. Until it grows a
//! general one, the other run-time errors are reported through it with reserved array ids
//! (real array ids are small indices into the kernel's array table):
//!
//! - [`FAULT_DIV_BY_ZERO`]: an integer division or remainder by zero; `index` is the dividend
//!   (sign-extended for `i32`), `bound` is 0.
//! - [`FAULT_SRAM_TOO_SMALL`]: the context's SRAM is smaller than the kernel's arrays need;
//!   `index` is the number of words needed, `bound` the number of words present. Checked once
//!   at the start of every task, so that no later access can leave SRAM.
//!
//! - [`FAULT_SLICE_LENGTH`]: a [`wsel_ir::kernel::Stmt::CheckLength`] failed; `index` is the
//!   operand slice's length, `bound` the length of the slice assigned.
//!
//! Every backend treats a zero status from the report as [`wsel_abi::STATUS_OUT_OF_BOUNDS`],
//! so a faulting task always stops with a nonzero status.

/// Reserved array id: integer division or remainder by zero.
pub const FAULT_DIV_BY_ZERO: u32 = u32::MAX;
/// Reserved array id: `TaskCtx::sram_len` is smaller than the kernel's SRAM plan.
pub const FAULT_SRAM_TOO_SMALL: u32 = u32::MAX - 1;
/// Reserved array id: a vector statement's operand slice and assigned slice differ in length.
pub const FAULT_SLICE_LENGTH: u32 = u32::MAX - 2;

/// The index reported for a slice `start .. start + len` of an array of `array_len`
/// elements, or `None` when the slice is in range. `start` and `len` are the values of their
/// expressions widened to 64 bits (sign-extended for `i32`).
///
/// The rule, shared by every backend: a negative start is reported as itself; a negative
/// length as `start + len`; otherwise the first element past the array's end,
/// `max(start, array_len)`.
pub fn slice_fault_index(start: i64, len: i64, array_len: i64) -> Option<i64> {
    if start < 0 {
        Some(start)
    } else if len < 0 {
        Some(start + len)
    } else if start + len > array_len {
        Some(start.max(array_len))
    } else {
        None
    }
}

/// The status a task returns after a report: the runtime's, or
/// [`wsel_abi::STATUS_OUT_OF_BOUNDS`] if the runtime wrongly answered `STATUS_OK`.
pub fn fault_status(reported: u32) -> u32 {
    if reported == wsel_abi::STATUS_OK {
        wsel_abi::STATUS_OUT_OF_BOUNDS
    } else {
        reported
    }
}
