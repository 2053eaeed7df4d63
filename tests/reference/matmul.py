"""NumPy references of std.nn's attention pieces as layers of their own (issue #20), written
independently of wsel: `matmul_qk`, `matmul_pv` and the grouped, causally masked `softmax`.

Called through layers.py (python3 tests/reference/layers.py LAYER DIR [KEY=VALUE ...]):
  matmul_qk  q, k   heads=H context=T scale=1
             s[i, h*T + j] = scale * q[i, head h] . k[first token of i's sequence + j, head h]
  matmul_pv  p, v   heads=H context=T
             y[i, head h] = sum_j p[i, h*T + j] * v[first token of i's sequence + j, head h]
  softmax    x      context=T causal=1
             each row in groups of T features, softmax within a group; with causal, the
             features after the row's position in its sequence (row % T) are masked (0)
Tokens are samples, `context` consecutive ones a sequence; heads are blocks of the features
(docs/language.md §12). Computes in float32.
"""

import numpy as np

F32 = np.float32
LAYERS = ("matmul_qk", "matmul_pv", "softmax")


def heads_of(t, heads, context):
    """[B, D] -> [sequences, heads, context, D / heads]."""
    b, d = t.shape
    return t.reshape(b // context, context, heads, d // heads).transpose(0, 2, 1, 3)


def matmul_qk(q, k, heads, context, scale):
    s = heads_of(q, heads, context) @ heads_of(k, heads, context).transpose(0, 1, 3, 2)
    # [sequences, heads, query, key] -> [tokens, heads * keys]
    return (s * F32(scale)).transpose(0, 2, 1, 3).reshape(q.shape[0], heads * context)


def matmul_pv(p, v, heads, context):
    b = p.shape[0]
    probs = p.reshape(b // context, context, heads, context).transpose(0, 2, 1, 3)
    y = probs @ heads_of(v, heads, context)
    return y.transpose(0, 2, 1, 3).reshape(v.shape)


def softmax(x, context, causal):
    b, n = x.shape
    groups = x.reshape(b, n // context, context)
    if causal:
        position = np.arange(b) % context
        kept = np.arange(context)[None, :] <= position[:, None]
        groups = np.where(kept[:, None, :], groups, F32(-np.inf))
    e = np.exp(groups - groups.max(axis=-1, keepdims=True))
    return (e / e.sum(axis=-1, keepdims=True)).reshape(b, n)


def run(layer, arg, opts):
    """The result of `layer` on the inputs `arg(name)` gives, with the options `opts`."""
    context = int(opts["context"])
    if layer == "softmax":
        return softmax(arg("x"), context, opts.get("causal", "1") == "1")
    heads = int(opts["heads"])
    if layer == "matmul_qk":
        return matmul_qk(arg("q"), arg("k"), heads, context, float(opts.get("scale", "1")))
    return matmul_pv(arg("p"), arg("v"), heads, context)
