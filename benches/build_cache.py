"""Benchmark: `wsel run` and `wsel build` with and without a valid build artifact. Prints
Markdown tables for BENCHMARKS.md.

Usage (from the repository root, after `cargo build --release --features llvm -p wsel`):
    python3 benches/build_cache.py [RUNS]

Per example and backend, medians of RUNS runs (default 11) of the whole command:
- cold: `wsel run --no-cache` (check, lower, map, hang checks, code generation, simulation);
- cold + save: no artifact yet, so the run builds and also writes the artifact;
- reused: a valid artifact, so parsing, mapping and code generation are skipped.
Each figure is wall time and, in brackets, CPU time (user + system of the child process), which
a machine busy with other work disturbs less. "simulate" is the simulator's own wall time
from the run report. A second table times `wsel build` alone (no simulation) against
`wsel --version`, the process start-up every command pays.
"""

import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WSEL = ROOT / "target" / "release" / "wsel"


def once(command):
    """Wall and CPU seconds of one run of `command`."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(command, check=True, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def timed(command, runs, before=None):
    """Median wall and CPU seconds."""
    samples = []
    for _ in range(runs):
        if before:
            before()
        samples.append(once(command))
    return statistics.median(w for w, _ in samples), statistics.median(c for _, c in samples)


def run_rows(example, backend, runs, artifact_dir):
    artifact = Path(artifact_dir) / f"{example}-{backend}.wselb"
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "report.json"
        command = [
            str(WSEL), "run", f"examples/{example}/main.wse", "--backend", backend,
            "--artifact", str(artifact), "--output", str(Path(tmp) / "out.npy"), "--report", str(report),
        ]

        def sample(extra, before=None):
            walls, cpus, sims = [], [], []
            for _ in range(runs):
                if before:
                    before()
                wall, cpu = once(command + extra)
                walls.append(wall)
                cpus.append(cpu)
                sims.append(json.loads(report.read_text())["run"]["wall_seconds"])
            return statistics.median(walls), statistics.median(cpus), statistics.median(sims)

        rows = {
            "cold": sample(["--no-cache"]),
            "cold + save": sample([], before=lambda: artifact.unlink(missing_ok=True)),
            "reused": sample([]),
        }
    return rows, artifact.stat().st_size


def ms(seconds):
    return f"{seconds * 1e3:.0f} ms"


if __name__ == "__main__":
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 11
    print("| example | backend | run | `wsel run` wall (CPU) | of which simulate |")
    print("|---|---|---|---|---|")
    sizes = []
    with tempfile.TemporaryDirectory() as artifact_dir:
        for example, backend in [
            ("digits", "cranelift"), ("digits", "interp"), ("digits", "llvm"), ("gemv", "cranelift"),
        ]:
            rows, size = run_rows(example, backend, runs, artifact_dir)
            sizes.append(f"{example}/{backend}: {size / 1024:.1f} KiB")
            for name, (wall, cpu, sim) in rows.items():
                print(f"| {example} | {backend} | {name} | {ms(wall)} ({ms(cpu)}) | {ms(sim)} |")
    print()
    print("artifact sizes: " + ", ".join(sizes))
    print()
    wall, cpu = timed([str(WSEL), "--version"], runs)
    print(f"`wsel --version` (start-up): {ms(wall)} ({ms(cpu)})")
    print()
    print("| example | `wsel build`, no artifact (build + save) | `wsel build`, valid artifact |")
    print("|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        artifact = Path(tmp) / "a.wselb"
        for example in ["digits", "gemv"]:
            command = [str(WSEL), "build", f"examples/{example}/main.wse", "-o", str(artifact)]
            cold = timed(command, runs, before=lambda: artifact.unlink(missing_ok=True))
            reused = timed(command, runs)
            print(
                f"| {example} | {ms(cold[0])} ({ms(cold[1])}) | {ms(reused[0])} ({ms(reused[1])}) |"
            )
