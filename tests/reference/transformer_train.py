"""NumPy reference trainer for the transformer layers' backward, written independently of wsel.

Usage: python3 tests/reference/transformer_train.py MODEL DIR --steps N --batch B --lr LR
           [--momentum M | --adam [--beta1 B1 --beta2 B2 --eps E]]

Writes MODEL's data into DIR (its inputs, labels and initial weights as .npy, drawn from a
seeded generator), trains it in float64 with SGD with momentum (v = m v + g; w -= lr v) or
Adam (m = b1 m + (1 - b1) g, v = b2 v + (1 - b2) g^2, w -= lr m_hat / (sqrt(v_hat) + eps),
m_hat = m / (1 - b1^t), v_hat = v / (1 - b2^t), as tests/reference/train.py) on the batches
in file order (step k takes samples (k mod per_epoch) * B .. + B), and writes
DIR/reference/losses.npy (the loss before each step's update) and DIR/reference/<param>.npy
(the trained weights). The models (the same forward as tests/reference/layers.py):

  mlp  x: [12, 5] -> dense(w1, c1) -> gelu -> layernorm(g, b, eps=0.1) -> dense(w2, c2),
       the mean squared error against y: [12, 3] over every element.
  wide_mlp  the mlp with 257 hidden features (more than one PE of `dev` holds: trained over
       several rows) and 23 samples.
  wide_embedding  ids: [23, 1] (vocabulary 7, context 4) -> embedding(wte, wpe) of 521
       features -> dense(w, c) -> softmax, the mean cross-entropy against labels: [23]
       (class indices below 5).
  emb_mlp  wide_embedding with 11 features, 24 samples and context 3: for pipelined training
       (whole sequences in a batch of 6).
  att_chain  ids: [24, 1] (vocabulary 7, context 4) -> embedding(wte, wpe) of 8 features ->
       dense(wqkv, bqkv) of 24 -> attention_qkv (2 causal heads; per head q, k, v packed
       consecutively) -> dense(wo, bo) -> softmax, the mean cross-entropy against labels:
       [24] (class indices below 5): attention in a chain, for pipelined training.
  gelu_mlp  x: [12, 5] -> dense(w1, c1) -> gelu -> dense(w2, c2) -> softmax, the mean
       cross-entropy against labels: [12] (class indices below 3): a chain, for pipelined
       training.
  grouped_mlp  x: [24, 5] -> dense(w1, c1) of 12 features -> softmax over 3 groups of 4,
       causally masked by the sample's position s % 4 (std.nn's `softmax(x, context = 4)`)
       -> dense(w2, c2) -> softmax, the mean cross-entropy against labels: [24] (class
       indices below 3): the grouped softmax in pipelined training.
  t_mlp  x: [24, 5] -> dense(w1, c1) of 24 features, read as [6, 4] -> transpose -> read
       as 24 -> dense(w2, c2) -> softmax, the mean cross-entropy against labels: [24] (class
       indices below 3): std.nn's transpose between reshapes in training. `t_mlp_no_back`
       trains it with the gradient not transposed back (what a comparison must tell apart).
  th_mlp  t_mlp with the 24 features read as [2, 3, 4] and std.nn's transpose_heads to
       [3, 2, 4].
  ln_mlp  x: [24, 5] -> dense(w1, c1) of 19 features -> layernorm(g, b, eps=0.1) -> relu
       -> dense(w2, c2) -> softmax, the mean cross-entropy against labels: [24] (class
       indices below 3): a chain with a layernorm, for pipelined training.
  ln_gelu_mlp  ln_mlp with gelu in place of relu.
  res_mlp  x: [24, 5] -> h = dense(x, w1, c1) of 7 features -> h + gelu(dense(h, w2, c2))
       -> dense(w3, c3) -> softmax, the mean cross-entropy against labels: [24] (class
       indices below 3): a residual block, for pipelined training. `res_mlp_no_skip` trains
       it with h's gradient through the skip left out (what a comparison must tell apart).
  relu_res_mlp  res_mlp's data with the block after a relu: h = relu(dense(x, w1, c1)) ->
       h + dense(h, w2, c2) -> dense(w3, c3) -> softmax (`relu_res_mlp_no_skip` as above).
  double_mlp  res_mlp's data: h = dense(x, w1, c1) -> h + h -> dense(w3, c3) -> softmax, a
       block with an empty branch (`double_mlp_no_skip` counts h's gradient once).
  diamond_mlp  res_mlp's data: h = dense(x, w1, c1) -> dense(h, w2, c2) + gelu(dense(h, w4,
       c4)) -> dense(w3, c3) -> softmax: two branches from h joined by a sum, no skip
       (`diamond_mlp_one_branch` leaves the gelu branch's gradient of h out).
  nested_res_mlp  res_mlp's data: h = dense(x, w1, c1); g = gelu(dense(h, w2, c2)); i = g +
       relu(dense(g, w4, c4)); o = h + dense(i, w5, c5) -> dense(w3, c3) -> softmax: a block
       inside a block (`nested_res_mlp_no_inner`, `_no_outer` leave one skip's gradient out).
  shared_start_mlp  res_mlp's data: h = dense(x, w1, c1); i = h + gelu(dense(h, w2, c2));
       o = h + dense(i, w5, c5) -> dense(w3, c3) -> softmax: two blocks from h, one inside
       the other (`shared_start_mlp_no_inner`, `_no_outer` leave one skip's gradient out).
  pre_norm_mlp  x: [24, 16] -> r = x + dense(layernorm(x, g1, b1), w1, c1) -> o = r +
       dense(gelu(dense(layernorm(r, g2, b2), w2, c2)), w4, c4) -> dense(w3, c3) -> softmax,
       the mean cross-entropy against labels: [24] (class indices below 4): two pre-norm
       blocks, the first from the model's input (`pre_norm_mlp_no_skip` leaves the second
       skip's gradient out).
  att_input_mlp  x: [32, 16] (4 sequences of 8) -> r = x + dense(attention(dense(a, wq, bq),
       dense(a, wk, bk), dense(a, wv, bv)), wo, bo), a = layernorm(x, g, b), 2 causal heads
       -> dense(w3, c3) -> softmax, the mean cross-entropy against labels: [32] (class
       indices below 4): a pre-norm attention block on the model's input
       (`att_input_mlp_no_skip` leaves x out of the sum).
  input_res_mlp  x: [24, 16] -> s = x + relu(dense(x, w1, c1)) of 16 features -> dense(w2,
       c2) -> softmax, the mean cross-entropy against labels: [24] (class indices below 4): a
       residual block from the model's input, whose skip needs no gradient
       (`input_res_mlp_no_skip` leaves x out of the sum).
  gpt  ids: [32, 1] (4 sequences of 8 tokens, vocabulary 12) -> embedding(wte, wpe) -> one
       pre-LN decoder block (d_model 16, 2 causal heads, an MLP of width 32), with
       examples/transformer's parameter names (block i's end in i):
           a = layernorm(h, ln1_g1, ln1_b1); att = attention(a wq1 + bq1, a wk1 + bk1, a wv1 + bv1)
           r = h + (att wo1 + bo1); m = layernorm(r, ln2_g1, ln2_b1)
           o = r + (gelu(m wfc11 + bfc11) wfc21 + bfc21)
       -> softmax(layernorm(o, lnf_g, lnf_b) whead + bhead), the mean cross-entropy against
       the next token's id (labels: [32], class indices).
  gpt_one_head  gpt with one causal head of 16 features (for a head over several rows of
       the streamed matmuls).
  gpt_packed  gpt with q, k and v made by one dense layer (wqkv1, bqkv1), packed per head
       (head h's q, k, v at h·3dh), into attention_qkv: for pipelined training.
  example  examples/transformer's model (2 blocks, d_model 128, 4 heads, context 64, MLP
       512, vocabulary 60) from its trained weights, on its held-out batch (data/ids.npy)
       against the next characters of the held-out text, with a softmax after its logits.

Every gradient is written out by hand (no autodiff library) and checked against central
finite differences at the initial weights before training (but the example's, whose code is
the gpt's):
  dense  y = x W + b:  dW = x^T dy, db = sum(dy), dx = dy W^T
  gelu   y = 0.5 x (1 + t), t = tanh(c (x + 0.044715 x^3)), c = sqrt(2/pi):
         dx = dy (0.5 (1 + t) + 0.5 x (1 - t^2) c (1 + 3 * 0.044715 x^2))
  layernorm  xh = (x - mean) rstd, rstd = 1 / sqrt(var + eps), y = xh g + b:
         dxh = dy g; dx = rstd (dxh - mean(dxh) - xh mean(dxh xh)); dg = sum(dy xh);
         db = sum(dy)
  embedding  y[s] = wte[ids[s]] + wpe[s mod T]: dwte[v] = sum of dy[s] with ids[s] = v,
         dwpe[t] = sum of dy[s] with s mod T = t
  attention  per sequence and head, S = Q K^T / sqrt(dh) (masked above the diagonal),
         P = softmax(S), Y = P V: dV = P^T dY, dP = dY V^T, dS = P (dP - rowsum(P dP)),
         dQ = dS K / sqrt(dh), dK = dS^T Q / sqrt(dh)
  grouped softmax  per group of T features as a softmax over the unmasked ones (the masked
         are 0): dx = y (dy - sum over the group of dy y)
  relu  y = max(x, 0):  dx = dy where y > 0, else 0
  softmax + cross-entropy  d(mean CE)/d(logits) = (p - onehot) / B
"""

