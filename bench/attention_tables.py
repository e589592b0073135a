#!/usr/bin/env python3
"""The tables of README's attention section, from a kbench attention report.

Prints, from the report (as `kbench report --format md` shows it), the ladder at
the default shape (B=4 H=16 S=4096 D=128) non-causal and causal, without the
status, spread, spill and DRAM columns, and then one row per shape of the top
rungs beside the vendor row: flash-tiled's, flash-wgmma's and cuDNN's TFLOP/s,
flash-wgmma's time over cuDNN's as a ratio of TFLOP/s, the SM clocks read after
each one's samples and the flop per SM cycle at those clocks (with their
ratio), so that a ratio can be read apart from the clock the power cap allowed.

With --check README.md nothing is printed on success: every line of the tables
must appear in the README as it is, so that README's figures are the committed
report's; the lines that do not are printed, and the exit status is 1.

Usage:
  python3 bench/attention_tables.py REPORT.json [--check README.md] [--kbench BIN]
Exit status: 0; 1 when --check finds lines missing; 2 for a bad option or an
unreadable report.
"""
import argparse
import json
import subprocess
import sys

DEFAULT = "batch=4, heads=16, seq=4096, dim=128"
LADDER_COLS = ["variant", "kernels", "median", "TFLOP/s", "% peak", "vs naive", "regs",
               "extra mem", "excess", "occ a/t", "note"]
RUNGS = ("flash-tiled", "flash-wgmma", "cudnn")


def fail(msg):
    print(f"attention_tables: {msg}", file=sys.stderr)
    sys.exit(2)


def ladder(md, causal):
    """The ladder's table at the default shape, projected onto LADDER_COLS."""
    head = f"## attention · bf16 · {DEFAULT}, causal={causal}"
    sections = md.split("\n## ")
    for s in sections:
        if s.startswith(head[3:]):
            rows = [l for l in s.split("\n") if l.startswith("|")]
            hdr = [c.strip() for c in rows[0].strip("|").split("|")]
            try:
                idx = [hdr.index(c) for c in LADDER_COLS]
            except ValueError as ex:
                fail(f"kbench's table lacks a column: {ex}")
            out = ["**causal**" if causal else "**non-causal**", "",
                   "| " + " | ".join(LADDER_COLS) + " |",
                   "|---|" + "---:|" * (len(LADDER_COLS) - 2) + "---|"]
            for r in rows[2:]:
                c = [x.strip() for x in r.strip("|").split("|")]
                out.append("| " + " | ".join(c[i] for i in idx) + " |")
            return out
    fail(f"no table at {DEFAULT}, causal={causal} in the report")


def ratios(doc):
    """A row per shape: the top rungs, their ratio by time and per SM cycle."""
    sms = doc["device"]["sms"]
    shapes = {}
    for r in doc["results"]:
        if r.get("status") != "ok" or r.get("variant") not in RUNGS:
            continue
        sh, t = r["shape"], r["time"]
        key = (sh["batch"], sh["heads"], sh["seq"], sh["dim"], sh.get("causal", 0))
        flops = r["model"]["flops"]
        clk = t.get("sm_clock_mhz")
        cyc = flops / (t["median_us"] * 1e-6) / (clk * 1e6) / sms if clk else None
        shapes.setdefault(key, {})[r["variant"]] = (flops / t["median_us"] / 1e6, clk, cyc)
    out = ["| shape | flash-tiled | flash-wgmma | cudnn | ratio | SM clock after, wgmma / cudnn "
           "| flop per SM cycle, wgmma / cudnn |",
           "|---|---:|---:|---:|---:|---:|---:|"]
    for (b, h, s, d, c), v in shapes.items():
        if any(k not in v for k in RUNGS):
            continue
        ft, fw, cd = (v[k] for k in RUNGS)
        name = f"B={b} H={h} S={s} D={d}" + (" causal" if c else "")
        clocks = f"{fw[1]:.0f} / {cd[1]:.0f} MHz" if fw[1] and cd[1] else ""
        cyc = f"{fw[2]:.0f} / {cd[2]:.0f} ({fw[2] / cd[2]:.2f})" if fw[2] and cd[2] else ""
        out.append(f"| {name} | {ft[0]:.1f} | {fw[0]:.1f} | {cd[0]:.1f} | {fw[0] / cd[0]:.2f} "
                   f"| {clocks} | {cyc} |")
    return out


def main():
    ap = argparse.ArgumentParser(description="README's attention tables from a report")
    ap.add_argument("report")
    ap.add_argument("--check", metavar="README")
    ap.add_argument("--kbench", default="build/kbench")
    a = ap.parse_args()
    try:
        with open(a.report) as f:
            doc = json.load(f)
        doc["device"]["sms"], doc["results"]
    except (OSError, ValueError, KeyError, TypeError) as ex:
        fail(f"cannot read report '{a.report}': {ex}")
    try:
        md = subprocess.run([a.kbench, "report", a.report, "--format", "md"], check=True,
                            capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as ex:
        fail(f"{a.kbench} report {a.report}: {ex}")
    lines = ladder(md, 0) + [""] + ladder(md, 1) + [""] + ratios(doc)
    if not a.check:
        print("\n".join(lines))
        return 0
    try:
        with open(a.check) as f:
            have = set(f.read().split("\n"))
    except OSError as ex:
        fail(f"cannot read '{a.check}': {ex}")
    missing = [l for l in lines if l and l not in have]
    for l in missing:
        print(f"{a.check}: not as in {a.report}: {l}")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
