#!/usr/bin/env bash
# ncu_compare.sh - checks kbench's counters against Nsight Compute on the GPU
# machine. For every softmax result in a kbench JSON report (made with
# `kbench run softmax --metrics core ...`), it runs the same variant, dtype and
# shape under ncu with kbench's own counters off, and prints per variant and
# kernel kbench's value next to ncu's: DRAM bytes read and written (within 2%),
# achieved occupancy (within 3 points), registers per thread (equal) and
# duration (shown, not judged: both are taken under the profiler).
#
#   tests/gpu/ncu_compare.sh KBENCH REPORT.json
#
# Environment: NCU (default: ncu on PATH, else /usr/local/cuda/bin/ncu),
# NCU_CACHE_CONTROL (all | none, default all: ncu flushes the caches before
# each kernel; kbench profiles with the L2 as its own previous launch left it,
# so DRAM writes may differ by up to the L2 size; with none, ncu's warm-up
# launches see that same steady state), KEEP=1 keeps the ncu logs.
#
# kbench runs each case in a child process, hence --target-processes all. The
# kernels are picked by the NVTX range kbench/softmax/<variant> and the kernel
# name prefix softmax_ (ncu also sees the fill, poison and flush kernels); when
# the NVTX filter matches nothing (ncu reads '/' in a push/pop range filter as
# nesting), the run is repeated with the name filter alone, which suffices as
# each run holds one variant. ncu profiles every launch of a kernel (the
# checked launch, warm-ups, the sample); its median is compared.
# Exit: 0 all within limits, 1 some value out of limits, 2 usage, 3 a run failed.
set -uo pipefail

usage() {
    echo "usage: $0 KBENCH REPORT.json" >&2
    exit 2
}
[ $# -eq 2 ] || usage
kbench=$1
report=$2
[ -x "$kbench" ] || { echo "not an executable: '$kbench'" >&2; exit 2; }
[ -r "$report" ] || { echo "cannot read report '$report'" >&2; exit 2; }
ncu=${NCU:-$(command -v ncu || ls -d /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu \
    /usr/local/cuda/nsight-compute*/ncu 2>/dev/null | tail -n 1)}
[ -x "$ncu" ] || { echo "ncu not found (set NCU)" >&2; exit 3; }
cache=${NCU_CACHE_CONTROL:-all}
case $cache in all | none) ;; *) echo "NCU_CACHE_CONTROL must be all or none" >&2; exit 2 ;; esac

