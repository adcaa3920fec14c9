package losses

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/beluga-nlp/beluga/internal/fixture"
	"github.com/beluga-nlp/beluga/models"
	"github.com/beluga-nlp/beluga/models/tokenize"
)

type fixtureLosses struct {
	MFT struct {
		Texts      []string
		SoftLabels [][]float64 `json:"soft_labels"`
		Logits     [][]float32
		BCE        float64 `json:"bce_with_logits"`
		CE         float64 `json:"softmax_ce"`
	}
	INV struct {
		Orig, Pert []string
		Loss       float64
	}
	DIR struct {
		Orig, Pert []string
		Directions []string
		Eps        []float64
		Loss       float64
	}
	Total float64
	Grad  struct {
		ClassifierWeight [][]float64        `json:"classifier.weight"`
		ClassifierBias   []float64          `json:"classifier.bias"`
		EmbLNWeight      []float64          `json:"bert.embeddings.LayerNorm.weight"`
		Norms            map[string]float64 `json:"norms"`
	}
}

func flat(xs [][]float32) []float32 {
	var out []float32
	for _, x := range xs {
		out = append(out, x...)
	}
	return out
}

// TestFixtureLosses computes BeLUGA's three losses on the fixture batch with
// the fixture BERT, back-propagates their sum, and compares values and
// gradients with HuggingFace + PyTorch.
func TestFixtureLosses(t *testing.T) {
	exp := fixture.Load(t)
	var fl fixtureLosses
	if err := json.Unmarshal(exp.Losses, &fl); err != nil {
		t.Fatal(err)
	}
	dir := fixture.Dir(t)
	m, _, err := models.LoadBERT(dir)
	if err != nil {
		t.Fatal(err)
	}
	m.HiddenDropout, m.AttentionDropout = 0, 0
	tk, err := tokenize.NewWordPieceFromVocab(filepath.Join(dir, "vocab.txt"), exp.MaxLength)
	if err != nil {
		t.Fatal(err)
	}
	batch := func(texts []string) models.Batch {
		encs := make([]models.Encoding, len(texts))
		for i, s := range texts {
			if encs[i], err = tk.Encode(s, "", false); err != nil {
				t.Fatal(err)
			}
		}
		return models.NewBatch(encs)
	}
	ev := NewEvaluator()

	// MFT: both forms from the given logits, then the BCE through the model.
	var targets []float64
	for _, y := range fl.MFT.SoftLabels {
		targets = append(targets, y...)
	}
	z := flat(fl.MFT.Logits)
	bce, _, err := ev.MFT(z, 8, 2, targets, SigmoidBCE)
	if err != nil {
		t.Fatal(err)
	}
	ce, _, err := ev.MFT(z, 8, 2, targets, SoftmaxCE)
	if err != nil {
		t.Fatal(err)
	}
	if math.Abs(bce-fl.MFT.BCE) > 1e-5 || math.Abs(ce-fl.MFT.CE) > 1e-5 {
		t.Errorf("MFT: BCE %.7f CE %.7f, want %.7f %.7f", bce, ce, fl.MFT.BCE, fl.MFT.CE)
	}

	total := 0.0
	step := func(name string, texts []string, loss func(z []float32, rows int) (float64, []float32, error), want float64) {
		pass, err := m.Forward(batch(texts), true)
		if err != nil {
			t.Fatal(err)
		}
		l, dz, err := loss(pass.Logits(), len(texts))
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(l-want) > 1e-5 {
			t.Errorf("%s loss %.7f, want %.7f", name, l, want)
		}
		t.Logf("%s loss %.8g, HuggingFace's fixture %.8g: |Δ| %.2g", name, l, want, math.Abs(l-want))
		total += l
		if err := pass.Backward(dz); err != nil {
			t.Fatal(err)
		}
	}
	step("MFT", fl.MFT.Texts, func(z []float32, rows int) (float64, []float32, error) {
		return ev.MFT(z, rows, 2, targets, SigmoidBCE)
	}, fl.MFT.BCE)
	step("INV", append(append([]string{}, fl.INV.Orig...), fl.INV.Pert...), func(z []float32, rows int) (float64, []float32, error) {
		return ev.INV(z, rows, 2, false)
	}, fl.INV.Loss)
	dirs := make([]Direction, len(fl.DIR.Directions))
	for i, s := range fl.DIR.Directions {
		if dirs[i], err = ParseDirection(s); err != nil {
			t.Fatal(err)
		}
	}
	step("DIR", append(append([]string{}, fl.DIR.Orig...), fl.DIR.Pert...), func(z []float32, rows int) (float64, []float32, error) {
		return ev.DIR(z, rows, dirs)
	}, fl.DIR.Loss)
	if math.Abs(total-fl.Total) > 3e-5 {
		t.Errorf("total %.7f, want %.7f", total, fl.Total)
	}

	relClose := func(name string, got []float32, want []float64) {
		num, den := 0.0, 0.0
		for i := range want {
			d := float64(got[i]) - want[i]
			num += d * d
			den += want[i] * want[i]
		}
		if math.Sqrt(num) > 1e-4*math.Sqrt(den)+1e-7 {
			t.Errorf("%s: relative error %.2g", name, math.Sqrt(num/den))
		}
		t.Logf("%s: relative difference %.2g", name, math.Sqrt(num/den))
	}
	var cw []float64
	for _, row := range fl.Grad.ClassifierWeight {
		cw = append(cw, row...)
	}
	relClose("classifier.weight gradient", m.Param("classifier.weight").Grad, cw)
	relClose("classifier.bias gradient", m.Param("classifier.bias").Grad, fl.Grad.ClassifierBias)
	relClose("embeddings LayerNorm gradient", m.Param("bert.embeddings.LayerNorm.weight").Grad, fl.Grad.EmbLNWeight)
	worst, compared := 0.0, 0
	for _, p := range m.Params() {
		want, ok := fl.Grad.Norms[p.Name]
		if !ok {
			continue
		}
		var sq float64
		for _, g := range p.Grad {
			sq += float64(g) * float64(g)
		}
		// Norms below 1e-6 are rounding noise in both frameworks (the key
		// biases get no gradient through softmax).
		got := math.Sqrt(sq)
		if math.Abs(got-want) > 1e-3*want && math.Abs(got-want) > 1e-6 {
			t.Errorf("%s: gradient norm %.6g, want %.6g", p.Name, got, want)
		}
		if want > 1e-6 {
			worst = math.Max(worst, math.Abs(got-want)/want)
		}
		compared++
	}
	t.Logf("%d gradient norms: max relative difference %.2g (norms above 1e-6)", compared, worst)
}

