#!/usr/bin/env bash
# The instruction mix of kernels, read off the SASS: a line per kernel whose
# (demangled) name matches REGEX, with its instruction count (NOPs left out)
# and how many of them are of each kind, so that the instructions an element
# costs can be set beside the issue budget a bandwidth target leaves (at 85%
# of the H200's copy bandwidth, 16-bit in and out: about 36 an element at
# full issue). Counts are static (each instruction once, as the compiler laid
# the kernel out; unrolled loops count every copy, loops that run many times
# count once): divide by the elements one pass of the code handles.
#   tests/gpu/sass_mix.sh REGEX [BINARY]     BINARY defaults to build/kbench
# On the GPU machine (cuobjdump is there, not on the build machine);
# SASS_FILE=F reads a saved `cuobjdump -sass` listing instead. Kinds:
#   fp     FFMA FADD FMUL FMNMX FSETP FSEL FSET FCHK HFMA2 HADD2 HMUL2 HMNMX2
#   mufu   MUFU (exp2, rcp, rsqrt, ...)
#   cvt    F2F F2FP I2F F2I I2FP F2IP
#   int    IMAD IADD3 LOP3 SHF PRMT ISETP IMNMX LEA SEL MOV IABS POPC FLO ...
#   gmem   LDG STG LDGSTS ATOMG RED LD ST
#   smem   LDS STS LDSM ATOMS
#   shfl   SHFL
#   sync   BAR MEMBAR SYNCS DEPBAR ERRBAR CCTL UCGABAR_ARV UCGABAR_WAIT
#   ctrl   BRA EXIT BSSY BSYNC RET CALL YIELD WARPSYNC BPT NANOSLEEP
#   other  the rest (uniform-datapath U* instructions among them)
set -euo pipefail
[ $# -ge 1 ] && [ $# -le 2 ] || { echo "usage: $0 REGEX [BINARY]" >&2; exit 2; }
regex=$1
bin=${2:-build/kbench}
listing=$(mktemp)
trap 'rm -f "$listing"' EXIT
if [ -n "${SASS_FILE:-}" ]; then
    cp "$SASS_FILE" "$listing"
else
    cuobjdump=${CUOBJDUMP:-$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)}
    "$cuobjdump" -sass "$bin" >"$listing"
fi
python3 - "$listing" "$regex" <<'EOF'
import re, subprocess, sys

listing, regex = sys.argv[1], re.compile(sys.argv[2])
KINDS = [
    ("fp", {"FFMA", "FADD", "FMUL", "FMNMX", "FSETP", "FSEL", "FSET", "FCHK",
            "HFMA2", "HADD2", "HMUL2", "HMNMX2"}),
    ("mufu", {"MUFU"}),
    ("cvt", {"F2F", "F2FP", "I2F", "F2I", "I2FP", "F2IP"}),
    ("int", {"IMAD", "IADD3", "LOP3", "SHF", "PRMT", "ISETP", "IMNMX", "LEA", "SEL",
             "MOV", "IABS", "POPC", "FLO", "IADD", "SHL", "SHR", "LOP", "BREV", "VIADD",
             "VIMNMX", "IDP", "BMSK", "SGXT", "P2R", "R2P", "PLOP3", "CS2R", "S2R"}),
    ("gmem", {"LDG", "STG", "LDGSTS", "ATOMG", "RED", "LD", "ST", "ATOM"}),
    ("smem", {"LDS", "STS", "LDSM", "ATOMS"}),
    ("shfl", {"SHFL"}),
    ("sync", {"BAR", "MEMBAR", "SYNCS", "DEPBAR", "ERRBAR", "CCTL", "UCGABAR_ARV",
              "UCGABAR_WAIT"}),
    ("ctrl", {"BRA", "EXIT", "BSSY", "BSYNC", "RET", "CALL", "YIELD", "WARPSYNC", "BPT",
              "NANOSLEEP"}),
]
ORDER = [k for k, _ in KINDS] + ["other"]
kind_of = {op: k for k, ops in KINDS for op in ops}

funcs, name = [], None
for line in open(listing, errors="replace"):
    m = re.match(r"\s*Function\s*:\s*(\S+)", line)
    if m:
        name = m.group(1)
        funcs.append([name, {}])
        continue
    m = re.match(r"\s*/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)", line)
    if m and funcs:
        op = m.group(1)
        if op == "NOP":
            continue
        k = kind_of.get(op, "other")
        funcs[-1][1][k] = funcs[-1][1].get(k, 0) + 1

def demangle(names):
    try:
        out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True,
                             text=True, check=True).stdout.split("\n")
        return out[: len(names)]
    except (OSError, subprocess.CalledProcessError):
        return names

shown = {}
for (mangled, counts), plain in zip(funcs, demangle([f[0] for f in funcs])):
    if regex.search(plain) or regex.search(mangled):
        shown.setdefault(plain, counts)  # a kernel in several fatbins: once
if not shown:
    print(f"sass_mix: no kernel matches {sys.argv[2]}", file=sys.stderr)
    sys.exit(1)
print("total " + " ".join(f"{k:>5}" for k in ORDER) + "  kernel")
for plain, counts in shown.items():
    total = sum(counts.values())
    print(f"{total:5d} " + " ".join(f"{counts.get(k, 0):5d}" for k in ORDER) + "  " + plain)
EOF
