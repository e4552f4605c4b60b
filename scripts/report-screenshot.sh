#!/bin/sh
# Takes the README's screenshot of the HTML report (docs/report.png) with
# our own runner: the bundled example with its header recoloured and its
# button relabelled, run with --report, then a flow that opens the report
# from file:// and snapshots it once the failure's images are loaded.
# Usage: scripts/report-screenshot.sh [path/to/toolserver]
set -eu
bin=$(realpath "${1:-bin/toolserver}")
repo=$(pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r examples/shop "$work/shop"
sed -i 's/header { background: #243b6b/header { background: #7a1f3d/; s/Pay now/Pay today/' "$work/shop/site/index.html"
sed -i 's/tap: Pay now/tap: Pay today/' "$work/shop/.argent/flows/checkout.yaml"
(cd "$work/shop" && "$bin" flow run checkout --report "$work/report" >/dev/null 2>&1) || true
mkdir -p "$work/look/.argent/flows"
cat >"$work/look/.argent/flows/look.yaml" <<YAML
steps:
  - launch: ../../../report/index.html
  - await: { visible: { text: "1 failure to review" } }
  - await: { text: { in: { id: snap-0 }, contains: "Diff 1280×800" } }
  - snapshot: report
YAML
(cd "$work/look" && "$bin" flow run look --device chromium-cdp-1280x900 --update-baselines >/dev/null)
cp "$work/look/.argent/flows/__baselines__/look/report__chromium-1280x900.png" "$repo/docs/report.png"
echo "wrote docs/report.png"
