"""Benchmark: wall time of `wsel run` on the examples against the same forward pass in NumPy,
and the simulation time of each code generator. Prints Markdown tables for BENCHMARKS.md.

Usage (from the repository root, after `cargo build --release --features llvm -p wsel`):
    python3 benches/run_vs_numpy.py [RUNS]

`wsel run` is timed as a whole command (start-up, checking, mapping, code generation,
simulation, writing the result; `--no-cache`, so no run reuses a saved build); "simulate" is
the simulator's own time from the run report.
NumPy computes the same forward pass in float32 on the host. Medians of RUNS runs (default 5).
"""

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
WSEL = ROOT / "target" / "release" / "wsel"
sys.path.insert(0, str(ROOT / "tests" / "reference"))
import forward  # noqa: E402  (the NumPy references of the test suite)


def time_wsel(args, runs):
    walls, sims = [], []
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        for _ in range(runs):
            start = time.perf_counter()
            subprocess.run(
                [str(WSEL), "run", "--no-cache", *args, "--output", str(Path(tmp) / "out.npy"), "--report", str(report)],
                check=True, cwd=ROOT, stdout=subprocess.DEVNULL,
            )
            walls.append(time.perf_counter() - start)
            sims.append(json.loads(report.read_text())["run"]["wall_seconds"])
    return statistics.median(walls), statistics.median(sims)


def time_numpy(model, batch, runs):
    times = []
    for _ in range(max(runs, 20)):
        start = time.perf_counter()
        getattr(forward, model)(batch)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    cases = [
        ("digits", "pipelined", 360, ["examples/digits/main.wse", "--mode", "pipelined"]),
        ("digits", "streaming", 40, ["examples/digits/main.wse", "--mode", "streaming", "--batch", "40"]),
        ("gemv", "pipelined", 8, ["examples/gemv/main.wse", "--mode", "pipelined"]),
    ]
    print("| example | mode | batch | `wsel run` (whole command) | of which simulate | NumPy forward | ratio |")
    print("|---|---|---|---|---|---|---|")
    for model, mode, batch, args in cases:
        wall, sim = time_wsel(args, runs)
        host = time_numpy(model, batch, runs)
        print(f"| {model} | {mode} | {batch} | {wall * 1e3:.0f} ms | {sim * 1e3:.0f} ms | {host * 1e6:.0f} µs | {wall / host:,.0f}× |")
    print()
    print("| example | backend | `wsel run` (whole command) | of which simulate |")
    print("|---|---|---|---|")
    for backend in ("interp", "cranelift", "llvm"):
        for model, args in (("digits", ["examples/digits/main.wse"]), ("gemv", ["examples/gemv/main.wse"])):
            wall, sim = time_wsel([*args, "--backend", backend], runs)
            print(f"| {model} | {backend} | {wall * 1e3:.0f} ms | {sim * 1e3:.0f} ms |")


if __name__ == "__main__":
    main()
