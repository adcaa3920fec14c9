#!/usr/bin/env bash
# Suite prediction throughput: beluga's predict.Run (pure Go, or -tags
# openblas; tokenisation included) against the PyTorch peer (the same model
# shape on the same token ids, length-sorted batches, inference mode;
# tokenisation not timed), alternately ROUNDS times; medians are compared.
# Usage: bash benchmarks/predict.sh [pure|openblas] [--model tiny|mini] [--limit N]
# (needs ../shared/data and python3-torch). Last line:
#   ratio go/torch inputs_per_s=X
set -euo pipefail
cd "$(dirname "$0")/.."
usage() { echo "usage: $0 [pure|openblas] [--model tiny|mini] [--limit N]" >&2; exit 2; }
build=pure model=tiny limit=0
while [ $# -gt 0 ]; do
	case "$1" in
	pure | openblas) build=$1 ;;
	--model) [ $# -ge 2 ] || usage; model=$2; shift ;;
	--limit) [ $# -ge 2 ] || usage; limit=$2; shift ;;
	*) usage ;;
	esac
	shift
done
[[ "$limit" =~ ^[0-9]+$ ]] || usage
rounds=${ROUNDS:-1}
tags=""
[ "$build" = openblas ] && tags="-tags openblas"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build $tags -o "$tmp/gopredict" ./benchmarks/gopredict
export OPENBLAS_NUM_THREADS=2 GOMAXPROCS=2
"$tmp/gopredict" -ids "$tmp/ids.txt" -limit "$limit"
echo "model: BERT-$model, batch 128; load: $(cut -d' ' -f1-3 /proc/loadavg)"
g_r=(); p_r=()
field() { sed -n "s/.* $1=\([0-9.]*\).*/\1/p"; }
for r in $(seq "$rounds"); do
	g=$("$tmp/gopredict" -model "$model" -limit "$limit"); echo "$g"
	p=$(cd benchmarks && /usr/bin/python3 torch_predict.py --ids "$tmp/ids.txt" --model "$model" --threads 2); echo "$p"
	g_r+=("$(echo "$g" | field inputs_per_s)"); p_r+=("$(echo "$p" | field inputs_per_s)")
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
gr=$(median "${g_r[@]}"); pr=$(median "${p_r[@]}")
echo "median inputs/s: go-$build $gr, torch $pr; load after: $(cut -d' ' -f1-3 /proc/loadavg)"
awk -v g="$gr" -v p="$pr" 'BEGIN {printf "ratio go/torch inputs_per_s=%.2f\n", g/p}'
