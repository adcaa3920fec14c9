package prompt

import (
	"math"
	"testing"
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
