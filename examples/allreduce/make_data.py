"""Write the allreduce example's data: x f32[16, 8, 64], 16 samples of 8 parts of 64 values.

Values are uniform in [0.5, 2) from a fixed seed (positive, so every part's share of the
total is between 0 and 1 and the division is well conditioned); the file is reproducible
(32 KiB). The model computes x / x.sum(axis=1, keepdims=True) (tests/reference/forward.py).

Usage: python3 examples/allreduce/make_data.py
"""

from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parent / "data"


def main():
    rng = np.random.default_rng(404)
    DATA.mkdir(exist_ok=True)
    np.save(DATA / "x.npy", rng.uniform(0.5, 2.0, (16, 8, 64)).astype(np.float32))
    print(f"wrote {DATA}")


if __name__ == "__main__":
    main()
