"""Write the heat example's data: one 64 x 64 plate of initial temperatures, f32[1, 64, 64].

The border is held at fixed temperatures by the model: the north edge at 100, the south
edge at 0, the west edge falling linearly from 100 to 0 and the east edge at 50; the
interior starts at random temperatures between 0 and 20 (fixed seed, so the file is
reproducible; 16 KiB). The model runs 500 Jacobi steps (tests/reference/forward.py does the
same with NumPy).

Usage: python3 examples/heat/make_data.py
"""

from pathlib import Path

import numpy as np

DATA = Path(__file__).resolve().parent / "data"


def main():
    rng = np.random.default_rng(202)
    DATA.mkdir(exist_ok=True)
    n = 64
    plate = rng.uniform(0.0, 20.0, (n, n))
    plate[:, 0] = np.linspace(100.0, 0.0, n)   # west
    plate[:, -1] = 50.0                        # east
    plate[0, :] = 100.0                        # north (corners included)
    plate[-1, :] = 0.0                         # south
    np.save(DATA / "plate.npy", plate[None].astype(np.float32))
    print(f"wrote {DATA}")


if __name__ == "__main__":
    main()
