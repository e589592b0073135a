#!/usr/bin/env bash
# One look at the cudnn attention variant on a GPU machine, in one call: run
# in the repository root over a copy of the work tree with build/ carried from
# the build machine.
#   bash tests/gpu/cudnn_probe.sh [BUILD]        (default build)
# Prints which cuDNN the loader finds (version, the CUDA runtime it was built
# with, its file, and whether NVRTC is there for cuDNN's runtime-compiled
# engines), then runs the vendor row at a small causal shape with seq 1000 and
# at the default large shape, bf16 and fp16, with cuDNN's graph and engine
# choice printed (KBENCH_CUDNN_VERBOSE=1). When a case is not ok it runs that
# case again with cuDNN's own log at warning level. Then, for comparison: the
# SDPA_FWD operation (KBENCH_CUDNN_GRAPH=sdpa) at the large shape, and
# flash-tiled beside cudnn with core counters (the traced cuDNN kernels'
# registers, shared memory and counters). TESTS=1 also runs the GPU tests.
set -u
build=${1:-build}
kb=$build/kbench
db=/tmp/p.db
rc_all=0

section() { printf '\n==== %s\n' "$*"; }

section "GPU and cuDNN"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>&1
libs='libcudnn(_graph|_engines_precompiled|_engines_runtime_compiled)?\.so\.9 |libnvrtc\.so'
/sbin/ldconfig -p | grep -E "$libs" || echo "ldconfig lists no libcudnn*.so.9 / libnvrtc.so"
ls -l /usr/local/cuda/lib64/libcudnn.so.9 2>/dev/null ||
    echo "no libcudnn.so.9 in /usr/local/cuda/lib64"
python3 - <<'EOF' 2>&1 || echo "(python3 could not load libcudnn.so.9)"
import ctypes
lib = ctypes.CDLL("libcudnn.so.9")
lib.cudnnGetVersion.restype = ctypes.c_size_t
lib.cudnnGetCudartVersion.restype = ctypes.c_size_t
v = lib.cudnnGetVersion()
print("libcudnn.so.9 (default loader path): cuDNN %d.%d.%d, built with CUDA runtime %d"
      % (v // 10000, v // 100 % 100, v % 100, lib.cudnnGetCudartVersion()))
for line in open("/proc/self/maps"):
    if line.rstrip().endswith("/libcudnn.so.9"):
        print("  mapped:", line.split()[-1])
        break
EOF

section "cudnn: bf16 and fp16, causal seq 1000 and the default shape"
cmd=("$kb" run attention --variants cudnn --dtype bf16,fp16 --metrics none
     --shape batch=1,heads=2,seq=1000,dim=128,causal=1
     --shape batch=4,heads=16,seq=4096,dim=128 --db "$db")
echo "KBENCH_CUDNN_VERBOSE=1 ${cmd[*]}"
out=$(KBENCH_CUDNN_VERBOSE=1 "${cmd[@]}" 2>&1)
rc=$?
echo "$out"
echo "exit $rc"
[ "$rc" -eq 0 ] || rc_all=1
if echo "$out" | grep -qE '^cudnn +(skipped|failed|mismatch)'; then
    section "again with cuDNN's log (CUDNN_LOGLEVEL_DBG=2), small causal bf16 case"
    CUDNN_LOGLEVEL_DBG=2 CUDNN_LOGDEST_DBG=stderr KBENCH_CUDNN_VERBOSE=1 \
        "$kb" run attention --variants cudnn --dtype bf16 --metrics none \
        --shape batch=1,heads=2,seq=1000,dim=128,causal=1 --db "$db" 2>&1 | tail -n 150
    section "again with cuDNN's log, default shape bf16"
    CUDNN_LOGLEVEL_DBG=2 CUDNN_LOGDEST_DBG=stderr KBENCH_CUDNN_VERBOSE=1 \
        "$kb" run attention --variants cudnn --dtype bf16 --metrics none \
        --shape batch=4,heads=16,seq=4096,dim=128 --db "$db" 2>&1 | tail -n 150
fi

section "cudnn through the SDPA_FWD operation (KBENCH_CUDNN_GRAPH=sdpa), bf16, default shape"
KBENCH_CUDNN_GRAPH=sdpa KBENCH_CUDNN_VERBOSE=1 "$kb" run attention --variants cudnn \
    --dtype bf16 --metrics none --shape batch=4,heads=16,seq=4096,dim=128 --db "$db" 2>&1
echo "exit $?"

section "flash-tiled and cudnn with core counters, bf16, causal and not"
rm -f /tmp/p-counters.json
"$kb" run attention --variants flash-tiled,cudnn --dtype bf16 --metrics core \
    --shape batch=4,heads=16,seq=4096,dim=128 --shape batch=4,heads=16,seq=4096,dim=128,causal=1 \
    --db "$db" --json /tmp/p-counters.json 2>&1
echo "exit $?"
[ -f /tmp/p-counters.json ] && python3 - <<'EOF' 2>&1
import json
rep = json.load(open("/tmp/p-counters.json"))
for r in rep.get("results", []):
    if r.get("variant") != "cudnn":
        continue
    c = r.get("counters", {})
    print("cudnn", r.get("shape"), r.get("status"), r.get("reason") or "",
          "- %.1f TFLOP/s" % (r.get("derived", {}).get("tflops") or 0),
          "- counters:", c.get("reason") or "ok (%s passes)" % c.get("passes"))
    for k in r.get("kernels", []):
        print("  kernel %s grid %s block %s regs %s smem %s+%s local %s occupancy limiter %s"
              % (k.get("name"), k.get("grid"), k.get("block"), k.get("registers"),
                 k.get("static_smem"), k.get("dynamic_smem"), k.get("local_bytes"),
                 k.get("occupancy_limiter")))
EOF

if [ "${TESTS:-0}" = 1 ]; then
    section "GPU tests"
    "$build"/tests/gpu/test_gpu_ops 2>&1 |
        grep -E 'cudnn|FAIL|OK|PASSED|FAILED|checked' | tail -n 80
fi
exit $rc_all
