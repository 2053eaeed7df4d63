"""Benchmark: full-wafer jobs simulated by the `wsel` binary, as a user runs them.

- `heat`: heat diffusion on a 512 x 512 region of wse2, 20 Jacobi steps, batch 1 (std.stencil's
  `jacobi5`, as examples/heat runs it, on a plate of 512 x 512 cells, one per PE);
- `mlp_streaming`: examples/mlp_streaming with `--target wse2` (weight streaming over the
  whole wafer).

Usage (from the repository root, after `cargo build --release -p wsel`):
    python3 benches/wafer_jobs.py [--jobs heat,mlp_streaming] [--threads 1,=2] [--runs 3]
                                  [--wsel PATH[,PATH...]] [--side 512] [--warm]

`--threads` takes `wsel run --threads` values: `=N` runs exactly N threads, `N` at most N, as
many as the job's size pays for (one per 4,096 PEs with a program, docs/running.md).

`--side` makes the heat plate (and its region) smaller, for profiling: 256 is a quarter of the
PEs, whose state still does not fit in the caches.

Writes the heat program and its plate (seeded NumPy, as examples/heat/make_data.py) into a
temporary directory, runs `wsel run --no-cache --threads N` under `/usr/bin/time` for each
binary given (alternating, so that two builds meet the same load; `--warm`: with the build
cache, filled by one uncounted run per binary first, as a user's second run), and prints per
run: the CPU time (user + system, all threads), the wall time, the peak RSS, the simulated
wavelet-hops and cycles, the wavelet-hops per second of CPU time (per core), and the SHA-256
of the result file (the same bytes for every thread count and binary, or the engine is
broken) and of the printed report but for its wall time. Medians at the end.
"""

import argparse
import hashlib
import re
import statistics
import subprocess
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
HEAT = ROOT / "examples" / "heat" / "main.wse"
SIDE = 512
STEPS = 20


def heat_job(tmp: Path, side: int = SIDE) -> Path:
    """The heat example on a side x side plate, STEPS steps, on wse2; the program's path."""
    src = HEAT.read_text()
    src = src.replace("const STEPS: u32 = 500;", f"const STEPS: u32 = {STEPS};")
    src = src.replace("f32[B, 64, 64]", f"f32[B, {side}, {side}]")
    src = src.replace('target = "dev";', 'target = "wse2";')
    (tmp / "main.wse").write_text(src)
    (tmp / "data").mkdir()
    rng = np.random.default_rng(202)
    plate = rng.uniform(0.0, 20.0, (side, side))
    plate[:, 0] = np.linspace(100.0, 0.0, side)
    plate[:, -1] = 50.0
    plate[0, :] = 100.0
    plate[-1, :] = 0.0
    np.save(tmp / "data" / "plate.npy", plate[None].astype(np.float32))
    return tmp / "main.wse"


def run(wsel: str, job: list, tmp: Path, threads: str, artifact: Path | None = None) -> dict:
    """One run; with `artifact`, the build cache at that path instead of `--no-cache`."""
    out = tmp / "out.npy"
    cache = ["--no-cache"] if artifact is None else ["--artifact", str(artifact)]
    cmd = ["/usr/bin/time", "-f", "TIME %U %S %e %M", wsel, "run", *job, *cache,
           "--threads", threads, "--output", str(out)]
    p = subprocess.run(cmd, capture_output=True, text=True, check=True, cwd=tmp)
    user, system, wall, rss = re.search(r"TIME ([\d.]+) ([\d.]+) ([\d.]+) (\d+)", p.stderr).groups()
    hops = int(re.search(r"simulated ([\d,]+) wavelet-hops", p.stdout).group(1).replace(",", ""))
    cycles = int(re.search(r"([\d,]+) cycles =", p.stdout).group(1).replace(",", ""))
    return {
        "user": float(user) + float(system), "wall": float(wall), "rss_gib": int(rss) / 2**20,
        "hops": hops, "cycles": cycles,
        # CPU time sums every thread's: hops per second of one core.
        "rate": hops / (float(user) + float(system)) / 1e6,
        "sha": hashlib.sha256(out.read_bytes()).hexdigest()[:16],
        # The printed report, but for the wall time and the output's path.
        "report": hashlib.sha256("".join(
            line for line in p.stdout.splitlines(keepends=True)
            if "wall time" not in line and "output:" not in line
        ).encode()).hexdigest()[:16],
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jobs", default="heat,mlp_streaming")
    ap.add_argument("--threads", default="1,=2")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--wsel", default=str(ROOT / "target" / "release" / "wsel"))
    ap.add_argument("--side", type=int, default=SIDE, help="the heat plate's side")
    ap.add_argument("--warm", action="store_true",
                    help="use the build cache (an artifact per binary and job, written by one "
                         "run first that is not counted) instead of --no-cache")
    args = ap.parse_args()
    binaries = args.wsel.split(",")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        jobs = {
            "heat": [str(heat_job(tmp, args.side))],
            "mlp_streaming": [str(ROOT / "examples" / "mlp_streaming" / "main.wse"),
                              "--target", "wse2"],
        }
        results = {}
        for name in args.jobs.split(","):
            for threads in args.threads.split(","):
                artifacts = {wsel: None for wsel in binaries}
                if args.warm:
                    for i, wsel in enumerate(binaries):
                        artifacts[wsel] = tmp / f"{name}.{i}.wselb"
                        run(wsel, jobs[name], tmp, threads, artifacts[wsel])
                for _ in range(args.runs):
                    for wsel in binaries:
                        r = run(wsel, jobs[name], tmp, threads, artifacts[wsel])
                        results.setdefault((name, wsel, threads), []).append(r)
                        print(f"{name} {wsel} threads {threads}: {r['user']:.2f} s CPU, {r['wall']:.2f} s wall, "
                              f"{r['rss_gib']:.2f} GiB, {r['hops']:,} hops, {r['cycles']:,} cycles, "
                              f"{r['rate']:.2f} M hops/s per core, output {r['sha']}, report {r['report']}",
                              flush=True)
        print("\nmedians:")
        for (name, wsel, threads), rs in results.items():
            print(f"{name} {wsel} threads {threads}: CPU {statistics.median(r['user'] for r in rs):.2f} s, "
                  f"{statistics.median(r['rate'] for r in rs):.2f} M hops/s per core, "
                  f"peak {max(r['rss_gib'] for r in rs):.2f} GiB, outputs {sorted({r['sha'] for r in rs})}, "
                  f"reports {sorted({r['report'] for r in rs})}")


if __name__ == "__main__":
    main()
