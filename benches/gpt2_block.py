"""Benchmark: a GPT-2-small-shaped decoder block on wse2 in weight streaming (issue #20).

One pre-LN block of GPT-2 small — d_model 768, 12 heads, context 128, an MLP of 3072 — with
random weights (seeded NumPy: normal * 0.02 as GPT-2 initialises them, LayerNorm gains 1
and shifts 0), on `--sequences` sequences of 128 tokens (a sequence model's tokens are its
samples):

    a = layernorm(x); h = x + attention(a Wq + bq, a Wk + bk, a Wv + bv) Wo + bo
    y = h + gelu(layernorm(h) Wfc + bfc) Wproj + bproj

The data is generated into a temporary directory, never into the repository. The NumPy
reference uses tests/reference/forward.py's layernorm, gelu and attention (float32). Each run
is `wsel run --no-cache --mode streaming` under `/usr/bin/time`; the script prints the CPU
and wall time, the peak RSS, the simulated cycles, wavelet-hops and samples/s, and the
largest difference from the reference relative to its largest magnitude.

Usage (from the repository root, after `cargo build --release -p wsel`):
    python3 benches/gpt2_block.py [--threads =2] [--sequences 1] [--wsel PATH]
                                  [--d-model 768] [--heads 12] [--context 128]
"""

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "reference"))
from forward import attention, gelu, layernorm  # noqa: E402
from wse2_mlp import number  # noqa: E402  (this directory is on the path)

F32 = np.float32
PARAMS = [("wq", "d,d"), ("bq", "d"), ("wk", "d,d"), ("bk", "d"), ("wv", "d,d"), ("bv", "d"),
          ("wo", "d,d"), ("bo", "d"), ("wfc", "d,f"), ("bfc", "f"), ("wproj", "f,d"),
          ("bproj", "d"), ("ln1_g", "d"), ("ln1_b", "d"), ("ln2_g", "d"), ("ln2_b", "d")]


def write_job(tmp: Path, d: int, heads: int, context: int, sequences: int) -> Path:
    """The block, its data and the NumPy reference in `tmp`; the program's path."""
    rng = np.random.default_rng(20)
    data = tmp / "data"
    data.mkdir()
    f = 4 * d
    p = {}
    decls = []
    for name, dims in PARAMS:
        shape = tuple({"d": d, "f": f}[s] for s in dims.split(","))
        if name.endswith("_g"):
            value = np.ones(shape, F32)
        elif name.endswith("_b"):
            value = np.zeros(shape, F32)
        else:
            value = (rng.standard_normal(shape, dtype=F32) * F32(0.02)).astype(F32)
        p[name] = value
        np.save(data / f"{name}.npy", value)
        decls.append(f'    param {name}: f32[{", ".join(map(str, shape))}] from "data/{name}.npy";')
    x = rng.standard_normal((sequences * context, d), dtype=F32)
    np.save(data / "x.npy", x)
    a = layernorm(x, p["ln1_g"], p["ln1_b"])
    q, k, v = (a @ p[f"w{n}"] + p[f"b{n}"] for n in "qkv")
    h = x + (attention(q, k, v, heads, context) @ p["wo"] + p["bo"])
    m = gelu(layernorm(h, p["ln2_g"], p["ln2_b"]) @ p["wfc"] + p["bfc"])
    y = h + (m @ p["wproj"] + p["bproj"])
    np.save(tmp / "reference.npy", y.astype(F32))
    body = f"""
    let a = layernorm(x, ln1_g, ln1_b);
    let att = attention(dense(a, wq, bq), dense(a, wk, bk), dense(a, wv, bv),
        heads = {heads}, context = {context});
    let h = add(x, dense(att, wo, bo));
    let m = layernorm(h, ln2_g, ln2_b);
    return add(h, dense(gelu(dense(m, wfc, bfc)), wproj, bproj));
"""
    (tmp / "main.wse").write_text(
        "import std.nn.{dense, layernorm, gelu, add, attention};\n\n"
        f"model block(x: f32[B, {d}]) -> f32[B, {d}] {{\n"
        + "\n".join(decls) + body + "}\n\n"
        'run block {\n    input x = "data/x.npy";\n    output = "out/y.npy";\n'
        '    target = "wse2";\n    mode = "streaming";\n}\n'
    )
    return tmp / "main.wse"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", default="=2")
    ap.add_argument("--sequences", type=int, default=1)
    ap.add_argument("--d-model", type=int, default=768)
    ap.add_argument("--heads", type=int, default=12)
    ap.add_argument("--context", type=int, default=128)
    ap.add_argument("--wsel", default=str(ROOT / "target" / "release" / "wsel"))
    ap.add_argument("--show-report", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        program = write_job(tmp, args.d_model, args.heads, args.context, args.sequences)
        out = tmp / "y.npy"
        cmd = ["/usr/bin/time", "-f", "TIME %U %S %e %M", str(Path(args.wsel).resolve()), "run", str(program),
               "--no-cache", "--threads", args.threads, "--output", str(out)]
        p = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp)
        user, system, wall, rss = re.search(r"TIME ([\d.]+) ([\d.]+) ([\d.]+) (\d+)",
                                            p.stderr).groups()
        cpu = float(user) + float(system)
        print(f"command: {' '.join(cmd[5:])}")
        if p.returncode != 0:
            print(f"does not run ({cpu:.1f} s CPU, {float(wall):.1f} s wall):")
            print("\n".join(l for l in (p.stdout + p.stderr).splitlines() if not l.startswith("TIME")))
            sys.exit(1)
        if args.show_report:
            print(p.stdout)
        ref = np.load(tmp / "reference.npy")
        got = np.load(out)
        rel = float(np.abs(got - ref).max() / np.abs(ref).max())
        cycles = number(r"([\d,]+) cycles =", p.stdout)
        hops = number(r"simulated ([\d,]+) wavelet-hops", p.stdout)
        rate = number(r"([\d,]+) samples/s", p.stdout)
        print(f"{cpu:.1f} s CPU, {float(wall):.1f} s wall, {int(rss) / 2**20:.2f} GiB peak, "
              f"{cycles:,} cycles, {hops:,} hops, {rate:,} samples/s, "
              f"max |y - numpy| / max |numpy| = {rel:.2e}")


if __name__ == "__main__":
    main()
