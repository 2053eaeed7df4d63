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
