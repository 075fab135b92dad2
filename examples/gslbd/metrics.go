package main

import (
	"context"
	"fmt"
	"net/http"
	"sync/atomic"

	"github.com/miekg/dns"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/gslbkit/gslb/probe"
	"github.com/gslbkit/gslb/provider/dnsserver"
	"github.com/gslbkit/gslb/provider/replication"
	"github.com/gslbkit/gslb/record"
)

// metrics holds gslbd's Prometheus collectors, in a registry of its own
// (no global state): one per run.
type metrics struct {
	reg *prometheus.Registry

	probes       *prometheus.CounterVec
	probeSeconds prometheus.Histogram
	addrState    *prometheus.GaugeVec
	transitions  *prometheus.CounterVec
	heldStale    prometheus.Gauge
	writes       *prometheus.CounterVec
	provErrors   *prometheus.CounterVec
	readBack     *prometheus.CounterVec
	provLastOK   *prometheus.GaugeVec
	provFailing  *prometheus.GaugeVec
	dns          *dnsCollector
	syncs        *prometheus.CounterVec
	degraded     prometheus.Gauge

	stateSaveErrors prometheus.Counter
	startupHeld     prometheus.Gauge
	answersDiffer   prometheus.Gauge
	ready           *readiness
}

// states are the values of the state label of gslbkit_address_state.
var states = []probe.State{probe.Passing, probe.Warning, probe.Critical, probe.Recovery}

func newMetrics() *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	m.probes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "gslbkit_probes_total", Help: "Health probes finished, by result (pass, fail, fail-now).",
	}, []string{"result"})
	m.probeSeconds = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name: "gslbkit_probe_duration_seconds", Help: "Latency of health probes, passed or failed.",
		Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
	})
	m.addrState = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "gslbkit_address_state", Help: "1 for the state each address of each record is in, 0 for the others.",
	}, []string{"record", "address", "state"})
	m.transitions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "gslbkit_state_transitions_total", Help: "Address state changes, by from and to state.",
	}, []string{"from", "to"})
	m.heldStale = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "gslbkit_record_held_stale", Help: "Records kept at their last published answer because no address is healthy (keepLast: never empty).",
	})
	m.writes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "gslbkit_provider_writes_total", Help: "Write calls to the publishing provider, by result (ok, error).",
	}, []string{"result"})
	m.dns = newDNSCollector()
	m.provErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "gslbkit_provider_errors_total", Help: "Failed reads and writes of a publishing target (the provider, or embedded), by error class (throttled, transient, permanent).",
	}, []string{"provider", "class"})
	m.readBack = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "gslbkit_provider_readback_mismatches_total", Help: "Record sets a publishing target kept different from what was written, as the read-back after a write found them; result=conflict once the same set differed on consecutive applies and is held instead of rewritten.",
	}, []string{"provider", "result"})
	m.provLastOK = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "gslbkit_provider_last_success_timestamp_seconds", Help: "Unix time of the last reconcile of a publishing target that left nothing pending.",
	}, []string{"provider"})
	m.provFailing = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "gslbkit_provider_failing", Help: "1 while the last reconcile of a publishing target failed.",
	}, []string{"provider"})
	m.syncs = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "gslbkit_replica_syncs_total", Help: "Node mode: syncs with the controller, by result (ok, error).",
	}, []string{"result"})
	m.degraded = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "gslbkit_replica_degraded", Help: "Node mode: 1 while the node has missed too many syncs and serves its last good copy.",
	})
	m.stateSaveErrors = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "gslbd_state_save_errors_total", Help: "Controller: failed writes of the state file (operator intent, address states, last zone).",
	})
	m.answersDiffer = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "gslbd_node_answers_differ", Help: "Node mode: how many names (and the geo block) the node answers per query differently from its controller's config, by the last check.",
	})
	m.startupHeld = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "gslbd_startup_hold", Help: "Controller: 1 while the first publication waits for every address's first probe result.",
	})
	m.reg.MustRegister(m.probes, m.probeSeconds, m.addrState, m.transitions, m.heldStale, m.writes, m.provErrors, m.readBack, m.provLastOK, m.provFailing, m.dns, m.syncs, m.degraded,
		m.stateSaveErrors, m.startupHeld, m.answersDiffer)
	// The runtime's and the process's own: memory, goroutines, open
	// descriptors against their limit.
	m.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.ready = newReadiness(m.reg)
	return m
}

