package models

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/losses"
	"github.com/beluga-nlp/beluga/models/checkpoint"
)

// The DeBERTa-v3-shaped fixture in testdata/deberta-v2 is written by
// testdata/deberta-v2/gen.py: HuggingFace's modeling_deberta_v2.py forward
// in PyTorch 1.13 with HF's parameter names, gradients by autograd.
const debertaFixture = "testdata/deberta-v2"

type debertaExpected struct {
	Texts []struct {
		InputIDs []int     `json:"input_ids"`
		Logits   []float64 `json:"logits"`
	} `json:"texts"`
	QA struct {
		Weight [][]float32 `json:"qa_outputs.weight"`
		Bias   []float32   `json:"qa_outputs.bias"`
		Start  [][]float64 `json:"start_logits"`
		End    [][]float64 `json:"end_logits"`
	} `json:"qa"`
	Losses struct {
		MFT struct {
			InputIDs   [][]int     `json:"input_ids"`
			SoftLabels [][]float64 `json:"soft_labels"`
			BCE        float64     `json:"bce_with_logits"`
			CE         float64     `json:"softmax_ce"`
		} `json:"mft"`
		INV struct {
			Orig, Pert [][]int
			Loss       float64
		} `json:"inv"`
		DIR struct {
			Orig, Pert [][]int
			Directions []string
			Eps        []float64
			Loss       float64
		} `json:"dir"`
		Total    float64 `json:"total"`
		WordGrad struct {
			Norm float64     `json:"norm"`
			IDs  []int       `json:"ids"`
			Rows [][]float64 `json:"rows"`
		} `json:"word_embeddings_grad"`
	} `json:"losses"`
	BucketsV3 struct {
		PositionBuckets int   `json:"position_buckets"`
		MaxPosition     int   `json:"max_position"`
		Relative        []int `json:"relative"`
		Bucket          []int `json:"bucket"`
	} `json:"buckets_v3_base"`
	BucketsFixture []int `json:"buckets_fixture"`
}

