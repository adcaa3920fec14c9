package prompt

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/beluga-nlp/beluga/internal/atomicfile"
	"github.com/beluga-nlp/beluga/metrics"
)

// Client asks an Endpoint, through its request cache when it has one.
// Every request is data: its body (which holds the model's name, the
// template, the demonstrations and the input) and the endpoint's identity
// key the cached response, so a sweep interrupted and started again asks
// only what was not answered.
type Client struct {
	E    Endpoint
	HTTP *http.Client
	// Sent counts the requests sent over the network (not those the
	// cache answered).
	Sent atomic.Int64

	mu   sync.Mutex
	next time.Time // the rate limit's next free slot
}

// NewClient is a client of e.
func NewClient(e Endpoint) *Client {
	return &Client{E: e, HTTP: &http.Client{}}
}

// Identity names the endpoint, its model and mode.
func (c *Client) Identity() string {
	return fmt.Sprintf("endpoint:%s model=%s mode=%s top_logprobs=%d max_tokens=%d", c.E.URL, c.E.Model, c.E.Mode, c.topLogprobs(), c.maxTokens())
}

func (c *Client) topLogprobs() int { return cmp.Or(c.E.TopLogprobs, 20) }
func (c *Client) maxTokens() int   { return cmp.Or(c.E.MaxTokens, 8) }

// call is one HTTP request of an Answer: its path and body.
type call struct {
	path string
	body map[string]any
}

// Score answers every request (Concurrency at a time); the first that
// fails after its retries fails the call, naming the request.
func (c *Client) Score(ctx context.Context, reqs []Request) ([]Answer, error) {
	out := make([]Answer, len(reqs))
	errs := make([]error, len(reqs))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	work := make(chan int)
	var wg sync.WaitGroup
	for range cmp.Or(c.E.Concurrency, 4) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				a, err := c.answer(ctx, reqs[i])
				if err != nil {
					errs[i] = fmt.Errorf("request %d of %d (input %q): %w", i+1, len(reqs), clip(reqs[i].Context), err)
					cancel()
					continue
				}
				out[i] = a
			}
		}()
	}
	for i := range reqs {
		if ctx.Err() != nil {
			break
		}
		work <- i
	}
	close(work)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil && !errors.Is(err, context.Canceled) {
		return nil, err
	}
	return out, nil
}

func clip(s string) string {
	if len(s) > 60 {
		return s[:57] + "..."
	}
	return s
}

// answer asks for one request: one call per option (echo), or one call.
func (c *Client) answer(ctx context.Context, r Request) (Answer, error) {
	prompt := r.Prefix + r.Context
	switch c.E.Mode {
	case ModeEcho:
		ll := make([]float64, len(r.Options))
		for k, o := range r.Options {
			b, err := c.do(ctx, call{"/v1/completions", map[string]any{"model": c.E.Model, "prompt": prompt + o,
				"max_tokens": 0, "echo": true, "logprobs": 1, "temperature": 0}})
			if err != nil {
				return Answer{}, fmt.Errorf("option %q: %w", o, err)
			}
			if ll[k], err = echoedLogLik(b, utf8.RuneCountInString(prompt)); err != nil {
				return Answer{}, fmt.Errorf("option %q: %w", o, err)
			}
		}
		return Answer{LogLik: ll, Label: metrics.Argmax(ll)}, nil
	case ModeNext:
		b, err := c.do(ctx, call{"/v1/completions", map[string]any{"model": c.E.Model, "prompt": prompt,
			"max_tokens": 1, "logprobs": c.topLogprobs(), "temperature": 0}})
		if err != nil {
			return Answer{}, err
		}
		top, err := nextTokenLogprobs(b)
		if err != nil {
			return Answer{}, err
		}
		return firstTokenAnswer(top, r.Options), nil
	default: // ModeGenerate
		b, err := c.do(ctx, call{"/v1/chat/completions", map[string]any{"model": c.E.Model, "max_tokens": c.maxTokens(), "temperature": 0,
			"messages": []map[string]string{{"role": "user", "content": prompt}}}})
		if err != nil {
			return Answer{}, err
		}
		var resp struct {
			Choices []struct {
				Message struct{ Content string } `json:"message"`
			} `json:"choices"`
		}
		if err := json.Unmarshal(b, &resp); err != nil || len(resp.Choices) == 0 {
			return Answer{}, fmt.Errorf("response is no chat completion: %s", clip(string(b)))
		}
		text := resp.Choices[0].Message.Content
		return Answer{Text: text, Label: ParseAnswer(text, r.Options)}, nil
	}
}

