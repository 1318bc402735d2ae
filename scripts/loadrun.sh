#!/usr/bin/env bash
# The load run of docs/explanation/performance.md, through the CLI: N
# conversations of 4 turns, each turn graded by one judge rubric, run with
# `agenteval run -j J` against `agenteval fakellm --latency L` in a second
# process (model target and judge both on the fake, judge cache off), the
# way a user runs it: the run store on (a project's, new for each
# workload), results to a file, a line per result on stderr. Each run is
# measured with /usr/bin/time -v.
#
#   scripts/loadrun.sh [-n 200] [-l 50ms] [-j 20] [-r 1] [-b BINARY] [-S]
#   scripts/loadrun.sh --table [-r 5] [-b BINARY]
#
# The first form prints one line per run: wall seconds, agenteval's own
# CPU (user + sys) and per turn, the fake's CPU per turn, peak RSS, and
# the load average before the run. -r repeats the run; -b uses a built
# binary instead of building one; -S turns the store off (--no-store).
#
# --table measures the set the performance page reports, each -r times
# (default 5), and prints it as a Markdown table of medians, with the
# ranges and the machine's load average (/proc/loadavg, as uptime shows
# it) over the runs:
#   - 200 conversations at 50 ms, -j 20: wall time against the ideal 2.0 s
#     (10 rounds of 4 turns × 50 ms) and against the same run's baseline,
#     one conversation of 40 turns whose last turn is graded: 41 calls in
#     a row, the floor of one slot's work with the fake and the CLI's
#     start-up, measured between the workload's runs;
#   - 200 conversations at 0 ms: agenteval's CPU per turn, judge call
#     included;
#   - 1,000, 10,000 and 100,000 conversations at 0 ms: peak RSS.
# It takes about 15 minutes on a 2-core machine, most of it the 100,000;
# LOADRUN_SIZES="1000 10000" measures the memory at other sizes.
set -euo pipefail
n=200 latency=50ms jobs=20 runs="" bin="" table=0 store=1
args=()
for a in "$@"; do
  if [ "$a" = --table ]; then table=1; else args+=("$a"); fi
done
set -- ${args[@]+"${args[@]}"}
usage() { echo "usage: $0 [-n conversations] [-l latency] [-j jobs] [-r runs] [-b binary] [-S] | $0 --table [-r runs] [-b binary]" >&2; exit 2; }
while getopts "n:l:j:r:b:S" o; do
  case $o in
    n) n=$OPTARG ;; l) latency=$OPTARG ;; j) jobs=$OPTARG ;; r) runs=$OPTARG ;; b) bin=$OPTARG ;; S) store=0 ;;
    *) usage ;;
  esac
done
shift $((OPTIND - 1))
[ $# -eq 0 ] || usage
[ -z "$runs" ] && runs=$((table ? 5 : 1))
repo=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
fakes=()
cleanup() {
  for p in ${fakes[@]+"${fakes[@]}"}; do kill "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
built=""
if [ -z "$bin" ]; then
  (cd "$repo" && go build -o "$work/built" ./cmd/agenteval)
  bin="$work/built" built=$(git -C "$repo" describe --always --dirty 2>/dev/null)
fi
# The run uses a copy, as a release's archive would install it: the pages
# of a binary the linker has just written count 5 to 10 MB more in RSS
# than those of the same bytes copied.
cp "$bin" "$work/agenteval"
bin="$work/agenteval"
cd "$work"

# conversations N FILE writes N conversations of 4 turns, a judge rubric on
# each (internal/loadsuite writes the same file for the Go benchmarks).
conversations() {
  awk -v n="$1" 'BEGIN {
    print "tests:"
    for (i = 0; i < n; i++) {
      printf "  - id: c%d\n    mode: conversation\n    turns:\n", i
      for (k = 1; k <= 4; k++) printf "      - input: question %d of conversation %d\n        assertions: [Answers the question]\n", k, i
    }
  }' > "$2"
}

# baseline FILE writes the baseline: one conversation of 40 turns, the
# last graded, so 41 calls one after another.
baseline() {
  awk 'BEGIN {
    print "tests:\n  - id: baseline\n    mode: conversation\n    turns:"
    for (k = 1; k < 40; k++) printf "      - input: question %d\n", k
    print "      - input: question 40\n        assertions: [Answers the question]"
  }' > "$1"
}

