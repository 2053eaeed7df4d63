"""NumPy reference of a generated MLP, written independently of wsel.

Usage: python3 tests/reference/mlp.py DIR LAYERS OUT.npy
  DIR holds x.npy and, for each of the LAYERS dense layers i, wi.npy ([inputs, outputs]) and
  bi.npy; the model is softmax(dense(relu(... relu(dense(x, w0, b0)) ...), wL, bL)), as the
  driver's streaming tests write it. Where DIR also holds gi.npy and si.npy, hidden layer i
  is relu(layernorm(dense(...), gi, si)) (eps 1e-5, forward.py's layernorm). Computes in
  float32, as the fabric does.
"""

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import forward  # noqa: E402  (its layernorm)


def main():
    folder, layers, out = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    h = np.load(folder / "x.npy").astype(np.float32)
    for i in range(layers):
        h = h @ np.load(folder / f"w{i}.npy") + np.load(folder / f"b{i}.npy")
        if (folder / f"g{i}.npy").exists():
            h = forward.layernorm(h, np.load(folder / f"g{i}.npy"), np.load(folder / f"s{i}.npy"))
        if i + 1 < layers:
            h = np.maximum(h, np.float32(0))
    e = np.exp(h - h.max(axis=-1, keepdims=True))
    np.save(out, (e / e.sum(axis=-1, keepdims=True)).astype(np.float32))


if __name__ == "__main__":
    main()
