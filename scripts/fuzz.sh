#!/usr/bin/env bash
# Runs every fuzzer of the module for FUZZTIME each (default 30s), one after
# another. A crasher fails the run and is saved under the package's
# testdata/fuzz, where go test then replays it; its output is printed whole.
#
# A fuzzer that fails without saving a crasher failed in Go's fuzzing
# machinery (a worker that hung or was killed on a loaded machine), not in
# our code: its output is printed and it is run once more; a second such
# failure fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
fuzztime=${FUZZTIME:-30s}
failed=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT
crashers() { { find "$1/testdata/fuzz/$2" -type f 2>/dev/null || true; } | sort; }
while IFS= read -r line; do
  file=${line%%:*}
  name=$(sed -E 's/^func (Fuzz[A-Za-z0-9_]*).*/\1/' <<<"${line#*:}")
  pkg=./$(dirname "$file")
  for attempt in 1 2; do
    echo "== fuzz $pkg $name ($fuzztime)"
    before=$(crashers "$pkg" "$name")
    if go test "$pkg" -run '^$' -fuzz "^${name}\$" -fuzztime "$fuzztime" -fuzzminimizetime 5s >"$log" 2>&1; then
      tail -3 "$log"
      break
    fi
    after=$(crashers "$pkg" "$name")
    new=$(comm -13 <(echo "$before") <(echo "$after") | sed '/^$/d')
    tail -60 "$log"
    if [ -n "$new" ]; then
      echo "crasher saved: $new"
      failed=1
      break
    fi
    if [ "$attempt" -eq 2 ]; then
      echo "$name failed twice without a crasher"
      failed=1
    else
      echo "$name failed without saving a crasher (fuzzing machinery); running it once more"
    fi
  done
done < <(grep -rE '^func Fuzz[A-Za-z0-9_]*\(f \*testing\.F\)' --include='*_test.go' . | sed 's|^\./||' | sort)
exit $failed
