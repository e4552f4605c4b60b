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
"$root/scripts/need-node.sh" "to install yaml-language-server"
mkdir -p "$dest"
cp "$src/package.json" "$src/package-lock.json" "$dest/"
(cd "$dest" && npm ci --silent --no-audit --no-fund >/dev/null)
echo "installed yaml-language-server $(node -p "require('$dest/node_modules/yaml-language-server/package.json').version") into $dest" >&2