func loadDebertaExpected(t testing.TB) *debertaExpected {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(debertaFixture, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var e debertaExpected
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	return &e
}

func loadFixtureDeberta(t testing.TB) *SequenceClassifier {
	t.Helper()
	ck, err := checkpoint.Load(debertaFixture)
	if err != nil {
		t.Fatal(err)
	}
	m, rep, err := NewClassifier(ck.Config, ck.Config.Labels(), ck.Weights, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Initialised)+len(rep.Ignored) > 0 {
		t.Fatalf("fixture load: initialised %v, ignored %v", rep.Initialised, rep.Ignored)
	}
	return m
}

func idsBatch(rows [][]int) Batch {
	encs := make([]Encoding, len(rows))
	for i, r := range rows {
		encs[i] = Encoding{IDs: r, TypeIDs: make([]int, len(r))}
	}
	return NewBatch(encs)
}

// TestDebertaMatchesReference checks the logits of texts of different
// lengths in one padded batch, loading either checkpoint format.
func TestDebertaMatchesReference(t *testing.T) {
	exp := loadDebertaExpected(t)
	cfg, err := checkpoint.ReadConfig(filepath.Join(debertaFixture, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var rows [][]int
	var want []float64
	for _, x := range exp.Texts {
		rows = append(rows, x.InputIDs)
		want = append(want, x.Logits...)
	}
	for _, file := range []string{"model.safetensors", "pytorch_model.bin"} {
		t.Run(file, func(t *testing.T) {
			st, err := checkpoint.ReadWeights(filepath.Join(debertaFixture, file))
			if err != nil {
				t.Fatal(err)
			}
			w := st.Weights
			m, rep, err := NewClassifier(cfg, cfg.Labels(), w, 1)
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Initialised)+len(rep.Ignored) > 0 {
				t.Errorf("initialised %v, ignored %v", rep.Initialised, rep.Ignored)
			}
			out, err := m.Infer(idsBatch(rows))
			if err != nil {
				t.Fatal(err)
			}
			if d := maxAbsDiff(out.Logits, want); d > 1e-4 {
				t.Errorf("logits differ by up to %g", d)
			} else {
				t.Logf("%d texts: max |Δlogit| = %.2g", len(rows), d)
			}
		})
	}
}

// TestDebertaBuckets checks make_log_bucket_position against torch's, for
// deberta-v3-base's own shape (256 buckets, 512 positions) at every
// relative position a 512-token input has, and the fixture's.
func TestDebertaBuckets(t *testing.T) {
	exp := loadDebertaExpected(t)
	b := exp.BucketsV3
	bad := 0
	for i, want := range b.Bucket {
		rel := b.Relative[0] + i
		if got := logBucket(rel, b.PositionBuckets, b.MaxPosition); got != want {
			if bad++; bad < 5 {
				t.Errorf("bucket of %d: %d, torch %d", rel, got, want)
			}
		}
	}
	if len(b.Bucket) != 1023 || bad > 0 {
		t.Errorf("%d of %d buckets differ", bad, len(b.Bucket))
	}
	for j, want := range exp.BucketsFixture {
		if got := logBucket(-j, 8, 64); got != want {
			t.Errorf("fixture bucket of %d: %d, torch %d", -j, got, want)
		}
	}
}

// TestDebertaLossesAndGradients runs BeLUGA's MFT (sigmoid BCE), INV and
// DIR losses through the model, back-propagates their sum and compares
// losses and every gradient with PyTorch's.
func TestDebertaLossesAndGradients(t *testing.T) {
	exp := loadDebertaExpected(t)
	fl := &exp.Losses
	m := loadFixtureDeberta(t)
	m.SetDropout(0, 0)
	ev := losses.NewEvaluator()
	var targets []float64
	for _, y := range fl.MFT.SoftLabels {
		targets = append(targets, y...)
	}
	relLoss := func(name string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-5*math.Max(1, math.Abs(want)) {
			t.Errorf("%s loss %.8f, want %.8f", name, got, want)
		}
		t.Logf("%s loss %.8g, reference %.8g: |Δ| %.2g", name, got, want, math.Abs(got-want))
	}
	total := 0.0
	step := func(name string, rows [][]int, loss func(z []float32, rows int) (float64, []float32, error), want float64) {
		pass, err := m.Forward(idsBatch(rows), true)
		if err != nil {
			t.Fatal(err)
		}
		defer pass.Release()
		l, dz, err := loss(pass.Logits(), len(rows))
		if err != nil {
			t.Fatal(err)
		}
		relLoss(name, l, want)
		total += l
		if err := pass.Backward(dz); err != nil {
			t.Fatal(err)
		}
	}
	step("MFT", fl.MFT.InputIDs, func(z []float32, rows int) (float64, []float32, error) {
		ce, _, err := ev.MFT(z, rows, 2, targets, losses.SoftmaxCE)
		if err != nil {
			return 0, nil, err
		}
		relLoss("MFT soft CE", ce, fl.MFT.CE)
		return ev.MFT(z, rows, 2, targets, losses.SigmoidBCE)
	}, fl.MFT.BCE)
	step("INV", append(append([][]int{}, fl.INV.Orig...), fl.INV.Pert...), func(z []float32, rows int) (float64, []float32, error) {
		return ev.INV(z, rows, 2, false)
	}, fl.INV.Loss)
	dirs := make([]losses.Direction, len(fl.DIR.Directions))
	for i, s := range fl.DIR.Directions {
		var err error
		if dirs[i], err = losses.ParseDirection(s); err != nil {
			t.Fatal(err)
		}
	}
	step("DIR", append(append([][]int{}, fl.DIR.Orig...), fl.DIR.Pert...), func(z []float32, rows int) (float64, []float32, error) {
		return ev.DIR(z, rows, dirs)
	}, fl.DIR.Loss)
	relLoss("total", total, fl.Total)

	grads, err := checkpoint.ReadSafetensors(filepath.Join(debertaFixture, "expected_grads.safetensors"))
	if err != nil {
		t.Fatal(err)
	}
	want := grads.Weights
	worst, compared := 0.0, 0
	for _, p := range m.Params() {
		g, ok := want[p.Name]
		if !ok {
			continue
		}
		compared++
		num, den := 0.0, 0.0
		for i, w := range g.Data {
			d := float64(p.Grad[i]) - float64(w)
			num += d * d
			den += float64(w) * float64(w)
		}
		rel := math.Sqrt(num / den)
		worst = math.Max(worst, rel)
		if rel > 1e-5 {
			t.Errorf("%s: gradient differs by %.2g relative (‖g‖ = %.3g)", p.Name, rel, math.Sqrt(den))
		}
	}
	if compared != len(m.Params())-1 {
		t.Errorf("compared %d gradients of %d parameters", compared, len(m.Params()))
	}
	wg := m.Param("deberta.embeddings.word_embeddings.weight")
	var sq float64
	for _, g := range wg.Grad {
		sq += float64(g) * float64(g)
	}
	if n := math.Sqrt(sq); math.Abs(n-fl.WordGrad.Norm) > 1e-5*fl.WordGrad.Norm {
		t.Errorf("word embeddings: gradient norm %.8g, want %.8g", n, fl.WordGrad.Norm)
	}
	h := m.Config.HiddenSize
	for i, id := range fl.WordGrad.IDs {
		row := wg.Grad[id*h : (id+1)*h]
		if d := maxAbsDiff(row, fl.WordGrad.Rows[i]); d > 1e-5*math.Max(1e-3, fl.WordGrad.Norm) {
			t.Errorf("word embedding %d: gradient differs by %g", id, d)
		}
	}
	t.Logf("%d gradients: worst relative difference %.2g", compared+1, worst)
}

// TestDebertaGradientDirectional checks the whole backward pass (with the
// padded, bucketed batch) against central differences.
func TestDebertaGradientDirectional(t *testing.T) {
	m := loadFixtureDeberta(t)
	m.SetDropout(0, 0)
	exp := loadDebertaExpected(t)
	var rows [][]int
	for _, x := range exp.Texts[:6] {
		rows = append(rows, x.InputIDs)
	}
	checkDirectional(t, m, idsBatch(rows), 11, func(orig []float32) float64 { return rmsStep(orig) })
}

// TestRelAttentionGrad checks the disentangled attention's backward pass —
// the c2p and p2c gathers above all — against finite differences in
// float64, with padding, log buckets, clamping and dropout.
func TestRelAttentionGrad(t *testing.T) {
	r := &rng{21}
	batch, seq, heads, d, span := 2, 7, 2, 3, 2
	h := heads * d
	c2p, p2c, _, rows := relativeIndices(seq, span, 4, 16)
	if rows != 2*span {
		t.Fatalf("a 7-token input reaches %d relative rows, want all %d", rows, 2*span)
	}
	q, k, v := randVec(r, batch*seq*h), randVec(r, batch*seq*h), randVec(r, batch*seq*h)
	posQ, posK := randVec(r, rows*h), randVec(r, rows*h)
	mask := []float32{1, 1, 1, 1, 1, 1, 0, 1, 1, 1, 0, 0, 0, 0}
	keep := make([]float64, batch*heads*seq*seq)
	for i := range keep {
		if r.f() > -0.6 {
			keep[i] = 1 / 0.8
		}
	}
	rw := randVec(r, batch*seq*h)
	for _, tc := range []struct {
		name     string
		c2p, p2c []int32
		keep     []float64
	}{
		{"c2p+p2c", c2p, p2c, nil},
		{"c2p+p2c with dropout", c2p, p2c, keep},
		{"c2p only", c2p, nil, nil},
		{"p2c only", nil, p2c, nil},
	} {
		a := relAttention{batch: batch, seq: seq, heads: heads, d: d, rows: rows,
			scale: 1 / math.Sqrt(float64(d*3)), c2p: tc.c2p, p2c: tc.p2c}
		scratch := func(on []int32) []float64 {
			if on == nil {
				return nil
			}
			return make([]float64, a.scratch())
		}
		fwd := func() ([]float64, []float64) {
			ctx, probs := make([]float64, batch*seq*h), make([]float64, batch*heads*seq*seq)
			relAttentionForward(a, ctx, probs, q, k, v, posQ, posK, mask, tc.keep, scratch(tc.c2p), scratch(tc.p2c))
			return ctx, probs
		}
		loss := func() float64 { c, _ := fwd(); return dot(c, rw) }
		_, probs := fwd()
		dq, dk, dv := make([]float64, len(q)), make([]float64, len(k)), make([]float64, len(v))
		dPosQ, dPosK := make([]float64, len(posQ)), make([]float64, len(posK))
		relAttentionBackward(a, dq, dk, dv, dPosQ, dPosK, rw, probs, tc.keep, q, k, v, posQ, posK, scratch(tc.c2p), scratch(tc.p2c))
		checkGrad(t, tc.name+" dq", q, dq, loss)
		checkGrad(t, tc.name+" dk", k, dk, loss)
		checkGrad(t, tc.name+" dv", v, dv, loss)
		if tc.p2c != nil {
			checkGrad(t, tc.name+" dPosQ", posQ, dPosQ, loss)
		}
		if tc.c2p != nil {
			checkGrad(t, tc.name+" dPosK", posK, dPosK, loss)
		}
		// A padding query attends to nothing (XSoftmax zeroes its row).
		for hd := 0; hd < heads; hd++ {
			row := probs[((1*heads+hd)*seq+3)*seq:][:seq]
			for _, pv := range row {
				if pv != 0 {
					t.Fatalf("%s: padding query row has probabilities %v", tc.name, row)
				}
			}
		}
	}
}

// TestSpanDebertaMatchesReference checks DebertaV2ForQuestionAnswering's
// start and end logits at every position, padding included (READ reads
// them all), on the sequence classifier's encoder with the fixture's
// qa_outputs.
func TestSpanDebertaMatchesReference(t *testing.T) {
	exp := loadDebertaExpected(t)
	ck, err := checkpoint.Load(debertaFixture)
	if err != nil {
		t.Fatal(err)
	}
	m, rep, err := NewSpanModel(ck.Config, ck.Weights, 3)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(rep.Initialised, ",") != "qa_outputs.weight,qa_outputs.bias" {
		t.Errorf("initialised %v, want qa_outputs", rep.Initialised)
	}
	if strings.Join(rep.Ignored, ",") != "classifier.bias,classifier.weight,pooler.dense.bias,pooler.dense.weight" {
		t.Errorf("ignored %v, want the pooler and classifier", rep.Ignored)
	}
	for i, row := range exp.QA.Weight {
		copy(m.Param("qa_outputs.weight").Value[i*len(row):], row)
	}
	copy(m.Param("qa_outputs.bias").Value, exp.QA.Bias)
	var rows [][]int
	for _, x := range exp.Texts {
		rows = append(rows, x.InputIDs)
	}
	out, err := m.InferSpans(idsBatch(rows))
	if err != nil {
		t.Fatal(err)
	}
	var ws, we []float64
	for i := range rows {
		ws = append(ws, exp.QA.Start[i]...)
		we = append(we, exp.QA.End[i]...)
	}
	if len(ws) != len(out.Start) {
		t.Fatalf("%d start logits, want %d", len(out.Start), len(ws))
	}
	ds, de := maxAbsDiff(out.Start, ws), maxAbsDiff(out.End, we)
	if ds > 1e-4 || de > 1e-4 {
		t.Errorf("start logits differ by up to %g, end logits by %g", ds, de)
	}
	t.Logf("%d×%d positions: max |Δstart| %.2g, |Δend| %.2g", out.Size, out.SeqLen, ds, de)
	// The span head's backward pass, on a freshly initialised model (the
	// fixture's large weights are too curved for float32 differences).
	fresh, _, err := NewSpanModel(ck.Config, nil, 5)
	if err != nil {
		t.Fatal(err)
	}
	fresh.SetDropout(0, 0)
	checkDirectional(t, fresh, idsBatch(rows[:4]), 5, rmsStep)
}

// TestDebertaSaveLoad round-trips a classifier and a span model through
// Save and the loaders, and checks an encoder-only checkpoint initialises
// the pooler and classifier and says so.
func TestDebertaSaveLoad(t *testing.T) {
	m := loadFixtureDeberta(t)
	dir := t.TempDir()
	if err := m.Save(filepath.Join(dir, "cls"), ""); err != nil {
		t.Fatal(err)
	}
	back, rep, _, err := Load(filepath.Join(dir, "cls"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Initialised)+len(rep.Ignored) > 0 {
		t.Errorf("reload: initialised %v, ignored %v", rep.Initialised, rep.Ignored)
	}
	b := idsBatch([][]int{{1, 50, 60, 2}, {1, 7, 2}})
	o1, _ := m.Infer(b)
	o2, err := back.Infer(b)
	if err != nil || maxAbsDiff(o1.Logits, float64s(o2.Logits)) != 0 {
		t.Errorf("reloaded logits %v, want %v (%v)", o2.Logits, o1.Logits, err)
	}
	span, _, err := NewSpanModel(&m.Config, m.Weights(), 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := span.Save(filepath.Join(dir, "qa"), ""); err != nil {
		t.Fatal(err)
	}
	ck, err := checkpoint.Load(filepath.Join(dir, "qa"))
	if err != nil {
		t.Fatal(err)
	}
	if a := ck.Config.Architectures; len(a) != 1 || a[0] != "DebertaV2ForQuestionAnswering" {
		t.Errorf("span model saved as %v", a)
	}
	if _, rep, err := NewSpanModel(ck.Config, ck.Weights, 0); err != nil || len(rep.Initialised)+len(rep.Ignored) > 0 {
		t.Errorf("span reload: %v, initialised %v, ignored %v", err, rep.Initialised, rep.Ignored)
	}
	if dc, err := ParseDebertaConfig(ck.Config); err != nil || dc.TypeVocabSize != 0 || dc.PositionBuckets != 8 || !dc.hasPos("p2c") {
		t.Errorf("reloaded config lost DeBERTa's fields: %+v, %v", dc, err)
	}
	enc := checkpoint.Tensors{}
	for name, w := range m.Weights() {
		if strings.HasPrefix(name, "deberta.") {
			enc[name] = w
		}
	}
	enc["lm_predictions.lm_head.bias"] = &checkpoint.Tensor{Shape: []int{4}, Data: make([]float32, 4)}
	fresh, rep, err := NewClassifier(&m.Config, 3, enc, 9)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(rep.Initialised, ",") != "pooler.dense.weight,pooler.dense.bias,classifier.weight,classifier.bias" ||
		strings.Join(rep.Ignored, ",") != "lm_predictions.lm_head.bias" {
		t.Errorf("encoder-only load: initialised %v, ignored %v", rep.Initialised, rep.Ignored)
	}
	if fresh.NumLabels() != 3 || fresh.Param("classifier.bias").Value[0] != 0 {
		t.Errorf("fresh head: %d labels, bias %v", fresh.NumLabels(), fresh.Param("classifier.bias").Value)
	}
}

// TestDebertaConfig checks the config keys as the hub's deberta-v3-base
// writes them, the list form of pos_att_type, HF's defaults, and the
// refusals, each naming its field.
func TestDebertaConfig(t *testing.T) {
	base := func(extra string) *checkpoint.Config {
		dir := t.TempDir()
		js := `{"model_type": "deberta-v2", "hidden_size": 32, "num_hidden_layers": 1, "num_attention_heads": 2,
			"intermediate_size": 16, "max_position_embeddings": 64, "vocab_size": 10` + extra + `}`
		if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(js), 0o644); err != nil {
			t.Fatal(err)
		}
		c, err := checkpoint.ReadConfig(filepath.Join(dir, "config.json"))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	v3 := `, "relative_attention": true, "position_buckets": 256, "norm_rel_ebd": "layer_norm", "share_att_key": true,
		"pos_att_type": "p2c|c2p", "layer_norm_eps": 1e-7, "max_relative_positions": -1, "position_biased_input": false, "type_vocab_size": 0`
	c, err := ParseDebertaConfig(base(v3))
	if err != nil {
		t.Fatal(err)
	}
	if !c.RelativeAttention || c.span() != 256 || c.maxRelative() != 64 || !c.NormRelEmbedding || c.scaleFactor() != 3 ||
		c.PositionBiasedInput || c.TypeVocabSize != 0 || c.LayerNormEps != 1e-7 || c.PoolerHiddenAct != "gelu" {
		t.Errorf("v3 config parsed as %+v", c)
	}
	c, err = ParseDebertaConfig(base(`, "pos_att_type": ["c2p"]`))
	if err != nil {
		t.Fatal(err)
	}
	// DebertaV2Config's defaults: no token types, eps 1e-7, absolute positions.
	if !c.hasPos("c2p") || c.hasPos("p2c") || c.TypeVocabSize != 0 || c.LayerNormEps != 1e-7 || !c.PositionBiasedInput {
		t.Errorf("defaults parsed as %+v", c)
	}
	// Whole numbers written with an exponent or a fraction are read as
	// BERT's keys are (checkpoint.UnmarshalField).
	c, err = ParseDebertaConfig(base(`, "position_buckets": 2.56e2, "max_relative_positions": 1e9`))
	if err != nil {
		t.Errorf("position_buckets 2.56e2, max_relative_positions 1e9: %v", err)
	} else if c.PositionBuckets != 256 || c.MaxRelative != 1000000000 {
		t.Errorf("position_buckets 2.56e2, max_relative_positions 1e9 parsed as %d, %d", c.PositionBuckets, c.MaxRelative)
	}
	for _, tc := range []struct{ extra, field string }{
		{`, "position_buckets": 25.6`, `field "position_buckets": number 25.6, want a whole number`},
		{`, "conv_kernel_size": 3`, "conv_kernel_size"},
		{`, "relative_attention": true, "pos_att_type": "c2p", "share_att_key": false`, "share_att_key"},
		{`, "pos_att_type": "p2p|c2p"`, "pos_att_type"},
		{`, "pos_att_type": 3`, "pos_att_type"},
		{`, "norm_rel_ebd": "batch_norm"`, "norm_rel_ebd"},
		{`, "pooler_hidden_act": "relu"`, "pooler_hidden_act"},
		{`, "attention_head_size": 4`, "attention_head_size"},
	} {
		if _, err := ParseDebertaConfig(base(tc.extra)); err == nil || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("%s: error %v, want one naming %s", tc.extra, err, tc.field)
		}
	}
}

// TestDebertaVariants runs the options deberta-v3-base does not use —
// absolute positions, token types, an embedding projection, no relative
// attention, unnormalised relative embeddings, a tanh pooler — through the
// directional gradient check.
func TestDebertaVariants(t *testing.T) {
	for _, extra := range []string{
		`, "position_biased_input": true, "type_vocab_size": 2, "embedding_size": 8, "pooler_hidden_act": "tanh"`,
		`, "relative_attention": true, "pos_att_type": "c2p", "share_att_key": true, "position_buckets": -1, "max_relative_positions": 4, "norm_rel_ebd": "none"`,
	} {
		t.Run(extra, func(t *testing.T) {
			js := `{"model_type": "deberta-v2", "hidden_size": 8, "num_hidden_layers": 2, "num_attention_heads": 2,
				"intermediate_size": 12, "max_position_embeddings": 16, "vocab_size": 20, "initializer_range": 0.5` + extra + `}`
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "config.json"), []byte(js), 0o644)
			cfg, err := checkpoint.ReadConfig(filepath.Join(dir, "config.json"))
			if err != nil {
				t.Fatal(err)
			}
			m, _, err := NewClassifier(cfg, 2, nil, 4)
			if err != nil {
				t.Fatal(err)
			}
			m.SetDropout(0, 0)
			b := NewBatch([]Encoding{{IDs: []int{1, 5, 9, 13, 2, 7, 2}, TypeIDs: []int{0, 0, 0, 0, 0, 1, 1}}, {IDs: []int{1, 4, 2}, TypeIDs: []int{0, 0, 0}}})
			checkDirectional(t, m, b, 3, func(orig []float32) float64 { return rmsStep(orig) })
		})
	}
}

// TestDebertaFrozenEncoder checks linear probing: BeLUGA freezes HF's base
// model (model.deberta), so only the head — ContextPooler's pooler.dense and
// the classifier — learns, and HeadForward on Output.Pooled (the first
// token's state) gives Forward's logits.
func TestDebertaFrozenEncoder(t *testing.T) {
	m := loadFixtureDeberta(t)
	m.SetDropout(0, 0)
	m.SetFrozenEncoder(true)
	b := idsBatch([][]int{{1, 50, 60, 2}, {1, 7, 2}})
	pass, err := m.Forward(b, true)
	if err != nil {
		t.Fatal(err)
	}
	if err := pass.Backward([]float32{1, -1, 0.5, 2}); err != nil {
		t.Fatal(err)
	}
	for _, p := range m.Params() {
		nonzero := false
		for _, g := range p.Grad {
			nonzero = nonzero || g != 0
		}
		if p.Encoder == nonzero {
			t.Errorf("%s (encoder %v): gradient %v", p.Name, p.Encoder, nonzero)
		}
	}
	out, _ := m.Infer(b)
	hp, err := m.HeadForward(out.Pooled, 2, false)
	if err != nil {
		t.Fatal(err)
	}
	if d := maxAbsDiff(hp.Logits(), float64s(out.Logits)); d > 1e-6 {
		t.Errorf("head on pooled features differs by %g", d)
	}
}

func BenchmarkDebertaTrainStep(b *testing.B) {
	m := loadFixtureDeberta(b)
	r := &rng{3}
	rows := make([][]int, 32)
	for i := range rows {
		rows[i] = make([]int, 64)
		for j := range rows[i] {
			rows[i][j] = 3 + int((r.f()+1)*100)
		}
		rows[i][0], rows[i][63] = 1, 2
	}
	batch := idsBatch(rows)
	dl := make([]float32, 64)
	for i := range dl {
		dl[i] = float32(r.f())
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p, err := m.Forward(batch, true)
		if err != nil {
			b.Fatal(err)
		}
		if err := p.Backward(dl); err != nil {
			b.Fatal(err)
		}
		p.Release()
	}
}
