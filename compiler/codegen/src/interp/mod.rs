//! The reference interpreter: walks kernel IR statement by statement against a [`TaskCtx`],
//! exactly as `wsel_ir::kernel` defines it and charging exactly what `wsel_ir::cost` says.
//! It is the ground truth the JIT backends are tested against.

mod costs;
mod expr;
mod frame;
mod stmt;

use wsel_abi::TaskCtx;
use wsel_ir::cost::CostModel;
use wsel_ir::kernel::{KernelIr, TaskId};

use costs::BlockCosts;
use frame::{Frame, Halt};

/// A kernel prepared for interpretation.
#[derive(Debug, Clone)]
pub struct Interpreter {
    kernel: KernelIr,
    cost: CostModel,
    /// Per task, its body's fixed cycles statement by statement.
    costs: Vec<BlockCosts>,
}

impl Interpreter {
    /// Prepares `kernel`, which must have passed [`crate::check::check_kernel`].
    pub(crate) fn new(kernel: &KernelIr, cost: &CostModel) -> Self {
        Interpreter {
            kernel: kernel.clone(),
            cost: *cost,
            costs: kernel
                .tasks
                .iter()
                .map(|task| BlockCosts::of(&task.body, cost))
                .collect(),
        }
    }

    /// Runs one activation of `task` and returns its status.
    ///
    /// # Safety
    ///
    /// `ctx` must point to a [`TaskCtx`] that upholds the invariants of `wsel_abi` for the
    /// whole call. A task the kernel does not have gives [`wsel_abi::STATUS_ERROR`].
    pub unsafe fn run(&self, task: TaskId, ctx: *mut TaskCtx) -> u32 {
        let index = task.0 as usize;
        let (Some(task), Some(costs)) = (self.kernel.tasks.get(index), self.costs.get(index))
        else {
            return wsel_abi::STATUS_ERROR;
        };
        // SAFETY: the caller guarantees `ctx` is valid for the whole call.
        let mut frame = unsafe { Frame::new(&self.kernel, task, &self.cost, ctx) };
        let outcome = frame
            .check_sram()
            .and_then(|()| frame.exec_block(&task.body, costs));
        match outcome {
            Ok(()) | Err(Halt::Return) => {
                frame.flush_cycles();
                wsel_abi::STATUS_OK
            }
            Err(Halt::Status(status)) => status,
        }
    }
}
