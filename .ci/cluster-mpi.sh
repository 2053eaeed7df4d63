#!/usr/bin/env bash
# The cluster over MPI (docs/running.md, "Over MPI processes and hosts"): a `wsel` built with
# the `mpi` feature runs the same `--systems 3` in one process and under
# `mpirun -np 2`, and the result and the report (but for its wall time) must be the same
# bytes; then one process of two cannot read its input (it runs in a folder without it), and
# process 0 must print that one error while every process exits, within a time limit; last,
# `wsel train --systems 2` for two steps must write the same weights, losses and table (but
# for its wall times) in one process and on two; and so must pipelined replicas
# (`--mode pipelined --systems 3`, the processes keeping their replicas' SRAM).
# Usage: .ci/cluster-mpi.sh [path/to/wsel]   (default target/debug/wsel)
set -euo pipefail
cd "$(dirname "$0")/.."
wsel="$(realpath "${1:-target/debug/wsel}")"
mpirun=(timeout 300 mpirun --allow-run-as-root --oversubscribe)
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# A small two-layer model in weight-streaming mode: the systems meet at every phase.
mkdir -p "$tmp/model" "$tmp/empty"
cat > "$tmp/model/m.wse" <<'WSE'
import std.nn.{dense, relu};

model m(x: f32[B, 64]) -> f32[B, 10] {
    param w1: f32[64, 24] from "w1.npy";
    param b1: f32[24] from "b1.npy";
    param w2: f32[24, 10] from "w2.npy";
    param b2: f32[10] from "b2.npy";
    return dense(relu(dense(x, w1, b1)), w2, b2);
}
WSE
python3 - "$tmp/model" <<'PY'
import sys, numpy as np
d, r = sys.argv[1], np.random.default_rng(22)
for name, shape in [("x", (12, 64)), ("w1", (64, 24)), ("b1", (24,)), ("w2", (24, 10)), ("b2", (10,))]:
    np.save(f"{d}/{name}.npy", (r.standard_normal(shape) / 4).astype(np.float32))
np.save(f"{d}/y.npy", r.integers(0, 10, 12).astype(np.int64))
PY

run() {  # run LAUNCHER... : the cluster run, its result and report left in $tmp/model/out.*
    (cd "$tmp/model" && "$@" "$wsel" run m.wse --input x=x.npy --mode streaming --systems 3 \
        --output out.npy --report out.json > /dev/null)
}
run
mv "$tmp/model/out.npy" "$tmp/one.npy"
grep -v '"wall_seconds"' "$tmp/model/out.json" > "$tmp/one.json"
run "${mpirun[@]}" -np 2
grep -v '"wall_seconds"' "$tmp/model/out.json" > "$tmp/two.json"
cmp "$tmp/one.npy" "$tmp/model/out.npy"
cmp "$tmp/one.json" "$tmp/two.json"
echo "cluster: 3 systems on 1 and on 2 MPI processes give the same result and report"

# Process 1 runs in a folder without x.npy: one error, from process 0, and no hang.
set +e
"${mpirun[@]}" -np 1 -wdir "$tmp/model" "$wsel" run "$tmp/model/m.wse" --input x=x.npy \
    --systems 3 --output "$tmp/fail.npy" : \
    -np 1 -wdir "$tmp/empty" "$wsel" run "$tmp/model/m.wse" --input x=x.npy \
    --systems 3 --output "$tmp/fail.npy" > "$tmp/fail.out" 2> "$tmp/fail.err"
status=$?
set -e
if [ "$status" -eq 0 ] || [ "$status" -eq 124 ]; then
    echo "the failing process did not stop the job (status $status)"; cat "$tmp/fail.err"; exit 1
fi
errors=$(grep -c '^error\[E0801\]' "$tmp/fail.err" || true)
if [ "$errors" -ne 1 ] || ! grep -q 'note: on process 1 of 2' "$tmp/fail.err" || [ -e "$tmp/fail.npy" ]; then
    echo "expected one E0801 from process 1, reported by process 0:"; cat "$tmp/fail.err"; exit 1
fi
echo "cluster: a process that cannot read its input stops the job with one error"

# Training on 2 systems: the gradients summed through the tree, the weights broadcast back;
# the same layers with a softmax for cross_entropy.
sed -e 's/import std.nn.{dense, relu};/import std.nn.{dense, relu, softmax};/' \
    -e 's/return dense(relu(dense(x, w1, b1)), w2, b2);/return softmax(dense(relu(dense(x, w1, b1)), w2, b2));/' \
    "$tmp/model/m.wse" > "$tmp/model/t.wse"
train() {  # train DIR LAUNCHER... : two steps on 2 systems, the outputs left in DIR
    local out="$1"; shift
    (cd "$tmp/model" && "$@" "$wsel" train t.wse --input x=x.npy --labels y.npy --target wse2 \
        --batch 4 --steps 2 --systems 2 --out "$out" | grep -v -e 'wall' -e 'written to' > "$out.txt")
}
train "$tmp/train-one"
train "$tmp/train-two" "${mpirun[@]}" -np 2
for f in w1.npy b1.npy w2.npy b2.npy loss.csv; do cmp "$tmp/train-one/$f" "$tmp/train-two/$f"; done
cmp "$tmp/train-one.txt" "$tmp/train-two.txt"
grep -q 'cluster: 2 systems in data parallel' "$tmp/train-one.txt"
echo "cluster: training on 2 systems gives the same weights, losses and table on 1 and 2 processes"

# Pipelined replicas on 3 systems (shares 2, 2, 2 of 6): each process keeps its replicas' SRAM
# from step to step; process 0 sums the gradients and sends the sums back.
trainp() {  # trainp DIR LAUNCHER... : two steps of 3 replicas, the outputs left in DIR
    local out="$1"; shift
    (cd "$tmp/model" && "$@" "$wsel" train t.wse --input x=x.npy --labels y.npy --target dev \
        --mode pipelined --batch 6 --steps 2 --systems 3 --out "$out" \
        | grep -v -e 'wall' -e 'written to' > "$out.txt")
}
trainp "$tmp/pipe-one"
trainp "$tmp/pipe-two" "${mpirun[@]}" -np 2
for f in w1.npy b1.npy w2.npy b2.npy loss.csv; do cmp "$tmp/pipe-one/$f" "$tmp/pipe-two/$f"; done
cmp "$tmp/pipe-one.txt" "$tmp/pipe-two.txt"
grep -q 'cluster: 3 replicas' "$tmp/pipe-one.txt"
echo "cluster: pipelined replicas on 3 systems give the same weights, losses and table on 1 and 2 processes"
