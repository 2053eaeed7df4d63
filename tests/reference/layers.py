"""NumPy references of std.nn's transformer layers, written independently of wsel.

Usage: python3 tests/reference/layers.py LAYER DIR [KEY=VALUE ...]
Reads the layer's inputs from DIR/NAME.npy and writes its result to DIR/ref.npy (float32):
  gelu       x                          GPT-2's tanh approximation
  add        a, b                       a + b
  layernorm  x, g, b   eps=1e-5         (x - mean) / sqrt(var + eps) * g + b
  embedding  ids, table, pos            table[ids[:, 0]] + pos[s % T]
  attention  q, k, v   heads=H context=T causal=1
             per sequence of T consecutive rows and per head: softmax(q kᵀ / sqrt(dh),
             keys j <= i when causal) v
  attention_qkv  x     heads=H context=T causal=1
             attention of q, k, v packed per head in x (head h's q, k, v at h·3dh)
  gelu_backward       x, dy          dy · gelu'(x)
  layernorm_backward  x, dy, g  eps=1e-5   layernorm's input gradient
  dense_backward      dy, w          dy · wᵀ
  softmax_backward    y, dy          y · (dy − sum(dy · y)) per sample (context=T: per group)
  attention_backward_q / _k / _v   q, k, v, dy   heads=H context=T causal=1
                      the gradient of q, k or v
             (the backward layers' references are tests/reference/transformer_train.py's
             hand-written, finite-difference-checked gradients, in float64)
  fanout     x, w0, b0, g, b, wq, bq, wk, bk, wv, bv
             h = x w0 + b0; a = layernorm(h, g, b); h + (a wq + bq) + (a wk + bk) + (a wv + bv)
             (a result read by two layers, and one read by three)
  matmul_qk, matmul_pv, softmax (context=T, grouped and masked): see matmul.py
Computes in float32, as the fabric does. Used by compiler/driver/tests/transformer_layers.rs.
"""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import forward  # noqa: E402  (its layernorm, gelu, attention, softmax)
import matmul  # noqa: E402  (matmul_qk, matmul_pv, the grouped softmax: see its docstring)
import transformer_train as grads  # noqa: E402  (the backward layers' gradients)

F32 = np.float32


def main():
    layer, folder = sys.argv[1], Path(sys.argv[2])
    opts = dict(a.split("=", 1) for a in sys.argv[3:])

    def arg(name):
        return np.load(folder / f"{name}.npy")

    if layer in matmul.LAYERS:
        np.save(folder / "ref.npy", matmul.run(layer, arg, opts).astype(F32))
        return

    if layer == "gelu":
        y = forward.gelu(arg("x"))
    elif layer == "add":
        y = arg("a") + arg("b")
    elif layer == "layernorm":
        y = forward.layernorm(arg("x"), arg("g"), arg("b"), F32(opts.get("eps", "1e-5")))
    elif layer == "embedding":
        ids, pos = arg("ids")[:, 0].astype(np.int64), arg("pos")
        y = arg("table")[ids] + pos[np.arange(len(ids)) % pos.shape[0]]
    elif layer == "attention":
        y = forward.attention(arg("q"), arg("k"), arg("v"), int(opts["heads"]),
                              int(opts["context"]), opts.get("causal", "1") == "1")
    elif layer == "attention_qkv":
        x, heads = arg("x"), int(opts["heads"])
        per = x.reshape(len(x), heads, 3, -1)
        q, k, v = (per[:, :, i, :].reshape(len(x), -1) for i in range(3))
        y = forward.attention(q, k, v, heads, int(opts["context"]),
                              opts.get("causal", "1") == "1")
    elif layer == "gelu_backward":
        y = grads.gelu_back(arg("x").astype(np.float64), arg("dy"))
    elif layer == "layernorm_backward":
        y = grads.layernorm_back(arg("x").astype(np.float64), arg("g"), arg("dy"),
                                 float(F32(opts.get("eps", "1e-5"))))[0]
    elif layer == "dense_backward":
        y = arg("dy").astype(np.float64) @ arg("w").astype(np.float64).T
    elif layer == "softmax_backward":
        p = arg("y").astype(np.float64)
        y = matmul.softmax_backward(p, arg("dy"), int(opts.get("context", p.shape[1])))
    elif layer.startswith("attention_backward_"):
        q, k, v, dy = (arg(n).astype(np.float64) for n in ("q", "k", "v", "dy"))
        parts = grads.attention_back(q, k, v, dy, int(opts["heads"]), int(opts["context"]),
                                     opts.get("causal", "1") == "1")
        y = parts["qkv".index(layer[-1])]
    elif layer == "fanout":
        h = arg("x") @ arg("w0") + arg("b0")
        a = forward.layernorm(h, arg("g"), arg("b"))
        q, k, v = (a @ arg(f"w{n}") + arg(f"b{n}") for n in "qkv")
        y = h + ((q + k) + v)
    else:
        raise SystemExit(f"unknown layer {layer}")
    np.save(folder / "ref.npy", y.astype(F32))


if __name__ == "__main__":
    main()
