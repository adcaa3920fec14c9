package train

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/beluga-nlp/beluga/models"
	"github.com/beluga-nlp/beluga/models/checkpoint"
)

// tinyModel is a word-vector classifier over a 6-word vocabulary.
func tinyModel(t *testing.T, seed uint64) *models.WordVec {
	t.Helper()
	vec := &checkpoint.Tensor{Shape: []int{6, 3}, Data: []float32{0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, .5, .5, .5}}
	m, err := models.NewWordVec(vec, 4, 2, seed)
	if err != nil {
		t.Fatal(err)
	}
	m.Dropout = 0
	return m
}

func row(id int, label int, env string) Row {
	r := Row{Enc: models.Encoding{IDs: []int{id}, TypeIDs: []int{0}}, Env: env}
	r.Target[label] = 1
	return r
}

func TestGroupDROWeightsTheHardestGroup(t *testing.T) {
	// "MFT/easy" is learnable; in "MFT/hard" the same input carries both
	// labels, so its loss stays high and its weight must grow.
	d := &SuiteData{}
	for i := 0; i < 8; i++ {
		d.MFT = append(d.MFT, row(2, 1, "MFT/easy"), row(3, 0, "MFT/easy"), row(4, i%2, "MFT/hard"))
	}
	dro := &GroupDRO{Eta: 0.5}
	if _, err := dro.Train(tinyModel(t, 1), Data{Suite: d}, Hyper{Epochs: 5, BatchSize: 4, LR: 0.05}, 1); err != nil {
		t.Fatal(err)
	}
	if dro.Q["MFT/hard"] <= dro.Q["MFT/easy"] || math.Abs(dro.Q["MFT/hard"]+dro.Q["MFT/easy"]-1) > 1e-9 {
		t.Errorf("group weights %v: want most weight on MFT/hard, summing to 1", dro.Q)
	}
}

func TestFishMetaUpdate(t *testing.T) {
	p := &models.Param{Value: []float32{2, 4}}
	MetaUpdate([]*models.Param{p}, [][]float32{{1, 1}}, 0.25)
	if p.Value[0] != 1.25 || p.Value[1] != 1.75 {
		t.Errorf("θ + 0.25(θ_inner − θ) = %v, want [1.25 1.75]", p.Value)
	}
	// A whole Fish run moves the weights only a little: meta_lr = 5e-7/lr/5.
	m := tinyModel(t, 2)
	before := append([]float32(nil), m.Params()[3].Value...)
	d := &SuiteData{MFT: []Row{row(2, 1, "MFT/a"), row(3, 0, "MFT/b"), row(4, 1, "MFT/c")}}
	if _, err := (Fish{MetaSteps: 5}).Train(m, Data{Suite: d, IID: []Row{row(5, 0, "iid")}}, Hyper{Epochs: 3, BatchSize: 2, LR: 1e-3}, 1); err != nil {
		t.Fatal(err)
	}
	moved := 0.0
	for i, v := range m.Params()[3].Value {
		moved = math.Max(moved, math.Abs(float64(v-before[i])))
	}
	if moved == 0 || moved > 1e-3 {
		t.Errorf("Fish moved the classifier by %g: want a small nonzero step (meta_lr = 1e-4)", moved)
	}
}

func TestIRMTrains(t *testing.T) {
	d := &SuiteData{MFT: []Row{row(2, 1, "MFT/a"), row(3, 0, "MFT/a"), row(4, 1, "MFT/b")},
		INV: []Perturbed{{Orig: models.Encoding{IDs: []int{2}, TypeIDs: []int{0}}, Perts: []models.Encoding{{IDs: []int{2, 5}, TypeIDs: []int{0, 0}}}, Env: "INV/x"}}}
	curve, err := (IRM{Lambda: 1e4}).Train(tinyModel(t, 3), Data{Suite: d}, Hyper{Epochs: 10, BatchSize: 4, LR: 1e-2}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(curve) == 0 {
		t.Fatal("no steps")
	}
	for _, c := range curve {
		if math.IsNaN(c.Loss) {
			t.Fatal("NaN loss")
		}
	}
}

func TestLPFTResetsTheOptimiser(t *testing.T) {
	var opts []*AdamW
	method := lpft{lp: Hyper{Epochs: 2, BatchSize: 2, LR: 1e-2}, newOptimiser: func(wd float64) *AdamW {
		o := NewAdamW(wd)
		opts = append(opts, o)
		return o
	}}
	d := &SuiteData{MFT: []Row{row(2, 1, "MFT/a"), row(3, 0, "MFT/a")}}
	if _, err := method.Train(tinyModel(t, 4), Data{Suite: d}, Hyper{Epochs: 2, BatchSize: 2, LR: 1e-2}, 1); err != nil {
		t.Fatal(err)
	}
	if len(opts) != 2 || opts[0] == opts[1] || opts[0].Steps() != 1 || opts[1].Steps() != 1 {
		t.Errorf("LP-FT used %d optimisers: want a fresh one per phase, each stepping once (1 epoch of 1 batch)", len(opts))
	}
}

func TestIIDThenTStartsFromTheIIDModel(t *testing.T) {
	dir := t.TempDir()
	iid := filepath.Join(dir, "iid")
	if _, err := Run(context.Background(), tinySpec(ConfigIID), iid); err != nil {
		t.Fatal(err)
	}
	spec := tinySpec(ConfigIIDThenT)
	spec.FromIID = filepath.Join(iid, "model")
	spec.Hyper.LR = 1e-12 // the suite phase barely moves the weights
	out := filepath.Join(dir, "iid-t")
	if _, err := Run(context.Background(), spec, out); err != nil {
		t.Fatal(err)
	}
	a, _, _, err := models.Load(filepath.Join(iid, "model"))
	if err != nil {
		t.Fatal(err)
	}
	b, _, _, err := models.Load(filepath.Join(out, "model"))
	if err != nil {
		t.Fatal(err)
	}
	for i, p := range a.Params() {
		for j, v := range p.Value {
			if math.Abs(float64(v-b.Params()[i].Value[j])) > 1e-6 {
				t.Fatalf("%s differs from the IID model's by more than the tiny suite phase allows", p.Name)
			}
		}
	}
}

func TestSearchPicksTheBestObjective(t *testing.T) {
	spec := tinySpec(ConfigIIDPlusT)
	grid := Grid{LR: []float64{1e-6, 5e-2}, BatchSize: []int{4}, Epochs: []float64{3}}
	best, trials, err := Search(context.Background(), spec, grid)
	if err != nil {
		t.Fatal(err)
	}
	if len(trials) != 2 {
		t.Fatalf("%d trials, want 2", len(trials))
	}
	top := trials[0]
	for _, tr := range trials {
		if tr.Objective > top.Objective {
			top = tr
		}
		if math.Abs(tr.Objective-(tr.MFTAcc+tr.INVPass+tr.DIRPass)) > 1e-12 {
			t.Errorf("objective %g is not the sum of its parts %+v", tr.Objective, tr)
		}
	}
	if best != top.Hyper {
		t.Errorf("chose %+v, best trial %+v", best, top)
	}
	if top.MFTAcc == 0 && top.INVPass == 0 && top.DIRPass == 0 {
		t.Error("no validation score: the tiny suite's validation cases were not used")
	}
}
