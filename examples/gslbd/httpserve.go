package main

import (
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// Server-wide HTTP limits. There is deliberately no server-wide
// ReadTimeout or WriteTimeout: each route sets its own deadlines (see
// routeDeadlines), so a long replication snapshot is not cut while a
// stalled API client still is.
const (
	httpReadHeaderTimeout = 5 * time.Second
	httpIdleTimeout       = 30 * time.Second
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

// httpMaxConns is http.maxConns, or when it is 0 its default derived from
// the descriptor limit: a quarter of it, 16 to 1,024 (the embedded DNS
// server takes another quarter for TCP by default; the rest is left to
// probes, the provider, replication and the listeners).
func httpMaxConns(n int) int {
	if n > 0 {
		return n
	}
	lim, ok := fileLimit()
	if !ok {
		return 1024
	}
	return int(min(max(lim/4, 16), 1024))
}

// hostGuard answers 421 Misdirected Request to a request whose Host names
// neither an IP literal, nor localhost, nor the host of the listen address,
// nor one of allowed (http.allowedHosts), against DNS rebinding: a page
// on evil.test that rebinds evil.test to 127.0.0.1 sends "Host: evil.test"
// and reads nothing. /healthz, /readyz and /replication/ are exempt (a
// probe or load balancer may send any name; replication needs the shared
// secret, which a browser does not have).
func hostGuard(listen string, allowed []string, h http.Handler) http.Handler {
	names := map[string]bool{"localhost": true}
	if host, _, err := net.SplitHostPort(listen); err == nil && host != "" {
		names[strings.ToLower(host)] = true
	}
	for _, a := range allowed {
		names[strings.ToLower(strings.TrimSuffix(a, "."))] = true
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := r.URL.Path
		if p == "/healthz" || p == "/readyz" || strings.HasPrefix(p, "/replication/") || hostAllowed(r.Host, names) {
			h.ServeHTTP(w, r)
			return
		}
		writeJSON(w, http.StatusMisdirectedRequest, apiError{"Host " + strconv.Quote(r.Host) + " is not a name of this server: add it to http.allowedHosts, or use its IP address or localhost"})
	})
}

// hostAllowed reports whether the Host header host (with or without a
// port) is an IP literal or one of names.
func hostAllowed(host string, names map[string]bool) bool {
	if host == "" {
		return true // HTTP/1.0 without Host: no browser sends that
	}
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"), ".")
	if _, err := netip.ParseAddr(host); err == nil {
		return true
	}
	return names[strings.ToLower(host)]
}
