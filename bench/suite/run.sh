#!/usr/bin/env bash
# The 12-flow visual suite, toolserver beside Playwright Test on the same
# Chromium and the same site (issue 12's suite benchmark).
#   bench/suite/run.sh [reps] [toolserver-binary]
# reps: timed runs of each side (default 5); the binary defaults to
# bin/toolserver (make build). Installs @playwright/test into a temp dir
# with npm (PLAYWRIGHT_VERSION=… to pin one; default latest), serves
# bench/suite/site on a free loopback port, makes both sides' baselines once
# in temp copies, then runs each side reps times in comparison mode,
# alternating which goes first, and prints the median and min wall time of
# the whole suite for each and their ratio. Any run that does not pass
# fails the script.
set -euo pipefail
export LC_ALL=C
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
reps=${1:-5}
bin=${2:-$root/bin/toolserver}
pw_version=${PLAYWRIGHT_VERSION:-latest}

[[ $reps =~ ^[1-9][0-9]*$ ]] || { echo "usage: $0 [reps] [toolserver-binary]: reps must be a positive integer, got '$reps'" >&2; exit 2; }
[ -x "$bin" ] || { echo "no toolserver binary at $bin (make build, or pass its path)" >&2; exit 2; }
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
chromium=$(command -v chromium-headless-shell || command -v chromium || command -v chromium-browser || true)
[ -n "$chromium" ] || { echo "no chromium on PATH (make deps installs it)" >&2; exit 2; }
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
  echo "node and npm are needed (apt-get install nodejs npm)" >&2
  exit 2
fi

