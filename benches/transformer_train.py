#!/usr/bin/env python3
"""examples/transformer trained for a few steps on the fabric against the NumPy reference
trainer (BENCHMARKS.md, "Training the transformer example").

The example's model (examples/transformer/main.wse, its trained weights) with a softmax after
its logits, trained with `wsel train` (streaming, SGD with momentum 0.9, lr 0.01, batch 64 =
one sequence of 64 characters a step, no shuffling) on its held-out batch against the next
characters, and by tests/reference/transformer_train.py's `example` model (float64) from the
same weights on the same batches. Prints each step's losses, the largest difference of a
final weight, and the run's wall time, CPU time, cycles per step and training region.

The target is tests/targets/dev-4mib.toml unless `--target` names another (a preset such as
`wse2`, or a TOML file): dev's figures on a 16 × 16 fabric with 4 MiB of SRAM per PE. On
wse2 (48 KiB per PE) the training graph maps: attention's backward layers run on the
forward's region (a sequence over several columns, a head over several rows), and the other
backward layers and the loss split the features over the region's rows.

Usage: benches/transformer_train.py [path/to/wsel] [--steps N] [--target T] [--check]
   (default target/release/wsel; `cargo build --release -p wsel`). `--check` exits with 1
   unless every loss is within 1e-5 relative and every final weight within 1e-5 of the
   reference (compiler/driver/tests/training.rs runs it so).
"""

import argparse
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "tests/targets/dev-4mib.toml"


def training_source(steps, target):
    """main.wse with a softmax after the logits and a `train` item instead of its `run`."""
    text = (ROOT / "examples/transformer/main.wse").read_text()
    text = text.replace("attention};", "attention, softmax};")
    text = text.replace("return dense(layernorm(h2, lnf_g, lnf_b), whead, bhead);",
                        "return softmax(dense(layernorm(h2, lnf_g, lnf_b), whead, bhead));")
    text = text.replace('"data/', '"')
    text = text[:text.index("run gpt {")]
    assert "softmax(dense(" in text, "main.wse's last line changed"
    return text + f"""train gpt {{
    input ids = "ids.npy";
    labels = "labels.npy";
    loss = "cross_entropy";
    optimizer = "sgd";
    momentum = 0.9;
    lr = 0.01;
    steps = {steps};
    batch = 64;
    shuffle = false;
    target = "{target}";
}}
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("wsel", nargs="?", type=Path, default=ROOT / "target/release/wsel")
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--target", default=str(TARGET),
                    help="a preset (wse2) or a target file; default tests/targets/dev-4mib.toml")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        subprocess.run([sys.executable, str(ROOT / "tests/reference/transformer_train.py"),
                        "example", str(tmp), "--steps", str(args.steps), "--batch", "64",
                        "--lr", "0.01", "--momentum", "0.9"], check=True)
        (tmp / "train.wse").write_text(training_source(args.steps, args.target))
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.monotonic()
        run = subprocess.run([str(args.wsel.resolve()), "train", "train.wse", "--color", "never", "--out",
                              "out"], cwd=tmp, capture_output=True, text=True)
        wall = time.monotonic() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if run.returncode != 0:
            sys.exit(f"wsel train failed:\n{run.stdout}{run.stderr}")
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        ours = np.loadtxt(tmp / "out/loss.csv", delimiter=",", skiprows=1, usecols=1, ndmin=1)
        theirs = np.load(tmp / "reference/losses.npy")
        worst = 0.0
        for path in (tmp / "reference").glob("*.npy"):
            if path.name != "losses.npy" and not path.name.startswith("bk"):
                worst = max(worst, np.abs(np.load(tmp / "out" / path.name) - np.load(path)).max())
        cycles = re.findall(r"^\s+\d+\s+[\d.]+\s.*?([\d,]+)\s+\d+\s*$", run.stdout, re.M)
        print("step  fabric     NumPy      relative difference")
        for k, (a, b) in enumerate(zip(ours, theirs)):
            print(f"{k + 1:>4}  {a:.6f}  {b:.6f}  {abs(a - b) / abs(b):.1e}")
        print(f"final weights (but the key biases, whose gradient is 0): within {worst:.1e}")
        print(f"cycles per step: {', '.join(cycles)}")
        region = re.search(r" at a time on (\S+)", run.stdout)
        print(f"training region: {region.group(1) if region else 'not reported'}")
        print(f"wall {wall:.1f} s, CPU {cpu:.1f} s")
        if args.check and (len(ours) != args.steps or worst > 1e-5
                           or (np.abs(ours - theirs) > 1e-5 * np.abs(theirs)).any()):
            sys.exit("the fabric's training differs from the reference")


if __name__ == "__main__":
    main()
