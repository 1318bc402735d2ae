#!/usr/bin/env bash
# Tests the GitHub Action (action.yml) offline: scripts/action-run.go runs
# its steps as the Actions runner would, with GITHUB_STEP_SUMMARY,
# GITHUB_OUTPUT, GITHUB_ENV, GITHUB_PATH and RUNNER_TEMP set to files of a
# temporary folder; the uses: steps (the artifact upload) are listed, not
# run. Each case checks the job summary, the files written, the action's
# outputs and its exit status:
#
#   1. version: source builds agenteval from this checkout; the quickstart
#      passes: exit 0, the summary's Markdown table, results, JUnit, the
#      HTML report; a baseline that does not exist is only a warning.
#   2. version: latest downloads a release (a fake one, served on
#      127.0.0.1, made of the binary of case 1) and checks its SHA-256; the
#      regression example's bad target against the good one as baseline:
#      exit 1, the comparison in the summary.
#   3. A release whose checksums.txt disagrees is not installed.
#   4. version: installed, and an eval file that does not exist: exit 2,
#      and the summary says nothing ran.
#   5. No files: agenteval is installed, nothing runs, exit 0.
#
# Run from .ci/run after its go build, so the source build here reuses the
# build cache (a link, seconds); on a cold cache case 1 takes minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
start=$(date +%s)

go build -o "$tmp/action-run" scripts/action-run.go
case "$(uname -m)" in
x86_64 | amd64) arch=X64 goarch=amd64 ;;
aarch64 | arm64) arch=ARM64 goarch=arm64 ;;
*) echo "action-test: no release archive name for $(uname -m)"; exit 1 ;;
esac

fail() { echo "action-test: $*"; exit 1; }

# runcase NAME [-release-server DIR] -with ...: a fresh runner (temp
# folder, summary) and workspace (a copy of two examples); sets $code and
# leaves the log in $tmp/NAME.log, the outputs in $tmp/NAME.out.
runcase() {
  local name=$1
  shift
  ws=$tmp/$name/ws
  rt=$tmp/$name/runner
  summary=$tmp/$name/summary.md
  mkdir -p "$ws" "$rt"
  cp -r examples/quickstart examples/regression "$ws/"
  : >"$summary"
  set +e
  (cd "$ws" && env GITHUB_WORKSPACE="$ws" RUNNER_TEMP="$rt" GITHUB_STEP_SUMMARY="$summary" \
    RUNNER_OS=Linux RUNNER_ARCH=$arch "${extra_env[@]}" \
    "$tmp/action-run" -outputs "$tmp/$name.out" "$@" "$root/action.yml") >"$tmp/$name.log" 2>&1
  code=$?
  set -e
  echo "case $name: exit $code ($(($(date +%s) - start))s so far)"
}
show() { echo "--- log of case $1:"; cat "$tmp/$1.log"; echo "--- summary:"; cat "$tmp/$1/summary.md" 2>/dev/null || true; }
want() { # want CASE FILE PATTERN WHAT
  grep -q -- "$3" "$2" || { show "$1"; fail "case $1: $4 (no /$3/ in $2)"; }
}
extra_env=()

# 1. Built from source; the quickstart passes.
runcase source -with version=source -with files=quickstart/suite.yaml -with baseline=old/results.jsonl
[ "$code" -eq 0 ] || { show source; fail "case source: exit $code, want 0"; }
s=$tmp/source/summary.md
want source "$s" '2 of 2 tests passed' "the summary does not say both tests passed"
want source "$s" '^| passed | failed | errors |' "the summary has no Markdown table"
out=$tmp/source/ws/agenteval-results
[ "$(grep -c '^{"test_id":' "$out/results.jsonl")" -eq 2 ] || fail "case source: results.jsonl does not hold 2 results"
want source "$out/report.html" 'class="chunk"' "the HTML report holds no results"
want source "$out/junit.xml" '<testsuite' "no JUnit XML"
want source "$out/summary.md" '2 of 2 tests passed' "summary.md is not the summary"
want source "$tmp/source.log" 'building agenteval from' "the source build did not run"
want source "$tmp/source.log" '::warning::baseline old/results.jsonl does not exist' "a missing baseline is not a warning"
want source "$tmp/source.log" "uses actions/upload-artifact@v4, not run here (would run) with if-no-files-found=warn name=agenteval-results path=$out\$" "the upload step would not upload the results folder"
want source "$tmp/source.out" '^exit-code=0$' "output exit-code is not 0"
want source "$tmp/source.out" "^report=$out/report.html$" "output report is not the report's path"
bin=$rt/agenteval-bin/agenteval
[ -x "$bin" ] || fail "case source: no binary at $bin"

