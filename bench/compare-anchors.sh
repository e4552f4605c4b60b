#!/usr/bin/env bash
# compare-anchors.sh: times `toolserver snapshot diff` against the two anchors
# of PRODUCT.md on the same 1280x800 PNG pairs:
#   - odiff (npm odiff-bin, its native binary), whole process;
#   - pixelmatch 7.2.0 + pngjs 7.0.0 on Node: decode + compare measured inside
#     the process (first call, as a CLI does it, and warm), and whole process;
#   - ours: whole process, and its in-process durationMs (decode + compare).
# Every engine runs N times per pair, interleaved round-robin so that noise
# from other work on the machine hits all of them alike; medians are printed
# with the ratios. It also checks that our counts equal pixelmatch's.
#
# Usage: bench/compare-anchors.sh            (N=15 by default)
#        N=31 bench/compare-anchors.sh
#        TOOLSERVER_BIN=/path/to/toolserver bench/compare-anchors.sh
#        TOOLSERVER_BEFORE=/path/to/old/toolserver bench/compare-anchors.sh
#                                              (also time an older build, in the
#                                              same rounds: a before/after check)
#        KEEP=1 bench/compare-anchors.sh      (keep the temp dir)
#        CPU_ROUNDS=80 bench/compare-anchors.sh
#                                              (then also time ours, the older build
#                                              and odiff round-robin in a Go harness
#                                              that reads each process's CPU time
#                                              from its rusage: steadier than wall
#                                              time on a loaded machine)
# Needs: go, node (20+) and npm with access to the npm registry.
set -euo pipefail

N=${N:-15}
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/compare-anchors.XXXXXX")
if [[ -z "${KEEP:-}" ]]; then
	trap 'rm -rf "$tmp"' EXIT
else
	echo "compare-anchors: keeping $tmp" >&2
fi

die() { echo "compare-anchors: $*" >&2; exit 1; }
for tool in go node npm; do
	command -v "$tool" >/dev/null || die "$tool is not on PATH"
done

echo "== installing odiff-bin, pixelmatch@7.2.0, pngjs@7.0.0 into $tmp/npm" >&2
mkdir -p "$tmp/npm"
(
	cd "$tmp/npm"
	printf '{"name":"compare-anchors","private":true,"type":"module"}\n' >package.json
	npm install --no-audit --no-fund --loglevel=error odiff-bin pixelmatch@7.2.0 pngjs@7.0.0 >"$tmp/npm.log" 2>&1
) || { cat "$tmp/npm.log" >&2; die "npm install failed (is the npm registry reachable?)"; }
odiff=$(cd "$tmp/npm" && node -p "require('@odiff/' + process.platform + '-' + process.arch)" 2>/dev/null) ||
	die "odiff-bin has no native binary for this platform"
[[ -x "$odiff" ]] || die "odiff binary $odiff is not executable"
odiff_version=$(cd "$tmp/npm" && node -p "require('odiff-bin/package.json').version")

if [[ -n "${TOOLSERVER_BIN:-}" ]]; then
	bin=$TOOLSERVER_BIN
else
	echo "== building toolserver" >&2
	(cd "$repo" && go build -o "$tmp/toolserver" ./cmd/toolserver) || die "go build ./cmd/toolserver failed"
	bin=$tmp/toolserver
fi

echo "== writing the pairs (go test ./snapshot -run TestBenchPairs)" >&2
mkdir -p "$tmp/pairs"
(cd "$repo" && go test ./snapshot -run '^TestBenchPairs$' -count=1 -args -pairs "$tmp/pairs" >"$tmp/pairs.log" 2>&1) ||
	{ cat "$tmp/pairs.log" >&2; die "could not generate the pairs"; }

code=0
"$bin" snapshot diff "$tmp/pairs/identical-a.png" "$tmp/pairs/identical-b.png" --json >/dev/null 2>"$tmp/check.log" || code=$?
[[ $code -eq 0 ]] || { cat "$tmp/check.log" >&2; die "$bin snapshot diff does not work (exit $code)"; }

# pm.mjs: decode both PNGs with pngjs and compare with pixelmatch, K times in
# one process; prints the count, the first call's time and the warm median.
cat >"$tmp/npm/pm.mjs" <<'EOF'
import fs from 'node:fs';
import {PNG} from 'pngjs';
import pixelmatch from 'pixelmatch';
const [a, b, k = '1'] = process.argv.slice(2);
const times = [];
let count;
for (let i = 0; i < +k; i++) {
  const t0 = process.hrtime.bigint();
  const ia = PNG.sync.read(fs.readFileSync(a));
  const ib = PNG.sync.read(fs.readFileSync(b));
  count = pixelmatch(ia.data, ib.data, null, ia.width, ia.height, {threshold: 0.1});
  times.push(Number(process.hrtime.bigint() - t0) / 1e6);
}
const warm = times.slice(1).sort((x, y) => x - y);
console.log(JSON.stringify({count, first: times[0], warm: warm.length ? warm[warm.length >> 1] : null}));
EOF

