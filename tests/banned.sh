#!/usr/bin/env bash
# Fails when project code calls a banned function: atoi/atol (no error checks),
# sprintf/vsprintf/strcpy/strcat/gets (no bounds). Use kb_parse_i64, snprintf,
# kb_strlcpy instead.
set -u
cd "$(dirname "$0")/.."
hits=$(grep -nE '(^|[^_a-zA-Z0-9])(atoi|atol|atoll|sprintf|vsprintf|strcpy|strcat|gets)[[:space:]]*\(' \
    $(git ls-files 'src/*.c' 'src/*.h' 'src/*.cu' 'src/*.cuh' 'variants/*.cu' 'tests/*.c' 'tests/*.h' 2>/dev/null) \
    | grep -vE '(snprintf|vsnprintf)')
if [ -n "$hits" ]; then
    echo "banned functions:"
    echo "$hits"
    exit 1
fi
echo "banned functions: none"
