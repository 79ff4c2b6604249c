#!/usr/bin/env bash
# Overhead against budget for every strategy on the test models: builds the
# four models (python/lethe/onnx_models.py, full size, f32), makes each a
# training step with Adam, writes its planning problem (h100 profile) and
# runs lethe-bench-planning on the problems. A benchmark: it prints a table
# and fails only when a tool does.
#
# Usage: bench/planning-models.sh [BUILD_DIR] [extra lethe-bench-planning flags]
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${1:-$root/build}
shift || true
cmake --build "$build" --target lethe-bench-planning lethe-opt lethe-translate >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
PYTHONPATH=$root/python /usr/bin/python3 -m lethe.onnx_models --out "$work"
problems=()
for model in mlp cnn transformer unet; do
  case $model in
    mlp|cnn) loss="loss-output=logits loss=softmax_cross_entropy" ;;
    *) loss="loss-output=y loss=mse" ;;
  esac
  "$build/bin/lethe-translate" --import-onnx "$work/$model.onnx" |
    "$build/bin/lethe-opt" --lethe-training-pipeline="$loss optimizer=adam" \
      -o "$work/$model.mlir"
  # Any budget the unplanned step fits will do: the problem's budget is not
  # used (the bench sets its own), and the unplanned arena can be a little
  # over the unplanned peak, so 1.0 may not fit.
  "$build/bin/lethe-opt" "$work/$model.mlir" --lethe-plan-memory="budget=1024GiB \
strategy=none problem-out=$work/$model.json" -o /dev/null
  problems+=("$work/$model.json")
done
list=$(IFS=,; echo "${problems[*]}")
"$build/bin/lethe-bench-planning" --problems="$list" \
  --strategies=none,sqrt,chain,chain-offload,greedy,auto \
  --budgets=0.9,0.8,0.7,0.6,0.5 --max-seconds=60 "$@"
