#!/usr/bin/env bash
# The two timing modes side by side, case by case, as the markdown table of
# docs/method.md ("Cold and batch"): for every ok result of the reports, the
# cold median, the batch time, their ratio, and each one's % of the ceiling
# measured the same way, with the result's flags. Then, per operator, the
# spread of batch / cold over its ok results that are not `l2_resident` (the
# list under the table there: lowest .. highest, median, how many), and the
# cases at the two ends.
#   tests/gpu/timing_modes.sh REPORT.json...    reports written by a kbench
#                                               that measures both times
#   tests/gpu/timing_modes.sh --run [OP...]     on the GPU machine: first run
#       the ladders at the committed reports' shapes (tests/gpu/h200.sh, tests
#       left out; default: softmax layernorm attention), reports in $OUT
# Needs python3 (for the CSV); reads the reports through `kbench report
# --format csv`, so the figures are the result model's, not recomputed here.
set -euo pipefail
kbench=${KBENCH_BIN:-build/kbench}
if [ "${1:-}" = --run ]; then
    shift
    out=${OUT:-/tmp/kbench-out}
    if [ $# -eq 0 ]; then ops=(softmax layernorm attention); else ops=("$@"); fi
    TESTS=0 OUT="$out" bash tests/gpu/h200.sh "${ops[@]}" >&2
    set --
    for op in "${ops[@]}"; do set -- "$@" "$out/$op.json"; done
fi
[ $# -ge 1 ] || { echo "usage: $0 REPORT.json... | --run [OP...]" >&2; exit 2; }
csv=$(mktemp)
py=$(mktemp)
trap 'rm -f "$csv" "$py"' EXIT
for r in "$@"; do
    "$kbench" report "$r" --format csv >>"$csv"
done
cat >"$py" <<'EOF'
import csv, io, statistics, sys

# one header per report: keep the first
lines, seen = [], False
for line in open(sys.argv[1], newline="").read().splitlines(keepends=True):
    if line.startswith("run_id,"):
        if seen:
            continue
        seen = True
    lines.append(line)


def num(v):
    try:
        return float(v)
    except ValueError:
        return None


def us(v):
    if v is None:
        return "-"
    return "%.3f ms" % (v / 1000) if v >= 1000 else "%.1f us" % v


def pct(v):
    return "-" if v is None else "%.1f%%" % v


print("| op | dtype | shape | variant | cold median | batch | batch / cold "
      "| % ceiling cold | % ceiling batch | flags |")
print("|---|---|---|---|---:|---:|---:|---:|---:|---|")
missing = 0
spread = {}  # op -> [(batch / cold, case)] over the results that are not l2_resident
for r in csv.DictReader(io.StringIO("".join(lines))):
    if r["status"] != "ok":
        continue
    cold, batch = num(r["median_us"]), num(r["batch_us"])
    if batch is None:
        missing += 1
    ratio = "%.3f" % (batch / cold) if cold and batch else "-"
    cells = [r["op"], r["dtype"], r["shape"], r["variant"], us(cold), us(batch), ratio,
             pct(num(r["pct_peak"])), pct(num(r["pct_peak_batch"])),
             r["flags"].replace(",", ", ")]
    print("| " + " | ".join(cells) + " |")
    if cold and batch and "l2_resident" not in r["flags"].split(","):
        case = "%s %s %s (%s cold, %s batch)" % (r["variant"], r["dtype"], r["shape"], us(cold),
                                                 us(batch))
        spread.setdefault(r["op"], []).append((batch / cold, case))
if spread:
    print()
    for op, v in spread.items():
        print("- %s: batch / cold %.3f .. %.3f, median %.3f over %d results"
              % (op, min(v)[0], max(v)[0], statistics.median(x for x, _ in v), len(v)))
    print()
    for op, v in spread.items():
        print("%s: lowest %s; highest %s" % (op, min(v)[1], max(v)[1]))
if missing:
    print("%d ok result(s) without a batch time: reports of an older kbench" % missing,
          file=sys.stderr)
EOF
python3 "$py" "$csv"
