package prompt

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/beluga-nlp/beluga/internal/gguf"
	"github.com/beluga-nlp/beluga/models"
	"github.com/beluga-nlp/beluga/models/checkpoint"
)

// llamaTolerance bounds |log P(option) in process − log P(option) by
// llama-server| per option, in nats: the two run the same F32 weights,
// with an F32 key/value cache (-ctk/-ctv f32), in different kernels and
// summation orders (ggml's CPU backend; beluga's Go kernels). Measured:
// 1.3e-6 at most; llama-server's default F16 cache differs by up to 8.4e-4.
const llamaTolerance = 1e-5

const llamaFixture = "../models/testdata/decoders/llama"

// toGGUF converts the tiny random Llama checkpoint the decoder tests use
// (LlamaForCausalLM as transformers wrote it) to a GGUF file: the
// architecture's metadata, the GPT-2 fixture's byte-level vocabulary (the
// test sends token ids, so the tokenizer only has to load), and the
// tensors under llama.cpp's names, q and k projections reordered from
// HuggingFace's rotary layout (each head's first half, then its second)
// to the pairwise layout llama.cpp rotates.
func toGGUF(t *testing.T, path string) *checkpoint.Checkpoint {
	t.Helper()
	ck, err := checkpoint.LoadDir(llamaFixture)
	if err != nil {
		t.Fatal(err)
	}
	c := ck.Config
	cb, err := os.ReadFile(filepath.Join(llamaFixture, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	var lc struct {
		KVHeads int     `json:"num_key_value_heads"`
		Eps     float64 `json:"rms_norm_eps"`
		Theta   float64 `json:"rope_theta"`
	}
	if err := json.Unmarshal(cb, &lc); err != nil {
		t.Fatal(err)
	}
	heads, kvHeads := c.NumAttentionHeads, lc.KVHeads
	hd := c.HiddenSize / heads
	b, err := os.ReadFile("../models/testdata/decoders/gpt2/vocab.json")
	if err != nil {
		t.Fatal(err)
	}
	var vocab map[string]int
	if err := json.Unmarshal(b, &vocab); err != nil {
		t.Fatal(err)
	}
	tokens := make([]string, c.VocabSize)
	for tok, id := range vocab {
		tokens[id] = tok
	}
	types := make([]int32, len(tokens))
	for i := range types {
		types[i] = 1 // normal
	}
	mb, err := os.ReadFile("../models/testdata/decoders/gpt2/merges.txt")
	if err != nil {
		t.Fatal(err)
	}
	var merges []string
	for _, l := range strings.Split(strings.TrimSpace(string(mb)), "\n") {
		if !strings.HasPrefix(l, "#") {
			merges = append(merges, l)
		}
	}
	kvs := []gguf.KV{
		{Key: "general.architecture", Value: "llama"},
		{Key: "general.name", Value: "beluga tiny random llama"},
		{Key: "general.file_type", Value: uint32(0)},
		{Key: "llama.context_length", Value: uint32(c.MaxPositionEmbeddings)},
		{Key: "llama.embedding_length", Value: uint32(c.HiddenSize)},
		{Key: "llama.block_count", Value: uint32(c.NumHiddenLayers)},
		{Key: "llama.feed_forward_length", Value: uint32(c.IntermediateSize)},
		{Key: "llama.attention.head_count", Value: uint32(heads)},
		{Key: "llama.attention.head_count_kv", Value: uint32(kvHeads)},
		{Key: "llama.rope.freq_base", Value: float32(lc.Theta)},
		{Key: "llama.rope.dimension_count", Value: uint32(hd)},
		{Key: "llama.attention.layer_norm_rms_epsilon", Value: float32(lc.Eps)},
		{Key: "llama.vocab_size", Value: uint32(c.VocabSize)},
		{Key: "tokenizer.ggml.model", Value: "gpt2"},
		{Key: "tokenizer.ggml.pre", Value: "default"},
		{Key: "tokenizer.ggml.tokens", Value: tokens},
		{Key: "tokenizer.ggml.token_type", Value: types},
		{Key: "tokenizer.ggml.merges", Value: merges},
		{Key: "tokenizer.ggml.bos_token_id", Value: uint32(0)},
		{Key: "tokenizer.ggml.eos_token_id", Value: uint32(c.VocabSize - 1)},
		{Key: "tokenizer.ggml.add_bos_token", Value: false},
	}
	w := ck.Weights
	get := func(name string) *checkpoint.Tensor {
		x := w[name]
		if x == nil {
			t.Fatalf("%s: no tensor %s", llamaFixture, name)
		}
		return x
	}
	// rope reorders the rows of a q or k projection: within each head,
	// row a·half+b moves to b·2+a.
	rope := func(x *checkpoint.Tensor, nh int) []float32 {
		rows, cols := x.Shape[0], x.Shape[1]
		half := rows / nh / 2
		out := make([]float32, len(x.Data))
		for h := range nh {
			for a := range 2 {
				for b := range half {
					src, dst := h*2*half+a*half+b, h*2*half+b*2+a
					copy(out[dst*cols:(dst+1)*cols], x.Data[src*cols:(src+1)*cols])
				}
			}
		}
		return out
	}
	var ts []gguf.Tensor
	add := func(name string, x *checkpoint.Tensor, data []float32) {
		if data == nil {
			data = x.Data
		}
		ts = append(ts, gguf.Tensor{Name: name, Shape: x.Shape, Data: data})
	}
	add("token_embd.weight", get("model.embed_tokens.weight"), nil)
	for l := range c.NumHiddenLayers {
		p := fmt.Sprintf("model.layers.%d.", l)
		g := fmt.Sprintf("blk.%d.", l)
		add(g+"attn_norm.weight", get(p+"input_layernorm.weight"), nil)
		add(g+"attn_q.weight", get(p+"self_attn.q_proj.weight"), rope(get(p+"self_attn.q_proj.weight"), heads))
		add(g+"attn_k.weight", get(p+"self_attn.k_proj.weight"), rope(get(p+"self_attn.k_proj.weight"), kvHeads))
		add(g+"attn_v.weight", get(p+"self_attn.v_proj.weight"), nil)
		add(g+"attn_output.weight", get(p+"self_attn.o_proj.weight"), nil)
		add(g+"ffn_norm.weight", get(p+"post_attention_layernorm.weight"), nil)
		add(g+"ffn_gate.weight", get(p+"mlp.gate_proj.weight"), nil)
		add(g+"ffn_up.weight", get(p+"mlp.up_proj.weight"), nil)
		add(g+"ffn_down.weight", get(p+"mlp.down_proj.weight"), nil)
	}
	add("output_norm.weight", get("model.norm.weight"), nil)
	add("output.weight", get("lm_head.weight"), nil)
	if err := gguf.WriteFile(path, kvs, ts); err != nil {
		t.Fatal(err)
	}
	return ck
}

// startLlamaServer starts llama-server on loopback with the model and
// returns its URL once /health answers.
func startLlamaServer(t *testing.T, bin, model string, ctxLen int) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "-m", model, "--host", "127.0.0.1", "--port", fmt.Sprint(port), "-c", fmt.Sprint(ctxLen), "-np", "1", "-t", "1", "-ctk", "f32", "-ctv", "f32")
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() { cancel(); <-exited })
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		resp, err := http.Get(url + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return url
			}
		}
		select {
		case <-exited:
			t.Fatalf("llama-server exited:\n%s", log.String())
		default:
		}
	}
	t.Fatalf("llama-server did not become ready:\n%s", log.String())
	return ""
}

