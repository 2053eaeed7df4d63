"""Write the axpy example's data: two batches of vectors, x and y, f32[8, 1024] each.

Values are standard normal draws from a fixed seed, so the files are reproducible
(32 KiB each). The model computes z = 2.5 * x + y element-wise (ALPHA in main.wse); the
test suite computes the same with NumPy (tests/reference/forward.py) and compares.

Usage: python3 examples/axpy/make_data.py
"""

from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parent / "data"


def main():
    rng = np.random.default_rng(101)
    DATA.mkdir(exist_ok=True)
    np.save(DATA / "x.npy", rng.standard_normal((8, 1024)).astype(np.float32))
    np.save(DATA / "y.npy", rng.standard_normal((8, 1024)).astype(np.float32))
    print(f"wrote {DATA}")


if __name__ == "__main__":
    main()
