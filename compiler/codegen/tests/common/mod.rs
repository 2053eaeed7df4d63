//! Shared test support: a fake runtime recording every runtime call, a harness that runs a task
//! under every backend and compares the outcomes, and terse IR builders.

#![allow(dead_code)]

pub mod build;
pub mod runtime;

use wsel_codegen::{Backend, CompiledKernel, compile};
use wsel_ir::cost::CostModel;
use wsel_ir::kernel::{KernelIr, TaskId};

pub use runtime::{Event, Pe};

/// Words after the SRAM that must never be written.
const GUARD_WORDS: usize = 64;
const GUARD: u32 = 0xDEAD_BEEF;

/// What one activation did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub status: u32,
    pub sram: Vec<u32>,
    pub events: Vec<Event>,
    pub cycles: u64,
}

/// Everything a test needs to run one activation.
#[derive(Debug, Clone)]
pub struct Setup {
    pub task: TaskId,
    /// Initial SRAM words (the kernel's `sram_words()` of them, or fewer for an SRAM that is
    /// too small).
    pub sram: Vec<u32>,
    pub pe: Pe,
    /// Make the n-th runtime call (from 0) of these kinds fail with this status.
    pub fail_call: Option<(usize, u32)>,
    /// `TaskCtx::cycle_limit`.
    pub cycle_limit: u64,
}

impl Setup {
    /// The entry task on PE (1, 2) of a 4×3 region, with SRAM holding the arrays' initial values.
    pub fn entry(kernel: &KernelIr) -> Setup {
        Setup {
            task: kernel.entry,
            sram: initial_sram(kernel),
            pe: Pe {
                x: 1,
                y: 2,
                width: 4,
                height: 3,
            },
            fail_call: None,
            cycle_limit: wsel_abi::NO_CYCLE_LIMIT,
        }
    }

    pub fn task(mut self, task: u32) -> Setup {
        self.task = TaskId(task);
        self
    }
}

/// SRAM with every array at its initial value.
pub fn initial_sram(kernel: &KernelIr) -> Vec<u32> {
    let mut sram = vec![0u32; kernel.sram_words() as usize];
    for array in &kernel.arrays {
        let start = array.offset_words as usize;
        sram[start..start + array.len as usize].fill(array.init.bits);
    }
    sram
}

/// Sets the elements of array `array` from `values`' bit patterns.
pub fn fill(kernel: &KernelIr, sram: &mut [u32], array: u32, values: &[u32]) {
    let start = kernel.arrays[array as usize].offset_words as usize;
    sram[start..start + values.len()].copy_from_slice(values);
}

/// Runs one activation with an already compiled kernel.
pub fn run(compiled: &CompiledKernel, setup: &Setup) -> Outcome {
    let mut memory = setup.sram.clone();
    memory.extend(std::iter::repeat_n(GUARD, GUARD_WORDS));
    let mut fake = runtime::FakeRuntime::new(setup.fail_call);
    let (status, cycles) = fake.call(
        compiled,
        setup.task,
        &mut memory,
        setup.sram.len(),
        setup.pe,
        setup.cycle_limit,
    );
    let guards = &memory[setup.sram.len()..];
    assert!(
        guards.iter().all(|&word| word == GUARD),
        "{}: a write went past the end of SRAM",
        compiled.backend()
    );
    memory.truncate(setup.sram.len());
    Outcome {
        status,
        sram: memory,
        events: fake.events,
        cycles,
    }
}

/// Compiles `kernel` under every backend, runs `setup` under each and asserts the outcomes are
/// identical (SRAM bits, runtime-call trace with issue cycles, final cycles, status). Every
/// backend whose artifact keeps its code (interp, cranelift) is also saved, encoded, decoded,
/// loaded back and run again: the reloaded kernel must give the very same outcome. Returns
/// the common outcome.
pub fn run_everywhere(kernel: &KernelIr, setup: &Setup) -> Outcome {
    run_everywhere_with(kernel, setup, &CostModel::WSE2_LIKE)
}

pub fn run_everywhere_with(kernel: &KernelIr, setup: &Setup, cost: &CostModel) -> Outcome {
    let mut reference: Option<Outcome> = None;
    for &backend in Backend::ALL {
        let compiled = compile(kernel, backend, cost)
            .unwrap_or_else(|e| panic!("{backend} failed to compile {}: {e}", kernel.name));
        let outcome = run(&compiled, setup);
        if let Some(reloaded) = reload(&compiled, kernel, cost) {
            assert_eq!(
                outcome,
                run(&reloaded, setup),
                "{backend}: the kernel loaded from its artifact differs from the freshly compiled one on {}",
                kernel.name
            );
        }
        match &reference {
            None => reference = Some(outcome),
            Some(expected) => assert_same(kernel, backend, expected, &outcome),
        }
    }
    reference.expect("at least one backend")
}

/// The kernel saved as an artifact, encoded as the driver encodes it (postcard), decoded and
/// loaded back; `None` when the backend does not keep its code (LLVM compiles afresh).
pub fn reload(
    compiled: &CompiledKernel,
    kernel: &KernelIr,
    cost: &CostModel,
) -> Option<CompiledKernel> {
    let artifact = compiled.to_artifact();
    if !artifact.reuses_code() {
        return None;
    }
    let bytes = postcard::to_allocvec(&artifact).expect("artifact encodes");
    let decoded: wsel_codegen::KernelArtifact =
        postcard::from_bytes(&bytes).expect("artifact decodes");
    assert_eq!(decoded, artifact, "the artifact survives encoding");
    Some(
        CompiledKernel::from_artifact(&decoded, kernel, cost).unwrap_or_else(|e| {
            panic!(
                "{}: loading the artifact of {}: {e}",
                compiled.backend(),
                kernel.name
            )
        }),
    )
}

pub fn assert_same(kernel: &KernelIr, backend: Backend, expected: &Outcome, got: &Outcome) {
    assert_eq!(
        expected.status, got.status,
        "{backend} status differs from interp on {}",
        kernel.name
    );
    assert_eq!(
        expected.events, got.events,
        "{backend} runtime calls differ from interp on {}",
        kernel.name
    );
    for (word, (a, b)) in expected.sram.iter().zip(&got.sram).enumerate() {
        assert_eq!(
            a,
            b,
            "{backend} SRAM word {word} differs from interp on {} ({:?} vs {:?})",
            kernel.name,
            f32::from_bits(*a),
            f32::from_bits(*b)
        );
    }
    assert_eq!(
        expected.cycles, got.cycles,
        "{backend} cycles differ from interp on {}",
        kernel.name
    );
}
