"""Write the rowsum example's data: parts f32[8, 16, 128], 8 samples of 16 partial vectors.

Values are standard normal draws from a fixed seed, so the file is reproducible (64 KiB).
The model computes parts.sum(axis=1), f32[8, 128] (tests/reference/forward.py).

Usage: python3 examples/rowsum/make_data.py
"""

from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parent / "data"


def main():
    rng = np.random.default_rng(303)
    DATA.mkdir(exist_ok=True)
    np.save(DATA / "parts.npy", rng.standard_normal((8, 16, 128)).astype(np.float32))
    print(f"wrote {DATA}")


if __name__ == "__main__":
    main()
