package prompt

import (
	"fmt"
	"net/url"
	"time"
)

// The ways an endpoint is asked (Endpoint.Mode).
const (
	// ModeEcho asks /v1/completions to echo the prompt with every
	// option appended and its tokens' log-probabilities (max_tokens 0,
	// echo, logprobs): each option's full log-likelihood (vLLM, OpenAI).
	ModeEcho = "echo"
	// ModeNext asks /v1/completions for one token with its top
	// log-probabilities (llama.cpp's llama-server, which has no echo):
	// each option's first token's log-probability.
	ModeNext = "next-token"
	// ModeGenerate asks for a generated answer and parses it to a label
	// (chat endpoints without log-probabilities, /v1/chat/completions).
	ModeGenerate = "generate"
)

// Endpoint is an OpenAI-compatible server and how it is asked.
type Endpoint struct {
	// URL is the server's base (http://127.0.0.1:8080); the client adds
	// /v1/completions or /v1/chat/completions.
	URL string `json:"url" yaml:"url"`
	// Model is the name the server knows the model by; with URL and Mode
	// it is the model's identity in the request cache.
	Model string `json:"model" yaml:"model"`
	// Mode is echo, next-token or generate.
	Mode string `json:"mode" yaml:"mode"`
	// TopLogprobs is how many of the next token's log-probabilities a
	// next-token request asks for (0: 20); an option whose first token is
	// not among them has no log-likelihood.
	TopLogprobs int `json:"top_logprobs,omitempty" yaml:"top_logprobs,omitempty"`
	// MaxTokens caps a generated answer (0: 8).
	MaxTokens int `json:"max_tokens,omitempty" yaml:"max_tokens,omitempty"`

	// The client's settings change no answer, so they are no part of a
	// run's identity (json "-").

	// Concurrency is the number of requests in flight (0: 4).
	Concurrency int `json:"-" yaml:"concurrency,omitempty"`
	// Retries is how often a failed request is sent again (0: 3), after
	// Backoff, doubled each time (0: 500ms).
	Retries int           `json:"-" yaml:"retries,omitempty"`
	Backoff time.Duration `json:"-" yaml:"backoff,omitempty"`
	// RateLimit caps requests per second (0: none).
	RateLimit float64 `json:"-" yaml:"rate_limit,omitempty"`
	// Timeout bounds each request (0: 60s).
	Timeout time.Duration `json:"-" yaml:"timeout,omitempty"`
	// Cache is the directory of the request cache (empty: none); the run
	// store's shared cache when a sweep sets one.
	Cache string `json:"-" yaml:"cache,omitempty"`
}

func (e *Endpoint) validate() error {
	u, err := url.Parse(e.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("prompt.endpoint.url: %q is not an http(s) URL", e.URL)
	}
	switch e.Mode {
	case ModeEcho, ModeNext, ModeGenerate:
	default:
		return fmt.Errorf("prompt.endpoint.mode: %q (want %s, %s or %s)", e.Mode, ModeEcho, ModeNext, ModeGenerate)
	}
	for name, v := range map[string]float64{"concurrency": float64(e.Concurrency), "retries": float64(e.Retries), "rate_limit": e.RateLimit,
		"top_logprobs": float64(e.TopLogprobs), "max_tokens": float64(e.MaxTokens), "timeout": float64(e.Timeout), "backoff": float64(e.Backoff)} {
		if v < 0 {
			return fmt.Errorf("prompt.endpoint.%s: %v is negative", name, v)
		}
	}
	return nil
}
