#!/usr/bin/env bash
# Runs every Fuzz* target of the module for a while each, one after another.
#
#   scripts/fuzz.sh 10s     what `make test` runs
#   scripts/fuzz.sh 10m     what `make fuzz` runs
#
# Go runs one fuzz target per `go test` call, so the targets are found
# first (a `func FuzzX(f *testing.F)` in a _test.go file). A crash fails the script; Go keeps the input under the
# package's testdata/fuzz/<Target>/, where it stays as a corpus entry once
# the bug is fixed. New inputs are minimized for at most 5 s, so a large
# seed does not eat a short run, and -timeout is past -fuzztime (by default
# they are both 10 minutes).
set -euo pipefail
cd "$(dirname "$0")/.."
time=${1:-10s}
GO=${GO:-go}
status=0
log=$(mktemp)
trap 'rm -f "$log"' EXIT
# fuzz PKG TARGET: one run of the target, its output in $log.
fuzz() { $GO test -run '^$' -fuzz "^${2}\$" -fuzztime "$time" -fuzzminimizetime 5s -timeout 30m "$1" >"$log" 2>&1; }
# kept PKG TARGET: how many inputs the package keeps for the target.
kept() {
  if [[ -d $1/testdata/fuzz/$2 ]]; then find "$1/testdata/fuzz/$2" -type f | wc -l; else echo 0; fi
}
while read -r file target; do
  pkg=./$(dirname "$file")
  before=$(kept "$pkg" "$target")
  ok=1
  fuzz "$pkg" "$target" || ok=0
  # Go's coordinator can fail a target with a bare "context deadline
  # exceeded" as -fuzztime ends, having found nothing (golang/go#75804):
  # no input was kept. That run is tried once more; a kept input fails at once.
  if [[ $ok == 0 && $(kept "$pkg" "$target") == "$before" ]] && grep -q '^    context deadline exceeded$' "$log"; then
    echo "fuzz: $pkg $target: the fuzz coordinator's deadline race (no input kept); running it again" >&2
    ok=1
    fuzz "$pkg" "$target" || ok=0
  fi
  if [[ $ok == 0 ]]; then
    cat "$log" >&2
    echo "fuzz: $pkg $target FAILED (the input is kept under $pkg/testdata/fuzz/$target/)" >&2
    status=1
  else
    # the engine's last progress line: executions and corpus
    echo "fuzz: $pkg $target $time: $(grep -E '^fuzz: elapsed' "$log" | tail -1 | sed 's/^fuzz: //')" >&2
  fi
done < <(grep -rEo --include='*_test.go' --exclude-dir=.cache --exclude-dir=.git '^func Fuzz[A-Za-z0-9_]+' . | sed -E 's/^\.\/(.*):func (.*)$/\1 \2/' | sort)
exit $status