tmp=$(mktemp -d)
server=
cleanup() {
  if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "installing @playwright/test@$pw_version into $tmp/pw" >&2
mkdir -p "$tmp/pw"
(cd "$tmp/pw" && npm init -y >/dev/null && npm install --silent --no-audit --no-fund "@playwright/test@$pw_version" >/dev/null) ||
  { echo "npm install @playwright/test@$pw_version failed" >&2; exit 2; }
cp "$here/playwright/playwright.config.mjs" "$tmp/pw/"
cp -r "$here/playwright/tests" "$tmp/pw/"

# One server for both sides; it prints its base URL once it listens.
node "$here/serve.mjs" "$here/site" 0 >"$tmp/server.url" 2>"$tmp/server.err" &
server=$!
for _ in $(seq 100); do
  [ -s "$tmp/server.url" ] && break
  kill -0 "$server" 2>/dev/null || { echo "the site server exited: $(cat "$tmp/server.err")" >&2; exit 2; }
  sleep 0.1
done
base=$(head -n1 "$tmp/server.url")
[[ $base == http://127.0.0.1:* ]] || { echo "the site server did not start in 10 s" >&2; exit 2; }

# The checked-in flows name http://127.0.0.1:8417; the copy names the port
# the server got.
cp -r "$here/project" "$tmp/ts"
sed -i "s#http://127\.0\.0\.1:8417#$base#g" "$tmp/ts/.argent/flows/"*.yaml

export CHROMIUM_PATH=$chromium CHROMIUM=$chromium SUITE_BASE_URL=$base
ts_run() { (cd "$tmp/ts" && "$bin" flow run .argent/flows "$@"); }
# What `npx playwright test` runs, without npx's own lookup of it.
pw_run() { (cd "$tmp/pw" && ./node_modules/.bin/playwright test "$@"); }

# fail NAME LOG: say which run failed, show the end of its output, stop.
fail() {
  echo "FAIL: $1 did not pass; the end of its output:" >&2
  tail -n 40 "$2" >&2
  exit 1
}

echo "== versions"
"$chromium" --version 2>/dev/null
echo "Playwright $(node -p "require('$tmp/pw/node_modules/@playwright/test/package.json').version") (@playwright/test)"
echo "$("$bin" version 2>&1 | head -n1) ($bin)"
echo "site $base; load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"

echo "== baselines (once per side)"
ts_run --update-baselines >"$tmp/ts-update.log" 2>&1 || fail "toolserver flow run --update-baselines" "$tmp/ts-update.log"
pw_run --update-snapshots >"$tmp/pw-update.log" 2>&1 || fail "playwright test --update-snapshots" "$tmp/pw-update.log"
ts_pngs=$(find "$tmp/ts/.argent/flows/__baselines__" -name '*.png' | wc -l)
pw_pngs=$(find "$tmp/pw/tests" -name '*.png' | wc -l)
echo "toolserver: $ts_pngs baselines; Playwright: $pw_pngs"
[ "$ts_pngs" -eq "$pw_pngs" ] || { echo "FAIL: the two sides made different numbers of baselines" >&2; exit 1; }

# timed NAME FN LOG: run FN once and print two numbers: its wall time in
# seconds (process start to exit) and the CPU time (user + system) it and
# every process under it used, from `times` in this command substitution's
# own subshell. Fails the script when the run did not pass.
timed() {
  local start end
  start=$EPOCHREALTIME
  "$2" >"$3" 2>&1 || fail "$1" "$3"
  end=$EPOCHREALTIME
  # Not `times | awk`: a pipeline would run `times` in a subshell of its own,
  # which has no children.
  times >"$3.times"
  awk -v s="$start" -v e="$end" '
    function sec(x, a) { split(x, a, "m"); sub("s", "", a[2]); return a[1] * 60 + a[2] }
    NR == 2 { printf "%.3f %.3f\n", e - s, sec($1) + sec($2) }' "$3.times"
}

echo "== $reps comparison runs of each side, alternating which goes first"
printf '%-4s %12s %12s   %s\n' run toolserver playwright "(CPU time: toolserver, playwright)"
: >"$tmp/ts.times"
: >"$tmp/pw.times"
for i in $(seq "$reps"); do
  if [ $((i % 2)) -eq 1 ]; then
    t=$(timed "toolserver run $i" ts_run "$tmp/ts-$i.log")
    p=$(timed "playwright run $i" pw_run "$tmp/pw-$i.log")
  else
    p=$(timed "playwright run $i" pw_run "$tmp/pw-$i.log")
    t=$(timed "toolserver run $i" ts_run "$tmp/ts-$i.log")
  fi
  echo "$t" >>"$tmp/ts.times"
  echo "$p" >>"$tmp/pw.times"
  printf '%-4s %10.2f s %10.2f s   (%.2f s, %.2f s)\n' "$i" "${t% *}" "${p% *}" "${t#* }" "${p#* }"
done

# median FILE COLUMN, minimum FILE COLUMN: of one column of numbers (an even
# count's median is the mean of its two middle values).
median() { cut -d' ' -f"$2" "$1" | sort -g | awk '{ v[NR] = $1 } END { m = int((NR + 1) / 2); print (NR % 2 ? v[m] : (v[m] + v[m + 1]) / 2) }'; }
minimum() { cut -d' ' -f"$2" "$1" | sort -g | head -n1; }
ts_med=$(median "$tmp/ts.times" 1); ts_min=$(minimum "$tmp/ts.times" 1); ts_cpu=$(median "$tmp/ts.times" 2)
pw_med=$(median "$tmp/pw.times" 1); pw_min=$(minimum "$tmp/pw.times" 1); pw_cpu=$(median "$tmp/pw.times" 2)

echo "== the whole suite (12 flows, $ts_pngs screenshots)"
printf '%-11s %12s %10s %14s\n' "" "median wall" "min wall" "median CPU"
printf '%-11s %10.2f s %8.2f s %12.2f s\n' toolserver "$ts_med" "$ts_min" "$ts_cpu" playwright "$pw_med" "$pw_min" "$pw_cpu"
awk -v a="$ts_med" -v b="$pw_med" -v c="$ts_min" -v d="$pw_min" -v e="$ts_cpu" -v f="$pw_cpu" \
  'BEGIN { printf "toolserver/Playwright wall time: %.2f× (medians), %.2f× (mins); target ≤ 0.5×\nCPU time: %.2f× (medians)\n", a / b, c / d, e / f }'
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
