#!/usr/bin/env python3
"""Reads build/bench/gpipe_trace's output (bench/gpipe_trace.cu's header): what
a row of layernorm's pipelined grid waits for.

    python3 bench/gpipe_trace.py TRACE.txt

Prints, from the global timer's stamps (edges k of src/kernels/grid_pipe.cuh):
the time a block and row spends waiting for the row's bytes (0 -> 1), on its
statistics (1 -> 2), publishing (2 -> 3), until the row's last block has
published (3 -> 4), merging (4 -> 5), waiting for the merged statistics
(6 -> 7) and issuing the stores (7 -> 8), as mean, p10, p50 and p90 in
microseconds, and the waits' shares of the blocks' time; then how far apart a
row's blocks publish (the spread: first to last), how long after the row's
last publish its blocks hand the merged statistics over, and of each
block's wait for them, the part that the row's last publish still lay
ahead (the spread's share) against the part after it (the exchange's);
then the SMs most often last to publish a row, and whether a block that is
late on one row is late on the next (the correlation of its lateness,
publish minus the row's median, between consecutive rows)."""
import statistics

import trace_lines
from trace_lines import pct

PHASES = [(0, 1, "wait for the bytes"), (1, 2, "statistics"), (2, 3, "publish"),
          (3, 4, "until all published"), (4, 5, "merge, hand over"),
          (6, 7, "wait for merged"), (7, 8, "stores issued")]


def chained(v):
    """Whether v is a record: 12 numbers whose edges 0-1-2-3-4-5 and 6-7-8
    do not go back."""
    t = v[3:]
    return len(v) == 12 and all(t[k + 1] >= t[k] for k in (0, 1, 2, 3, 4, 6, 7))


def read(path):
    """The header line and the records: row rank sm t0..t8 (global timer,
    ns)."""
    head, recs = trace_lines.read(path, "gpipe_trace.py", "gpipe_trace", chained)
    return head, [{"row": v[0], "rank": v[1], "sm": v[2], "t": v[3:]} for v in recs]


def corr(a, b):
    """Pearson's r of the pairs (a[i], b[i]); 0 when either is constant."""
    ma, mb = statistics.mean(a), statistics.mean(b)
    sab = sum((x - ma) * (y - mb) for x, y in zip(a, b))
    saa = sum((x - ma) ** 2 for x in a)
    sbb = sum((y - mb) ** 2 for y in b)
    return sab / (saa * sbb) ** 0.5 if saa > 0 and sbb > 0 else 0.0


def main(path):
    head, recs = read(path)
    print(head)
    t0 = min(r["t"][0] for r in recs)
    end = max(r["t"][8] for r in recs)
    rows = {}
    for r in recs:
        rows.setdefault(r["row"], []).append(r)
    blocks = {(r["sm"], r["rank"]) for r in recs}
    print(f"records {len(recs)} ({len(rows)} rows, {len(blocks)} blocks), "
          f"span {(end - t0) / 1e3:.1f} us")
    for a, b, name in PHASES:
        d = sorted((r["t"][b] - r["t"][a]) / 1e3 for r in recs)
        print(f"  {name:20s} mean {statistics.mean(d):6.2f}  p10 {pct(d, .1):6.2f}  "
              f"p50 {pct(d, .5):6.2f}  p90 {pct(d, .9):6.2f} us")
    busy = len(blocks) * (end - t0)
    wb = sum(r["t"][1] - r["t"][0] for r in recs)
    wm = sum(r["t"][7] - r["t"][6] for r in recs)
    print(f"of the blocks' time: waiting for the bytes {100 * wb / busy:.1f}%, "
          f"for the merged statistics {100 * wm / busy:.1f}%")
    spread, after, before_last, after_last, late = [], [], 0, 0, {}
    for v in rows.values():
        pub = [r["t"][3] for r in v]
        last = max(pub)
        spread.append((last - min(pub)) / 1e3)
        after.append(statistics.mean((r["t"][5] - last) / 1e3 for r in v))
        for r in v:
            a, b = r["t"][6], r["t"][7]
            before_last += max(0, min(b, last) - a)
            after_last += max(0, b - max(a, last))
        sm = max(v, key=lambda r: r["t"][3])["sm"]
        late[sm] = late.get(sm, 0) + 1
    print(f"a row's blocks publish within {statistics.mean(spread):.2f} us "
          f"(p90 {pct(sorted(spread), .9):.2f}); the merged statistics are handed over "
          f"{statistics.mean(after):.2f} us after the last publish (means over rows)")
    w = before_last + after_last
    if w > 0:
        print(f"the wait for the merged statistics: {100 * before_last / w:.1f}% before the "
              f"row's last publish (the spread), {100 * after_last / w:.1f}% after it "
              "(the exchange)")
    top = sorted(late.items(), key=lambda kv: (-kv[1], kv[0]))[:5]
    print("last to publish, most often: " +
          ", ".join(f"SM {sm} {n} of {len(rows)} rows" for sm, n in top))
    # lateness of a block on a row: its publish minus the row's median
    med = {row: statistics.median(r["t"][3] for r in v) for row, v in rows.items()}
    by_block = {}
    for r in recs:
        by_block.setdefault((r["sm"], r["rank"]), []).append((r["row"], r["t"][3] - med[r["row"]]))
    a, b = [], []
    for v in by_block.values():
        v.sort()
        for (r1, l1), (r2, l2) in zip(v, v[1:]):
            a.append(l1)
            b.append(l2)
    if len(a) > 1:
        print(f"a block's lateness on a row and on its next: r = {corr(a, b):.2f} "
              f"({len(a)} pairs)")


if __name__ == "__main__":
    trace_lines.cli("gpipe_trace.py", main)
