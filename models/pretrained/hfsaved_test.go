package pretrained

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/models"
	"github.com/beluga-nlp/beluga/models/checkpoint"
	"github.com/beluga-nlp/beluga/models/predict"
)

// hfSaved is ../testdata/hfsaved: checkpoints written by HuggingFace
// transformers 4.27.1's own save_pretrained (gen.py there).
const hfSaved = "../testdata/hfsaved"

// hfSavedFamilies are the five families whose checkpoints transformers'
// save_pretrained wrote; hfSavedVariants the same bert weights in the other
// layouts (expected: bert's), and in half and bfloat16 (their own
// expected.json).
var (
	hfSavedFamilies = []string{"bert", "electra", "roberta", "distilbert", "deberta-v2"}
	hfSavedVariants = map[string]string{"bert-sharded-bin": "bert", "bert-sharded-safetensors": "bert",
		"bert-legacy": "bert", "bert-fp16": "bert-fp16", "bert-bf16": "bert-bf16"}
)

// hfExpected is an hfsaved expected.json.
type hfExpected struct {
	Transformers string      `json:"transformers_version"`
	InputIDs     [][]int     `json:"input_ids"`
	TypeIDs      [][]int     `json:"token_type_ids"`
	Singles      int         `json:"singles"`
	Logits       [][]float64 `json:"logits"`
	F32vsF64     float64     `json:"float32_vs_float64"`
}

func readHFExpected(t *testing.T, dir string) hfExpected {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(hfSaved, dir, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var e hfExpected
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatal(err)
	}
	if len(e.InputIDs) != len(e.Logits) || e.Singles < 50 {
		t.Fatalf("expected.json: %d rows of ids, %d of logits, %d single texts", len(e.InputIDs), len(e.Logits), e.Singles)
	}
	return e
}

// idTokenizer encodes the text "i" as row i of transformers' ids, so that
// predict batches them its own way (by length, padded otherwise than
// transformers' batches of 16).
type idTokenizer struct{ e hfExpected }

func (tk idTokenizer) Encode(text, _ string, _ bool) (models.Encoding, error) {
	i, err := strconv.Atoi(text)
	if err != nil || i < 0 || i >= len(tk.e.InputIDs) {
		return models.Encoding{}, fmt.Errorf("no row %q", text)
	}
	enc := models.Encoding{IDs: tk.e.InputIDs[i], TypeIDs: make([]int, len(tk.e.InputIDs[i]))}
	if tk.e.TypeIDs != nil {
		copy(enc.TypeIDs, tk.e.TypeIDs[i])
	}
	return enc, nil
}

// hfSavedLogits loads dir and predicts transformers' ids of every row with
// batches of batch rows.
func hfSavedLogits(t *testing.T, dir string, e hfExpected, batch int) ([][]float32, *Model) {
	t.Helper()
	m, err := Load(context.Background(), filepath.Join(hfSaved, dir), Options{})
	if err != nil {
		t.Fatal(err)
	}
	inputs := make([]predict.Input, len(e.InputIDs))
	for i := range inputs {
		inputs[i].Text = strconv.Itoa(i)
	}
	outs, err := predict.Run(m.Classifier, idTokenizer{e}, inputs, batch)
	if err != nil {
		t.Fatal(err)
	}
	logits := make([][]float32, len(outs))
	for i, o := range outs {
		logits[i] = o.Logits
	}
	return logits, m
}

func maxDiff(t *testing.T, got [][]float32, want [][]float64) float64 {
	t.Helper()
	worst := 0.0
	for i := range want {
		if len(got[i]) != len(want[i]) {
			t.Fatalf("row %d: %d logits, want %d", i, len(got[i]), len(want[i]))
		}
		for j := range want[i] {
			worst = math.Max(worst, math.Abs(float64(got[i][j])-want[i][j]))
		}
	}
	return worst
}

// TestHFSavedCheckpoints: for each of the five families, the checkpoint
// transformers' save_pretrained wrote — pytorch_model.bin a plain dict, with
// the position_ids buffer (none in DistilBERT's) — loads with every tensor
// used, the buffer checked and nothing initialised, and its logits equal
// transformers' within 1e-4 on transformers' ids of 64 SST-2 sentences and
// 8 pairs, batched and padded otherwise than transformers batched them.
func TestHFSavedCheckpoints(t *testing.T) {
	for _, family := range hfSavedFamilies {
		t.Run(family, func(t *testing.T) {
			e := readHFExpected(t, family)
			logits, m := hfSavedLogits(t, family, e, 7)
			rep := m.Report
			if len(rep.Ignored)+len(rep.Initialised) > 0 {
				t.Errorf("load report %+v, want every tensor used and none initialised", rep)
			}
			wantChecked := []string{}
			if family != "distilbert" {
				prefix := map[string]string{"roberta": "roberta", "deberta-v2": "deberta"}[family]
				if prefix == "" {
					prefix = family
				}
				wantChecked = []string{prefix + ".embeddings.position_ids"}
			}
			if !slices.Equal(append([]string{}, rep.Checked...), wantChecked) {
				t.Errorf("checked buffers %v, want %v", rep.Checked, wantChecked)
			}
			d := maxDiff(t, logits, e.Logits)
			t.Logf("%s (transformers %s): max |logit − HF| = %.2g over %d rows (HF's own float32 vs float64: %.2g)", family, e.Transformers, d, len(logits), e.F32vsF64)
			if d > 1e-4 {
				t.Errorf("max logit difference %.3g from transformers', want ≤ 1e-4", d)
			}
		})
	}
}

