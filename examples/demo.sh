#!/usr/bin/env bash
# The demo of `make demo`: runs the bundled example on a local Chromium.
set -euo pipefail
bin=${1:-bin/toolserver}
root=$(cd "$(dirname "$0")/.." && pwd)
out=$root/demo-out
mkdir -p "$out"
log=$(mktemp)
trap 'kill "$pid" 2>/dev/null || true; wait "$pid" 2>/dev/null || true; rm -f "$log"' EXIT
"$bin" serve --addr 127.0.0.1:0 2>"$log" &
pid=$!
for _ in $(seq 1 100); do
  url=$(grep -o 'http://127.0.0.1:[0-9]*' "$log" | head -1 || true)
  [ -n "$url" ] && break
  kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; exit 2; }
  sleep 0.1
done
[ -n "$url" ] || { echo "the server did not start" >&2; cat "$log" >&2; exit 2; }
call() { curl -sS --fail-with-body -H 'Content-Type: application/json' -d "$2" "$url/tools/$1"; }
dev=chromium-cdp-1280x800
echo "tool-server at $url; opening the example checkout on $dev"
call open-url "{\"device\":\"$dev\",\"url\":\"file://$root/examples/site/index.html\",\"fresh\":true}" >/dev/null
call gesture-tap "{\"device\":\"$dev\",\"x\":0.5,\"y\":0.4375}" >/dev/null
call keyboard "{\"device\":\"$dev\",\"text\":\"ada@example.com\"}" >/dev/null
res=$(call screenshot "{\"device\":\"$dev\"}")
id=$(printf '%s' "$res" | sed -n 's/.*"id":"\([0-9a-f]*\)".*/\1/p')
curl -sS --fail -o "$out/checkout.png" "$url/artifacts/$id"
echo "saved $out/checkout.png"