# run.mjs: the round-robin harness.
cat >"$tmp/npm/run.mjs" <<'EOF'
import {spawnSync} from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
const [dir, bin, odiff, odiffVersion, n, before] = process.argv.slice(2);
const pairs = ['identical', '0.05pct', '0.5pct', '30pct'];
const run = (cmd, args) => {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(cmd, args, {encoding: 'utf8'});
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.error) throw r.error;
  return {ms, status: r.status, stdout: r.stdout, stderr: r.stderr};
};
const engines = {
  odiff(a, b) {
    const r = run(odiff, [a, b, '--threshold', '0.1', '--antialiasing', '--parsable-stdout']);
    if (r.status !== 0 && r.status !== 22) throw new Error(`odiff exit ${r.status}: ${r.stderr}`);
    return {whole: r.ms, count: r.status === 0 ? 0 : parseInt(r.stdout.split(';')[0], 10)};
  },
  pixelmatch(a, b) {
    const r = run(process.execPath, ['pm.mjs', a, b, '1']);
    if (r.status !== 0) throw new Error(`pixelmatch exit ${r.status}: ${r.stderr}`);
    const j = JSON.parse(r.stdout);
    return {whole: r.ms, inproc: j.first, count: j.count};
  },
  pixelmatchWarm(a, b) {
    const r = run(process.execPath, ['pm.mjs', a, b, '6']);
    if (r.status !== 0) throw new Error(`pixelmatch exit ${r.status}: ${r.stderr}`);
    const j = JSON.parse(r.stdout);
    return {inproc: j.warm, count: j.count};
  },
  ours(a, b) {
    const r = run(bin, ['snapshot', 'diff', a, b, '--json']);
    if (r.status !== 0 && r.status !== 1) throw new Error(`toolserver exit ${r.status}: ${r.stderr}`);
    const j = JSON.parse(r.stdout);
    return {whole: r.ms, inproc: j.durationMs, count: j.mismatchPixels};
  },
};
if (before) {
  engines.before = (a, b) => {
    const r = run(before, ['snapshot', 'diff', a, b, '--json']);
    if (r.status !== 0 && r.status !== 1) throw new Error(`toolserver (before) exit ${r.status}: ${r.stderr}`);
    const j = JSON.parse(r.stdout);
    return {whole: r.ms, inproc: j.durationMs, count: j.mismatchPixels};
  };
}
const names = Object.keys(engines);
const samples = {};
const counts = {};
for (let round = 0; round < +n; round++) {
  for (const p of pairs) {
    const a = `${dir}/${p}-a.png`, b = `${dir}/${p}-b.png`;
    for (let i = 0; i < names.length; i++) {
      const e = names[(i + round) % names.length];
      const r = engines[e](a, b);
      for (const [k, v] of Object.entries(r)) {
        if (k === 'count') { counts[`${e}/${p}`] = v; continue; }
        (samples[`${e}.${k}/${p}`] ??= []).push(v);
      }
    }
  }
}
const median = (xs) => { const s = [...xs].sort((x, y) => x - y); return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2; };
const m = (key, p) => median(samples[`${key}/${p}`]);
const rows = [
  [`odiff ${odiffVersion} (native binary, whole process)`, 'odiff.whole'],
  ['pixelmatch 7.2 + pngjs, whole process', 'pixelmatch.whole'],
  ['pixelmatch 7.2 + pngjs, decode+compare in process (first call)', 'pixelmatch.inproc'],
  ['pixelmatch 7.2 + pngjs, decode+compare in process (warm)', 'pixelmatchWarm.inproc'],
  ['toolserver snapshot diff, whole process', 'ours.whole'],
  ['toolserver snapshot diff, in process (durationMs)', 'ours.inproc'],
];
if (before) {
  rows.push([`before (${before}), whole process`, 'before.whole'], [`before (${before}), in process (durationMs)`, 'before.inproc']);
}
const f = (x) => x.toFixed(1);
console.log(`1280x800 pairs, medians of ${n} runs, ms; ${os.cpus().length} cores, load average ${os.loadavg().map(f).join(' ')} at the end`);
console.log();
console.log(`| engine | ${pairs.join(' | ')} |`);
console.log(`|---|${pairs.map(() => '---:').join('|')}|`);
for (const [label, key] of rows) console.log(`| ${label} | ${pairs.map((p) => f(m(key, p))).join(' | ')} |`);
console.log(`| mismatched pixels: ours / pixelmatch / odiff | ${pairs.map((p) => `${counts[`ours/${p}`]} / ${counts[`pixelmatch/${p}`]} / ${counts[`odiff/${p}`]}`).join(' | ')} |`);
console.log();
console.log('Ratios (how many times faster ours is; > 1 means faster):');
console.log();
console.log(`| ratio | ${pairs.join(' | ')} |`);
console.log(`|---|${pairs.map(() => '---:').join('|')}|`);
const ratio = (label, num, den) => console.log(`| ${label} | ${pairs.map((p) => (m(num, p) / m(den, p)).toFixed(2) + 'x').join(' | ')} |`);
ratio('odiff whole process / ours whole process', 'odiff.whole', 'ours.whole');
ratio('pixelmatch whole process / ours whole process', 'pixelmatch.whole', 'ours.whole');
ratio('pixelmatch in process (first call) / ours in process', 'pixelmatch.inproc', 'ours.inproc');
ratio('pixelmatch in process (warm) / ours in process', 'pixelmatchWarm.inproc', 'ours.inproc');
if (before) ratio('before whole process / ours whole process', 'before.whole', 'ours.whole');
let bad = false;
for (const p of pairs) if (counts[`ours/${p}`] !== counts[`pixelmatch/${p}`]) { bad = true; console.error(`count mismatch on ${p}: ours ${counts[`ours/${p}`]}, pixelmatch ${counts[`pixelmatch/${p}`]}`); }
if (bad) process.exit(3);
EOF

