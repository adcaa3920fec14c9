package train

import (
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/beluga-nlp/beluga/losses"
	"github.com/beluga-nlp/beluga/models"
	"github.com/beluga-nlp/beluga/models/backend"
	"github.com/beluga-nlp/beluga/models/checkpoint"
	"github.com/beluga-nlp/beluga/models/optim"
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
	r := Row{Enc: models.Encoding{IDs: []int{id}, TypeIDs: []int{0}}, Env: env, Target: make([]float64, 2)}
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
	if _, err := Train(context.Background(), tinyModel(t, 1), Data{Suite: d}, []Phase{{Hyper: Hyper{Epochs: 5, BatchSize: 4, LR: 0.05}, Update: dro}}, TrainOptions{Seed: 1}); err != nil {
		t.Fatal(err)
	}
	if dro.Q["MFT/hard"] <= dro.Q["MFT/easy"] || math.Abs(dro.Q["MFT/hard"]+dro.Q["MFT/easy"]-1) > 1e-9 {
		t.Errorf("group weights %v: want most weight on MFT/hard, summing to 1", dro.Q)
	}
}

func TestFishMetaUpdate(t *testing.T) {
	p := &models.Param{Value: []float32{2, 4}}
	MetaUpdate(backend.Reference(), []*models.Param{p}, [][]float32{{1, 1}}, 0.25)
	if p.Value[0] != 1.25 || p.Value[1] != 1.75 {
		t.Errorf("θ + 0.25(θ_inner − θ) = %v, want [1.25 1.75]", p.Value)
	}
	// A whole Fish run moves the weights only a little: meta_lr = 5e-7/lr/5.
	m := tinyModel(t, 2)
	before := append([]float32(nil), m.Params()[3].Value...)
	d := &SuiteData{MFT: []Row{row(2, 1, "MFT/a"), row(3, 0, "MFT/b"), row(4, 1, "MFT/c")}}
	fish := []Phase{{Hyper: Hyper{Epochs: 3, BatchSize: 2, LR: 1e-3}, Update: &Fish{MetaSteps: 5}}}
	if _, err := Train(context.Background(), m, Data{Suite: d, IID: []Row{row(5, 0, "iid")}}, fish, TrainOptions{Seed: 1}); err != nil {
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

// TestFishOuterStep: with BeLUGA's outer step (torch < 2.0) each update
// ends with an AdamW step on zero gradients from the optimiser state saved
// after the meta update, at the schedule's next position; without it the
// weights are the meta update's.
func TestFishOuterStep(t *testing.T) {
	d := Data{Suite: &SuiteData{MFT: []Row{row(2, 1, "MFT/a"), row(3, 0, "MFT/b"), row(4, 1, "MFT/c")}}}
	hp := Hyper{Epochs: 2, BatchSize: 2, LR: 1e-2}
	// afterFirst records the weights and Fish's saved state once the loop
	// has finished the first update (at the start of the second).
	run := func(outer bool) *snapshotUpdater {
		f := &Fish{MetaSteps: 2, OuterStep: outer}
		u := &snapshotUpdater{Fish: f}
		m := tinyModel(t, 7)
		u.model = m
		if _, err := Train(context.Background(), m, d, []Phase{{Hyper: hp, Update: u}}, TrainOptions{Seed: 3}); err != nil {
			t.Fatal(err)
		}
		return u
	}
	plain, outer := run(false), run(true)
	// Replay the outer step on the plain weights: AdamW on zero gradients
	// from the saved state, at the schedule position after the inner steps.
	opt := optim.NewAdamW(backend.Reference(), 0)
	params := make([]*models.Param, len(plain.weights))
	for i, w := range plain.weights {
		params[i] = &models.Param{Value: append([]float32(nil), w...), Grad: make([]float32, len(w))}
	}
	// The saved state refers to the model's own parameters: map them.
	opt.SetState(plain.saved.Remap(plain.model.Params(), params))
	opt.Step(params, optim.LinearDecay(hp.LR, plain.savedPos, 4), nil)
	moved := 0.0
	for i, w := range outer.weights {
		for j, v := range w {
			moved = math.Max(moved, math.Abs(float64(v-plain.weights[i][j])))
			if math.Abs(float64(v-params[i].Value[j])) > 1e-7 {
				t.Fatalf("param %d[%d] = %v after the outer step, the replay gives %v", i, j, v, params[i].Value[j])
			}
		}
	}
	if moved == 0 {
		t.Error("the outer step did not move the weights")
	}
}

// snapshotUpdater wraps Fish and records the weights and Fish's saved state
// at the start of the second update.
type snapshotUpdater struct {
	*Fish
	model    models.Classifier
	calls    int
	weights  [][]float32
	saved    optim.AdamWState
	savedPos int
}

func (s *snapshotUpdater) Update(st *UpdateState) (Step, error) {
	if s.calls == 1 {
		for _, p := range s.model.Params() {
			s.weights = append(s.weights, append([]float32(nil), p.Value...))
		}
		// Copy now: the next update restores the saved state into the
		// optimiser, which then changes it in place.
		params := s.model.Params()
		s.saved, s.savedPos = s.Fish.saved.Remap(params, params), s.Fish.savedPos
	}
	s.calls++
	return s.Fish.Update(st)
}

// TestIRMUpdateAddsThePenalty: after the warm-up an IRM update's gradient
// is that of (ERM loss + λ·penalty)/λ, the penalty taken from package
// losses; during the warm-up λ is 1.
func TestIRMUpdateAddsThePenalty(t *testing.T) {
	var mft []Row
	for i := 0; i < 4; i++ {
		mft = append(mft, row(2+i%3, i%2, "MFT/a"))
	}
	d := Data{Suite: &SuiteData{MFT: mft}}
	hp := Hyper{Epochs: 5, BatchSize: 4, LR: 1e-2}
	for _, tc := range []struct {
		index int
		reg   float64
	}{{0, 1}, {4, 1e4}} {
		m := tinyModel(t, 9)
		irm := &IRM{Dummy: losses.DummyCE, Lambda: 1e4}
		if _, _, err := irm.Plan(d, hp, 1); err != nil {
			t.Fatal(err)
		}
		st := &UpdateState{Model: m, Hyper: hp, Index: tc.index, Losses: losses.NewEvaluator(), Opt: optim.NewAdamW(m.Backend(), 0)}
		if _, err := irm.Update(st); err != nil {
			t.Fatal(err)
		}
		// The environment has exactly one batch of its 4 rows; the row
		// order does not change the summed gradient.
		ref := tinyModel(t, 9)
		var encs []models.Encoding
		var targets []float64
		for _, r := range mft {
			encs = append(encs, r.Enc)
			targets = append(targets, r.Target...)
		}
		pass, err := ref.Forward(models.NewBatch(encs), true)
		if err != nil {
			t.Fatal(err)
		}
		ev := losses.NewEvaluator()
		_, dz, err := ev.MFT(pass.Logits(), 4, 2, targets, losses.SigmoidBCE)
		if err != nil {
			t.Fatal(err)
		}
		pen, dpen, err := ev.IRMPenalty(pass.Logits(), 4, 2, losses.DummyCE, targets, nil, false)
		if err != nil {
			t.Fatal(err)
		}
		if pen == 0 {
			t.Fatal("zero penalty: the test cannot see it")
		}
		scale := 1.0
		if tc.reg > 1 {
			scale = 1 / tc.reg
		}
		for i := range dz {
			dz[i] = float32(scale * (float64(dz[i]) + tc.reg*float64(dpen[i])))
		}
		if err := pass.Backward(dz); err != nil {
			t.Fatal(err)
		}
		for i, p := range m.Params() {
			for j, g := range p.Grad {
				want := ref.Params()[i].Grad[j]
				if math.Abs(float64(g-want)) > 1e-5*math.Max(1, math.Abs(float64(want))) {
					t.Fatalf("update %d: ∂/∂%s[%d] = %v, want %v", tc.index, p.Name, j, g, want)
				}
			}
		}
	}
}

// TestLPFTPhases: BeLUGA's LP-FT probes for 1.5 epochs with the probing
// hyper-parameters, then fine-tunes for 1.5 epochs with the run's own, each
// phase with a fresh optimiser and schedule: what the run's effective spec
// says, whatever epochs the spec gives.
func TestLPFTPhases(t *testing.T) {
	probe := Hyper{Epochs: 3, BatchSize: 2, LR: 1e-3}
	hp := Hyper{Epochs: 1, BatchSize: 4, LR: 2e-5}
	e := RunSpec{Configuration: ConfigIIDPlusT, Method: "lp-ft", Hyper: hp, ProbeHyper: probe}.Effective()
	phases := lpft{}.Phases(e.Hyper, e.ProbeHyper)
	if len(phases) != 2 {
		t.Fatalf("%d phases, want 2", len(phases))
	}
	p1, p2 := phases[0], phases[1]
	if !p1.Frozen || p1.Hyper.Epochs != 1.5 || p1.Hyper.BatchSize != 2 || p1.Hyper.LR != 1e-3 {
		t.Errorf("probing phase %+v: want frozen, 1.5 epochs, batch 2, lr 1e-3", p1)
	}
	if p2.Frozen || p2.Hyper.Epochs != 1.5 || p2.Hyper.BatchSize != 4 || p2.Hyper.LR != 2e-5 {
		t.Errorf("fine-tuning phase %+v: want unfrozen, 1.5 epochs, batch 4, lr 2e-5", p2)
	}
	// 8 rows: ceil(1.5·4) = 6 probing updates of batch 2, ceil(1.5·2) = 3
	// fine-tuning updates of batch 4; each phase's schedule starts at its lr.
	var mft []Row
	for i := 0; i < 8; i++ {
		mft = append(mft, row(2+i%3, i%2, "MFT/a"))
	}
	curve, err := Train(context.Background(), tinyModel(t, 4), Data{Suite: &SuiteData{MFT: mft}}, phases, TrainOptions{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(curve) != 9 || curve[0].LR != 1e-3 || curve[6].LR != 2e-5 {
		t.Errorf("curve of %d updates, learning rates %v then %v: want 6 + 3, 1e-3 then 2e-5", len(curve), curve[0].LR, curve[min(6, len(curve)-1)].LR)
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

// A search trains every grid point and chooses the one with the best
// objective, the sum of its parts: classification's MFT accuracy, INV and
// DIR pass rates; READ's span objective (MFT accuracy and INV pass).
func TestSearchPicksTheBestObjective(t *testing.T) {
	read := tinyReadSpec(ConfigIIDPlusT)
	read.MaxSteps = 2
	tests := []struct {
		name  string
		spec  RunSpec
		grid  Grid
		parts func(Trial) []float64
	}{
		{"sentiment", tinySpec(ConfigIIDPlusT), Grid{LR: []float64{1e-6, 5e-2}, BatchSize: []int{4}, Epochs: []float64{3}},
			func(tr Trial) []float64 { return []float64{tr.MFTAcc, tr.INVPass, tr.DIRPass} }},
		{"read", read, Grid{LR: []float64{1e-3, 1e-6}, BatchSize: []int{2}, Epochs: []float64{1}},
			func(tr Trial) []float64 { return []float64{tr.MFTAcc, tr.INVPass} }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			best, trials, err := Search(context.Background(), tc.spec, tc.grid)
			if err != nil {
				t.Fatal(err)
			}
			if len(trials) != 2 {
				t.Fatalf("%d trials, want 2", len(trials))
			}
			top, scored := trials[0], false
			for _, tr := range trials {
				if tr.Objective > top.Objective {
					top = tr
				}
				sum := 0.0
				for _, p := range tc.parts(tr) {
					if p < 0 || p > 1 {
						t.Errorf("trial %+v: a part of its objective is out of [0, 1]", tr)
					}
					sum += p
					scored = scored || p > 0
				}
				if math.Abs(tr.Objective-sum) > 1e-12 {
					t.Errorf("objective %g is not the sum of its parts %+v", tr.Objective, tr)
				}
			}
			if best != top.Hyper {
				t.Errorf("chose %+v, best trial %+v", best, top)
			}
			if !scored {
				t.Error("no validation score: the tiny suite's validation cases were not used")
			}
		})
	}
}
