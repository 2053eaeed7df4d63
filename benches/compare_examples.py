"""Differential check of two `wsel` binaries on every example, as a user runs them.

Runs `wsel run --no-cache` of every `examples/*/main.wse` on each target and thread count with
each binary, and compares what the runs produce: the exit code, the output file's bytes, the
printed report but for its wall time and output path, and the JSON report with every PE's and
link's record (`--report-detail`) but for `wall_seconds` and the output path. Any difference
is printed; the count of runs compared and of differences at the end.

Usage (from the repository root):
    python3 benches/compare_examples.py --wsel BEFORE,AFTER [--targets dev,wse2] [--threads 1,=2]
"""

import argparse
import hashlib
import json
import shutil
import subprocess
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def scrub(report):
    """The JSON report without what differs between two runs of one binary."""
    run = report.get("run", {})
    for key in ("wall_seconds", "output"):
        run.pop(key, None)
    return json.dumps(report, sort_keys=True)


def run(wsel: str, example: Path, target: str, threads: str, tmp: Path) -> dict:
    out, report = tmp / "out.npy", tmp / "report.json"
    for f in (out, report):
        f.unlink(missing_ok=True)
    p = subprocess.run(
        [wsel, "run", str(example / "main.wse"), "--no-cache", "--target", target,
         "--threads", threads, "--output", str(out), "--report", str(report),
         "--report-detail"],
        capture_output=True, text=True, cwd=example)
    printed = "".join(line for line in p.stdout.splitlines(keepends=True)
                      if "wall time" not in line and "output:" not in line)
    digest = lambda b: hashlib.sha256(b).hexdigest()[:16]
    return {
        "exit": p.returncode,
        "stderr": digest(p.stderr.encode()),
        "printed": digest(printed.encode()),
        "output": digest(out.read_bytes()) if out.exists() else None,
        "report": digest(scrub(json.loads(report.read_text())).encode()) if report.exists() else None,
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--wsel", required=True, help="BEFORE,AFTER")
    ap.add_argument("--targets", default="dev,wse2")
    ap.add_argument("--threads", default="1,=2")
    args = ap.parse_args()
    before, after = args.wsel.split(",")
    examples = sorted(p.parent for p in (ROOT / "examples").glob("*/main.wse"))
    runs = differences = 0
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for example in examples:
            # A copy, so that no run writes into the repository.
            work = tmp / example.name
            shutil.copytree(example, work)
            for target in args.targets.split(","):
                for threads in args.threads.split(","):
                    a = run(before, work, target, threads, tmp)
                    b = run(after, work, target, threads, tmp)
                    runs += 1
                    same = a == b
                    differences += not same
                    print(f"{example.name} {target} threads {threads}: "
                          f"{'same' if same else 'DIFFERENT'} {b}", flush=True)
                    if not same:
                        print(f"  before {a}", flush=True)
    print(f"\n{runs} runs compared, {differences} differences")


if __name__ == "__main__":
    main()
