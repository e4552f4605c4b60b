#!/usr/bin/env bash
# toolserver storybook beside the Storybook test-runner with
# jest-image-snapshot, on one static build of 40 stories, the same
# Chromium and the same server (issue 32's storybook benchmark).
#   bench/storybook/run.sh [reps] [toolserver-binary]
# reps: timed runs of each side in each mode (default 5); the binary
# defaults to bin/toolserver (make build). Installs the lockfile's packages
# with npm ci into .cache/bench-storybook (again only when the lockfile
# changes; Playwright's own browser is never downloaded), builds the
# Storybook there (again only when its sources change), serves the build
# on a free loopback port, makes both sides' baselines once, then times
# whole comparison runs, alternating which side goes first, in two modes:
# each side's default workers, then both with 2 workers. Any run that does
# not pass fails the script.
set -euo pipefail
export LC_ALL=C
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
reps=${1:-5}
bin=${2:-$root/bin/toolserver}
cache=$root/.cache/bench-storybook
# The test-runner's default page: Playwright's default viewport.
device=chromium-cdp-1280x720

[[ $reps =~ ^[1-9][0-9]*$ ]] || { echo "usage: $0 [reps] [toolserver-binary]: reps must be a positive integer, got '$reps'" >&2; exit 2; }
[ -x "$bin" ] || { echo "no toolserver binary at $bin (make build, or pass its path)" >&2; exit 2; }
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
# The binary device/cdp finds: $CHROMIUM_PATH, else the first on PATH.
chromium=${CHROMIUM_PATH:-$(command -v chromium-headless-shell || command -v chromium || command -v chromium-browser || true)}
[ -n "$chromium" ] && [ -x "$chromium" ] || { echo "no chromium (make deps installs it, or set CHROMIUM_PATH)" >&2; exit 2; }
for c in node npm python3; do
  command -v "$c" >/dev/null || { echo "$c is needed (apt-get install nodejs npm python3)" >&2; exit 2; }
done

# The packages, keyed by the lockfile.
mkdir -p "$cache"
cp "$here/package.json" "$here/package-lock.json" "$cache/"
lockhash=$(sha256sum "$here/package-lock.json" | cut -d' ' -f1)
if [ ! -f "$cache/node_modules/.lock.sha256" ] || [ "$(cat "$cache/node_modules/.lock.sha256")" != "$lockhash" ]; then
  echo "installing the lockfile's packages into $cache" >&2
  (cd "$cache" && PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error)
  echo "$lockhash" >"$cache/node_modules/.lock.sha256"
fi
# The sources beside node_modules, so that the configs resolve the
# installed packages; the build, keyed by the sources and the lockfile.
rm -rf "$cache/.storybook" "$cache/stories"
cp -R "$here/.storybook" "$here/stories" "$here/test-runner-jest.config.js" "$cache/"
hash=$(cd "$here" && find .storybook stories test-runner-jest.config.js package-lock.json -type f -print0 | sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1)
if [ ! -f "$cache/static/.inputs.sha256" ] || [ "$(cat "$cache/static/.inputs.sha256")" != "$hash" ]; then
  echo "building the Storybook into $cache/static" >&2
  rm -rf "$cache/static"
  (cd "$cache" && STORYBOOK_DISABLE_TELEMETRY=1 node_modules/.bin/storybook build --quiet --disable-telemetry -o static >"$cache/build.log" 2>&1) ||
    { tail -n 40 "$cache/build.log" >&2; exit 2; }
  echo "$hash" >"$cache/static/.inputs.sha256"
fi
stories=$(node -e "const e = require('$cache/static/index.json').entries; console.log(Object.values(e).filter((s) => s.type === 'story').length)")

