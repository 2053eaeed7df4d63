//! One activation of one task under the interpreter: its locals, its cycle count, and every
//! access to the context (SRAM, coordinates, runtime calls).

use wsel_abi::{RuntimeCalls, TaskCtx};
use wsel_ir::cost::CostModel;
use wsel_ir::kernel::{ArrayId, Coord, KernelIr, Task};

use crate::faults::{self, FAULT_DIV_BY_ZERO, FAULT_SRAM_TOO_SMALL};
use crate::semantics::DivByZero;

/// Why execution left the normal flow: a `return`, or an error status to hand back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Halt {
    Return,
    Status(u32),
}

pub(super) type Step<T = ()> = Result<T, Halt>;

pub(super) struct Frame<'k> {
    pub(super) kernel: &'k KernelIr,
    pub(super) task: &'k Task,
    pub(super) cost: &'k CostModel,
    ctx: *mut TaskCtx,
    sram: *mut u32,
    cycles: u64,
    /// `ctx.cycle_limit`: a loop iteration past it stops the activation.
    cycle_limit: u64,
    pub(super) locals: Vec<u32>,
}

impl<'k> Frame<'k> {
    /// # Safety
    ///
    /// `ctx` must uphold the `wsel_abi` invariants for the frame's whole life.
    pub(super) unsafe fn new(
        kernel: &'k KernelIr,
        task: &'k Task,
        cost: &'k CostModel,
        ctx: *mut TaskCtx,
    ) -> Self {
        // SAFETY: `ctx` is valid for reads (the caller's guarantee).
        let (sram, cycles, cycle_limit) =
            unsafe { ((*ctx).sram.cast::<u32>(), (*ctx).cycles, (*ctx).cycle_limit) };
        Frame {
            kernel,
            task,
            cost,
            ctx,
            sram,
            cycles,
            cycle_limit,
            locals: vec![0; task.locals.len()],
        }
    }

    /// Adds `n` cycles to the activation's count.
    pub(super) fn charge(&mut self, n: u64) {
        self.cycles = self.cycles.wrapping_add(n);
    }

    /// Charges one loop iteration; stops the activation with `STATUS_CYCLE_LIMIT` once the
    /// count is past the context's limit.
    pub(super) fn charge_iteration(&mut self) -> Step {
        self.charge(wsel_ir::cost::loop_iteration_cycles());
        if self.cycles > self.cycle_limit {
            return Err(Halt::Status(wsel_abi::STATUS_CYCLE_LIMIT));
        }
        Ok(())
    }

    /// Stores the cycle count into the context.
    pub(super) fn flush_cycles(&mut self) {
        // SAFETY: `ctx` is valid for writes for the frame's life.
        unsafe { (*self.ctx).cycles = self.cycles };
    }

    /// Fails unless the context's SRAM holds every array of the kernel; after this, every
    /// checked array access stays inside SRAM.
    pub(super) fn check_sram(&mut self) -> Step {
        let needed = u64::from(self.kernel.sram_words());
        // SAFETY: `ctx` is valid for reads.
        let present = u64::from(unsafe { (*self.ctx).sram_len } / 4);
        if present < needed {
            return Err(self.report(FAULT_SRAM_TOO_SMALL, needed as i64, present));
        }
        Ok(())
    }

    pub(super) fn coord(&self, coord: Coord) -> u32 {
        // SAFETY: `ctx` is valid for reads.
        let ctx = unsafe { &*self.ctx };
        match coord {
            Coord::PeRow => ctx.y,
            Coord::PeCol => ctx.x,
            Coord::RegionRows => ctx.height,
            Coord::RegionCols => ctx.width,
            // The low 32 bits, as the kernel's `u32` reads them.
            Coord::Cycle => ctx.clock.wrapping_add(self.cycles) as u32,
        }
    }

    /// The SRAM word of element `index` of `array`, or the out-of-bounds report.
    pub(super) fn element(&mut self, array: ArrayId, index: i64) -> Step<usize> {
        let info = self.kernel.array(array);
        if index < 0 || index >= i64::from(info.len) {
            return Err(self.report(array.0, index, u64::from(info.len)));
        }
        Ok(info.offset_words as usize + index as usize)
    }

    /// The SRAM word of the first element of `array[start .. start + len]`, or the
    /// out-of-bounds report.
    pub(super) fn slice(&mut self, array: ArrayId, start: i64, len: i64) -> Step<usize> {
        let info = self.kernel.array(array);
        if let Some(index) = faults::slice_fault_index(start, len, i64::from(info.len)) {
            return Err(self.report(array.0, index, u64::from(info.len)));
        }
        Ok(info.offset_words as usize + start as usize)
    }

    pub(super) fn read(&self, word: usize) -> u32 {
        // SAFETY: `word` comes from `element`/`slice`, which keep it inside the kernel's
        // arrays, and `check_sram` showed SRAM holds them all; SRAM is u32-aligned.
        unsafe { self.sram.add(word).read() }
    }

    pub(super) fn write(&mut self, word: usize, value: u32) {
        // SAFETY: as in `read`; SRAM is exclusively this task's for the call.
        unsafe { self.sram.add(word).write(value) }
    }

    /// Reports an integer division by zero.
    pub(super) fn div_by_zero(&mut self, fault: DivByZero) -> Halt {
        self.report(FAULT_DIV_BY_ZERO, fault.dividend, 0)
    }

    /// Reports an error through `out_of_bounds` and gives the status to stop with.
    pub(super) fn report(&mut self, array: u32, index: i64, bound: u64) -> Halt {
        let status = self.call(|ctx, calls| {
            // SAFETY: the runtime's table is valid; `ctx` is passed through unchanged.
            unsafe { (calls.out_of_bounds)(ctx, array, index as u64, bound) }
        });
        Halt::Status(faults::fault_status(status))
    }

    /// Makes a runtime call (send, receive, activate) and fails with its status if nonzero.
    pub(super) fn runtime(
        &mut self,
        call: impl FnOnce(*mut TaskCtx, &RuntimeCalls) -> u32,
    ) -> Step {
        match self.call(call) {
            wsel_abi::STATUS_OK => {
                // SAFETY: `ctx` is valid for reads; the runtime may have adjusted the count.
                self.cycles = unsafe { (*self.ctx).cycles };
                Ok(())
            }
            status => Err(Halt::Status(status)),
        }
    }

    /// Calls into the runtime with the cycle count up to date.
    fn call(&mut self, call: impl FnOnce(*mut TaskCtx, &RuntimeCalls) -> u32) -> u32 {
        self.flush_cycles();
        // SAFETY: `calls` points to a table valid for the whole activation.
        let calls = unsafe { &*(*self.ctx).calls };
        call(self.ctx, calls)
    }
}
