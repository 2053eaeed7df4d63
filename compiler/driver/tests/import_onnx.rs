//! `wsel import` end to end on ONNX models built here with the schema's own types: a small
//! MLP becomes a program `wsel check` accepts, with its weights (Gemm's `[out, in]`
//! transposed) in `.npy` files; each E10xx error names what is wrong, exits 1 and writes
//! nothing. (`python/tests/test_onnx.py` runs an imported model against scikit-learn.)

use std::path::Path;
use std::process::Command;

use prost::Message;
use wsel_ir::kernel::ScalarTy;
use wsel_onnx::proto::{
    AttributeProto, GraphProto, ModelProto, NodeProto, TensorProto, TensorShapeProto, TypeProto,
    ValueInfoProto, tensor_shape_proto, type_proto,
};

mod support;
use support::temp_dir;

fn weight(name: &str, shape: &[i64], values: &[f32]) -> TensorProto {
    TensorProto {
        name: Some(name.into()),
        dims: shape.to_vec(),
        data_type: Some(1),
        float_data: values.to_vec(),
        ..TensorProto::default()
    }
}

fn node(op: &str, name: &str, inputs: &[&str], output: &str) -> NodeProto {
    NodeProto {
        op_type: Some(op.into()),
        name: Some(name.into()),
        input: inputs.iter().map(|s| s.to_string()).collect(),
        output: vec![output.into()],
        ..NodeProto::default()
    }
}

fn value(name: &str, features: i64) -> ValueInfoProto {
    use tensor_shape_proto::{Dimension, dimension::Value};
    let dims = [Value::DimParam("batch".into()), Value::DimValue(features)];
    let tensor = type_proto::Tensor {
        elem_type: Some(1),
        shape: Some(TensorShapeProto {
            dim: dims
                .into_iter()
                .map(|v| Dimension {
                    value: Some(v),
                    ..Dimension::default()
                })
                .collect(),
        }),
    };
    ValueInfoProto {
        name: Some(name.into()),
        r#type: Some(TypeProto {
            value: Some(type_proto::Value::TensorType(tensor)),
            ..TypeProto::default()
        }),
        ..ValueInfoProto::default()
    }
}

/// x[B, 3] → Gemm (transB, weight [2, 3]) → Relu → MatMul [2, 2] + Add → Softmax.
fn mlp(extra: Option<NodeProto>) -> ModelProto {
    let mut gemm = node("Gemm", "fc1", &["x", "fc1.weight", "fc1.bias"], "h1");
    gemm.attribute.push(AttributeProto {
        name: Some("transB".into()),
        i: Some(1),
        r#type: Some(2),
        ..AttributeProto::default()
    });
    let mut nodes = vec![
        gemm,
        node("Relu", "relu1", &["h1"], "r1"),
        node("MatMul", "mm2", &["r1", "W2"], "m2"),
        node("Add", "add2", &["m2", "B2"], "h2"),
    ];
    let mut last = "h2";
    if let Some(extra) = extra {
        nodes.push(extra);
        last = "e";
    }
    nodes.push(node("Softmax", "softmax", &[last], "probs"));
    ModelProto {
        ir_version: Some(9),
        graph: Some(GraphProto {
            name: Some("tiny".into()),
            node: nodes,
            initializer: vec![
                weight("fc1.weight", &[2, 3], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]),
                weight("fc1.bias", &[2], &[0.5, -0.5]),
                weight("W2", &[2, 2], &[1.0, 0.0, 0.0, 1.0]),
                weight("B2", &[2], &[0.0, 1.0]),
            ],
            input: vec![value("x", 3)],
            output: vec![value("probs", 2)],
            ..GraphProto::default()
        }),
        ..ModelProto::default()
    }
}

