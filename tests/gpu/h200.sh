#!/usr/bin/env bash
# The GPU session script: run on the GPU machine over a copy of the work tree
# with build/ carried from the build machine (README, "Running on a GPU
# machine"). Runs the whole test suite there (GPU tests included), calibrates,
# runs each operator named at the shapes of its committed report, and writes to
# $OUT: OP.json (the reports), kbench.db, tests.log and session.log.
#   tests/gpu/h200.sh [OP...]          default: softmax
# With COST=1 it also times `kbench run softmax --variants all` under each
# metric set; with NCU_CHECK=1 it checks kbench's counters against Nsight Compute
# (tests/gpu/ncu_compare.sh) for softmax at 32768x4096, fp32 and bf16
# (NCU_VARIANTS=a,b for a subset). The tests run last; TESTS=0 leaves them out.
set -uo pipefail
out=${OUT:-/tmp/kbench-out}
mkdir -p "$out"
db="$out/kbench.db"
log="$out/session.log"
ops=("${@:-softmax}")
exec > >(tee -a "$log") 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw \
    --format=csv
build/kbench calibrate --db "$db"
for op in "${ops[@]}"; do
    case $op in
    softmax) shapes=(--shape rows=32768,cols=4096 --shape rows=8192,cols=32768
                     --shape rows=4099,cols=3001) ;;
    layernorm) shapes=(--shape rows=32768,cols=4096 --shape rows=8192,cols=16384
                       --shape rows=32768,cols=4096,gelu=1
                       --shape rows=32768,cols=4096,mean=10000) ;;
    *) shapes=() ;;
    esac
    dtypes=fp32,bf16
    extra=()
    if [ "$op" = attention ]; then
        # the ladder, the Hopper rung and the vendor row at the shapes of the
        # acceptance: D=128 and D=64 (H=32), S=16384, causal and not, and two
        # sequence lengths no tile divides; at least 5 samples (naive takes
        # seconds a launch at S=16384)
        shapes=(--shape batch=4,heads=16,seq=4096,dim=128 --shape batch=4,heads=16,seq=4096,dim=128,causal=1
                --shape batch=4,heads=32,seq=4096,dim=64 --shape batch=4,heads=32,seq=4096,dim=64,causal=1
                --shape batch=1,heads=16,seq=16384,dim=128 --shape batch=1,heads=16,seq=16384,dim=128,causal=1
                --shape batch=1,heads=5,seq=1000,dim=128,causal=1 --shape batch=1,heads=2,seq=4097,dim=128,causal=1)
        dtypes=bf16
        extra=(--min-samples 5)
    fi
    if [ "$op" = matmul ]; then
        # the report's shapes: the 4096 and 8192 cubes, the epilogue, no tile
        # dividing, and the decode-like (memory-bound) m=16; fp32 and bf16
        # cross every shape (one JSON). At least 5 samples: naive takes about
        # 2 s a launch at 8192^3, so the run stays within a few minutes.
        shapes=(--shape m=4096,n=4096,k=4096 --shape m=8192,n=8192,k=8192
                --shape m=4096,n=4096,k=4096,epilogue=1 --shape m=4095,n=4097,k=1000
                --shape m=16,n=8192,k=8192)
        extra=(--min-samples 5)
    fi
    start=$(date +%s%N)
    build/kbench run "$op" --variants all --dtype "$dtypes" "${shapes[@]}" "${extra[@]}" \
        --db "$db" --json "$out/$op.json" --tag h200
    echo "$op: exit $? after $(( ($(date +%s%N) - start) / 1000000 )) ms"
done
if [ "${COST:-0}" = 1 ]; then
    for set in none core stalls full; do
        start=$(date +%s%N)
        build/kbench run softmax --variants all --metrics "$set" --db "$db" >/dev/null 2>&1
        rc=$?
        echo "cost: kbench run softmax --variants all --metrics $set: exit $rc," \
             "$(( ($(date +%s%N) - start) / 1000000 )) ms"
    done
fi
if [ "${NCU_CHECK:-0}" = 1 ]; then
    build/kbench run softmax --variants "${NCU_VARIANTS:-all}" --dtype fp32,bf16 \
        --shape rows=32768,cols=4096 --metrics core --db "$db" --json /tmp/ncu_base.json \
        >/dev/null 2>&1
    cp /tmp/ncu_base.json "$out/ncu_base.json"
    bash tests/gpu/ncu_compare.sh build/kbench /tmp/ncu_base.json
    echo "ncu_compare: exit $?"
fi
[ "${TESTS:-1}" = 0 ] && exit 0
bash tests/run.sh build >"$out/tests.log" 2>&1
echo "tests: $(tail -n 1 "$out/tests.log")"
grep -E 'FAIL|ERROR|skipping|copy bandwidth|SM clock|GPU cases|copy of|fused softmax' \
    "$out/tests.log" | head -40
