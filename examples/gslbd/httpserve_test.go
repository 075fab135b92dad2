package main

import (
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// TestRouteDeadlines: a request whose body never arrives is cut by its
// route's read deadline (there is no server-wide ReadTimeout), and the
// server carries the header, idle and size limits.
func TestRouteDeadlines(t *testing.T) {
	saved := routeDeadlines
	t.Cleanup(func() { routeDeadlines = saved })
	routeDeadlines = []routeDeadline{{prefix: "/", read: 100 * time.Millisecond, write: time.Minute}}

	got := make(chan error, 1)
	hs := newHTTPServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, err := io.ReadAll(r.Body)
		got <- err
	}))
	if hs.ReadHeaderTimeout == 0 || hs.IdleTimeout == 0 || hs.MaxHeaderBytes == 0 || hs.ReadTimeout != 0 || hs.WriteTimeout != 0 {
		t.Fatalf("server limits: %+v", hs)
	}
	srv := httptest.NewUnstartedServer(hs.Handler)
	srv.Config = hs
	srv.Start()
	defer srv.Close()
	c, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "POST /api/x HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\n")
	select {
	case err := <-got:
		var ne net.Error
		if err == nil || !errors.As(err, &ne) || !ne.Timeout() {
			t.Fatalf("reading a body that never comes: %v, want a timeout", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("hang guard: the route's read deadline did not cut the body")
	}
}