// handler serves /metrics.
func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{})
}

// counted wraps a prober so every result is counted and timed.
func (m *metrics) counted(p probe.Prober) probe.Prober {
	return probe.ProberFunc(func(ctx context.Context) probe.Result {
		r := p.Probe(ctx)
		m.probes.WithLabelValues(r.Status.String()).Inc()
		m.probeSeconds.Observe(r.Latency.Seconds())
		return r
	})
}

// setState marks the address's current state.
func (m *metrics) setState(rec, addr string, s probe.State) {
	for _, st := range states {
		v := 0.0
		if st == s {
			v = 1
		}
		m.addrState.WithLabelValues(rec, addr, st.String()).Set(v)
	}
}

// transition counts one state change.
func (m *metrics) transition(t probe.Transition) {
	m.transitions.WithLabelValues(t.From.String(), t.To.String()).Inc()
}

// dnsCollector exports the embedded DNS server's own counters
// (dnsserver.Server.Stats) when a scrape asks: replies by response code and
// the TCP connection table.
type dnsCollector struct {
	srv                                  atomic.Pointer[dnsserver.Server]
	queries, open, limit                 *prometheus.Desc
	accepted, evicted, refused, accFails *prometheus.Desc
	panics, pauses, tooBig               *prometheus.Desc
	rrl                                  *prometheus.Desc
}

func newDNSCollector() *dnsCollector {
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, labels, nil)
	}
	return &dnsCollector{
		queries:  d("gslbkit_dns_queries_total", "DNS queries answered by the embedded server, by response code.", "rcode"),
		open:     d("gslbkit_dns_tcp_connections", "TCP connections the embedded DNS server holds now."),
		limit:    d("gslbkit_dns_tcp_connections_limit", "The most TCP connections the embedded DNS server holds (dns.maxTCPConns or its default)."),
		accepted: d("gslbkit_dns_tcp_accepted_total", "TCP connections accepted by the embedded DNS server."),
		evicted:  d("gslbkit_dns_tcp_evicted_total", "TCP connections closed, idle longest, to make room at a full table."),
		refused:  d("gslbkit_dns_tcp_refused_total", "TCP connections closed at once: table full of busy connections, or the per-source limit."),
		accFails: d("gslbkit_dns_tcp_accept_errors_total", "Failed TCP accepts (out of descriptors, for instance), each followed by a back-off."),
		panics:   d("gslbkit_dns_panics_total", "Recovered panics while answering (bugs): where=\"server\" cost the query its reply, where=\"answer_hook\" answered with every record.", "where"),
		pauses:   d("gslbkit_dns_udp_pause_trials_total", "Trials of the UDP pause by the embedded server's UDP loops (made while a loop receives more than the pause's rate, 60,000 queries/s by default), by whether the trial chose to pause.", "chosen"),
		rrl:      d("gslbkit_dns_rrl_responses_total", "UDP answers by the response rate limiter's decision (dns.rrl): sent, dropped, or slipped (sent truncated, so a real client retries over TCP). Zero while RRL is off.", "action"),
		tooBig:   d("gslbkit_dns_udp_too_big_total", "UDP replies larger than the outgoing interface's MTU, sent truncated (the server never fragments) so the client retried over TCP; above zero, maxUDPSize is larger than the link carries."),
	}
}

// serve makes the collector report srv.
func (c *dnsCollector) serve(srv *dnsserver.Server) { c.srv.Store(srv) }

func (c *dnsCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.queries, c.open, c.limit, c.accepted, c.evicted, c.refused, c.accFails, c.panics, c.pauses, c.tooBig, c.rrl} {
		ch <- d
	}
}

