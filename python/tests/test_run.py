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
    assert [layer["name"] for layer in run["layers"]][:2] == ["dense#1", "relu#1"]


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
    assert list(layers.index) == ["dense#1", "relu#1", "dense#2", "relu#2", "dense#3", "softmax#1"]
    assert (layers["simulated_cycles_per_sample"] > 0).all()


def test_source_text_with_base_dir(digits):
    text = digits["program"].read_text()
    result = wsel.run(text, inputs={"x": digits["x"][:4]}, base_dir=digits["program"].parent)
    np.testing.assert_allclose(
        result.output, numpy_forward(digits["params"], digits["x"][:4]), atol=1e-5
    )
