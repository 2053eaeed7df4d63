#!/usr/bin/env python3
"""Runs the sliding-window-rpc port for every (W, n) pair of the CS-2 measurements and
prints wsel's cycles beside the CS-2's and Cerebras' simulator's.

The measurements are the CSVs the CSL program's author committed in
github.com/n-io/sliding-window (commit e770efa, `sliding-window-rpc/results/out_cs2.csv` and
`out_sim.csv`), copied unchanged into `data/`. Each row gives, for a row of W PEs moving n
f32 per edge PE, the cycles the left, middle and right PE measured with their timestamp
counters.

Usage (from the repository root):
    python3 examples/fidelity/sweep.py [--wsel PATH] [--target wse2|FILE] [--widths 3,103]

Every wsel figure comes from running the program on the simulated fabric; the program
times itself with `pe.cycle` as the CSL program does.
"""

import argparse
import csv
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))


def read_csv(name):
    """(W, n) -> (left, middle, right) cycles."""
    out = {}
    with open(os.path.join(HERE, "data", name), newline="") as f:
        for row in csv.DictReader(f):
            key = (int(row["kernel_width"]), int(row["num_elems"]))
            out[key] = tuple(
                int(row[c]) for c in ("left_cycles", "middle_cycles", "right_cycles")
            )
    return out


def default_wsel():
    for build in ("release", "debug"):
        path = os.path.join(ROOT, "target", build, "wsel")
        if os.path.exists(path):
            return path
    sys.exit("build wsel first (cargo build --release), or pass --wsel")


def run_pair(wsel, target, work, width, n):
    """wsel's (left, middle, right) cycles for one pair."""
    model = os.path.join(work, f"w{width}_n{n}.wse")
    with open(model, "w") as f:
        f.write(
            "import sliding_window_rpc.{sliding_window_rpc};\n"
            f"model m(x: f32[B, {width}]) -> f32[B, {width}] {{\n"
            f"    return sliding_window_rpc(x, n = {n});\n}}\n"
        )
    x = os.path.join(work, f"x{width}.npy")
    np.save(x, np.zeros((1, width), dtype=np.float32))
    y = os.path.join(work, f"y_w{width}_n{n}.npy")
    subprocess.run(
        [wsel, "run", model, "--target", target, "--copies", "1", "--batch", "1",
         "--input", f"x={x}", "--output", y, "--no-cache"],
        check=True, stdout=subprocess.DEVNULL,
    )
    figures = np.load(y)[0]
    half = (width - 1) // 2
    picked = (figures[0], figures[half], figures[width - 1])
    if min(picked) < 0:
        sys.exit(f"W={width} n={n}: an edge received the wrong values")
    return tuple(int(v) for v in picked)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wsel", default=None)
    parser.add_argument("--target", default="wse2")
    parser.add_argument("--widths", default=None, help="comma-separated W values to run")
    args = parser.parse_args()
    wsel = args.wsel or default_wsel()
    target = args.target
    if os.path.exists(target):
        target = os.path.abspath(target)
    cs2 = read_csv("sliding_window_rpc_cs2.csv")
    sim = read_csv("sliding_window_rpc_sim.csv")
    pairs = sorted(cs2)
    if args.widths:
        keep = {int(w) for w in args.widths.split(",")}
        pairs = [p for p in pairs if p[0] in keep]
    work = tempfile.mkdtemp(prefix="wsel-fidelity-")
    shutil.copy(os.path.join(HERE, "sliding_window_rpc.wse"), work)
    print(f"target {args.target}; cycles of the left, middle and right PE")
    print(f"{'W':>4} {'n':>3} | {'CS-2 L':>6} {'M':>5} {'R':>5} | {'sim L':>6} {'M':>5} {'R':>5}"
          f" | {'wsel L':>6} {'M':>5} {'R':>5} | {'R/CS-2':>6} {'sim R/CS-2':>10}")
    ratios, sim_ratios, rows = [], [], []
    for width, n in pairs:
        c, s = cs2[(width, n)], sim.get((width, n), (0, 0, 0))
        w = run_pair(wsel, target, work, width, n)
        ratio, sim_ratio = w[2] / c[2], s[2] / c[2]
        ratios.append(ratio)
        sim_ratios.append(sim_ratio)
        rows.append((width, n, c, s, w))
        print(f"{width:>4} {n:>3} | {c[0]:>6} {c[1]:>5} {c[2]:>5} | {s[0]:>6} {s[1]:>5} {s[2]:>5}"
              f" | {w[0]:>6} {w[1]:>5} {w[2]:>5} | {ratio:>6.2f} {sim_ratio:>10.2f}", flush=True)
    far = [r for (width, _, _, _, _), r in zip(rows, ratios) if width >= 103]
    print(f"\nright PE, wsel / CS-2: median {statistics.median(ratios):.2f}, "
          f"range {min(ratios):.2f}–{max(ratios):.2f}"
          + (f"; W >= 103: {min(far):.2f}–{max(far):.2f}" if far else ""))
    print(f"right PE, Cerebras' simulator / CS-2: median {statistics.median(sim_ratios):.2f}")
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
