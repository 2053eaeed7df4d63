"""NumPy reference for results read by several layers in pipelined inference (issue #21/#23),
written independently of wsel.

Usage: python3 tests/reference/fan_out.py MODEL DIR

Writes MODEL's input x: [8, 16] and its weights (w1, b1, ... drawn from a seeded generator,
as float32) into DIR, and the model's result, computed in float64 from those float32 values,
into DIR/reference/y.npy. The models (relu(x W + b) is `layer`):

  block       h = layer(x, w1, b1); h + (h W2 + b2)       a residual block after a relu
  twice       h = layer(x, w1, b1); h + h                 one tensor on both of add's ports
  two_blocks  h1 = layer(x, w1, b1); s = h1 + (h1 W2 + b2);
              h2 = layer(s, w3, b3); h2 + (h2 W4 + b4)     two blocks in a chain
  mixed       h1 = layer(x, w1, b1); s = h1 + (h1 W2 + b2);
              h2 = layer(s, w3, b3); h2 + h2               a block, then a tensor added to itself
"""

import argparse
from pathlib import Path

import numpy as np

SAMPLES, FEATURES = 8, 16
LAYERS = {"block": 2, "twice": 1, "two_blocks": 4, "mixed": 3}


def layer(x, w, b):
    return np.maximum(x @ w + b, 0.0)


def forward(model, x, p):
    h = layer(x, p["w1"], p["b1"])
    if model == "twice":
        return h + h
    s = h + (h @ p["w2"] + p["b2"])
    if model == "block":
        return s
    h2 = layer(s, p["w3"], p["b3"])
    if model == "mixed":
        return h2 + h2
    return h2 + (h2 @ p["w4"] + p["b4"])


def write(argv, layers, forward, seed):
    """Parses MODEL DIR from `argv`, draws x and MODEL's `layers[MODEL]` dense layers' weights
    from `seed`, and writes them and forward(MODEL, x, weights) in float64 into DIR."""
    ap = argparse.ArgumentParser()
    ap.add_argument("model", choices=sorted(layers))
    ap.add_argument("dir", type=Path)
    args = ap.parse_args(argv)
    rng = np.random.default_rng(seed)
    params = {}
    for i in range(1, layers[args.model] + 1):
        params[f"w{i}"] = rng.uniform(-0.5, 0.5, (FEATURES, FEATURES)).astype(np.float32)
        params[f"b{i}"] = rng.uniform(-0.2, 0.2, FEATURES).astype(np.float32)
    x = rng.uniform(-1.0, 1.0, (SAMPLES, FEATURES)).astype(np.float32)
    args.dir.mkdir(parents=True, exist_ok=True)
    (args.dir / "reference").mkdir(exist_ok=True)
    np.save(args.dir / "x.npy", x)
    for name, value in params.items():
        np.save(args.dir / f"{name}.npy", value)
    wide = {name: value.astype(np.float64) for name, value in params.items()}
    y = forward(args.model, x.astype(np.float64), wide)
    np.save(args.dir / "reference" / "y.npy", y)


if __name__ == "__main__":
    write(None, LAYERS, forward, 23)
