"""Write the mlp_streaming example's data: a batch x f32[8, 256] and the MLP's weights.

- x.npy   f32[8, 256]    standard normal
- w1.npy  f32[256, 512]  normal / sqrt(256)
- b1.npy  f32[512]       normal * 0.1
- w2.npy  f32[512, 512]  normal / sqrt(512)
- b2.npy  f32[512]       normal * 0.1
- w3.npy  f32[512, 10]   normal / sqrt(512)
- b3.npy  f32[10]        normal * 0.1

Fixed seed, so the files are reproducible. The weights are 1.6 MB on purpose: the example
exists to show a model whose weights do not fit the `dev` fabric's 1 MiB of SRAM, so it
must run in weight-streaming mode. The model computes
softmax(relu(relu(x @ w1 + b1) @ w2 + b2) @ w3 + b3) (tests/reference/forward.py).

Usage: python3 examples/mlp_streaming/make_data.py
"""

from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parent / "data"


def main():
    rng = np.random.default_rng(606)
    DATA.mkdir(exist_ok=True)
    arrays = {
        "x": rng.standard_normal((8, 256)),
        "w1": rng.standard_normal((256, 512)) / np.sqrt(256),
        "b1": rng.standard_normal(512) * 0.1,
        "w2": rng.standard_normal((512, 512)) / np.sqrt(512),
        "b2": rng.standard_normal(512) * 0.1,
        "w3": rng.standard_normal((512, 10)) / np.sqrt(512),
        "b3": rng.standard_normal(10) * 0.1,
    }
    for name, value in arrays.items():
        np.save(DATA / f"{name}.npy", value.astype(np.float32))
    print(f"wrote {DATA}")


if __name__ == "__main__":
    main()
