#!/usr/bin/env bash
# Builds the storybook command's test rig: the Storybook 10 of
# testdata/storybook (its package-lock.json pins every package), installed
# with npm ci into .cache/storybook and built with storybook build into
# .cache/storybook/static. Skips both when the inputs (the lockfile, the
# config and the stories) hash as they did for the last build.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
src=$root/testdata/storybook
dest=$root/.cache/storybook
stamp=$dest/static/.inputs.sha256

hash=$(cd "$src" && find . -type f ! -path './node_modules/*' -print0 | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$hash" ] && [ -f "$dest/static/index.json" ]; then
  exit 0
fi
"$root/scripts/need-node.sh" "to build the Storybook test rig"
mkdir -p "$dest"
# The sources are copied beside node_modules so that the config resolves the
# framework from the installed packages.
rm -rf "$dest/.storybook" "$dest/stories" "$dest/public" "$dest/static"
cp -R "$src/." "$dest/"
lockhash=$(sha256sum "$src/package-lock.json" | cut -d' ' -f1)
if [ ! -f "$dest/node_modules/.lock.sha256" ] || [ "$(cat "$dest/node_modules/.lock.sha256")" != "$lockhash" ]; then
  (cd "$dest" && npm ci --no-audit --no-fund --loglevel=error)
  echo "$lockhash" >"$dest/node_modules/.lock.sha256"
fi
(cd "$dest" && STORYBOOK_DISABLE_TELEMETRY=1 npx --no-install storybook build --quiet --disable-telemetry -o static)
echo "$hash" >"$stamp"
echo "built the Storybook test rig into $dest/static" >&2
