//! A dry run of one PE's kernel: its tasks executed alone, with every receive complete as soon
//! as it is posted, to learn the task work the PE does — the cycles it is busy, exactly as the
//! fabric charges them (`wsel_ir::cost` plus the task-switch cost per activation).
//!
//! The mapper estimates a layer's cycles per sample from this (`docs/mapping.md` §5). No
//! wavelet moves and no time passes between tasks, so a dry run says nothing about waiting;
//! what it gives is the work. Every received element reads as one (1.0 on a float port, 1 on
//! an integer or bool one), whatever the neighbours would send: control flow that depends on
//! received values may take another path than on the fabric, but a loop that runs while a
//! received norm or residual is above a small tolerance (csl's bicgstab) is not left at once,
//! as zeros — the buffers' initial values — would leave it; control flow on coordinates,
//! region size and the kernel's own counters — what the standard library's kernels branch
//! on — is followed exactly.
//!
//! A [`DryRunner`] runs the kernel at as many places as the caller asks. It starts each run in
//! the reference interpreter, which needs no compiling: most dry runs do a few thousand cycles
//! of work, far less than compiling costs. A run that does more than
//! [`DryRunLimits::interpreted_work`] ([`FIRST_RUN_FACTOR`] times as much for the kernel's
//! first run) starts again in Cranelift code, compiled the first time it is needed; once a run
//! has done more than the allowance, the kernel's later runs start compiled. Both give the
//! same cycles (the backends are bit- and cycle-identical), so the choice changes only how
//! long the dry run takes. A dry run always ends: activations are
//! capped, and so is the work of the whole run, which the loops check ([`DryRunLimits`]);
//! running past either is an error, as is a task fault or a kernel larger than the SRAM cap.

use std::cell::{Cell, OnceCell};
use std::collections::VecDeque;
use std::ffi::c_void;

use wsel_abi::{NO_TASK, RuntimeCalls, STATUS_CYCLE_LIMIT, STATUS_ERROR, STATUS_OK, TaskCtx};
use wsel_ir::cost::CostModel;
use wsel_ir::kernel::{KernelIr, ScalarTy, TaskId};

use crate::check::check_kernel;
use crate::dry_trace::{Tracer, Transfer};
use crate::{Backend, Code, CompiledKernel};

/// Where the PE sits: its column and row inside its region, and the region's size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PePlace {
    pub x: u32,
    pub y: u32,
    pub width: u32,
    pub height: u32,
}

/// How many times [`DryRunLimits::interpreted_work`] a kernel's first run may do in the
/// interpreter. The mapper runs many kernels once only, on the centre PE of a candidate region
/// whose floor already loses (`docs/mapping.md` §5, "Floors before measures"): interpreting such
/// a run of a few tens of thousands of cycles to its end costs less than the interpreted start
/// thrown away, the compile and the compiled run (examples/mlp_streaming on wse2: 4 of its 5
/// compiles gone, 2.5% of its instructions; BENCHMARKS.md, "mlp_streaming's last 11%").
pub const FIRST_RUN_FACTOR: u64 = 3;

/// What a dry run may spend before it gives up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DryRunLimits {
    /// Task activations in all.
    pub activations: u64,
    /// Cycles of task work in all (task switches not counted); the compiled loops check it,
    /// so one endless activation stops too.
    pub work_cycles: u64,
    /// SRAM words of the kernel (a dry run allocates them).
    pub sram_words: u32,
    /// Cycles of work a run may do in the interpreter; a run that does more starts again in
    /// compiled code (0: always compiled). A kernel's first run may do [`FIRST_RUN_FACTOR`]
    /// times as much.
    pub interpreted_work: u64,
}

impl Default for DryRunLimits {
    fn default() -> Self {
        DryRunLimits {
            activations: 1_000_000,
            work_cycles: 100_000_000,
            // 64 MiB, beyond any target's PE.
            sram_words: 1 << 24,
            // A few milliseconds in the interpreter, about what compiling a kernel takes;
            // `wsel map` on the examples was fastest with this of 0, 20,000 and 50,000
            // (BENCHMARKS.md, "Mapping").
            interpreted_work: 20_000,
        }
    }
}

