#!/usr/bin/env bash
# Runs every fuzz target of wsel for SECONDS each (default 60) with the release build, and
# prints the inputs tried and the failures found per target (FUZZING.md records the figures).
# Reproducers of failures land in fuzz/reproducers/. Extra arguments go to wsel-fuzz, e.g.
# `fuzz/run.sh 600 --target source --seed 7`. With WSEL_FUZZ_KEEP_INPUT=1 every input is
# written to fuzz/reproducers/<target>-current.* before it runs, so that an abort (a stack
# overflow) leaves its input behind.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
shift || true
cargo run --quiet --release -p wsel-fuzz -- --seconds "$seconds" "$@"
