"""Write the gemv example's data: A f32[128, 256], b f32[128], and a batch x f32[8, 256].

Values are drawn from a fixed seed, so the files are reproducible. The reference result is
y = x @ A.T + b, which the test suite computes with NumPy and compares with `wsel run`.

Usage: python3 examples/gemv/make_data.py
"""

from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parent / "data"


def main():
    rng = np.random.default_rng(2026)
    DATA.mkdir(exist_ok=True)
    np.save(DATA / "a.npy", rng.standard_normal((128, 256)).astype(np.float32))
    np.save(DATA / "b.npy", rng.standard_normal(128).astype(np.float32))
    np.save(DATA / "x.npy", rng.standard_normal((8, 256)).astype(np.float32))
    print(f"wrote {DATA}")


if __name__ == "__main__":
    main()
