#!/usr/bin/env bash
# Projected wall time of BeLUGA's full SENT grid (specs/sent-full.yaml,
# 1,576 runs: 1,198 and the 378 trials of its 21 searches) on this machine, before and after issue 15's work: the same
# measurement (benchmarks/gogrid: every run's updates counted with package
# train's planning on the real data, a few updates of each kind of run
# measured at the spec's bert-base shape, randomly initialised) run in this
# tree and in the tree before the work (BEFORE, default the main-line parent
# of the perf merge 4de67bf, extracted with git archive into a temporary
# directory and built with -tags before). One after the other, never at once.
# After the after tree, the cluster projection: its total turned into
# core-hours and into wall time on NODES × PER_NODE cores (default 32 × 64)
# with as many cores per run (Slurm --cpus-per-task) as it was measured on,
# under the assumptions it prints.
# Usage: bash benchmarks/grid.sh [pure|openblas] [--shape base|mini|tiny] [--only after|before]
# (needs ../shared/data, or DATA=dir). Takes about 5 minutes per tree at
# bert-base on 2 cores. The last lines of each tree's output are its
# projections.
set -euo pipefail
cd "$(dirname "$0")/.."
usage() { echo "usage: $0 [pure|openblas] [--shape base|mini|tiny] [--only after|before]" >&2; exit 2; }
build=openblas shape=base only=""
while [ $# -gt 0 ]; do
	case "$1" in
	pure | openblas) build=$1 ;;
	--shape) [ $# -ge 2 ] || usage; shape=$2; shift ;;
	--only) [ $# -ge 2 ] || usage; only=$2; shift ;;
	*) usage ;;
	esac
	shift
done
data=$(cd "${DATA:-../shared/data}" && pwd)
# project reads gogrid's output and prints the per-core and cluster figures.
project() {
	awk -v measured="${GOMAXPROCS:-2}" -v nodes="${NODES:-32}" -v per="${PER_NODE:-64}" '
	/^projected, faithful:/ { total = $(NF - 3) + 0 }
	/^critical path:/ { floor = $3 + 0; sub(/^critical path: [0-9.]+ h /, ""); what = $0 }
	/^critical path, trials in turn/ { sub(/^critical path, trials in turn in one search run: /, ""); serial = $1 + 0; sub(/^[0-9.]+ h /, ""); serialwhat = $0 }
	END {
		if (total == 0) { print "no projection in gogrid output"; exit 1 }
		cores = nodes * per
		coreh = total * measured
		wall = coreh / cores
		printf "\ncluster projection (faithful grid, %d-core measurements):\n", measured
		printf "  per core: %.0f h x %d cores = %.0f core-hours (%.1f core-years)\n", total, measured, coreh, coreh / 8766
		printf "  %d nodes x %d cores = %d cores, --cpus-per-task=%d: %d runs at once\n", nodes, per, cores, measured, cores / measured
		printf "  every core busy: %.0f core-hours / %d cores = %.1f h\n", coreh, cores, wall
		printf "  critical path: %.1f h %s\n", floor, what
		if (serial > 0) printf "  (with each search'"'"'s 18 trials in turn in one run, as before trials were runs: %.1f h %s)\n", serial, serialwhat
		printf "  projected wall time: about %.1f h (the larger of the two)\n", (wall > floor ? wall : floor)
		printf "  assumptions: a run on %d cluster cores runs as fast as here; nodes share no memory bandwidth limit beyond this machine'"'"'s; the shared store and data cache keep up (the reads are small); a search'"'"'s 18 trials are runs of their own, side by side, the search waits for them and the runs it sets for it; 1,576 runs give more ready work than %d slots except in the tail\n", measured, cores / measured
	}'
}
before=${BEFORE:-4de67bf^1}
tags=""
[ "$build" = openblas ] && tags="openblas"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export OPENBLAS_NUM_THREADS=2 GOMAXPROCS=2
if [ "$only" != before ]; then
	go build ${tags:+-tags $tags} -o "$tmp/after" ./benchmarks/gogrid
	"$tmp/after" -data "$data" -shape "$shape" -label "after ($(git rev-parse --short HEAD), $build)" | tee "$tmp/after.txt"
	project <"$tmp/after.txt"
fi
if [ "$only" != after ]; then
	echo
	mkdir "$tmp/before"
	git archive "$before" | tar -x -C "$tmp/before"
	mkdir -p "$tmp/before/benchmarks/gogrid"
	cp benchmarks/gogrid/*.go "$tmp/before/benchmarks/gogrid/"
	(cd "$tmp/before" && go build -tags "before${tags:+,$tags}" -o "$tmp/beforebin" ./benchmarks/gogrid)
	"$tmp/beforebin" -data "$data" -shape "$shape" -label "before ($(git rev-parse --short "$before"), $build)"
fi
