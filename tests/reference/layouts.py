"""NumPy references of std.nn's layout layers, written independently of wsel.

Usage: python3 tests/reference/layouts.py LAYER DIR
Reads DIR/x.npy and writes the layer's result to DIR/ref.npy (float32):
  transpose        x: [B, T, D]    -> np.transpose(x, (0, 2, 1))      [B, D, T]
  transpose_heads  x: [B, H, T, E] -> np.transpose(x, (0, 2, 1, 3))   [B, T, H, E]
  mixed            x: [B, T, D]    -> transpose, std.collectives' allreduce_row (every
                                      row of the [D, T] sample the sum of all D rows),
                                      transpose back                   [B, T, D]
  relu_flat        x: [B, T, D]    -> relu(reshape(transpose(x), D·T))  [B, D·T]
  round_trip       x: [B, T, D]    -> transpose(reshape(relu(reshape(transpose(x), D·T)),
                                      D, T)) = relu(x)                  [B, T, D]
  t_heads          x: [B, T, D]    -> transpose, read as [B, D, T/2, 2], transpose_heads,
                                      read as [B, T/2, 2·D]             [B, T/2, 2·D]
  dense_chain      x: [B, 24], w1, b1, w2, b2 (DIR/*.npy) -> dense, read as [B, 6, 4],
                                      transpose, read as [B, 24], dense [B, 24]
Used by compiler/driver/tests/rank3.rs.
"""

import sys
from pathlib import Path

import numpy as np

F32 = np.float32
AXES = {"transpose": (0, 2, 1), "transpose_heads": (0, 2, 1, 3)}


def main():
    layer, folder = sys.argv[1], Path(sys.argv[2])
    x = np.load(folder / "x.npy")
    if layer in ("relu_flat", "round_trip"):
        y = np.maximum(np.transpose(x, (0, 2, 1)).reshape(x.shape[0], -1), F32(0))
        if layer == "round_trip":
            y = np.transpose(y.reshape(x.shape[0], x.shape[2], x.shape[1]), (0, 2, 1))
    elif layer == "t_heads":
        b, t, d = x.shape
        y = np.transpose(np.transpose(x, (0, 2, 1)).reshape(b, d, t // 2, 2), (0, 2, 1, 3))
        y = y.reshape(b, t // 2, 2 * d)
    elif layer == "dense_chain":
        w = {n: np.load(folder / f"{n}.npy").astype(np.float64) for n in ("w1", "b1", "w2", "b2")}
        h = x.astype(np.float64) @ w["w1"] + w["b1"]
        h = np.transpose(h.reshape(x.shape[0], 6, 4), (0, 2, 1)).reshape(x.shape[0], 24)
        y = h @ w["w2"] + w["b2"]
    elif layer == "mixed":
        t = np.transpose(x, (0, 2, 1))
        s = np.zeros_like(t[:, :1, :])
        for i in range(t.shape[1]):  # folded from part 0 upward, as bus_turns folds
            s = s + t[:, i : i + 1, :]
        y = np.transpose(np.broadcast_to(s, t.shape), (0, 2, 1))
    else:
        y = np.transpose(x, AXES[layer])
    np.save(folder / "ref.npy", np.ascontiguousarray(y, dtype=np.float32))


if __name__ == "__main__":
    main()
