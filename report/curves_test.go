package report

import (
	"bytes"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/beluga-nlp/beluga/report/tfevents"
)

// writeTestCurve stores a synthetic curve the way package train does, under
// the run directory's train/.
func writeTestCurve(t *testing.T) (runDir string, curve []CurvePoint) {
	t.Helper()
	runDir = t.TempDir()
	kinds := []string{"mft", "inv", "dir"}
	var b strings.Builder
	for step := range 300 {
		k := kinds[step%3]
		loss := 0.7*math.Exp(-float64(step)/80) + 0.05*float64(step%7)/7 + 0.1*float64(step%3)
		if step == 5 {
			loss = -1 // a non-finite loss, as train records it
		}
		lr := 2e-5 * (1 - float64(step)/300)
		p := CurvePoint{Step: step, Kind: k, Loss: loss, LR: lr}
		curve = append(curve, p)
		fmt.Fprintf(&b, `{"step":%d,"kind":%q,"loss":%v,"lr":%v}`+"\n", step, k, loss, lr)
	}
	if err := os.MkdirAll(filepath.Join(runDir, "train"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(runDir, "train", CurveFile), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return runDir, curve
}

func TestReadCurveFromRunDir(t *testing.T) {
	dir, want := writeTestCurve(t)
	path, err := FindCurve(dir)
	if err != nil {
		t.Fatal(err)
	}
	got, err := ReadCurve(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) || got[7] != want[7] {
		t.Errorf("%d points, point 7 %+v, want %d and %+v", len(got), got[7], len(want), want[7])
	}
	if _, err := FindCurve(t.TempDir()); err == nil {
		t.Error("no error for a directory without a curve")
	}
	bad := filepath.Join(t.TempDir(), CurveFile)
	os.WriteFile(bad, []byte("{\"step\":1}\nnot json\n"), 0o644)
	if _, err := ReadCurve(bad); err == nil || !strings.Contains(err.Error(), "line 2") {
		t.Errorf("error %v, want one naming line 2", err)
	}
}

func TestCurveEvents(t *testing.T) {
	_, curve := writeTestCurve(t)
	path, err := WriteCurveEvents(t.TempDir(), time.Unix(1700000000, 0), curve)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := tfevents.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// One lr per step, one loss per finite step, after the version event.
	if want := 1 + 2*len(curve) - 1; len(evs) != want {
		t.Fatalf("%d events, want %d", len(evs), want)
	}
	if v := evs[1].Values[0]; v.Tag != "loss/mft" || v.Step != 0 || v.Value != float64(float32(curve[0].Loss)) {
		t.Errorf("first scalar %+v", v)
	}
}

func TestCurvePlot(t *testing.T) {
	dir, curve := writeTestCurve(t)
	for _, ext := range []string{"png", "svg", "pdf"} {
		path := filepath.Join(dir, "curve."+ext)
		if err := WriteCurvePlotFile(path, curve, "SENT IID+T vanilla seen seed=42"); err != nil {
			t.Fatal(err)
		}
		b, _ := os.ReadFile(path)
		if magic := map[string]string{"png": "\x89PNG", "svg": "<?xml", "pdf": "%PDF"}[ext]; !bytes.HasPrefix(b, []byte(magic)) {
			t.Errorf("%s does not start with %q", ext, magic)
		}
		if *heatmapDir != "" && ext == "png" {
			os.WriteFile(filepath.Join(*heatmapDir, "curve.png"), b, 0o644)
		}
	}
	if err := WriteCurvePlotFile(filepath.Join(dir, "c.gif"), curve, ""); err == nil {
		t.Error("no error for an unknown format")
	}
}