fn import(dir: &Path, model: &[u8]) -> (i32, String, String) {
    std::fs::write(dir.join("model.onnx"), model).expect("write model");
    let out = Command::new(env!("CARGO_BIN_EXE_wsel"))
        .current_dir(dir)
        .args(["import", "model.onnx", "-o", "tiny.wse"])
        .output()
        .expect("wsel runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `wsel check` accepts the program at `path`.
fn assert_checks(path: &Path) {
    let check = Command::new(env!("CARGO_BIN_EXE_wsel"))
        .args(["check", "--color", "never"])
        .arg(path)
        .output()
        .expect("wsel check");
    assert!(
        check.status.success(),
        "{}",
        String::from_utf8_lossy(&check.stderr)
    );
}

#[test]
fn an_mlp_becomes_a_checked_program_with_its_weights() {
    let dir = temp_dir("mlp");
    let (status, stdout, stderr) = import(&dir, &mlp(None).encode_to_vec());
    assert_eq!(status, 0, "{stderr}");
    assert!(
        stdout.contains("and 4 weight files in tiny_weights"),
        "{stdout}"
    );
    let program = std::fs::read_to_string(dir.join("tiny.wse")).expect("program");
    for line in [
        "import std.nn.{dense, relu, softmax};",
        "model tiny(x: f32[B, 3]) -> f32[B, 2] {",
        "param w1: f32[3, 2] from \"tiny_weights/w1.npy\";",
        "let h1 = dense(x, w1, b1); // `fc1`",
        "let h3 = dense(h2, w2, b2); // `mm2` + `add2`",
        "return h4;",
    ] {
        assert!(program.contains(line), "{line}\n{program}");
    }
    // Gemm's `[out, in]` weight, transposed to std.nn's `[in, out]`.
    let w1 = wsel::tensor::read_npy(
        &dir.join("tiny_weights/w1.npy"),
        ScalarTy::F32,
        &[Some(3), Some(2)],
    )
    .expect("w1");
    assert_eq!(w1.to_f32(), [1.0, 4.0, 2.0, 5.0, 3.0, 6.0]);
    assert_checks(&dir.join("tiny.wse"));
}

fn attribute(name: &str, kind: i32) -> AttributeProto {
    AttributeProto {
        name: Some(name.into()),
        r#type: Some(kind),
        ..AttributeProto::default()
    }
}

/// The tiny MLP with a transformer block's pieces before its softmax: h2 → LayerNormalization
/// (epsilon 1e-3) → Gelu (tanh) → Add of h2 (a residual).
fn block() -> ModelProto {
    let mut ln = node("LayerNormalization", "ln", &["h2", "g", "s"], "n");
    ln.attribute.push(AttributeProto {
        f: Some(1e-3),
        ..attribute("epsilon", 1)
    });
    let mut gelu = node("Gelu", "act", &["n"], "a");
    gelu.attribute.push(AttributeProto {
        s: Some(b"tanh".to_vec()),
        ..attribute("approximate", 3)
    });
    let mut model = mlp(Some(node("Add", "skip", &["a", "h2"], "e")));
    let graph = model.graph.as_mut().expect("graph");
    let add = graph.node.len() - 2;
    graph.node.splice(add..add, [ln, gelu]);
    graph.initializer.push(weight("g", &[2], &[1.5, 0.5]));
    graph.initializer.push(weight("s", &[2], &[0.25, -0.25]));
    model
}

#[test]
fn layernorm_gelu_and_a_residual_add_become_std_nn_calls() {
    let dir = temp_dir("block");
    let (status, _, stderr) = import(&dir, &block().encode_to_vec());
    assert_eq!(status, 0, "{stderr}");
    let program = std::fs::read_to_string(dir.join("tiny.wse")).expect("program");
    for line in [
        "import std.nn.{dense, relu, layernorm, gelu, add, softmax};",
        "param ln1_g: f32[2] from \"tiny_weights/ln1_g.npy\";",
        "let h4 = layernorm(h3, ln1_g, ln1_b, eps = 0.001); // `ln`",
        "let h5 = gelu(h4); // `act`",
        "let h6 = add(h5, h3); // `skip`",
    ] {
        assert!(program.contains(line), "{line}\n{program}");
    }
    assert_checks(&dir.join("tiny.wse"));
}

#[test]
fn each_error_has_its_code_and_writes_nothing() {
    let sigmoid = mlp(Some(node("Sigmoid", "act3", &["h2"], "e"))).encode_to_vec();
    let erf_gelu = mlp(Some(node("Gelu", "act3", &["h2"], "e"))).encode_to_vec();
    let mismatch = mlp(Some(node("Add", "skip", &["x", "h2"], "e"))).encode_to_vec();
    let mut trans_a = mlp(None);
    if let Some(graph) = trans_a.graph.as_mut() {
        graph.node[0].attribute.push(AttributeProto {
            name: Some("transA".into()),
            i: Some(1),
            r#type: Some(2),
            ..AttributeProto::default()
        });
    }
    let cases: [(&str, Vec<u8>, &str); 5] = [
        (
            "sigmoid",
            sigmoid,
            "error[E1002]: node `act3` is a `Sigmoid`, and std.nn has no layer for it yet (it has dense, relu, softmax, gelu, layernorm and add)",
        ),
        (
            "erf_gelu",
            erf_gelu,
            "error[E1002]: node `act3` is the exact (erf) `Gelu`, and std.nn's gelu is the tanh approximation",
        ),
        (
            "mismatch",
            mismatch,
            "error[E1003]: node `skip` adds 3 features to 2; std.nn's add takes two values of one width",
        ),
        (
            "trans_a",
            trans_a.encode_to_vec(),
            "error[E1003]: node `fc1` transposes its input (`transA = 1`)",
        ),
        (
            "garbage",
            b"\x08\x07 this is no protobuf".to_vec(),
            "error[E1001]: not an ONNX model",
        ),
    ];
    for (name, bytes, expected) in cases {
        let dir = temp_dir(name);
        let (status, _, stderr) = import(&dir, &bytes);
        assert_eq!(status, 1, "{name}: {stderr}");
        assert!(stderr.starts_with(expected), "{name}: {stderr}");
        assert!(
            !dir.join("tiny.wse").exists(),
            "{name}: a program was written"
        );
        assert!(
            !dir.join("tiny_weights").exists(),
            "{name}: weights were written"
        );
    }
}
