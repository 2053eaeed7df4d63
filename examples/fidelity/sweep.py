#!/usr/bin/env python3
"""Runs the sliding-window-rpc port (or, with --slide, the synchronous-slide port) for every
(W, n) pair of the CS-2 measurements and prints wsel's cycles beside the CS-2's and
Cerebras' simulator's.

The measurements are the CSVs the CSL program's author committed in
github.com/n-io/sliding-window (commit e770efa, `sliding-window-rpc/results/out_cs2.csv` and
`out_sim.csv`), copied unchanged into `data/`. Each row gives, for a row of W PEs moving n
f32 per edge PE, the cycles the left, middle and right PE measured with their timestamp
counters.

Usage (from the repository root):
    python3 examples/fidelity/sweep.py [--wsel PATH] [--target wse2|FILE]... [--widths 3,103]
        [--elems 1,491] [--markdown] [--slide]

With --slide the port is `synchronous_slide.wse` (its control wavelets' commands follow W:
`[adv, nop * (w / 4 - 2), adv]`).

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
    """(W, n) -> (left, middle, right) cycles. The slide's files repeat their header inside;
    those rows are skipped."""
    out = {}
    with open(os.path.join(HERE, "data", name), newline="") as f:
        for row in csv.DictReader(f):
            elems = row.get("num_elems") or row.get("elems_per_pe")
            if not row["kernel_width"].isdigit():
                continue
            key = (int(row["kernel_width"]), int(elems))
            out[key] = tuple(
                int(row[c]) for c in ("left_cycles", "middle_cycles", "right_cycles")
            )
    return out


# The port of each experiment: (its file and layer, the CSV prefix).
PORTS = {False: "sliding_window_rpc", True: "synchronous_slide"}


def default_wsel():
    for build in ("release", "debug"):
        path = os.path.join(ROOT, "target", build, "wsel")
        if os.path.exists(path):
            return path
    sys.exit("build wsel first (cargo build --release), or pass --wsel")


def run_pair(wsel, target, work, width, n, port):
    """wsel's (left, middle, right) cycles for one pair."""
    model = os.path.join(work, f"w{width}_n{n}.wse")
    if port == PORTS[True]:
        shutil.copy(os.path.join(HERE, port + ".wse"), work)
    with open(model, "w") as f:
        f.write(
            f"import {port}.{{{port}}};\n"
            f"model m(x: f32[B, {width}]) -> f32[B, {width}] {{\n"
            f"    return {port}(x, n = {n});\n}}\n"
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


def parse_args():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--wsel", default=None)
    parser.add_argument("--target", action="append", default=None,
                        help="wse2, another preset or a .toml file; repeat to run several")
    parser.add_argument("--widths", default=None, help="comma-separated W values to run")
    parser.add_argument("--elems", default=None, help="comma-separated n values to run")
    parser.add_argument("--slide", action="store_true",
                        help="run the synchronous-slide port instead of sliding-window-rpc")
    parser.add_argument("--markdown", action="store_true",
                        help="print the table as README.md's markdown rows")
    return parser.parse_args()


def fmt(figures):
    return " / ".join(str(v) for v in figures)


def print_row(markdown, width, n, c, s, ws):
    """One pair: the CS-2, Cerebras' simulator, then wsel on each target, and the right
    PE's ratios to the CS-2 (wsel's on every target, then the simulator's)."""
    ratios = [w[2] / c[2] for w in ws] + [s[2] / c[2]]
    if markdown:
        cells = [str(width), str(n), fmt(c), fmt(s)] + [fmt(w) for w in ws]
        cells += [f"{r:.2f}" for r in ratios]
        print("| " + " | ".join(cells) + " |", flush=True)
    else:
        cells = [f"{width:>4} {n:>3}", fmt(c), fmt(s)] + [fmt(w) for w in ws]
        cells += [" ".join(f"{r:.2f}" for r in ratios)]
        print(" | ".join(cells), flush=True)


def summary(rows, pick):
    """The ratio to the CS-2's figure of one PE (`pick`: 0 left, 1 middle, 2 right) over
    the pairs run: median, and range for W >= 103."""
    ratios = [pick_ratio(row, pick) for row in rows]
    far = [pick_ratio(row, pick) for row in rows if row[0] >= 103]
    text = f"{statistics.median(ratios):.2f}"
    if far:
        text += f" ({min(far):.2f}–{max(far):.2f})"
    return text


def pick_ratio(row, pick):
    width, n, cs2, wsel = row
    return wsel[pick] / cs2[pick]


def show_target(name, rows, sim_rows):
    """Issue #26's target for the right PE: within ±10% of the CS-2 for W >= 103, ±20%
    below; on the median pair (the median of the CS-2's right figures) never further from
    the CS-2 than Cerebras' simulator."""
    misses = [(w, n, wsel[2] / c[2]) for w, n, c, wsel in rows
              if abs(wsel[2] / c[2] - 1) > (0.10 if w >= 103 else 0.20)]
    mid = sorted(rows, key=lambda r: r[2][2])[len(rows) // 2]
    sim_mid = next(r for r in sim_rows if r[:2] == mid[:2])
    own, theirs = abs(mid[3][2] / mid[2][2] - 1), abs(sim_mid[3][2] / sim_mid[2][2] - 1)
    worst = max(misses, key=lambda m: abs(m[2] - 1)) if misses else None
    print(f"{name}: right PE outside the band for {len(misses)} of {len(rows)} pairs"
          + (f" (furthest: W={worst[0]}, n={worst[1]}, {worst[2]:.2f})" if worst else "")
          + f"; the median pair W={mid[0]}, n={mid[1]}:"
          f" off by {own:.1%}, Cerebras' simulator by {theirs:.1%}")


def main():
    args = parse_args()
    wsel = args.wsel or default_wsel()
    targets = args.target or ["wse2"]
    paths = [os.path.abspath(t) if os.path.exists(t) else t for t in targets]
    port = PORTS[args.slide]
    cs2 = read_csv(f"{port}_cs2.csv")
    sim = read_csv(f"{port}_sim.csv")
    pairs = sorted(cs2)
    if args.widths:
        keep = {int(w) for w in args.widths.split(",")}
        pairs = [p for p in pairs if p[0] in keep]
    if args.elems:
        keep = {int(n) for n in args.elems.split(",")}
        pairs = [p for p in pairs if p[1] in keep]
    work = tempfile.mkdtemp(prefix="wsel-fidelity-")
    shutil.copy(os.path.join(HERE, port + ".wse"), work)
    print(f"cycles of the left / middle / right PE: W, n, CS-2, Cerebras' simulator, wsel on "
          f"{', '.join(targets)}; the right PE's ratio to the CS-2 (wsel, then the simulator)")
    rows = {t: [] for t in targets}
    sim_rows = []
    for width, n in pairs:
        c, s = cs2[(width, n)], sim.get((width, n), (0, 0, 0))
        ws = [run_pair(wsel, path, work, width, n, port) for path in paths]
        for t, w in zip(targets, ws):
            rows[t].append((width, n, c, w))
        sim_rows.append((width, n, c, s))
        print_row(args.markdown, width, n, c, s, ws)
    print("\nratio to the CS-2: median (range for W >= 103); left, middle, right PE")
    for name, got in [("Cerebras' simulator", sim_rows)] + list(rows.items()):
        print(f"{name}: " + ", ".join(summary(got, pick) for pick in range(3)))
    for name, got in rows.items():
        show_target(name, got, sim_rows)
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
