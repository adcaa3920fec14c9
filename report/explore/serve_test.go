package explore

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a log written by Serve's goroutine and read by the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Serve listens on the loopback interface only, serves the view, and stops
// when its context ends.
func TestServeLoopbackOnly(t *testing.T) {
	src := fixtureSource(t)
	ctx, cancel := context.WithCancel(context.Background())
	var log syncBuffer
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, src, 0, &log) }()
	var url string
	for range 100 {
		if m := regexp.MustCompile(`http://[^ ]+/`).FindString(log.String()); m != "" {
			url = m
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Fatalf("serving on %q, want 127.0.0.1", url)
	}
	resp, err := http.Get(url + "api/view")
	if err != nil {
		t.Fatal(err)
	}
	var v View
	err = json.NewDecoder(resp.Body).Decode(&v)
	resp.Body.Close()
	if err != nil || len(v.Runs) != len(src.View.Runs) {
		t.Errorf("api/view: %d runs (%v), want %d", len(v.Runs), err, len(src.View.Runs))
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Serve returned %v after its context ended", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not stop")
	}
}
