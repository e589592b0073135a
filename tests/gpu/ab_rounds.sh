#!/usr/bin/env bash
# An A/B of one variant's alternatives chosen by environment (flash-wgmma's
# KBENCH_FLASH_WGMMA_CONFIG, layernorm's KBENCH_LAYERNORM_WARP, ...), in
# interleaved rounds, each arm in a process of its own, beside a peer variant
# (cuDNN, cuBLAS) in the same rounds when PEER names one: the method behind
# the A/B figures in the variants' headers (docs/method.md, "Clocks and the
# power cap").
#   tests/gpu/ab_rounds.sh OP VARIANT ARM... -- SHAPE...     on the GPU machine
#   tests/gpu/ab_rounds.sh --summary DIR                      DIR's ab-*.json
# An ARM is NAME=VALUE, several joined by '+', set for that arm's runs, or '-'
# for none. Each round runs every arm in turn, then PEER once, all at the
# shapes given, warmed up for WARMUP seconds a case (default 1) with the
# counters off, into $OUT/ab-R-I.json (R the round, I the arm's index, or
# "peer"); $OUT/ab-arms.txt names the arms. ROUNDS (default 2); DTYPE, when
# set, is kbench's --dtype; EXTRA_ARGS, more of kbench run's options for every
# run (--no-check where the checks run apart); DRY_RUN=1 prints the commands
# and runs nothing.
# The summary prints a row per dtype and shape with each arm's (and the
# peer's) figure in every round: flop per SM cycle for a compute-bound case
# (at the SM clock read right after its samples, so that the clock the power
# cap allowed that process moves it less than the time), % of the copy
# bandwidth for a memory-bound one; then each arm's mean over the first arm's,
# and the peer's.
# Example: PEER=cudnn DTYPE=bf16 tests/gpu/ab_rounds.sh attention flash-wgmma \
#   KBENCH_FLASH_WGMMA_CONFIG=10 KBENCH_FLASH_WGMMA_CONFIG=14 -- \
#   batch=4,heads=16,seq=4096,dim=128 batch=1,heads=16,seq=16384,dim=128
set -uo pipefail
kbench=${KBENCH_BIN:-build/kbench}
usage() {
    echo "usage: $0 OP VARIANT ARM... -- SHAPE... | --summary DIR" >&2
    exit 2
}

summary() { # dir
    local dir=$1
    [ -e "$dir/ab-arms.txt" ] || { echo "$0: no ab-arms.txt in $dir" >&2; return 1; }
    python3 - "$dir" <<'EOF'
import glob, json, os, statistics, sys

d = sys.argv[1]
arms = [l.rstrip("\n").split(" ", 1) for l in open(os.path.join(d, "ab-arms.txt")) if l.strip()]
names = {a[0]: a[1] if len(a) > 1 else "-" for a in arms}
cols = [a[0] for a in arms]
fig, unit = {}, {}
for f in sorted(glob.glob(os.path.join(d, "ab-*-*.json"))):
    rnd, arm = os.path.basename(f)[3:-5].split("-", 1)
    try:
        rep = json.load(open(f))
        sms, copy = rep["device"]["sms"], rep["device"]["ceilings"]["copy_gbps"]
    except (OSError, ValueError, KeyError, TypeError):
        print(f"{f}: not a kbench report, left out")
        continue
    if arm == "peer":
        names["peer"] = "peer: " + ",".join(sorted({r["variant"] for r in rep["results"]}))
    for r in rep["results"]:
        if r["status"] != "ok":
            continue
        t, m = r["time"], r["model"]
        key = (r["dtype"], ",".join(f"{k}={v}" for k, v in r["shape"].items()))
        if r.get("bound") == "compute" and t.get("sm_clock_mhz"):
            v = m["flops"] / (t["median_us"] * 1e-6) / (t["sm_clock_mhz"] * 1e6) / sms
            unit[key] = "flop/SM cycle"
        else:
            v = 100.0 * m["bytes"] / (t["median_us"] * 1e3) / copy
            unit[key] = "% copy"
        fig.setdefault(key, {}).setdefault(arm, []).append((int(rnd), v))
if not fig:
    sys.exit(f"{sys.argv[0]}: no results in {d}")
if "peer" in names:
    cols.append("peer")
fmt = lambda u, v: f"{v:.0f}" if u == "flop/SM cycle" else f"{v:.1f}"
print("| dtype | shape | figure | " + " | ".join(names[c] for c in cols) + " |")
print("|---|---|---|" + "---:|" * len(cols))
for key in sorted(fig):
    row = [", ".join(fmt(unit[key], v) for _, v in sorted(fig[key].get(c, []))) or "-"
           for c in cols]
    print(f"| {key[0]} | {key[1]} | {unit[key]} | " + " | ".join(row) + " |")
print()
base = cols[0]
for key in sorted(fig):
    b = fig[key].get(base)
    if not b:
        continue
    mb = statistics.fmean(v for _, v in b)
    parts = [f"{names[c]}: {statistics.fmean(v for _, v in fig[key][c]) / mb:.3f}"
             for c in cols[1:] if fig[key].get(c)]
    print(f"{key[0]} {key[1]}: over {names[base]}, the means of the rounds: " + "; ".join(parts))
EOF
}