# fake LATENCY starts a fake model and sets url and fakepid.
fake() {
  "$bin" fakellm --latency "$1" --addr 127.0.0.1:0 > "$work/fake.$1.out" 2> "$work/fake.$1.err" &
  fakepid=$!
  fakes+=("$fakepid")
  url=""
  for _ in $(seq 100); do
    url=$(sed -n 's/^export OPENAI_BASE_URL=//p' "$work/fake.$1.out" 2>/dev/null)
    [ -n "$url" ] && return
    sleep 0.1
  done
  echo "fakellm did not start:" >&2
  cat "$work/fake.$1.err" >&2
  exit 1
}

# ticks PID is the CPU time a process has used, in clock ticks.
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# newstore starts a new project's store (.agenteval/ in the working
# folder): each workload's first run makes it, the later ones add to it,
# as a project's runs do.
newstore() { rm -rf "$work/.agenteval"; }

# measure FILE N runs agenteval once on N conversations and prints "wall cpu rss load
# fakecpu" (seconds, seconds, MB, 1-minute load average, seconds).
measure() {
  local load status=0 f0 f1 storeflag=()
  load=$(cut -d' ' -f1 /proc/loadavg)
  [ "$store" = 0 ] && storeflag=(--no-store)
  f0=$(ticks "$fakepid")
  OPENAI_BASE_URL=$url /usr/bin/time -v -o "$work/time.txt" "$bin" run "$1" --target openai:loadrun --judge openai:loadrun \
    -j "$jobs" --no-cache ${storeflag[@]+"${storeflag[@]}"} -o "$work/results.jsonl" > /dev/null 2> "$work/run.err" || status=$?
  f1=$(ticks "$fakepid")
  if [ "$status" -ne 0 ]; then
    echo "run failed (exit $status):" >&2
    tail -5 "$work/run.err" >&2
    exit 1
  fi
  local lines
  lines=$(($(wc -l < "$work/results.jsonl") - 1))
  if [ "$lines" -ne "$2" ]; then
    echo "$lines results, want $2" >&2
    exit 1
  fi
  awk -v load="$load" -v fake="$(((f1 - f0)))" -v hz="$(getconf CLK_TCK)" -F': ' '
    /User time/ {u = $2} /System time/ {s = $2} /Maximum resident/ {rss = $2}
    /Elapsed \(wall clock\)/ {w = $2; k = split(w, p, ":"); wall = 0; for (i = 1; i <= k; i++) wall = wall * 60 + p[i]}
    END {printf "%.3f %.3f %.1f %s %.3f\n", wall, u + s, rss / 1024, load, fake / hz}' "$work/time.txt"
}

# The key is one no result contains: agenteval hides the key's text
# wherever it appears.
export OPENAI_API_KEY=loadrun-not-a-key AGENTEVAL_CACHE_DIR="$work/cache"

if [ "$table" = 0 ]; then
  conversations "$n" load.yaml
  fake "$latency"
  turns=$((n * 4))
  newstore
  for ((r = 1; r <= runs; r++)); do
    measure load.yaml "$n" | awk -v n="$n" -v turns="$turns" '{
      printf "n=%d wall=%.2fs cpu=%.2fs cpu/turn=%.3fms fake-cpu/turn=%.3fms rss=%.0fMB load=%s\n", n, $1, $2, $2 * 1000 / turns, $5 * 1000 / turns, $3, $4 }'
  done
  exit 0
fi

# stats COLUMN FILE prints the median, minimum and maximum of a column.
stats() { sort -g -k"$1","$1" "$2" | awk -v c="$1" '{v[NR] = $c} END {m = NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2; print m, v[1], v[NR]}'; }
# loads FILE prints the range of the load averages of a set of runs.
loads() { sort -g -k4,4 "$1" | awk '{v[NR] = $4} END {print (v[1] == v[NR] ? v[1] : v[1] "–" v[NR])}'; }

jobs=20
baseline base.yaml
conversations 200 c200.yaml
echo "measuring: 200 conversations at 50 ms, and the baseline ($runs runs each)" >&2
fake 50ms
newstore
: > slow.txt
: > base.txt
for ((r = 1; r <= runs; r++)); do
  measure c200.yaml 200 >> slow.txt
  measure base.yaml 1 >> base.txt
