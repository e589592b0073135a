#!/usr/bin/env bash
# How a compute-bound comparison moves with the warm-up and from run to run on
# a power-capped GPU (docs/method.md, "Clocks and the power cap"): for each
# warm-up of WARMUPS (seconds, default "0 1"; 0 is kbench's own) and each of
# ROUNDS rounds (default 3), one `kbench run OP --variants A,B` at the shapes
# given, counters off, its report in $OUT/warm-W-R.json (W the warm-up, R the
# round); then the summary below.
#   tests/gpu/warmup_rounds.sh OP A,B SHAPE...      on the GPU machine
#   tests/gpu/warmup_rounds.sh --summary DIR A,B    the summary of DIR's
#                                                   warm-*.json
# The summary prints, a row per report and shape, A's and B's cold medians and
# the SM clocks read right after their samples, and B's time over A's (above
# 1: A faster); then per warm-up and shape the ratio's lowest and highest over
# the rounds. DRY_RUN=1 prints the kbench commands and runs nothing.
# Example: tests/gpu/warmup_rounds.sh matmul wgmma,cublas m=4096,n=4096,k=4096 \
#   m=4096,n=4096,k=4096,epilogue=1 m=8192,n=8192,k=8192
set -uo pipefail
kbench=${KBENCH_BIN:-build/kbench}
usage() {
    echo "usage: $0 OP A,B SHAPE... | --summary DIR A,B" >&2
    exit 2
}

summary() { # dir A,B
    local dir=$1 pair=$2 csv py
    case $pair in *,*) ;; *) usage ;; esac
    csv=$(mktemp)
    py=$(mktemp)
    trap 'rm -f "$csv" "$py"' RETURN
    local n=0
    for f in "$dir"/warm-*.json; do
        [ -e "$f" ] || continue
        local tag=${f##*/warm-}
        tag=${tag%.json}
        # the report's tag (warm-up-round) before each of its CSV lines, the
        # header once (that column "warm_round")
        "$kbench" report "$f" --format csv | sed "s/^/$tag,/" |
            { if [ "$n" -eq 0 ]; then sed '1s/^[^,]*,/warm_round,/'; else sed 1d; fi; } >>"$csv" ||
            return 1
        n=$((n + 1))
    done
    [ "$n" -gt 0 ] || { echo "$0: no warm-*.json in $dir" >&2; return 1; }
    cat >"$py" <<'EOF'
import csv, sys

a, b = sys.argv[2].split(",", 1)
res = {}
for r in csv.DictReader(open(sys.argv[1], newline="")):
    if r["status"] == "ok" and r["variant"] in (a, b):
        res[(r["warm_round"], r["shape"], r["variant"])] = (float(r["median_us"]),
                                                     float(r["sm_clock_mhz"] or "nan"))
print("| warm-up-round | shape | %s | MHz | %s | MHz | %s / %s time |" % (a, b, b, a))
print("|---|---|---:|---:|---:|---:|---:|")
spans = {}
for tag, shape in sorted({(k[0], k[1]) for k in res}):
    if (tag, shape, a) not in res or (tag, shape, b) not in res:
        continue
    (ta, ca), (tb, cb) = res[(tag, shape, a)], res[(tag, shape, b)]
    ratio = tb / ta
    spans.setdefault((tag.rsplit("-", 1)[0], shape), []).append(ratio)
    print("| %s | %s | %.1f us | %.0f | %.1f us | %.0f | %.3f |" % (tag, shape, ta, ca, tb, cb,
                                                                  ratio))
print()
for (w, shape), v in sorted(spans.items()):
    print("warm-up %s s, %s: %s / %s time %.3f .. %.3f over %d round(s)"
          % (w, shape, b, a, min(v), max(v), len(v)))
EOF
    python3 "$py" "$csv" "$pair"
}

[ $# -ge 1 ] || usage
if [ "$1" = --summary ]; then
    [ $# -eq 3 ] || usage
    summary "$2" "$3"
    exit $?
fi
[ $# -ge 3 ] || usage
op=$1 pair=$2
shift 2
sh=()
for s in "$@"; do sh+=(--shape "$s"); done
out=${OUT:-/tmp/kbench-out}
mkdir -p "$out"
status=0
for w in ${WARMUPS:-0 1}; do
    wa=()
    [ "$w" != 0 ] && wa=(--warmup "$w")
    for r in $(seq 1 "${ROUNDS:-3}"); do
        cmd=("$kbench" run "$op" --variants "$pair" "${sh[@]}" "${wa[@]}" --metrics none
             --db "$out/warm.db" --json "$out/warm-$w-$r.json")
        if [ "${DRY_RUN:-0}" = 1 ]; then
            echo "${cmd[*]}"
            continue
        fi
        "${cmd[@]}" >"$out/warm-$w-$r.txt" 2>&1 || { echo "$0: ${cmd[*]}: exit $?" >&2; status=1; }
    done
done
[ "${DRY_RUN:-0}" = 1 ] && exit 0
summary "$out" "$pair" || status=1
exit $status
