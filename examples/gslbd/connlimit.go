package main

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The HTTP listener holds at most maxConns connections (http.maxConns, by
// default derived from the descriptor limit: see httpMaxConns) plus
// reserveConns reserved for /healthz and /readyz. A new connection at a
// full table takes the place of the connection idle longest (a keep-alive
// connection between requests), which is closed; when every connection is
// busy it takes a reserved slot, where it may ask /healthz or /readyz once
// within reservedLifetime (anything else is answered 503) before it is
// closed; when every reserved slot is taken, the reserved connection
// accepted longest ago that is not being answered now (a slow client, or
// one already answered) is closed to make room; while the only others were
// accepted less than unreadGrace ago and not read yet, it waits for them to
// be read (at most admitWait), and only when all of them are being
// answered (a request head arrived whole) is the new one closed at once. So
// idle, slow or busy clients can neither hold the port (a kubelet liveness
// probe is answered) nor take more descriptors than their share.
//
// A connection not read from yet (accepted, no byte of it read: the
// listener's connections note their first read), or whose request began
// less than unreadGrace ago, is not known busy: after a stall (a loaded host) gslbd accepts a backlog
// faster than it reads the connections, and treating those as busy sent
// every later arrival to the reserved slots, each closing the one accepted
// longest ago, a fresh /healthz client among them, before it was read
// (reset). So a new connection at a full table with nothing idle waits
// (its successors in the kernel's backlog) while such connections are
// younger than unreadGrace, at most admitWait; one not read after
// unreadGrace (a client that sends nothing) is evicted like an idle one.
const (
	reserveConns     = 8
	reservedLifetime = 3 * time.Second
	unreadGrace      = time.Second
	admitWait        = 500 * time.Millisecond
)

type connInfo struct {
	read     bool      // a byte was read from it (readConn)
	busy     time.Time // when its current request began (its first read, or StateActive)
	idle     bool
	since    time.Time // when it went idle
	reserved bool
	serving  bool        // a reserved connection's request arrived whole and is being answered (until the handler returns)
	at       time.Time   // when it was accepted
	timer    *time.Timer // closes a reserved connection
}

// connLimiter is a net.Listener that keeps the table above; its track
// method is the http.Server's ConnState hook, connContext its ConnContext.
type connLimiter struct {
	net.Listener
	max int

	mu      sync.Mutex
	conns   map[net.Conn]*connInfo
	n       int           // non-reserved connections in conns
	nres    int           // reserved ones
	changed chan struct{} // closed (and replaced) when a connection is read, goes idle or closes

	evicted, refused, reservedUsed atomic.Uint64
}

func newConnLimiter(ln net.Listener, max int) *connLimiter {
	return &connLimiter{Listener: ln, max: max, conns: map[net.Conn]*connInfo{}, changed: make(chan struct{})}
}

// Accept returns the next connection, making room for it as described.
func (l *connLimiter) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		rc := &readConn{Conn: c, l: l}
		if l.admit(rc) {
			return rc, nil
		}
		l.refused.Add(1)
		_ = c.Close()
	}
}

// admit places c in the table, evicting the connection idle longest if
// the table is full; false when there is no place for it at all. While the
// only candidates for eviction are connections not known busy yet (not
// read, or whose request began an instant ago), it waits for them, at most
// admitWait in all.
func (l *connLimiter) admit(c net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	var wait *time.Timer
	expired := false
	defer func() {
		if wait != nil {
			wait.Stop()
		}
	}()
	// waitChange waits, l.mu released, until a connection is read, goes
	// idle or closes, or admitWait has passed since the first wait.
	waitChange := func() {
		if wait == nil {
			wait = time.NewTimer(admitWait)
		}
		ch := l.changed
		l.mu.Unlock()
		select {
		case <-ch:
		case <-wait.C:
			expired = true
		}
		l.mu.Lock()
	}
	for {
		now := time.Now()
		if l.n >= l.max {
			// The connection idle longest, else the one waiting longest
			// for its first request past unreadGrace.
			var oldest, unread net.Conn
			var at, uat time.Time
			young := false
			for oc, ci := range l.conns {
				switch {
				case ci.reserved:
				case ci.idle:
					if oldest == nil || ci.since.Before(at) {
						oldest, at = oc, ci.since
					}
				case !ci.read && now.Sub(ci.at) >= unreadGrace:
					if unread == nil || ci.at.Before(uat) {
						unread, uat = oc, ci.at
					}
				case !ci.read, now.Sub(ci.busy) < unreadGrace:
					young = true // about to be read, or answered
				}
			}
			if oldest == nil {
				oldest = unread
			}
			if oldest == nil && young && !expired {
				// Connections accepted but not read yet, or whose request
				// began an instant ago: not known busy. Let them be read and
				// answered (idle) before taking a reserved slot.
				waitChange()
				continue
			}
			if oldest != nil {
				delete(l.conns, oldest)
				l.n--
				l.evicted.Add(1)
				_ = oldest.Close()
			}
		}
		if l.n < l.max {
			l.conns[c] = &connInfo{at: now}
			l.n++
			return true
		}
		if l.nres < reserveConns {
			break
		}
		// Every reserved slot taken: close the one accepted longest ago
		// that is not being answered, unless it was accepted an instant
		// ago and not read yet (as likely a probe as the newcomer, and
		// first): wait for those to be read.
		var slow net.Conn
		var at time.Time
		young := false
		for oc, ci := range l.conns {
			switch {
			case !ci.reserved || ci.serving:
			case ci.read || now.Sub(ci.at) >= unreadGrace:
				if slow == nil || ci.at.Before(at) {
					slow, at = oc, ci.at
				}
			default:
				young = true
			}
		}
		if slow == nil {
			if young && !expired {
				waitChange()
				continue
			}
			return false
		}
		l.conns[slow].timer.Stop()
		delete(l.conns, slow)
		l.nres--
		l.evicted.Add(1)
		_ = slow.Close()
		break
	}
	l.nres++
	l.reservedUsed.Add(1)
	l.conns[c] = &connInfo{reserved: true, at: time.Now(), timer: time.AfterFunc(reservedLifetime, func() { _ = c.Close() })}
	return true
}

