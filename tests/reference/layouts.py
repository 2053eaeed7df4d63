"""NumPy references of std.nn's layout layers, written independently of wsel.

Usage: python3 tests/reference/layouts.py LAYER DIR
Reads DIR/x.npy and writes the layer's result to DIR/ref.npy (float32):
  transpose        x: [B, T, D]    -> np.transpose(x, (0, 2, 1))      [B, D, T]
  transpose_heads  x: [B, H, T, E] -> np.transpose(x, (0, 2, 1, 3))   [B, T, H, E]
  mixed            x: [B, T, D]    -> transpose, std.collectives' allreduce_row (every
                                      row of the [D, T] sample the sum of all D rows),
                                      transpose back                   [B, T, D]
Used by compiler/driver/tests/rank3.rs.
"""

import sys
from pathlib import Path

import numpy as np

AXES = {"transpose": (0, 2, 1), "transpose_heads": (0, 2, 1, 3)}


def main():
    layer, folder = sys.argv[1], Path(sys.argv[2])
    x = np.load(folder / "x.npy")
    if layer == "mixed":
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
