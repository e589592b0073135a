#!/usr/bin/env bash
# The checks of the hardening work that need a GPU, run on the GPU machine over
# a copy of the work tree with build/ carried from the build machine. Each check
# prints "ok: ..." or "FAIL: ..."; the script exits 1 when one failed.
#   tests/gpu/hardening.sh
# Checks: the driver is found (kbench devices, dlopen of libcuda.so.1); run
# refuses a store that is a directory only after finding the GPU, and creates
# nothing; the same --shape twice runs its cases once; the table of a run with
# stall counters fits 100 columns with the top stalls under it, and --wide
# shows every column; racing runs into one new store all keep their runs.
set -u
bin=${KBENCH_BIN:-build/kbench}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
bad=0
ok() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; bad=1; }
# widest: the widest line of stdin in characters
widest() { python3 -c 'import sys; print(max((len(l) for l in sys.stdin.read().split("\n")), default=0))'; }

if "$bin" devices >"$work/devices" 2>&1; then ok "devices: $(head -1 "$work/devices")"
else
    echo "skipping: these checks need a GPU ($(cat "$work/devices"))"
    exit 0
fi

mkdir "$work/adir"
"$bin" run softmax --variants naive --shape rows=64,cols=64 --metrics none --db "$work/adir" \
    >/dev/null 2>"$work/err"
rc=$?
if [ $rc -eq 3 ] && grep -q "is a directory" "$work/err"; then ok "a directory is refused as a store"
else fail "directory store: exit $rc, $(cat "$work/err")"; fi

"$bin" run softmax --variants naive,fused --shape rows=4096,cols=4096 --shape cols=4096,rows=4096 \
    --metrics stalls --db "$work/k.db" >"$work/run.txt" 2>"$work/run.err"
rc=$?
n=$(grep -cE '^(naive|fused) ' "$work/run.txt")
if [ $rc -eq 0 ] && [ "$n" -eq 2 ]; then ok "the same shape twice ran once (2 rows)"
else fail "duplicate shapes: exit $rc, $n rows; $(cat "$work/run.err")"; fi
w=$(widest <"$work/run.txt")
if [ "$w" -le 100 ]; then ok "run's table is $w columns wide"
else fail "run's table is $w columns wide"; cat "$work/run.txt"; fi
if grep -q "top stalls" "$work/run.txt"; then
    ok "the top stalls are shown (a column, or a line under the table)"
else fail "no top stalls in the table or under it"; cat "$work/run.txt"; fi
"$bin" report latest --wide --db "$work/k.db" >"$work/wide.txt"
if grep -q "kernels  regs  spill" "$work/wide.txt" && grep -q "DRAM GB/s" "$work/wide.txt"; then
    ok "--wide shows every column"
else fail "--wide lacks columns"; cat "$work/wide.txt"; fi

# racing runs into one new store: every run is kept
for i in 1 2 3 4; do
    "$bin" run softmax --variants naive --shape rows=256,cols=256 --metrics none \
        --db "$work/race/k.db" >/dev/null 2>"$work/race$i.err" &
done
wait
runs=$("$bin" report --runs --db "$work/race/k.db" 2>/dev/null | tail -n +2 | wc -l)
if [ "$runs" -eq 4 ]; then ok "4 racing runs, 4 stored"
else fail "racing runs: $runs stored; $(cat "$work"/race*.err)"; fi

exit $bad
