#!/usr/bin/env bash
# Side-by-side training-step benchmark: beluga (pure Go, or -tags openblas)
# against the PyTorch peer, same shapes (BERT-tiny, batch 32, seq 64, f32,
# 2 threads each), run alternately ROUNDS times; the medians are compared.
# Usage: bash benchmarks/compare.sh [pure|openblas]   (needs python3-torch;
# the openblas build needs libopenblas-dev). Last line:
#   ratio go/torch step_time=X memory=Y
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-pure}
rounds=${ROUNDS:-3}
tags=""
[ "$build" = openblas ] && tags="-tags openblas"
[ "$build" = pure ] || [ "$build" = openblas ] || { echo "usage: $0 [pure|openblas]" >&2; exit 2; }
bin=$(mktemp -d)/gostep
trap 'rm -rf "$(dirname "$bin")"' EXIT
go build $tags -o "$bin" ./benchmarks/gostep
export OPENBLAS_NUM_THREADS=2 GOMAXPROCS=2
go_t=(); go_m=(); py_t=(); py_m=()
field() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p"; }
for r in $(seq "$rounds"); do
	g=$("$bin" -steps 10); echo "$g"
	p=$(/usr/bin/python3 benchmarks/torch_step.py --steps 10 --threads 2); echo "$p"
	go_t+=("$(echo "$g" | field step_time)"); go_m+=("$(echo "$g" | field peak_rss_mb)")
	py_t+=("$(echo "$p" | field step_time)"); py_m+=("$(echo "$p" | field peak_rss_mb)")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
gt=$(median "${go_t[@]}"); gm=$(median "${go_m[@]}"); pt=$(median "${py_t[@]}"); pm=$(median "${py_m[@]}")
echo "median step time: go-$build ${gt}s, torch ${pt}s; peak memory: go ${gm} MB, torch ${pm} MB"
awk -v gt="$gt" -v pt="$pt" -v gm="$gm" -v pm="$pm" 'BEGIN {printf "ratio go/torch step_time=%.2f memory=%.2f\n", gt/pt, gm/pm}'
