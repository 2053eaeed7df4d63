//! The safe Rust interface task code plugs into: the [`TaskCode`] trait and the
//! [`TaskContext`] a task sees (its PE's SRAM, coordinates, arguments, and the runtime calls).
//!
//! Runtime calls do not act at once: each becomes an operation stamped with the task's cycle
//! count at the moment of the call (see [`TaskContext::add_cycles`]); the engine carries it
//! out at that point in simulated time once the task returns. Data of a send is copied from
//! SRAM when the call is made.

use crate::error::TaskFault;
use crate::program::{Color, TaskId};
use std::sync::Arc;
use wsel_target::{Coord, Rect};

/// Code for one task. Implemented by closures (see [`task`]), by the ABI adapter
/// ([`crate::AbiTask`]) and by interpreters.
pub trait TaskCode: Send + Sync {
    /// Run the task to completion. Return an error (usually one a context call returned) to
    /// stop the simulation with it.
    fn run(&self, ctx: &mut TaskContext<'_>) -> Result<(), TaskFault>;
}

impl<F> TaskCode for F
where
    F: Fn(&mut TaskContext<'_>) -> Result<(), TaskFault> + Send + Sync,
{
    fn run(&self, ctx: &mut TaskContext<'_>) -> Result<(), TaskFault> {
        self(ctx)
    }
}

/// Wrap a closure as task code (this also pins down the closure's argument type).
pub fn task<F>(f: F) -> Arc<dyn TaskCode>
where
    F: Fn(&mut TaskContext<'_>) -> Result<(), TaskFault> + Send + Sync + 'static,
{
    Arc::new(f)
}

/// A runtime call recorded by a task, stamped with the cycles the task had spent when it made
/// the call.
#[derive(Debug)]
pub(crate) enum Op {
    Send {
        at: u64,
        color: Color,
        data: Vec<u32>,
        then: Option<TaskId>,
        /// One control wavelet (see `switches.rs`).
        control: bool,
    },
    Recv {
        at: u64,
        color: Color,
        n: u32,
        offset: u32,
        then: TaskId,
    },
    Activate {
        at: u64,
        task: TaskId,
    },
}

/// Everything of a task's view except its SRAM (kept apart so that the ABI adapter can hand
/// the SRAM to native code while the runtime calls use this half).
pub(crate) struct TaskRuntime<'a> {
    pub(crate) at: Coord,
    pub(crate) region: Rect,
    /// The region is placed transposed: logical rows run along physical columns.
    pub(crate) transposed: bool,
    /// The region is mirrored east–west, north–south (after any transposition).
    pub(crate) mirrored: (bool, bool),
    pub(crate) args: &'a [u32],
    pub(crate) ports: &'a [Color],
    /// Colors whose route at this PE takes wavelets from the ramp (bit per color).
    pub(crate) send_colors: u64,
    /// Colors whose route at this PE delivers to the ramp.
    pub(crate) recv_colors: u64,
    /// Colors with a switch somewhere that this PE sends on (control wavelets may go there).
    pub(crate) control_colors: u64,
    pub(crate) n_tasks: u32,
    pub(crate) task: TaskId,
    pub(crate) cycles: u64,
    /// The cycle the task's own work starts (its start plus the task switch): the PE's clock
    /// is `clock + cycles` (`wsel_abi::TaskCtx::clock`).
    pub(crate) clock: u64,
    /// The cycle budget of the run, and how many cycles of it are left when this activation
    /// starts: compiled loops stop past the latter (`wsel_abi::TaskCtx::cycle_limit`).
    pub(crate) budget: Budget,
    pub(crate) ops: &'a mut Vec<Op>,
    /// Data buffers of finished sends, for new sends to reuse (no allocation per send).
    pub(crate) spare: &'a mut SpareBuffers,
    /// The first fault of a runtime call, kept even if the task ignores the error.
    pub(crate) fault: Option<TaskFault>,
}

/// The run's cycle budget as one activation sees it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Budget {
    /// [`crate::SimOptions::max_cycles`], or `u64::MAX` for none.
    pub(crate) max_cycles: u64,
    /// Cycles of it left when the activation starts (after the task switch).
    pub(crate) left: u64,
}

/// What a running task sees.
pub struct TaskContext<'a> {
    pub(crate) sram: &'a mut [u8],
    pub(crate) rt: TaskRuntime<'a>,
}

impl<'a> TaskContext<'a> {
    /// This PE's logical coordinates inside its region: (column, row). For a transposed
    /// region, logical rows run along physical columns; a mirrored one counts the mirrored axis from
    /// the region's far side.
    pub fn coords(&self) -> (u32, u32) {
        crate::program::logical_coords(
            self.rt.at,
            self.rt.region,
            self.rt.transposed,
            self.rt.mirrored,
        )
    }

