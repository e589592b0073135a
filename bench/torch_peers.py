#!/usr/bin/env python3
"""PyTorch at kbench's softmax and layernorm shapes: a peer measurement outside
kbench, timed the way kbench times a variant, so that a report's best variant can
be read beside what a user would otherwise call.

What is timed, per shape and dtype (fp32, bf16), each in its own CUDA-event pair:
  softmax    torch.softmax(x, dim=-1)
  layernorm  F.gelu(F.layer_norm(x, (cols,), gamma, beta, eps=1e-5) + b), exact
             GELU (erf) or approximate='tanh' when the shape says gelu=1
each eager and through torch.compile (the compiled function is built and warmed
once per shape and dtype; a compile or run failure is recorded in the entry's
"error" and the script goes on).

How, as kbench does (docs/method.md): inputs are fresh random data (x = mean +
U[-1, 1), gamma = 1 +- 0.5, beta and b = 0 +- 0.5); WARMUP calls first; then
before every sample the L2 is flushed by reading a buffer FLUSH_FACTOR times the
GPU's L2 size (a sum over it: the L2 left holding clean lines only, as kbench's
flush kernel leaves it; --l2-flush write fills the buffer instead, as a memset
flush would, leaving its dirty lines to be written back inside the timed call,
as every file under bench/h200 so far was timed: "l2_flush": "write"); then the
GPU spins for SPIN_CYCLES (torch.cuda._sleep, about a millisecond), so that the
call is on the stream before the start event is reached and its host-side time
(Python, torch.compile's guards, the launches) is not counted; and one call is
timed alone between two CUDA events (kbench queues its launches, from C, while
its flush kernel, tens of microseconds long, still runs); at least --samples
samples (default 20, at least 20), the median is the headline, with min, max and
the relative spread (sample stdev / mean). GB/s uses kbench's byte model:
softmax 2 * rows * cols * size (x read once, y written once), layernorm that
plus 3 * cols * size (gamma, beta, b).

Cases: by default the sweep of tests/gpu/h200.sh (SWEEP=1): cols in {32, 33,
128, 768, 1024, 4096, 16384, 65536, 262144, 1048576} with rows = max(1, 512 MB /
(cols x element size)) in each dtype (--sweep-bytes), rows=3 x 262144 and 4099 x
3001, and the committed reports' own shapes (softmax 32768 x 4096 and 8192 x
32768; layernorm 32768 x 4096, also with gelu=1 and with mean=10000, and 8192 x
16384), in every dtype. With --report
FILE..., the cases (op, rows, cols, gelu, mean; dtype) of kbench JSON reports
instead, each in its own dtype, so the peers match a run exactly.

Output (-o, default torch_peers.json), a JSON object:
  schema        "kbench-torch-peers/1"
  date          ISO 8601 UTC of the start
  host          platform.node()
  device        {"name", "capability": "9.0", "sms", "l2_bytes", "memory_bytes",
                "uuid": "GPU-..." as kbench's reports write it, where torch
                gives one}
  torch         torch.__version__; "cuda": torch.version.cuda; "triton": its
                version or null
  method        {"warmup", "samples", "flush_bytes", "timer": "cuda events",
                 "l2_flush": "read" | "write", "spin_cycles": SPIN_CYCLES (absent
                 in the files timed without the spin, bench/h200's so far)}
  entries       one per (op, shape, dtype, mode):
    op          "softmax" | "layernorm"
    shape       {"rows", "cols"} (+ "gelu", "mean" for layernorm)
    dtype       "fp32" | "bf16"
    mode        "eager" | "compile"
    ok          true, or false with "error": the exception's one-line text
    wall_s      seconds the entry took on the host (compile: building, warming
                and sampling; eager: warming and sampling)
    median_us, min_us, max_us, stdrel, samples_us (every sample), model_bytes,
    gbps        model_bytes / median (1e9 bytes/s)
  best          per (op, shape, dtype): {"op", "shape", "dtype", "mode",
                "median_us", "gbps"}: the faster of eager and compile
  cases         how many (op, shape, dtype) cases the run was asked for
  complete      false until every case is done: the file is rewritten (whole,
                by rename) after each case, so a run stopped early (a time
                limit) leaves the cases it finished

Usage:
  python3 bench/torch_peers.py [--ops softmax,layernorm] [--dtypes fp32,bf16]
        [--samples N] [--report FILE...] [--no-compile] [--l2-flush read|write]
        [-o FILE]
  python3 bench/torch_peers.py --dry-run     the shape list, without importing torch
Needs a CUDA GPU and PyTorch (2.x); no network (torch.compile builds locally).

The flush, measured (H100 80GB HBM3, 2026-12-06 22:52-22:53 UTC, PyTorch
2.11.0+cu130, four runs in turn, write / read / write / read, at layernorm fp32
131072 x 1024, 174762 x 768, 2048 x 65536 and bf16 262144 x 1024): eager's medians
0.4-1.3% shorter after the read flush at every case (1212.6 -> 1208.0 us at 1024
columns, 1469.5 -> 1450.2 at 65536), so a write flush cost PyTorch up to a
point of the copy bandwidth. torch.compile's medians moved more between runs of
the same flush than between the flushes: 356.7 and 437.2 us at 131072 x 1024
after a read, 434.3 and 363.0 after a write (the compiled code taken from the
cache after the first run), the relative spread of its samples within a run
2.5-13.5% (kbench's fused 355.9 us there, 0.2%).
"""
import argparse
import datetime
import json
import math
import os
import platform
import sys
import time