/// What the PE did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DryRun {
    /// Cycles the PE was busy: every activation's cost plus the task-switch cost, at least one
    /// cycle per activation (as the fabric charges them).
    pub busy_cycles: u64,
    /// Task activations run.
    pub activations: u64,
    /// Wavelets the PE's receives asked for.
    pub wavelets_in: u64,
    /// Wavelets the PE sent.
    pub wavelets_out: u64,
}

/// Why a dry run has no result.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DryRunError {
    /// The kernel does not pass `check::check_kernel`, or does not compile.
    Invalid(String),
    /// A task stopped with a nonzero status (an out-of-range access, a division by zero).
    TaskFailed { task: String, status: u32 },
    /// More activations, or a longer activation, than the limits allow.
    OverLimit,
}

/// A kernel ready for dry runs.
pub struct DryRunner {
    kernel: KernelIr,
    cost: CostModel,
    interpreted: CompiledKernel,
    /// Cranelift code, compiled for the first run that outgrows the interpreter.
    compiled: OnceCell<Result<CompiledKernel, DryRunError>>,
    /// Whether a run has done more work than [`DryRunLimits::interpreted_work`]: the
    /// kernel's later runs start compiled.
    outgrown: Cell<bool>,
    /// Whether the kernel has been run (its first run's allowance is larger).
    ran: Cell<bool>,
    /// The SRAM at launch: every array filled with its initial value.
    initial_sram: Vec<u32>,
    cost_limits: DryRunLimits,
}

/// How one attempt at a run ended.
enum Attempt {
    /// The run, its transfers (when traced) and its cycles of work.
    Done {
        run: DryRun,
        transfers: Vec<Transfer>,
        work: u64,
    },
    /// Past the work the attempt was allowed (the caller's limit or the interpreter's).
    OverWork,
    Failed(DryRunError),
}

impl DryRunner {
    /// Checks `kernel` and prepares it for dry runs under `cost`.
    pub fn new(
        kernel: &KernelIr,
        cost: &CostModel,
        limits: DryRunLimits,
    ) -> Result<DryRunner, DryRunError> {
        check_kernel(kernel).map_err(invalid)?;
        if kernel.sram_words() > limits.sram_words {
            return Err(DryRunError::OverLimit);
        }
        let interpreter = crate::interp::Interpreter::new(kernel, cost);
        Ok(DryRunner {
            kernel: kernel.clone(),
            cost: *cost,
            interpreted: CompiledKernel::new(kernel, Backend::Interp, Code::Interp(interpreter)),
            compiled: OnceCell::new(),
            outgrown: Cell::new(false),
            ran: Cell::new(false),
            initial_sram: kernel.initial_sram(),
            cost_limits: limits,
        })
    }

