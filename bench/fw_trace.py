#!/usr/bin/env python3
"""Reads build/bench/fw_trace's output (bench/fw_trace.cu's header) and says
where a block's cycles go at the edges of flash-wgmma's work tiles.

    python3 bench/fw_trace.py TRACE.txt
    python3 bench/fw_trace.py --blocks TRACE.txt

For each consumer warpgroup's work tile, in SM cycles (medians over all the
blocks' tiles, and means):
  qwait    from the stores of the tile before to this tile's Q in
  k0       Q in to tile 0's K in;  turn0  to its turn;  s0  to its S in
  sm0      tile 0's softmax;  loop  the key tiles after it (per key tile too)
  pvlast   the last P V;  store  O's stores
and the edge cost: the tile's span (Q in to the next tile's Q in) less its
key tiles at the steady per-key-tile cost of the loop, in cycles and in key
tiles; and per block and work tile: the copies' latencies, qlat (Q asked
for by the producer to Q in at the first consumer to see it) and k0lat
(tile 0's K alike), and gap, the tensor pipe's idle time at the work tile's
edge, from the later consumer's last P V in to the earlier consumer's first
S issued. The loop's waits (for K and V, the turn, S, P V) are shown per key
tile. The blocks' spans (first Q in to last store) give the tail: the mean
block's span over the longest one.

--blocks reads the producer's records alone (fw_trace's st has no others):
per block, its span from its first segment's top to the last segment's
last S (Q's slot freed for the record past the last), the tail efficiency
those spans give, and the segments' lengths (one Q-slot free to the next)
by their key tiles.
"""
import statistics
import sys


def med(v):
    return statistics.median(v) if v else float("nan")


def mean(v):
    return statistics.fmean(v) if v else float("nan")


def fail(msg):
    print("fw_trace.py: " + msg, file=sys.stderr)
    sys.exit(2)


CKEYS = "gtime qin k0in turn0 s0in sm0done loopend pvin stored waitkv waitturn waits waitpv"


def read(path, consumers=True):
    """The header lines, the producer's records by (block, n) and the
    consumers' by (block, warpgroup, n) (required unless not consumers)."""
    head, prod, cons = [], {}, {}
    try:
        lines = open(path).read().splitlines()
    except OSError as e:
        fail(f"{path}: {e.strerror}")
    for i, line in enumerate(lines, 1):
        t = line.split()
        try:
            if not t:
                continue
            if t[0] == "#":
                head.append(line)
            elif t[0] == "P" and len(t) == 10:
                b, n, wt, nt, *v = map(int, t[1:])
                prod[(b, n)] = dict(zip("wt nt top qfree qasked k0asked vlast".split(),
                                        [wt, nt] + v))
            elif t[0] == "C" and len(t) == 19:
                b, n, w, wt, nt, *v = map(int, t[1:])
                cons[(b, w, n)] = dict(zip(CKEYS.split(), v), wt=wt, nt=nt)
            else:
                raise ValueError
        except ValueError:
            fail(f"{path}:{i}: not a record of bench/fw_trace: {line[:60]!r}")
    if consumers and not cons:
        fail(f"{path}: no consumer records")
    if not consumers and not prod:
        fail(f"{path}: no producer records")
    return head, prod, cons


def blocks(path):
    head, prod, _ = read(path, consumers=False)
    for h in head:
        print(h)
    spans, segs, lens, by_block = [], [], {}, {}
    for (b, n), r in sorted(prod.items()):
        by_block.setdefault(b, []).append(r)
    for recs in by_block.values():
        if len(recs) < 2 or recs[-1]["nt"] != 0:
            continue  # the record past the last segment (nt 0) ends the span
        spans.append(recs[-1]["qfree"] - recs[0]["top"])
        segs.append(len(recs) - 1)
        for r, nxt in zip(recs, recs[1:]):
            lens.setdefault(r["nt"], []).append(nxt["qfree"] - r["qfree"])
    if not spans:
        fail(f"{path}: no block's last record")
    print(f"blocks' spans: mean {mean(spans):.0f}, longest {max(spans):.0f} cycles: "
          f"tail efficiency {mean(spans) / max(spans):.3f}")
    print(f"segments a block: {min(segs)}..{max(segs)}")
    print(f"{'key tiles':>9} {'segments':>9} {'median':>9} {'mean':>9}  (from its Q free to the next's)")
    for nt in sorted(lens):
        print(f"{nt:9d} {len(lens[nt]):9d} {med(lens[nt]):9.0f} {mean(lens[nt]):9.0f}")


