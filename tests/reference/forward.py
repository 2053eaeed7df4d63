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
         transformer    the GPT-style decoder's logits for every token of the held-out
                        batch (examples/transformer/data; train.py describes the model)
         transformer1   the same with its first block only (the final layernorm and the
                        head right after it): compiler/driver/tests/transformer_example.rs
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


def layernorm(x, g, b, eps=F32(1e-5)):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * g + b


def gelu(x):
    c = F32(np.sqrt(2.0 / np.pi))
    return F32(0.5) * x * (F32(1) + np.tanh(c * (x + F32(0.044715) * x**3)))


def attention(q, k, v, heads, context, causal=True):
    """Multi-head attention over each sequence of `context` consecutive rows of q, k, v."""
    b, d = q.shape
    dh = d // heads
    split = lambda t: t.reshape(b // context, context, heads, dh).transpose(0, 2, 1, 3)
    q, k, v = split(q), split(k), split(v)
    s = (q @ k.transpose(0, 1, 3, 2)) / np.sqrt(F32(dh))
    if causal:
        s = np.where(np.tril(np.ones((context, context), dtype=bool)), s, F32(-np.inf))
    return (softmax(s) @ v).transpose(0, 2, 1, 3).reshape(b, d).astype(F32)


def transformer(batch, blocks=(1, 2)):
    def w(name):
        return load("transformer", name)

    ids = w("ids")[:batch, 0].astype(np.int64)
    context = w("wpe").shape[0]
    h = w("wte")[ids] + w("wpe")[np.arange(len(ids)) % context]
    for i in blocks:
        a = layernorm(h, w(f"ln1_g{i}"), w(f"ln1_b{i}"))
        q, k, v = (a @ w(f"w{n}{i}") + w(f"b{n}{i}") for n in "qkv")
        h = h + (attention(q, k, v, 4, context) @ w(f"wo{i}") + w(f"bo{i}"))
        m = layernorm(h, w(f"ln2_g{i}"), w(f"ln2_b{i}"))
        f = gelu(m @ w(f"wfc1{i}") + w(f"bfc1{i}"))
        h = h + (f @ w(f"wfc2{i}") + w(f"bfc2{i}"))
    return layernorm(h, w("lnf_g"), w("lnf_b")) @ w("whead") + w("bhead")


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
    "transformer": transformer,
    "transformer1": lambda batch: transformer(batch, blocks=(1,)),
}


def main():
    model, out = sys.argv[1], sys.argv[2]
    batch = int(sys.argv[3]) if len(sys.argv) > 3 else None
    result = MODELS[model](batch)
    assert result.dtype == np.float32, f"{model}: reference computed in {result.dtype}"
    np.save(out, result.astype(np.float32))


if __name__ == "__main__":
    main()