func TestSoftLabels(t *testing.T) {
	for label, want := range map[string][2]float64{"0": {1, 0}, "1": {.5, .5}, "2": {0, 1}, "not_0": {1. / 3, 2. / 3}} {
		if got, err := SoftLabel(label); err != nil || got != want {
			t.Errorf("SoftLabel(%q) = %v, %v", label, got, err)
		}
	}
	if _, err := SoftLabel("3"); err == nil {
		t.Error("no error for an unknown label")
	}
}

// TestLossGradients checks every loss's d/dz against finite differences.
func TestLossGradients(t *testing.T) {
	ev := NewEvaluator()
	z := []float32{0.3, -1.2, 2.0, 0.1, -0.4, 0.9, 1.5, -2.2}
	cases := []struct {
		name string
		f    func(z []float32) (float64, []float32, error)
	}{
		{"MFT BCE", func(z []float32) (float64, []float32, error) {
			return ev.MFT(z, 4, 2, []float64{1, 0, .5, .5, 0, 1, 1. / 3, 2. / 3}, SigmoidBCE)
		}},
		{"MFT CE", func(z []float32) (float64, []float32, error) {
			return ev.MFT(z, 4, 2, []float64{1, 0, .5, .5, 0, 1, 1. / 3, 2. / 3}, SoftmaxCE)
		}},
		{"CE", func(z []float32) (float64, []float32, error) { return ev.CE(z, 4, 2, []int{0, 1, 1, 0}) }},
		{"INV", func(z []float32) (float64, []float32, error) { return ev.INV(z, 4, 2, false) }},
		{"INV detached", func(z []float32) (float64, []float32, error) { return ev.INV(z, 4, 2, true) }},
		{"DIR", func(z []float32) (float64, []float32, error) {
			return ev.DIR(z, 4, []Direction{NotLessConf, NotMoreConf})
		}},
		{"DIR fixed classes", func(z []float32) (float64, []float32, error) {
			return ev.DIR(z, 4, []Direction{NotLess0, NotLess2})
		}},
		{"INV one pair", func(z []float32) (float64, []float32, error) { return ev.INV(z[:4], 2, 2, false) }},
		{"DIR one pair", func(z []float32) (float64, []float32, error) { return ev.DIR(z[:4], 2, []Direction{NotMoreConf}) }},
		{"DIR 3 classes", func(z []float32) (float64, []float32, error) { return ev.DIR(z[:6], 2, []Direction{NotMoreConf}) }},
		{"DIR 3 classes, last class", func(z []float32) (float64, []float32, error) { return ev.DIR(z[:6], 2, []Direction{NotLess2}) }},
	}
	for _, tc := range cases {
		if tc.name != "INV detached" {
			checkFD(t, tc.name, z, tc.f, nil)
			continue
		}
		// The originals are constants: no gradient flows to them.
		_, dz, err := tc.f(z)
		if err != nil {
			t.Fatal(err)
		}
		for i, g := range dz[:4] {
			if g != 0 {
				t.Errorf("%s: gradient %g on detached original %d", tc.name, g, i)
			}
		}
		checkFD(t, tc.name, z, tc.f, func(i int) bool { return i >= 4 })
	}
}

