#!/usr/bin/env bash
# The reference experiment of docs/experiments.md (too long for CI): a GRU(60)
# on Epilepsy, stages init, fc, all from the same weights, 3 seeds, every
# report format. Usage: bash tests/bench/reference_experiment.sh [BUILD_DIR] [OUT_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
build=${1:-$here/build}
out=${2:-$build/reference-experiment}
mkdir -p "$out"
"$build/app/cli/gruwb" experiment --build "cell=gru,units=60" \
  --data "$here/../shared/data/datasets/Epilepsy" --stages init,fc,all --seeds 3 \
  --report "$out/r.html" --report "$out/r.pdf" --report "$out/r.md" --report "$out/r.csv" \
  --json "$out/r.json" "${@:3}"
