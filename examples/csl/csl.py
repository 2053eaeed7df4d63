"""Data and NumPy checks of the csl-examples ports (examples/csl/README.md).

    python3 csl.py data NAME            write NAME/data/*.npy (the vendor's run.py inputs)
    python3 csl.py check NAME Y.npy     compare the fabric's result with the NumPy reference,
                                        with the vendor's tolerance; exit 1 on a mismatch

Every input is made as the vendor's run.py makes it (same seeds, same shapes), and every
check is the vendor's (`np.testing.assert_allclose` with its atol/rtol, or its norm test).
"""

import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def save(name, **arrays):
    folder = os.path.join(HERE, name, "data")
    os.makedirs(folder, exist_ok=True)
    for key, value in arrays.items():
        np.save(os.path.join(folder, key + ".npy"), np.ascontiguousarray(value, dtype=np.float32))


# ----------------------------------------------------------------------------------------
# gemv tutorials: A = arange (08: seeded random), x = 1, b = 2; y = A @ x + b
# ----------------------------------------------------------------------------------------

def gemv_inputs(m, n, seed=None):
    if seed is None:
        a = np.arange(m * n, dtype=np.float32).reshape(m, n)
    else:
        np.random.seed(seed)
        a = np.random.rand(m, n).astype(np.float32)
    x = np.full(n, 1.0, dtype=np.float32)
    b = np.full(m, 2.0, dtype=np.float32)
    return a, x, b


GEMV = {
    # name: (M, N, seed, tiles of y in the result)
    "gemv-01-complete-program": (4, 6, None, 1),
    "gemv-02-memory-dsds": (4, 6, None, 1),
    "gemv-03-memcpy": (4, 6, None, 1),
    "gemv-04-params": (4, 6, None, 1),
    "gemv-05-multiple-pes": (4, 6, None, 4),
    "gemv-06-routes-1": (4, 6, None, 1),
    "gemv-07-routes-2": (4, 6, None, 1),
    "gemv-08-routes-3": (6, 8, 7, 1),
    "gemv-09-streaming": (6, 8, None, 1),
}

GEMV_WIDTH = 4  # gemv-05: the program replicated on a row of 4 PEs


def gemv_data(name):
    m, n, seed, _ = GEMV[name]
    a, x, b = gemv_inputs(m, n, seed)
    if name in ("gemv-01-complete-program", "gemv-02-memory-dsds"):
        save(name, launch=np.zeros((1, 1)))
    elif name == "gemv-05-multiple-pes":
        # The host copies the same A, x, b to every PE of the row (np.tile in run.py).
        save(name, at=np.tile(a.T, GEMV_WIDTH), b=np.tile(b, GEMV_WIDTH),
             x=np.tile(x, GEMV_WIDTH)[None, :])
    elif name == "gemv-09-streaming":
        # x and b are streamed from the host: both are model inputs.
        save(name, at=a.T, b=b[None, :], x=x[None, :])
    elif name in ("gemv-03-memcpy", "gemv-04-params", "gemv-06-routes-1", "gemv-07-routes-2",
                  "gemv-08-routes-3", "gemv-09-streaming"):
        # A is stored column-major on the PEs: the file holds A^T, split [cols, rows].
        save(name, at=a.T, b=b, x=x[None, :])
    else:
        save(name, a=a, b=b, x=x[None, :])


def gemv_check(name, y):
    m, n, seed, tiles = GEMV[name]
    a, x, b = gemv_inputs(m, n, seed)
    expected = np.tile(a @ x + b, tiles)
    y = y.reshape(-1)
    if name == "gemv-08-routes-3":
        # run.py: the norm-wise relative error, below 1e-6; assert_allclose only when N < 10.
        relerr = np.linalg.norm(y - expected, np.inf) / (
            np.linalg.norm(a, np.inf) * np.linalg.norm(x, np.inf) + np.linalg.norm(b, np.inf))
        assert relerr < 1e-6, relerr
        np.testing.assert_allclose(y, expected)
    elif name in ("gemv-07-routes-2", "gemv-09-streaming"):
        np.testing.assert_allclose(y, expected)
    else:
        np.testing.assert_allclose(y, expected, atol=0.01, rtol=0)


# ----------------------------------------------------------------------------------------
# residual: |b - A x|_inf, M = 6, N = 4
# ----------------------------------------------------------------------------------------

def residual_inputs():
    m, n = 6, 4
    a = np.arange(m * n).reshape(m, n).astype(np.float32)
    x = np.arange(n).astype(np.float32) + 100
    b = np.arange(m).astype(np.float32) + 200
    return a, x, b


def residual_data(name):
    a, x, b = residual_inputs()
    save(name, at=a.T, x=x[None, :], b=b[None, :])


def residual_check(name, nrm):
    a, x, b = residual_inputs()
    nrm_r = np.linalg.norm(b - a @ x, np.inf)
    assert np.allclose(nrm_r, nrm.reshape(-1)[0], 1.e-5), (nrm_r, nrm)


# ----------------------------------------------------------------------------------------

DATA = {name: gemv_data for name in GEMV}
CHECK = {name: gemv_check for name in GEMV}
DATA["residual"] = residual_data
CHECK["residual"] = residual_check


def main(argv):
    if len(argv) >= 2 and argv[0] == "data":
        for name in argv[1:] if argv[1] != "all" else sorted(DATA):
            DATA[name](name)
        return 0
    if len(argv) == 3 and argv[0] == "check":
        name, path = argv[1], argv[2]
        CHECK[name](name, np.load(path))
        print(f"{name}: matches the NumPy reference")
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
