#!/usr/bin/env bash
# Speed must not cost accuracy: a full SST-2 run on the peer recipe of
# shared/data/MANIFEST.md (BERT-tiny shape from a random start, 2 epochs,
# batch 32, AdamW lr 3e-4 with linear decay, max length 64, BeLUGA's halves
# of dev as validation / i.i.d. test), once with beluga's CLI (beluga train
# --configuration iid; the suite scored on one case per functionality only,
# eval_limit 1, so that the wall time is the training's) and once with the
# PyTorch peer (benchmarks/sst2_peer.py), one after the other. Prints both
# accuracies and wall times; MANIFEST's peer figures are 82.3 % / 79.8 %.
# Usage: [SEED=n] bash benchmarks/sst2.sh [pure|openblas] [--only go|torch]
# (needs ../shared/data, or DATA=dir, and python3-torch).
set -euo pipefail
cd "$(dirname "$0")/.."
usage() { echo "usage: $0 [pure|openblas] [--only go|torch]" >&2; exit 2; }
build=openblas only=""
while [ $# -gt 0 ]; do
	case "$1" in
	pure | openblas) build=$1 ;;
	--only) [ $# -ge 2 ] || usage; only=$2; shift ;;
	*) usage ;;
	esac
	shift
done
data=$(cd "${DATA:-../shared/data}" && pwd)
tags=""
[ "$build" = openblas ] && tags="-tags openblas"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build $tags -o "$tmp/beluga" ./cmd/beluga
go run ./benchmarks/sst2ids -data "$data" -max-length 64 -out "$tmp/ids"
export OPENBLAS_NUM_THREADS=2 GOMAXPROCS=2
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
if [ "$only" != torch ]; then
	cat >"$tmp/run.yaml" <<YAML
task: sentiment
suite: $data/checklist/sentiment_suite.tar.gz
iid_train: $data/sst2/train.tsv
iid_dev: $data/sst2/dev.tsv
eval_limit: 1
model: {kind: bert-tiny, vocab: $data/vocab/bert-base-uncased-vocab.txt}
configuration: iid
iid_hyper: {epochs: 2, batch_size: 32, lr: 3.0e-4}
max_length: 64
seed: ${SEED:-42}
YAML
	start=$(date +%s.%N)
	"$tmp/beluga" train --spec "$tmp/run.yaml" --out "$tmp/go"
	end=$(date +%s.%N)
	"$tmp/beluga" predict --model "$tmp/go/model" --input "$tmp/ids/val.jsonl" --max-length 64 -o "$tmp/val.pred.jsonl"
	val=$(/usr/bin/python3 - "$tmp/val.pred.jsonl" "$tmp/ids/val.labels" <<'PY'
import json, sys
preds = [max(range(2), key=json.loads(l)["probs"].__getitem__) for l in open(sys.argv[1])]
gold = [int(l) for l in open(sys.argv[2])]
print(f"{100 * sum(p == g for p, g in zip(preds, gold)) / len(gold):.1f}")
PY
)
	metric() { /usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$tmp/go/metrics.json" "$1"; }
	test=$(awk -v a="$(metric iid_accuracy)" 'BEGIN {printf "%.1f", 100 * a}')
	steps=$(metric steps)
	awk -v s="$start" -v e="$end" -v b="$build" -v st="$steps" -v va="$val" -v te="$test" \
		'BEGIN {printf "go-%s steps=%d run_seconds=%.1f validation=%s test=%s\n", b, st, e-s, va, te}'
	echo "load after go: $(cut -d' ' -f1-3 /proc/loadavg)"
fi
if [ "$only" != go ]; then
	(cd benchmarks && /usr/bin/python3 sst2_peer.py --ids "$tmp/ids" --threads 2)
	echo "load after torch: $(cut -d' ' -f1-3 /proc/loadavg)"
fi
