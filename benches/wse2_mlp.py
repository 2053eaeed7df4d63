"""Benchmark: the wse2 weight-streaming MLP of issue #19, simulated by the `wsel` binary.

Four dense layers of 4096 x 4096 (256 MiB of f32 weights and 64 KiB of biases), ReLU between
them, batch 64, on `wse2`:

    y = relu(relu(relu(x W1 + b1) W2 + b2) W3 + b3) W4 + b4

The data is generated here (seeded NumPy, standard normal inputs, weights normal / 64, biases
normal * 0.1) into a temporary directory, never into the repository. Each run is
`wsel run --no-cache --mode MODE` under `/usr/bin/time`; the script prints per run the CPU
time (user + system, all threads), the wall time, the peak RSS, the simulated cycles,
wavelet-hops and samples/s, and the largest difference from the NumPy reference (computed
here in float32, independently of wsel) relative to the reference's largest magnitude.
A mode whose model does not map (pipelined: the weights do not fit in SRAM) prints wsel's
diagnostic instead. Medians at the end.

Usage (from the repository root, after `cargo build --release -p wsel`):
    python3 benches/wse2_mlp.py [--modes streaming,pipelined] [--threads =2] [--runs 1]
                                [--wsel PATH] [--width 4096] [--layers 4] [--batch 64]
"""

import argparse
import re
import statistics
import subprocess
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
F32 = np.float32


def write_job(tmp: Path, width: int, layers: int, batch: int) -> Path:
    """The model, its data and the NumPy reference in `tmp`; the program's path."""
    rng = np.random.default_rng(19)
    data = tmp / "data"
    data.mkdir()
    x = rng.standard_normal((batch, width), dtype=F32)
    np.save(data / "x.npy", x)
    h = x
    params, body = [], []
    for i in range(1, layers + 1):
        w = rng.standard_normal((width, width), dtype=F32) / F32(np.sqrt(width))
        b = rng.standard_normal(width, dtype=F32) * F32(0.1)
        np.save(data / f"w{i}.npy", w)
        np.save(data / f"b{i}.npy", b)
        h = h @ w + b
        params.append(f'    param w{i}: f32[{width}, {width}] from "data/w{i}.npy";')
        params.append(f'    param b{i}: f32[{width}] from "data/b{i}.npy";')
        prev = "x" if i == 1 else f"h{i - 1}"
        if i < layers:
            h = np.maximum(h, F32(0))
            body.append(f"    let h{i} = relu(dense({prev}, w{i}, b{i}));")
        else:
            body.append(f"    return dense({prev}, w{i}, b{i});")
    np.save(tmp / "reference.npy", h.astype(F32))
    (tmp / "main.wse").write_text(
        "import std.nn.{dense, relu};\n\n"
        f"model mlp(x: f32[B, {width}]) -> f32[B, {width}] {{\n"
        + "\n".join(params + body)
        + "\n}\n\n"
        'run mlp {\n    input x = "data/x.npy";\n    output = "out/y.npy";\n'
        '    target = "wse2";\n}\n'
    )
    return tmp / "main.wse"


def number(pattern: str, text: str):
    m = re.search(pattern, text)
    return int(m.group(1).replace(",", "")) if m else None


def run(wsel: str, program: Path, mode: str, threads: str) -> dict:
    tmp = program.parent
    out = tmp / f"out-{mode}.npy"
    cmd = ["/usr/bin/time", "-f", "TIME %U %S %e %M", wsel, "run", str(program), "--no-cache",
           "--mode", mode, "--threads", threads, "--output", str(out)]
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp)
    user, system, wall, rss = re.search(r"TIME ([\d.]+) ([\d.]+) ([\d.]+) (\d+)", p.stderr).groups()
    result = {"cpu": float(user) + float(system), "wall": float(wall), "rss_gib": int(rss) / 2**20}
    if p.returncode != 0:
        result["error"] = "\n".join(l for l in (p.stdout + p.stderr).splitlines()
                                    if not l.startswith("TIME"))
        return result
    ref = np.load(tmp / "reference.npy")
    got = np.load(out)
    result.update({
        "cycles": number(r"([\d,]+) cycles =", p.stdout),
        "hops": number(r"simulated ([\d,]+) wavelet-hops", p.stdout),
        "samples_s": number(r"([\d,]+) samples/s", p.stdout),
        "error": None,
        "rel_err": float(np.abs(got - ref).max() / np.abs(ref).max()),
        "report": p.stdout,
    })
    return result


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--modes", default="streaming,pipelined")
    ap.add_argument("--threads", default="=2")
    ap.add_argument("--runs", type=int, default=1)
    ap.add_argument("--wsel", default=str(ROOT / "target" / "release" / "wsel"))
    ap.add_argument("--width", type=int, default=4096)
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--show-report", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        program = write_job(Path(tmp), args.width, args.layers, args.batch)
        results = {}
        for _ in range(args.runs):
            for mode in args.modes.split(","):
                r = run(args.wsel, program, mode, args.threads)
                results.setdefault(mode, []).append(r)
                if r["error"]:
                    print(f"{mode}: does not run ({r['cpu']:.1f} s CPU):\n{r['error']}", flush=True)
                    continue
                if args.show_report:
                    print(r["report"])
                print(f"{mode}: {r['cpu']:.1f} s CPU, {r['wall']:.1f} s wall, {r['rss_gib']:.2f} GiB, "
                      f"{r['cycles']:,} cycles, {r['hops']:,} hops, {r['samples_s']:,} samples/s, "
                      f"max |y - numpy| / max |numpy| = {r['rel_err']:.2e}", flush=True)
        print("\nmedians:")
        for mode, rs in results.items():
            ok = [r for r in rs if not r["error"]]
            if ok:
                print(f"{mode}: CPU {statistics.median(r['cpu'] for r in ok):.1f} s, wall "
                      f"{statistics.median(r['wall'] for r in ok):.1f} s, "
                      f"{ok[0]['cycles']:,} cycles, {ok[0]['samples_s']:,} samples/s")


if __name__ == "__main__":
    main()
