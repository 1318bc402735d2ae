#!/usr/bin/env bash
# The rate-limit run of docs/explanation/performance.md: N conversations of
# 4 turns, each turn graded by one judge rubric, run with
# `agenteval run -j J` and no rate settings against
# `agenteval fakellm --rpm R --latency L` in a second process (model
# target and judge both on the fake, one account, judge cache off). The
# fake samples its requests once a second (--stats).
# It prints the run's figures (wall time, tests that did not pass, the
# fake's 429s, the achieved rate as a share of the limit), the run's own
# rate-limit line, and the curve of requests in flight at the fake over
# time, one row per -s seconds.
#
#   scripts/ratelimit-run.sh [-n 300] [-j 100] [-r 600] [-t 0] [-l 1s] [-w 1s] [-s 10] [-b BINARY]
#
# -t adds a limit of tokens per minute (--tpm); -w is the fake's
# --rate-window; -b uses a built binary instead of building one. It exits
# 1 when a test did not pass.
set -euo pipefail
n=300 jobs=100 rpm=600 tpm=0 latency=1s window=1s step=10 bin=""
while getopts "n:j:r:t:l:w:s:b:" o; do
  case $o in
    n) n=$OPTARG ;; j) jobs=$OPTARG ;; r) rpm=$OPTARG ;; t) tpm=$OPTARG ;; l) latency=$OPTARG ;;
    w) window=$OPTARG ;; s) step=$OPTARG ;; b) bin=$OPTARG ;;
    *) echo "usage: $0 [-n conversations] [-j jobs] [-r rpm] [-t tpm] [-l latency] [-w rate window] [-s curve step in seconds] [-b binary]" >&2; exit 2 ;;
  esac
done
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
fake=""
trap '[ -n "$fake" ] && kill "$fake" 2>/dev/null; [ -n "${KEEP:-}" ] && cp -r "$work" "$KEEP"; rm -rf "$work"' EXIT
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

"$bin" fakellm --rpm "$rpm" --tpm "$tpm" --rate-window "$window" --latency "$latency" --stats "$work/stats.txt" \
  --addr 127.0.0.1:0 > "$work/fake.out" 2> "$work/fake.err" &
fake=$!
for _ in $(seq 100); do grep -q OPENAI_BASE_URL "$work/fake.out" 2>/dev/null && break; sleep 0.1; done
export OPENAI_BASE_URL=$(sed -n 's/^export OPENAI_BASE_URL=//p' "$work/fake.out")
# A key that no answer's text holds: keys are redacted from all output.
export OPENAI_API_KEY=sk-ratelimit-run AGENTEVAL_CACHE_DIR="$work/cache"
cd "$work"
load=$(cut -d' ' -f1-3 /proc/loadavg)
# The fake's counts before the run, so that only the run's are measured.
sleep 1.1
before=$(tail -1 stats.txt)
t0=$(date +%s.%N)
status=0
"$bin" run load.yaml --target openai:fake --judge openai:fake -j "$jobs" --no-cache --no-store \
  -o results.jsonl > /dev/null 2> run.err || status=$?
t1=$(date +%s.%N)
kill "$fake" && wait "$fake" 2>/dev/null || true
fake=""
after=$(tail -1 stats.txt)

# Each test's own verdict: the first on its line, before its scores'.
pass=$(grep -c '^{"test_id":[^{]*"verdict":"pass"' results.jsonl || true)
notpass=$(grep -c '^{"test_id":[^{]*"verdict":"\(fail\|error\)"' results.jsonl || true)
read -r _ s0 a0 l0 _ <<< "$before"
read -r _ s1 a1 l1 _ <<< "$after"
awk -v t0="$t0" -v t1="$t1" -v ok=$(((a1 - a0) - (l1 - l0))) -v lim=$((l1 - l0)) -v rpm="$rpm" \
  -v n="$n" -v jobs="$jobs" -v lat="$latency" -v pass="$pass" -v notpass="$notpass" -v code="$status" -v load="$load" 'BEGIN {
  wall = t1 - t0; rate = ok / wall * 60
  share = rpm > 0 ? sprintf(" (%.1f%% of the limit)", 100 * rate / rpm) : ""
  printf "n=%d j=%d latency=%s rpm=%d: wall=%.1fs exit=%d passed=%d not-passed=%d requests=%d 429s=%d rate=%.0f/min%s load=%s\n",
    n, jobs, lat, rpm, wall, code, pass, notpass, ok, lim, rate, share, load
}'
grep -i "answers\? of 429" run.err || true
echo
echo "in flight at the fake, every ${step}s (answered a minute over the step, 429s in the step):"
printf '%6s %9s %10s %6s\n' "t (s)" "in flight" "answered/m" "429s"
awk -v t0="$(echo "$before" | cut -d' ' -f1)" -v step="$step" '
  $1 < t0 { next }
  { t = $1 - t0 }
  !started { pt = t; pa = $3 - $4; pl = $4; started = 1; printf "%6.0f %9d %10s %6s\n", t, $5, "-", "-"; next }
  t - pt >= step - 0.05 {
    printf "%6.0f %9d %10.0f %6d\n", t, $5, (($3 - $4) - pa) / (t - pt) * 60, $4 - pl
    pt = t; pa = $3 - $4; pl = $4
  }' stats.txt
[ "$notpass" -eq 0 ] && [ "$status" -eq 0 ]
