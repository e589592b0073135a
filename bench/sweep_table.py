#!/usr/bin/env python3
"""kbench's best variant beside PyTorch, per shape and dtype, as a markdown table.

Reads a kbench JSON report (softmax or layernorm) and, optionally, the JSON that
bench/torch_peers.py wrote. For every (shape, dtype) of the report it prints the
fastest variant whose check passed (its median, GB/s and share of the report's
calibrated copy bandwidth) and, where the peers hold the same shape and dtype,
PyTorch's faster mode (eager or compile), its median and the ratio
PyTorch median / kbench median (above 1: kbench is faster).

A ratio is only printed for peers measured in the same session on the same GPU:
the peers' date must fall within --session-hours (default 2) of the report's
start and finish, the device names must match, and so must the GPUs' uuids
where both files record one (torch_peers.py's older files do not). Otherwise the PyTorch columns
are left out and a line says why, since absolute times drift between runs.
Peers timed by torch_peers.py's older method (bench/h200's files so far) are
printed under a line that says how it differs from kbench's: an L2 flush that
wrote its buffer ("l2_flush": "write"), whose dirty lines were written back
inside each timed call, where kbench's flush reads; no spin before the start
event (no "spin_cycles"), so the host's time to queue a call could count.

Usage:
  python3 bench/sweep_table.py REPORT.json [--peers PEERS.json] [--session-hours H]
Exit status: 0, or 2 for a bad option or an unreadable or foreign file.
"""
import argparse
import datetime
import json
import sys

def fail(msg):
    print(f"sweep_table: {msg}", file=sys.stderr)
    sys.exit(2)


def load(path, what):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as ex:
        fail(f"cannot read {what} '{path}': {ex}")


def when(text):
    return datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%SZ")


def axes(op):
    """The shape's axes that name a case on both sides (layernorm: gelu and mean too)."""
    return ("rows", "cols", "gelu", "mean") if op == "layernorm" else ("rows", "cols")


def shape_key(op, shape):
    return tuple(int(shape.get(k, 0)) for k in axes(op))


def shape_text(op, key):
    return ",".join(f"{n}={v}" for n, v in zip(axes(op), key) if v or n in ("rows", "cols"))


def best_variants(report):
    """(op, shape key, dtype) -> the fastest ok result, over the report's results."""
    best = {}
    for r in report.get("results", []):
        if r.get("status") != "ok" or r.get("shape", {}).get("stats"):
            continue
        k = (r["op"], shape_key(r["op"], r["shape"]), r["dtype"])
        if k not in best or r["time"]["median_us"] < best[k]["time"]["median_us"]:
            best[k] = r
    return best


def same_session(report, peers, hours):
    """None when the peers count as the report's session, else the reason they do not."""
    run = report.get("kbench", {})
    start, end = when(run["started"]), when(run["finished"])
    at = when(peers["date"])
    slack = datetime.timedelta(hours=hours)
    if not start - slack <= at <= end + slack:
        return (f"PyTorch ran at {peers['date']}, not within {hours:g} h of this report "
                f"({run['started']} .. {run['finished']}): no ratio")
    mine, theirs = report.get("device", {}).get("name"), peers.get("device", {}).get("name")
    if mine != theirs:
        return f"PyTorch ran on {theirs}, this report on {mine}: no ratio"
    mine, theirs = (gpu_uuid(d.get("device", {})) for d in (report, peers))
    if mine and theirs and mine != theirs:
        return f"PyTorch ran on GPU {theirs}, this report on GPU {mine}: no ratio"
    return None


def old_method(method):
    """How a peers file's timing differs from kbench's (empty when it does not)."""
    how = []
    if method.get("l2_flush", "read") != "read":
        how.append(f"its L2 flush a {method['l2_flush']}, whose dirty lines were written "
                   "back inside each timed call (kbench's flush reads)")
    if "spin_cycles" not in method:
        how.append("no spin before the start event, so the host's time to queue a call "
                   "could count")
    return how


def gpu_uuid(device):
    """The device's uuid without its "GPU-", lower case, or None."""
    u = device.get("uuid")
    return u.removeprefix("GPU-").lower() if isinstance(u, str) and u else None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("report")
    ap.add_argument("--peers", default=None)
    ap.add_argument("--session-hours", type=float, default=2.0)
    a = ap.parse_args(argv)
    if a.session_hours <= 0:
        ap.error(f"--session-hours must be positive, got {a.session_hours:g}")
    report = load(a.report, "report")
    if "results" not in report or "kbench" not in report:
        fail(f"'{a.report}' is not a kbench report")
    ceiling = report.get("device", {}).get("ceilings", {}).get("copy_gbps")
    peers, why = {}, None
    if a.peers:
        doc = load(a.peers, "peers")
        if doc.get("schema") != "kbench-torch-peers/1":
            fail(f"'{a.peers}' is not a torch_peers.py output")
        why = same_session(report, doc, a.session_hours)
        if why is None:
            for b in doc.get("best", []):
                peers[(b["op"], shape_key(b["op"], b["shape"]), b["dtype"])] = b
    run = report["kbench"]
    print(f"kbench {run.get('git', '?')} on {report.get('device', {}).get('name', '?')}, "
          f"{run['started']} .. {run['finished']}" +
          (f"; PyTorch {doc.get('torch', '?')}, {doc['date']}" if a.peers else ""))
    how = old_method(doc.get("method", {})) if a.peers else []
    if why:
        print(why)
    elif how:
        print("PyTorch was timed by an older method than kbench's: " + "; ".join(how)
              + ". These ratios are not by kbench's method")
    if not why and a.peers and doc.get("complete") is False:
        print(f"PyTorch's run stopped early: {len(doc.get('best', []))} of its "
              f"{doc.get('cases', '?')} cases were measured ('-' where it had not got to)")
    print()
    cols = ["op", "dtype", "shape", "best variant", "median", "GB/s", "% copy"]
    if peers:
        cols += ["PyTorch", "PyTorch median", "PyTorch / kbench"]
    print("| " + " | ".join(cols) + " |")
    print("|---|---|---|---|" + "---:|" * (len(cols) - 4))
    for (op, key, dtype), r in sorted(best_variants(report).items(),
                                      key=lambda kv: (kv[0][0], kv[0][2], kv[0][1][1],
                                                      kv[0][1])):
        med = r["time"]["median_us"]
        gbps = r["model"]["bytes"] / (med * 1e3)
        pct = f"{100 * gbps / ceiling:.1f}%" if ceiling else "-"
        row = [op, dtype, shape_text(op, key), r["variant"], f"{med:.1f} µs", f"{gbps:.0f}", pct]
        if peers:
            p = peers.get((op, key, dtype))
            row += ([p["mode"], f"{p['median_us']:.1f} µs", f"{p['median_us'] / med:.2f}x"]
                    if p else ["-", "-", "-"])
        print("| " + " | ".join(row) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