# Releases as GitHub serves them, in .goreleaser.yaml's names: v1.2.3
# holds that binary; v0.9.0, older, holds a file whose checksums.txt
# names another sum.
rel=$tmp/releases/agenteval/agenteval/releases/download
mkdir -p "$rel/v1.2.3" "$rel/v0.9.0"
a=agenteval_1.2.3_linux_${goarch}.tar.gz
tar -cf - -C "$(dirname "$bin")" agenteval | gzip -1 >"$rel/v1.2.3/$a"
(cd "$rel/v1.2.3" && sha256sum "$a" >checksums.txt)
a=agenteval_0.9.0_linux_${goarch}.tar.gz
echo "not agenteval" >"$tmp/agenteval" && tar -czf "$rel/v0.9.0/$a" -C "$tmp" agenteval
echo "0000000000000000000000000000000000000000000000000000000000000000  $a" >"$rel/v0.9.0/checksums.txt"

# 2. The latest release, and a regression against a baseline.
"$bin" run examples/regression/suite.yaml --target good -o "$tmp/good.jsonl" --no-store -q --format jsonl >/dev/null
runcase latest -release-server "$tmp/releases" -with version=latest -with files=regression/suite.yaml \
  -with target=bad -with "baseline=$tmp/good.jsonl" -with "args=--no-store --trials 1" -with upload=false -with output-dir=out
[ "$code" -eq 1 ] || { show latest; fail "case latest: exit $code, want 1"; }
s=$tmp/latest/summary.md
want latest "$tmp/latest.log" 'agenteval_1.2.3_linux_.*: SHA-256 [0-9a-f]*, as checksums.txt says' "the download was not checked"
want latest "$s" 'tests passed' "the run's summary is missing"
want latest "$s" '| passed | failed |' "the run's summary table is missing"
want latest "$s" '[Rr]egress' "the comparison is not in the summary"
want latest "$tmp/latest/ws/out/compare.md" '[Rr]egress' "compare.md holds no comparison"
want latest "$tmp/latest.log" 'uses actions/upload-artifact@v4, not run here (would be skipped)' "upload: false still uploads"
want latest "$tmp/latest.log" '::error::agenteval: some tests failed' "no error annotation"
want latest "$tmp/latest.out" '^exit-code=1$' "output exit-code is not 1"

# 3. A checksum that does not match: nothing is installed or run.
runcase badsum -release-server "$tmp/releases" -with version=v0.9.0 -with files=quickstart/suite.yaml
[ "$code" -ne 0 ] || { show badsum; fail "case badsum: exit 0 with a wrong checksum"; }
want badsum "$tmp/badsum.log" '::error::agenteval_0.9.0_linux_.* has SHA-256 .*, but .*checksums.txt says 0000' "the mismatch is not named"
if grep -q '== step 2' "$tmp/badsum.log" && ! grep -q '== step 2 .*skipped' "$tmp/badsum.log"; then
  show badsum; fail "case badsum: the run went on after a bad checksum"
fi
[ ! -e "$tmp/badsum/runner/agenteval-bin/agenteval" ] || fail "case badsum: the binary was installed"

# 4. The agenteval on PATH, and a configuration error.
extra_env=("PATH=$(dirname "$bin"):$PATH")
runcase installed -with version=installed -with files=no-such-suite.yaml
[ "$code" -eq 2 ] || { show installed; fail "case installed: exit $code, want 2"; }
want installed "$tmp/installed/summary.md" 'agenteval did not run (exit 2)' "the summary does not say the run failed"
want installed "$tmp/installed.log" '::error::agenteval: a usage or configuration error' "no error annotation"

# 5. Install only.
runcase install -with version=installed
[ "$code" -eq 0 ] || { show install; fail "case install: exit $code, want 0"; }
want install "$tmp/install.log" 'agenteval installed; no files to run' "the last step did not say so"
want install "$tmp/install.log" 'step 2 (Run the eval files): skipped' "the run step was not skipped"
want install "$tmp/install.log" 'upload-artifact@v4, not run here (would be skipped)' "the upload was not skipped"
[ ! -s "$tmp/install/summary.md" ] || { show install; fail "case install: a job summary was written"; }
want install "$tmp/install.out" '^exit-code=0$' "output exit-code is not 0"

echo "action-test: OK, 5 cases in $(($(date +%s) - start))s"
