#!/usr/bin/env bash
# diff-startup.sh: whole-process `toolserver snapshot diff` beside odiff 4.5.0
# on four 1280x800 pairs, start-up included: what a CI step or a script that
# compares two PNGs pays. The target is at most 0.8x odiff's wall time on
# every pair (docs/performance.md, "Start-up").
#
# The pairs: identical (the vectors' dashboard screenshot, the same bytes in
# two files), word (one word of its title changed: the vectors' 1280x800
# small pair), aa (an article whose <h1> moved by 1 px: the vectors' aa
# pair), large (a 720x440 block of the dashboard inverted, about 30% of the
# pixels). The floor beside them: a hello-world Go binary and `toolserver
# version`, which is start-up and exit alone.
#
# The binary is built as `make build` builds it (static, -trimpath, -s -w).
# Every command runs N times, round-robin, so load from other work hits all
# of them alike; medians of wall and CPU time (user + system, from rusage).
#
# Usage: bench/diff-startup.sh                    (N=31)
#        N=61 bench/diff-startup.sh
#        TOOLSERVER_BIN=/path/to/toolserver bench/diff-startup.sh
#        TOOLSERVER_BEFORE=/path/to/old/toolserver bench/diff-startup.sh
#                                                  (also time an older build)
#        ODIFF=/path/to/odiff bench/diff-startup.sh (skip the npm install)
#        KEEP=1 bench/diff-startup.sh              (keep the temp dir)
# Needs: go; node and npm with access to the npm registry unless ODIFF is set.
set -euo pipefail

N=${N:-31}
ODIFF_VERSION=4.5.0
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
vectors=$repo/testdata/vectors
tmp=$(mktemp -d "${TMPDIR:-/tmp}/diff-startup.XXXXXX")
if [[ -z "${KEEP:-}" ]]; then
	trap 'rm -rf "$tmp"' EXIT
else
	echo "diff-startup: keeping $tmp" >&2
fi

die() { echo "diff-startup: $*" >&2; exit 1; }
command -v go >/dev/null || die "go is not on PATH"

if [[ -n "${ODIFF:-}" ]]; then
	odiff=$ODIFF
else
	for tool in node npm; do
		command -v "$tool" >/dev/null || die "$tool is not on PATH (or set ODIFF=/path/to/odiff)"
	done
	echo "== installing odiff-bin@$ODIFF_VERSION into $tmp/npm" >&2
	mkdir -p "$tmp/npm"
	(
		cd "$tmp/npm"
		printf '{"name":"diff-startup","private":true}\n' >package.json
		npm install --no-audit --no-fund --loglevel=error "odiff-bin@$ODIFF_VERSION" >"$tmp/npm.log" 2>&1
	) || { cat "$tmp/npm.log" >&2; die "npm install failed (is the npm registry reachable?)"; }
	odiff=$(cd "$tmp/npm" && node -p "require('@odiff/' + process.platform + '-' + process.arch)" 2>/dev/null) ||
		die "odiff-bin has no native binary for this platform"
fi
[[ -x "$odiff" ]] || die "odiff binary $odiff is not executable"

if [[ -n "${TOOLSERVER_BIN:-}" ]]; then
	bin=$TOOLSERVER_BIN
else
	echo "== building toolserver as make build does" >&2
	(cd "$repo" && CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$tmp/toolserver" ./cmd/toolserver) ||
		die "go build ./cmd/toolserver failed"
	bin=$tmp/toolserver
fi

echo "== writing the pairs" >&2
mkdir -p "$tmp/pairs"
(cd "$repo" && go test ./snapshot -run '^TestBenchPairs$' -count=1 -args -pairs "$tmp/pairs" >"$tmp/pairs.log" 2>&1) ||
	{ cat "$tmp/pairs.log" >&2; die "could not generate the pairs (go test ./snapshot -run TestBenchPairs)"; }
for ab in a b; do
	cp "$vectors/images/1280x800/small-$ab.png" "$tmp/pairs/word-$ab.png"
	cp "$vectors/images/1280x800/aa-$ab.png" "$tmp/pairs/aa-$ab.png"
	cp "$tmp/pairs/30pct-$ab.png" "$tmp/pairs/large-$ab.png"
done

mkdir -p "$tmp/harness"
printf 'module diffstartup\n\ngo 1.26\n' >"$tmp/harness/go.mod"
cat >"$tmp/harness/main.go" <<'GO'
// The round-robin harness: each command N times, wall and CPU medians.
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"time"
)

