//! Benchmark of the code generators: wall time per activation under each backend for a
//! compute-bound task (a 64×64 f32 matrix-vector tile as 64 vector FMAs, repeated) and a
//! communication-bound task (many small sends through a counting fake runtime), plus each
//! backend's compile time. Run with `cargo bench -p wsel-codegen --bench backends` (add
//! `--features llvm` for the LLVM column).

use std::ffi::c_void;
use std::hint::black_box;
use std::time::{Duration, Instant};

use wsel_abi::{RuntimeCalls, STATUS_OK, STATUS_OUT_OF_BOUNDS, TaskCtx};
use wsel_codegen::{Backend, CompiledKernel, compile};
use wsel_ir::cost::CostModel;
use wsel_ir::kernel::*;

const N: u32 = 64;
const REPEATS: u32 = 4;
const SENDS: u32 = 256;

fn main() {
    let model = CostModel::WSE2_LIKE;
    let kernels = [
        ("compute: 64x64 gemv tile x4", gemv()),
        ("comm: 256 scalar + 64 slice sends", comm()),
    ];
    println!(
        "backend    | task                              | compile (median) | per activation (median) | cycles"
    );
    println!(
        "-----------|-----------------------------------|------------------|-------------------------|--------"
    );
    let mut per_activation = Vec::new();
    for (label, kernel) in &kernels {
        for &backend in Backend::ALL {
            let compile_time = median_duration(9, || {
                let start = Instant::now();
                let compiled = compile(kernel, backend, &model).expect("compiles");
                let elapsed = start.elapsed();
                drop(black_box(compiled));
                elapsed
            });
            let compiled = compile(kernel, backend, &model).expect("compiles");
            let (time, cycles) = time_activation(&compiled, kernel);
            per_activation.push((*label, backend, time));
            println!(
                "{:<10} | {:<33} | {:>13.3} ms | {:>20.2} µs | {}",
                backend.name(),
                label,
                compile_time.as_secs_f64() * 1e3,
                time.as_secs_f64() * 1e6,
                cycles
            );
        }
    }
    for (label, _) in &kernels {
        let interp = per_activation
            .iter()
            .find(|(l, b, _)| l == label && *b == Backend::Interp)
            .map(|(_, _, t)| *t);
        for &(l, backend, time) in &per_activation {
            if let Some(interp) = interp
                && l == *label
                && backend != Backend::Interp
            {
                println!(
                    "speed-up of {backend} over interp on {label}: {:.1}x",
                    interp.as_secs_f64() / time.as_secs_f64()
                );
            }
        }
    }
}

/// The median wall time of one activation (over 15 batches sized to take ~20 ms each), and
/// the activation's cycle count.
fn time_activation(compiled: &CompiledKernel, kernel: &KernelIr) -> (Duration, u64) {
    let mut sram = vec![0u32; kernel.sram_words() as usize];
    for (i, word) in sram.iter_mut().enumerate() {
        *word = ((i % 17) as f32 * 0.25 - 1.0).to_bits();
    }
    let mut runtime = Counter::default();
    let cycles = activate(compiled, &mut sram, &mut runtime);
    let start = Instant::now();
    let mut probe = 0u32;
    while start.elapsed() < Duration::from_millis(20) {
        activate(compiled, &mut sram, &mut runtime);
        probe += 1;
    }
    let batch = probe.max(1);
    let time = median_duration(15, || {
        let start = Instant::now();
        for _ in 0..batch {
            activate(compiled, &mut sram, &mut runtime);
        }
        start.elapsed() / batch
    });
    (time, cycles)
}

fn activate(compiled: &CompiledKernel, sram: &mut [u32], runtime: &mut Counter) -> u64 {
    let mut ctx = TaskCtx {
        sram: sram.as_mut_ptr().cast(),
        sram_len: (sram.len() * 4) as u32,
        task: 0,
        x: 0,
        y: 0,
        width: 1,
        height: 1,
        args: std::ptr::null(),
        n_args: 0,
        reserved: 0,
        cycles: 0,
        runtime: (runtime as *mut Counter).cast::<c_void>(),
        calls: &CALLS,
        cycle_limit: wsel_abi::NO_CYCLE_LIMIT,
        clock: 0,
    };
    // SAFETY: the context points at live SRAM of `sram_len` bytes, a valid call table and a
    // live runtime, all outliving the call.
    let status = unsafe { compiled.run(TaskId(0), &mut ctx) };
    assert_eq!(status, STATUS_OK);
    black_box(ctx.cycles)
}

fn median_duration(samples: usize, mut measure: impl FnMut() -> Duration) -> Duration {
    let mut times: Vec<Duration> = (0..samples).map(|_| measure()).collect();
    times.sort();
    times[samples / 2]
}

