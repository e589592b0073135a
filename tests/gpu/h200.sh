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
#
# SWEEP=1 adds to softmax and layernorm the shape sweep (the sweep view of
# `kbench report`): cols in {32, 33, 128, 768, 1024,
# 4096, 16384, 65536, 262144, 1048576} with rows = max(1, SWEEP_BYTES / (cols x
# element size)) in each dtype, plus rows=3, cols=262144 and rows=4099,
# cols=3001 in both, in the same run as the report's own shapes, so that one
# JSON holds them all. A sweep shape names its dtype (--shape
# dtype=bf16,rows=...), so that rows follow the element size: SWEEP_BYTES
# (default 512 MB) is x's size at every point, fp32 and bf16 alike, and the
# fp32 point at cols=4096 is the report's own 32768x4096 (bf16's is 65536 rows).
# Every variant runs, naive included:
# naive is a thread per row, about a second a launch at cols=1048576 (128
# rows), so each of its longest cases takes some 20 s for its 10 cold and 10
# batch samples; every case's sampling stops after SWEEP_TIMEOUT seconds
# (default 2, against 5) once it has its 10 samples, so that a small, noisy
# case (rows=3) does not sample for 10 s. About 150-180 cases an operator:
# run one operator per call (SWEEP=1 TESTS=0 tests/gpu/h200.sh softmax, then
# layernorm) to keep each call within ten minutes.
# PEERS=1 times PyTorch right after each softmax or layernorm report, at that
# report's shapes (bench/torch_peers.py --report), into $OUT/torch_peers_OP.json:
# the same GPU and session as the report, so that bench/sweep_table.py may set
# the two side by side. torch.compile builds each shape once (some seconds a
# shape): with SWEEP=1, PEERS_COMPILE=0 (eager only) keeps a call short.
# PEERS_TIMEOUT=S stops the peers after S seconds (timeout(1)): torch_peers.py
# rewrites its JSON after each case, so it then holds the cases finished and
# says "complete": false (bench/sweep_table.py says so beside its table).
# The compute-bound operators (attention, matmul) warm each case up for
# COMPUTE_WARMUP seconds (default 1; 0 keeps kbench's own 0.05 s), so that
# their samples meet the clock the power cap holds under a sustained load
# (docs/method.md, "Clocks and the power cap").
# DRY_RUN=1 prints the kbench commands it would run, and runs nothing.
set -uo pipefail
out=${OUT:-/tmp/kbench-out}
db="$out/kbench.db"
log="$out/session.log"
ops=("${@:-softmax}")
dry=${DRY_RUN:-0}
sweep=${SWEEP:-0}
sweep_bytes=${SWEEP_BYTES:-536870912}
# The sweep's --shape options for the comma list of dtypes $1: per dtype, cols
# from short to long rows, rows keeping x at sweep_bytes (at least one row);
# then rows=3 on 262144 and the unaligned 4099x3001 in every dtype.
# bench/torch_peers.py times PyTorch at the report's cases.
sweep_shapes() {
    local c r d size
    for d in ${1//,/ }; do
        case $d in fp32) size=4 ;; *) size=2 ;; esac
        for c in 32 33 128 768 1024 4096 16384 65536 262144 1048576; do
            r=$(( sweep_bytes / (c * size) ))
            [ "$r" -lt 1 ] && r=1
            printf -- '--shape\ndtype=%s,rows=%d,cols=%d\n' "$d" "$r" "$c"
        done
    done
    printf -- '--shape\nrows=3,cols=262144\n--shape\nrows=4099,cols=3001\n'
}
if [ "$dry" = 1 ]; then
    echo "dry run: the commands of tests/gpu/h200.sh ${ops[*]} (nothing runs)"
else
    mkdir -p "$out"
    exec > >(tee -a "$log") 2>&1
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw \
        --format=csv
    build/kbench calibrate --db "$db"