SWEEP_COLS = [32, 33, 128, 768, 1024, 4096, 16384, 65536, 262144, 1048576]
SWEEP_BYTES = 512 << 20
# The reports' own shapes beside the sweep (tests/gpu/h200.sh).
EXTRA = {
    "softmax": [{"rows": 32768, "cols": 4096}, {"rows": 8192, "cols": 32768},
                {"rows": 4099, "cols": 3001}, {"rows": 3, "cols": 262144}],
    "layernorm": [{"rows": 32768, "cols": 4096}, {"rows": 8192, "cols": 16384},
                  {"rows": 32768, "cols": 4096, "gelu": 1, "mean": 0},
                  {"rows": 32768, "cols": 4096, "gelu": 0, "mean": 10000},
                  {"rows": 4099, "cols": 3001}, {"rows": 3, "cols": 262144}],
}
OPS = ("softmax", "layernorm")
DTYPES = ("fp32", "bf16")
MIN_SAMPLES = 20
WARMUP = 5
# The L2 flush reads a buffer this many times the L2's size (kbench's factor).
FLUSH_FACTOR = 4
FLUSHES = ("read", "write")
# GPU clock cycles of the spin between the flush and the start event (~1 ms at
# the H200's 1980 MHz): longer than the host takes to queue a call.
SPIN_CYCLES = 2_000_000
LN_EPS = 1e-5
SIZE = {"fp32": 4, "bf16": 2, "fp16": 2}


