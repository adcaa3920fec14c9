package explore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Handler serves the same page as the report file, with its data fetched
// from JSON endpoints so that a large store is read only as far as it is
// looked at:
//
//	GET /              the page
//	GET /api/view      the View
//	GET /api/cases?func=ID&runs=A,B&focus=B&verdict=F&split=S&meta=K=V&q=TEXT&flips=1&offset=N&limit=M
//	                   one Page of a functionality's cases (CaseSet.Select)
//
// Case sets are read on first use and kept.
func (s *Source) Handler() http.Handler {
	var mu sync.Mutex
	sets := map[int]*CaseSet{}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, page(s.View.Title, modeServe, ""))
	})
	mux.HandleFunc("GET /api/view", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, s.View)
	})
	mux.HandleFunc("GET /api/cases", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		fid, err := strconv.Atoi(q.Get("func"))
		if err != nil {
			http.Error(w, fmt.Sprintf("func=%q: want a functionality number", q.Get("func")), http.StatusBadRequest)
			return
		}
		query := Query{Focus: q.Get("focus"), Verdict: q.Get("verdict"), Split: q.Get("split"), Search: q.Get("q"), FlipsFirst: q.Get("flips") == "1"}
		if runs := q.Get("runs"); runs != "" {
			query.Runs = strings.Split(runs, ",")
		}
		if k, v, ok := strings.Cut(q.Get("meta"), "="); ok {
			query.Meta = [2]string{k, v}
		}
		for name, dst := range map[string]*int{"offset": &query.Offset, "limit": &query.Limit} {
			if v := q.Get(name); v != "" {
				if *dst, err = strconv.Atoi(v); err != nil || *dst < 0 {
					http.Error(w, fmt.Sprintf("%s=%q: want a number ≥ 0", name, v), http.StatusBadRequest)
					return
				}
			}
		}
		mu.Lock()
		cs := sets[fid]
		mu.Unlock()
		if cs == nil {
			if cs, err = s.Cases(fid); err != nil {
				// No such functionality is the request's fault; a case or
				// result file that cannot be read is the store's, with its
				// reason.
				status := http.StatusInternalServerError
				if errors.Is(err, errNoFunc) {
					status = http.StatusNotFound
				}
				http.Error(w, err.Error(), status)
				return
			}
			mu.Lock()
			sets[fid] = cs
			mu.Unlock()
		}
		writeJSON(w, cs.Select(query))
	})
	return mux
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	if err := json.NewEncoder(w).Encode(v); err != nil {
		// The client went away or v is not encodable; the status is sent.
		return
	}
}

// Listen opens a listener on the loopback interface only (port 0: any free
// port): the page shows a store's contents to whoever can reach it.
func Listen(port int) (net.Listener, error) {
	return net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
}

// OnlyHost serves h to requests whose Host header names addr (the
// address the server bound, host:port) or localhost at its port, and
// answers any other with 421 Misdirected Request: a page on another site
// that a DNS rebinding points at 127.0.0.1 sends its own host name, and
// must not read the store.
func OnlyHost(addr string, h http.Handler) http.Handler {
	_, port, _ := net.SplitHostPort(addr)
	allowed := map[string]bool{addr: true, net.JoinHostPort("localhost", port): true}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !allowed[strings.ToLower(r.Host)] {
			http.Error(w, fmt.Sprintf("host %q is not this server's (%s): refused", r.Host, addr), http.StatusMisdirectedRequest)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// Serve serves src on 127.0.0.1:port until ctx is done, saying where on log;
// it answers only requests addressed to that address (OnlyHost).
func Serve(ctx context.Context, src *Source, port int, log io.Writer) error {
	ln, err := Listen(port)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: OnlyHost(ln.Addr().String(), src.Handler()), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(log, "serving %s on http://%s/ (Ctrl-C stops)\n", src.View.Title, ln.Addr())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return srv.Shutdown(shut)
	}
}
