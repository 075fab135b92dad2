package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/gslbkit/gslb/failover"
	"github.com/gslbkit/gslb/heartbeat"
)

// metrics are the heartbeat controller's metrics under the gslbkit_ prefix
// (the same names as examples/multiregion, without its controller label:
// one process is one replica), and the replica's own.
type metrics struct {
	reg         *prometheus.Registry
	clusterOK   *prometheus.GaugeVec
	regionOK    *prometheus.GaugeVec
	failingOver *prometheus.GaugeVec
	recovering  *prometheus.GaugeVec
	writes      *prometheus.CounterVec
	leader      prometheus.Gauge
	gatewayOK   *prometheus.GaugeVec
	fenced      prometheus.Counter
	recordErrs  *prometheus.CounterVec
	globalCNAME *prometheus.GaugeVec
}

func newMetrics() *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	m.clusterOK = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "gslbkit_cluster_healthy",
		Help: "1 while the cluster's heartbeat in the scope is fresh in this controller's view, else 0."}, []string{"scope", "cluster"})
	m.regionOK = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "gslbkit_region_healthy",
		Help: "1 while at least one cluster of the region has a fresh heartbeat in the scope, else 0."}, []string{"scope", "region"})
	m.failingOver = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "gslbkit_failover_in_progress",
		Help: "1 while the region is unhealthy in the global scope and another region is healthy."}, []string{"region"})
	m.recovering = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "gslbkit_heartbeat_recovering_from_rate_limiting",
		Help: "1 while this controller's heartbeat in the scope relies on a self-heal beat because writes were throttled."}, []string{"scope"})
	m.writes = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gslbkit_heartbeat_writes_total",
		Help: "Heartbeat write attempts by scope and result (ok, throttled, error)."}, []string{"scope", "result"})
	m.leader = prometheus.NewGauge(prometheus.GaugeOpts{Name: "gslbkit_leader",
		Help: "1 while this replica holds the cluster's Lease and writes, else 0."})
	m.gatewayOK = prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "gslbkit_gateway_healthy",
		Help: "1 while the gateway's gate passes (leader only), else 0."}, []string{"gateway"})
	m.fenced = prometheus.NewCounter(prometheus.CounterOpts{Name: "gslbkit_writes_fenced_total",
		Help: "Writes of this replica the store refused because a newer leader wrote with a higher fencing token."})
	m.recordErrs = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "gslbkit_record_errors_total",
		Help: "The record reconciler's failed provider calls by class."}, []string{"class"})
	m.reg.MustRegister(m.clusterOK, m.regionOK, m.failingOver, m.recovering, m.writes, m.leader, m.gatewayOK, m.fenced, m.recordErrs)
	for _, s := range []string{"local", "global"} {
		m.recovering.WithLabelValues(s).Set(0)
		for _, r := range []string{"ok", "throttled", "error"} {
			m.writes.WithLabelValues(s, r)
		}
	}
	return m
}

func (m *metrics) observer() heartbeat.Observer {
	return heartbeat.ObserverFunc(m.observe)
}

func (m *metrics) observe(e heartbeat.Event) {
	switch e := e.(type) {
	case heartbeat.BeatWritten:
		m.writes.WithLabelValues(e.Scope.String(), "ok").Inc()
	case heartbeat.WriteFailed:
		result := "error"
		if e.Throttled {
			result = "throttled"
		}
		m.writes.WithLabelValues(e.Scope.String(), result).Inc()
	case heartbeat.RecoveringChanged:
		m.recovering.WithLabelValues(e.Scope.String()).Set(b2f(e.Recovering))
	case heartbeat.ClusterChanged:
		if e.Forgotten {
			m.clusterOK.DeleteLabelValues(e.Scope.String(), e.Status.Cluster)
			return
		}
		m.clusterOK.WithLabelValues(e.Scope.String(), e.Status.Cluster).Set(b2f(e.Status.Fresh))
	case heartbeat.RegionChanged:
		if e.Gone {
			m.regionOK.DeleteLabelValues(e.Scope.String(), e.Status.Region)
			return
		}
		m.regionOK.WithLabelValues(e.Scope.String(), e.Status.Region).Set(b2f(e.Status.Healthy))
	case heartbeat.FailoverChanged:
		if e.Scope == heartbeat.Global {
			m.failingOver.WithLabelValues(e.Region).Set(b2f(e.InProgress))
		}
	}
}

func (m *metrics) leading(b bool)       { m.leader.Set(b2f(b)) }
func (m *metrics) leaderSeen(bool)      {}
func (m *metrics) fencedWrite()         { m.fenced.Inc() }
func (m *metrics) recordError(c string) { m.recordErrs.WithLabelValues(c).Inc() }
func (m *metrics) gateway(key string, ok bool) {
	m.gatewayOK.WithLabelValues(key).Set(b2f(ok))
}
func (m *metrics) decision(failover.Decision) {}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// problems are the reasons /readyz gives, by name, with a detail and since
// when. Safe for concurrent use.
type problems struct {
	mu sync.Mutex
	m  map[string]problem
}

type problem struct {
	Name   string    `json:"name"`
	Detail string    `json:"detail"`
	Since  time.Time `json:"since"`
}

func newProblems() *problems { return &problems{m: map[string]problem{}} }

func (p *problems) set(name, detail string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	old, ok := p.m[name]
	if !ok {
		old.Since = time.Now()
	}
	p.m[name] = problem{Name: name, Detail: detail, Since: old.Since}
}

func (p *problems) clear(name string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	delete(p.m, name)
}

func (p *problems) list() []problem {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := make([]problem, 0, len(p.m))
	for _, v := range p.m {
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// httpHandler serves /metrics, /healthz (liveness: 200 while the process
// serves, the body listing the current problems) and /readyz (200, or 503
// with every problem's name, detail and since).
func (r *replica) httpHandler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(r.met.reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		r.refreshProblems()
		writeProblems(w, http.StatusOK, r.problems.list())
	})
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, _ *http.Request) {
		r.refreshProblems()
		ps := r.problems.list()
		code := http.StatusOK
		if len(ps) > 0 {
			code = http.StatusServiceUnavailable
		}
		writeProblems(w, code, ps)
	})
	return mux
}

// refreshProblems brings the problems that are read, not reported, up to
// date: the caches' sync and the watch.
func (r *replica) refreshProblems() {
	if r.w.hasSynced() {
		r.problems.clear("not_synced")
	} else {
		r.problems.set("not_synced", "the informers' caches are not filled yet")
	}
	if msg, since, bad := r.w.watchProblem(time.Now()); bad {
		r.problems.set("api_unreachable", fmt.Sprintf("since %s: %s", since.Format(time.RFC3339), msg))
	} else {
		r.problems.clear("api_unreachable")
	}
}

func writeProblems(w http.ResponseWriter, code int, ps []problem) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	names := make([]string, len(ps))
	for i, p := range ps {
		names[i] = p.Name
	}
	_ = json.NewEncoder(w).Encode(struct {
		Status   string    `json:"status"`
		Problems []problem `json:"problems"`
	}{map[bool]string{true: "ok", false: strings.Join(names, ",")}[len(ps) == 0], ps})
}