/// y[0..64] += x[r] * W[r*64 .. r*64+64] for r in 0..64, the whole repeated `REPEATS` times.
fn gemv() -> KernelIr {
    let u = |v| Expr::Const(Const::u32(v));
    let r = || Expr::Local(LocalId(1));
    let row_start = Expr::Binary {
        op: BinaryOp::Mul,
        ty: ScalarTy::U32,
        lhs: Box::new(r()),
        rhs: Box::new(u(N)),
    };
    let fma = Stmt::Vector {
        dst: Slice {
            array: ArrayId(2),
            start: u(0),
            len: u(N),
        },
        op: AssignOp::Add,
        value: VExpr::Binary {
            op: BinaryOp::Mul,
            ty: ScalarTy::F32,
            lhs: Box::new(VExpr::Scalar(Expr::Load {
                array: ArrayId(1),
                index: Box::new(r()),
            })),
            rhs: Box::new(VExpr::Elem {
                array: ArrayId(0),
                start: row_start,
            }),
        },
    };
    KernelIr {
        name: "gemv_tile<64,64>".into(),
        arrays: vec![
            array("w", N * N, 0),
            array("x", N, N * N),
            array("y", N, N * N + N),
        ],
        ports: vec![],
        tasks: vec![Task {
            name: "main".into(),
            locals: vec![local("rep"), local("r")],
            body: vec![Stmt::For {
                local: LocalId(0),
                lo: u(0),
                hi: u(REPEATS),
                body: vec![Stmt::For {
                    local: LocalId(1),
                    lo: u(0),
                    hi: u(N),
                    body: vec![fma],
                }],
            }],
        }],
        entry: TaskId(0),
    }
}

/// 256 scalar sends of computed values and 64 four-word slice sends.
fn comm() -> KernelIr {
    let u = |v| Expr::Const(Const::u32(v));
    let i = || Expr::Local(LocalId(0));
    KernelIr {
        name: "sender".into(),
        arrays: vec![array("a", N + 4, 0)],
        ports: vec![Port {
            name: "out".into(),
            direction: PortDirection::Out,
            elem: ScalarTy::U32,
        }],
        tasks: vec![Task {
            name: "main".into(),
            locals: vec![local("i")],
            body: vec![
                Stmt::For {
                    local: LocalId(0),
                    lo: u(0),
                    hi: u(SENDS),
                    body: vec![Stmt::SendScalar {
                        port: PortId(0),
                        value: Expr::Binary {
                            op: BinaryOp::Add,
                            ty: ScalarTy::U32,
                            lhs: Box::new(i()),
                            rhs: Box::new(u(7)),
                        },
                        then: None,
                    }],
                },
                Stmt::For {
                    local: LocalId(0),
                    lo: u(0),
                    hi: u(N),
                    body: vec![Stmt::SendSlice {
                        port: PortId(0),
                        src: Slice {
                            array: ArrayId(0),
                            start: i(),
                            len: u(4),
                        },
                        then: None,
                    }],
                },
            ],
        }],
        entry: TaskId(0),
    }
}

fn array(name: &str, len: u32, offset_words: u32) -> Array {
    Array {
        name: name.into(),
        elem: ScalarTy::F32,
        len,
        offset_words,
        init: Const::f32(0.0),
    }
}

fn local(name: &str) -> Local {
    Local {
        name: name.into(),
        ty: ScalarTy::U32,
    }
}

/// A fake runtime that only counts calls (and sums the issue cycles, so calls are not free).
#[derive(Default)]
struct Counter {
    calls: u64,
    issue_sum: u64,
}

const CALLS: RuntimeCalls = RuntimeCalls {
    send,
    send_scalar,
    recv,
    activate: activate_task,
    out_of_bounds,
};

/// # Safety
/// `ctx.runtime` must be the `Counter` `activate` passed.
unsafe fn count(ctx: *mut TaskCtx) -> u32 {
    // SAFETY: the caller's guarantee; the counter is not otherwise borrowed during the call.
    unsafe {
        let counter = &mut *(*ctx).runtime.cast::<Counter>();
        counter.calls += 1;
        counter.issue_sum = counter.issue_sum.wrapping_add((*ctx).cycles);
    }
    STATUS_OK
}

unsafe extern "C" fn send(ctx: *mut TaskCtx, _: u32, _: u32, _: u32, _: u32) -> u32 {
    // SAFETY: called by compiled code with the context `activate` built.
    unsafe { count(ctx) }
}

unsafe extern "C" fn send_scalar(ctx: *mut TaskCtx, _: u32, _: u32, _: u32) -> u32 {
    // SAFETY: as above.
    unsafe { count(ctx) }
}

unsafe extern "C" fn recv(ctx: *mut TaskCtx, _: u32, _: u32, _: u32, _: u32) -> u32 {
    // SAFETY: as above.
    unsafe { count(ctx) }
}

unsafe extern "C" fn activate_task(ctx: *mut TaskCtx, _: u32) -> u32 {
    // SAFETY: as above.
    unsafe { count(ctx) }
}

unsafe extern "C" fn out_of_bounds(_: *mut TaskCtx, _: u32, _: u64, _: u64) -> u32 {
    STATUS_OUT_OF_BOUNDS
}