// nextLogProbs asks llama-server for the next token's log-probability of
// every vocabulary entry after ids (/v1/completions, the prompt as token
// ids, logprobs = the vocabulary's size).
func nextLogProbs(t *testing.T, url string, ids []int, vocab int) map[int]float64 {
	t.Helper()
	// The token sampled must be a whole UTF-8 character, or the server
	// holds it (and its log-probabilities) back: a logit bias makes it
	// "a" (id 64), and leaves the log-probabilities reported alone, which
	// are the model's own softmax (post_sampling_probs false).
	body, _ := json.Marshal(map[string]any{"prompt": ids, "max_tokens": 1, "logprobs": vocab, "n_probs": vocab, "temperature": 0,
		"cache_prompt": false, "logit_bias": [][]float64{{64, 1000}}})
	resp, err := http.Post(url+"/v1/completions", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		Choices []struct {
			Logprobs struct {
				Content []struct {
					TopLogprobs []struct {
						ID      int     `json:"id"`
						Logprob float64 `json:"logprob"`
					} `json:"top_logprobs"`
				} `json:"content"`
			} `json:"logprobs"`
		} `json:"choices"`
	}
	raw := new(bytes.Buffer)
	raw.ReadFrom(bufio.NewReader(resp.Body))
	if err := json.Unmarshal(raw.Bytes(), &out); err != nil || len(out.Choices) == 0 || len(out.Choices[0].Logprobs.Content) == 0 {
		t.Fatalf("llama-server answered %s: %s", resp.Status, raw.String())
	}
	m := map[int]float64{}
	for _, p := range out.Choices[0].Logprobs.Content[0].TopLogprobs {
		m[p.ID] = p.Logprob
	}
	return m
}

