#!/usr/bin/env bash
# Side-by-side READ training-step benchmark: beluga's span model (pure Go, or
# -tags openblas) against the PyTorch peer, same shapes (BERT-tiny encoder +
# qa_outputs, batch 8, sequence 384, f32, 2 threads each), for the MFT and the
# aligned INV span loss, run alternately ROUNDS times; medians are compared.
# Usage: bash benchmarks/read_compare.sh [pure|openblas]   (needs python3-torch;
# the openblas build needs libopenblas-dev). Last lines:
#   ratio go/torch <loss> step_time=X memory=Y
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-pure}
rounds=${ROUNDS:-3}
tags=""
[ "$build" = openblas ] && tags="-tags openblas"
[ "$build" = pure ] || [ "$build" = openblas ] || { echo "usage: $0 [pure|openblas]" >&2; exit 2; }
bin=$(mktemp -d)/readstep
trap 'rm -rf "$(dirname "$bin")"' EXIT
go build $tags -o "$bin" ./benchmarks/readstep
export OPENBLAS_NUM_THREADS=2 GOMAXPROCS=2
field() { sed -n "s/.*$1=\([0-9.]*\).*/\1/p"; }
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
summary=()
for loss in mft inv; do
	go_t=(); go_m=(); py_t=(); py_m=()
	for r in $(seq "$rounds"); do
		g=$("$bin" -steps 5 -loss "$loss"); echo "$g"
		p=$(/usr/bin/python3 benchmarks/torch_read_step.py --steps 5 --threads 2 --loss "$loss"); echo "$p"
		go_t+=("$(echo "$g" | field step_time)"); go_m+=("$(echo "$g" | field peak_rss_mb)")
		py_t+=("$(echo "$p" | field step_time)"); py_m+=("$(echo "$p" | field peak_rss_mb)")
	done
	gt=$(median "${go_t[@]}"); gm=$(median "${go_m[@]}"); pt=$(median "${py_t[@]}"); pm=$(median "${py_m[@]}")
	echo "$loss median step time: go-$build ${gt}s, torch ${pt}s; peak memory: go ${gm} MB, torch ${pm} MB"
	summary+=("$(awk -v l="$loss" -v gt="$gt" -v pt="$pt" -v gm="$gm" -v pm="$pm" 'BEGIN {printf "ratio go/torch %s step_time=%.2f memory=%.2f", l, gt/pt, gm/pm}')")
done
printf '%s\n' "${summary[@]}"
