#!/usr/bin/env bash
# Counts how many of AgentV's own eval files agenteval loads, and (with
# --run) runs them against agenteval fakellm.
#
#   scripts/compat/count.sh [--run] AGENTV_DIR [GIT_REF]
#
# AGENTV_DIR is a checkout of github.com/EntityProcess/agentv (or a bare git
# directory, with GIT_REF). With GIT_REF the tree at that ref is exported to
# a temporary folder first, e.g.:
#
#   scripts/compat/count.sh --run ~/src/agentv v4.42.4
#   scripts/compat/count.sh --run ~/src/agentv main
#
# An eval file is a YAML file (outside node_modules) whose top level has
# tests: or scenarios:, or a JSONL file of AgentV tests (lines with an id
# and an input, criteria or vars; baselines and results excluded). A file
# passes when `agenteval validate --judge openai:fake FILE` exits 0: it
# loads, possibly with warnings and with tests marked to skip (coding-agent
# workspaces, skill-trigger graders).
#
# With --run, every file that loads is run with --target openai:fake
# --judge openai:fake against agenteval fakellm on a free loopback port.
# The script counts crashes (a panic, or an exit status other than 0, 1 or
# 3) and results in execution_error, grouped by their error.
#
# AGENTEVAL, when set, is the agenteval binary to use; otherwise the
# script builds one from this repository. It needs bash, git, grep, sort
# only bash, git, tar, grep, sed and sort.
set -euo pipefail

run=0
if [[ ${1:-} == --run ]]; then run=1; shift; fi
if [[ $# -lt 1 ]]; then
	sed -n '2,27p' "$0" | sed 's/^# \{0,1\}//'
	exit 2
fi
src=$1
ref=${2:-}
here=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"; [[ -n ${fake_pid:-} ]] && kill "$fake_pid" 2>/dev/null || true' EXIT

if [[ -z ${AGENTEVAL:-} ]]; then
	(cd "$here" && go build -o "$work/agenteval" ./cmd/agenteval)
	AGENTEVAL=$work/agenteval
fi

tree=$src
if [[ -n $ref ]]; then
	tree=$work/tree
	mkdir -p "$tree"
	git -C "$src" archive "$ref" | tar -x -C "$tree"
fi
cd "$tree"

# The eval files.
{
	grep -rlE '^(tests|scenarios):' --include='*.yaml' --include='*.yml' . 2>/dev/null | grep -v '/node_modules/' || true
	find . -name '*.jsonl' -not -path '*/node_modules/*' -not -name '*baseline*' -not -name '*results*' -not -name 'index.jsonl' -print0 |
		while IFS= read -r -d '' f; do
			line=$(grep -m1 -v '^[[:space:]]*$' "$f" || true)
			if [[ $line =~ [{,][[:space:]]*\"id\"[[:space:]]*: && ( $line == *'"input"'* || $line == *'"criteria"'* || $line == *'"vars"'* ) && $line != *'"user_input"'* && $line != *'"schema_version"'* ]]; then
				echo "$f"
			fi
		done
} | sed 's|^\./||' | sort -u > "$work/files"

total=$(wc -l < "$work/files")
ok=0
: > "$work/loaded"
: > "$work/failed"
skipped_all=0
while IFS= read -r f; do
	if "$AGENTEVAL" validate --judge openai:fake "$f" > "$work/out" 2> "$work/err"; then
		ok=$((ok + 1))
		echo "$f" >> "$work/loaded"
		line=$(tail -1 "$work/out")
		if [[ $line =~ ok,\ ([0-9]+)\ tests?\ .*\ ([0-9]+)\ will\ be\ skipped ]] && [[ ${BASH_REMATCH[1]} == "${BASH_REMATCH[2]}" ]]; then
			skipped_all=$((skipped_all + 1))
		fi
	else
		printf '%s\t%s\n' "$f" "$(grep -v ': warning: ' "$work/err" | head -1)" >> "$work/failed"
	fi
done < "$work/files"

echo "eval files: $total"
echo "validate --judge openai:fake passes: $ok ($(( total ? ok * 1000 / total : 0 ))‰); $skipped_all of them have every test marked to skip"
if [[ -s $work/failed ]]; then
	echo "files that do not load:"
	sed 's/^/  /' "$work/failed"
fi

[[ $run == 1 ]] || exit 0

# Run what loads against fakellm.
"$AGENTEVAL" fakellm --addr 127.0.0.1:0 > "$work/fake.log" 2>&1 &
fake_pid=$!
for _ in $(seq 50); do
	addr=$(grep -oE '127\.0\.0\.1:[0-9]+' "$work/fake.log" | head -1 || true)
	[[ -n $addr ]] && break
	sleep 0.1
done
if [[ -z ${addr:-} ]]; then
	echo "fakellm did not start:"; cat "$work/fake.log"; exit 1
fi
export OPENAI_BASE_URL=http://$addr/v1 OPENAI_API_KEY=fake AGENTEVAL_CACHE_DIR=$work/cache

crashes=0 runs=0 results=0 errors=0 skips=0
: > "$work/errors"
while IFS= read -r f; do
	runs=$((runs + 1))
	status=0
	"$AGENTEVAL" run "$f" --target openai:fake --judge openai:fake --no-cache --no-store -q -o "$work/one.jsonl" > /dev/null 2> "$work/err" || status=$?
	[[ -f $work/one.jsonl ]] && grep '"test_id"' "$work/one.jsonl" >> "$work/results.jsonl" || true
	rm -f "$work/one.jsonl"
	if grep -q 'panic\|goroutine [0-9]' "$work/err" || [[ $status != 0 && $status != 1 && $status != 3 ]]; then
		crashes=$((crashes + 1))
		printf 'crash (exit %s): %s: %s\n' "$status" "$f" "$(grep -v ': warning: ' "$work/err" | head -2 | tr '\n' ' ')" >> "$work/errors"
	fi
done < "$work/loaded"
if [[ -f $work/results.jsonl ]]; then
	results=$(grep -c '"test_id"' "$work/results.jsonl" || true)
	skips=$(grep -c '"verdict":"skip"' "$work/results.jsonl" || true)
	errors=$(grep -c '"execution_status":"execution_error"' "$work/results.jsonl" || true)
	grep '"execution_status":"execution_error"' "$work/results.jsonl" |
		grep -oE '"error":"[^"]{0,160}' | sed 's/"error":"//' | sed -E 's/[0-9]+(\.[0-9]+)?ms/Nms/g' |
		sort | uniq -c | sort -rn >> "$work/errors" || true
fi
echo "ran $runs files against fakellm: $results test results, $skips skipped, $errors in execution_error, $crashes crashes"
if [[ -s $work/errors ]]; then
	echo "execution errors and crashes:"
	sed 's/^/  /' "$work/errors"
fi