// do sends one call (or reads its cached response): the rate limit, a
// timeout per attempt, and Retries more attempts after a network error, a
// 429 or a 5xx, waiting Backoff, doubled each time. A response is cached
// only once it is a success.
func (c *Client) do(ctx context.Context, cl call) ([]byte, error) {
	body, err := json.Marshal(cl.body)
	if err != nil {
		return nil, err
	}
	key := c.cacheKey(cl.path, body)
	if b, ok := c.cached(key, cl.path, body); ok {
		return b, nil
	}
	backoff := cmp.Or(c.E.Backoff, 500*time.Millisecond)
	var last error
	for attempt := 0; attempt <= cmp.Or(c.E.Retries, 3); attempt++ {
		if attempt > 0 {
			select {
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-time.After(backoff):
			}
			backoff *= 2
		}
		if err := c.wait(ctx); err != nil {
			return nil, err
		}
		b, retry, err := c.send(ctx, cl.path, body)
		if err == nil {
			if err := c.store(key, cl.path, body, b); err != nil {
				return nil, err
			}
			return b, nil
		}
		last = err
		if !retry || ctx.Err() != nil {
			break
		}
	}
	return nil, last
}

// send is one attempt; retry says whether another may succeed.
func (c *Client) send(ctx context.Context, path string, body []byte) (b []byte, retry bool, err error) {
	ctx, cancel := context.WithTimeout(ctx, cmp.Or(c.E.Timeout, 60*time.Second))
	defer cancel()
	url := c.url(path)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, false, err
	}
	req.Header.Set("Content-Type", "application/json")
	c.Sent.Add(1)
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, true, fmt.Errorf("POST %s: %w", url, err)
	}
	defer resp.Body.Close()
	b, err = io.ReadAll(io.LimitReader(resp.Body, maxResponse))
	if err != nil {
		return nil, true, fmt.Errorf("POST %s: reading the response: %w", url, err)
	}
	if resp.StatusCode != http.StatusOK {
		retry = resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500
		return nil, retry, fmt.Errorf("POST %s: %s: %s", url, resp.Status, clip(strings.TrimSpace(string(b))))
	}
	return b, false, nil
}

// wait holds a request until the rate limit lets it go.
func (c *Client) wait(ctx context.Context) error {
	if c.E.RateLimit <= 0 {
		return nil
	}
	c.mu.Lock()
	now := time.Now()
	at := c.next
	if at.Before(now) {
		at = now
	}
	c.next = at.Add(time.Duration(float64(time.Second) / c.E.RateLimit))
	c.mu.Unlock()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(at.Sub(now)):
		return nil
	}
}

// url is where a call to path goes: the endpoint's URL without its
// trailing slash, then path; the cache records it with each entry.
func (c *Client) url(path string) string { return strings.TrimSuffix(c.E.URL, "/") + path }

// cacheKey is the content key of a call: the endpoint's URL and mode, the
// path and the body (the model's name, the prompt, the options asked).
func (c *Client) cacheKey(path string, body []byte) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n%s\n", c.E.URL, c.E.Mode, path)
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

// maxResponse bounds a response's body, as read from the network and as
// read back from the request cache.
const maxResponse = 64 << 20

// cacheEntry is a cached call: the request and the response's body.
type cacheEntry struct {
	URL      string          `json:"url"`
	Request  json.RawMessage `json:"request"`
	Response json.RawMessage `json:"response"`
}

func (c *Client) cachePath(key string) string {
	return filepath.Join(c.E.Cache, key[:2], key+".json")
}

// cached reads the response stored for a call. An entry is used only when
// it records this very call — the URL and the request body it was asked
// with — so a damaged or foreign file under the key is asked again (and
// overwritten) rather than answering for another request; one larger than
// any response the client would have stored is refused before it is read.
func (c *Client) cached(key, path string, body []byte) ([]byte, bool) {
	if c.E.Cache == "" {
		return nil, false
	}
	p := c.cachePath(key)
	f, err := os.Open(p)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	// The entry holds the URL, the request and the response, each JSON
	// that marshalling may at most grow sixfold (\u00XX escapes).
	limit := int64(maxResponse) + 6*int64(len(body)+len(c.E.URL)+len(path)) + 1024
	if st, err := f.Stat(); err != nil || st.Size() > limit {
		slog.Warn("request cache: entry too large or unreadable, asking again", "file", p, "limit", limit)
		return nil, false
	}
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil || int64(len(b)) > limit {
		slog.Warn("request cache: entry too large or unreadable, asking again", "file", p, "limit", limit)
		return nil, false
	}
	var e cacheEntry
	if json.Unmarshal(b, &e) != nil || len(e.Response) == 0 {
		slog.Warn("request cache: damaged entry, asking again", "file", p)
		return nil, false
	}
	var asked bytes.Buffer
	if e.URL != c.url(path) || json.Compact(&asked, e.Request) != nil || !bytes.Equal(asked.Bytes(), body) {
		slog.Warn("request cache: entry records another request, asking again", "file", p)
		return nil, false
	}
	return e.Response, true
}

