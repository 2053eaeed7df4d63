"""wsel.train: the digits MLP trained on the fabric from NumPy arrays gives the weights and
losses of `wsel train` on the same files, bit for bit, and those of the independent NumPy
trainer (tests/reference/train.py, float64) within its tolerance; bad settings raise
WselError with their code."""

import subprocess
import sys

import numpy as np
import pytest

import wsel
from conftest import DIGITS, REPO

TRAIN = DIGITS / "train.wse"
NAMES = ["w1", "b1", "w2", "b2", "w3", "b3"]
#: Steps of the comparison: few, for the debug build's time; the settings are the `train`
#: item's (SGD, momentum 0.9, lr 0.05, batch 16, seed 1).
STEPS = 5


@pytest.fixture(scope="module")
def train_data():
    data = DIGITS / "data"
    return {
        "x": np.load(data / "x_train.npy"),
        "y": np.load(data / "y_train.npy"),
        "init": {n: np.load(data / "init" / f"{n}.npy") for n in NAMES},
    }


@pytest.fixture(scope="module")
def trained(train_data):
    return wsel.train(
        TRAIN,
        inputs={"x": train_data["x"]},
        labels=train_data["y"],
        params=train_data["init"],
        steps=STEPS,
    )


def test_same_weights_and_losses_as_the_cli(trained, wsel_bin, tmp_path):
    run = subprocess.run(
        [wsel_bin, "train", str(TRAIN), "--steps", str(STEPS), "--quiet", "--out", str(tmp_path)],
        capture_output=True, text=True,
    )
    assert run.returncode == 0, run.stderr
    assert list(trained.weights) == NAMES
    for name in NAMES:
        ours = trained.weights[name]
        assert ours.dtype == np.float32
        assert np.array_equal(ours, np.load(tmp_path / f"{name}.npy")), name
    csv = np.loadtxt(tmp_path / "loss.csv", delimiter=",", skiprows=1, ndmin=2)
    assert trained.losses.dtype == np.float32 and trained.losses.shape == (STEPS,)
    assert np.array_equal(trained.losses, csv[:, 1].astype(np.float32))
    # The per-step figures are the CLI's too.
    cycles = [step["cycles"] for step in trained.report["steps"]]
    assert cycles == [int(c) for c in csv[:, 7]] and trained.cycles == sum(cycles)


def test_within_tolerance_of_the_numpy_reference(trained, train_data, tmp_path):
    subprocess.run(
        [sys.executable, str(REPO / "tests" / "reference" / "train.py"), str(tmp_path),
         "--optimizer", "sgd", "--lr", "0.05", "--momentum", "0.9", "--steps", str(STEPS),
         "--batch", "16", "--seed", "1"],
        check=True,
    )
    # float32 on the fabric against float64 (the tolerance of compiler/driver/tests/training.rs).
    theirs = np.load(tmp_path / "losses.npy")
    np.testing.assert_allclose(trained.losses, theirs, rtol=1e-5)
    for name in NAMES:
        expected = np.load(tmp_path / f"{name}.npy")
        np.testing.assert_allclose(trained.weights[name], expected, rtol=0, atol=1e-5)
        # Training moved the weights far beyond the tolerance: returning the initial weights
        # would fail the comparison above.
        assert np.abs(expected - train_data["init"][name]).max() > 1e-3, name


def test_initial_weights_from_memory_are_used(trained, train_data):
    zeros = dict(train_data["init"], w3=np.zeros_like(train_data["init"]["w3"]))
    other = wsel.train(
        TRAIN, inputs={"x": train_data["x"]}, labels=train_data["y"], params=zeros, steps=1
    )
    # With w3 = 0 every class is equally likely: the first loss is ln 10.
    assert abs(other.losses[0] - np.log(10)) < 1e-5
    assert abs(trained.losses[0] - np.log(10)) > 1e-2


def test_the_per_step_table(trained):
    pandas = pytest.importorskip("pandas")
    steps = trained.steps
    assert isinstance(steps, pandas.DataFrame)
    assert list(steps.index) == list(range(1, STEPS + 1))
    assert (steps["forward_cycles"] > 0).all() and (steps["samples_per_second"] > 0).all()
    report = trained.report
    assert report["model"] == "digits" and report["target"] == "wse2" and report["batch"] == 16


def test_recomputing_changes_no_bit(trained, train_data):
    """`recompute="always"`: the backward pass runs the dropped forward layers again before
    the backward layers that read them (their cycles in each step's `recompute_cycles`); the
    losses are those of keeping every activation (the digits MLP fits, so the default keeps
    them all and recomputes nothing). Recomputation keeps one region where the default step
    runs on per-layer rows, which reduce in another order: the last bits may differ for that
    alone (the CLI test `training_recompute.rs` compares two one-region runs bit for bit)."""
    again = wsel.train(
        TRAIN,
        inputs={"x": train_data["x"]},
        labels=train_data["y"],
        params=train_data["init"],
        steps=2,
        recompute="always",
    )
    np.testing.assert_allclose(again.losses, trained.losses[:2], rtol=1e-6, atol=0)
    assert all(step["recompute_cycles"] > 0 for step in again.report["steps"])
    assert again.report["kept"]["recompute_cycles"] > 0
    assert all(step["recompute_cycles"] == 0 for step in trained.report["steps"])
    with pytest.raises(ValueError, match="recompute 'sometimes'"):
        wsel.train(TRAIN, recompute="sometimes")


def test_a_bad_learning_rate_raises_its_code(train_data):
    with pytest.raises(wsel.WselError) as error:
        wsel.train(TRAIN, inputs={"x": train_data["x"]}, labels=train_data["y"], lr=-1.0)
    assert error.value.code == "E1106"
    assert "learning rate" in error.value.message


def test_labels_that_do_not_fit_raise_their_code(train_data):
    with pytest.raises(wsel.WselError) as error:
        wsel.train(TRAIN, inputs={"x": train_data["x"]}, labels=train_data["y"][:100], steps=1)
    assert error.value.code == "E1108"


def test_bad_arguments_are_value_errors():
    with pytest.raises(ValueError, match="optimizer 'rmsprop'"):
        wsel.train(TRAIN, optimizer="rmsprop")
    with pytest.raises(ValueError, match="steps or epochs"):
        wsel.train(TRAIN, steps=2, epochs=1)


def test_two_systems_train_as_one(train_data):
    """`systems=2`: the in-process cluster, each system on half the batch; the store's mean of
    their mean gradients is the batch's, so the weights are one system's within float32
    rounding (compiler/driver/tests/cluster_training.rs holds `wsel train` to 1e-5)."""
    args = dict(inputs={"x": train_data["x"]}, labels=train_data["y"], steps=2)
    one = wsel.train(TRAIN, **args)
    two = wsel.train(TRAIN, systems=2, **args)
    np.testing.assert_allclose(two.losses, one.losses, rtol=1e-5)
    for name in NAMES:
        np.testing.assert_allclose(two.weights[name], one.weights[name], rtol=0, atol=1e-5)
    # The cluster ran: a system's step (half the batch, then the sums through the tree) takes
    # other cycles than one system's whole batch.
    assert two.report["batch"] == 16 and two.cycles != one.cycles
