#!/usr/bin/env bash
# The demo of `make demo`: runs the bundled example flows on a local
# Chromium and compares them with the committed baselines.
set -euo pipefail
bin=${1:-bin/toolserver}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
rm -rf demo-out demo-report
echo "Running the example flows in examples/shop/.argent/flows (baselines in __baselines__/):"
echo
status=0
"$bin" flow run examples/shop/.argent/flows -r --artifacts demo-out --junit demo-out/junit.xml --report demo-report || status=$?
echo
case $status in
  0) echo "All example flows passed; the report is demo-report/index.html. Try: edit examples/shop/site/index.html and run again to see a failure explained (images in demo-out/, the report with its side-by-side, slider and onion views in demo-report/, then $bin approve --report demo-report --all --project . to adopt the change)."
     echo "Shell completion: source <($bin completion bash) (bash needs the bash-completion package: apt-get install bash-completion)." ;;
  1) echo "A flow failed: see above and demo-report/index.html (open it in a browser); the baseline, current and diff images are in demo-out/." ;;
  *) echo "The run could not start (exit $status)." ;;
esac
exit "$status"