fi
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
    warm=0
    if [ "$op" = attention ]; then
        # the ladder, the Hopper rung and the vendor row at the shapes of the
        # acceptance: D=128 and D=64 (H=32), S=16384, causal and not, two
        # sequence lengths no tile divides, and a grid of fewer work tiles
        # than SMs (B=1 H=2: flash-wgmma's ST); at least 5 samples (naive
        # takes seconds a launch at S=16384)
        shapes=(--shape batch=4,heads=16,seq=4096,dim=128 --shape batch=4,heads=16,seq=4096,dim=128,causal=1
                --shape batch=4,heads=32,seq=4096,dim=64 --shape batch=4,heads=32,seq=4096,dim=64,causal=1
                --shape batch=1,heads=16,seq=16384,dim=128 --shape batch=1,heads=16,seq=16384,dim=128,causal=1
                --shape batch=1,heads=5,seq=1000,dim=128,causal=1 --shape batch=1,heads=2,seq=4097,dim=128,causal=1
                --shape batch=1,heads=2,seq=4096,dim=128)
        dtypes=bf16
        extra=(--min-samples 5)
        warm=1
    fi
    if [ "$op" = matmul ]; then
        # the report's shapes: the 4096 cube and its epilogue, no tile
        # dividing, the decode-like (memory-bound) m=16, and the 8192 cube;
        # fp32 and bf16 cross every shape (one JSON). The 8192 cube comes
        # last: minutes of it leave the power-capped GPU hot and its clocks
        # lower for a while, which would fall on the shapes after it (the
        # epilogue ran at 1620 MHz after it, the plain cube at 1969). At
        # least 5 samples: naive takes about 2 s a launch at 8192^3, so the
        # run stays within a few minutes.
        shapes=(--shape m=4096,n=4096,k=4096 --shape m=4096,n=4096,k=4096,epilogue=1
                --shape m=4095,n=4097,k=1000 --shape m=16,n=8192,k=8192
                --shape m=8192,n=8192,k=8192)
        extra=(--min-samples 5)
        warm=1
    fi
    cw=${COMPUTE_WARMUP:-1}
    [ "$warm" = 1 ] && [ "$cw" != 0 ] && extra+=(--warmup "$cw")
    if [ "$sweep" = 1 ] && { [ "$op" = softmax ] || [ "$op" = layernorm ]; }; then
        mapfile -t more < <(sweep_shapes "$dtypes")
        for s in "${more[@]}"; do  # each case once: fp32 32768x4096 is a point of the sweep
            [ "$s" = --shape ] && continue
            case " ${shapes[*]} " in *" $s "* | *" ${s#dtype=*,} "*) continue ;; esac
            shapes+=(--shape "$s")
        done
        extra=(--timeout "${SWEEP_TIMEOUT:-2}")
    fi
    cmd=(build/kbench run "$op" --variants all --dtype "$dtypes" "${shapes[@]}" "${extra[@]}"
         --db "$db" --json "$out/$op.json" --tag h200)
    peer=(python3 bench/torch_peers.py --ops "$op" --report "$out/$op.json"
          -o "$out/torch_peers_$op.json")
    [ "${PEERS_COMPILE:-1}" = 0 ] && peer+=(--no-compile)
    [ -n "${PEERS_TIMEOUT:-}" ] && peer=(timeout "$PEERS_TIMEOUT" "${peer[@]}")
    peers=0
    [ "${PEERS:-0}" = 1 ] && { [ "$op" = softmax ] || [ "$op" = layernorm ]; } && peers=1
    if [ "$dry" = 1 ]; then
        echo "${cmd[*]}"
        [ "$peers" = 1 ] && echo "${peer[*]}"
        continue
    fi
    start=$(date +%s%N)
    "${cmd[@]}"
    echo "$op: exit $? after $(( ($(date +%s%N) - start) / 1000000 )) ms"
    if [ "$peers" = 1 ]; then
        start=$(date +%s%N)
        "${peer[@]}"
        echo "$op PyTorch peers: exit $? after $(( ($(date +%s%N) - start) / 1000000 )) ms"
    fi
done
[ "$dry" = 1 ] && exit 0
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
