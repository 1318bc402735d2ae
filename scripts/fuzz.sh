#!/usr/bin/env bash
# Runs every fuzzer of the module for FUZZTIME each (default 30s), one after
# another. A crasher fails the run and is saved under the package's
# testdata/fuzz, where go test then replays it.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${FUZZTIME:-30s}
failed=0
while IFS= read -r line; do
  file=${line%%:*}
  name=$(sed -E 's/^func (Fuzz[A-Za-z0-9_]*).*/\1/' <<<"${line#*:}")
  pkg=./$(dirname "$file")
  echo "== fuzz $pkg $name ($fuzztime)"
  if ! go test "$pkg" -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" -fuzzminimizetime 5s 2>&1 | tail -3; then
    failed=1
  fi
done < <(grep -rE '^func Fuzz[A-Za-z0-9_]*\(f \*testing\.F\)' --include='*_test.go' . | sed 's|^\./||' | sort)
exit $failed
