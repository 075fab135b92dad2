package main

import (
	"net"
	"net/http"
	"strings"
	"time"

	"golang.org/x/net/netutil"
)

// Server-wide HTTP limits. There is deliberately no server-wide
// ReadTimeout or WriteTimeout: each route sets its own deadlines (see
// routeDeadlines), so a long replication snapshot is not cut while a
// stalled API client still is.
const (
	httpReadHeaderTimeout = 10 * time.Second
	httpIdleTimeout       = 60 * time.Second
	httpMaxHeaderBytes    = 16 << 10
)

// routeDeadline is how long a request on a path prefix may take to read
// (its body) and to answer.
type routeDeadline struct {
	prefix      string
	read, write time.Duration
}

// routeDeadlines are tried in order; the last one matches every path.
var routeDeadlines = []routeDeadline{
	// Snapshots can be large and nodes may be far: minutes, not seconds.
	{prefix: "/replication/", read: 30 * time.Second, write: 10 * time.Minute},
	{prefix: "/", read: 10 * time.Second, write: 30 * time.Second},
}

// withDeadlines sets the read and write deadlines of each request's
// connection from routeDeadlines (http.ResponseController), before h runs.
func withDeadlines(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for _, d := range routeDeadlines {
			if strings.HasPrefix(r.URL.Path, d.prefix) {
				rc := http.NewResponseController(w)
				now := time.Now()
				_ = rc.SetReadDeadline(now.Add(d.read))
				_ = rc.SetWriteDeadline(now.Add(d.write))
				break
			}
		}
		h.ServeHTTP(w, r)
	})
}

// newHTTPServer returns gslbd's HTTP server for h: header, idle and
// header-size limits, per-route deadlines.
func newHTTPServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           withDeadlines(h),
		ReadHeaderTimeout: httpReadHeaderTimeout,
		IdleTimeout:       httpIdleTimeout,
		MaxHeaderBytes:    httpMaxHeaderBytes,
	}
}

// limitListener bounds the connections accepted from ln at once.
func limitListener(ln net.Listener, n int) net.Listener { return netutil.LimitListener(ln, n) }