    /// The region's logical size: (columns, rows).
    pub fn region_size(&self) -> (u32, u32) {
        let (w, h) = (self.rt.region.width, self.rt.region.height);
        if self.rt.transposed { (h, w) } else { (w, h) }
    }

    /// This PE's position on the fabric.
    pub fn fabric_coord(&self) -> Coord {
        self.rt.at
    }

    /// The per-instance argument words.
    pub fn args(&self) -> &[u32] {
        self.rt.args
    }

    /// The running task's number.
    pub fn task(&self) -> TaskId {
        self.rt.task
    }

    /// Charge `n` cycles of work to this task. Calls made afterwards are issued later.
    pub fn add_cycles(&mut self, n: u64) {
        self.rt.cycles = self.rt.cycles.saturating_add(n);
    }

    /// Cycles charged so far.
    pub fn cycles(&self) -> u64 {
        self.rt.cycles
    }

    /// This PE's SRAM.
    pub fn sram(&self) -> &[u8] {
        self.sram
    }

    /// This PE's SRAM, writable.
    pub fn sram_mut(&mut self) -> &mut [u8] {
        self.sram
    }

    /// Read the 32-bit word at byte `offset`.
    pub fn read_u32(&mut self, offset: u32) -> Result<u32, TaskFault> {
        let r = self.range(offset, 1)?;
        let mut b = [0u8; 4];
        b.copy_from_slice(&self.sram[r]);
        Ok(u32::from_le_bytes(b))
    }

    /// Write the 32-bit word at byte `offset`.
    pub fn write_u32(&mut self, offset: u32, value: u32) -> Result<(), TaskFault> {
        let r = self.range(offset, 1)?;
        self.sram[r].copy_from_slice(&value.to_le_bytes());
        Ok(())
    }

    /// Read the f32 at byte `offset`.
    pub fn read_f32(&mut self, offset: u32) -> Result<f32, TaskFault> {
        self.read_u32(offset).map(f32::from_bits)
    }

    /// Write the f32 at byte `offset`.
    pub fn write_f32(&mut self, offset: u32, value: f32) -> Result<(), TaskFault> {
        self.write_u32(offset, value.to_bits())
    }

    /// Send `n` words read from SRAM at byte `offset` on `port`; activate `then` when the last
    /// wavelet has left the PE.
    pub fn send(
        &mut self,
        port: u32,
        offset: u32,
        n: u32,
        then: Option<TaskId>,
    ) -> Result<(), TaskFault> {
        let r = self.range(offset, n)?;
        let mut data = self.rt.buffer();
        extend_words(&mut data, &self.sram[r]);
        self.rt.send(port, data, then)
    }

    /// Send the single word `value` on `port`; activate `then` when it has left the PE.
    pub fn send_scalar(
        &mut self,
        port: u32,
        value: u32,
        then: Option<TaskId>,
    ) -> Result<(), TaskFault> {
        let mut data = self.rt.buffer();
        data.push(value);
        self.rt.send(port, data, then)
    }

    /// Send one control wavelet on `port` carrying `commands` for the switches of its color:
    /// the first for this PE's router, then one per router downstream (see `switches.rs`);
    /// activate `then` when it has left the PE.
    pub fn send_control(
        &mut self,
        port: u32,
        commands: &[crate::program::SwitchCommand],
        then: Option<TaskId>,
    ) -> Result<(), TaskFault> {
        let payload = crate::switches::encode(commands);
        self.rt.send_control(port, payload, then)
    }

    /// The PE's clock: the cycle the task's own work started plus the cycles it charged so
    /// far (the kernel's `pe.cycle`).
    pub fn clock(&self) -> u64 {
        self.rt.clock + self.rt.cycles
    }

    /// Receive the next `n` wavelets arriving on `port` into SRAM from byte `offset`; activate
    /// `then` when all have arrived.
    pub fn recv(&mut self, port: u32, n: u32, offset: u32, then: TaskId) -> Result<(), TaskFault> {
        self.range(offset, n)?;
        self.rt.recv(port, n, offset, then)
    }

    /// Activate `task` on this PE (it runs after this task).
    pub fn activate(&mut self, task: TaskId) -> Result<(), TaskFault> {
        self.rt.activate(task)
    }

    /// Record an out-of-range array access and return the fault to propagate.
    pub fn out_of_bounds(&mut self, array: u32, index: u64, bound: u64) -> TaskFault {
        self.rt.fail(TaskFault::OutOfBounds {
            array,
            index,
            bound,
        })
    }

