#!/usr/bin/env python3
"""Lays build/bench/pc_stalls's samples (its -o CSV, bench/pc_stalls.c's
header) beside the sampled kernels' SASS.

    python3 bench/pc_stalls.py SAMPLES.csv SASS.txt [--kernel REGEX] [--context N]

SASS.txt is `cuobjdump -sass build/bench/pc_stalls` (or `-fun NAME` of it), or
`nvdisasm -gi -c` of the variant's cubin compiled with the build's flags (nvcc
-std=c++17 -O3 -lineinfo -Isrc -gencode arch=compute_90,code=sm_90 -cubin
variants/OP/VARIANT.cu: the binary's SASS). For each sampled kernel found there
(those whose name REGEX finds, with --kernel) it prints the kernel's samples
and their shares by stall reason and by opcode, with an nvdisasm listing's
source lines (-g or -gi: kbench builds with -lineinfo) also the hottest source
lines (the innermost inlined line, and the kernel's own line it was inlined
at), then its SASS, each instruction with its share of the kernel's samples
and the reasons that make up half or more of its own, under the source lines;
with --context N only the instructions within N of one holding 0.5% or more,
"..." between runs. Shares are of all samples (the reasons ending in
"_not_issued" count again samples already counted, and are left out)."""
import re
import sys
from collections import defaultdict

FUNC = [re.compile(r"^\s*Function : (\S+)"), re.compile(r"^\.text\.(\S+):")]
INSN = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
LINE = re.compile(r'^\s*//## File "([^"]*)", line (\d+)(.*)$')
AT = re.compile(r'inlined at "([^"]*)", line (\d+)')
HOT = 0.005
TOP_LINES = 15


def fail(msg):
    print("pc_stalls.py: " + msg, file=sys.stderr)
    sys.exit(2)


def lines_of(path):
    try:
        with open(path) as f:
            return f.read().splitlines()
    except OSError as e:
        fail(f"{path}: {e.strerror}")
    except UnicodeDecodeError:
        fail(f"{path}: not text")


def read_samples(path):
    """{kernel: {pc: {reason: samples}}} from the CSV."""
    lines = lines_of(path)
    if not lines or lines[0].strip() != "kernel,pc,reason,samples":
        fail(f"{path}:1: not a CSV of bench/pc_stalls (kernel,pc,reason,samples)")
    out = defaultdict(lambda: defaultdict(dict))
    for i, line in enumerate(lines[1:], 2):
        if not line.strip():
            continue
        try:
            kernel, pc, reason, n = line.rsplit(",", 3)
            pc, n = int(pc, 16), int(n)
            if not kernel or not reason or n < 0:
                raise ValueError
        except ValueError:
            fail(f"{path}:{i}: not a record of bench/pc_stalls: {line[:60]!r}")
        if not reason.endswith("_not_issued"):
            out[kernel][pc][reason] = out[kernel][pc].get(reason, 0) + n
    if not out:
        fail(f"{path}: no samples")
    return out


def where(path, line):
    return f"{path.rsplit('/', 1)[-1]}:{line}"


def read_sass(path):
    """{kernel: [(offset, instruction, location)]} from a cuobjdump or nvdisasm
    listing; location is "file:line" of the innermost source line, with
    " (file:line)" of the outermost it was inlined at, or "" without line
    information. nvdisasm -gi gives an inlined instruction's chain a level a
    comment line, innermost first, then the kernel's own line; -g gives one
    line."""
    funcs, cur, loc, pending = {}, None, "", []
    for line in lines_of(path):
        for f in FUNC:
            m = f.match(line)
            if m:
                cur, loc, pending = funcs.setdefault(m.group(1), []), "", []
                break
        else:
            m = LINE.match(line)
            if m:
                pending.append(m)
                continue
            m = INSN.match(line)
            if m and cur is not None:
                if pending:
                    inner, outer = pending[0], pending[-1]
                    loc = where(inner.group(1), inner.group(2))
                    chain = AT.findall(outer.group(3))
                    top = where(*chain[-1]) if chain else where(outer.group(1), outer.group(2))
                    if top != loc:
                        loc += f" ({top})"
                    pending = []
                cur.append((int(m.group(1), 16), m.group(2), loc))
    if not funcs:
        fail(f"{path}: no SASS functions (a `cuobjdump -sass` listing?)")
    return funcs


