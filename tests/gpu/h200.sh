#!/usr/bin/env bash
# The GPU session script: run on the GPU machine over a copy of the work tree
# with build/ carried from the build machine (see README, "Running on a GPU
# machine"). Runs the whole test suite there (GPU tests included), calibrates,
# and writes the reports of the runs named on the command line to $OUT.
#   tests/gpu/h200.sh [OP...]      default: softmax
set -uo pipefail
out=${OUT:-/tmp/kbench-out}
mkdir -p "$out"
db="$out/kbench.db"
ops=("${@:-softmax}")
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw \
    --format=csv >"$out/nvidia-smi.txt" 2>&1
bash tests/run.sh build >"$out/tests.log" 2>&1
echo "tests: $(tail -n 1 "$out/tests.log")"
grep -E 'FAIL|skipping|copy bandwidth|SM clock|GPU cases' "$out/tests.log" | head -40
build/kbench calibrate --db "$db"
for op in "${ops[@]}"; do
    case $op in
    softmax) shapes=(--shape rows=32768,cols=4096 --shape rows=8192,cols=32768
                     --shape rows=4099,cols=3001) ;;
    layernorm) shapes=(--shape rows=32768,cols=4096 --shape rows=8192,cols=16384) ;;
    *) shapes=() ;;
    esac
    build/kbench run "$op" --variants all --dtype fp32,bf16 "${shapes[@]}" --db "$db" \
        --json "$out/$op.json" --tag h200 >"$out/$op.txt" 2>"$out/$op.err"
    echo "$op: exit $?"
    cat "$out/$op.txt" "$out/$op.err"
done
