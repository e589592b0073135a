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
# Which launches are compared. kbench counts every byte a kernel writes: its
# count does not depend on what the L2 held before (tests/gpu/counters_probe
# checks a copy from a clean, a dirty and a steady L2). An ncu range ends when
# the kernel does, so lines the kernel leaves dirty in the L2 are not in it,
# and lines an earlier kernel left dirty are, when they are evicted. The two
# agree in the steady state, where a kernel follows a launch of itself: it
# writes back as much of its predecessor's output as it leaves of its own.
# So ncu runs with --cache-control none and profiles the fill, flush and
# softmax kernels of one kbench run (fill, check launch, warm-ups, then flush
# and sample, three times); judged are the launches that directly follow a
# whole launch of the same variant (the warm-ups). The launches that follow
# kbench's L2 flush (a read-only sweep: a clean L2) are printed beside them,
# not judged: there ncu counts about the dirty residue less.
#
# Environment: NCU (default: ncu on PATH, else the newest Nsight Compute found),
# NCU_CACHE_CONTROL (none | all, default none; with all, ncu flushes and
# invalidates the caches before every launch and every launch is judged:
# writes then come out low by the residue, expect OUT), KEEP=1 keeps the logs.
#
# kbench runs each case in a child process, hence --target-processes all; each
# run holds one variant, so the kernel name filter picks its kernels.
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
cache=${NCU_CACHE_CONTROL:-none}
case $cache in all | none) ;; *) echo "NCU_CACHE_CONTROL must be none or all" >&2; exit 2 ;; esac

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

# calibrated ceilings first, outside ncu, so no case run calibrates under it
"$kbench" calibrate --db "$work/kbench.db" >"$work/calibrate.log" 2>&1 || {
    echo "kbench calibrate failed:" >&2
    tail -n 20 "$work/calibrate.log" >&2
    exit 3
}

# runs ncu over one case: three samples, each after kbench's L2 flush
run_ncu() {
    local v=$1 d=$2 shape=$3 log=$4
    "$ncu" --target-processes all --clock-control none --cache-control "$cache" \
        --metrics "$metrics" -k 'regex:^(softmax_|flush_kernel|fill_)' \
        --print-kernel-base function --print-units base --page raw --csv --log-file "$log" \
        "$kbench" run softmax --variants "$v" --metrics none --min-samples 3 --max-samples 3 \
        --shape "$shape" --dtype "$d" --db "$work/kbench.db" </dev/null >"$log.out" 2>&1
}

status=0
while read -r v d shape; do
    log="$work/ncu_${v}_${d}.csv"
    if ! run_ncu "$v" "$d" "$shape" "$log" || ! grep -q '"softmax_' "$log"; then
        echo "ncu run failed or profiled no softmax kernel for $v $d $shape:" >&2
        tail -n 20 "$log" "$log.out" >&2
        status=3
        continue
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
        if number(r.get("ID", "")) is not None:
            rows.append(r)
rows.sort(key=lambda r: number(r["ID"]))
# launch order per process (kbench runs each case in a child)
procs = {}
for r in rows:
    procs.setdefault(r.get("Process ID", ""), []).append(r)
seen = sorted({base(r.get("Kernel Name", "")) for r in rows})

def ncu_name(name):
    # kbench may name a launch by its configuration (softmax_fused_regs_b256_...),
    # ncu by the function (softmax_fused_regs): the longest function name that
    # prefixes kbench's
    pre = [n for n in seen if base(name).startswith(n)]
    return max(pre, key=len) if pre else None

def launches(seq, j):
    """ncu rows of kernel j of the variant whose kernels are seq: (steady, after_flush)."""
    nk, steady, flushed = len(seq), [], []
    for order in procs.values():
        names = [base(r.get("Kernel Name", "")) for r in order]
        for i, r in enumerate(order):
            if names[i] != seq[j]:
                continue
            first = i - j  # the row of this launch's first kernel
            if first < 0 or names[first:i + 1] != seq[:j + 1]:
                continue
            if cache == "all":
                steady.append(r)  # every launch starts from flushed caches
            elif first >= nk and names[first - nk:first] == seq:
                steady.append(r)
            elif first >= 1 and names[first - 1] == "flush_kernel":
                flushed.append(r)
    return steady, flushed

def values(got, col):
    return [x for x in (number(g.get(col, "")) for g in got) if x is not None]

shape_of = lambda r: ",".join(f"{k}={v}" for k, v in r["shape"].items())
res = [r for r in json.load(open(report))["results"]
       if r.get("op") == "softmax" and r["variant"] == variant and r["dtype"] == dtype
       and shape_of(r) == shape]
bad = 0
which = "every launch (caches flushed before each)" if cache == "all" else \
    "launches that follow a launch of the same variant"
print(f"\n{variant} {dtype} {shape}  (ncu --cache-control {cache}; judged: {which})")
print(f"  {'kernel':<30} {'quantity':<18} {'kbench':>16} {'ncu median':>16} "
      f"{'ncu min..max (n)':>31} {'diff':>10}  verdict")
for r in res:
    kernels = r.get("kernels", [])
    seq = [ncu_name(k.get("name", "")) for k in kernels]
    for j, k in enumerate(kernels):
        name = k.get("name", "")
        got, flushed = launches(seq, j) if seq[j] else ([], [])
        m = k.get("metrics") or {}
        if not got:
            print(f"  {name:<30} no judged ncu launch of this kernel "
                  f"(ncu saw: {', '.join(seen) or 'none'})")
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
            vals = values(got, col)
            if not vals:
                print(f"  {name:<30} {label:<18} ncu gave no {col}")
                bad += 1
                continue
            med = statistics.median(vals)
            rng = f"{min(vals):{fmt}}..{max(vals):{fmt}} ({len(vals)})"
            if kb is None:
                print(f"  {name:<30} {label:<18} {'(none)':>16} {med:>16{fmt}} {rng:>31} "
                      f"{'':>10}  {'MISSING' if kind else '-'}")
                bad += kind is not None
                continue
            kb = float(kb)
            if kind == "abs":
                diff = kb - med
                ok, dtxt = abs(diff) <= lim, f"{diff:+.2f}"
            else:
                diff = 100.0 * (kb - med) / med if med else float("inf")
                ok, dtxt = kind is None or abs(diff) <= lim, f"{diff:+.2f}%"
            verdict = "-" if kind is None else ("ok" if ok else "OUT")
            bad += not ok
            print(f"  {name:<30} {label:<18} {kb:>16{fmt}} {med:>16{fmt}} {rng:>31} {dtxt:>10}  "
                  f"{verdict}")
        for label, col in (("read (flushed)", READ), ("written (flushed)", WRITE)):
            vals, kb = values(flushed, col), m.get(READ if col == READ else WRITE)
            if vals and kb is not None:
                med = statistics.median(vals)
                rng = f"{min(vals):.0f}..{max(vals):.0f} ({len(vals)})"
                print(f"  {name:<30} {label:<18} {float(kb):>16.0f} {med:>16.0f} {rng:>31} "
                      f"{100.0 * (float(kb) - med) / med:>+9.2f}%  (not judged)")
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
