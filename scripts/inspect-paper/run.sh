#!/usr/bin/env bash
# Runs agent_inspect's six paper datasets (paper_experiments/datasets/*.json
# in SAP/agent-quality-inspect) through agenteval, offline: each file is
# validated and run against examples/inspect/agent, a command agent with the
# tools of agenteval.yaml beside this script, with `agenteval fakellm
# --call-tools` as the agent's model, the simulated user and the judge.
# It prints, per file, the tests, execution errors, and the expected tool
# calls scored (validated, met) from the calls the agent really made.
#
#   scripts/inspect-paper/run.sh PATH   # a checkout, or a bare git dir, of agent-quality-inspect
#
# Needs go and jq. The datasets are not copied into this repository.
set -euo pipefail
src=${1:?usage: run.sh PATH-TO-agent-quality-inspect (checkout or bare git dir)}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
work=$(mktemp -d)
fake=""
trap '[ -n "$fake" ] && kill "$fake" 2>/dev/null; rm -rf "$work"' EXIT

files=(sample tau2bench_dataset tau2bench_dataset_easy tau2bench_dataset_hard tau2bench_dataset_small toolsandbox_dataset)
mkdir -p "$work/data"
for f in "${files[@]}"; do
  if [ -f "$src/paper_experiments/datasets/$f.json" ]; then
    cp "$src/paper_experiments/datasets/$f.json" "$work/data/"
  else
    git --git-dir="$src" show "HEAD:paper_experiments/datasets/$f.json" > "$work/data/$f.json"
  fi
done

(cd "$repo" && go build -o "$work/agenteval" ./cmd/agenteval && go build -o "$work/agent" ./examples/inspect/agent)
"$work/agenteval" fakellm --call-tools --addr 127.0.0.1:0 > "$work/fake.out" 2> "$work/fake.err" &
fake=$!
for _ in $(seq 50); do grep -q OPENAI_BASE_URL "$work/fake.out" 2>/dev/null && break; sleep 0.1; done
export OPENAI_BASE_URL=$(sed -n 's/^export OPENAI_BASE_URL=//p' "$work/fake.out")
export OPENAI_API_KEY=fake INSPECT_AGENT="$work/agent" AGENTEVAL_CACHE_DIR="$work/cache"

printf '%-28s %6s %6s %8s %10s %6s %6s\n' FILE TESTS ERRORS EXPECTED VALIDATED MET CALLS
status=0
for f in "${files[@]}"; do
  "$work/agenteval" validate --config "$here/agenteval.yaml" "$work/data/$f.json" > "$work/$f.validate" || { cat "$work/$f.validate"; status=1; }
  "$work/agenteval" run --config "$here/agenteval.yaml" --no-cache -q -o "$work/$f.jsonl" "$work/data/$f.json" > /dev/null 2> "$work/$f.err" || true
  jq -rs --arg f "$f" '
    [.[] | select(.test_id)] as $t
    | ($t | map(.scores[]? | select(.name == "expected_tool_calls")) ) as $e
    | [$f, ($t|length), ($t | map(select(.execution_status == "execution_error")) | length),
       ($t | map(.output // [] | map(select(.role == "assistant") | .tool_calls // [] | length) | add // 0) | add // 0) as $calls
       | ($e | map(.details.expected + (.details.not_validated // [] | length)) | add // 0),
       ($e | map(.details.expected) | add // 0), ($e | map(.details.matched) | add // 0), $calls]
    | @tsv' "$work/$f.jsonl" | awk -F'\t' '{printf "%-28s %6s %6s %8s %10s %6s %6s\n", $1, $2, $3, $4, $5, $6, $7}'
  if jq -e 'select(.execution_status == "execution_error")' "$work/$f.jsonl" > /dev/null; then
    status=1
    jq -r 'select(.execution_status == "execution_error") | "  \(.test_id): \(.error // ([.scores[] | select(.verdict == "error") | .reason] | join("; ")))"' "$work/$f.jsonl"
  fi
done
exit $status