def sweep_shapes(op, nbytes, dtype):
    """The sweep (x of nbytes in dtype) and the reports' own shapes of op, each
    once, in order."""
    shapes = [{"rows": max(1, nbytes // (c * SIZE[dtype])), "cols": c} for c in SWEEP_COLS]
    shapes += [dict(s) for s in EXTRA[op]]
    if op == "layernorm":
        for s in shapes:
            s.setdefault("gelu", 0)
            s.setdefault("mean", 0)
    out = []
    for s in shapes:
        if s not in out:
            out.append(s)
    return out


def report_cases(paths, ops, dtypes):
    """(op, shape, dtype) of each distinct case of kbench JSON reports, for ops
    and dtypes."""
    seen, out = set(), []
    for path in paths:
        with open(path) as f:
            rep = json.load(f)
        for r in rep.get("results", []):
            op, d = r.get("op"), r.get("dtype")
            if op not in ops or d not in dtypes:
                continue
            sh = r.get("shape", {})
            s = {"rows": int(sh["rows"]), "cols": int(sh["cols"])}
            if op == "layernorm":
                s["gelu"] = int(sh.get("gelu", 0))
                s["mean"] = int(sh.get("mean", 0))
            key = (op, tuple(sorted(s.items())), d)
            if key not in seen:
                seen.add(key)
                out.append((op, s, d))
    return out


def shape_str(s):
    return ",".join(f"{k}={v}" for k, v in s.items())


def model_bytes(op, s, dtype):
    size = SIZE[dtype]
    b = 2.0 * s["rows"] * s["cols"] * size
    return b + 3.0 * s["cols"] * size if op == "layernorm" else b


def summary(samples):
    xs = sorted(samples)
    n = len(xs)
    med = xs[n // 2] if n % 2 else 0.5 * (xs[n // 2 - 1] + xs[n // 2])
    mean = sum(xs) / n
    sd = math.sqrt(sum((x - mean) ** 2 for x in xs) / (n - 1)) if n > 1 else 0.0
    return med, xs[0], xs[-1], (sd / mean if mean > 0 else 0.0)


def one_line(e):
    text = f"{type(e).__name__}: {e}".strip().splitlines()
    return text[0][:400] if text else type(e).__name__


class Timer:
    """Times one call after an L2 flush, between two CUDA events."""

    def __init__(self, torch, flush_bytes, how):
        self.torch = torch
        self.flush = torch.ones(flush_bytes // 4, dtype=torch.float32, device="cuda")
        self.write = how == "write"
        self.start = torch.cuda.Event(enable_timing=True)
        self.end = torch.cuda.Event(enable_timing=True)

    def sample_us(self, fn):
        # a buffer larger than the L2 passes through it: no line of x stays
        if self.write:
            self.flush.fill_(1.0)
        else:
            self.flush.sum()
        self.torch.cuda._sleep(SPIN_CYCLES)  # the GPU busy while fn is queued
        self.start.record()
        fn()
        self.end.record()
        self.end.synchronize()
        return self.start.elapsed_time(self.end) * 1e3

    def measure(self, fn, samples, warmup):
        for _ in range(warmup):
            fn()
        self.torch.cuda.synchronize()
        return [self.sample_us(fn) for _ in range(samples)]


def make_fn(torch, F, op, s, dtype):
    """The function to time and the tensors it holds (fresh random inputs)."""
    dt = {"fp32": torch.float32, "bf16": torch.bfloat16}[dtype]
    rows, cols = s["rows"], s["cols"]
    x = (torch.rand(rows, cols, device="cuda", dtype=torch.float32) * 2 - 1 + s.get("mean", 0)).to(dt)
    if op == "softmax":
        return (lambda t: torch.softmax(t, dim=-1)), (x,)
    gamma = (1 + (torch.rand(cols, device="cuda") - 0.5)).to(dt)
    beta = (torch.rand(cols, device="cuda") - 0.5).to(dt)
    b = (torch.rand(cols, device="cuda") - 0.5).to(dt)
    approx = "tanh" if s.get("gelu", 0) else "none"

    def ln(t, g, be, bb):
        return F.gelu(F.layer_norm(t, (cols,), g, be, eps=LN_EPS) + bb, approximate=approx)

    return ln, (x, gamma, beta, b)


def write(out, path):
    """out to path whole: a reader sees the previous file or this one."""
    tmp = path + ".part"
    with open(tmp, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)


def run_entry(torch, timer, fn, args, op, s, dtype, mode, samples):
    e = {"op": op, "shape": s, "dtype": dtype, "mode": mode, "ok": False,
         "model_bytes": model_bytes(op, s, dtype)}
    try:
        xs = timer.measure(lambda: fn(*args), samples, WARMUP)
        med, lo, hi, rel = summary(xs)
        e.update(ok=True, median_us=med, min_us=lo, max_us=hi, stdrel=rel, samples_us=xs,
                 gbps=e["model_bytes"] / (med * 1e3))
    except Exception as ex:  # a failure is recorded, not fatal
        e["error"] = one_line(ex)
        torch.cuda.synchronize()
    return e


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--ops", default=",".join(OPS))
    ap.add_argument("--dtypes", default=",".join(DTYPES))
    ap.add_argument("--samples", type=int, default=MIN_SAMPLES)
    ap.add_argument("--sweep-bytes", type=int, default=SWEEP_BYTES)
    ap.add_argument("--report", nargs="+", default=None, metavar="FILE")
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--l2-flush", default="read", choices=FLUSHES,
                    help="read the flush buffer (kbench's way, the default) or write it")
    ap.add_argument("-o", "--output", default="torch_peers.json")
    ap.add_argument("--dry-run", action="store_true",
                    help="print the cases (op, shape, dtype) and exit, without torch")
    a = ap.parse_args(argv)
    ops = [o for o in a.ops.split(",") if o]
    dtypes = [d for d in a.dtypes.split(",") if d]
    for o in ops:
        if o not in OPS:
            ap.error(f"unknown op '{o}' (softmax, layernorm)")
    for d in dtypes:
        if d not in DTYPES:
            ap.error(f"unsupported dtype '{d}' (fp32, bf16)")
    if a.samples < MIN_SAMPLES:
        ap.error(f"--samples must be at least {MIN_SAMPLES}, got {a.samples}")
    if a.sweep_bytes < 1:
        ap.error(f"--sweep-bytes must be positive, got {a.sweep_bytes}")
    cases = (report_cases(a.report, ops, dtypes) if a.report
             else [(op, s, d) for op in ops for d in dtypes
                   for s in sweep_shapes(op, a.sweep_bytes, d)])
    if a.dry_run:
        for op, s, d in cases:
            print(f"{op} {shape_str(s)} {d}")
        return 0

    import torch  # only here: --dry-run needs no torch
    import torch.nn.functional as F

    if not torch.cuda.is_available():
        print("torch_peers: no CUDA GPU visible to torch", file=sys.stderr)
        return 3
    props = torch.cuda.get_device_properties(0)
    l2 = int(getattr(props, "L2_cache_size", 0)) or 64 << 20
    try:
        import triton
        triton_version = triton.__version__
    except Exception:
        triton_version = None
    uuid = getattr(props, "uuid", None)  # str() without the "GPU-" that kbench writes
    uuid = None if uuid is None else "GPU-" + str(uuid).removeprefix("GPU-")
    out = {
        "schema": "kbench-torch-peers/1",
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "host": platform.node(),
        "device": {"name": props.name, "capability": f"{props.major}.{props.minor}",
                   "sms": props.multi_processor_count, "l2_bytes": l2,
                   "memory_bytes": props.total_memory, "uuid": uuid},
        "torch": torch.__version__, "cuda": torch.version.cuda, "triton": triton_version,
        "method": {"warmup": WARMUP, "samples": a.samples, "flush_bytes": FLUSH_FACTOR * l2,
                   "timer": "cuda events", "l2_flush": a.l2_flush,
                   "spin_cycles": SPIN_CYCLES},
        "entries": [], "best": [], "cases": len(cases), "complete": False,
    }
    timer = Timer(torch, FLUSH_FACTOR * l2, a.l2_flush)
    for op, s, d in cases:
        fn, args = make_fn(torch, F, op, s, d)
        modes = [("eager", fn)]
        if not a.no_compile:
            try:
                torch._dynamo.reset()  # a fresh cache: no shape falls back to eager
                modes.append(("compile", torch.compile(fn, dynamic=False)))
            except Exception as ex:
                out["entries"].append({"op": op, "shape": s, "dtype": d, "mode": "compile",
                                       "ok": False, "error": one_line(ex),
                                       "model_bytes": model_bytes(op, s, d)})
        best = None
        for mode, f in modes:
            t0 = time.monotonic()
            e = run_entry(torch, timer, f, args, op, s, d, mode, a.samples)
            e["wall_s"] = round(time.monotonic() - t0, 3)
            out["entries"].append(e)
            if e["ok"] and (best is None or e["median_us"] < best["median_us"]):
                best = {"op": op, "shape": s, "dtype": d, "mode": mode,
                        "median_us": e["median_us"], "gbps": e["gbps"]}
            status = f"{e['gbps']:8.1f} GB/s" if e["ok"] else f"failed: {e['error']}"
            print(f"{op:9s} {shape_str(s):32s} {d} {mode:7s} {status}", flush=True)
        if best:
            out["best"].append(best)
        del fn, args, modes
        torch.cuda.empty_cache()
        write(out, a.output)
    out["complete"] = True
    write(out, a.output)
    print(f"torch_peers: wrote {a.output} ({len(out['entries'])} entries)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
