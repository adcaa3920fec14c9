package prompt

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// A generated answer names the label whose verbalizer it starts with, as
// a whole word, without case or punctuation; anything else names none.
func TestParseAnswer(t *testing.T) {
	opts := []string{" hateful", " non-hateful"}
	for _, tc := range []struct {
		text string
		want int
	}{
		{"hateful", 0},
		{"  Hateful.", 0},
		{"Non-hateful", 1},
		{"non-hateful, because it is a quote", 1},
		{"hatefulness", -1},
		{"It is hateful", -1},
		{"", -1},
		{"I cannot tell.", -1},
	} {
		if got := ParseAnswer(tc.text, opts); got != tc.want {
			t.Errorf("ParseAnswer(%q) = %d, want %d", tc.text, got, tc.want)
		}
	}
	if got := ParseAnswer("yes", []string{"yes", " Yes"}); got != -1 {
		t.Errorf("two options read the same: %d, want -1", got)
	}
}

// The next token's log-probabilities score an option by its longest
// listed first token; an answer listing no option's is unparsed.
func TestFirstTokenAnswer(t *testing.T) {
	top := map[string]float64{" g": -3, " good": -1, " b": -2, "x": -0.1}
	a := firstTokenAnswer(top, []string{" good", " bad"})
	if a.Label != 0 || a.LogLik[0] != -1 || a.LogLik[1] != -2 {
		t.Errorf("answer %+v", a)
	}
	a = firstTokenAnswer(map[string]float64{"x": -0.1}, []string{" good", " bad"})
	if !a.Unparsed() {
		t.Errorf("no option listed: %+v, want unparsed", a)
	}
	a = firstTokenAnswer(map[string]float64{" good": -1}, []string{" good", " bad"})
	if a.Label != 0 || !math.IsInf(a.LogLik[1], -1) {
		t.Errorf("one option listed: %+v", a)
	}
}

// An echoed response's option log-likelihood sums the tokens at or after
// the prompt's end (OpenAI's legacy logprobs).
func TestEchoedLogLik(t *testing.T) {
	b := []byte(`{"choices":[{"logprobs":{"tokens":["a","b"," go","od"],"token_logprobs":[null,-1.5,-0.25,-0.5],"text_offset":[0,1,2,5]}}]}`)
	got, err := echoedLogLik(b, 2)
	if err != nil || got != -0.75 {
		t.Errorf("loglik %v, %v; want -0.75", got, err)
	}
	if _, err := echoedLogLik(b, 9); err == nil {
		t.Error("no token in the option: no error")
	}
	if _, err := echoedLogLik([]byte(`{"choices":[{"text":"x"}]}`), 0); err == nil {
		t.Error("no logprobs: no error")
	}
}