func (c *dnsCollector) Collect(ch chan<- prometheus.Metric) {
	srv := c.srv.Load()
	if srv == nil {
		return
	}
	st := srv.Stats()
	for rc, n := range st.Responses {
		if n == 0 {
			continue
		}
		name, ok := dns.RcodeToString[rc]
		if !ok {
			name = fmt.Sprint(rc)
		}
		ch <- prometheus.MustNewConstMetric(c.queries, prometheus.CounterValue, float64(n), name)
	}
	ch <- prometheus.MustNewConstMetric(c.open, prometheus.GaugeValue, float64(st.TCPOpen))
	ch <- prometheus.MustNewConstMetric(c.limit, prometheus.GaugeValue, float64(st.TCPLimit))
	ch <- prometheus.MustNewConstMetric(c.accepted, prometheus.CounterValue, float64(st.TCPAccepted))
	ch <- prometheus.MustNewConstMetric(c.evicted, prometheus.CounterValue, float64(st.TCPEvicted))
	ch <- prometheus.MustNewConstMetric(c.refused, prometheus.CounterValue, float64(st.TCPRefused))
	ch <- prometheus.MustNewConstMetric(c.accFails, prometheus.CounterValue, float64(st.AcceptErrors))
	ch <- prometheus.MustNewConstMetric(c.panics, prometheus.CounterValue, float64(st.Panics), "server")
	ch <- prometheus.MustNewConstMetric(c.panics, prometheus.CounterValue, float64(st.HookPanics), "answer_hook")
	ch <- prometheus.MustNewConstMetric(c.pauses, prometheus.CounterValue, float64(st.UDPPauseChosen), "true")
	ch <- prometheus.MustNewConstMetric(c.pauses, prometheus.CounterValue, float64(st.UDPPauseTrials-st.UDPPauseChosen), "false")
	ch <- prometheus.MustNewConstMetric(c.tooBig, prometheus.CounterValue, float64(st.UDPTooBig))
	ch <- prometheus.MustNewConstMetric(c.rrl, prometheus.CounterValue, float64(st.RRL.Sent), "sent")
	ch <- prometheus.MustNewConstMetric(c.rrl, prometheus.CounterValue, float64(st.RRL.Dropped), "dropped")
	ch <- prometheus.MustNewConstMetric(c.rrl, prometheus.CounterValue, float64(st.RRL.Slipped), "slipped")
}

// reconcilerObserver turns the events of the reconciler publishing to name
// ("embedded" or the provider's type) into metrics; count says whether its
// writes are the publishing provider's.
func (m *metrics) reconcilerObserver(name string, count bool, log func(record.Event)) record.Observer {
	m.provFailing.WithLabelValues(name).Set(0)
	return record.ObserverFunc(func(e record.Event) {
		switch e := e.(type) {
		case record.ErrorEvent:
			m.provErrors.WithLabelValues(name, e.Class()).Inc()
			m.provFailing.WithLabelValues(name).Set(1)
		case record.ReadBackEvent:
			res := "differed"
			if e.Conflict {
				res = "conflict"
			}
			m.readBack.WithLabelValues(name, res).Inc()
		case record.AppliedEvent:
			m.provLastOK.WithLabelValues(name).Set(float64(e.At.UnixNano()) / 1e9)
			m.provFailing.WithLabelValues(name).Set(0)
		case record.WriteEvent:
			if count {
				res := "ok"
				if e.Err != nil {
					res = "error"
				}
				m.writes.WithLabelValues(res).Inc()
			}
		}
		if log != nil {
			log(e)
		}
	})
}

// replicaObserver turns a replica's events into metrics and logs.
func (m *metrics) replicaObserver(log func(replication.ReplicaEvent)) replication.ReplicaObserver {
	return replicaObserverFunc(func(e replication.ReplicaEvent) {
		switch e.Kind {
		case replication.ReplicaSynced:
			m.syncs.WithLabelValues("ok").Inc()
		case replication.ReplicaSyncFailed:
			m.syncs.WithLabelValues("error").Inc()
		case replication.ReplicaDegraded:
			m.degraded.Set(1)
		case replication.ReplicaRecovered:
			m.degraded.Set(0)
		}
		if log != nil {
			log(e)
		}
	})
}

type replicaObserverFunc func(replication.ReplicaEvent)

func (f replicaObserverFunc) Observe(e replication.ReplicaEvent) { f(e) }
