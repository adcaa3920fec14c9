package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/internal/fixture"
)

// hubCacheCopy lays src's files out in a hub cache as huggingface_hub does:
// blobs named by content hash, relative links from the snapshot, refs/main.
// It copies the named files, or when none are named those of a checkpoint
// that src has.
func hubCacheCopy(t *testing.T, cache, repo, commit, src string, files ...string) {
	t.Helper()
	if len(files) == 0 {
		files = []string{"config.json", "model.safetensors", "pytorch_model.bin", "tokenizer.json", "tokenizer_config.json", "vocab.txt"}
	}
	repoDir := filepath.Join(cache, "models--"+strings.ReplaceAll(repo, "/", "--"))
	snap := filepath.Join(repoDir, "snapshots", commit)
	os.MkdirAll(filepath.Join(repoDir, "blobs"), 0o755)
	os.MkdirAll(snap, 0o755)
	os.MkdirAll(filepath.Join(repoDir, "refs"), 0o755)
	for _, name := range files {
		b, err := os.ReadFile(filepath.Join(src, name))
		if os.IsNotExist(err) {
			continue // a model without this file (a tokenizer given by vocab.txt alone)
		}
		if err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		etag := hex.EncodeToString(sum[:])
		if err := os.WriteFile(filepath.Join(repoDir, "blobs", etag), b, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join("..", "..", "blobs", etag), filepath.Join(snap, name)); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(repoDir, "refs", "main"), []byte(commit), 0o644)
}

func TestPredictByHubIDOffline(t *testing.T) {
	src := fixture.Dir(t)
	exp := fixture.Load(t)
	dir := t.TempDir()
	env := offlineHub(t, "acme/bert-fixture", src)
	var inputs []predictInput
	for _, x := range exp.Texts[:6] {
		inputs = append(inputs, predictInput{Text: x.Text})
	}
	for _, p := range exp.Pairs[:3] {
		inputs = append(inputs, predictInput{Text: p.A, TextPair: &p.B})
	}
	in := writeInputs(t, filepath.Join(dir, "in.jsonl"), inputs)

	direct := filepath.Join(dir, "direct.jsonl")
	if code, msg := belugaEnv(t, env, "predict", "--model", src, "--input", in, "-o", direct); code != 0 {
		t.Fatalf("predict from the folder failed (%d): %s", code, msg)
	}
	for _, ref := range []string{"acme/bert-fixture", "acme/bert-fixture@main", "acme/bert-fixture@" + hubCommit} {
		byID := filepath.Join(dir, "hub.jsonl")
		code, msg := belugaEnv(t, env, "predict", "--model", ref, "--input", in, "-o", byID)
		if code != 0 {
			t.Fatalf("predict --model %s failed (%d): %s", ref, code, msg)
		}
		a, _ := os.ReadFile(direct)
		b, _ := os.ReadFile(byID)
		if len(a) == 0 || !bytes.Equal(a, b) {
			t.Errorf("--model %s: predictions differ from the folder's", ref)
		}
	}
	code, msg := belugaEnv(t, env, "predict", "--model", "acme/not-downloaded", "--input", in, "-o", filepath.Join(dir, "x.jsonl"))
	if code == 0 || !strings.Contains(msg, "HF_HUB_OFFLINE") {
		t.Errorf("an uncached model offline: exit %d, %s", code, msg)
	}
	if _, err := os.Stat(filepath.Join(dir, "x.jsonl")); err == nil {
		t.Error("a failed predict wrote its output")
	}
}

// TestPredictFamiliesByHubID: a model of each family, named by hub id and
// read from an HF cache offline, predicts the logits HuggingFace's graph
// gives (models/testdata/families: the checkpoints gen.py writes, with
// WordPiece vocabularies whose ids its inputs use).
func TestPredictFamiliesByHubID(t *testing.T) {
	for _, family := range []string{"bert", "electra", "roberta", "xlm-roberta", "distilbert"} {
		t.Run(family, func(t *testing.T) {
			src := filepath.Join("..", "..", "models", "testdata", "families", family)
			var exp struct {
				Logits [][]float64
				Losses struct {
					MFT struct{ Texts []string }
					DIR struct{ Orig [][2]*string }
				}
			}
			if err := json.Unmarshal(readFile(t, filepath.Join(src, "expected.json")), &exp); err != nil {
				t.Fatal(err)
			}
			pair := exp.Losses.DIR.Orig[1]
			inputs := append(textInputs(exp.Losses.MFT.Texts), predictInput{Text: *pair[0], TextPair: pair[1]})
			env := offlineHub(t, "acme/tiny-"+family, src)
			got := runPredict(t, env, "acme/tiny-"+family, inputs)
			checkPredictions(t, got, nil, exp.Logits[:len(inputs)], "HuggingFace's graph")
		})
	}
}