[ $# -ge 1 ] || usage
if [ "$1" = --summary ]; then
    [ $# -eq 2 ] || usage
    summary "$2"
    exit $?
fi
[ $# -ge 5 ] || usage
op=$1 var=$2
shift 2
arms=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do
    case $1 in
    -) ;;
    *=*) ;;
    *) echo "$0: arm '$1': NAME=VALUE[+NAME=VALUE...] or -" >&2; exit 2 ;;
    esac
    arms+=("$1")
    shift
done
[ $# -ge 2 ] && [ "${#arms[@]}" -ge 2 ] || usage
shift
sh=()
for s in "$@"; do sh+=(--shape "$s"); done
out=${OUT:-/tmp/kbench-out}
rounds=${ROUNDS:-2}
case $rounds in '' | *[!0-9]* | 0) echo "$0: ROUNDS '$rounds': a count of 1 or more" >&2; exit 2 ;; esac
extra=(--warmup "${WARMUP:-1}" --metrics none --db "$out/ab.db")
read -r -a more <<<"${EXTRA_ARGS:-}"
extra+=("${more[@]}")
[ -n "${DTYPE:-}" ] && extra+=(--dtype "$DTYPE")
dry=${DRY_RUN:-0}
if [ "$dry" != 1 ]; then
    mkdir -p "$out" || exit 1
    for i in "${!arms[@]}"; do echo "$i ${arms[$i]}"; done >"$out/ab-arms.txt"
fi
status=0
run() { # json, env..., -- , command...
    local json=$1 env=()
    shift
    while [ "$1" != -- ]; do env+=("$1"); shift; done
    shift
    if [ "$dry" = 1 ]; then
        echo "${env[*]}${env[*]:+ }$* --json $json"
        return
    fi
    env "${env[@]}" "$@" --json "$json" >"${json%.json}.txt" 2>&1 ||
        { echo "$0: ${env[*]} $*: exit $?" >&2; status=1; }
}
for r in $(seq 1 "$rounds"); do
    for i in "${!arms[@]}"; do
        env=()
        [ "${arms[$i]}" != - ] && IFS=+ read -r -a env <<<"${arms[$i]}"
        run "$out/ab-$r-$i.json" "${env[@]}" -- "$kbench" run "$op" --variants "$var" "${sh[@]}" \
            "${extra[@]}"
    done
    [ -n "${PEER:-}" ] &&
        run "$out/ab-$r-peer.json" -- "$kbench" run "$op" --variants "$PEER" "${sh[@]}" "${extra[@]}"
done
[ "$dry" = 1 ] && exit 0
summary "$out" || status=1
exit $status
