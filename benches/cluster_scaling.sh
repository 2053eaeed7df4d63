#!/usr/bin/env bash
# The cluster's scaling table in BENCHMARKS.md ("Cluster"): streaming inference of a
# 256 → 256 → 256 → 10 MLP (0.5 MB of weights) on `dev` fabrics, batch 128, on 1, 2, 4 and 8
# systems, with the broadcast tree's links at 16 and at 256 B/cycle (a store of 256 B/cycle
# behind both, so that the links decide); then the wall time of the 8-system simulation in
# one process and over 2 MPI processes. Then the same for streaming training (`wsel train
# --systems N`): the digits MLP (examples/digits/train.wse), a global batch of 128, one step,
# on a 16-column fabric with 48 KiB per PE, the tree's links at 64 and at 2 B/cycle (the
# fabric takes weights in at one wavelet, 4 B, per cycle, so only a tree narrower than that
# can starve it). Then pipelined replicas (`wsel train --mode pipelined --systems N`) on the
# same targets and batch. Prints the Markdown rows.
# Usage: benches/cluster_scaling.sh [path/to/wsel] [pipelined]   (default target/release/wsel,
# built with `cargo build --release -p wsel --features mpi`; `pipelined`: only the replicas'
# table and wall times)
set -euo pipefail
cd "$(dirname "$0")/.."
wsel="$(realpath "${1:-target/release/wsel}")"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
repo="$(pwd)"
cd "$tmp"
cat > m.wse <<'WSE'
import std.nn.{dense, relu};

model m(x: f32[B, 256]) -> f32[B, 10] {
    param w1: f32[256, 256] from "w1.npy";
    param b1: f32[256] from "b1.npy";
    param w2: f32[256, 256] from "w2.npy";
    param b2: f32[256] from "b2.npy";
    param w3: f32[256, 10] from "w3.npy";
    param b3: f32[10] from "b3.npy";
    let h1 = relu(dense(x, w1, b1));
    let h2 = relu(dense(h1, w2, b2));
    return dense(h2, w3, b3);
}
WSE
python3 - <<'PY'
import numpy as np
r = np.random.default_rng(22)
for name, shape in [("x", (128, 256)), ("w1", (256, 256)), ("b1", (256,)), ("w2", (256, 256)),
                    ("b2", (256,)), ("w3", (256, 10)), ("b3", (10,))]:
    np.save(f"{name}.npy", (r.standard_normal(shape) / 16).astype(np.float32))
PY
target() {  # target NAME LINK: a dev-sized fabric whose tree links carry LINK B/cycle
    cat > "$1.toml" <<TOML
name = "$1"
width = 16
height = 16
sram_bytes = 4096
sram_banks = 2
colors = 24
queue_depth = 4
hop_latency = 2
link_bytes_per_cycle = 4
task_switch_cycles = 2
reconfigure_cycles = 100
clock_hz = 850000000
[fp32]
add = 2
mul = 1
fma = 1
[fp16]
add = 4
mul = 4
fma = 4
[weight_store]
capacity_bytes = 1073741824
bandwidth_bytes_per_cycle = 256
latency_cycles = 100
[host_io]
bandwidth_bytes_per_cycle = 64
[swarm]
fan_out = 2
link_bytes_per_cycle = $2
link_latency_cycles = 20
switch_latency_cycles = 10
reduce_bytes_per_cycle = $2
packet_bytes = 256
TOML
}
for link in 16 256; do target "link$link" "$link"; done
# Training: the test suite's tree target (48 KiB per PE, links of 16 B/cycle), other links.
for link in 2 64; do
    sed -e "s/^link_bytes_per_cycle = 16$/link_bytes_per_cycle = $link/" \
        -e "s/^reduce_bytes_per_cycle = 16$/reduce_bytes_per_cycle = $link/" \
        "$repo/tests/targets/train-tree.toml" > "train$link.toml"
done
python3 - "$wsel" "$repo/examples/digits/train.wse" "${2:-all}" <<'PY'
import csv, json, os, subprocess, sys, time
wsel, digits, only = sys.argv[1], sys.argv[2], sys.argv[3]
def timed(command):
    """Runs `command` (it must succeed): its standard output, wall and CPU seconds."""
    started, cpu = time.monotonic(), os.times()
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    wall, after = time.monotonic() - started, os.times()
    return out, (wall, after.children_user + after.children_system - cpu.children_user - cpu.children_system)
