//! The build artifact at the code generator's level: a kernel compiled, saved
//! (`CompiledKernel::to_artifact`), encoded, decoded and loaded (`from_artifact`) gives the
//! same SRAM bits, runtime calls and cycles as the freshly compiled one, without compiling
//! (Cranelift keeps machine code, the interpreter the IR); and a saved kernel that does not
//! fit (another IR, another host, a damaged relocation) is an error, never a panic.
//!
//! Every differential test also reloads each kernel (`common::run_everywhere_with`); this file
//! checks the cases around it.

mod common;

use common::build::*;
use common::{Setup, fill, reload, run};
use wsel_codegen::{Backend, CompiledKernel, KernelArtifact, compile};
use wsel_ir::cost::CostModel;
use wsel_ir::kernel::AssignOp::{Add, Set};
use wsel_ir::kernel::BinaryOp as B;
use wsel_ir::kernel::PortDirection::{In, Out};
use wsel_ir::kernel::{KernelIr, MathFn, PortId, ReduceOp, Stmt, TaskId};

/// Two tasks with host math calls (exp, tanh), a reduction, a receive and a send: every kind
/// of relocation and runtime call the Cranelift backend emits.
fn kernel_with_calls() -> KernelIr {
    let n = 8;
    kernel(
        "calls",
        arrays(&[("x", F32, n), ("y", F32, n)]),
        vec![port("xs", In, F32), port("ys", Out, F32)],
        vec![
            task(
                "main",
                &[("m", F32)],
                vec![
                    set(0, reduce(ReduceOp::Max, F32, slice(0, u32c(0), u32c(n)))),
                    vector(
                        slice(1, u32c(0), u32c(n)),
                        Set,
                        vmath(
                            MathFn::Exp,
                            F32,
                            vbin(B::Sub, F32, elem(0, u32c(0)), scalar(local(0))),
                        ),
                    ),
                    Stmt::Recv {
                        port: PortId(0),
                        dst: slice(0, u32c(0), u32c(n)),
                        then: TaskId(1),
                    },
                ],
            ),
            task(
                "step",
                &[],
                vec![
                    vector(
                        slice(1, u32c(0), u32c(n)),
                        Add,
                        vmath(MathFn::Tanh, F32, elem(0, u32c(0))),
                    ),
                    Stmt::SendSlice {
                        port: PortId(1),
                        src: slice(1, u32c(0), u32c(n)),
                        then: None,
                    },
                ],
            ),
        ],
    )
}

fn setup(k: &KernelIr) -> Setup {
    let mut setup = Setup::entry(k);
    let x: Vec<u32> = [0.5f32, -1.0, 2.0, 3.0, -0.0, 1.5, 7.25, -3.5]
        .iter()
        .map(|v| v.to_bits())
        .collect();
    fill(k, &mut setup.sram, 0, &x);
    setup
}

/// Saves and re-reads an artifact through JSON, letting `edit` change it on the way: how a
/// foreign or damaged artifact is made.
fn edited(artifact: &KernelArtifact, edit: impl FnOnce(&mut serde_json::Value)) -> KernelArtifact {
    let mut value = serde_json::to_value(artifact).expect("artifact as JSON");
    edit(&mut value);
    serde_json::from_value(value).expect("still an artifact")
}

#[test]
fn reloaded_kernels_match_freshly_compiled_ones_on_every_task() {
    let k = kernel_with_calls();
    let cost = CostModel::WSE2_LIKE;
    for &backend in Backend::ALL {
        let fresh = compile(&k, backend, &cost).expect("compiles");
        let artifact = fresh.to_artifact();
        assert_eq!(artifact.backend_name(), backend.name());
        match reload(&fresh, &k, &cost) {
            Some(reloaded) => {
                assert_eq!(reloaded.backend(), backend);
                for task in 0..2 {
                    let setup = setup(&k).task(task);
                    let expected = run(&fresh, &setup);
                    let got = run(&reloaded, &setup);
                    assert_eq!(expected, got, "{backend}, task {task}");
                    assert!(got.cycles > 0);
                }
            }
            None => assert!(
                !matches!(backend, Backend::Interp | Backend::Cranelift),
                "{backend} must keep its code"
            ),
        }
    }
}