    fn range(&mut self, offset: u32, n_words: u32) -> Result<std::ops::Range<usize>, TaskFault> {
        let start = u64::from(offset);
        let len = u64::from(n_words) * 4;
        if start + len > self.sram.len() as u64 {
            return Err(self.rt.fail(TaskFault::SramRange {
                offset: start,
                len,
                size: self.sram.len() as u32,
            }));
        }
        Ok(start as usize..(start + len) as usize)
    }
}

/// Little-endian words of a byte slice whose length is a multiple of 4.
pub(crate) fn words(bytes: &[u8]) -> Vec<u32> {
    let mut out = Vec::new();
    extend_words(&mut out, bytes);
    out
}

/// Append the little-endian words of `bytes` (a multiple of 4 long) to `out`.
pub(crate) fn extend_words(out: &mut Vec<u32>, bytes: &[u8]) {
    out.extend(
        bytes
            .chunks_exact(4)
            .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])),
    );
}

/// Data buffers of finished sends, kept for new sends to reuse (no allocation per send). A
/// fabric's worth of PEs sends at once, so the pool must cover a round of sends: it is
/// bounded by the words it holds (2 Mi words, 8 MiB), not by a count of buffers.
#[derive(Debug, Default)]
pub(crate) struct SpareBuffers {
    buffers: Vec<Vec<u32>>,
    /// The capacity of `buffers`, in words.
    words: usize,
}

impl SpareBuffers {
    const MAX_WORDS: usize = 1 << 21;

    /// An empty buffer, reused if one is spare.
    pub(crate) fn take(&mut self) -> Vec<u32> {
        let Some(mut data) = self.buffers.pop() else {
            return Vec::new();
        };
        self.words -= data.capacity();
        data.clear();
        data
    }

    /// Keep `data` for reuse if the pool has room for it.
    pub(crate) fn give(&mut self, data: Vec<u32>) {
        if self.words + data.capacity() <= Self::MAX_WORDS {
            self.words += data.capacity();
            self.buffers.push(data);
        }
    }
}

impl TaskRuntime<'_> {
    /// An empty buffer for a send's data, reusing one a finished send gave back.
    pub(crate) fn buffer(&mut self) -> Vec<u32> {
        self.spare.take()
    }

    pub(crate) fn fail(&mut self, fault: TaskFault) -> TaskFault {
        if self.fault.is_none() {
            self.fault = Some(fault.clone());
        }
        fault
    }

    fn color(&mut self, port: u32) -> Result<Color, TaskFault> {
        match self.ports.get(port as usize) {
            Some(&c) => Ok(c),
            None => Err(self.fail(TaskFault::UnboundPort { port })),
        }
    }

    fn check_task(&mut self, task: TaskId) -> Result<(), TaskFault> {
        if task < self.n_tasks {
            Ok(())
        } else {
            Err(self.fail(TaskFault::NoSuchTask { task }))
        }
    }

    pub(crate) fn send(
        &mut self,
        port: u32,
        data: Vec<u32>,
        then: Option<TaskId>,
    ) -> Result<(), TaskFault> {
        let color = self.color(port)?;
        if self.send_colors & (1u64 << color) == 0 {
            return Err(self.fail(TaskFault::UnroutedSend { port, color }));
        }
        if let Some(t) = then {
            self.check_task(t)?;
        }
        self.ops.push(Op::Send {
            at: self.cycles,
            color,
            data,
            then,
            control: false,
        });
        Ok(())
    }

    pub(crate) fn send_control(
        &mut self,
        port: u32,
        payload: u32,
        then: Option<TaskId>,
    ) -> Result<(), TaskFault> {
        let color = self.color(port)?;
        if self.control_colors & (1u64 << color) == 0 {
            return Err(self.fail(TaskFault::ControlWithoutSwitch { port, color }));
        }
        if let Some(t) = then {
            self.check_task(t)?;
        }
        let mut data = self.buffer();
        data.push(payload);
        self.ops.push(Op::Send {
            at: self.cycles,
            color,
            data,
            then,
            control: true,
        });
        Ok(())
    }

    pub(crate) fn recv(
        &mut self,
        port: u32,
        n: u32,
        offset: u32,
        then: TaskId,
    ) -> Result<(), TaskFault> {
        let color = self.color(port)?;
        if self.recv_colors & (1u64 << color) == 0 {
            return Err(self.fail(TaskFault::UnroutedRecv { port, color }));
        }
        self.check_task(then)?;
        self.ops.push(Op::Recv {
            at: self.cycles,
            color,
            n,
            offset,
            then,
        });
        Ok(())
    }

    pub(crate) fn activate(&mut self, task: TaskId) -> Result<(), TaskFault> {
        self.check_task(task)?;
        self.ops.push(Op::Activate {
            at: self.cycles,
            task,
        });
        Ok(())
    }
}
