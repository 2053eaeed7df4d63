"""ONNX import: the digits MLP built as an ONNX graph with the `onnx` package, imported with
wsel.import_onnx and `wsel import`, run on the fabric: its classes equal scikit-learn's."""

import subprocess

import numpy as np
import pytest

import wsel

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402


def mlp_graph(params, *, gemm=False, extra=None):
    """The digits MLP: MatMul + Add (or Gemm with [out, in] weights, as PyTorch exports
    them), Relu, ..., Softmax. `extra` is one more node put before the Softmax."""
    nodes, inits, value = [], [], "x"
    for i in (1, 2, 3):
        w, b = params[f"w{i}"], params[f"b{i}"]
        if gemm:
            inits += [numpy_helper.from_array(w.T.copy(), f"fc{i}.weight"),
                      numpy_helper.from_array(b, f"fc{i}.bias")]
            nodes.append(helper.make_node("Gemm", [value, f"fc{i}.weight", f"fc{i}.bias"],
                                          [f"fc{i}"], name=f"fc{i}", transB=1))
        else:
            inits += [numpy_helper.from_array(w, f"W{i}"), numpy_helper.from_array(b, f"B{i}")]
            nodes.append(helper.make_node("MatMul", [value, f"W{i}"], [f"mm{i}"], name=f"mm{i}"))
            nodes.append(helper.make_node("Add", [f"mm{i}", f"B{i}"], [f"fc{i}"], name=f"add{i}"))
        value = f"fc{i}"
        if i < 3:
            nodes.append(helper.make_node("Relu", [value], [f"relu{i}"], name=f"relu{i}"))
            value = f"relu{i}"
    if extra is not None:
        nodes.append(helper.make_node(extra, [value], ["extra"], name="my_" + extra.lower()))
        value = "extra"
    nodes.append(helper.make_node("Softmax", [value], ["probs"], name="softmax", axis=-1))
    graph = helper.make_graph(
        nodes, "digits_mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 64])],
        [helper.make_tensor_value_info("probs", TensorProto.FLOAT, ["batch", 10])],
        initializer=inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    onnx.checker.check_model(model)
    return model


@pytest.mark.parametrize("gemm", [False, True], ids=["matmul_add", "gemm_transB"])
def test_imported_mlp_predicts_as_scikit_learn(digits, tmp_path, gemm):
    path = tmp_path / "mlp.onnx"
    onnx.save(mlp_graph(digits["params"], gemm=gemm), path)
    program = wsel.import_onnx(path, tmp_path / "mlp.wse")
    assert (tmp_path / "mlp_weights" / "w1.npy").is_file()
    probs = wsel.run(program, inputs={"x": digits["x"]}).output
    assert np.array_equal(probs.argmax(axis=1), digits["sklearn_pred"])


def test_the_cli_imports_too(digits, tmp_path, wsel_bin):
    path = tmp_path / "mlp.onnx"
    onnx.save(mlp_graph(digits["params"]), path)
    done = subprocess.run([wsel_bin, "import", str(path)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    text = (tmp_path / "mlp.wse").read_text()
    assert "model digits_mlp(x: f32[B, 64]) -> f32[B, 10]" in text
    assert 'param w1: f32[64, 32] from "mlp_weights/w1.npy";' in text
    check = subprocess.run([wsel_bin, "check", str(tmp_path / "mlp.wse")], capture_output=True)
    assert check.returncode == 0, check.stderr


@pytest.mark.parametrize("op", ["Gelu", "LayerNormalization"])
def test_an_unsupported_operator_names_its_node(digits, tmp_path, op):
    model = mlp_graph(digits["params"], extra="Relu")
    model.graph.node[-2].op_type = op
    path = tmp_path / "bad.onnx"
    onnx.save(model, path)
    with pytest.raises(wsel.WselError) as caught:
        wsel.import_onnx(path, tmp_path / "bad.wse")
    assert caught.value.code == "E1002"
    assert f"node `my_relu` is a `{op}`" in caught.value.message
    assert not (tmp_path / "bad.wse").exists()


def test_a_file_that_is_not_onnx(tmp_path):
    path = tmp_path / "x.onnx"
    path.write_bytes(b"\x00\x01 not a protobuf at all")
    with pytest.raises(wsel.WselError) as caught:
        wsel.import_onnx(path, tmp_path / "x.wse")
    assert caught.value.code == "E1001"
