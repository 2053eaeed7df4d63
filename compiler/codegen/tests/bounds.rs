//! Out-of-range accesses stop the task with a clean report (array, index, bound) and a
//! nonzero status under every backend, and nothing is written outside SRAM (the harness
//! checks guard words after SRAM on every run).

mod common;

use common::build::*;
use common::{Event, Outcome, Setup, run_everywhere};
use wsel_ir::kernel::AssignOp::{Add, Set};
use wsel_ir::kernel::BinaryOp as B;
use wsel_ir::kernel::PortDirection::{In, Out};
use wsel_ir::kernel::{KernelIr, PortId, ReduceOp, Stmt, TaskId};

/// Two arrays: `before` (4 words, array 0), then `a` (8 words, array 1), then `after`
/// (4 words, array 2), so a stray write would land in a neighbour.
fn kernel_with(body: Vec<Stmt>) -> KernelIr {
    kernel(
        "bounds",
        arrays(&[("before", U32, 4), ("a", U32, 8), ("after", U32, 4)]),
        vec![port("out", Out, U32), port("in", In, U32)],
        vec![task("main", &[("i", U32), ("j", I32)], body)],
    )
}

fn assert_report(out: &Outcome, array: u32, index: i64, bound: u64) {
    assert_ne!(out.status, 0);
    let Some(Event::OutOfBounds {
        array: got_array,
        index: got_index,
        bound: got_bound,
        ..
    }) = out.events.last()
    else {
        panic!("no out-of-bounds report: {:?}", out.events);
    };
    assert_eq!(
        (*got_array, *got_index as i64, *got_bound),
        (array, index, bound)
    );
}

fn untouched_neighbours(out: &Outcome) {
    assert_eq!(
        &out.sram[..4],
        &[0; 4],
        "array before the target was written"
    );
    assert_eq!(
        &out.sram[12..],
        &[0; 4],
        "array after the target was written"
    );
}

#[test]
fn constant_index_past_the_end() {
    let k = kernel_with(vec![store(1, u32c(8), Set, u32c(7))]);
    let out = run_everywhere(&k, &Setup::entry(&k));
    assert_report(&out, 1, 8, 8);
    assert_eq!(out.sram, vec![0; 16]);
}

#[test]
fn loop_index_running_past_the_end() {
    // for i in 0..10 { a[i] = i + 1 }: elements 0..8 are written, then i = 8 is reported.
    let k = kernel_with(vec![for_(
        0,
        u32c(0),
        u32c(10),
        vec![store(1, local(0), Set, bin(B::Add, U32, local(0), u32c(1)))],
    )]);
    let out = run_everywhere(&k, &Setup::entry(&k));
    assert_report(&out, 1, 8, 8);
    assert_eq!(&out.sram[4..12], &[1, 2, 3, 4, 5, 6, 7, 8]);
    untouched_neighbours(&out);
    // The report is issued after 1 (for) + 8 × (1 + 2) + 1 + 2 cycles.
    let Some(Event::OutOfBounds { cycles, .. }) = out.events.last() else {
        unreachable!()
    };
    assert_eq!(*cycles, 1 + 8 * 3 + 3);
    assert_eq!(out.cycles, *cycles);
}

#[test]
fn slice_end_past_the_array() {
    // a[4..10] += 1: nothing is written, the first element past the end (8) is reported.
    let k = kernel_with(vec![vector(
        slice(1, u32c(4), u32c(6)),
        Add,
        scalar(u32c(1)),
    )]);
    let out = run_everywhere(&k, &Setup::entry(&k));
    assert_report(&out, 1, 8, 8);
    assert_eq!(out.sram, vec![0; 16]);
}

#[test]
fn source_slice_past_the_end_is_caught_before_the_first_write() {
    // a[0..6] = before[0..6]: the destination fits, the source does not.
    let k = kernel_with(vec![vector(
        slice(1, u32c(0), u32c(6)),
        Set,
        vbin(B::Add, U32, elem(0, u32c(0)), scalar(u32c(1))),
    )]);
    let out = run_everywhere(&k, &Setup::entry(&k));
    assert_report(&out, 0, 4, 4);
    assert_eq!(out.sram, vec![0; 16]);
}

#[test]
fn negative_index_is_reported_as_negative() {
    let k = kernel_with(vec![set(1, i32c(-3)), store(1, local(1), Set, u32c(1))]);
    let out = run_everywhere(&k, &Setup::entry(&k));
    assert_report(&out, 1, -3, 8);
    assert_eq!(out.sram, vec![0; 16]);
}

#[test]
fn negative_slice_start_and_length() {
    let k = kernel_with(vec![vector(
        slice(1, i32c(-2), i32c(4)),
        Set,
        scalar(u32c(1)),
    )]);
    assert_report(&run_everywhere(&k, &Setup::entry(&k)), 1, -2, 8);
    let k = kernel_with(vec![vector(
        slice(1, i32c(5), i32c(-1)),
        Set,
        scalar(u32c(1)),
    )]);
    assert_report(&run_everywhere(&k, &Setup::entry(&k)), 1, 4, 8);
}

#[test]
fn loads_reductions_and_transfers_are_checked_too() {
    let load_past = kernel_with(vec![set(0, load(2, u32c(4)))]);
    assert_report(
        &run_everywhere(&load_past, &Setup::entry(&load_past)),
        2,
        4,
        4,
    );

    let reduce_past = kernel_with(vec![set(
        0,
        reduce(ReduceOp::Sum, U32, slice(1, u32c(7), u32c(2))),
    )]);
    assert_report(
        &run_everywhere(&reduce_past, &Setup::entry(&reduce_past)),
        1,
        8,
        8,
    );

    let send_past = kernel_with(vec![Stmt::SendSlice {
        port: PortId(0),
        src: slice(2, u32c(2), u32c(3)),
        then: None,
    }]);
    let out = run_everywhere(&send_past, &Setup::entry(&send_past));
    assert_report(&out, 2, 4, 4);
    assert_eq!(out.events.len(), 1, "no send was made");

    let recv_past = kernel_with(vec![Stmt::Recv {
        port: PortId(1),
        dst: slice(0, u32c(3), u32c(9)),
        then: TaskId(0),
    }]);
    assert_report(
        &run_everywhere(&recv_past, &Setup::entry(&recv_past)),
        0,
        4,
        4,
    );
}

#[test]
fn an_empty_slice_at_the_end_is_in_range() {
    let k = kernel_with(vec![vector(
        slice(1, u32c(8), u32c(0)),
        Set,
        scalar(u32c(1)),
    )]);
    let out = run_everywhere(&k, &Setup::entry(&k));
    assert_eq!(out.status, 0);
    assert!(out.events.is_empty());
}
