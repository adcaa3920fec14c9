#!/bin/sh
# Redraws docs/test-report*.png: the test report of the shipped fixture
# classifier (models/testdata/hfsaved/classifier, id2label reversed) on
# CheckList's sentiment suite as its published numbers were taken (n=500,
# seed=1), and two fixture models compared, in headless Chromium.
# Run from the repository root after
#   BELUGA_DATA=${BELUGA_DATA:-~/.cache/beluga} go run ./cmd/beluga data fetch checklist-sentiment
set -eu
data=${BELUGA_DATA:-$HOME/.cache/beluga}
out=$(mktemp -d)
go build -o "$out/beluga" ./cmd/beluga
"$out/beluga" test --model models/testdata/hfsaved/classifier --suite "$data/checklist/sentiment_suite.tar.gz" \
	--n 500 --seed 1 -o "$out/sent" >/dev/null
for m in classifier electra; do
	"$out/beluga" test --model "models/testdata/hfsaved/$m" --suite cmd/beluga/testdata/testcompare/suite.jsonl -o "$out/$m" >/dev/null
done
"$out/beluga" test compare "$out/classifier" "$out/electra" --format html -o "$out/compare.html"
shot() { # URL PNG WIDTH,HEIGHT
	chromium --headless --no-sandbox --disable-gpu --disable-background-networking --user-data-dir="$(mktemp -d)" \
		--window-size="$3" --virtual-time-budget=8000 --screenshot="$2" "$1" 2>/dev/null
}
shot "file://$out/sent/report.html" docs/test-report.png 1280,1100
shot "file://$out/sent/report.html#func/22" docs/test-report-failing-case.png 1280,900
shot "file://$out/compare.html" docs/test-report-compare.png 1400,760
