"""Write the residual example's data: a batch x f32[8, 128] and the block's weights.

- x.npy      f32[8, 128]    standard normal
- w1.npy     f32[128, 256]  normal, scaled by 1/sqrt(128) (He-like, keeps activations O(1))
- b1.npy     f32[256]       normal * 0.1
- w2.npy     f32[256, 128]  normal, scaled by 1/sqrt(256)
- b2.npy     f32[128]       normal * 0.1
- gamma.npy  f32[128]       1 + normal * 0.1 (layernorm gain)
- beta.npy   f32[128]       normal * 0.1     (layernorm shift)

Fixed seed, so the files are reproducible (about 270 KiB in all). The model computes
layernorm(x + relu(x @ w1 + b1) @ w2 + b2) with gamma and beta (tests/reference/forward.py).

Usage: python3 examples/residual/make_data.py
"""

from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parent / "data"


def main():
    rng = np.random.default_rng(505)
    DATA.mkdir(exist_ok=True)
    arrays = {
        "x": rng.standard_normal((8, 128)),
        "w1": rng.standard_normal((128, 256)) / np.sqrt(128),
        "b1": rng.standard_normal(256) * 0.1,
        "w2": rng.standard_normal((256, 128)) / np.sqrt(256),
        "b2": rng.standard_normal(128) * 0.1,
        "gamma": 1.0 + rng.standard_normal(128) * 0.1,
        "beta": rng.standard_normal(128) * 0.1,
    }
    for name, value in arrays.items():
        np.save(DATA / f"{name}.npy", value.astype(np.float32))
    print(f"wrote {DATA}")


if __name__ == "__main__":
    main()
