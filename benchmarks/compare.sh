#!/usr/bin/env bash
# Side-by-side training-step benchmark: beluga (pure Go, or -tags openblas)
# against the PyTorch peer, same shapes (BERT-tiny or BERT-mini, batch 32,
# sequence 64, 128 or 384, f32, 2 threads each), run alternately ROUNDS
# times; the medians are compared.
# --family NAME times that model family's encoder and head at the same shape
# (gostep -family, torch_step.py --family: one entry each per family).
# --model base times bert-base; --batch N (default 32) and STEPS=N (default
# 10) size the rounds (bert-base: --batch 8, STEPS=3).
# BELUGA_KERNELS=avx512|avx2|go picks gostep's kernel path (printed).
# --precision bf16 runs gostep's products in bf16 (model.precision; the
# PyTorch peer stays fp32, its default).
# Usage: bash benchmarks/compare.sh [pure|openblas] [--seq N] [--model tiny|mini|base] [--batch N] [--family NAME] [--precision fp32|bf16]
# (needs python3-torch; the openblas build needs libopenblas-dev). Last line:
#   ratio go/torch step_time=X memory=Y
set -euo pipefail
cd "$(dirname "$0")/.."
usage() { echo "usage: $0 [pure|openblas] [--seq N] [--model tiny|mini|base] [--batch N] [--family NAME] [--precision fp32|bf16]" >&2; exit 2; }
build=pure seq=64 model=tiny family=bert batch=32 precision=fp32
while [ $# -gt 0 ]; do
	case "$1" in
	pure | openblas) build=$1 ;;
	--seq) [ $# -ge 2 ] || usage; seq=$2; shift ;;
	--model) [ $# -ge 2 ] || usage; model=$2; shift ;;
	--batch) [ $# -ge 2 ] || usage; batch=$2; shift ;;
	--family) [ $# -ge 2 ] || usage; family=$2; shift ;;
	--precision) [ $# -ge 2 ] || usage; precision=$2; shift ;;
	*) usage ;;
	esac
	shift
done
[[ "$seq" =~ ^[0-9]+$ ]] || usage
[[ "$batch" =~ ^[0-9]+$ ]] || usage
[ "$model" = tiny ] || [ "$model" = mini ] || [ "$model" = base ] || usage
[[ "$family" =~ ^[a-z0-9-]+$ ]] || usage
[ "$precision" = fp32 ] || [ "$precision" = bf16 ] || usage
rounds=${ROUNDS:-3} steps=${STEPS:-10}
[[ "$steps" =~ ^[0-9]+$ ]] || usage
tags=""
[ "$build" = openblas ] && tags="-tags openblas"
bin=$(mktemp -d)/gostep
trap 'rm -rf "$(dirname "$bin")"' EXIT
go build $tags -o "$bin" ./benchmarks/gostep
export OPENBLAS_NUM_THREADS=2 GOMAXPROCS=2
echo "shape: BERT-$model ($family), batch $batch x $seq, go in $precision; load: $(cut -d' ' -f1-3 /proc/loadavg)"
go_t=(); go_m=(); py_t=(); py_m=()
field() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p"; }
for r in $(seq "$rounds"); do
	g=$("$bin" -steps "$steps" -batch "$batch" -seq "$seq" -model "$model" -family "$family" -precision "$precision"); echo "$g"
	p=$(/usr/bin/python3 benchmarks/torch_step.py --steps "$steps" --batch "$batch" --threads 2 --seq "$seq" --model "$model" --family "$family"); echo "$p"
	go_t+=("$(echo "$g" | field step_time)"); go_m+=("$(echo "$g" | field peak_rss_mb)")
	py_t+=("$(echo "$p" | field step_time)"); py_m+=("$(echo "$p" | field peak_rss_mb)")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
gt=$(median "${go_t[@]}"); gm=$(median "${go_m[@]}"); pt=$(median "${py_t[@]}"); pm=$(median "${py_m[@]}")
echo "median step time: go-$build ${gt}s, torch ${pt}s; peak memory: go ${gm} MB, torch ${pm} MB; load after: $(cut -d' ' -f1-3 /proc/loadavg)"
awk -v gt="$gt" -v pt="$pt" -v gm="$gm" -v pm="$pm" 'BEGIN {printf "ratio go/torch step_time=%.2f memory=%.2f\n", gt/pt, gm/pm}'
