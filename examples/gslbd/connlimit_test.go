package main

import (
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestReservedSlotOfAnAnsweredClientIsFreed: every connection busy, the
// eight reserved slots taken by clients already answered /healthz that
// keep their end open (the server lingers before closing them): a fresh
// client still gets a reserved slot. (Before: an answered connection
// stayed "being answered" until closed, so the fresh client was refused,
// reset at once, while a flood cycled through the reserved slots.)
func TestReservedSlotOfAnAnsweredClientIsFreed(t *testing.T) {
	l := newConnLimiter(nil, 1)
	var pipes []net.Conn
	pipe := func() net.Conn {
		a, b := net.Pipe()
		pipes = append(pipes, a, b)
		return a
	}
	defer func() {
		for _, c := range pipes {
			c.Close()
		}
	}()
	if !l.admit(pipe()) { // the one ordinary connection, busy (never idle)
		t.Fatal("the first connection was refused")
	}
	h := l.guard(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) }))
	for i := range reserveConns {
		c := pipe()
		if !l.admit(c) {
			t.Fatalf("reserved connection %d refused", i)
		}
		req := httptest.NewRequest("GET", "/healthz", nil)
		req = req.WithContext(l.connContext(req.Context(), c))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Fatalf("/healthz on reserved connection %d: %d", i, rec.Code)
		}
	}
	if !l.admit(pipe()) {
		t.Fatal("a fresh client was refused while every reserved slot held an answered client")
	}
	if got := l.evicted.Load(); got != 1 {
		t.Fatalf("%d connections evicted, want the one answered longest ago", got)
	}
}
