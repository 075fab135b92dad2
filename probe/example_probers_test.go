package probe_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/gslbkit/gslb/probe"
)

// An HTTP check in Envoy's style: the body must contain "ok", 503 counts
// toward the failure threshold, any other unexpected status fails at once.
func ExampleNewHTTP() {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/healthz":
			_, _ = io.WriteString(w, "status: ok")
		case "/draining":
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, "status: ok")
		default:
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, "status: down")
		}
	}))
	defer srv.Close()

	for _, path := range []string{"/healthz", "/draining", "/broken"} {
		cfg := probe.DefaultHTTPConfig()
		cfg.Path = path
		cfg.RetriableStatuses = probe.Statuses{probe.OneStatus(503)}
		cfg.ExpectedResponse = probe.Segments{{Text: "ok"}}
		h, err := probe.NewHTTP(srv.Listener.Addr().String(), cfg)
		if err != nil {
			fmt.Println(err)
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		r := h.Probe(ctx)
		cancel()
		fmt.Printf("%s: %s (kind %s, code %d)\n", path, r.Status, r.Kind, r.Code)
	}
	// Output:
	// /healthz: pass (kind none, code 200)
	// /draining: fail (kind status, code 503)
	// /broken: fail-now (kind body, code 503)
}

// A TCP check that sends "ping" and expects "pong" (given in hex here).
func ExampleNewTCP() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fmt.Println(err)
		return
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		buf := make([]byte, 4)
		if _, err := io.ReadFull(c, buf); err == nil && string(buf) == "ping" {
			_, _ = c.Write([]byte("pong"))
		}
		_, _ = io.Copy(io.Discard, c)
	}()

	send := probe.Payload{Text: "ping"}
	pong := probe.Payload{Type: probe.PayloadHex, Hex: "706f6e67"}
	t, err := probe.NewTCP(ln.Addr().String(), probe.TCPConfig{Send: &send, Receive: probe.Segments{pong}})
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	r := t.Probe(ctx)
	cancel()
	_ = ln.Close()
	<-done
	fmt.Println(r.Status, r.Kind)
	// Output: pass none
}
