#!/usr/bin/env bash
# Issue 15's benchmarks: a 24-flow suite (bench/suite's 12 flows, twice)
# run with --workers 1, 2 and 4 in-process, then linked to one and to two
# tool-servers on this machine. Prints the median wall time of each.
#   bench/fleet.sh [reps] [toolserver-binary]
set -euo pipefail
export LC_ALL=C
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
reps=${1:-3}
bin=${2:-$root/bin/toolserver}
[ -x "$bin" ] || { echo "no toolserver binary at $bin (make build)" >&2; exit 2; }
tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; wait "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT
node "$here/suite/serve.mjs" "$here/suite/site" 0 >"$tmp/site.url" 2>"$tmp/site.err" &
pids+=($!)
for _ in $(seq 100); do [ -s "$tmp/site.url" ] && break; sleep 0.1; done
base=$(head -n1 "$tmp/site.url")
mkdir -p "$tmp/p/.argent/flows"
for f in "$here"/suite/project/.argent/flows/*.yaml; do
  n=$(basename "$f" .yaml)
  for copy in a b; do sed "s#http://127\.0\.0\.1:8417#$base#g" "$f" >"$tmp/p/.argent/flows/$n-$copy.yaml"; done
done
cd "$tmp/p"
"$bin" flow run .argent/flows --update-baselines >/dev/null
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
time_it() { # label, args...
  local label=$1; shift
  local ts=()
  for _ in $(seq "$reps"); do
    local s e
    s=$(date +%s.%N)
    "$bin" flow run .argent/flows "$@" >"$tmp/out.log" 2>&1 || { echo "FAIL: $label"; tail -20 "$tmp/out.log"; exit 1; }
    e=$(date +%s.%N)
    ts+=("$(awk "BEGIN { print $e - $s }")")
  done
  printf '%-28s median %6.2f s  (%s)\n' "$label" "$(printf '%s\n' "${ts[@]}" | median)" "${ts[*]}"
}
echo "24 flows ($(ls .argent/flows/*.yaml | wc -l) files), $reps runs each, $(nproc) cores, load at start $(cut -d' ' -f1-3 /proc/loadavg)"
time_it "in-process --workers 1" --workers 1
time_it "in-process --workers 2" --workers 2
time_it "in-process --workers 4" --workers 4
# serve N starts a tool-server (its output to files: a command
# substitution would wait for its stdout) and sets url to its address.
serve() {
  "$bin" serve --addr 127.0.0.1:0 --state-dir '' >"$tmp/serve$1.out" 2>"$tmp/serve$1.err" &
  pids+=($!)
  for _ in $(seq 100); do grep -q 'listening on' "$tmp/serve$1.err" && break; sleep 0.1; done
  url=$(grep -o 'http://[0-9.:]*' "$tmp/serve$1.err" | head -n1)
  [ -n "$url" ] || { echo "serve $1 did not start: $(cat "$tmp/serve$1.err")" >&2; exit 2; }
}
serve 1; u1=$url
serve 2; u2=$url
time_it "linked, 1 server" --link "$u1"
time_it "linked, 2 servers" --link "$u1,$u2"
echo "load at end $(cut -d' ' -f1-3 /proc/loadavg)"
