#!/usr/bin/env bash
# Runs every test binary under BUILD/tests (unit, cli, gpu) and prints one
# closing line "N passed, N failed, N skipped". GPU tests skip, saying so, when
# there is no GPU. Usage: tests/run.sh [BUILD]   (default build)
set -u
build=${1:-build}
export KBENCH_BIN=${KBENCH_BIN:-$build/kbench}
passed=0 failed=0 skipped=0 bad_bins=""
for t in "$build"/tests/unit/* "$build"/tests/cli/* "$build"/tests/gpu/*; do
    [ -x "$t" ] || continue
    log=$(mktemp)
    "$t" >"$log" 2>&1
    rc=$?
    cat "$log"
    p=$(grep -c '^\[       OK \]' "$log")
    # cmocka names a failed or skipped test twice: as it runs and in the summary
    f=$(grep -E '^\[  FAILED  \] [A-Za-z_]' "$log" | sort -u | wc -l)
    s=$(grep -E '^\[  SKIPPED \] [A-Za-z_]' "$log" | sort -u | wc -l)
    passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
    if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
        failed=$((failed + 1)); bad_bins="$bad_bins $t"
    fi
    rm -f "$log"
done
[ -n "$bad_bins" ] && echo "test programs that failed outside a test:$bad_bins"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