// checkFD compares the gradient f returns with central differences of its
// loss, at every index of z (or those only accepts).
func checkFD(t *testing.T, name string, z []float32, f func(z []float32) (float64, []float32, error), only func(i int) bool) {
	t.Helper()
	_, dz, err := f(z)
	if err != nil {
		t.Fatal(err)
	}
	for i := range dz {
		if only != nil && !only(i) {
			continue
		}
		const h = 1e-3
		orig := z[i]
		z[i] = orig + h
		up, _, _ := f(z)
		z[i] = orig - h
		down, _, _ := f(z)
		z[i] = orig
		if num := (up - down) / (2 * h); math.Abs(num-float64(dz[i])) > 1e-3*math.Max(1, math.Abs(num)) {
			t.Errorf("%s: d/dz[%d] = %g, finite difference %g", name, i, dz[i], num)
		}
	}
}

func TestNonFiniteLoss(t *testing.T) {
	ev := NewEvaluator()
	nan := float32(math.NaN())
	_, _, err := ev.MFT([]float32{nan, 0}, 1, 2, []float64{1, 0}, SigmoidBCE)
	if !errors.Is(err, ErrNotFinite) {
		t.Errorf("NaN logits: error %v, want ErrNotFinite", err)
	}
}

func TestDIRClamp(t *testing.T) {
	// A certain negative original that becomes certainly positive makes
	// ε = 1 for not_less_0: torch clamps log(1−ε) at −100.
	ev := NewEvaluator()
	l, dz, err := ev.DIR([]float32{100, -100, -100, 100}, 2, []Direction{NotLess0})
	if err != nil {
		t.Fatal(err)
	}
	if l != 100 {
		t.Errorf("clamped loss %g, want 100", l)
	}
	for _, g := range dz {
		if g != 0 {
			t.Errorf("clamped pair has gradient %v", dz)
			break
		}
	}
}

