//! The public interface as the runtime uses it: native task pointers called directly, one
//! compiled kernel shared by many PEs (threads), unknown tasks refused.

mod common;

use common::build::*;
use common::runtime::{CALLS, FakeRuntime};
use common::{Pe, Setup, run};
use wsel_abi::TaskCtx;
use wsel_codegen::{Backend, CompiledKernel, compile};
use wsel_ir::cost::CostModel;
use wsel_ir::kernel::AssignOp::Set;
use wsel_ir::kernel::BinaryOp as B;
use wsel_ir::kernel::{Coord, KernelIr, TaskId};

/// out[0] = pe.col * 1000 + pe.row * 10 + region cols.
fn coords_kernel() -> KernelIr {
    kernel(
        "coords",
        arrays(&[("out", U32, 1)]),
        vec![],
        vec![task(
            "main",
            &[],
            vec![store(
                0,
                u32c(0),
                Set,
                bin(
                    B::Add,
                    U32,
                    bin(
                        B::Add,
                        U32,
                        bin(B::Mul, U32, coord(Coord::PeCol), u32c(1000)),
                        bin(B::Mul, U32, coord(Coord::PeRow), u32c(10)),
                    ),
                    coord(Coord::RegionCols),
                ),
            )],
        )],
    )
}

#[test]
fn compiled_kernels_can_be_shared_between_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<CompiledKernel>();

    let k = coords_kernel();
    for &backend in Backend::ALL {
        let compiled = compile(&k, backend, &CostModel::WSE2_LIKE).expect("compiles");
        std::thread::scope(|scope| {
            for x in 0..4u32 {
                let compiled = &compiled;
                let k = &k;
                scope.spawn(move || {
                    for y in 0..3u32 {
                        let mut setup = Setup::entry(k);
                        setup.pe = Pe {
                            x,
                            y,
                            width: 4,
                            height: 3,
                        };
                        let out = run(compiled, &setup);
                        assert_eq!(out.status, 0);
                        assert_eq!(out.sram, [x * 1000 + y * 10 + 4], "{backend}");
                    }
                });
            }
        });
    }
}

#[test]
fn native_task_pointers_run_without_the_wrapper() {
    let k = coords_kernel();
    for &backend in Backend::ALL {
        let compiled = compile(&k, backend, &CostModel::WSE2_LIKE).expect("compiles");
        let Some(entry) = compiled.task_fn(TaskId(0)) else {
            assert_eq!(backend, Backend::Interp);
            continue;
        };
        let mut sram = [0u32; 1];
        let mut fake = FakeRuntime::new(None);
        let mut ctx = TaskCtx {
            sram: sram.as_mut_ptr().cast(),
            sram_len: 4,
            task: 0,
            x: 2,
            y: 1,
            width: 5,
            height: 2,
            args: std::ptr::null(),
            n_args: 0,
            reserved: 0,
            cycles: 0,
            runtime: (&mut fake as *mut FakeRuntime).cast(),
            calls: &CALLS,
            cycle_limit: wsel_abi::NO_CYCLE_LIMIT,
            clock: 0,
        };
        // SAFETY: the context points at live SRAM of `sram_len` bytes, the fake runtime and
        // its call table; `compiled` (which owns the code) outlives the call.
        let status = unsafe { entry(&mut ctx) };
        assert_eq!(status, 0);
        assert_eq!(sram, [2015]);
        // The store: 1, plus four arithmetic nodes.
        assert_eq!(ctx.cycles, 5);
    }
}

#[test]
fn an_unknown_task_is_refused() {
    let k = coords_kernel();
    for &backend in Backend::ALL {
        let compiled = compile(&k, backend, &CostModel::WSE2_LIKE).expect("compiles");
        assert!(compiled.task_fn(TaskId(1)).is_none());
        let setup = Setup::entry(&k).task(1);
        assert_eq!(run(&compiled, &setup).status, wsel_abi::STATUS_ERROR);
    }
}

#[test]
fn kernels_compile_and_drop_concurrently() {
    let k = coords_kernel();
    std::thread::scope(|scope| {
        for _ in 0..3 {
            scope.spawn(|| {
                for _ in 0..3 {
                    for &backend in Backend::ALL {
                        let compiled =
                            compile(&k, backend, &CostModel::WSE2_LIKE).expect("compiles");
                        let out = run(&compiled, &Setup::entry(&k));
                        assert_eq!(out.sram, [1000 + 20 + 4]);
                    }
                }
            });
        }
    });
}