def run(link, systems, launcher=()):
    _, times = timed([*launcher, wsel, "run", "m.wse", "--input", "x=x.npy", "--mode", "streaming",
                      "--target", f"link{link}.toml", "--systems", str(systems),
                      "--output", "out.npy", "--report", "r.json"])
    return json.load(open("r.json"))["cluster"], times
mpirun = ("mpirun", "--allow-run-as-root", "--oversubscribe", "-np")
def on_ranks(label, job):
    """The median of 3 runs of `job(launcher)` (wall, CPU) on 1 and on 2 MPI processes."""
    for ranks in (1, 2):
        times = sorted(job((*mpirun, str(ranks))) for _ in range(3))
        wall, cpu = times[1]
        print(f"{label}, {ranks} MPI process(es): wall {wall:.2f} s, CPU {cpu:.2f} s"
              f" (median of 3; walls {', '.join(f'{w:.2f}' for w, _ in times)})")
if only != "pipelined":
    print("| link B/cycle | systems | step cycles | simulated samples/s | speed-up | efficiency | limited by (feed that lifts it) |")
    print("|---|---|---|---|---|---|---|")
    for link in (256, 16):
        one = None
        for n in (1, 2, 4, 8):
            r, _ = run(link, n)
            one = one or r["samples_per_second"]
            eff = r["samples_per_second"] / n / one
            limit = r["limit"]
            lim = f'{limit["by"]}: {", ".join(limit["layers"])} ({limit["bytes_per_cycle"]:.1f} B/cycle)' if limit else "—"
            print(f'| {link} | {n} | {r["step_cycles"]:,} | {r["samples_per_second"]:,.0f} | {r["speedup"] or 1:.2f} | {100*eff:.1f}% | {lim} |')
    print()
    on_ranks("8 systems, links 16 B/cycle", lambda launcher: run(16, 8, launcher)[1])
    def train(link, systems, launcher=()):
        out, times = timed([*launcher, wsel, "train", digits, "--target", f"train{link}.toml",
                            "--batch", "128", "--steps", "1", "--systems", str(systems),
                            "--out", "trained", "--quiet"])
        step = next(csv.DictReader(open("trained/loss.csv")))
        limits = [l.strip() for l in out.splitlines() if "limits scaling" in l]
        return int(step["cycles"]), float(step["samples_per_second"]), limits, times
    print()
    print("| tree links | systems | step cycles | simulated training samples/s | speed-up | efficiency | what limits it |")
    print("|---|---|---|---|---|---|---|")
    for link in (64, 2):
        one = None
        for n in (1, 2, 4, 8):
            cycles, rate, limits, _ = train(link, n)
            one = one or cycles
            speedup = one / cycles
            print(f'| {link} B/cycle | {n} | {cycles:,} | {rate:,.0f} | {speedup:.2f} | {100*speedup/n:.1f}% | {"; ".join(limits) or "—"} |')
    print()
    on_ranks("training, 8 systems, links 2 B/cycle", lambda launcher: train(2, 8, launcher)[3])
def replicas(link, systems, launcher=()):
    out, times = timed([*launcher, wsel, "train", digits, "--target", f"train{link}.toml",
                        "--mode", "pipelined", "--batch", "128", "--steps", "1",
                        "--systems", str(systems), "--out", "trained", "--quiet"])
    step = next(csv.DictReader(open("trained/loss.csv")))
    allreduce = [l.strip() for l in out.splitlines() if l.strip().startswith("a step:")]
    return int(step["cycles"]), float(step["samples_per_second"]), allreduce, times
print()
print("| tree links | systems | step cycles | simulated training samples/s | speed-up | efficiency | the step |")
print("|---|---|---|---|---|---|---|")
for link in (64, 2):
    one = None
    for n in (1, 2, 4, 8):
        cycles, rate, allreduce, _ = replicas(link, n)
        one = one or cycles
        speedup = one / cycles
        print(f'| {link} B/cycle | {n} | {cycles:,} | {rate:,.0f} | {speedup:.2f} | {100*speedup/n:.1f}% | {"".join(allreduce)[len("a step: "):] or "—"} |')
print()
on_ranks("pipelined replicas, 8 systems, links 2 B/cycle", lambda launcher: replicas(2, 8, launcher)[3])
PY