func (c *Client) store(key, path string, body, resp []byte) error {
	if c.E.Cache == "" {
		return nil
	}
	if !json.Valid(resp) {
		return fmt.Errorf("response is not JSON: %s", clip(string(resp)))
	}
	b, err := json.Marshal(cacheEntry{URL: c.url(path), Request: body, Response: resp})
	if err != nil {
		return err
	}
	p := c.cachePath(key)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return atomicfile.WriteFile(p, b)
}

// echoedLogLik sums the log-probabilities of the echoed tokens at or
// after character offset from (OpenAI's legacy logprobs: tokens,
// token_logprobs, text_offset).
func echoedLogLik(b []byte, from int) (float64, error) {
	var resp struct {
		Choices []struct {
			Logprobs *struct {
				TokenLogprobs []*float64 `json:"token_logprobs"`
				TextOffset    []int      `json:"text_offset"`
			} `json:"logprobs"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(b, &resp); err != nil || len(resp.Choices) == 0 || resp.Choices[0].Logprobs == nil {
		return 0, fmt.Errorf("response has no echoed logprobs (does the server support echo?): %s", clip(string(b)))
	}
	lp := resp.Choices[0].Logprobs
	if len(lp.TextOffset) != len(lp.TokenLogprobs) {
		return 0, fmt.Errorf("response has %d text offsets for %d token logprobs", len(lp.TextOffset), len(lp.TokenLogprobs))
	}
	var sum float64
	n := 0
	for i, off := range lp.TextOffset {
		if off < from {
			continue
		}
		if lp.TokenLogprobs[i] == nil {
			return 0, fmt.Errorf("token %d of the option has no logprob", i)
		}
		sum += *lp.TokenLogprobs[i]
		n++
	}
	if n == 0 {
		return 0, fmt.Errorf("no echoed token starts in the option (offsets from %d)", from)
	}
	return sum, nil
}

// nextTokenLogprobs reads the first generated token's top
// log-probabilities: llama-server's form (logprobs.content[0].top_logprobs,
// a list) or OpenAI's legacy one (logprobs.top_logprobs[0], a map).
func nextTokenLogprobs(b []byte) (map[string]float64, error) {
	var resp struct {
		Choices []struct {
			Logprobs *struct {
				Content []struct {
					TopLogprobs []struct {
						Token   string  `json:"token"`
						Logprob float64 `json:"logprob"`
					} `json:"top_logprobs"`
				} `json:"content"`
				TopLogprobs []map[string]float64 `json:"top_logprobs"`
			} `json:"logprobs"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(b, &resp); err != nil || len(resp.Choices) == 0 || resp.Choices[0].Logprobs == nil {
		return nil, fmt.Errorf("response has no logprobs: %s", clip(string(b)))
	}
	lp := resp.Choices[0].Logprobs
	out := map[string]float64{}
	switch {
	case len(lp.Content) > 0:
		for _, t := range lp.Content[0].TopLogprobs {
			if _, dup := out[t.Token]; !dup {
				out[t.Token] = t.Logprob
			}
		}
	case len(lp.TopLogprobs) > 0:
		out = lp.TopLogprobs[0]
	default:
		return nil, fmt.Errorf("response has no token logprobs: %s", clip(string(b)))
	}
	return out, nil
}

// firstTokenAnswer scores each option by the log-probability of its
// first token: the longest listed token the option starts with. An option
// none of whose prefixes is listed gets -Inf; when no option is listed
// the answer names no label (unparsed), never a default one.
func firstTokenAnswer(top map[string]float64, options []string) Answer {
	ll := make([]float64, len(options))
	found := false
	for k, o := range options {
		ll[k] = math.Inf(-1)
		best := 0
		for tok, p := range top {
			if tok != "" && strings.HasPrefix(o, tok) && len(tok) > best {
				best, ll[k] = len(tok), p
			}
		}
		found = found || best > 0
	}
	if !found {
		return Answer{Label: -1}
	}
	return Answer{LogLik: ll, Label: metrics.Argmax(ll)}
}

// ParseAnswer reads a generated answer as a label: the option it starts
// with, compared without case, surrounding space and punctuation (the
// longest when several match, as "non-hateful" over "hateful" would not
// arise but "not bad" over "not" would). An answer that starts with no
// option, or with two of the same length, names none: -1.
func ParseAnswer(text string, options []string) int {
	norm := func(s string) string {
		return strings.ToLower(strings.TrimFunc(s, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsPunct(r) }))
	}
	a := norm(text)
	best, label, tie := 0, -1, false
	for k, o := range options {
		v := norm(o)
		if v == "" || !strings.HasPrefix(a, v) {
			continue
		}
		// The option must end at a word's end: "good" is not "goodness".
		if rest := a[len(v):]; rest != "" {
			r, _ := utf8.DecodeRuneInString(rest)
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				continue
			}
		}
		switch {
		case len(v) > best:
			best, label, tie = len(v), k, false
		case len(v) == best:
			tie = true
		}
	}
	if tie {
		return -1
	}
	return label
}
