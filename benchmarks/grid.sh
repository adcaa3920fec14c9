#!/usr/bin/env bash
# Projected wall time of BeLUGA's full SENT grid (specs/sent-full.yaml,
# 1,198 runs) on this machine, before and after issue 15's work: the same
# measurement (benchmarks/gogrid: every run's updates counted with package
# train's planning on the real data, a few updates of each kind of run
# measured at the spec's bert-base shape, randomly initialised) run in this
# tree and in the tree before the work (BEFORE, default the main-line parent
# of the perf merge 4de67bf, extracted with git archive into a temporary
# directory and built with -tags before). One after the other, never at once.
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
before=${BEFORE:-4de67bf^1}
tags=""
[ "$build" = openblas ] && tags="openblas"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export OPENBLAS_NUM_THREADS=2 GOMAXPROCS=2
if [ "$only" != before ]; then
	go build ${tags:+-tags $tags} -o "$tmp/after" ./benchmarks/gogrid
	"$tmp/after" -data "$data" -shape "$shape" -label "after ($(git rev-parse --short HEAD), $build)"
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
