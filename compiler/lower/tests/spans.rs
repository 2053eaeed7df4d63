//! The side table of `lower_kernel_with_spans`: one span per transfer statement of the IR, in
//! the IR's own numbering (`wsel_ir::kernel::for_each_transfer`), also when folding drops a
//! branch or a loop, and the same IR as `lower_kernel`.

mod common;

use wsel_ir::graph::CValue;
use wsel_ir::kernel::{Stmt, TaskId, for_each_transfer};
use wsel_lower::{lower_kernel, lower_kernel_with_spans};
use wsel_sema::ItemKind;

const SRC: &str = r"
kernel k(n: u32, wide: bool) {
    var a: [f32; 4];
    in  xs: stream<f32> from west;
    out ys: stream<f32> to east;
    task main() {
        if wide {
            recv(xs, a[0..4]) then b;
        } else {
            send(ys, a[0..1]);
            activate c;
        }
        while n == 0 {
            activate b;
        }
        for i in 0..n {
            if pe.col == 0 { send(ys, a[0..2]) then c; } else { recv(xs, a[0..2]) then c; }
        }
        activate b;
    }
    task b() { send(ys, 1.0); }
    task c() { }
}
";

#[test]
fn every_transfer_statement_has_its_own_span() {
    let (db, file) = common::load_one(SRC);
    let kernel = common::item(&db, file, ItemKind::Kernel, "k");
    for (n, wide) in [(0, true), (3, false), (2, true)] {
        let args = vec![
            ("n".to_string(), CValue::Int(n)),
            ("wide".to_string(), CValue::Bool(wide)),
        ];
        let (ir, spans) = lower_kernel_with_spans(&db, kernel, &args).expect("lowers");
        assert_eq!(ir, lower_kernel(&db, kernel, &args).expect("lowers"));
        assert_eq!(spans.tasks.len(), ir.tasks.len());
        for (t, task) in ir.tasks.iter().enumerate() {
            let id = TaskId(t as u32);
            let name = spans.task_name(id).expect("task span");
            assert_eq!(&SRC[name], task.name);
            let mut count = 0;
            for_each_transfer(&task.body, &mut |i, stmt| {
                count += 1;
                let text = &SRC[spans.transfer(id, i).expect("a span per transfer")];
                let expected = match stmt {
                    Stmt::Recv { .. } => "recv(",
                    Stmt::SendSlice { .. } | Stmt::SendScalar { .. } => "send(",
                    _ => "activate ",
                };
                assert!(text.starts_with(expected), "{text:?} for {stmt:?}");
                assert!(text.ends_with(';'), "{text:?}");
            });
            assert_eq!(count, spans.tasks[t].transfers.len(), "task {}", task.name);
        }
        // The folded `if wide` keeps only one branch, and `while n == 0` is dropped for n > 0.
        let main = &spans.tasks[ir.entry.0 as usize].transfers;
        let first = &SRC[main[0].clone()];
        assert_eq!(first.starts_with("recv("), wide);
    }
}