work=$(mktemp -d /tmp/ncu_compare.XXXXXX)
# shellcheck disable=SC2317 # run by the trap
cleanup() {
    if [ "${KEEP:-0}" = 1 ]; then echo "logs kept in $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

metrics=dram__bytes_read.sum,dram__bytes_write.sum
metrics+=,sm__warps_active.avg.pct_of_peak_sustained_active
metrics+=,launch__registers_per_thread,gpu__time_duration.sum

# the cases: variant, dtype, shape (k=v,k=v) of every softmax result with kernels
python3 - "$report" >"$work/cases.txt" <<'EOF' || { echo "cannot read cases from '$report'" >&2; exit 2; }
import json, sys
rep = json.load(open(sys.argv[1]))
for r in rep.get("results", []):
    if r.get("op") != "softmax" or r.get("status") != "ok" or not r.get("kernels"):
        continue
    shape = ",".join(f"{k}={v}" for k, v in r["shape"].items())
    print(r["variant"], r["dtype"], shape)
EOF
[ -s "$work/cases.txt" ] || { echo "no softmax results with kernels in '$report'" >&2; exit 2; }

# runs ncu over one case; $5 = 1 to filter by NVTX range
run_ncu() {
    local v=$1 d=$2 shape=$3 log=$4 nvtx=$5
    local filter=()
    [ "$nvtx" = 1 ] && filter=(--nvtx --nvtx-include "kbench/softmax/$v/")
    "$ncu" --target-processes all --clock-control none --cache-control "$cache" \
        --metrics "$metrics" "${filter[@]}" -k regex:^softmax_ \
        --print-kernel-base function --print-units base --page raw --csv --log-file "$log" \
        "$kbench" run softmax --variants "$v" --metrics none --min-samples 1 --max-samples 1 \
        --shape "$shape" --dtype "$d" --db "$work/kbench.db" </dev/null >"$log.out" 2>&1
}

status=0
while read -r v d shape; do
    log="$work/ncu_${v}_${d}.csv"
    if ! run_ncu "$v" "$d" "$shape" "$log" 1; then
        echo "ncu run failed for $v $d $shape:" >&2
        tail -n 20 "$log" "$log.out" >&2
        status=3
        continue
    fi
    if ! grep -q '"softmax_' "$log"; then
        echo "note: the NVTX filter matched no kernel for $v $d; filtering by kernel name only"
        if ! run_ncu "$v" "$d" "$shape" "$log" 0; then
            echo "ncu run failed for $v $d $shape:" >&2
            tail -n 20 "$log" "$log.out" >&2
            status=3
            continue
        fi
    fi
    python3 - "$report" "$log" "$v" "$d" "$shape" "$cache" <<'EOF'
import csv, json, statistics, sys
report, log, variant, dtype, shape, cache = sys.argv[1:7]
READ, WRITE = "dram__bytes_read.sum", "dram__bytes_write.sum"
OCC, REGS, DUR = ("sm__warps_active.avg.pct_of_peak_sustained_active",
                  "launch__registers_per_thread", "gpu__time_duration.sum")

def base(name):
    name = name.strip()
    if name.startswith("void "):
        name = name[5:]
    for stop in "<(":
        name = name.split(stop, 1)[0]
    return name.strip()

def number(s):
    try:
        return float(str(s).replace(",", ""))
    except ValueError:
        return None

# ncu's raw page: a header row starting with "ID", a units row, one row per launch
lines = [l for l in open(log, encoding="utf-8", errors="replace") if not l.startswith("==")]
start = next((i for i, l in enumerate(lines) if l.startswith('"ID"')), None)
rows = []
if start is not None:
    for r in csv.DictReader(lines[start:]):
        if number(r.get("ID", "")) is None:
            continue
        rows.append(r)
ncu = {}
for r in rows:
    ncu.setdefault(base(r.get("Kernel Name", "")), []).append(r)

shape_of = lambda r: ",".join(f"{k}={v}" for k, v in r["shape"].items())
res = [r for r in json.load(open(report))["results"]
       if r.get("op") == "softmax" and r["variant"] == variant and r["dtype"] == dtype
       and shape_of(r) == shape]
bad = 0
print(f"\n{variant} {dtype} {shape}  (ncu cache control: {cache})")
print(f"  {'kernel':<30} {'quantity':<18} {'kbench':>16} {'ncu median':>16} "
      f"{'ncu min..max':>27} {'diff':>10}  verdict")
for r in res:
    for k in r.get("kernels", []):
        name = k.get("name", "")
        got = ncu.get(base(name), [])
        if not got:
            # kbench names a launch by its configuration (softmax_fused_regs_b256_...);
            # ncu by the function (softmax_fused_regs): take the longest function
            # name that prefixes kbench's
            pre = [n for n in ncu if base(name).startswith(n)]
            got = ncu[max(pre, key=len)] if pre else []
        m = k.get("metrics") or {}
        if not got:
            print(f"  {name:<30} no ncu row for this kernel (ncu saw: {', '.join(ncu) or 'none'})")
            bad += 1
            continue
        checks = [
            ("DRAM read (B)", m.get(READ), READ, "pct", 2.0, ".0f"),
            ("DRAM written (B)", m.get(WRITE), WRITE, "pct", 2.0, ".0f"),
            ("occupancy (%)", m.get(OCC), OCC, "abs", 3.0, ".2f"),
            ("registers", k.get("registers"), REGS, "abs", 0.0, ".0f"),
            ("duration (ns)", m.get(DUR), DUR, None, None, ".0f"),
        ]
        for label, kb, col, kind, lim, fmt in checks:
            vals = [x for x in (number(g.get(col, "")) for g in got) if x is not None]
            if not vals:
                print(f"  {name:<30} {label:<18} ncu gave no {col}")
                bad += 1
                continue
            med = statistics.median(vals)
            rng = f"{min(vals):{fmt}}..{max(vals):{fmt}}"
            if kb is None:
                print(f"  {name:<30} {label:<18} {'(none)':>16} {med:>16{fmt}} {rng:>27} "
                      f"{'':>10}  {'MISSING' if kind else '-'}")
                bad += kind is not None
                continue
            kb = float(kb)
            if kind == "pct":
                diff = 100.0 * (kb - med) / med if med else float("inf")
                ok, dtxt = abs(diff) <= lim, f"{diff:+.2f}%"
            elif kind == "abs":
                diff = kb - med
                ok, dtxt = abs(diff) <= lim, f"{diff:+.2f}"
            else:
                diff = 100.0 * (kb - med) / med if med else float("inf")
                ok, dtxt = True, f"{diff:+.2f}%"
            verdict = "-" if kind is None else ("ok" if ok else "OUT")
            bad += not ok
            print(f"  {name:<30} {label:<18} {kb:>16{fmt}} {med:>16{fmt}} {rng:>27} {dtxt:>10}  "
                  f"{verdict}")
sys.exit(1 if bad else 0)
EOF
    rc=$?
    [ $rc -ne 0 ] && [ $status -eq 0 ] && status=1
done <"$work/cases.txt"

case $status in
0) echo "ncu_compare: every value within its limit" ;;
1) echo "ncu_compare: some values out of their limits (OUT/MISSING above)" ;;
*) echo "ncu_compare: some ncu runs failed" ;;
esac
exit $status