// track is the http.Server's ConnState hook.
func (l *connLimiter) track(c net.Conn, st http.ConnState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ci := l.conns[c]
	if ci == nil {
		return
	}
	switch st {
	case http.StateIdle:
		ci.idle, ci.since = true, time.Now()
		l.wake()
	case http.StateActive:
		if ci.idle {
			ci.busy = time.Now()
		}
		ci.idle = false
	case http.StateClosed, http.StateHijacked:
		l.wake()
		delete(l.conns, c)
		if ci.reserved {
			ci.timer.Stop()
			l.nres--
		} else {
			l.n--
		}
	}
}

// readConn is a connection of the listener: its first read that returns
// bytes marks it read in the table, and a read that holds the end of a
// request head (an empty line) marks its request whole.
type readConn struct {
	net.Conn
	l     *connLimiter
	seen  atomic.Bool
	whole atomic.Bool
}

var headEnd = []byte("\r\n\r\n")

func (c *readConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 && !c.seen.Load() {
		c.seen.Store(true)
		c.l.markRead(c)
	}
	if n > 0 && !c.whole.Load() && bytes.Contains(p[:n], headEnd) {
		c.whole.Store(true)
		c.l.markWhole(c)
	}
	return n, err
}

// CloseWrite half-closes a TCP connection (the server's lingering close).
func (c *readConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

func (l *connLimiter) markRead(c net.Conn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if ci := l.conns[c]; ci != nil && !ci.read {
		ci.read, ci.busy = true, time.Now()
		l.wake()
	}
}

// markWhole notes that c's request head has arrived whole: a reserved
// connection is then being answered (serving), not a slow client, from
// before its handler runs (a newcomer accepted between the two must not
// close it); guard clears it once the answer is written.
func (l *connLimiter) markWhole(c net.Conn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if ci := l.conns[c]; ci != nil && ci.reserved {
		ci.serving = true
	}
}

// wake tells an admit waiting for a connection to be read that one
// changed. l.mu is held.
func (l *connLimiter) wake() {
	close(l.changed)
	l.changed = make(chan struct{})
}

type reservedKey struct{}

// connContext marks the requests of reserved connections.
func (l *connLimiter) connContext(ctx context.Context, c net.Conn) context.Context {
	l.mu.Lock()
	ci := l.conns[c]
	l.mu.Unlock()
	if ci != nil && ci.reserved {
		return context.WithValue(ctx, reservedKey{}, ci)
	}
	return ctx
}

// guard serves only /healthz and /readyz on reserved connections, and
// closes them after the answer.
func (l *connLimiter) guard(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ci, _ := r.Context().Value(reservedKey{}).(*connInfo)
		if ci == nil {
			h.ServeHTTP(w, r)
			return
		}
		l.mu.Lock()
		ci.serving, ci.read = true, true // read whole: no longer a slow client to evict
		l.mu.Unlock()
		defer func() {
			// Answered: the server still lingers before closing (it waits
			// for the client to close first), but the slot may go to the
			// next connection. Left "serving", eight answered clients that
			// keep their end open would make every fresh one refused.
			l.mu.Lock()
			ci.serving = false
			l.mu.Unlock()
		}()
		w.Header().Set("Connection", "close")
		if r.URL.Path == "/healthz" || r.URL.Path == "/readyz" {
			h.ServeHTTP(w, r)
			return
		}
		w.Header().Set("Retry-After", "1")
		writeJSON(w, http.StatusServiceUnavailable, apiError{"every HTTP connection is busy (http.maxConns): only /healthz and /readyz are served on the reserved ones; retry"})
	})
}

// counts returns the connections held now (non-reserved, reserved, idle).
func (l *connLimiter) counts() (n, reserved, idle int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, ci := range l.conns {
		if ci.idle {
			idle++
		}
	}
	return l.n, l.nres, idle
}

// register exports the limiter's figures on reg.
func (l *connLimiter) register(reg *prometheus.Registry) {
	reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "gslbkit_http_connections_limit", Help: "The most HTTP connections held at once (http.maxConns or its default from the descriptor limit), besides the reserved ones."},
			func() float64 { return float64(l.max) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "gslbkit_http_connections", Help: "HTTP connections held now, reserved ones (for /healthz and /readyz while every other is busy) included."},
			func() float64 { n, r, _ := l.counts(); return float64(n + r) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "gslbkit_http_connections_evicted_total", Help: "HTTP connections closed to make room for a new one: idle keep-alive ones (idle longest first), and reserved ones still without a request (waiting longest first)."},
			func() float64 { return float64(l.evicted.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "gslbkit_http_connections_reserved_total", Help: "HTTP connections given a reserved slot because every other was busy."},
			func() float64 { return float64(l.reservedUsed.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "gslbkit_http_connections_refused_total", Help: "HTTP connections closed at once: every slot, reserved ones included, busy."},
			func() float64 { return float64(l.refused.Load()) }),
	)
}
