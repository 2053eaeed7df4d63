"""NumPy reference forward passes for the examples, written independently of wsel.

Usage: python3 tests/reference/forward.py MODEL OUT.npy [BATCH]
  MODEL: gemv           y = x @ A.T + b                               (examples/gemv/data)
         digits         softmax(relu(relu(x W1 + b1) W2 + b2) W3 + b3) (examples/digits/data)
         axpy           z = 2.5 * x + y                               (examples/axpy/data)
         heat           500 Jacobi steps of the 5-point stencil, border held fixed
                                                                      (examples/heat/data)
         rowsum         parts.sum(axis=1)                             (examples/rowsum/data)
         allreduce      x / x.sum(axis=1, keepdims=True)              (examples/allreduce/data)
         residual       layernorm(x + relu(x W1 + b1) W2 + b2) * gamma + beta, eps 1e-5
                                                                      (examples/residual/data)
         mlp_streaming  softmax(relu(relu(x W1 + b1) W2 + b2) W3 + b3) (examples/mlp_streaming/data)
         ragged         (x W1 + b1) W2 + b2, 257 -> 131 -> 10         (examples/ragged/data)
The MODEL name is the example's folder name. Computes in float32, as the fabric does, and
saves the result as float32. BATCH keeps the first BATCH samples (default: all).
"""

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
F32 = np.float32


def load(example, name):
    return np.load(EXAMPLES / example / "data" / f"{name}.npy")


def softmax(h):
    e = np.exp(h - h.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


def gemv(batch):
    a, b, x = (load("gemv", n) for n in ("a", "b", "x"))
    return x[:batch] @ a.T + b


def digits(batch):
    h = load("digits", "x_test")[:batch]
    for i in (1, 2, 3):
        h = h @ load("digits", f"w{i}") + load("digits", f"b{i}")
        if i < 3:
            h = np.maximum(h, F32(0))
    return softmax(h)


def axpy(batch):
    x, y = load("axpy", "x")[:batch], load("axpy", "y")[:batch]
    return F32(2.5) * x + y


def heat(batch, steps=500):
    u = load("heat", "plate")[:batch].copy()
    for _ in range(steps):
        v = u.copy()
        v[:, 1:-1, 1:-1] = F32(0.25) * (
            u[:, :-2, 1:-1] + u[:, 2:, 1:-1] + u[:, 1:-1, :-2] + u[:, 1:-1, 2:]
        )
        u = v
    return u


def rowsum(batch):
    return load("rowsum", "parts")[:batch].sum(axis=1)


def allreduce(batch):
    x = load("allreduce", "x")[:batch]
    return x / x.sum(axis=1, keepdims=True)


def residual(batch):
    x = load("residual", "x")[:batch]
    h = np.maximum(x @ load("residual", "w1") + load("residual", "b1"), F32(0))
    r = x + (h @ load("residual", "w2") + load("residual", "b2"))
    mean = r.mean(axis=-1, keepdims=True)
    var = ((r - mean) ** 2).mean(axis=-1, keepdims=True)
    normed = (r - mean) / np.sqrt(var + F32(1e-5))
    return normed * load("residual", "gamma") + load("residual", "beta")


def mlp_streaming(batch):
    h = load("mlp_streaming", "x")[:batch]
    for i in (1, 2, 3):
        h = h @ load("mlp_streaming", f"w{i}") + load("mlp_streaming", f"b{i}")
        if i < 3:
            h = np.maximum(h, F32(0))
    return softmax(h)


def ragged(batch):
    h = load("ragged", "x")[:batch]
    for i in (1, 2):
        h = h @ load("ragged", f"w{i}") + load("ragged", f"b{i}")
    return h


MODELS = {
    "gemv": gemv,
    "digits": digits,
    "axpy": axpy,
    "heat": heat,
    "rowsum": rowsum,
    "allreduce": allreduce,
    "residual": residual,
    "mlp_streaming": mlp_streaming,
    "ragged": ragged,
}


def main():
    model, out = sys.argv[1], sys.argv[2]
    batch = int(sys.argv[3]) if len(sys.argv) > 3 else None
    result = MODELS[model](batch)
    assert result.dtype == np.float32, f"{model}: reference computed in {result.dtype}"
    np.save(out, result.astype(np.float32))


if __name__ == "__main__":
    main()
