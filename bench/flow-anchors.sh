#!/usr/bin/env bash
# Runs the flow benchmarks beside the same actions scripted in Playwright
# (playwright-core from npm, on the same Debian Chromium) and prints both.
#   bench/flow-anchors.sh [repetitions]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
reps=${1:-20}
chromium=$(command -v chromium-headless-shell || command -v chromium || command -v chromium-browser || true)
[ -n "$chromium" ] || { echo "no chromium on PATH (make deps installs it)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "installing playwright-core into $tmp" >&2
(cd "$tmp" && npm init -y >/dev/null && npm install --silent --no-audit --no-fund playwright-core >/dev/null) || { echo "npm install playwright-core failed" >&2; exit 2; }
cp "$root/bench/playwright/mini.mjs" "$tmp/"
echo "== Playwright $(node -e "console.log(require('$tmp/node_modules/playwright-core/package.json').version)") on $("$chromium" --version)"
(cd "$tmp" && node mini.mjs "$chromium" "$root/testdata/pages" "$reps")
echo "== toolserver (go test -bench)"
(cd "$root" && go test -run '^$' -bench 'MiniFlow|StepOverhead' -benchtime "${reps}x" ./flow/run/ | grep -E '^Benchmark')