// TestPredictRefusesUnknownModelType: a checkpoint whose model_type no
// family knows fails with the known ones listed, and writes nothing.
func TestPredictRefusesUnknownModelType(t *testing.T) {
	src := filepath.Join("..", "..", "models", "testdata", "families", "bert")
	dir := t.TempDir()
	for _, name := range []string{"model.safetensors", "vocab.txt"} {
		copyFile(t, filepath.Join(src, name), filepath.Join(dir, name))
	}
	config := strings.Replace(string(readFile(t, filepath.Join(src, "config.json"))), `"model_type": "bert"`, `"model_type": "t5"`, 1)
	writeFile(t, filepath.Join(dir, "config.json"), config)
	in := writeInputs(t, filepath.Join(dir, "in.jsonl"), textInputs([]string{"the movie"}))
	out := filepath.Join(dir, "out.jsonl")
	code, msg := belugaEnv(t, nil, "predict", "--model", dir, "--input", in, "-o", out)
	if code == 0 || !strings.Contains(msg, `"t5"`) || !strings.Contains(msg, "distilbert") || !strings.Contains(msg, "roberta") {
		t.Errorf("exit %d, %s: want a refusal naming t5 and the known families", code, msg)
	}
	if _, err := os.Stat(out); err == nil {
		t.Error("a refused predict wrote its output")
	}
}

func TestDataListShowsCachedModels(t *testing.T) {
	home := t.TempDir()
	const commit = "0123456789abcdef0123456789abcdef01234567"
	snap := filepath.Join(home, "hub", "models--acme--tiny", "snapshots", commit)
	os.MkdirAll(snap, 0o755)
	for _, name := range []string{"config.json", "model.safetensors", "vocab.txt"} {
		os.WriteFile(filepath.Join(snap, name), []byte("x"), 0o644)
	}
	os.MkdirAll(filepath.Join(home, "hub", "models--acme--tiny", "refs"), 0o755)
	os.WriteFile(filepath.Join(home, "hub", "models--acme--tiny", "refs", "main"), []byte(commit), 0o644)
	partial := filepath.Join(home, "hub", "models--acme--partial", "snapshots", commit)
	os.MkdirAll(partial, 0o755)
	os.WriteFile(filepath.Join(partial, "config.json"), []byte("{}"), 0o644)
	env := []string{"HF_HOME=" + home, "HF_HUB_CACHE=", "BELUGA_DATA=" + t.TempDir(), "HF_HUB_OFFLINE=1"}
	// fetch of a cached model, offline, names its snapshot.
	code, out := belugaEnv(t, env, "data", "fetch", "acme/tiny")
	if code != 0 || !strings.Contains(out, "acme/tiny\t"+snap) {
		t.Errorf("data fetch acme/tiny: exit %d, %s", code, out)
	}
	if code, out := belugaEnv(t, env, "data", "fetch", "acme/partial"); code == 0 || !strings.Contains(out, "HF_HUB_OFFLINE") {
		t.Errorf("data fetch of an incomplete model offline: exit %d, %s", code, out)
	}
	code, out = belugaEnv(t, env, "data", "list")
	if code != 0 {
		t.Fatalf("data list failed (%d): %s", code, out)
	}
	for _, want := range []string{"sst2", "qqp", "hub cache: " + filepath.Join(home, "hub"),
		"acme/tiny     main       0123456789ab  3      0.0 MB  true", "acme/partial  -          0123456789ab  1      0.0 MB  false"} {
		if !strings.Contains(out, want) {
			t.Errorf("data list lacks %q:\n%s", want, out)
		}
	}
}
