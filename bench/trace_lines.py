"""What the trace readers share (bench/grid_trace.py, bench/gpipe_trace.py):
their command line, their one-line failures, the quantile they print and
the reading of a trace file, a comment line and then records of whole
numbers."""
import sys


def fail(tool, msg):
    """Says msg as tool and exits 2."""
    print(f"{tool}: {msg}", file=sys.stderr)
    sys.exit(2)


def pct(v, p):
    """The p-quantile of the sorted list v (nearest rank below)."""
    return v[min(len(v) - 1, int(p * len(v)))]


def read(path, tool, source, ok):
    """The last comment line and the records of path: lines of whole numbers
    that ok(numbers) accepts; any other line fails as `tool`, naming it not a
    record of bench/`source`, and so does a file without records."""
    try:
        lines = open(path).read().splitlines()
    except OSError as e:
        fail(tool, f"{path}: {e.strerror}")
    recs, head = [], ""
    for i, line in enumerate(lines, 1):
        if line.startswith("#"):
            head = line.strip()
            continue
        if not line.strip():
            continue
        try:
            v = [int(w) for w in line.split()]
            if not ok(v):
                raise ValueError
        except ValueError:
            fail(tool, f"{path}:{i}: not a record of bench/{source}: {line[:60]!r}")
        recs.append(v)
    if not recs:
        fail(tool, f"{path}: no records")
    return head, recs


def cli(tool, main):
    """Runs main(path) on the command line's one argument, a trace file; any
    other command line gets the usage line and exit 2."""
    if len(sys.argv) != 2 or sys.argv[1].startswith("-"):
        print(f"usage: {tool} TRACE.txt", file=sys.stderr)
        sys.exit(2)
    main(sys.argv[1])