    /// The kernel's Cranelift code, compiled on first use.
    fn compiled(&self) -> Result<&CompiledKernel, DryRunError> {
        self.compiled
            .get_or_init(|| {
                crate::cranelift::compile(
                    &self.kernel,
                    &self.cost,
                    crate::cranelift::Optimise::CompileTime,
                )
                .map(|native| {
                    CompiledKernel::new(&self.kernel, Backend::Cranelift, Code::Native(native))
                })
                .map_err(invalid)
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Runs the kernel on one PE at `place` from its entry task until no task is ready, with
    /// every receive complete as soon as it is posted and every send gone at once; every
    /// activation costs `switch_cycles` more, as on the fabric.
    pub fn run(&self, switch_cycles: u64, place: PePlace) -> Result<DryRun, DryRunError> {
        self.run_with(switch_cycles, place, None)
            .map(|(run, _)| run)
    }

    /// [`DryRunner::run`], with the causal order of the PE's transfers
    /// ([`crate::dry_trace`]).
    pub fn trace(
        &self,
        switch_cycles: u64,
        place: PePlace,
    ) -> Result<(DryRun, Vec<Transfer>), DryRunError> {
        self.run_with(switch_cycles, place, Some(&[]))
    }

    /// [`DryRunner::trace`], with the receives on the ports of `late` (indices) completing
    /// only when no other task is ready, in the order they were posted: as when their
    /// messages come from neighbours that are still working, so that the PE does all the
    /// work it can before it takes them.
    pub fn trace_late(
        &self,
        switch_cycles: u64,
        place: PePlace,
        late: &[u32],
    ) -> Result<(DryRun, Vec<Transfer>), DryRunError> {
        self.run_with(switch_cycles, place, Some(late))
    }

    /// A run, traced when `trace` gives the ports whose receives come late.
    fn run_with(
        &self,
        switch_cycles: u64,
        place: PePlace,
        trace: Option<&[u32]>,
    ) -> Result<(DryRun, Vec<Transfer>), DryRunError> {
        let limit = self.cost_limits.work_cycles;
        let interpreted = self.cost_limits.interpreted_work.min(limit);
        let allowance = if self.ran.replace(true) {
            interpreted
        } else {
            interpreted.saturating_mul(FIRST_RUN_FACTOR).min(limit)
        };
        if interpreted > 0 && !self.outgrown.get() {
            match self.attempt(&self.interpreted, switch_cycles, place, allowance, trace) {
                Attempt::OverWork if allowance < limit => self.outgrown.set(true),
                Attempt::Done {
                    run,
                    transfers,
                    work,
                } => {
                    // The kernel's other runs (at other places, doing about as much work)
                    // start compiled.
                    self.outgrown.set(work > interpreted);
                    return Ok((run, transfers));
                }
                other => return other.into_result(),
            }
        }
        self.attempt(self.compiled()?, switch_cycles, place, limit, trace)
            .into_result()
    }

    /// One run with `code`, allowed `work_limit` cycles of work, its transfers traced when
    /// `trace` is set.
    fn attempt(
        &self,
        code: &CompiledKernel,
        switch_cycles: u64,
        place: PePlace,
        work_limit: u64,
        trace: Option<&[u32]>,
    ) -> Attempt {
        let mut sram = self.initial_sram.clone();
        // Every activation's count starts where the last one's ended, so that the compiled
        // loops' limit bounds the whole run's work; an activation's cost is the difference.
        let mut work = 0u64;
        let ports = self.kernel.ports.len();
        let mut pe = DryPe {
            received: self.kernel.ports.iter().map(|p| one(p.elem)).collect(),
            ready: VecDeque::from([self.kernel.entry.0]),
            late_ready: VecDeque::new(),
            late: late_ports(ports, trace.unwrap_or_default()),
            tasks: code.task_count() as u32,
            run: DryRun::default(),
            tracer: trace.map(|late| Tracer::new(ports, late_ports(ports, late))),
        };
        while let Some(task) = pe.ready.pop_front().or_else(|| pe.late_ready.pop_front()) {
            if pe.run.activations >= self.cost_limits.activations {
                return Attempt::Failed(DryRunError::OverLimit);
            }
            if let Some(tracer) = &mut pe.tracer {
                tracer.begin(work, switch_cycles);
            }
            let mut ctx = TaskCtx {
                sram: sram.as_mut_ptr().cast(),
                sram_len: (sram.len() * 4) as u32,
                task,
                x: place.x,
                y: place.y,
                width: place.width,
                height: place.height,
                args: std::ptr::null(),
                n_args: 0,
                reserved: 0,
                cycles: work,
                runtime: (&mut pe as *mut DryPe).cast::<c_void>(),
                calls: &CALLS,
                cycle_limit: work_limit,
                // A dry run has no fabric clock: `pe.cycle` reads the work done so far.
                clock: 0,
            };
            // SAFETY: the context points at this PE's SRAM (`sram.len()` words, u32-aligned),
            // the call table and the dry-run state, all of which outlive the call; `args` is
            // empty.
            let status = unsafe { code.run(TaskId(task), &mut ctx) };
            match status {
                STATUS_OK => {}
                STATUS_CYCLE_LIMIT => return Attempt::OverWork,
                status => {
                    let task = code.task_name(TaskId(task)).unwrap_or_default();
                    return Attempt::Failed(DryRunError::TaskFailed {
                        task: task.to_string(),
                        status,
                    });
                }
            }
            let cost = ctx.cycles.saturating_sub(work);
            work = ctx.cycles;
            if work > work_limit {
                return Attempt::OverWork;
            }
            let busy = switch_cycles.saturating_add(cost).max(1);
            pe.run.activations += 1;
            pe.run.busy_cycles += busy;
            if let Some(tracer) = &mut pe.tracer {
                tracer.end(busy);
            }
        }
        let transfers = pe.tracer.map(|t| t.transfers).unwrap_or_default();
        Attempt::Done {
            run: pe.run,
            transfers,
            work,
        }
    }
}

impl Attempt {
    fn into_result(self) -> Result<(DryRun, Vec<Transfer>), DryRunError> {
        match self {
            Attempt::Done { run, transfers, .. } => Ok((run, transfers)),
            Attempt::OverWork => Err(DryRunError::OverLimit),
            Attempt::Failed(e) => Err(e),
        }
    }
}

/// A kernel the code generators reject.
fn invalid(e: crate::CodegenError) -> DryRunError {
    DryRunError::Invalid(e.to_string())
}

/// Per port of `ports`, whether it is one of `late`'s.
fn late_ports(ports: usize, late: &[u32]) -> Vec<bool> {
    (0..ports as u32).map(|p| late.contains(&p)).collect()
}

/// The word every wavelet received on a port of element type `elem` writes: one.
fn one(elem: ScalarTy) -> u32 {
    match elem {
        ScalarTy::F32 => 1.0f32.to_bits(),
        // f16 one (0x3c00) in either half of the word.
        ScalarTy::F16 => 0x3c00_3c00,
        ScalarTy::I32 | ScalarTy::U32 | ScalarTy::Bool => 1,
    }
}

/// The dry run's side of the runtime calls.
struct DryPe {
    /// Per port, the word its received wavelets write ([`one`]).
    received: Vec<u32>,
    ready: VecDeque<u32>,
    /// The tasks of receives on late ports, run when no other task is ready.
    late_ready: VecDeque<u32>,
    late: Vec<bool>,
    tasks: u32,
    run: DryRun,
    tracer: Option<Tracer>,
}

impl DryPe {
    /// Queues `task` unless it is [`NO_TASK`]; a task the kernel does not have is an error.
    fn then(&mut self, task: u32) -> u32 {
        if task == NO_TASK {
            STATUS_OK
        } else if task < self.tasks {
            self.ready.push_back(task);
            if let Some(tracer) = &mut self.tracer {
                tracer.activate();
            }
            STATUS_OK
        } else {
            STATUS_ERROR
        }
    }
}

const CALLS: RuntimeCalls = RuntimeCalls {
    send,
    send_scalar,
    recv,
    activate,
    out_of_bounds,
};

/// # Safety
///
/// `ctx.runtime` must point to the live [`DryPe`] of the running dry run.
unsafe fn state<'a>(ctx: *mut TaskCtx) -> &'a mut DryPe {
    // SAFETY: the caller's guarantee; `dry_run` sets `runtime` to its `DryPe`.
    unsafe { &mut *(*ctx).runtime.cast::<DryPe>() }
}

unsafe extern "C" fn send(ctx: *mut TaskCtx, port: u32, _offset: u32, n: u32, then: u32) -> u32 {
    // SAFETY: called by the interpreter with the context `dry_run` built.
    let (pe, work) = unsafe { (state(ctx), (*ctx).cycles) };
    pe.run.wavelets_out += u64::from(n);
    if let Some(tracer) = &mut pe.tracer {
        tracer.send(port, n, work);
    }
    pe.then(then)
}

unsafe extern "C" fn send_scalar(ctx: *mut TaskCtx, port: u32, _value: u32, then: u32) -> u32 {
    // SAFETY: as in `send`.
    let (pe, work) = unsafe { (state(ctx), (*ctx).cycles) };
    pe.run.wavelets_out += 1;
    if let Some(tracer) = &mut pe.tracer {
        tracer.send(port, 1, work);
    }
    pe.then(then)
}

unsafe extern "C" fn recv(ctx: *mut TaskCtx, port: u32, n: u32, offset: u32, then: u32) -> u32 {
    // SAFETY: as in `send`.
    let (pe, work) = unsafe { (state(ctx), (*ctx).cycles) };
    pe.run.wavelets_in += u64::from(n);
    // SAFETY: as in `send`; `sram` holds `sram_len` bytes, u32-aligned, and the words written
    // lie inside it.
    unsafe {
        let (sram, len) = ((*ctx).sram.cast::<u32>(), (*ctx).sram_len / 4);
        let word = pe.received.get(port as usize).copied().unwrap_or(0);
        for i in (offset / 4)..(offset / 4).saturating_add(n).min(len) {
            *sram.add(i as usize) = word;
        }
    }
    if then == NO_TASK || then >= pe.tasks {
        return pe.then(then);
    }
    if pe.late.get(port as usize).copied().unwrap_or(false) {
        pe.late_ready.push_back(then);
    } else {
        pe.ready.push_back(then);
    }
    if let Some(tracer) = &mut pe.tracer {
        tracer.recv(port, n, work);
    }
    STATUS_OK
}

unsafe extern "C" fn activate(ctx: *mut TaskCtx, task: u32) -> u32 {
    // SAFETY: as in `send`.
    let pe = unsafe { state(ctx) };
    if task == NO_TASK {
        return STATUS_ERROR;
    }
    pe.then(task)
}

unsafe extern "C" fn out_of_bounds(
    _ctx: *mut TaskCtx,
    _array: u32,
    _index: u64,
    _bound: u64,
) -> u32 {
    wsel_abi::STATUS_OUT_OF_BOUNDS
}

#[cfg(test)]
mod tests {
    use super::*;
    use wsel_ir::kernel::{Array, Const, Expr, Port, PortDirection, ScalarTy, Slice, Stmt, Task};

    /// `main` posts a 4-wavelet receive then `got`; `got` adds one to a counter and posts the
    /// next receive until three have arrived, then sends the counter once.
    fn counting_kernel() -> KernelIr {
        let count = wsel_ir::kernel::ArrayId(1);
        let buf = wsel_ir::kernel::ArrayId(0);
        let u = |v| Expr::Const(Const::u32(v));
        let recv = Stmt::Recv {
            port: wsel_ir::kernel::PortId(0),
            dst: Slice {
                array: buf,
                start: u(0),
                len: u(4),
            },
            then: TaskId(1),
        };
        KernelIr {
            name: "counting".into(),
            arrays: vec![
                Array {
                    name: "buf".into(),
                    elem: ScalarTy::U32,
                    len: 4,
                    offset_words: 0,
                    init: Const::u32(0),
                },
                Array {
                    name: "count".into(),
                    elem: ScalarTy::U32,
                    len: 1,
                    offset_words: 4,
                    init: Const::u32(0),
                },
            ],
            ports: vec![
                Port {
                    name: "xs".into(),
                    direction: PortDirection::In,
                    elem: ScalarTy::U32,
                },
                Port {
                    name: "ys".into(),
                    direction: PortDirection::Out,
                    elem: ScalarTy::U32,
                },
            ],
            tasks: vec![
                Task {
                    name: "main".into(),
                    locals: vec![],
                    body: vec![recv.clone()],
                },
                Task {
                    name: "got".into(),
                    locals: vec![],
                    body: vec![
                        Stmt::Store {
                            array: count,
                            index: u(0),
                            op: wsel_ir::kernel::AssignOp::Add,
                            value: u(1),
                        },
                        Stmt::If {
                            cond: Expr::Binary {
                                op: wsel_ir::kernel::BinaryOp::Lt,
                                ty: ScalarTy::U32,
                                lhs: Box::new(Expr::Load {
                                    array: count,
                                    index: Box::new(u(0)),
                                }),
                                rhs: Box::new(u(3)),
                            },
                            then_body: vec![recv],
                            else_body: vec![Stmt::SendSlice {
                                port: wsel_ir::kernel::PortId(1),
                                src: Slice {
                                    array: count,
                                    start: u(0),
                                    len: u(1),
                                },
                                then: None,
                            }],
                        },
                    ],
                },
            ],
            entry: TaskId(0),
        }
    }

    fn place() -> PePlace {
        PePlace {
            x: 0,
            y: 0,
            width: 1,
            height: 1,
        }
    }

    #[test]
    fn counts_the_work_of_every_activation() {
        let kernel = counting_kernel();
        let run = DryRunner::new(&kernel, &CostModel::WSE2_LIKE, DryRunLimits::default())
            .and_then(|runner| runner.run(4, place()))
            .expect("dry run");
        // By hand (`wsel_ir::cost`: constants cost nothing, every other node one cycle, a
        // transfer one cycle to issue; 4 cycles of task switch per activation):
        // `main` = receive 1 + switch 4 = 5;
        // `got` = `count[0] += 1` (store 1 + combine 1) 2 + `if count[0] < 3` (if 1 + load 1 +
        //         compare 1) 3 + the receive or the send 1 + switch 4 = 10;
        // `main` once and `got` three times: 5 + 3 · 10 = 35.
        assert_eq!(run.activations, 4);
        assert_eq!(run.busy_cycles, 35);
        assert_eq!(run.wavelets_in, 12);
        assert_eq!(run.wavelets_out, 1);
    }

    #[test]
    fn a_trace_orders_every_transfer_after_what_queued_it() {
        use crate::dry_trace::{Mark, Transfer};
        let kernel = counting_kernel();
        let (run, trace) = DryRunner::new(&kernel, &CostModel::WSE2_LIKE, DryRunLimits::default())
            .and_then(|runner| runner.trace(4, place()))
            .expect("dry run");
        assert_eq!(run.busy_cycles, 35);
        // By hand, the causal clock (4 cycles of switch first in every activation): `main`
        // posts receive 1 after its switch and the receive's issue, at 5, and ends there;
        // each `got` starts where the last activation ended and posts the next receive (or
        // sends) after its switch and 6 cycles of work: receives at 15 and 25, the send at 35.
        // Every `got` follows the receive whose task it is, which started it.
        let recv = |ordinal, at, after: Option<Mark>| Transfer {
            port: 0,
            send: false,
            ordinal,
            words: 4,
            at,
            after: vec![after, None],
        };
        let mark = |ordinal, at| Some(Mark { ordinal, at });
        assert_eq!(
            trace,
            [
                recv(1, 5, None),
                recv(2, 15, mark(1, 5)),
                recv(3, 25, mark(2, 15)),
                Transfer {
                    port: 1,
                    send: true,
                    ordinal: 1,
                    words: 1,
                    at: 35,
                    after: vec![mark(3, 25), None],
                },
            ]
        );
        // Untraced, the same run; compiled, the same trace.
        let plain = DryRunner::new(&kernel, &CostModel::WSE2_LIKE, DryRunLimits::default())
            .and_then(|runner| runner.run(4, place()))
            .expect("dry run");
        assert_eq!(plain, run);
        let compiled = DryRunner::new(&kernel, &CostModel::WSE2_LIKE, interpreting(0))
            .and_then(|runner| runner.trace(4, place()))
            .expect("dry run");
        assert_eq!(compiled, (run, trace));
    }

    /// Limits that run in the interpreter up to `interpreted_work` cycles of work.
    fn interpreting(interpreted_work: u64) -> DryRunLimits {
        DryRunLimits {
            interpreted_work,
            ..DryRunLimits::default()
        }
    }

    #[test]
    fn interpreted_compiled_and_restarted_runs_agree() {
        // The counting kernel does 19 cycles of work (35 busy, less 4 cycles of switch for
        // each of its 4 activations): all in the interpreter, all compiled, and a run that
        // outgrows an interpreter allowed 5 cycles (15 for the kernel's first run) and starts
        // again compiled.
        let kernel = counting_kernel();
        let run = |limits| {
            DryRunner::new(&kernel, &CostModel::WSE2_LIKE, limits)
                .and_then(|runner| runner.run(4, place()))
                .expect("dry run")
        };
        let interpreted = run(interpreting(u64::MAX));
        assert_eq!(interpreted.busy_cycles, 35);
        assert_eq!(run(interpreting(0)), interpreted);
        assert_eq!(run(interpreting(5)), interpreted);
        // Allowed its work (and more, as a first run), the interpreter finishes it.
        assert_eq!(run(interpreting(19)), interpreted);
    }

    #[test]
    fn only_a_run_that_outgrows_the_interpreter_compiles() {
        // The counting kernel's 19 cycles of work, run twice: interpreted both times when 50
        // are allowed; when 10 are, the first run (allowed three times as much) finishes in
        // the interpreter and the second, which would outgrow it too, starts compiled; when 5
        // are, the first run outgrows its 15 and compiles.
        for (allowance, first, second) in [(50, false, false), (10, false, true), (5, true, true)] {
            let runner = DryRunner::new(
                &counting_kernel(),
                &CostModel::WSE2_LIKE,
                interpreting(allowance),
            )
            .expect("prepares");
            let mut compiled = Vec::new();
            for _ in 0..2 {
                runner.run(4, place()).expect("dry run");
                compiled.push(runner.compiled.get().is_some());
            }
            assert_eq!(compiled, [first, second], "{allowance} cycles allowed");
        }
    }

    #[test]
    fn a_kernel_that_never_stops_is_over_the_limit() {
        let mut kernel = counting_kernel();
        // `got` always posts the next receive: it never ends.
        kernel.tasks[1].body = vec![kernel.tasks[0].body[0].clone()];
        let limits = DryRunLimits {
            activations: 50,
            work_cycles: 1000,
            sram_words: 1 << 24,
            interpreted_work: 50_000,
        };
        let runner = DryRunner::new(&kernel, &CostModel::WSE2_LIKE, limits).expect("compiles");
        assert_eq!(runner.run(4, place()), Err(DryRunError::OverLimit));
    }

    #[test]
    fn many_short_activations_stop_at_the_work_limit() {
        let mut kernel = counting_kernel();
        kernel.tasks[1].body = vec![kernel.tasks[0].body[0].clone()];
        // Activations alone would allow a million; the work of 1 cycle each (plus nothing
        // charged for switches) reaches 1,000 after about a thousand.
        let limits = DryRunLimits {
            activations: 1_000_000,
            work_cycles: 1000,
            sram_words: 1 << 24,
            interpreted_work: 50_000,
        };
        let runner = DryRunner::new(&kernel, &CostModel::WSE2_LIKE, limits).expect("compiles");
        assert_eq!(runner.run(0, place()), Err(DryRunError::OverLimit));
    }

    #[test]
    fn a_kernel_larger_than_the_sram_cap_is_refused() {
        let limits = DryRunLimits {
            sram_words: 4,
            ..DryRunLimits::default()
        };
        // The counting kernel has 5 words of arrays.
        assert!(matches!(
            DryRunner::new(&counting_kernel(), &CostModel::WSE2_LIKE, limits),
            Err(DryRunError::OverLimit)
        ));
    }

    #[test]
    fn an_endless_loop_is_over_the_limit() {
        let mut kernel = counting_kernel();
        kernel.tasks[0].body = vec![Stmt::While {
            cond: Expr::Const(Const::bool(true)),
            body: vec![],
        }];
        let limits = DryRunLimits {
            activations: 10,
            work_cycles: 1000,
            sram_words: 1 << 24,
            interpreted_work: 50_000,
        };
        let runner = DryRunner::new(&kernel, &CostModel::WSE2_LIKE, limits).expect("compiles");
        assert_eq!(runner.run(4, place()), Err(DryRunError::OverLimit));
    }
}