// TestIRMPenalty checks the penalty against its closed form and its
// gradient against finite differences. For BCE at w = 1,
// ∂D/∂w_c = mean over the batch of (σ(z_ic) − y_ic)·z_ic / classes.
func TestIRMPenalty(t *testing.T) {
	ev := NewEvaluator()
	z := []float32{0.3, -1.2, 2.0, 0.1, -0.4, 0.9, 1.5, -2.2}
	y := []float64{1, 0, .5, .5, 0, 1, 1. / 3, 2. / 3}
	p, _, err := ev.IRMPenalty(z, 4, 2, DummyBCE, y, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	var g [2]float64
	for i := 0; i < 4; i++ {
		for c := 0; c < 2; c++ {
			zi := float64(z[i*2+c])
			g[c] += (1/(1+math.Exp(-zi)) - y[i*2+c]) * zi / 8
		}
	}
	if want := g[0]*g[0] + g[1]*g[1]; math.Abs(p-want) > 1e-12 {
		t.Errorf("BCE penalty %.12g, hand-computed %.12g", p, want)
	}
	// DomainBed's form: even rows (0, 2) against odd rows (1, 3), each a
	// mean over its own 2 rows × 2 classes.
	var g1, g2 [2]float64
	for i := 0; i < 4; i++ {
		for c := 0; c < 2; c++ {
			zi := float64(z[i*2+c])
			d := (1/(1+math.Exp(-zi)) - y[i*2+c]) * zi / 4
			if i%2 == 0 {
				g1[c] += d
			} else {
				g2[c] += d
			}
		}
	}
	ps, _, err := ev.IRMPenalty(z, 4, 2, DummyBCE, y, nil, true)
	if err != nil {
		t.Fatal(err)
	}
	if want := g1[0]*g2[0] + g1[1]*g2[1]; math.Abs(ps-want) > 1e-12 {
		t.Errorf("split-batch BCE penalty %.12g, hand-computed %.12g", ps, want)
	}
	for _, tc := range []struct {
		kind  DummyKind
		split bool
	}{{DummyCE, false}, {DummyBCE, false}, {DummyINV, false}, {DummyDIR, false}, {DummyCE, true}, {DummyBCE, true}, {DummyINV, true}, {DummyDIR, true}} {
		kind := tc.kind
		checkFD(t, fmt.Sprintf("dummy %d (split %v)", kind, tc.split), z, func(z []float32) (float64, []float32, error) {
			return ev.IRMPenalty(z, 4, 2, kind, y, []Direction{NotLessConf, NotLess2}, tc.split)
		}, nil)
	}
	// A declared 3-class task's DIR and INV batches.
	z3 := []float32{0.3, -1.2, 2.0, 0.1, -0.4, 0.9, 1.5, -2.2, 0.7, -0.3, 0.2, 1.1}
	for _, kind := range []DummyKind{DummyINV, DummyDIR} {
		checkFD(t, fmt.Sprintf("3 classes, dummy %d", kind), z3, func(z []float32) (float64, []float32, error) {
			return ev.IRMPenalty(z, 4, 3, kind, nil, []Direction{NotLessConf, NotLess2}, false)
		}, nil)
	}
}

// TestIRMPenaltyMatchesTorch checks the penalty and its gradient against
// torch's double backward through BeLUGA's dummy losses
// (testdata/gen_irm.py): for INV only the perturbed half is scaled by the
// dummy weight, for MFT and DIR every row.
func TestIRMPenaltyMatchesTorch(t *testing.T) {
	b, err := os.ReadFile("testdata/irm_torch.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Logits  []float64 `json:"logits"`
		Targets []float64 `json:"targets"`
		Cases   map[string]struct {
			Penalty float64   `json:"penalty"`
			Grad    []float64 `json:"grad"`
		} `json:"cases"`
	}
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	z := make([]float32, len(ref.Logits))
	for i, v := range ref.Logits {
		z[i] = float32(v)
	}
	kinds := map[string]DummyKind{"inv": DummyINV, "mft_ce": DummyCE, "dir": DummyDIR}
	dirs := []Direction{NotMoreConf, NotLess0, NotLessConf}
	ev := NewEvaluator()
	for name, want := range ref.Cases {
		p, dz, err := ev.IRMPenalty(z, 6, 2, kinds[name], ref.Targets, dirs, false)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if math.Abs(p-want.Penalty) > 1e-5*math.Max(1e-3, want.Penalty) {
			t.Errorf("%s: penalty %.8g, torch %.8g", name, p, want.Penalty)
		}
		for i, g := range want.Grad {
			if math.Abs(float64(dz[i])-g) > 1e-4*math.Max(1e-3, math.Abs(g)) {
				t.Errorf("%s: dP/dz[%d] = %.8g, torch %.8g", name, i, dz[i], g)
			}
		}
	}
}

// With three classes not_less_2 bounds the last class: a perturbation that
// takes P(class 2) from e²/(2+e²) to ⅓ costs −log(1−ε).
func TestDIRThreeClasses(t *testing.T) {
	l, _, err := NewEvaluator().DIR([]float32{0, 0, 2, 0, 0, 0}, 2, []Direction{NotLess2})
	if err != nil {
		t.Fatal(err)
	}
	e2 := math.Exp(2)
	eps := e2/(2+e2) - 1./3
	if want := -math.Log(1 - eps); math.Abs(l-want) > 1e-6 {
		t.Errorf("loss %.6f, want %.6f", l, want)
	}
}
