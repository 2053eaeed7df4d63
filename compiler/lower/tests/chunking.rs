//! The chunked graph of layer-major micro-batches (`wsel_lower::chunked_graph`): a dense
//! layer too big to hold, cut into chunks of its outputs — each chunk its own layer, on every
//! K-th column of the weights from its own, writing into the result of the one before.

mod common;

use wsel_ir::graph::{CValue, ParamColumns, TensorRef};
use wsel_ir::print_graph::cexpr_text;
use wsel_lower::{chunked_graph, layer_graph, staged_graph};
use wsel_sema::ItemKind;

const MODEL: &str = "import std.nn.{dense, relu};

model m(x: f32[B, 64]) -> f32[B, 2048] {
    param w: f32[64, 2048];
    param b: f32[2048];
    return relu(dense(x, w, b));
}
";

#[test]
fn a_dense_layer_in_chunks_takes_every_kth_column_and_writes_into_the_result_so_far() {
    let (db, file) = common::load(&[("dir/main.wse", MODEL)]);
    let model = common::item(&db, file, ItemKind::Model, "m");
    let (graph, diags) = layer_graph(&db, model, 16);
    assert!(diags.is_empty(), "{diags:?}");
    let (staged, diags) = staged_graph(&db, &graph).expect("std.resident");
    assert!(diags.is_empty(), "{diags:?}");
    // stage_in#1, dense#1, relu#1, stage_out#1: dense#1 in 4 chunks.
    let (chunked, diags) = chunked_graph(&db, &staged, &[(1, 4)]).expect("dense_held twins");
    assert!(diags.is_empty(), "{diags:?}");
    let names: Vec<&str> = chunked.layers.iter().map(|l| l.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "stage_in#1",
            "dense#1.1",
            "dense#1.2",
            "dense#1.3",
            "dense#1.4",
            "relu#1",
            "stage_out#1"
        ]
    );
    let kinds: Vec<&str> = chunked.layers[1..5]
        .iter()
        .map(|l| l.layer.as_str())
        .collect();
    assert_eq!(
        kinds,
        [
            "dense_held",
            "dense_held_into",
            "dense_held_into",
            "dense_held_into"
        ]
    );
    for (c, chunk) in chunked.layers[1..5].iter().enumerate() {
        // x, then the result so far (from the second chunk on), then the weights' columns.
        let mut args = vec![TensorRef::Layer(0)];
        if c > 0 {
            args.push(TensorRef::Layer(c));
        }
        args.extend([TensorRef::Param(2 + 2 * c), TensorRef::Param(3 + 2 * c)]);
        assert_eq!(chunk.args, args, "{}", chunk.name);
        assert_eq!(chunk.output_shape, [16, 2048], "{}", chunk.name);
        let (w, b) = (&chunked.params[2 + 2 * c], &chunked.params[3 + 2 * c]);
        assert_eq!(
            (w.tensor.shape.as_slice(), b.tensor.shape.as_slice()),
            (&[64, 512][..], &[512][..])
        );
        assert_eq!(w.path, chunked.params[0].path);
        let columns = |of: &str, whole: Vec<u64>| ParamColumns {
            of: of.into(),
            whole,
            first: c as u64,
            step: 4,
        };
        assert_eq!(w.columns, Some(columns("w", vec![64, 2048])));
        assert_eq!(b.columns, Some(columns("b", vec![2048])));
        assert!(chunk.scalars.contains(&("K".into(), CValue::Int(4))));
        assert!(chunk.scalars.contains(&("c".into(), CValue::Int(c as i64))));
        // The kernel: dense_resident on the chunk's 512 outputs, holding its weights, its
        // outputs every 4th of the row's from c.
        let imp = &chunk.impls[0];
        let arg = |name: &str| {
            let (_, e) = imp.kernel_args.iter().find(|(n, _)| n == name).expect(name);
            cexpr_text(e)
        };
        assert_eq!(chunk.dims.get("M"), Some(&512), "{}", chunk.name);
        assert_eq!(
            (arg("hold"), arg("K"), arg("kc")),
            ("true".into(), "4".into(), c.to_string())
        );
        assert!(
            imp.conditions.iter().any(|e| cexpr_text(e).contains("% R")),
            "{:?}",
            imp.conditions
        );
    }
    // The layers after take the last chunk's result, the whole layer's.
    assert_eq!(chunked.layers[5].args, [TensorRef::Layer(4)]);
}