def shares(counts, total, floor):
    """'name 12.3%, ...' for the counts at or above floor of total, largest first."""
    top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    return ", ".join(f"{k} {100.0 * v / total:.1f}%" for k, v in top if v >= floor * total)


def opcode(insn):
    """The instruction's opcode less its modifiers and predicate: LDS, FFMA, ..."""
    words = insn.split()
    if words and words[0].startswith("@"):
        words = words[1:]
    return words[0].split(".")[0] if words else "?"


def show(kernel, pcs, code, context):
    per_pc = {pc: sum(r.values()) for pc, r in pcs.items()}
    total = sum(per_pc.values())
    reasons, ops = defaultdict(int), defaultdict(int)
    known = {off: insn for off, insn, _ in code}
    at = {off: loc for off, _, loc in code}
    lines, line_why = defaultdict(int), defaultdict(lambda: defaultdict(int))
    for pc, r in pcs.items():
        for k, v in r.items():
            reasons[k] += v
            if at.get(pc):
                line_why[at[pc]][k] += v
        ops[opcode(known[pc]) if pc in known else "(not listed)"] += per_pc[pc]
        if at.get(pc):
            lines[at[pc]] += per_pc[pc]
    print(f"kernel {kernel}: {total} samples at {len(pcs)} PCs")
    print(f"  stalls: {shares(reasons, total, HOT)}")
    print(f"  opcodes: {shares(ops, total, HOT)}")
    if lines:
        print("  source lines:")
        for loc, n in sorted(lines.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP_LINES]:
            print(f"    {100.0 * n / total:6.2f}%  {loc:<40} {shares(line_why[loc], n, 0.1)}")
    missing = [pc for pc in pcs if pc not in known]
    if missing:
        print(f"  {len(missing)} sampled PCs are not in the listing (another build's SASS?)")
    keep = range(len(code))
    if context is not None:
        hot = [i for i, (off, _, _) in enumerate(code) if per_pc.get(off, 0) >= HOT * total]
        keep = sorted({j for i in hot for j in range(i - context, i + context + 1)
                       if 0 <= j < len(code)})
    last, shown_loc = -1, ""
    for i in keep:
        if context is not None and last >= 0 and i != last + 1:
            print("  ...")
        last = i
        off, insn, loc = code[i]
        if loc and loc != shown_loc:
            print(f"  {'':6}   // {loc}")
            shown_loc = loc
        n = per_pc.get(off, 0)
        if n:
            why = shares(pcs[off], n, 0.5) or shares(pcs[off], n, 0.0).split(",")[0]
            print(f"  {100.0 * n / total:6.2f}%  {why[:34]:<34} /*{off:04x}*/ {insn}")
        else:
            print(f"  {'':6}   {'':<34} /*{off:04x}*/ {insn}")
    print()


def main(argv):
    args, kernel_re, context = [], None, None
    i = 0
    while i < len(argv):
        a = argv[i]
        if a in ("--kernel", "--context"):
            if i + 1 == len(argv):
                fail(f"{a} needs a value")
            v = argv[i + 1]
            if a == "--kernel":
                try:
                    kernel_re = re.compile(v)
                except re.error as e:
                    fail(f"bad --kernel '{v}': {e}")
            else:
                if not v.isdigit():
                    fail(f"--context must be a whole number, got '{v}'")
                context = int(v)
            i += 2
            continue
        if a.startswith("-"):
            fail("usage: pc_stalls.py SAMPLES.csv SASS.txt [--kernel REGEX] [--context N]")
        args.append(a)
        i += 1
    if len(args) != 2:
        fail("usage: pc_stalls.py SAMPLES.csv SASS.txt [--kernel REGEX] [--context N]")
    samples, sass = read_samples(args[0]), read_sass(args[1])
    chosen = [k for k in samples if kernel_re is None or kernel_re.search(k)]
    if not chosen:
        fail(f"no sampled kernel matches '{kernel_re.pattern}'")
    order = sorted(chosen, key=lambda k: -sum(sum(r.values()) for r in samples[k].values()))
    shown = 0
    for k in order:
        if k not in sass:
            print(f"kernel {k}: not in {args[1]}\n")
            continue
        show(k, samples[k], sass[k], context)
        shown += 1
    if not shown:
        fail(f"none of the sampled kernels is in {args[1]}")


if __name__ == "__main__":
    main(sys.argv[1:])
