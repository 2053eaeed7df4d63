"""NumPy reference for fused layers in pipelined inference (issue #23, docs/mapping.md §4,
"Fusion"), written independently of wsel.

Usage: python3 tests/reference/fusion.py MODEL DIR

Writes MODEL's input x: [8, 16] and its weights (w1, b1, ... drawn from a seeded generator,
as float32) into DIR, and the model's result, computed in float64 from those float32 values,
into DIR/reference/y.npy. The models (`dense` is x W + b):

  chain  h1 = relu(dense(x, w1, b1)); h2 = gelu(dense(h1, w2, b2)); dense(h2, w3, b3)
  skip   h = dense(x, w1, b1); relu(h) + h        a dense result read by two layers
  pair   relu(dense(x, w1, b1))                   one dense and its relu

gelu is GPT-2's: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))).
"""

import numpy as np

from fan_out import write

LAYERS = {"chain": 3, "skip": 1, "pair": 1}


def dense(x, p, i):
    return x @ p[f"w{i}"] + p[f"b{i}"]


def gelu(x):
    return 0.5 * x * (1.0 + np.tanh(np.sqrt(2.0 / np.pi) * (x + 0.044715 * x**3)))


def forward(model, x, p):
    if model == "pair":
        return np.maximum(dense(x, p, 1), 0.0)
    if model == "skip":
        h = dense(x, p, 1)
        return np.maximum(h, 0.0) + h
    h1 = np.maximum(dense(x, p, 1), 0.0)
    h2 = gelu(dense(h1, p, 2))
    return dense(h2, p, 3)


if __name__ == "__main__":
    write(None, LAYERS, forward, 27)