// TestHFSavedLayouts: the bert checkpoint saved sharded (pytorch_model.bin
// and safetensors shards with their index files) and in torch's pre-1.6
// format loads to exactly the logits of the unsharded one; saved in half
// and bfloat16 it gives transformers' logits of the weights as rounded.
func TestHFSavedLayouts(t *testing.T) {
	base, _ := hfSavedLogits(t, "bert", readHFExpected(t, "bert"), 7)
	for dir, expected := range hfSavedVariants {
		t.Run(dir, func(t *testing.T) {
			e := readHFExpected(t, expected)
			logits, m := hfSavedLogits(t, dir, e, 7)
			if len(m.Report.Ignored)+len(m.Report.Initialised) > 0 || len(m.Report.Checked) != 1 {
				t.Errorf("load report %+v, want every tensor used, none initialised, position_ids checked", m.Report)
			}
			d := maxDiff(t, logits, e.Logits)
			t.Logf("%s: max |logit − HF| = %.2g", dir, d)
			if d > 1e-4 {
				t.Errorf("max logit difference %.3g from transformers', want ≤ 1e-4", d)
			}
			if expected != "bert" {
				return
			}
			for i := range base {
				if !slices.Equal(logits[i], base[i]) {
					t.Fatalf("row %d: %v, the unsharded checkpoint gives %v", i, logits[i], base[i])
				}
			}
		})
	}
}

// TestHFSavedBufferChecked: a position_ids buffer that is not 0, 1, 2, … is
// refused with its name and the first difference; a buffer no family has is
// reported as ignored.
func TestHFSavedBufferChecked(t *testing.T) {
	src := filepath.Join(hfSaved, "bert")
	dir := t.TempDir()
	for _, name := range []string{"config.json", "vocab.txt", "tokenizer_config.json"} {
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, name), b, 0o644)
	}
	st, err := readWeightsFile(filepath.Join(src, "pytorch_model.bin"))
	if err != nil {
		t.Fatal(err)
	}
	st.Buffers["bert.embeddings.position_ids"].Data[3] = 7
	writeState(t, dir, st)
	_, err = Load(context.Background(), dir, Options{})
	if err == nil || !strings.Contains(err.Error(), "bert.embeddings.position_ids holds 7 at index 3 where the model computes 3") {
		t.Errorf("error %v, want the buffer and its first difference named", err)
	}
	st.Buffers["bert.embeddings.position_ids"].Data[3] = 3
	st.Buffers["bert.embeddings.attention_mask_cache"] = st.Buffers["bert.embeddings.position_ids"]
	// token_type_ids, as transformers saved it with torch < 1.6 (no
	// persistent=False): zeros, checked; anything else refused.
	pos := st.Buffers["bert.embeddings.position_ids"]
	types := &checkpoint.Buffer{Shape: pos.Shape, DType: "I64", Data: make([]int64, len(pos.Data))}
	st.Buffers["bert.embeddings.token_type_ids"] = types
	writeState(t, dir, st)
	m, err := Load(context.Background(), dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(m.Report.Ignored, []string{"bert.embeddings.attention_mask_cache"}) {
		t.Errorf("ignored %v, want the unknown buffer", m.Report.Ignored)
	}
	if want := []string{"bert.embeddings.position_ids", "bert.embeddings.token_type_ids"}; !slices.Equal(m.Report.Checked, want) {
		t.Errorf("checked %v, want %v", m.Report.Checked, want)
	}
	types.Data[5] = 1
	writeState(t, dir, st)
	_, err = Load(context.Background(), dir, Options{})
	if err == nil || !strings.Contains(err.Error(), "bert.embeddings.token_type_ids holds 1 at index 5 where the model computes 0") {
		t.Errorf("error %v, want the token_type_ids buffer and its first difference named", err)
	}
}

func readWeightsFile(path string) (*checkpoint.State, error) { return checkpoint.ReadWeights(path) }

// writeState writes st as dir/model.safetensors, buffers as I64.
func writeState(t *testing.T, dir string, st *checkpoint.State) {
	t.Helper()
	type entry struct {
		DType   string `json:"dtype"`
		Shape   []int  `json:"shape"`
		Offsets [2]int `json:"data_offsets"`
	}
	header := map[string]entry{}
	var data []byte
	for _, n := range st.Weights.Names() {
		w := st.Weights[n]
		header[n] = entry{"F32", w.Shape, [2]int{len(data), len(data) + 4*len(w.Data)}}
		for _, v := range w.Data {
			data = binary.LittleEndian.AppendUint32(data, math.Float32bits(v))
		}
	}
	for n, b := range st.Buffers {
		header[n] = entry{"I64", b.Shape, [2]int{len(data), len(data) + 8*len(b.Data)}}
		for _, v := range b.Data {
			data = binary.LittleEndian.AppendUint64(data, uint64(v))
		}
	}
	h, err := json.Marshal(header)
	if err != nil {
		t.Fatal(err)
	}
	out := binary.LittleEndian.AppendUint64(nil, uint64(len(h)))
	out = append(append(out, h...), data...)
	if err := os.WriteFile(filepath.Join(dir, "model.safetensors"), out, 0o644); err != nil {
		t.Fatal(err)
	}
}
