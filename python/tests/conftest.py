"""Shared fixtures: the repository's digits example (weights trained by scikit-learn, its test
split and scikit-learn's own predictions) and the `wsel` binary of this checkout."""

import os
import shutil
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
DIGITS = REPO / "examples" / "digits"
#: Samples of the test split the tests run (the whole split is 360; fewer keep them fast).
SAMPLES = 60


@pytest.fixture(scope="session")
def digits():
    """The digits example's data as NumPy arrays."""
    data = DIGITS / "data"
    params = {f"{k}{i}": np.load(data / f"{k}{i}.npy") for i in (1, 2, 3) for k in "wb"}
    return {
        "program": DIGITS / "main.wse",
        "x": np.load(data / "x_test.npy")[:SAMPLES],
        "labels": np.load(data / "y_test.npy")[:SAMPLES],
        "sklearn_pred": np.load(data / "sklearn_pred.npy")[:SAMPLES],
        "params": params,
    }


@pytest.fixture(scope="session")
def wsel_bin():
    """The `wsel` command: $WSEL_BIN, else this checkout's debug or release build, else PATH."""
    candidates = [os.environ.get("WSEL_BIN")]
    candidates += [str(REPO / "target" / p / "wsel") for p in ("debug", "release")]
    for candidate in candidates:
        if candidate and Path(candidate).is_file():
            return candidate
    found = shutil.which("wsel")
    if found is None:
        pytest.fail("no wsel binary: build it with `cargo build` or set WSEL_BIN")
    return found


def numpy_forward(params, x):
    """The digits model in float32 NumPy: an independent reference for the fabric's result."""
    h = x.astype(np.float32)
    for i in (1, 2, 3):
        h = h @ params[f"w{i}"] + params[f"b{i}"]
        if i < 3:
            h = np.maximum(h, np.float32(0))
    e = np.exp(h - h.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)