def main(path):
    head, prod, cons = read(path)
    for h in head:
        print(h)
    per_tile_loop = [(c["loopend"] - c["sm0done"]) / (c["nt"] - 1)
                     for c in cons.values() if c["nt"] > 1]
    kt = med(per_tile_loop)
    rows = {k: [] for k in ("qwait", "k0", "turn0", "s0", "sm0", "loop", "pvlast", "store",
                            "edge", "qlat", "k0lat", "gap", "waitkv", "waitturn", "waits",
                            "waitpv")}
    spans = {}
    for (b, w, n), c in sorted(cons.items()):
        prev = cons.get((b, w, n - 1))
        nxt = cons.get((b, w, n + 1))
        if prev:
            rows["qwait"].append(c["qin"] - prev["stored"])
        rows["k0"].append(c["k0in"] - c["qin"])
        rows["turn0"].append(c["turn0"] - c["k0in"])
        rows["s0"].append(c["s0in"] - c["turn0"])
        rows["sm0"].append(c["sm0done"] - c["s0in"])
        rows["loop"].append(c["loopend"] - c["sm0done"])
        rows["pvlast"].append(c["pvin"] - c["loopend"])
        rows["store"].append(c["stored"] - c["pvin"])
        if c["nt"] > 1:
            for k in ("waitkv", "waitturn", "waits", "waitpv"):
                rows[k].append(c[k] / (c["nt"] - 1))
        if nxt:
            rows["edge"].append(nxt["qin"] - c["qin"] - c["nt"] * kt)
        s = spans.setdefault((b, w), [c["qin"], c["stored"], 0])
        s[0] = min(s[0], c["qin"])
        s[1] = max(s[1], c["stored"])
        s[2] += 1
    by_tile = {}
    for (b, w, n), c in cons.items():
        by_tile.setdefault((b, n), []).append(c)
    for (b, n), cs in sorted(by_tile.items()):
        p = prod.get((b, n))
        if p and p["wt"] == cs[0]["wt"]:
            rows["qlat"].append(min(c["qin"] for c in cs) - p["qasked"])
            rows["k0lat"].append(min(c["k0in"] for c in cs) - p["k0asked"])
        before = by_tile.get((b, n - 1))
        if before:
            rows["gap"].append(min(c["turn0"] for c in cs) - max(c["pvin"] for c in before))
    print(f"steady key tile: {kt:.0f} cycles (median of the loops' per-tile cost)")
    print(f"{'':10} {'median':>9} {'mean':>9} {'key tiles':>9}")
    for k, v in rows.items():
        if not v:
            continue
        print(f"{k:10} {med(v):9.0f} {mean(v):9.0f} {mean(v) / kt:9.2f}")
    durs = [s[1] - s[0] for s in spans.values()]
    print(f"blocks' spans: mean {mean(durs):.0f}, longest {max(durs):.0f} cycles: "
          f"tail efficiency {mean(durs) / max(durs):.3f}")
    tiles = [s[2] for s in spans.values()]
    print(f"work tiles a consumer: {min(tiles)}..{max(tiles)}")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--blocks":
        blocks(sys.argv[2])
    elif len(sys.argv) == 2 and not sys.argv[1].startswith("-"):
        main(sys.argv[1])
    else:
        fail("usage: fw_trace.py [--blocks] TRACE.txt")
