#!/usr/bin/env bash
# Every C and CMake code block of the user guide (docs/guide/*.md) is a part
# of one of its compiled examples (docs/guide/examples), so the guide cannot
# show code that does not build and run. A block may leave lines out where
# it has a line "/* ... */" (or "# ..." in CMake); each piece must then be
# found on its own.
# usage: guide_snippets.sh GUIDE_DIR
set -euo pipefail
guide=$1
examples=()
for f in "$guide"/examples/*.c "$guide"/examples/*.h "$guide"/examples/CMakeLists.txt; do
  examples+=("$(cat "$f")")
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
blocks=0 bad=0
for md in "$guide"/*.md; do
  # One file per piece: fenced c/cmake blocks, cut at the elision lines.
  awk -v dir="$tmp" -v base="$(basename "$md")" '
    /^```(c|cmake)$/ { inside = 1; n++; piece = 0; file = sprintf("%s/%s.%03d.%02d", dir, base, n, piece); next }
    /^```/ { inside = 0; next }
    inside && /^ *(\/\* \.\.\. \*\/|# \.\.\.) *$/ { piece++; file = sprintf("%s/%s.%03d.%02d", dir, base, n, piece); next }
    inside { print > file }
  ' "$md"
done
for piece in "$tmp"/*; do
  [ -e "$piece" ] || continue
  blocks=$((blocks + 1))
  text=$(cat "$piece")
  found=0
  for e in "${examples[@]}"; do
    if [[ "$e" == *"$text"* ]]; then found=1; break; fi
  done
  if [ $found -eq 0 ]; then
    bad=$((bad + 1))
    echo "not in any example: $(basename "$piece"):"
    sed 's/^/  | /' "$piece"
  fi
done
echo "guide_snippets: $blocks pieces of code blocks, $bad not found in docs/guide/examples"
[ $bad -eq 0 ] && [ $blocks -gt 0 ]