echo "== running $N rounds" >&2
cd "$tmp/npm"
node run.mjs "$tmp/pairs" "$bin" "$odiff" "$odiff_version" "$N" "${TOOLSERVER_BEFORE:-}"

if [[ -n "${CPU_ROUNDS:-}" ]]; then
	echo "== CPU time: $CPU_ROUNDS rounds" >&2
	mkdir -p "$tmp/cpu"
	printf 'module cpurounds\n\ngo 1.26\n' >"$tmp/cpu/go.mod"
	cat >"$tmp/cpu/main.go" <<'GO'
// Round-robin whole-process timing that also reads each process's CPU
// time (user + system) from its rusage.
package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"time"
)

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

func main() {
	n, _ := strconv.Atoi(os.Args[1])
	dir, ours, before, odiff := os.Args[2], os.Args[3], os.Args[4], os.Args[5]
	pairs := []string{"identical", "0.05pct", "0.5pct", "30pct"}
	type engine struct {
		name string
		argv func(a, b string) []string
	}
	engines := []engine{
		{"toolserver snapshot diff", func(a, b string) []string { return []string{ours, "snapshot", "diff", a, b, "--json"} }},
		{"odiff", func(a, b string) []string {
			return []string{odiff, a, b, "--threshold", "0.1", "--antialiasing", "--parsable-stdout"}
		}},
	}
	if before != "" {
		engines = append(engines, engine{"before (" + before + ")", func(a, b string) []string {
			return []string{before, "snapshot", "diff", a, b, "--json"}
		}})
	}
	wall, cpu := map[string][]float64{}, map[string][]float64{}
	for r := 0; r < n; r++ {
		for _, p := range pairs {
			a, b := dir+"/"+p+"-a.png", dir+"/"+p+"-b.png"
			for i := range engines {
				e := engines[(i+r)%len(engines)]
				argv := e.argv(a, b)
				cmd := exec.Command(argv[0], argv[1:]...)
				t0 := time.Now()
				err := cmd.Run()
				ms := float64(time.Since(t0).Microseconds()) / 1000
				// Exit 1 (ours) and 22 (odiff) say the images differ.
				var ee *exec.ExitError
				if err != nil && !(errors.As(err, &ee) && (ee.ExitCode() == 1 || ee.ExitCode() == 22)) {
					fmt.Fprintln(os.Stderr, argv, err)
					os.Exit(1)
				}
				k := e.name + "/" + p
				wall[k] = append(wall[k], ms)
				st := cmd.ProcessState
				cpu[k] = append(cpu[k], float64((st.UserTime()+st.SystemTime()).Microseconds())/1000)
			}
		}
	}
	fmt.Printf("\nWhole process, medians of %d round-robin runs, ms (wall / CPU):\n\n", n)
	fmt.Printf("| engine | identical | 0.05pct | 0.5pct | 30pct |\n|---|---:|---:|---:|---:|\n")
	for _, e := range engines {
		fmt.Printf("| %s |", e.name)
		for _, p := range pairs {
			k := e.name + "/" + p
			fmt.Printf(" %.1f / %.1f |", median(wall[k]), median(cpu[k]))
		}
		fmt.Println()
	}
}
GO
	(cd "$tmp/cpu" && go run . "$CPU_ROUNDS" "$tmp/pairs" "$bin" "${TOOLSERVER_BEFORE:-}" "$odiff")
	echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
fi