import argparse
from pathlib import Path

import numpy as np

C_GELU = np.sqrt(2.0 / np.pi)
EPS = 1e-5
SEQUENCES = 4


def dense(x, w, b):
    return x @ w + b


def dense_back(x, w, dy):
    return dy @ w.T, x.T @ dy, dy.sum(axis=0)


def gelu(x):
    return 0.5 * x * (1.0 + np.tanh(C_GELU * (x + 0.044715 * x ** 3)))


def gelu_back(x, dy):
    t = np.tanh(C_GELU * (x + 0.044715 * x ** 3))
    return dy * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * C_GELU * (1.0 + 3 * 0.044715 * x * x))


def relu(x):
    return np.maximum(x, 0.0)


def relu_back(y, dy):
    return np.where(y > 0.0, dy, 0.0)


def layernorm(x, g, b, eps=EPS):
    xh = (x - x.mean(axis=1, keepdims=True)) / np.sqrt(x.var(axis=1, keepdims=True) + eps)
    return xh * g + b


def layernorm_back(x, g, dy, eps=EPS):
    """dx, dg, db."""
    rstd = 1.0 / np.sqrt(x.var(axis=1, keepdims=True) + eps)
    xh = (x - x.mean(axis=1, keepdims=True)) * rstd
    dxh = dy * g
    dx = rstd * (dxh - dxh.mean(axis=1, keepdims=True)
                 - xh * (dxh * xh).mean(axis=1, keepdims=True))
    return dx, (dy * xh).sum(axis=0), dy.sum(axis=0)


