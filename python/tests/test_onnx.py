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


def block_graph(params, gamma, beta):
    """A transformer block's pieces in the digits MLP: fc1 → LayerNormalization → Gelu (tanh)
    → Add of fc1 (a residual) → Relu → fc2 → Relu → fc3 → Softmax."""
    model = mlp_graph(params)
    nodes = list(model.graph.node)
    at = [n.name for n in nodes].index("relu1")
    block = [
        helper.make_node("LayerNormalization", ["fc1", "ln.g", "ln.b"], ["n1"], name="ln",
                         axis=-1, epsilon=1e-3),
        helper.make_node("Gelu", ["n1"], ["g1"], name="gelu", approximate="tanh"),
        helper.make_node("Add", ["g1", "fc1"], ["r1"], name="skip"),
    ]
    nodes[at].input[0] = "r1"
    del model.graph.node[:]
    model.graph.node.extend(nodes[:at] + block + nodes[at:])
    model.graph.initializer.extend([numpy_helper.from_array(gamma, "ln.g"),
                                    numpy_helper.from_array(beta, "ln.b")])
    onnx.checker.check_model(model)
    return model


def block_forward(params, gamma, beta, x):
    """`block_graph` in float64 NumPy, written from the ONNX operators' definitions."""
    p = {k: v.astype(np.float64) for k, v in params.items()}
    h1 = x @ p["w1"] + p["b1"]
    mean = h1.mean(axis=1, keepdims=True)
    var = ((h1 - mean) ** 2).mean(axis=1, keepdims=True)
    n1 = (h1 - mean) / np.sqrt(var + 1e-3) * gamma + beta
    g1 = 0.5 * n1 * (1 + np.tanh(np.sqrt(2 / np.pi) * (n1 + 0.044715 * n1**3)))
    h = np.maximum(g1 + h1, 0)
    h = np.maximum(h @ p["w2"] + p["b2"], 0)
    h = h @ p["w3"] + p["b3"]
    e = np.exp(h - h.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def test_layernorm_gelu_and_a_residual_run_as_numpy_computes_them(digits, tmp_path):
    rng = np.random.default_rng(7)
    gamma = rng.uniform(0.5, 1.5, 32).astype(np.float32)
    beta = rng.uniform(-0.5, 0.5, 32).astype(np.float32)
    path = tmp_path / "block.onnx"
    onnx.save(block_graph(digits["params"], gamma, beta), path)
    program = wsel.import_onnx(path, tmp_path / "block.wse")
    text = (tmp_path / "block.wse").read_text()
    assert "layernorm(h1, ln1_g, ln1_b, eps = 0.001)" in text
    # Streaming on wse2, as the transformer example runs: a residual's fan-out does not map
    # pipelined yet (issue #20).
    probs = wsel.run(program, inputs={"x": digits["x"]}, target="wse2", mode="streaming").output
    expected = block_forward(digits["params"], gamma, beta, digits["x"])
    # Float32 on the fabric against float64 here: sums over 64 and 32 features and a
    # normalisation by a standard deviation of about 1 keep the error near 1e-6.
    np.testing.assert_allclose(probs, expected, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize(
    "op, says",
    [("Sigmoid", "node `my_relu` is a `Sigmoid`"),
     ("Gelu", "node `my_relu` is the exact (erf) `Gelu`")],
)
def test_an_unsupported_operator_names_its_node(digits, tmp_path, op, says):
    model = mlp_graph(digits["params"], extra="Relu")
    model.graph.node[-2].op_type = op
    path = tmp_path / "bad.onnx"
    onnx.save(model, path)
    with pytest.raises(wsel.WselError) as caught:
        wsel.import_onnx(path, tmp_path / "bad.wse")
    assert caught.value.code == "E1002"
    assert says in caught.value.message
    assert not (tmp_path / "bad.wse").exists()


def test_a_file_that_is_not_onnx(tmp_path):
    path = tmp_path / "x.onnx"
    path.write_bytes(b"\x00\x01 not a protobuf at all")
    with pytest.raises(wsel.WselError) as caught:
        wsel.import_onnx(path, tmp_path / "x.wse")
    assert caught.value.code == "E1001"
