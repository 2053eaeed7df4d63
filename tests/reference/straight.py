"""NumPy reference for std.nn's `dense_straight` (issue #23: a dense whose result leaves on
the side opposite its input), written independently of wsel.

Usage: python3 tests/reference/straight.py MODEL DIR

Writes MODEL's input x: [8, N] and its weights (w1, b1, ... drawn from a seeded generator,
as float32) into DIR, and the model's result, computed in float64 from those float32 values,
into DIR/reference/y.npy. Each model is a chain of layers act(x W + b), given as
(inputs, outputs, act) with act one of none, relu, gelu (GPT-2's:
0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))):

  k2      16 -> 16, none           (the test holds it to 2 x 4 PEs: 2 columns a row)
  uneven  16 -> 10, none           (4 x 4: 10 outputs over 4 rows, 3 3 2 2)
  wide    24 -> 7, relu            (3 x 6: 2 columns a row, 7 outputs over 3 rows)
  row     16 -> 5, gelu            (1 x 4: one row, no column bus)
  j2      16 -> 16, none           (4 x 2: two rows a column, taking turns on its bus)
  j4      32 -> 12, relu           (8 x 2: four rows a column, 12 outputs over 8 rows)
  col     16 -> 8, gelu            (4 x 1: one column, every PE a turn)
  chain   16 -> 32 -> 24 -> 16, relu after each (also held to 4 x 8, 4 x 2, 4 x 1)
"""

import argparse
from pathlib import Path

import numpy as np

SAMPLES = 8
MODELS = {
    "k2": [(16, 16, "none")],
    "uneven": [(16, 10, "none")],
    "wide": [(24, 7, "relu")],
    "row": [(16, 5, "gelu")],
    "j2": [(16, 16, "none")],
    "j4": [(32, 12, "relu")],
    "col": [(16, 8, "gelu")],
    "chain": [(16, 32, "relu"), (32, 24, "relu"), (24, 16, "relu")],
}


def act(kind, y):
    if kind == "relu":
        return np.maximum(y, 0.0)
    if kind == "gelu":
        return 0.5 * y * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (y + 0.044715 * y**3)))
    return y


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model", choices=sorted(MODELS))
    ap.add_argument("dir", type=Path)
    args = ap.parse_args()
    layers = MODELS[args.model]
    rng = np.random.default_rng(30)
    x = rng.uniform(-1.0, 1.0, (SAMPLES, layers[0][0])).astype(np.float32)
    args.dir.mkdir(parents=True, exist_ok=True)
    (args.dir / "reference").mkdir(exist_ok=True)
    np.save(args.dir / "x.npy", x)
    y = x.astype(np.float64)
    for i, (n, m, kind) in enumerate(layers, start=1):
        w = rng.uniform(-0.5, 0.5, (n, m)).astype(np.float32)
        b = rng.uniform(-0.2, 0.2, m).astype(np.float32)
        np.save(args.dir / f"w{i}.npy", w)
        np.save(args.dir / f"b{i}.npy", b)
        y = act(kind, y @ w.astype(np.float64) + b.astype(np.float64))
    np.save(args.dir / "reference" / "y.npy", y)


if __name__ == "__main__":
    main()