done
echo "measuring: 200 conversations at 0 ms" >&2
fake 0ms
newstore
: > fast.txt
for ((r = 1; r <= runs; r++)); do measure c200.yaml 200 >> fast.txt; done
sizes=${LOADRUN_SIZES:-1000 10000 100000}
for m in $sizes; do
  echo "measuring: $m conversations at 0 ms" >&2
  conversations "$m" "c$m.yaml"
  newstore
  : > "mem$m.txt"
  for ((r = 1; r <= runs; r++)); do measure "c$m.yaml" "$m" >> "mem$m.txt"; done
  rm "c$m.yaml"
done

read -r sw sw0 sw1 < <(stats 1 slow.txt)
read -r bw bw0 bw1 < <(stats 1 base.txt)
read -r sc _ _ < <(stats 2 slow.txt)
read -r sr _ _ < <(stats 3 slow.txt)
read -r fw fw0 fw1 < <(stats 1 fast.txt)
read -r fc fc0 fc1 < <(stats 2 fast.txt)
read -r fr _ _ < <(stats 3 fast.txt)
read -r ff _ _ < <(stats 5 fast.txt)
version=$("$bin" --version 2>/dev/null | head -1)
[ -n "$built" ] && version="$version, built from $built"
cpus=$(getconf _NPROCESSORS_ONLN)
awk -v v="$version" -v cpus="$cpus" -v runs="$runs" -v d="$(date -u +%Y-%m-%d)" 'BEGIN {
  printf "Measured on %s with `scripts/loadrun.sh --table` (%s; %d CPUs, shared): medians of %d runs, ranges in brackets, and the 1-minute load average before each run.\n\n", d, v, cpus, runs }'
echo "| Workload (4 turns a conversation, a judge rubric a turn, \`-j 20\`, store on) | Wall | agenteval CPU per turn | Peak RSS | Load |"
echo "|---|---|---|---|---|"
awk -v w="$sw" -v w0="$sw0" -v w1="$sw1" -v b="$bw" -v b0="$bw0" -v b1="$bw1" -v c="$sc" -v r="$sr" -v l="$(loads slow.txt)" -v lb="$(loads base.txt)" 'BEGIN {
  printf "| 200 conversations, 50 ms | **%.2f s** (%.2f–%.2f): **%.3f ×** the ideal 2.0 s, %.3f × the baseline | %.2f ms | %.0f MB | %s |\n", w, w0, w1, w / 2, w / b, c * 1000 / 800, r, l
  printf "| baseline: 1 conversation of 40 turns, the last graded (41 calls in a row), 50 ms | %.2f s (%.2f–%.2f) | | | %s |\n", b, b0, b1, lb }'
awk -v w="$fw" -v w0="$fw0" -v w1="$fw1" -v c="$fc" -v c0="$fc0" -v c1="$fc1" -v r="$fr" -v f="$ff" -v l="$(loads fast.txt)" 'BEGIN {
  printf "| 200 conversations, 0 ms | %.2f s (%.2f–%.2f) | **%.3f ms** (%.3f–%.3f; the fake: %.3f ms) | %.0f MB | %s |\n", w, w0, w1, c * 1000 / 800, c0 * 1000 / 800, c1 * 1000 / 800, f * 1000 / 800, r, l }'
r10=""
for m in $sizes; do
  read -r w w0 w1 < <(stats 1 "mem$m.txt")
  read -r c _ _ < <(stats 2 "mem$m.txt")
  read -r r r0 r1 < <(stats 3 "mem$m.txt")
  [ "$m" = 10000 ] && r10=$r
  ratio=""
  [ "$m" = 100000 ] && [ -n "$r10" ] && ratio=$(awk -v a="$r" -v b="$r10" 'BEGIN {printf ", %.2f × the 10,000'"'"'s", a / b}')
  awk -v m="$m" -v w="$w" -v w0="$w0" -v w1="$w1" -v c="$c" -v r="$r" -v r0="$r0" -v r1="$r1" -v ratio="$ratio" -v l="$(loads "mem$m.txt")" '
  function commas(x,  s) { s = x ""; while (s ~ /[0-9][0-9][0-9][0-9]/) sub(/[0-9][0-9][0-9]($|,)/, ",&", s); return s }
  BEGIN {
    printf "| %s conversations, 0 ms | %.1f s (%.1f–%.1f) | %.3f ms | **%.0f MB** (%.0f–%.0f%s) | %s |\n", commas(m), w, w0, w1, c * 1000 / (m * 4), r, r0, r1, ratio, l }'
done