// The client retries a 5xx with back-off and is answered; a 4xx is not
// retried; answers come back in request order whatever the concurrency,
// and an echo endpoint's options are scored by their echoed tokens.
func TestClientRetriesAndEcho(t *testing.T) {
	var flaky atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Prompt string `json:"prompt"`
			Echo   bool   `json:"echo"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || !req.Echo {
			http.Error(w, "want echo", http.StatusBadRequest)
			return
		}
		if strings.Contains(req.Prompt, "flaky") && flaky.Add(1) <= 2 {
			http.Error(w, "busy", http.StatusBadGateway)
			return
		}
		// Tokens: the prompt up to the option, then the option's words,
		// each word's logprob minus its length.
		cut := strings.LastIndex(req.Prompt, ":") + 1
		tokens, lps, offs := []string{req.Prompt[:cut]}, []any{nil}, []int{0}
		for _, w := range strings.SplitAfter(req.Prompt[cut:], " ")[1:] {
			offs = append(offs, cut+len(" ")+len(strings.Join(tokens[1:], "")))
			tokens = append(tokens, " "+strings.TrimSpace(w))
			lps = append(lps, -float64(len(strings.TrimSpace(w))))
		}
		json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"logprobs": map[string]any{
			"tokens": tokens, "token_logprobs": lps, "text_offset": offs}}}})
	}))
	defer srv.Close()
	c := NewClient(Endpoint{URL: srv.URL, Model: "m", Mode: ModeEcho, Backoff: time.Millisecond, Concurrency: 3})
	reqs := []Request{
		{Prefix: "x ", Context: "flaky:", Options: []string{" good", " very bad"}},
		{Prefix: "x ", Context: "two:", Options: []string{" ok", " fine"}},
	}
	got, err := c.Score(context.Background(), reqs)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]float64{{-4, -7}, {-2, -4}}
	for i := range want {
		for k := range want[i] {
			if got[i].LogLik[k] != want[i][k] {
				t.Errorf("request %d option %d: loglik %v, want %v", i, k, got[i].LogLik[k], want[i][k])
			}
		}
	}
	if n := c.Sent.Load(); n != 6 {
		t.Errorf("%d requests sent, want 4 options and 2 retries", n)
	}
	bad := NewClient(Endpoint{URL: srv.URL, Model: "m", Mode: ModeNext, Backoff: time.Millisecond})
	if _, err := bad.Score(context.Background(), reqs[:1]); err == nil || !strings.Contains(err.Error(), "400") || bad.Sent.Load() != 1 {
		t.Errorf("a 400 was retried or not reported: %v after %d requests", err, bad.Sent.Load())
	}
}

// A request the server does not answer within the timeout fails after
// its retries, named, instead of waiting for ever.
func TestClientTimeout(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	defer srv.Close()
	defer close(release)
	c := NewClient(Endpoint{URL: srv.URL, Model: "m", Mode: ModeGenerate, Timeout: 20 * time.Millisecond, Retries: 1, Backoff: time.Millisecond})
	_, err := c.Score(context.Background(), []Request{{Context: "hello", Options: []string{" a", " b"}}})
	if err == nil || !strings.Contains(err.Error(), `request 1 of 1 (input "hello")`) || !strings.Contains(err.Error(), "deadline exceeded") {
		t.Errorf("error %v, want the request named and its deadline", err)
	}
	if n := c.Sent.Load(); n != 2 {
		t.Errorf("%d requests sent, want 1 and 1 retry", n)
	}
}

// The request cache answers a call only with an entry that records that
// very call: an entry whose request is another's, a damaged one or one
// larger than any response is asked again and overwritten, never used.
func TestClientCacheAnswersOnlyItsOwnRequest(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct{ Content string } `json:"messages"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || len(req.Messages) != 1 {
			http.Error(w, "want one message", http.StatusBadRequest)
			return
		}
		said := strings.TrimPrefix(req.Messages[0].Content, "say ")
		json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"message": map[string]string{"content": said}}}})
	}))
	defer srv.Close()
	cache := t.TempDir()
	c := NewClient(Endpoint{URL: srv.URL, Model: "m", Mode: ModeGenerate, Backoff: time.Millisecond, Cache: cache})
	ask := func(text string) Answer {
		t.Helper()
		got, err := c.Score(context.Background(), []Request{{Context: text, Options: []string{" yes", " no"}}})
		if err != nil {
			t.Fatal(err)
		}
		return got[0]
	}
	if a := ask("say yes"); a.Label != 0 || c.Sent.Load() != 1 {
		t.Fatalf("first call: %+v after %d requests", a, c.Sent.Load())
	}
	if a := ask("say yes"); a.Label != 0 || c.Sent.Load() != 1 {
		t.Fatalf("cached call: %+v after %d requests, want the cache's answer", a, c.Sent.Load())
	}
	entries, _ := filepath.Glob(filepath.Join(cache, "*", "*.json"))
	if len(entries) != 1 {
		t.Fatalf("cache holds %v, want one entry", entries)
	}
	yes := entries[0]
	ask("say no")
	entries, _ = filepath.Glob(filepath.Join(cache, "*", "*.json"))
	var no string
	for _, e := range entries {
		if e != yes {
			no = e
		}
	}
	noEntry, err := os.ReadFile(no)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		spoil func() error
	}{
		{"another request's entry", func() error { return os.WriteFile(yes, noEntry, 0o644) }},
		{"a damaged entry", func() error { return os.WriteFile(yes, []byte(`{"response":`), 0o644) }},
		{"an entry larger than any response", func() error { return os.Truncate(yes, maxResponse+1<<20) }},
	} {
		if err := tc.spoil(); err != nil {
			t.Fatal(err)
		}
		sent := c.Sent.Load()
		if a := ask("say yes"); a.Label != 0 || c.Sent.Load() != sent+1 {
			t.Errorf("%s: answer %+v after %d new requests, want yes asked again", tc.name, a, c.Sent.Load()-sent)
		}
		if st, err := os.Stat(yes); err != nil || st.Size() > 1<<20 {
			t.Errorf("%s: the entry was not rewritten: %v", tc.name, err)
		}
	}
}
