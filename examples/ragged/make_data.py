"""Write the ragged example's data: x f32[6, 257], w1 f32[257, 131], b1 f32[131],
w2 f32[131, 10], b2 f32[10].

257 and 131 are primes, so no region side other than 1 or the whole dimension divides them:
the layers map only because the split is uneven. Values come from a fixed seed, so the files
are reproducible. The reference result is (x @ w1 + b1) @ w2 + b2, which the test suite
computes with NumPy (tests/reference/forward.py ragged) and compares with `wsel run` in both
execution modes.

Usage: python3 examples/ragged/make_data.py
"""

from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parent / "data"


def main():
    rng = np.random.default_rng(257)
    DATA.mkdir(exist_ok=True)
    np.save(DATA / "x.npy", rng.standard_normal((6, 257)).astype(np.float32))
    np.save(DATA / "w1.npy", (rng.standard_normal((257, 131)) / 16).astype(np.float32))
    np.save(DATA / "b1.npy", rng.standard_normal(131).astype(np.float32))
    np.save(DATA / "w2.npy", (rng.standard_normal((131, 10)) / 8).astype(np.float32))
    np.save(DATA / "b2.npy", rng.standard_normal(10).astype(np.float32))
    print(f"wrote {DATA}")


if __name__ == "__main__":
    main()
