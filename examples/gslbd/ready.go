package main

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/gslbkit/gslb/provider/dnsserver"
	"github.com/prometheus/client_golang/prometheus"
)

// Liveness and readiness are kept apart. /healthz answers 200 while gslbd
// serves (a liveness probe that restarted it would drop the answers it
// still gives); everything that is wrong but does not stop it serving is a
// problem, listed by /readyz (503 while any is active), in the /healthz
// body and in gslbkit_problem / gslbkit_ready.

// problem is one reason gslbd is not ready.
type problem struct {
	// Name is stable, for alerts: dns_tcp_full, provider_failing, ...
	Name string `json:"name"`
	// Detail says what is wrong, in words.
	Detail string `json:"detail"`
	// Since is when the problem was first seen (this time).
	Since time.Time `json:"since"`
}

// checkFunc reports whether its problem is present now, and its detail.
type checkFunc func(now time.Time) (bool, string)

type namedCheck struct {
	name string
	f    checkFunc
}

// readiness evaluates the checks registered by the parts of gslbd and
// keeps the problems they report.
type readiness struct {
	gauge *prometheus.GaugeVec
	ready prometheus.Gauge

	mu     sync.Mutex
	checks []namedCheck
	active map[string]problem
	log    *slog.Logger
}

func newReadiness(reg *prometheus.Registry) *readiness {
	r := &readiness{active: map[string]problem{}, log: slog.New(slog.DiscardHandler)}
	r.gauge = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "gslbkit_problem", Help: "1 while the named problem is present (see /readyz), 0 otherwise.",
	}, []string{"problem"})
	r.ready = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "gslbkit_ready", Help: "1 while /readyz answers 200 (no problem present), 0 otherwise.",
	})
	r.ready.Set(1)
	reg.MustRegister(r.gauge, r.ready)
	return r
}

// add registers a check; its gauge starts at 0.
func (r *readiness) add(name string, f checkFunc) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.checks = append(r.checks, namedCheck{name, f})
	r.gauge.WithLabelValues(name).Set(0)
}

// evaluate runs every check and returns the problems present, by name.
// Appearing and clearing problems are logged.
func (r *readiness) evaluate(now time.Time) []problem {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.checks {
		on, detail := c.f(now)
		p, was := r.active[c.name]
		switch {
		case on && !was:
			p = problem{Name: c.name, Detail: detail, Since: now}
			r.log.Warn("not ready", "problem", c.name, "detail", detail)
		case on:
			p.Detail = detail
		case was:
			delete(r.active, c.name)
			r.log.Info("problem cleared", "problem", c.name, "since", p.Since)
		}
		if on {
			r.active[c.name] = p
			r.gauge.WithLabelValues(c.name).Set(1)
		} else {
			r.gauge.WithLabelValues(c.name).Set(0)
		}
	}
	out := make([]problem, 0, len(r.active))
	for _, p := range r.active {
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b problem) int { return cmp.Compare(a.Name, b.Name) })
	if len(out) == 0 {
		r.ready.Set(1)
	} else {
		r.ready.Set(0)
	}
	return out
}

// run evaluates the checks every second until ctx ends, so the metrics
// and the logs follow the problems without anyone asking /readyz.
func (r *readiness) run(ctx context.Context, log *slog.Logger) {
	r.mu.Lock()
	r.log = log
	r.mu.Unlock()
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		r.evaluate(time.Now())
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// handler serves /readyz: 200 {"status":"ready"} or 503 with the problems.
func (r *readiness) handler(mode string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		ps := r.evaluate(time.Now())
		if len(ps) == 0 {
			writeJSON(w, http.StatusOK, map[string]any{"status": "ready", "mode": mode, "problems": ps})
			return
		}
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"status": "not ready", "mode": mode, "problems": ps})
	}
}

// recent turns a counter into "it moved within the last window".
type recent struct {
	last  uint64
	moved time.Time
}

// update records the counter's value at now and reports whether it moved
// within window of now.
func (c *recent) update(now time.Time, v uint64, window time.Duration) bool {
	if v != c.last {
		c.last, c.moved = v, now
	}
	return !c.moved.IsZero() && now.Sub(c.moved) < window
}

// dnsWindow is how long a DNS overload signal (an eviction, a refusal, a
// failed accept) keeps its problem present after it was last seen.
const dnsWindow = 10 * time.Second

// addDNSChecks registers the DNS server's problems: its TCP connection
// table full (now, or connections evicted or refused in the last
// dnsWindow), and accepting failing (out of descriptors).
func (r *readiness) addDNSChecks(srv *dnsserver.Server) {
	var shed, acc recent
	r.add("dns_tcp_full", func(now time.Time) (bool, string) {
		st := srv.Stats()
		moved := shed.update(now, st.TCPEvicted+st.TCPRefused, dnsWindow)
		if !st.TCPFull() && !moved {
			return false, ""
		}
		return true, fmt.Sprintf("DNS TCP connection table full or shedding: %d of %d connections open, %d evicted and %d refused since start (raise dns.maxTCPConns or the descriptor limit, or find the client)",
			st.TCPOpen, st.TCPLimit, st.TCPEvicted, st.TCPRefused)
	})
	r.add("dns_tcp_accept_failing", func(now time.Time) (bool, string) {
		st := srv.Stats()
		if !acc.update(now, st.AcceptErrors, dnsWindow) {
			return false, ""
		}
		return true, fmt.Sprintf("accepting DNS TCP connections failed %d times since start, last within %v (out of descriptors?)", st.AcceptErrors, dnsWindow)
	})
}
