"""Benchmark: what `--trace` and `--report` cost on wse2. Prints Markdown tables for
BENCHMARKS.md.

Usage (from the repository root, after `cargo build --release -p wsel`):
    python3 benches/trace_report.py [RUNS]
(`WSEL=path` measures another build of the binary.)

1. heat (examples/heat: a 64 x 64 plate, 500 Jacobi steps) on wse2 (64 x 64 PEs) and on dev
   (16 x 16 PEs), one thread: without a trace, with the whole trace, and (wse2) with a
   filtered one; medians of RUNS runs (default 3) of wall time, CPU time (user + system of
   the process) and peak resident memory (the process's ru_maxrss), and the trace's size.
   The build is reused from an artifact written by a first, untimed run, so the figures are
   the simulation's.
2. The whole trace once more on two threads: its SHA-256 must equal the one-thread trace's.
3. Every example on wse2 with its `run` item's settings: the size of the default JSON report
   and of the report with `--report-detail`.
"""

import hashlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WSEL = Path(os.environ.get("WSEL", ROOT / "target" / "release" / "wsel"))


def once(command):
    """Wall seconds, CPU seconds and peak RSS (MiB) of one run of `command`."""
    start = time.perf_counter()
    child = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    stderr = child.stderr.read().decode() if child.stderr else ""
    if child.returncode != 0:
        sys.exit(f"{' '.join(map(str, command))} failed:\n{stderr}")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def sha256(path):
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def heat_command(target, tmp):
    return [
        str(WSEL), "run", "examples/heat/main.wse", "--target", target,
        "--artifact", str(tmp / f"heat-{target}.wselb"), "--output", str(tmp / "heat.npy"),
    ]


def heat(runs, tmp):
    trace = tmp / "t.json"
    configs = [
        ("wse2", "no trace", []),
        ("wse2", "--trace (everything)", ["--trace", str(trace)]),
        (
            "wse2",
            "--trace --trace-region 0,0,15,15 --trace-cycles 40000..50000",
            ["--trace", str(trace), "--trace-region", "0,0,15,15", "--trace-cycles", "40000..50000"],
        ),
        ("dev", "no trace", []),
        ("dev", "--trace (everything)", ["--trace", str(trace)]),
    ]
    for target in ["wse2", "dev"]:
        once(heat_command(target, tmp))  # writes the artifact
    print("| heat, 1 thread | wall s | CPU s | peak RSS MiB | trace |")
    print("|---|---:|---:|---:|---:|")
    for target, name, extra in configs:
        base = heat_command(target, tmp)
        samples = [once(base + extra) for _ in range(runs)]
        size = f"{trace.stat().st_size / 1e6:,.1f} MB" if extra else "—"
        wall, cpu, rss = (statistics.median(s[i] for s in samples) for i in range(3))
        print(f"| {target}: `{name}` | {wall:.1f} | {cpu:.1f} | {rss:.0f} | {size} |")
        if extra:
            trace.unlink()
    base = heat_command("wse2", tmp)
    hashes = []
    for threads in ["1", "=2"]:
        once(base + ["--trace", str(trace), "--threads", threads])
        hashes.append(sha256(trace))
        trace.unlink()
    print()
    print(f"Whole trace, SHA-256 on 1 thread: `{hashes[0]}`; on 2 threads: `{hashes[1]}`"
          f" ({'identical' if hashes[0] == hashes[1] else 'DIFFERENT'}).")


def reports(tmp):
    print("| example on wse2 | report | with `--report-detail` |")
    print("|---|---:|---:|")
    for example in sorted(p.name for p in (ROOT / "examples").iterdir() if (p / "main.wse").exists()):
        sizes = []
        for extra in [[], ["--report-detail"]]:
            report = tmp / f"{example}.json"
            once([
                str(WSEL), "run", f"examples/{example}/main.wse", "--target", "wse2",
                "--artifact", str(tmp / f"{example}.wselb"), "--output", str(tmp / f"{example}.npy"),
                "--report", str(report), *extra,
            ])
            sizes.append(report.stat().st_size)
        print(f"| {example} | {sizes[0] / 1e3:,.1f} KB | {sizes[1] / 1e6:,.1f} MB |")


def main():
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    with tempfile.TemporaryDirectory() as tmp:
        heat(runs, Path(tmp))
        print()
        reports(Path(tmp))


if __name__ == "__main__":
    main()