def heads_of(a, heads, context):
    """[B, N] as [sequences, heads, context, N / heads]."""
    n, d = a.shape[0] // context, a.shape[1]
    return a.reshape(n, context, heads, d // heads).transpose(0, 2, 1, 3)


def tokens_of(a):
    return a.transpose(0, 2, 1, 3).reshape(-1, a.shape[1] * a.shape[3])


def attention_probs(q, k, heads, context, causal):
    qh, kh = heads_of(q, heads, context), heads_of(k, heads, context)
    s = qh @ kh.transpose(0, 1, 3, 2) / np.sqrt(q.shape[1] // heads)
    if causal:
        s = np.where(np.tril(np.ones((context, context), dtype=bool)), s, -np.inf)
    p = np.exp(s - s.max(axis=-1, keepdims=True))
    return p / p.sum(axis=-1, keepdims=True)


def attention(q, k, v, heads, context, causal=True):
    return tokens_of(attention_probs(q, k, heads, context, causal) @ heads_of(v, heads, context))


def attention_back(q, k, v, dy, heads, context, causal=True):
    """dq, dk, dv."""
    p = attention_probs(q, k, heads, context, causal)
    qh, kh, vh, dyh = (heads_of(a, heads, context) for a in (q, k, v, dy))
    dv = p.transpose(0, 1, 3, 2) @ dyh
    dp = dyh @ vh.transpose(0, 1, 3, 2)
    ds = p * (dp - (p * dp).sum(axis=-1, keepdims=True)) / np.sqrt(q.shape[1] // heads)
    return tokens_of(ds @ kh), tokens_of(ds.transpose(0, 1, 3, 2) @ qh), tokens_of(dv)


def unpack_heads(x, heads):
    """q, k, v of x's features packed per head (head h's q, k, v at h·3dh)."""
    per = x.reshape(len(x), heads, 3, -1)
    return (per[:, :, i, :].reshape(len(x), -1) for i in range(3))


def pack_heads(q, k, v, heads):
    """unpack_heads' inverse."""
    per = np.stack([a.reshape(len(a), heads, -1) for a in (q, k, v)], axis=2)
    return per.reshape(len(q), -1)


def mse(z, y):
    return np.mean((z - y) ** 2), 2.0 * (z - y) / z.size


def softmax_cross_entropy(z, labels):
    p = np.exp(z - z.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    rows = np.arange(len(labels))
    dz = p.copy()
    dz[rows, labels] -= 1.0
    return -np.mean(np.log(p[rows, labels])), dz / len(labels)


class Mlp:
    NAMES = ["w1", "c1", "g", "b", "w2", "c2"]

    def __init__(self, hidden=7, samples=12):
        self.hidden, self.samples = hidden, samples

    def make(self, rng):
        f = self.hidden
        p = {"w1": rng.uniform(-0.8, 0.8, (5, f)), "c1": rng.uniform(-0.5, 0.5, f),
             "g": 1.0 + rng.uniform(-0.3, 0.3, f), "b": rng.uniform(-0.3, 0.3, f),
             "w2": rng.uniform(-0.8, 0.8, (f, 3)), "c2": rng.uniform(-0.5, 0.5, 3)}
        data = {"x": rng.uniform(-1.0, 1.0, (self.samples, 5)),
                "y": rng.uniform(-1.0, 1.0, (self.samples, 3))}
        return p, data

    def loss_and_grads(self, p, d):
        x, y = d["x"], d["y"]
        h = dense(x, p["w1"], p["c1"])
        a = gelu(h)
        n = layernorm(a, p["g"], p["b"], eps=0.1)
        loss, dz = mse(dense(n, p["w2"], p["c2"]), y)
        g = {}
        dn, g["w2"], g["c2"] = dense_back(n, p["w2"], dz)
        da, g["g"], g["b"] = layernorm_back(a, p["g"], dn, eps=0.1)
        _, g["w1"], g["c1"] = dense_back(x, p["w1"], gelu_back(h, da))
        return loss, g


class GeluMlp:
    NAMES = ["w1", "c1", "w2", "c2"]

    def make(self, rng):
        p = {"w1": rng.uniform(-0.8, 0.8, (5, 7)), "c1": rng.uniform(-0.5, 0.5, 7),
             "w2": rng.uniform(-0.8, 0.8, (7, 3)), "c2": rng.uniform(-0.5, 0.5, 3)}
        return p, {"x": rng.uniform(-1.0, 1.0, (12, 5)), "labels": rng.integers(0, 3, 12)}

    def loss_and_grads(self, p, d):
        h = dense(d["x"], p["w1"], p["c1"])
        a = gelu(h)
        loss, dz = softmax_cross_entropy(dense(a, p["w2"], p["c2"]), d["labels"])
        g = {}
        da, g["w2"], g["c2"] = dense_back(a, p["w2"], dz)
        _, g["w1"], g["c1"] = dense_back(d["x"], p["w1"], gelu_back(h, da))
        return loss, g


class LnMlp:
    """x -> dense(w1, c1) -> layernorm(g, b, eps=0.1) -> relu (or gelu) -> dense(w2, c2)
    -> softmax."""

    NAMES = ["w1", "c1", "g", "b", "w2", "c2"]
    HIDDEN, SAMPLES = 19, 24

    def __init__(self, gelu=False):
        self.gelu = gelu

    def make(self, rng):
        f = self.HIDDEN
        p = {"w1": rng.uniform(-0.8, 0.8, (5, f)), "c1": rng.uniform(-0.5, 0.5, f),
             "g": 1.0 + rng.uniform(-0.3, 0.3, f), "b": rng.uniform(-0.3, 0.3, f),
             "w2": rng.uniform(-0.8, 0.8, (f, 3)), "c2": rng.uniform(-0.5, 0.5, 3)}
        return p, {"x": rng.uniform(-1.0, 1.0, (self.SAMPLES, 5)),
                   "labels": rng.integers(0, 3, self.SAMPLES)}

    def loss_and_grads(self, p, d):
        h = dense(d["x"], p["w1"], p["c1"])
        n = layernorm(h, p["g"], p["b"], eps=0.1)
        a = gelu(n) if self.gelu else relu(n)
        loss, dz = softmax_cross_entropy(dense(a, p["w2"], p["c2"]), d["labels"])
        g = {}
        da, g["w2"], g["c2"] = dense_back(a, p["w2"], dz)
        dn = gelu_back(n, da) if self.gelu else relu_back(a, da)
        dh, g["g"], g["b"] = layernorm_back(h, p["g"], dn, eps=0.1)
        _, g["w1"], g["c1"] = dense_back(d["x"], p["w1"], dh)
        return loss, g


def grouped_softmax(x, context, causal=True):
    """std.nn's `softmax(x, context = T)`: each group of T features normalised on its own,
    masked after sample s's position s % T when causal (the masked ones are 0)."""
    groups = x.reshape(len(x), -1, context)
    if causal:
        position = np.arange(len(x)) % context
        keep = np.arange(context)[None, None, :] <= position[:, None, None]
        groups = np.where(keep, groups, -np.inf)
    p = np.exp(groups - groups.max(axis=2, keepdims=True))
    return (p / p.sum(axis=2, keepdims=True)).reshape(x.shape)


def grouped_softmax_back(y, dy, context):
    yg, dg = y.reshape(len(y), -1, context), dy.reshape(len(dy), -1, context)
    return (yg * (dg - (dg * yg).sum(axis=2, keepdims=True))).reshape(y.shape)


class GroupedMlp:
    """x -> dense(w1, c1) to 12 features -> softmax over 3 groups of 4, causal by the sample's
    position s % 4 -> dense(w2, c2) -> softmax with the cross-entropy."""

    NAMES = ["w1", "c1", "w2", "c2"]
    CONTEXT = 4

    def make(self, rng):
        p = {"w1": rng.uniform(-0.8, 0.8, (5, 12)), "c1": rng.uniform(-0.5, 0.5, 12),
             "w2": rng.uniform(-0.8, 0.8, (12, 3)), "c2": rng.uniform(-0.5, 0.5, 3)}
        return p, {"x": rng.uniform(-1.0, 1.0, (24, 5)), "labels": rng.integers(0, 3, 24)}

    def loss_and_grads(self, p, d):
        h = dense(d["x"], p["w1"], p["c1"])
        a = grouped_softmax(h, self.CONTEXT)
        loss, dz = softmax_cross_entropy(dense(a, p["w2"], p["c2"]), d["labels"])
        g = {}
        da, g["w2"], g["c2"] = dense_back(a, p["w2"], dz)
        dh = grouped_softmax_back(a, da, self.CONTEXT)
        _, g["w1"], g["c1"] = dense_back(d["x"], p["w1"], dh)
        return loss, g


class TransposeMlp:
    """x -> dense(w1, c1) to 24 features, read as [6, 4] -> transpose to [4, 6], read as 24
    -> dense(w2, c2) -> softmax with the cross-entropy (std.nn's `transpose` between two
    `reshape`s; with `heads`, read as [2, 3, 4] and `transpose_heads` to [3, 2, 4]). `back=False` passes the gradient back through the transpose untransposed:
    a wrong trainer to tell apart."""

    NAMES = ["w1", "c1", "w2", "c2"]

    def __init__(self, back=True, heads=False):
        self.back = back
        # transpose_heads: [2, 3, 4] -> [3, 2, 4]; transpose: [6, 4] -> [4, 6].
        self.axes, self.shape = ((0, 2, 1, 3), (2, 3, 4)) if heads else ((0, 2, 1), (6, 4))

    def make(self, rng):
        p = {"w1": rng.uniform(-0.8, 0.8, (5, 24)), "c1": rng.uniform(-0.5, 0.5, 24),
             "w2": rng.uniform(-0.8, 0.8, (24, 3)), "c2": rng.uniform(-0.5, 0.5, 3)}
        return p, {"x": rng.uniform(-1.0, 1.0, (24, 5)), "labels": rng.integers(0, 3, 24)}

    def loss_and_grads(self, p, d):
        h = dense(d["x"], p["w1"], p["c1"])
        t = np.transpose(h.reshape(-1, *self.shape), self.axes)
        shape_t = t.shape[1:]
        t = t.reshape(-1, 24)
        loss, dz = softmax_cross_entropy(dense(t, p["w2"], p["c2"]), d["labels"])
        g = {}
        dt, g["w2"], g["c2"] = dense_back(t, p["w2"], dz)
        dh = np.transpose(dt.reshape(-1, *shape_t), self.axes).reshape(-1, 24) if self.back else dt
        _, g["w1"], g["c1"] = dense_back(d["x"], p["w1"], dh)
        return loss, g


class ResMlp:
    """h = x W1 + c1; s = h + gelu(h W2 + c2); softmax(s W3 + c3): h feeds the second dense
    layer and the sum, so its gradient is the sum of two (or, `skip=False`, only the one
    through the dense layer: a wrong trainer to tell apart). With `relu`, the block after a
    relu: h = relu(x W1 + c1); s = h + (h W2 + c2)."""

    NAMES = ["w1", "c1", "w2", "c2", "w3", "c3"]

    def __init__(self, skip=True, relu=False):
        self.skip = skip
        self.relu = relu

    def make(self, rng):
        p = {"w1": rng.uniform(-0.8, 0.8, (5, 7)), "c1": rng.uniform(-0.5, 0.5, 7),
             "w2": rng.uniform(-0.6, 0.6, (7, 7)), "c2": rng.uniform(-0.5, 0.5, 7),
             "w3": rng.uniform(-0.8, 0.8, (7, 3)), "c3": rng.uniform(-0.5, 0.5, 3)}
        return p, {"x": rng.uniform(-1.0, 1.0, (24, 5)), "labels": rng.integers(0, 3, 24)}

    def loss_and_grads(self, p, d):
        h = dense(d["x"], p["w1"], p["c1"])
        if self.relu:
            h = relu(h)
        f = dense(h, p["w2"], p["c2"])
        s = h + (f if self.relu else gelu(f))
        loss, dz = softmax_cross_entropy(dense(s, p["w3"], p["c3"]), d["labels"])
        g = {}
        ds, g["w3"], g["c3"] = dense_back(s, p["w3"], dz)
        df = ds if self.relu else gelu_back(f, ds)
        dh, g["w2"], g["c2"] = dense_back(h, p["w2"], df)
        if self.skip:
            dh = dh + ds
        if self.relu:
            dh = relu_back(h, dh)
        _, g["w1"], g["c1"] = dense_back(d["x"], p["w1"], dh)
        return loss, g


class DoubleMlp:
    """h = x W1 + c1; s = h + h; softmax(s W3 + c3): the sum reads h twice, so h's gradient
    is twice ds (or, `skip=False`, ds once: a wrong trainer to tell apart)."""

    NAMES = ["w1", "c1", "w3", "c3"]

    def __init__(self, skip=True):
        self.skip = skip

    def make(self, rng):
        p = {"w1": rng.uniform(-0.8, 0.8, (5, 7)), "c1": rng.uniform(-0.5, 0.5, 7),
             "w3": rng.uniform(-0.8, 0.8, (7, 3)), "c3": rng.uniform(-0.5, 0.5, 3)}
        return p, {"x": rng.uniform(-1.0, 1.0, (24, 5)), "labels": rng.integers(0, 3, 24)}

    def loss_and_grads(self, p, d):
        h = dense(d["x"], p["w1"], p["c1"])
        s = h + h
        loss, dz = softmax_cross_entropy(dense(s, p["w3"], p["c3"]), d["labels"])
        g = {}
        ds, g["w3"], g["c3"] = dense_back(s, p["w3"], dz)
        dh = ds + ds if self.skip else ds
        _, g["w1"], g["c1"] = dense_back(d["x"], p["w1"], dh)
        return loss, g


class DiamondMlp:
    """h = x W1 + c1; s = (h W2 + c2) + gelu(h W4 + c4); softmax(s W3 + c3): h feeds two
    branches that a sum joins, so its gradient is the sum of the branches' (or, `both=False`,
    the first branch's alone: a wrong trainer to tell apart)."""

    NAMES = ["w1", "c1", "w2", "c2", "w4", "c4", "w3", "c3"]

    def __init__(self, both=True):
        self.both = both

    def make(self, rng):
        p, d = ResMlp().make(rng)
        p["w4"] = rng.uniform(-0.6, 0.6, (7, 7))
        p["c4"] = rng.uniform(-0.5, 0.5, 7)
        return p, d

    def loss_and_grads(self, p, d):
        h = dense(d["x"], p["w1"], p["c1"])
        a = dense(h, p["w2"], p["c2"])
        f = dense(h, p["w4"], p["c4"])
        s = a + gelu(f)
        loss, dz = softmax_cross_entropy(dense(s, p["w3"], p["c3"]), d["labels"])
        g = {}
        ds, g["w3"], g["c3"] = dense_back(s, p["w3"], dz)
        dh, g["w2"], g["c2"] = dense_back(h, p["w2"], ds)
        dh4, g["w4"], g["c4"] = dense_back(h, p["w4"], gelu_back(f, ds))
        if self.both:
            dh = dh + dh4
        _, g["w1"], g["c1"] = dense_back(d["x"], p["w1"], dh)
        return loss, g


class TwoDense:
    """softmax(gelu((x W1 + c1) W2 + c2) W3 + c3): the model of a layer of the test's own,
    `double_dense(x, w1, c1, w2, c2)`, that trains pipelined as its `train as` clause
    `dense(dense(x, w1, c1), w2, c2)`."""

    NAMES = ResMlp.NAMES

    def make(self, rng):
        return ResMlp().make(rng)

    def loss_and_grads(self, p, d):
        h = dense(d["x"], p["w1"], p["c1"])
        f = dense(h, p["w2"], p["c2"])
        loss, dz = softmax_cross_entropy(dense(gelu(f), p["w3"], p["c3"]), d["labels"])
        g = {}
        dg, g["w3"], g["c3"] = dense_back(gelu(f), p["w3"], dz)
        dh, g["w2"], g["c2"] = dense_back(h, p["w2"], gelu_back(f, dg))
        _, g["w1"], g["c1"] = dense_back(d["x"], p["w1"], dh)
        return loss, g


class InputResMlp:
    """s = x + relu(x W1 + c1); softmax(s W2 + c2): a residual block that starts at the
    model's input x ([24, 16], 16 -> 16 inside the block, 4 classes). x needs no gradient, so
    the skip's is dropped and the block's dy flows into the branch alone; the forward's skip
    adds x itself (`skip=False` leaves it out of the forward: a wrong trainer to tell
    apart)."""

    NAMES = ["w1", "c1", "w2", "c2"]

    def __init__(self, skip=True):
        self.skip = skip

    def make(self, rng):
        p = {"w1": rng.uniform(-0.4, 0.4, (16, 16)), "c1": rng.uniform(-0.3, 0.3, 16),
             "w2": rng.uniform(-0.6, 0.6, (16, 4)), "c2": rng.uniform(-0.5, 0.5, 4)}
        return p, {"x": rng.uniform(-1.0, 1.0, (24, 16)), "labels": rng.integers(0, 4, 24)}

    def loss_and_grads(self, p, d):
        r = relu(dense(d["x"], p["w1"], p["c1"]))
        s = d["x"] + r if self.skip else r
        loss, dz = softmax_cross_entropy(dense(s, p["w2"], p["c2"]), d["labels"])
        g = {}
        ds, g["w2"], g["c2"] = dense_back(s, p["w2"], dz)
        _, g["w1"], g["c1"] = dense_back(d["x"], p["w1"], relu_back(r, ds))
        return loss, g


class NestedResMlp:
    """h = x W1 + c1; g = gelu(h W2 + c2); i = g + relu(g W4 + c4); o = h + (i W5 + c5);
    softmax(o W3 + c3): a residual block (from g) inside another (from h). g's gradient is
    the inner branch's plus the inner skip's, h's the outer branch's (through the inner block)
    plus the outer skip's (`skips` names the skips whose gradient is kept: leaving one out
    is a wrong trainer to tell apart)."""

    NAMES = ["w1", "c1", "w2", "c2", "w4", "c4", "w5", "c5", "w3", "c3"]

    def __init__(self, skips=("inner", "outer")):
        self.skips = skips

    def make(self, rng):
        p, d = ResMlp().make(rng)
        for n in ("4", "5"):
            p["w" + n] = rng.uniform(-0.6, 0.6, (7, 7))
            p["c" + n] = rng.uniform(-0.5, 0.5, 7)
        return p, d

    def loss_and_grads(self, p, d):
        h = dense(d["x"], p["w1"], p["c1"])
        f = dense(h, p["w2"], p["c2"])
        g = gelu(f)
        r = relu(dense(g, p["w4"], p["c4"]))
        i = g + r
        o = h + dense(i, p["w5"], p["c5"])
        loss, dz = softmax_cross_entropy(dense(o, p["w3"], p["c3"]), d["labels"])
        gr = {}
        do, gr["w3"], gr["c3"] = dense_back(o, p["w3"], dz)
        di, gr["w5"], gr["c5"] = dense_back(i, p["w5"], do)
        dg, gr["w4"], gr["c4"] = dense_back(g, p["w4"], relu_back(r, di))
        if "inner" in self.skips:
            dg = dg + di
        dh, gr["w2"], gr["c2"] = dense_back(h, p["w2"], gelu_back(f, dg))
        if "outer" in self.skips:
            dh = dh + do
        _, gr["w1"], gr["c1"] = dense_back(d["x"], p["w1"], dh)
        return loss, gr


class SharedStartMlp:
    """h = x W1 + c1; i = h + gelu(h W2 + c2); o = h + (i W5 + c5); softmax(o W3 + c3): two
    residual blocks from h, one inside the other, so h's gradient is the inner branch's plus
    both skips' (`skips` names the skips whose gradient is kept: leaving one out is a wrong
    trainer to tell apart)."""

    NAMES = ["w1", "c1", "w2", "c2", "w5", "c5", "w3", "c3"]

    def __init__(self, skips=("inner", "outer")):
        self.skips = skips

    def make(self, rng):
        p, d = ResMlp().make(rng)
        p["w5"] = rng.uniform(-0.6, 0.6, (7, 7))
        p["c5"] = rng.uniform(-0.5, 0.5, 7)
        return p, d

    def loss_and_grads(self, p, d):
        h = dense(d["x"], p["w1"], p["c1"])
        f = dense(h, p["w2"], p["c2"])
        i = h + gelu(f)
        o = h + dense(i, p["w5"], p["c5"])
        loss, dz = softmax_cross_entropy(dense(o, p["w3"], p["c3"]), d["labels"])
        g = {}
        do, g["w3"], g["c3"] = dense_back(o, p["w3"], dz)
        di, g["w5"], g["c5"] = dense_back(i, p["w5"], do)
        dh, g["w2"], g["c2"] = dense_back(h, p["w2"], gelu_back(f, di))
        if "inner" in self.skips:
            dh = dh + di
        if "outer" in self.skips:
            dh = dh + do
        _, g["w1"], g["c1"] = dense_back(d["x"], p["w1"], dh)
        return loss, g


class PreNormMlp:
    """r = x + (layernorm(x, g1, b1) W1 + c1); o = r + (gelu(layernorm(r, g2, b2) W2 + c2) W4
    + c4); softmax(o W3 + c3): two pre-norm blocks as a transformer's are written, the first
    from the model's input x ([24, 16], 4 classes), whose gradient is dropped; r's gradient
    is the second branch's plus the skip's (`skip=False` leaves the skip's out: a wrong
    trainer to tell apart)."""

    NAMES = ["g1", "b1", "w1", "c1", "g2", "b2", "w2", "c2", "w4", "c4", "w3", "c3"]

    def __init__(self, skip=True):
        self.skip = skip

    def make(self, rng):
        p = {}
        for n in ("1", "2"):
            p["g" + n] = 1.0 + rng.uniform(-0.3, 0.3, 16)
            p["b" + n] = rng.uniform(-0.3, 0.3, 16)
        for n in ("1", "2", "4"):
            p["w" + n] = rng.uniform(-0.3, 0.3, (16, 16))
            p["c" + n] = rng.uniform(-0.3, 0.3, 16)
        p["w3"] = rng.uniform(-0.6, 0.6, (16, 4))
        p["c3"] = rng.uniform(-0.5, 0.5, 4)
        return p, {"x": rng.uniform(-1.0, 1.0, (24, 16)), "labels": rng.integers(0, 4, 24)}

    def loss_and_grads(self, p, d):
        x = d["x"]
        r = x + dense(layernorm(x, p["g1"], p["b1"]), p["w1"], p["c1"])
        m = layernorm(r, p["g2"], p["b2"])
        f = dense(m, p["w2"], p["c2"])
        o = r + dense(gelu(f), p["w4"], p["c4"])
        loss, dz = softmax_cross_entropy(dense(o, p["w3"], p["c3"]), d["labels"])
        g = {}
        do, g["w3"], g["c3"] = dense_back(o, p["w3"], dz)
        da, g["w4"], g["c4"] = dense_back(gelu(f), p["w4"], do)
        dm, g["w2"], g["c2"] = dense_back(m, p["w2"], gelu_back(f, da))
        dr, g["g2"], g["b2"] = layernorm_back(r, p["g2"], dm)
        if self.skip:
            dr = dr + do
        dn, g["w1"], g["c1"] = dense_back(layernorm(x, p["g1"], p["b1"]), p["w1"], dr)
        _, g["g1"], g["b1"] = layernorm_back(x, p["g1"], dn)
        return loss, g


class AttInputMlp:
    """a = layernorm(x, g, b); r = x + (attention(a Wq + bq, a Wk + bk, a Wv + bv) Wo + bo);
    softmax(r W3 + c3): a pre-norm attention block straight on the model's input x ([32,
    16], 4 sequences of 8, 2 causal heads), whose gradient is dropped (`skip=False` leaves x
    out of the sum: a wrong trainer to tell apart)."""

    NAMES = ["g", "b", "wq", "bq", "wk", "bk", "wv", "bv", "wo", "bo", "w3", "c3"]
    HEADS, CONTEXT = 2, 8

    def __init__(self, skip=True):
        self.skip = skip

    def make(self, rng):
        p = {"g": 1.0 + rng.uniform(-0.3, 0.3, 16), "b": rng.uniform(-0.3, 0.3, 16)}
        for n in ("q", "k", "v", "o"):
            p["w" + n] = rng.uniform(-0.4, 0.4, (16, 16))
            p["b" + n] = rng.uniform(-0.3, 0.3, 16)
        p["w3"] = rng.uniform(-0.6, 0.6, (16, 4))
        p["c3"] = rng.uniform(-0.5, 0.5, 4)
        return p, {"x": rng.uniform(-1.0, 1.0, (32, 16)), "labels": rng.integers(0, 4, 32)}

    def loss_and_grads(self, p, d):
        x, hc = d["x"], (self.HEADS, self.CONTEXT)
        a = layernorm(x, p["g"], p["b"])
        q, k, v = (dense(a, p["w" + n], p["b" + n]) for n in ("q", "k", "v"))
        y = attention(q, k, v, *hc)
        r = dense(y, p["wo"], p["bo"]) + (x if self.skip else 0.0)
        loss, dz = softmax_cross_entropy(dense(r, p["w3"], p["c3"]), d["labels"])
        g = {}
        dr, g["w3"], g["c3"] = dense_back(r, p["w3"], dz)
        dy, g["wo"], g["bo"] = dense_back(y, p["wo"], dr)
        da = 0.0
        for n, dn in zip(("q", "k", "v"), attention_back(q, k, v, dy, *hc)):
            dan, g["w" + n], g["b" + n] = dense_back(a, p["w" + n], dn)
            da = da + dan
        _, g["g"], g["b"] = layernorm_back(x, p["g"], da)
        return loss, g


class WideEmbedding:
    """ids -> embedding(wte, wpe) -> dense(w, c) -> softmax, the mean cross-entropy."""

    NAMES = ["wte", "wpe", "w", "c"]
    VOCAB, CLASSES = 7, 5

    def __init__(self, d=521, samples=23, context=4):
        self.D, self.SAMPLES, self.CONTEXT = d, samples, context

    def make(self, rng):
        p = self.params(rng)
        ids = rng.integers(0, self.VOCAB, self.SAMPLES)
        return p, {"ids": ids.astype(np.float64).reshape(-1, 1),
                   "labels": rng.integers(0, self.CLASSES, self.SAMPLES)}

    def params(self, rng):
        return {"wte": rng.normal(0.0, 0.5, (self.VOCAB, self.D)),
                "wpe": rng.normal(0.0, 0.5, (self.CONTEXT, self.D)),
                "w": rng.normal(0.0, 0.1, (self.D, self.CLASSES)),
                "c": rng.uniform(-0.5, 0.5, self.CLASSES)}

    def head(self, h, p, labels):
        """The loss of the layers after the embedding, their gradients and h's."""
        loss, dz = softmax_cross_entropy(dense(h, p["w"], p["c"]), labels)
        g = {}
        dh, g["w"], g["c"] = dense_back(h, p["w"], dz)
        return loss, g, dh

    def loss_and_grads(self, p, d):
        ids = d["ids"][:, 0].astype(np.int64)
        pos = np.arange(len(ids)) % self.CONTEXT
        loss, g, dh = self.head(p["wte"][ids] + p["wpe"][pos], p, d["labels"])
        g["wte"] = np.zeros_like(p["wte"])
        np.add.at(g["wte"], ids, dh)
        g["wpe"] = np.zeros_like(p["wpe"])
        np.add.at(g["wpe"], pos, dh)
        return loss, g


class AttChain(WideEmbedding):
    """ids -> embedding(wte, wpe) -> dense(wqkv, bqkv) -> attention_qkv (q, k, v packed per
    head) -> dense(wo, bo) -> softmax, the mean cross-entropy."""

    NAMES = ["wte", "wpe", "wqkv", "bqkv", "wo", "bo"]
    HEADS = 2

    def __init__(self):
        super().__init__(d=8, samples=24, context=4)

    def params(self, rng):
        d = self.D
        return {"wte": rng.normal(0.0, 0.5, (self.VOCAB, d)),
                "wpe": rng.normal(0.0, 0.5, (self.CONTEXT, d)),
                "wqkv": rng.normal(0.0, 0.4, (d, 3 * d)),
                "bqkv": rng.normal(0.0, 0.4, 3 * d),
                "wo": rng.normal(0.0, 0.4, (d, self.CLASSES)),
                "bo": rng.uniform(-0.5, 0.5, self.CLASSES)}

    def head(self, h, p, labels):
        q, k, v = unpack_heads(dense(h, p["wqkv"], p["bqkv"]), self.HEADS)
        att = attention(q, k, v, self.HEADS, self.CONTEXT)
        loss, dz = softmax_cross_entropy(dense(att, p["wo"], p["bo"]), labels)
        g = {}
        datt, g["wo"], g["bo"] = dense_back(att, p["wo"], dz)
        dx = pack_heads(*attention_back(q, k, v, datt, self.HEADS, self.CONTEXT), self.HEADS)
        dh, g["wqkv"], g["bqkv"] = dense_back(h, p["wqkv"], dx)
        return loss, g, dh


class Gpt:
    """A GPT of examples/transformer's shape and parameter names (`ln1_g1`, `wq1`, ...,
    `lnf_g`, `whead`), ending in a softmax; the tiny one by default."""

    def __init__(self, vocab=12, d=16, heads=2, context=8, hidden=32, blocks=1, packed=False):
        self.vocab, self.d, self.heads, self.context = vocab, d, heads, context
        self.hidden, self.blocks, self.packed = hidden, blocks, packed
        projections = ["wqkv", "bqkv"] if packed else ["wq", "bq", "wk", "bk", "wv", "bv"]
        per_block = (["ln1_g", "ln1_b"] + projections
                     + ["wo", "bo", "ln2_g", "ln2_b", "wfc1", "bfc1", "wfc2", "bfc2"])
        self.per_block = per_block
        # Every parameter's name and its name without the block's number.
        self.bases = ([("wte", "wte"), ("wpe", "wpe")]
                      + [(f"{n}{i}", n) for i in range(1, blocks + 1) for n in per_block]
                      + [(n, n) for n in ("lnf_g", "lnf_b", "whead", "bhead")])
        self.NAMES = [name for name, _ in self.bases]

    def shape(self, base):
        d, f = self.d, self.hidden
        return {"wte": (self.vocab, d), "wpe": (self.context, d), "wq": (d, d), "wk": (d, d),
                "wv": (d, d), "wqkv": (d, 3 * d), "bqkv": (3 * d,), "wo": (d, d),
                "wfc1": (d, f), "bfc1": (f,), "wfc2": (f, d),
                "whead": (d, self.vocab), "bhead": (self.vocab,)}.get(base, (d,))

    def make(self, rng):
        p = {}
        for name, base in self.bases:
            if base.endswith("_g"):
                p[name] = 1.0 + rng.uniform(-0.2, 0.2, self.d)
            else:
                p[name] = rng.normal(0.0, 0.4, self.shape(base))
        ids = rng.integers(0, self.vocab, SEQUENCES * self.context)
        return p, {"ids": ids.astype(np.float64).reshape(-1, 1), "labels": np.roll(ids, -1)}

    def loss_and_grads(self, p, d):
        ids = d["ids"][:, 0].astype(np.int64)
        pos = np.arange(len(ids)) % self.context
        h = p["wte"][ids] + p["wpe"][pos]
        saved = []
        for i in range(1, self.blocks + 1):
            b = {n: p[f"{n}{i}"] for n in self.per_block}
            a = layernorm(h, b["ln1_g"], b["ln1_b"])
            if self.packed:
                q, k, v = unpack_heads(dense(a, b["wqkv"], b["bqkv"]), self.heads)
            else:
                q, k, v = (dense(a, b["w" + n], b["b" + n]) for n in "qkv")
            att = attention(q, k, v, self.heads, self.context)
            r = h + dense(att, b["wo"], b["bo"])
            m = layernorm(r, b["ln2_g"], b["ln2_b"])
            f1 = dense(m, b["wfc1"], b["bfc1"])
            saved.append((i, b, h, a, q, k, v, att, r, m, f1))
            h = r + dense(gelu(f1), b["wfc2"], b["bfc2"])
        nf = layernorm(h, p["lnf_g"], p["lnf_b"])
        loss, dz = softmax_cross_entropy(dense(nf, p["whead"], p["bhead"]), d["labels"])
        g = {}
        dnf, g["whead"], g["bhead"] = dense_back(nf, p["whead"], dz)
        dh, g["lnf_g"], g["lnf_b"] = layernorm_back(h, p["lnf_g"], dnf)
        for i, b, h, a, q, k, v, att, r, m, f1 in reversed(saved):
            dg1, g[f"wfc2{i}"], g[f"bfc2{i}"] = dense_back(gelu(f1), b["wfc2"], dh)
            dm, g[f"wfc1{i}"], g[f"bfc1{i}"] = dense_back(m, b["wfc1"], gelu_back(f1, dg1))
            dr2, g[f"ln2_g{i}"], g[f"ln2_b{i}"] = layernorm_back(r, b["ln2_g"], dm)
            dr = dh + dr2
            datt, g[f"wo{i}"], g[f"bo{i}"] = dense_back(att, b["wo"], dr)
            dq, dk, dv = attention_back(q, k, v, datt, self.heads, self.context)
            if self.packed:
                dx = pack_heads(dq, dk, dv, self.heads)
                da, g[f"wqkv{i}"], g[f"bqkv{i}"] = dense_back(a, b["wqkv"], dx)
            else:
                da = 0.0
                for n, dn in zip("qkv", (dq, dk, dv)):
                    dan, g[f"w{n}{i}"], g[f"b{n}{i}"] = dense_back(a, b["w" + n], dn)
                    da = da + dan
            dh1, g[f"ln1_g{i}"], g[f"ln1_b{i}"] = layernorm_back(h, b["ln1_g"], da)
            dh = dr + dh1
        g["wte"] = np.zeros_like(p["wte"])
        np.add.at(g["wte"], ids, dh)
        g["wpe"] = np.zeros_like(p["wpe"])
        np.add.at(g["wpe"], pos, dh)
        return loss, g


class Example(Gpt):
    """examples/transformer's model (2 blocks, d_model 128, 4 heads, context 64, MLP 512,
    vocabulary 60) with its trained weights, on its held-out batch (`ids.npy`, 4 sequences of
    64), against the next characters of the held-out text (as train.py's `target`)."""

    DATA = Path(__file__).resolve().parents[2] / "examples" / "transformer" / "data"

    def __init__(self):
        super().__init__(vocab=60, d=128, heads=4, context=64, hidden=512, blocks=2)

    def make(self, rng):
        p = {n: np.load(self.DATA / f"{n}.npy").astype(np.float64) for n in self.NAMES}
        # The held-out text as train.py cuts it: its last 10%, windows of 64 from its start.
        vocab = (self.DATA / "vocab.txt").read_text()
        text = (self.DATA / "declaration.txt").read_text()
        held = np.array([vocab.index(c) for c in text])[int(len(text) * 0.9):]
        windows = [held[i * self.context:(i + 1) * self.context + 1] for i in range(4)]
        ids = np.load(self.DATA / "ids.npy")
        assert (ids[:, 0] == np.concatenate([w[:-1] for w in windows])).all(), "ids.npy"
        labels = np.concatenate([w[1:] for w in windows])
        return p, {"ids": ids.astype(np.float64), "labels": labels}


MODELS = {"mlp": Mlp, "wide_mlp": lambda: Mlp(hidden=257, samples=23),
          "wide_embedding": WideEmbedding,
          "emb_mlp": lambda: WideEmbedding(d=11, samples=24, context=3),
          "att_chain": AttChain,
          "gelu_mlp": GeluMlp, "grouped_mlp": GroupedMlp,
          "t_mlp": TransposeMlp, "t_mlp_no_back": lambda: TransposeMlp(back=False),
          "th_mlp": lambda: TransposeMlp(heads=True), "ln_mlp": LnMlp,
          "ln_gelu_mlp": lambda: LnMlp(gelu=True), "res_mlp": ResMlp,
          "res_mlp_no_skip": lambda: ResMlp(skip=False),
          "relu_res_mlp": lambda: ResMlp(relu=True),
          "relu_res_mlp_no_skip": lambda: ResMlp(skip=False, relu=True),
          "double_mlp": DoubleMlp, "double_mlp_no_skip": lambda: DoubleMlp(skip=False),
          "two_dense": TwoDense, "diamond_mlp": DiamondMlp, "diamond_mlp_one_branch": lambda: DiamondMlp(both=False),
          "nested_res_mlp": NestedResMlp,
          "nested_res_mlp_no_inner": lambda: NestedResMlp(skips=("outer",)),
          "nested_res_mlp_no_outer": lambda: NestedResMlp(skips=("inner",)),
          "shared_start_mlp": SharedStartMlp,
          "shared_start_mlp_no_inner": lambda: SharedStartMlp(skips=("outer",)),
          "shared_start_mlp_no_outer": lambda: SharedStartMlp(skips=("inner",)),
          "pre_norm_mlp": PreNormMlp, "pre_norm_mlp_no_skip": lambda: PreNormMlp(skip=False),
          "att_input_mlp": AttInputMlp, "att_input_mlp_no_skip": lambda: AttInputMlp(skip=False),
          "input_res_mlp": InputResMlp, "input_res_mlp_no_skip": lambda: InputResMlp(skip=False),
          "gpt": Gpt, "gpt_one_head": lambda: Gpt(heads=1),
          "gpt_packed": lambda: Gpt(packed=True), "example": Example}


def rows(d, sl):
    return {n: v[sl] for n, v in d.items()}


def check_gradients(model, p, d, rng):
    """Central differences at a few entries of every parameter."""
    _, grads = model.loss_and_grads(p, d)
    step = 1e-6
    for name in model.NAMES:
        for flat in rng.choice(p[name].size, min(6, p[name].size), replace=False):
            i = np.unravel_index(flat, p[name].shape)
            up = {n: v.copy() for n, v in p.items()}
            down = {n: v.copy() for n, v in p.items()}
            up[name][i] += step
            down[name][i] -= step
            numeric = (model.loss_and_grads(up, d)[0] - model.loss_and_grads(down, d)[0]) / (2 * step)
            assert abs(numeric - grads[name][i]) <= 1e-6 * max(1.0, abs(numeric)), (
                name, i, numeric, grads[name][i])


def train(model, p, d, args):
    p = {n: v.copy() for n, v in p.items()}
    first = {n: np.zeros_like(v) for n, v in p.items()}
    second = {n: np.zeros_like(v) for n, v in p.items()}
    per_epoch = len(next(iter(d.values()))) // args.batch
    losses = []
    for step in range(args.steps):
        k = step % per_epoch
        loss, grads = model.loss_and_grads(p, rows(d, slice(k * args.batch, (k + 1) * args.batch)))
        losses.append(loss)
        t = step + 1
        for n in model.NAMES:
            g = grads[n]
            if args.adam:
                first[n] = args.beta1 * first[n] + (1 - args.beta1) * g
                second[n] = args.beta2 * second[n] + (1 - args.beta2) * g * g
                m_hat = first[n] / (1 - args.beta1 ** t)
                v_hat = second[n] / (1 - args.beta2 ** t)
                p[n] -= args.lr * m_hat / (np.sqrt(v_hat) + args.eps)
            else:
                first[n] = args.momentum * first[n] + g
                p[n] -= args.lr * first[n]
    return np.array(losses), p


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model", choices=sorted(MODELS))
    ap.add_argument("dir", type=Path)
    ap.add_argument("--steps", type=int, required=True)
    ap.add_argument("--batch", type=int, required=True)
    ap.add_argument("--lr", type=float, required=True)
    ap.add_argument("--momentum", type=float, default=0.9)
    ap.add_argument("--adam", action="store_true")
    ap.add_argument("--beta1", type=float, default=0.9)
    ap.add_argument("--beta2", type=float, default=0.999)
    ap.add_argument("--eps", type=float, default=1e-8)
    args = ap.parse_args()

    model = MODELS[args.model]()
    rng = np.random.default_rng(21)
    params, data = model.make(rng)
    # What wsel reads is float32: the reference starts from the same rounded values.
    params = {n: v.astype(np.float32).astype(np.float64) for n, v in params.items()}
    args.dir.mkdir(parents=True, exist_ok=True)
    for n, v in params.items():
        np.save(args.dir / f"{n}.npy", v.astype(np.float32))
    for n, v in data.items():
        np.save(args.dir / f"{n}.npy", v.astype(np.float32) if v.dtype.kind == "f" else v)
    data = {n: (v.astype(np.float32).astype(np.float64) if v.dtype.kind == "f" else v)
            for n, v in data.items()}

    if args.model not in ("example", "res_mlp_no_skip", "relu_res_mlp_no_skip",
                          "double_mlp_no_skip", "t_mlp_no_back", "diamond_mlp_one_branch",
                          "input_res_mlp_no_skip", "nested_res_mlp_no_inner",
                          "nested_res_mlp_no_outer", "pre_norm_mlp_no_skip",
                          "shared_start_mlp_no_inner", "shared_start_mlp_no_outer",
                          "att_input_mlp_no_skip"):
        # The example's model is the tiny gpt's code at another size; its central
        # differences take minutes. The model without the skip's gradient is wrong on purpose.
        check_gradients(model, params, data, rng)
    losses, trained = train(model, params, data, args)
    out = args.dir / "reference"
    out.mkdir(exist_ok=True)
    np.save(out / "losses.npy", losses)
    for n in model.NAMES:
        np.save(out / f"{n}.npy", trained[n])


if __name__ == "__main__":
    main()