type command struct {
	name, pair string
	argv       []string
	ok         []int // the exit codes that are not a failure
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func main() {
	n, _ := strconv.Atoi(os.Args[1])
	dir, ours, before, odiff, hello := os.Args[2], os.Args[3], os.Args[4], os.Args[5], os.Args[6]
	pairs := []string{"identical", "word", "aa", "large"}
	cmds := []command{
		{"hello-world Go binary", "", []string{hello}, []int{0}},
		{"toolserver version", "", []string{ours, "version"}, []int{0}},
	}
	if before != "" {
		cmds = append(cmds, command{"before: toolserver version", "", []string{before, "version"}, []int{0}})
	}
	for _, p := range pairs {
		a, b := dir+"/"+p+"-a.png", dir+"/"+p+"-b.png"
		cmds = append(cmds,
			command{"odiff", p, []string{odiff, a, b, "--threshold", "0.1", "--antialiasing", "--parsable-stdout"}, []int{0, 22}},
			command{"toolserver snapshot diff", p, []string{ours, "snapshot", "diff", a, b, "--json"}, []int{0, 1}})
		if before != "" {
			cmds = append(cmds, command{"before: toolserver snapshot diff", p, []string{before, "snapshot", "diff", a, b, "--json"}, []int{0, 1}})
		}
	}
	wall := make([][]float64, len(cmds))
	cpu := make([][]float64, len(cmds))
	for r := range n {
		for i := range cmds {
			j := (i + r) % len(cmds)
			c := cmds[j]
			cmd := exec.Command(c.argv[0], c.argv[1:]...)
			t0 := time.Now()
			err := cmd.Run()
			ms := float64(time.Since(t0).Microseconds()) / 1000
			var ee *exec.ExitError
			if err != nil && !(errors.As(err, &ee) && slices.Contains(c.ok, ee.ExitCode())) {
				fmt.Fprintln(os.Stderr, strings.Join(c.argv, " "), err)
				os.Exit(1)
			}
			st := cmd.ProcessState
			wall[j] = append(wall[j], ms)
			cpu[j] = append(cpu[j], float64((st.UserTime()+st.SystemTime()).Microseconds())/1000)
		}
	}
	load, _ := os.ReadFile("/proc/loadavg")
	fmt.Printf("Medians of %d round-robin runs, ms (wall / CPU); load average %s at the end\n\n",
		n, strings.Join(strings.Fields(string(load))[:3], " "))
	fmt.Println("| command | pair | wall | CPU |")
	fmt.Println("|---|---|---:|---:|")
	atWall, atCPU := map[string]float64{}, map[string]float64{}
	for i, c := range cmds {
		k := c.name + "/" + c.pair
		atWall[k], atCPU[k] = median(wall[i]), median(cpu[i])
		fmt.Printf("| %s | %s | %.1f | %.1f |\n", c.name, c.pair, atWall[k], atCPU[k])
	}
	// The target is on wall time; CPU time is steadier on a loaded machine
	// (odiff decodes the two images on two threads, and so do we).
	fmt.Println()
	fmt.Println("| pair | ours / odiff, wall (target <= 0.80x) | ours / odiff, CPU |")
	fmt.Println("|---|---:|---:|")
	for _, p := range pairs {
		ours, theirs := "toolserver snapshot diff/"+p, "odiff/"+p
		r := atWall[ours] / atWall[theirs]
		met := "met"
		if r > 0.8 {
			met = "not met"
		}
		fmt.Printf("| %s | %.2fx, %s | %.2fx |\n", p, r, met, atCPU[ours]/atCPU[theirs])
	}
}
GO
mkdir -p "$tmp/hello"
printf 'module hello\n\ngo 1.26\n' >"$tmp/hello/go.mod"
printf 'package main\n\nimport "fmt"\n\nfunc main() { fmt.Println("hello") }\n' >"$tmp/hello/main.go"
(cd "$tmp/hello" && CGO_ENABLED=0 go build -trimpath -ldflags '-s -w' -o "$tmp/hello-bin" .) || die "could not build the hello-world binary"

echo "== $N rounds; odiff $("$odiff" --version 2>&1 | head -1)" >&2
(cd "$tmp/harness" && go run . "$N" "$tmp/pairs" "$bin" "${TOOLSERVER_BEFORE:-}" "$odiff" "$tmp/hello-bin")