#[test]
fn cranelift_keeps_machine_code_with_named_relocations() {
    let k = kernel_with_calls();
    let fresh = compile(&k, Backend::Cranelift, &CostModel::WSE2_LIKE).expect("compiles");
    let artifact = fresh.to_artifact();
    assert!(artifact.reuses_code());
    let json = serde_json::to_value(&artifact).expect("JSON");
    let functions = &json["code"]["Machine"]["functions"];
    assert_eq!(functions.as_array().map(Vec::len), Some(2));
    let text = json.to_string();
    // The host math functions are named by symbol, never by address.
    assert!(
        text.contains("wsel_expf") && text.contains("wsel_tanhf"),
        "{text}"
    );
}

#[test]
fn the_interpreter_keeps_only_the_ir() {
    let k = kernel_with_calls();
    let fresh = compile(&k, Backend::Interp, &CostModel::WSE2_LIKE).expect("compiles");
    let json = serde_json::to_value(fresh.to_artifact()).expect("JSON");
    assert_eq!(json["code"], serde_json::json!("Interpreted"));
}

#[cfg(feature = "llvm")]
#[test]
fn llvm_is_compiled_afresh_from_the_ir() {
    let k = kernel_with_calls();
    let cost = CostModel::WSE2_LIKE;
    let fresh = compile(&k, Backend::Llvm, &cost).expect("compiles");
    let artifact = fresh.to_artifact();
    assert!(!artifact.reuses_code());
    let again = CompiledKernel::from_artifact(&artifact, &k, &cost).expect("recompiles");
    let setup = setup(&k);
    assert_eq!(run(&fresh, &setup), run(&again, &setup));
}

#[test]
fn an_artifact_of_another_kernel_is_refused() {
    let k = kernel_with_calls();
    let cost = CostModel::WSE2_LIKE;
    let mut other = k.clone();
    other.tasks[1].name = "other".into();
    for &backend in Backend::ALL {
        let artifact = compile(&k, backend, &cost).expect("compiles").to_artifact();
        let error = CompiledKernel::from_artifact(&artifact, &other, &cost)
            .expect_err("another kernel's code");
        assert!(error.message().contains("does not belong"), "{error}");
    }
}

#[test]
fn machine_code_for_another_host_is_refused() {
    let k = kernel_with_calls();
    let cost = CostModel::WSE2_LIKE;
    let artifact = compile(&k, Backend::Cranelift, &cost)
        .expect("compiles")
        .to_artifact();
    let foreign = edited(&artifact, |v| {
        v["code"]["Machine"]["host"] = "riscv64gc-unknown-linux-gnu | opt_level=speed".into();
    });
    let error = CompiledKernel::from_artifact(&foreign, &k, &cost).expect_err("foreign host");
    assert!(error.message().contains("riscv64gc"), "{error}");

    let fewer_features = edited(&artifact, |v| {
        let host = v["code"]["Machine"]["host"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        v["code"]["Machine"]["host"] = format!("{host} has_imaginary_feature=true").into();
    });
    let error = CompiledKernel::from_artifact(&fewer_features, &k, &cost).expect_err("other CPU");
    assert!(error.message().contains("has_imaginary_feature"), "{error}");
}

#[test]
fn damaged_relocations_are_refused_before_anything_runs() {
    let k = kernel_with_calls();
    let cost = CostModel::WSE2_LIKE;
    let artifact = compile(&k, Backend::Cranelift, &cost)
        .expect("compiles")
        .to_artifact();
    fn reloc(v: &mut serde_json::Value) -> Option<&mut serde_json::Value> {
        v["code"]["Machine"]["functions"]
            .as_array_mut()?
            .iter_mut()
            .find_map(|f| f["relocs"].as_array_mut()?.first_mut())
    }
    type Edit = fn(&mut serde_json::Value);
    let cases: [(&str, Edit); 4] = [
        ("unknown symbol", |v| {
            if let Some(r) = reloc(v) {
                r["target"] = serde_json::json!({ "Symbol": "system" });
            }
        }),
        ("outside the function", |v| {
            if let Some(r) = reloc(v) {
                r["offset"] = 1_000_000.into();
            }
        }),
        ("unknown relocation kind", |v| {
            if let Some(r) = reloc(v) {
                r["kind"] = "MachOX86_64Tlv".into();
            }
        }),
        ("alignment", |v| {
            v["code"]["Machine"]["functions"][0]["alignment"] = 3.into();
        }),
    ];
    for (expected, edit) in cases {
        let damaged = edited(&artifact, edit);
        let error = CompiledKernel::from_artifact(&damaged, &k, &cost).expect_err(expected);
        assert!(error.message().contains(expected), "{expected}: {error}");
    }
}
