//! Lowering is incremental: each distinct kernel instance is lowered once per run, whatever
//! the order of its arguments, and an edit elsewhere in the file does not lower it again.

mod common;

use wsel_ir::graph::CValue;
use wsel_lower::{layer_graph, lower_kernel};
use wsel_sema::{ItemKind, set_file};

const SRC: &str = r"
kernel k(n: u32, m: u32) {
    var a: [f32; n * m];
    task main() { a[0..n] = 1.0; }
}
kernel other() {
    var b: [f32; 2];
    task main() { b[0] = 1.0; }
}
";

fn executed(log: &[String], query: &str) -> usize {
    log.iter().filter(|entry| entry.starts_with(query)).count()
}

#[test]
fn each_kernel_instance_is_lowered_once() {
    let (mut db, file) = common::load_one(SRC);
    db.enable_log();
    let args = |n: i64, m: i64| {
        vec![
            ("n".to_string(), CValue::Int(n)),
            ("m".to_string(), CValue::Int(m)),
        ]
    };
    let kernel = common::item(&db, file, ItemKind::Kernel, "k");
    let first = lower_kernel(&db, kernel, &args(2, 3)).expect("lowers");
    let mut reversed = args(2, 3);
    reversed.reverse();
    let again = lower_kernel(&db, kernel, &reversed).expect("lowers");
    assert_eq!(first, again);
    let log = db.take_log();
    assert_eq!(executed(&log, "kernel_instance"), 1, "{log:#?}");

    lower_kernel(&db, kernel, &args(3, 3)).expect("lowers");
    assert_eq!(executed(&db.take_log(), "kernel_instance"), 1);

    // Editing the body of the other kernel (after this one) leaves this instance alone.
    let edited = SRC.replace("b[0] = 1.0;", "b[1] = 2.0; b[0] = 3.0;");
    set_file(&mut db, std::path::Path::new("main.wse"), edited);
    db.take_log();
    let kernel = common::item(&db, file, ItemKind::Kernel, "k");
    let after = lower_kernel(&db, kernel, &args(2, 3)).expect("lowers");
    assert_eq!(after, first);
    let log = db.take_log();
    assert_eq!(executed(&log, "kernel_instance"), 0, "{log:#?}");

    // Editing this kernel lowers it again.
    let edited = SRC.replace("a[0..n] = 1.0;", "a[0..m] = 2.0;");
    set_file(&mut db, std::path::Path::new("main.wse"), edited);
    db.take_log();
    let kernel = common::item(&db, file, ItemKind::Kernel, "k");
    let changed = lower_kernel(&db, kernel, &args(2, 3)).expect("lowers");
    assert_ne!(changed, first);
    assert_eq!(executed(&db.take_log(), "kernel_instance"), 1);
}

#[test]
fn a_layer_graph_is_built_once_per_batch_size() {
    let (db, file) = common::load_example("digits");
    db.enable_log();
    let model = common::item(&db, file, ItemKind::Model, "digits");
    let (four, _) = layer_graph(&db, model, 4);
    let (again, _) = layer_graph(&db, model, 4);
    assert_eq!(four, again);
    let (eight, _) = layer_graph(&db, model, 8);
    assert_eq!(eight.layers[0].dims["B"], 8);
    let log = db.take_log();
    assert_eq!(executed(&log, "model_graph"), 2, "{log:#?}");
}