// TestLlamaServerAgrees is the cross-check of two independent
// implementations: llama.cpp's llama-server serves the tiny random Llama
// checkpoint converted to GGUF by this package's writer, beluga scores the
// same weights in process, and every label verbalizer's log-likelihood of
// a small suite of prompts (a shared prefix, an input, two multi-token
// options) agrees within llamaTolerance. It needs the server binary:
// BELUGA_LLAMA_SERVER=/path/to/llama-server go test ./prompt -run LlamaServer -v
func TestLlamaServerAgrees(t *testing.T) {
	bin := os.Getenv("BELUGA_LLAMA_SERVER")
	if bin == "" {
		t.Skip("set BELUGA_LLAMA_SERVER to a llama.cpp llama-server binary to cross-check the in-process Llama against it")
	}
	path := filepath.Join(t.TempDir(), "tiny-llama-f32.gguf")
	ck := toGGUF(t, path)
	lm, _, err := models.NewCausalLM(ck.Config, ck.Weights, 1)
	if err != nil {
		t.Fatal(err)
	}
	url := startLlamaServer(t, bin, path, ck.Config.MaxPositionEmbeddings)
	V := ck.Config.VocabSize
	prefix := []int{0, 71, 72, 73, 17, 5}
	items := []models.ScoreItem{
		{Context: []int{80, 81, 82, 30}, Options: [][]int{{200, 201}, {150}}},
		{Context: []int{90, 12, 250}, Options: [][]int{{200, 201}, {150}}},
		{Context: []int{3}, Options: [][]int{{355, 7, 9}, {40, 41}}},
		{Context: []int{300, 301, 302, 303, 304, 305, 306, 307}, Options: [][]int{{1}, {2}, {356}}},
	}
	local, _, err := lm.Score(prefix, items, models.ScoreOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var worst float64
	var lines []string
	for i, it := range items {
		for k, opt := range it.Options {
			seq := append(append([]int{}, prefix...), it.Context...)
			var remote float64
			for _, tok := range opt {
				lp := nextLogProbs(t, url, seq, V)
				v, ok := lp[tok]
				if !ok {
					t.Fatalf("item %d option %d: token %d not among llama-server's %d log-probabilities", i, k, tok, len(lp))
				}
				remote += v
				seq = append(seq, tok)
			}
			d := math.Abs(remote - local[i][k])
			worst = max(worst, d)
			lines = append(lines, fmt.Sprintf("item %d option %d: in process %.6f, llama-server %.6f, |diff| %.2e", i, k, local[i][k], remote, d))
			if d > llamaTolerance || math.IsNaN(d) {
				t.Errorf("item %d option %d: log-likelihood %.6f in process, %.6f from llama-server (|diff| %.2e > %g)", i, k, local[i][k], remote, d, llamaTolerance)
			}
		}
	}
	sort.Strings(lines)
	for _, l := range lines {
		t.Log(l)
	}
	t.Logf("largest |diff| %.2e nats over %d options (tolerance %g)", worst, len(lines), llamaTolerance)
}
