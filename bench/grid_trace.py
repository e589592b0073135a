#!/usr/bin/env python3
"""Reads build/bench/grid_trace's output (bench/grid_trace.cu's header): where
the items of softmax's grid path spend their time.

    python3 bench/grid_trace.py TRACE.txt

Prints, from the global timer's stamps: each phase of an item (taken -> its
loads landed and its max known, the sum and the block's reduction, publishing
and waiting for the row's other blocks, reading and merging the row's pairs,
issuing the stores) as mean, p10, p50 and p90 in microseconds; how far apart a
row's blocks start and publish, and how long after the row's last publish its
blocks go on; how many blocks are resident, loading, waiting and writing on
average; and the gap between a block's end and the next block's start on the
same SM (the block's exit, the next one's launch and its ticket); and the
share of the block slots left idle over the span, in the ramp (until every
slot is first taken) and in the tail (after the last item's start)."""
import statistics

import trace_lines
from trace_lines import pct

PHASES = [(0, 1, "taken -> loads landed"), (1, 2, "sum + block reduce"),
          (2, 3, "publish + wait"), (3, 4, "pairs read"), (4, 5, "stores issued"),
          (0, 5, "lifetime")]


def read(path):
    """The header line and the records: item sm row g0..g5 c0..c5, the g's
    (global timer, ns) not decreasing."""
    head, recs = trace_lines.read(
        path, "grid_trace.py", "grid_trace",
        lambda v: len(v) == 15 and all(b >= a for a, b in zip(v[3:9], v[4:9])))
    return head, [{"sm": v[1], "row": v[2], "g": v[3:9]} for v in recs]


def main(path):
    head, recs = read(path)
    print(head)
    t0 = min(r["g"][0] for r in recs)
    end = max(r["g"][5] for r in recs)
    print(f"items {len(recs)}, span {(end - t0) / 1e3:.1f} us")
    for a, b, name in PHASES:
        d = sorted((r["g"][b] - r["g"][a]) / 1e3 for r in recs)
        print(f"  {name:24s} mean {statistics.mean(d):6.2f}  p10 {pct(d, .1):6.2f}  "
              f"p50 {pct(d, .5):6.2f}  p90 {pct(d, .9):6.2f} us")
    rows = {}
    for r in recs:
        rows.setdefault(r["row"], []).append(r)
    start, pub, after = [], [], []
    for v in rows.values():
        s, p = [r["g"][0] for r in v], [r["g"][2] for r in v]
        start.append((max(s) - min(s)) / 1e3)
        pub.append((max(p) - min(p)) / 1e3)
        after.append(statistics.mean((r["g"][3] - max(p)) / 1e3 for r in v))
    print(f"a row's blocks: start within {statistics.mean(start):.2f} us, publish within "
          f"{statistics.mean(pub):.2f} us, see the pairs {statistics.mean(after):.2f} us "
          "after the last publish (means over rows)")
    def edges(a, b):
        """The items' starts (+1) at stamp a and ends (-1) at stamp b, in time order."""
        return sorted([(r["g"][a], 1) for r in recs] + [(r["g"][b], -1) for r in recs])

    for name, (a, b) in [("resident", (0, 5)), ("loading", (0, 1)), ("waiting", (2, 3)),
                         ("writing", (4, 5))]:
        ev = edges(a, b)
        cur, last, acc = 0, t0, 0
        for t, d in ev:
            acc += cur * (t - last)
            cur, last = cur + d, t
        print(f"  blocks {name:9s} {acc / (end - t0):6.1f} on average")
    # block slots idle: against the most blocks resident at once, over the
    # whole span, and in the tail (from the last item's start, when no block
    # takes a new item, to the last end) and the ramp (to the first moment
    # every slot is taken)
    ev = edges(0, 5)
    cur, cap, full_at = 0, 0, None
    for t, d in ev:
        cur += d
        cap = max(cap, cur)
    cur = 0
    for t, d in ev:
        cur += d
        if cur == cap:
            full_at = t
            break
    tail = max(r["g"][0] for r in recs)
    idle = {"span": 0, "ramp": 0, "tail": 0}
    cur, last = 0, t0
    for t, d in ev:
        for name, a, b in (("span", t0, end), ("ramp", t0, full_at), ("tail", tail, end)):
            lo, hi = max(a, last), min(b, t)
            if hi > lo:
                idle[name] += (cap - cur) * (hi - lo)
        cur, last = cur + d, t
    slot_time = cap * (end - t0)
    print(f"block slots ({cap} at most) idle {100 * idle['span'] / slot_time:.1f}% of the "
          f"span's slot time: ramp (until every slot is taken, {(full_at - t0) / 1e3:.1f} us) "
          f"{100 * idle['ramp'] / slot_time:.1f}%, tail (after the last item's start, "
          f"{(end - tail) / 1e3:.1f} us) {100 * idle['tail'] / slot_time:.1f}%")
    gaps = []
    per_sm = {}
    for r in recs:
        per_sm.setdefault(r["sm"], []).append((r["g"][0], r["g"][5]))
    for v in per_sm.values():
        ends = sorted(e for _, e in v)
        for s, _ in sorted(v):
            prev = [e for e in ends if e <= s]
            if prev:
                gaps.append((s - prev[-1]) / 1e3)
    if gaps:
        gaps.sort()
        print(f"block end -> next block's item on the SM: mean {statistics.mean(gaps):.2f}  "
              f"p50 {pct(gaps, .5):.2f}  p90 {pct(gaps, .9):.2f} us")


if __name__ == "__main__":
    trace_lines.cli("grid_trace.py", main)
