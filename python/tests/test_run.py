"""wsel.run: NumPy arrays in and out, the same result as `wsel run`, the report as a dict."""

import subprocess

import numpy as np
import pytest

import wsel
from conftest import SAMPLES, numpy_forward


def test_digits_from_arrays_matches_the_cli_and_numpy(digits, wsel_bin, tmp_path):
    result = wsel.run(digits["program"], inputs={"x": digits["x"]}, params=digits["params"])
    probs, report = result
    assert probs.dtype == np.float32 and probs.shape == (SAMPLES, 10)

    # The CLI on the same data gives the same probabilities, bit for bit.
    np.save(tmp_path / "x.npy", digits["x"])
    out = tmp_path / "probs.npy"
    subprocess.run(
        [wsel_bin, "run", str(digits["program"]), "--input", f"x={tmp_path / 'x.npy'}",
         "--output", str(out), "--no-cache"],
        check=True, capture_output=True,
    )
    assert np.array_equal(probs, np.load(out))

    # An independent float32 NumPy forward pass agrees, and so do scikit-learn's classes.
    np.testing.assert_allclose(probs, numpy_forward(digits["params"], digits["x"]), atol=1e-5)
    assert np.array_equal(probs.argmax(axis=1), digits["sklearn_pred"])

    run = report["run"]
    assert run["batch"] == SAMPLES and run["cycles"] > 0 and run["output"] is None
    assert [layer["name"] for layer in run["layers"]][:2] == ["dense#1", "relu#1"]  # apart: faster


def test_params_from_files_and_memory_agree(digits):
    from_files = wsel.run(digits["program"], inputs={"x": digits["x"]}).output
    from_memory = wsel.run(digits["program"], inputs={"x": digits["x"]}, params=digits["params"])
    assert np.array_equal(from_files, from_memory.output)


def test_float64_inputs_are_rounded_with_a_warning(digits):
    with pytest.warns(UserWarning, match="float64 values: rounded to f32"):
        result = wsel.run(digits["program"], inputs={"x": digits["x"].astype(np.float64)})
    assert np.array_equal(result.output, wsel.run(digits["program"], inputs={"x": digits["x"]}).output)


def test_report_table_as_a_dataframe(digits):
    pandas = pytest.importorskip("pandas")
    layers = wsel.run(digits["program"], inputs={"x": digits["x"][:8]}).layers
    assert isinstance(layers, pandas.DataFrame)
    assert list(layers.index) == [
        "dense#1", "relu#1", "dense#2", "relu#2", "dense#3", "softmax#1"]
    assert (layers["simulated_cycles_per_sample"] > 0).all()


def test_source_text_with_base_dir(digits):
    text = digits["program"].read_text()
    result = wsel.run(text, inputs={"x": digits["x"][:4]}, base_dir=digits["program"].parent)
    np.testing.assert_allclose(
        result.output, numpy_forward(digits["params"], digits["x"][:4]), atol=1e-5
    )


LAYER_MAJOR_MLP = """import std.nn.{dense, relu, softmax};

model mlp(x: f32[B, 64]) -> f32[B, 10] {
    param w0: f32[64, 64] from "w0.npy";
    param b0: f32[64] from "b0.npy";
    param w1: f32[64, 10] from "w1.npy";
    param b1: f32[10] from "b1.npy";
    return softmax(dense(relu(dense(x, w0, b0)), w1, b1));
}
"""


def test_micro_order_layer_runs_layer_major(tmp_path):
    # 1,024 samples of 64 -> 64 -> 10 streamed on dev do not fit at once: two micro-batches
    # of 512. micro_order="layer" runs them layer-major, as `--micro-order layer` does
    # (compiler/driver/tests/streaming_models.rs).
    rng = np.random.default_rng(23)
    x = rng.standard_normal((1024, 64), dtype=np.float32)
    params = {
        "w0": (rng.standard_normal((64, 64)) / 8).astype(np.float32),
        "b0": (rng.standard_normal(64) / 10).astype(np.float32),
        "w1": (rng.standard_normal((64, 10)) / 8).astype(np.float32),
        "b1": (rng.standard_normal(10) / 10).astype(np.float32),
    }
    result = wsel.run(
        LAYER_MAJOR_MLP, inputs={"x": x}, params=params, mode="streaming",
        micro_order="layer", base_dir=tmp_path,
    )
    micro = result.report["run"]["micro_batches"]
    assert micro["count"] == 2 and micro["traffic"]["layer_major"] is True, micro
    assert micro["store"]["weights"] == 4 * (64 * 64 + 64 + 64 * 10 + 10), micro

    # An independent float32 NumPy forward pass agrees.
    h = np.maximum(x @ params["w0"] + params["b0"], np.float32(0)) @ params["w1"] + params["b1"]
    e = np.exp(h - h.max(axis=1, keepdims=True))
    np.testing.assert_allclose(result.output, e / e.sum(axis=1, keepdims=True), atol=1e-5)


def test_an_unknown_micro_order_names_the_values(digits):
    # pyo3 reports a setting it cannot read as a TypeError caused by the ValueError saying why.
    with pytest.raises(TypeError) as caught:
        wsel.run(digits["program"], inputs={"x": digits["x"][:4]}, micro_order="layers")
    cause = caught.value.__cause__
    assert isinstance(cause, ValueError)
    assert str(cause) == "micro_order `layers`: expected 'auto', 'micro' or 'layer'"
