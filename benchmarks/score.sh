#!/usr/bin/env bash
# Prompted scoring throughput, side by side: models' BenchmarkScore (the
# prefix's keys and values cached, and not) and benchmarks/torch_score.py
# (transformers' GPT2LMHeadModel on the same shapes and algorithm), both on
# 2 threads, alternately ROUNDS times, with the load before each; the Llama
# peer (LlamaForCausalLM) too when LLAMA_TRANSFORMERS_SRC names the 4.40 tree.
# Usage: bash benchmarks/score.sh TRANSFORMERS_4_27_1_SRC [pure|openblas]
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: $0 TRANSFORMERS_4_27_1_SRC [pure|openblas]" >&2; exit 2; }
src=$1 tags=""
[ "${2:-pure}" = openblas ] && tags="-tags openblas"
export OPENBLAS_NUM_THREADS=2 GOMAXPROCS=2
for r in $(seq "${ROUNDS:-1}"); do
	echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"
	go test $tags ./models/ -run '^$' -bench '^BenchmarkScore$' -benchtime 3x | grep '^Benchmark'
	/usr/bin/python3 benchmarks/torch_score.py "$src" --rounds 3 --threads 2
	if [ -n "${LLAMA_TRANSFORMERS_SRC:-}" ]; then
		/usr/bin/python3 benchmarks/torch_score.py "$LLAMA_TRANSFORMERS_SRC" --family llama --rounds 3 --threads 2
	fi
done
