package report

import (
	"bytes"
	"image/color"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// A panel title wider than its panel (a suite of a few functionalities,
// a long metadata group such as "target_ident=immigrants") ends before the
// colour bar: centred over the panel it ran under the bar, which hid its
// end ("target_ident=wome", "immigra ts").
func TestHeatmapTitlesClearTheColourBar(t *testing.T) {
	w := identOut()
	store, runs := w.store(t)
	tab, err := FromStore(store, runs, Options{Trials: 10})
	if err != nil {
		t.Fatal(err)
	}
	var svg bytes.Buffer
	if err := tab.WriteHeatmap(&svg, "svg", HeatmapOptions{}); err != nil {
		t.Fatal(err)
	}
	l, err := tab.layoutHeatmap(PaperWidth)
	if err != nil {
		t.Fatal(err)
	}
	bar := l.left + l.labelW
	for _, p := range l.bands[0] {
		bar += l.cellW*vg.Length(p.width()) + panelGap
	}
	st := l.style(titleSize, color.Black, draw.XLeft)
	titles := 0
	for _, m := range regexp.MustCompile(`<text x="([-0-9.]+)"[^>]*>([^<]*)</text>`).FindAllStringSubmatch(svg.String(), -1) {
		if !strings.HasPrefix(m[2], "HATE: ") {
			continue
		}
		titles++
		x, err := strconv.ParseFloat(m[1], 64)
		if err != nil {
			t.Fatal(err)
		}
		if right := vg.Length(x) + st.Width(m[2]); vg.Length(x) < 0 || right > bar {
			t.Errorf("title %q spans %.2f to %.2f pt; the colour bar starts at %.2f", m[2], x, float64(right), float64(bar))
		}
	}
	if titles != 5 { // seen, the column, three identities
		t.Errorf("%d panel titles, want 5", titles)
	}
}
