"""The estimate's gap on every example: the batch estimate against the simulated cycles.

Runs `wsel run main.wse --no-cache --color never --target T` of every `examples/*/main.wse` (a
copy of the example's folder, at its `run` item's batch, `--copies auto`) on each target, and
prints one Markdown row per run from the report's line `estimated N cycles (fill F) ·
simulated M (gap G)`, with the mode, and the run's CPU time (user + system of the process, s).
The cycle counts are the simulator's and the estimator's and do not vary between runs.

Usage (from the repository root):
    python3 benches/estimate_gap.py [--wsel target/release/wsel] [--targets dev,wse2]
        [--examples digits,transformer] [-- EXTRA wsel run FLAGS]
"""

import argparse
import resource
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

LINE = re.compile(
    r"estimated ([\d,]+) cycles(?: \(fill ([\d,]+)\))? · simulated ([\d,]+) \(gap ([^)]+)\)")
MODE = re.compile(r"· (\w+) mode \(")


def run(wsel: str, example: Path, target: str, extra: list) -> dict:
    """One run: its exit code, the gap line's figures, its mode and CPU seconds."""
    args = [wsel, "run", "main.wse", "--no-cache", "--color", "never", "--target", target,
            "--output", "out.npy", *extra]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(args, cwd=example, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    stdout, stderr = p.stdout, p.stderr
    found, mode = LINE.search(stdout), MODE.search(stdout)
    return {
        "exit": p.returncode,
        "error": stderr.strip().splitlines()[:1],
        "estimated": found and found.group(1),
        "fill": found and found.group(2),
        "simulated": found and found.group(3),
        "gap": found and found.group(4),
        "mode": mode and mode.group(1),
        "cpu": cpu,
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--wsel", default=str(ROOT / "target/release/wsel"))
    ap.add_argument("--targets", default="dev,wse2")
    ap.add_argument("--examples", default="", help="comma-separated names; all when empty")
    ap.add_argument("extra", nargs="*", help="further `wsel run` flags, after `--`")
    args = ap.parse_args()
    wanted = set(filter(None, args.examples.split(",")))
    examples = sorted(p.parent for p in (ROOT / "examples").glob("*/main.wse")
                      if not wanted or p.parent.name in wanted)
    print("| example | target | mode | estimated (fill) | simulated | gap | CPU s |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for example in examples:
            # A copy, so that no run writes into the repository.
            work = Path(tmp) / example.name
            shutil.copytree(example, work)
            for target in args.targets.split(","):
                r = run(args.wsel, work, target, args.extra)
                cpu = f"{r['cpu']:.1f}"
                if r["exit"] != 0 or r["gap"] is None:
                    print(f"| {example.name} | {target} | failed ({r['exit']}: "
                          f"{' '.join(r['error'])}) | | | | {cpu} |", flush=True)
                    continue
                fill = f" ({r['fill']})" if r["fill"] else ""
                print(f"| {example.name} | {target} | {r['mode']} | {r['estimated']}{fill} | "
                      f"{r['simulated']} | {r['gap']} | {cpu} |", flush=True)


if __name__ == "__main__":
    main()
