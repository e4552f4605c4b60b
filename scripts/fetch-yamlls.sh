#!/usr/bin/env bash
# Installs the YAML language server pinned by testdata/yamlls/package-lock.json
# into .cache/yaml-language-server for the flow schema test
# (flow/schema_lsp_test.go), when missing or when the lockfile changed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
src=$root/testdata/yamlls
dest=$root/.cache/yaml-language-server
if [ -x "$dest/node_modules/.bin/yaml-language-server" ] && cmp -s "$src/package-lock.json" "$dest/package-lock.json"; then
  exit 0
fi
if ! command -v npm >/dev/null || ! command -v node >/dev/null; then
  # Node runs the server and npm installs it; Debian packages both.
  if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
  else
    echo "node and npm are needed to install yaml-language-server: sudo apt-get install nodejs npm" >&2
    exit 1
  fi
fi
mkdir -p "$dest"
cp "$src/package.json" "$src/package-lock.json" "$dest/"
(cd "$dest" && npm ci --silent --no-audit --no-fund >/dev/null)
echo "installed yaml-language-server $(node -p "require('$dest/node_modules/yaml-language-server/package.json').version") into $dest" >&2
