#!/usr/bin/env bash
# The load run of docs/explanation/performance.md, through the CLI: N
# conversations of 4 turns, each turn graded by one judge rubric, run with
# `agenteval run -j J` against `agenteval fakellm --latency L` in a second
# process (model target and judge both on the fake, judge cache off),
# measured with /usr/bin/time -v.
# It prints one line per run: wall seconds, agenteval's own CPU seconds
# (user+sys), CPU per turn, peak RSS, and the load average before the run.
#
#   scripts/loadrun.sh [-n 200] [-l 50ms] [-j 20] [-r 5] [-b BINARY]
#
# -r repeats the run; -b uses a built binary instead of building one.
set -euo pipefail
n=200 latency=50ms jobs=20 runs=1 bin=""
while getopts "n:l:j:r:b:" o; do
  case $o in
    n) n=$OPTARG ;; l) latency=$OPTARG ;; j) jobs=$OPTARG ;; r) runs=$OPTARG ;; b) bin=$OPTARG ;;
    *) echo "usage: $0 [-n conversations] [-l latency] [-j jobs] [-r runs] [-b binary]" >&2; exit 2 ;;
  esac
done
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
fake=""
trap '[ -n "$fake" ] && kill "$fake" 2>/dev/null; rm -rf "$work"' EXIT
if [ -z "$bin" ]; then
  (cd "$repo" && go build -o "$work/agenteval" ./cmd/agenteval)
  bin="$work/agenteval"
fi

{
  echo "tests:"
  for ((i = 0; i < n; i++)); do
    printf '  - id: c%d\n    mode: conversation\n    turns:\n' "$i"
    for k in 1 2 3 4; do
      printf '      - input: question %d of conversation %d\n        assertions: [Answers the question]\n' "$k" "$i"
    done
  done
} > "$work/load.yaml"

"$bin" fakellm --latency "$latency" --addr 127.0.0.1:0 > "$work/fake.out" 2> "$work/fake.err" &
fake=$!
for _ in $(seq 100); do grep -q OPENAI_BASE_URL "$work/fake.out" 2>/dev/null && break; sleep 0.1; done
export OPENAI_BASE_URL=$(sed -n 's/^export OPENAI_BASE_URL=//p' "$work/fake.out")
export OPENAI_API_KEY=fake AGENTEVAL_CACHE_DIR="$work/cache"
cd "$work"
turns=$((n * 4))
for ((r = 1; r <= runs; r++)); do
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  status=0
  /usr/bin/time -v -o "$work/time.txt" "$bin" run load.yaml --target openai:fake --judge openai:fake \
    -j "$jobs" --no-cache --no-store -q -o "$work/results.jsonl" > /dev/null 2> "$work/run.err" || status=$?
  if [ "$status" -ne 0 ]; then
    echo "run failed (exit $status):" >&2
    tail -5 "$work/run.err" >&2
    exit 1
  fi
  lines=$(wc -l < "$work/results.jsonl")
  awk -v load="$load" -v turns="$turns" -v lines="$lines" -v n="$n" -F': ' '
    /User time/ {u = $2} /System time/ {s = $2} /Maximum resident/ {rss = $2}
    /Elapsed \(wall clock\)/ {w = $2; k = split(w, p, ":"); wall = 0; for (i = 1; i <= k; i++) wall = wall * 60 + p[i]}
    END {printf "n=%d wall=%.2fs cpu=%.2fs cpu/turn=%.3fms rss=%.0fMB results=%d load=%s\n", n, wall, u + s, (u + s) * 1000 / turns, rss / 1024, lines - 1, load}' "$work/time.txt"
done
