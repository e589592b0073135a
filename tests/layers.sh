#!/usr/bin/env bash
# Fails when a file includes upward. The layers, top down (README, "Layout"):
#   4  src/cli
#   3  src/profiler  src/report  src/store
#   2  src/results   src/kernels
#   1  src/util
# A file may include its own folder and the folders of lower layers, never a
# folder of its own layer or above. variants/<op>/ sits beside src/kernels: it may
# include its own folder, src/kernels and src/util. Tests may include anything.
set -u
cd "$(dirname "$0")/.."

layer() {
    case $1 in
    cli) echo 4 ;;
    profiler | report | store) echo 3 ;;
    results | kernels) echo 2 ;;
    util) echo 1 ;;
    *) echo 0 ;;
    esac
}

bad=0
complain() {
    echo "upward include: $1: #include \"$2\" ($3)"
    bad=1
}

# The folder under src/ that include $2 of file $1 names, or "" for a system
# or same-folder header that is not project code.
target() {
    local file=$1 inc=$2 dir
    dir=$(dirname "$file")
    case $inc in
    */*) ;;
    *) echo "${dir##*/}"; return ;;
    esac
    if [ -e "$dir/$inc" ]; then # relative: "../util/status.h"
        local abs
        abs=$(realpath -m --relative-to=. "$dir/$inc")
        case $abs in
        src/*) abs=${abs#src/}; echo "${abs%%/*}" ;;
        *) echo "" ;;
        esac
        return
    fi
    [ -e "src/$inc" ] && echo "${inc%%/*}" || echo ""
}

while IFS= read -r file; do
    from=${file#src/}
    from=${from%%/*}
    while IFS= read -r inc; do
        to=$(target "$file" "$inc")
        [ -n "$to" ] || continue
        case $file in
        variants/*)
            [ "$to" = kernels ] || [ "$to" = util ] || [ "$to" = "$(basename "$(dirname "$file")")" ] ||
                complain "$file" "$inc" "variants include src/kernels and src/util only"
            continue ;;
        esac
        [ "$to" = "$from" ] && continue
        lf=$(layer "$from") lt=$(layer "$to")
        if [ "$lf" -eq 0 ] || [ "$lt" -eq 0 ]; then
            complain "$file" "$inc" "src/$to is in no layer; add it to tests/layers.sh"
        elif [ "$lt" -ge "$lf" ]; then
            complain "$file" "$inc" "src/$from may include only lower layers"
        fi
    done < <(sed -nE 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"([^"]+)".*/\1/p' "$file")
done < <(git ls-files 'src/*.c' 'src/*.h' 'src/*.cu' 'src/*.cuh' 'variants/*.cu' 'variants/*.cuh' \
    2>/dev/null; git ls-files --others --exclude-standard 'src/*' 'variants/*' 2>/dev/null)

[ "$bad" -eq 0 ] || exit 1
echo "include layers: no upward include"
