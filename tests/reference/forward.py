"""NumPy reference forward passes for the examples, written independently of wsel.

Usage: python3 tests/reference/forward.py MODEL OUT.npy [BATCH]
  MODEL: gemv    y = x @ A.T + b                         (examples/gemv/data)
         digits  softmax(relu(relu(x W1 + b1) W2 + b2) W3 + b3)   (examples/digits/data)
Computes in float32, as the fabric does, and saves the result as float32.
"""

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]


def gemv(batch):
    d = ROOT / "examples/gemv/data"
    a, b, x = (np.load(d / f) for f in ("a.npy", "b.npy", "x.npy"))
    return x[:batch] @ a.T + b


def digits(batch):
    d = ROOT / "examples/digits/data"
    h = np.load(d / "x_test.npy")[:batch]
    for i in (1, 2, 3):
        h = h @ np.load(d / f"w{i}.npy") + np.load(d / f"b{i}.npy")
        if i < 3:
            h = np.maximum(h, np.float32(0))
    e = np.exp(h - h.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def main():
    model, out = sys.argv[1], sys.argv[2]
    batch = int(sys.argv[3]) if len(sys.argv) > 3 else None
    result = {"gemv": gemv, "digits": digits}[model](batch)
    np.save(out, result.astype(np.float32))


if __name__ == "__main__":
    main()
