package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"sync"
	"time"

	"golang.org/x/net/netutil"
)

// backend is one HTTP server on loopback that the demo can stop and start
// again on the same port. It stands in for a server at a public address
// (Public, from the documentation range 192.0.2.0/24), which is what the DNS
// answers carry; the prober reaches it at Addr on 127.0.0.1.
type backend struct {
	Name   string
	Public netip.Addr
	Addr   string // 127.0.0.1:port

	mu  sync.Mutex
	srv *http.Server
	wg  sync.WaitGroup
}

func newBackend(name string, public netip.Addr) *backend {
	return &backend{Name: name, Public: public}
}

// Start listens (on a free port the first time, on the same port after) and
// serves /healthz until Stop.
func (b *backend) Start() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.srv != nil {
		return nil
	}
	addr := b.Addr
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("%s: listen: %w", b.Name, err)
	}
	b.Addr = ln.Addr().String()
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprintf(w, "ok from %s\n", b.Name)
	})
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       5 * time.Second, // one tiny route: server-wide deadlines fit
		WriteTimeout:      5 * time.Second,
		IdleTimeout:       30 * time.Second,
		MaxHeaderBytes:    8 << 10,
	}
	srv.SetKeepAlivesEnabled(false)
	b.srv = srv
	b.wg.Add(1)
	go func() {
		defer b.wg.Done()
		if err := srv.Serve(netutil.LimitListener(ln, 64)); err != nil && !errors.Is(err, http.ErrServerClosed) {
			_ = err // the listener failed; the probes will say so
		}
	}()
	return nil
}

// Stop closes the listener and every connection at once, like a crash.
func (b *backend) Stop() {
	b.mu.Lock()
	srv := b.srv
	b.srv = nil
	b.mu.Unlock()
	if srv != nil {
		_ = srv.Close()
	}
	b.wg.Wait()
}

// Shutdown stops the backend gracefully (used when the demo ends).
func (b *backend) Shutdown(ctx context.Context) {
	b.mu.Lock()
	srv := b.srv
	b.srv = nil
	b.mu.Unlock()
	if srv != nil {
		_ = srv.Shutdown(ctx)
	}
	b.wg.Wait()
}