tmp=$(mktemp -d)
server=
cleanup() {
  if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# One server for both sides (Python's threaded http.server); it prints its
# port once it listens.
python3 -u -m http.server 0 --bind 127.0.0.1 --directory "$cache/static" >"$tmp/server.out" 2>"$tmp/server.err" &
server=$!
port=
for _ in $(seq 100); do
  port=$(sed -n 's/^Serving HTTP on 127\.0\.0\.1 port \([0-9]*\).*/\1/p' "$tmp/server.out")
  [ -n "$port" ] && break
  kill -0 "$server" 2>/dev/null || { echo "the server exited: $(cat "$tmp/server.err")" >&2; exit 2; }
  sleep 0.1
done
[ -n "$port" ] || { echo "the server did not start in 10 s" >&2; exit 2; }
base=http://127.0.0.1:$port

export CHROMIUM_PATH=$chromium STORYBOOK_DISABLE_TELEMETRY=1
mkdir -p "$tmp/ts" "$tmp/tr"
ts_run() { "$bin" storybook "$base" --project "$tmp/ts" --device "$device" "$@"; }
# What `npx test-storybook` runs, without npx's own lookup of it.
tr_run() { (cd "$cache" && SNAPSHOTS_DIR=$tmp/tr node_modules/.bin/test-storybook --url "$base" "$@"); }

# fail NAME LOG: say which run failed, show the end of its output, stop.
fail() {
  echo "FAIL: $1 did not pass; the end of its output:" >&2
  tail -n 40 "$2" >&2
  exit 1
}

echo "== versions"
"$chromium" --version 2>/dev/null
for p in storybook @storybook/html-vite @storybook/test-runner jest jest-image-snapshot playwright-core; do
  echo "$p $(node -p "require('$cache/node_modules/$p/package.json').version")"
done
echo "node $(node --version)"
echo "$("$bin" version 2>&1 | head -n1) ($bin)"
echo "$stories stories; served at $base; $(nproc) cores; load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"

echo "== baselines (once per side)"
ts_run --update-baselines >"$tmp/ts-update.log" 2>&1 || fail "toolserver storybook --update-baselines" "$tmp/ts-update.log"
tr_run -u >"$tmp/tr-update.log" 2>&1 || fail "test-storybook -u" "$tmp/tr-update.log"
ts_pngs=$(find "$tmp/ts/__baselines__" -name '*.png' | wc -l)
tr_pngs=$(find "$tmp/tr" -name '*.png' | wc -l)
echo "toolserver: $ts_pngs baselines; test-runner: $tr_pngs"
[ "$ts_pngs" -eq "$stories" ] && [ "$tr_pngs" -eq "$stories" ] ||
  { echo "FAIL: want $stories baselines from each side" >&2; exit 1; }

# timed NAME FN LOG ARGS…: run FN ARGS once and print two numbers: its
# wall time in seconds (process start to exit) and the CPU time (user +
# system) it and every process under it used, from `times` in this command
# substitution's own subshell. Fails the script when the run did not pass.
timed() {
  local name=$1 fn=$2 log=$3 start end
  shift 3
  start=$EPOCHREALTIME
  "$fn" "$@" >"$log" 2>&1 || fail "$name" "$log"
  end=$EPOCHREALTIME
  # Not `times | awk`: a pipeline would run `times` in a subshell of its own,
  # which has no children.
  times >"$log.times"
  awk -v s="$start" -v e="$end" '
    function sec(x, a) { split(x, a, "m"); sub("s", "", a[2]); return a[1] * 60 + a[2] }
    NR == 2 { printf "%.3f %.3f\n", e - s, sec($1) + sec($2) }' "$log.times"
}

# median FILE COLUMN, minimum, maximum: of one column of numbers (an even
# count's median is the mean of its two middle values).
median() { cut -d' ' -f"$2" "$1" | sort -g | awk '{ v[NR] = $1 } END { m = int((NR + 1) / 2); print (NR % 2 ? v[m] : (v[m] + v[m + 1]) / 2) }'; }
minimum() { cut -d' ' -f"$2" "$1" | sort -g | head -n1; }
maximum() { cut -d' ' -f"$2" "$1" | sort -g | tail -n1; }

# mode NAME TS-ARGS TR-ARGS: reps comparison runs of each side.
mode() {
  local name=$1 i t p
  local -a ts_args tr_args
  read -r -a ts_args <<<"$2"
  read -r -a tr_args <<<"$3"
  echo "== $name: toolserver storybook ${ts_args[*]:-(no flag)} vs test-storybook --ci ${tr_args[*]:-}; $reps runs of each, alternating which goes first"
  printf '%-4s %12s %12s   %-28s %s\n' run toolserver test-runner "(CPU time: ts, test-runner)" "load (1 min)"
  : >"$tmp/$name-ts.times"
  : >"$tmp/$name-tr.times"
  for i in $(seq "$reps"); do
    if [ $((i % 2)) -eq 1 ]; then
      t=$(timed "toolserver run $i" ts_run "$tmp/$name-ts-$i.log" "${ts_args[@]}")
      p=$(timed "test-runner run $i" tr_run "$tmp/$name-tr-$i.log" --ci "${tr_args[@]}")
    else
      p=$(timed "test-runner run $i" tr_run "$tmp/$name-tr-$i.log" --ci "${tr_args[@]}")
      t=$(timed "toolserver run $i" ts_run "$tmp/$name-ts-$i.log" "${ts_args[@]}")
    fi
    echo "$t" >>"$tmp/$name-ts.times"
    echo "$p" >>"$tmp/$name-tr.times"
    printf '%-4s %10.2f s %10.2f s   (%6.2f s, %6.2f s)          %s\n' "$i" "${t% *}" "${p% *}" "${t#* }" "${p#* }" "$(cut -d' ' -f1 /proc/loadavg)"
  done
  grep -q "$stories passed" "$tmp/$name-tr-$reps.log" || fail "test-runner's last run (want $stories tests passed)" "$tmp/$name-tr-$reps.log"
  grep -q "$stories flows: $stories passed" "$tmp/$name-ts-$reps.log" || fail "toolserver's last run (want $stories flows passed)" "$tmp/$name-ts-$reps.log"
  local ts_med tr_med
  ts_med=$(median "$tmp/$name-ts.times" 1)
  tr_med=$(median "$tmp/$name-tr.times" 1)
  printf '%-12s %12s %18s %14s\n' "" "median wall" "range" "median CPU"
  printf '%-12s %10.2f s %8.2f–%6.2f s %12.2f s\n' \
    toolserver "$ts_med" "$(minimum "$tmp/$name-ts.times" 1)" "$(maximum "$tmp/$name-ts.times" 1)" "$(median "$tmp/$name-ts.times" 2)" \
    test-runner "$tr_med" "$(minimum "$tmp/$name-tr.times" 1)" "$(maximum "$tmp/$name-tr.times" 1)" "$(median "$tmp/$name-tr.times" 2)"
  awk -v a="$ts_med" -v b="$tr_med" -v c="$(median "$tmp/$name-ts.times" 2)" -v d="$(median "$tmp/$name-tr.times" 2)" \
    'BEGIN { printf "toolserver/test-runner wall time: %.2f× (medians); target ≤ 0.5×; CPU time %.2f×\n", a / b, c / d }'
}

mode defaults "" ""
mode workers2 "--workers 2" "--maxWorkers 2"
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
