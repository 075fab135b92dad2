package main

import (
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/synctest"
	"time"
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
	busy := pipe()
	if !l.admit(busy) { // the one ordinary connection, busy (never idle)
		t.Fatal("the first connection was refused")
	}
	l.markRead(busy)
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

// TestUnreadConnectionsAreNotBusy: a table full of connections accepted
// but not read yet (a backlog accepted after a stall) makes a new one
// wait for them rather than take a reserved slot, where each later
// arrival closed the one accepted longest ago — a fresh /healthz client
// among them, reset before it was read. It takes the place of the first
// that goes idle; after admitWait with none read, a reserved slot; and a
// connection that sent nothing for unreadGrace is evicted like an idle one.
func TestUnreadConnectionsAreNotBusy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		l := newConnLimiter(nil, 2)
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
		a, b := pipe(), pipe()
		if !l.admit(a) || !l.admit(b) {
			t.Fatal("refused below the limit")
		}
		done := make(chan bool, 1)
		go func() { done <- l.admit(pipe()) }()
		synctest.Wait()
		select {
		case <-done:
			t.Fatal("admitted at once while the table holds connections not read yet")
		default:
		}
		l.markRead(a) // read: busy now
		synctest.Wait()
		l.track(a, http.StateIdle) // answered, idle
		if !<-done {
			t.Fatal("refused")
		}
		if n, res, _ := l.counts(); n != 2 || res != 0 || l.evicted.Load() != 1 {
			t.Fatalf("%d connections, %d reserved, %d evicted; want the idle one replaced", n, res, l.evicted.Load())
		}

		start := time.Now()
		if !l.admit(pipe()) {
			t.Fatal("refused")
		}
		if waited := time.Since(start); waited != admitWait {
			t.Fatalf("waited %v for connections that were never read, want admitWait %v", waited, admitWait)
		}
		if _, res, _ := l.counts(); res != 1 {
			t.Fatalf("%d reserved, want 1 after admitWait", res)
		}

		time.Sleep(unreadGrace) // b and the last ordinary one never sent a byte
		if !l.admit(pipe()) {
			t.Fatal("refused")
		}
		if n, res, _ := l.counts(); n != 2 || res != 1 || l.evicted.Load() != 2 {
			t.Fatalf("%d connections, %d reserved, %d evicted; want one silent past unreadGrace evicted", n, res, l.evicted.Load())
		}
	})
}
