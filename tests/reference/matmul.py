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
  softmax_backward       y, dy   context=T   y * (dy - sum over the group of dy * y)
                         (through layers.py, which also runs it without context)
  matmul_qk_backward_q   k, ds   heads=H context=T scale=1   dQ = scale dS K
  matmul_qk_backward_k   q, ds   heads=H context=T scale=1   dK = scale dS^T Q
  matmul_pv_backward_p   v, dy   heads=H context=T           dP = dY V^T
  matmul_pv_backward_v   p, dy   heads=H context=T           dV = P^T dY
  (per head and sequence; the gradients in float64)
Tokens are samples, `context` consecutive ones a sequence; heads are blocks of the features
(docs/language.md §12). Computes in float32.
"""

import numpy as np

F32 = np.float32
LAYERS = ("matmul_qk", "matmul_pv", "softmax", "matmul_qk_backward_q",
          "matmul_qk_backward_k", "matmul_pv_backward_p", "matmul_pv_backward_v")


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


def blocks(a, heads, context):
    """A score row [B, heads * context] as [sequences, heads, query, key]."""
    b = a.shape[0]
    return a.reshape(b // context, context, heads, context).transpose(0, 2, 1, 3)


def rows_of(a):
    """[sequences, heads, context, X] back to [tokens, heads * X]."""
    s, h, c, x = a.shape
    return a.transpose(0, 2, 1, 3).reshape(s * c, h * x)


def softmax_backward(y, dy, context):
    b, n = y.shape
    y, dy = y.reshape(b, n // context, context), dy.reshape(b, n // context, context)
    return (y * (dy - (dy * y).sum(axis=-1, keepdims=True))).reshape(b, n)


def gradient(layer, arg, heads, context, scale):
    """The matmuls' input gradients, in float64, written with einsum on whole sequences."""
    f = {n: arg(n).astype(np.float64) for n in ("k", "q", "v", "p", "ds", "dy") if n in NAMES[layer]}
    if layer == "matmul_qk_backward_q":
        return scale * rows_of(np.einsum("shij,shjd->shid", blocks(f["ds"], heads, context),
                                         heads_of(f["k"], heads, context)))
    if layer == "matmul_qk_backward_k":
        return scale * rows_of(np.einsum("shij,shid->shjd", blocks(f["ds"], heads, context),
                                         heads_of(f["q"], heads, context)))
    if layer == "matmul_pv_backward_p":
        return rows_of(np.einsum("shid,shjd->shij", heads_of(f["dy"], heads, context),
                                 heads_of(f["v"], heads, context)))
    return rows_of(np.einsum("shij,shid->shjd", blocks(f["p"], heads, context),
                             heads_of(f["dy"], heads, context)))


NAMES = {"matmul_qk_backward_q": ("k", "ds"), "matmul_qk_backward_k": ("q", "ds"),
         "matmul_pv_backward_p": ("v", "dy"), "matmul_pv_backward_v": ("p", "dy")}


def run(layer, arg, opts):
    """The result of `layer` on the inputs `arg(name)` gives, with the options `opts`."""
    context = int(opts["context"])
    if layer == "softmax":
        return softmax(arg("x"), context, opts.get("causal", "1") == "1")
    heads = int(opts["heads"])
    if layer in NAMES:
        return gradient(layer, arg, heads, context, float(opts.get("scale", "1")))
    if layer == "matmul_qk":
        return matmul_qk(arg("q"), arg("k"), heads, context, float(opts.get("scale", "1")))
    return matmul_pv(arg("p"), arg("v"), heads, context)
