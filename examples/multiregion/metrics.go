package main

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"golang.org/x/net/netutil"

	"github.com/gslbkit/gslb/heartbeat"
)

// metrics are the heartbeat controller's metrics under the gslbkit_ prefix,
// fed by the heartbeat publishers' and readers' events. Every controller of
// the demo runs in this one process, so every series carries the
// controller's cluster as the "controller" label. A nil *metrics records
// nothing.
type metrics struct {
	reg         *prometheus.Registry
	clusterOK   *prometheus.GaugeVec
	regionOK    *prometheus.GaugeVec
	failingOver *prometheus.GaugeVec
	recovering  *prometheus.GaugeVec
	writes      *prometheus.CounterVec
}

func newMetrics() *metrics {
	m := &metrics{reg: prometheus.NewRegistry()}
	m.clusterOK = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "gslbkit_cluster_healthy",
		Help: "1 while the cluster's heartbeat in the scope is fresh in the controller's view, else 0.",
	}, []string{"controller", "scope", "cluster"})
	m.regionOK = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "gslbkit_region_healthy",
		Help: "1 while at least one cluster of the region has a fresh heartbeat in the scope, else 0.",
	}, []string{"controller", "scope", "region"})
	m.failingOver = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "gslbkit_failover_in_progress",
		Help: "1 while the region is unhealthy in the global scope and another region is healthy, so its traffic is served elsewhere.",
	}, []string{"controller", "region"})
	m.recovering = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "gslbkit_heartbeat_recovering_from_rate_limiting",
		Help: "1 while the controller's heartbeat in the scope relies on a self-heal beat because writes were throttled.",
	}, []string{"controller", "scope"})
	m.writes = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "gslbkit_heartbeat_writes_total",
		Help: "Heartbeat write attempts by scope and result (ok, throttled, error).",
	}, []string{"controller", "scope", "result"})
	m.reg.MustRegister(m.clusterOK, m.regionOK, m.failingOver, m.recovering, m.writes)
	return m
}

// observer returns the heartbeat observer of one controller's publisher
// and readers; nil when m is nil.
func (m *metrics) observer(controller string) heartbeat.Observer {
	if m == nil {
		return nil
	}
	for _, s := range []string{"local", "global"} {
		m.recovering.WithLabelValues(controller, s).Set(0)
		for _, r := range []string{"ok", "throttled", "error"} {
			m.writes.WithLabelValues(controller, s, r)
		}
	}
	return heartbeat.ObserverFunc(func(e heartbeat.Event) { m.observe(controller, e) })
}

func (m *metrics) observe(controller string, e heartbeat.Event) {
	switch e := e.(type) {
	case heartbeat.BeatWritten:
		m.writes.WithLabelValues(controller, e.Scope.String(), "ok").Inc()
	case heartbeat.WriteFailed:
		result := "error"
		if e.Throttled {
			result = "throttled"
		}
		m.writes.WithLabelValues(controller, e.Scope.String(), result).Inc()
	case heartbeat.RecoveringChanged:
		m.recovering.WithLabelValues(controller, e.Scope.String()).Set(b2f(e.Recovering))
	case heartbeat.ClusterChanged:
		if e.Forgotten {
			m.clusterOK.DeleteLabelValues(controller, e.Scope.String(), e.Status.Cluster)
			return
		}
		m.clusterOK.WithLabelValues(controller, e.Scope.String(), e.Status.Cluster).Set(b2f(e.Status.Fresh))
	case heartbeat.RegionChanged:
		if e.Gone {
			m.regionOK.DeleteLabelValues(controller, e.Scope.String(), e.Status.Region)
			return
		}
		m.regionOK.WithLabelValues(controller, e.Scope.String(), e.Status.Region).Set(b2f(e.Status.Healthy))
	case heartbeat.FailoverChanged:
		if e.Scope == heartbeat.Global {
			m.failingOver.WithLabelValues(controller, e.Region).Set(b2f(e.InProgress))
		}
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// listen binds addr for /metrics (port 0 picks a free one) and returns the
// listener, so the caller can print its address, and the function that
// serves until its context ends.
func (m *metrics) listen(addr string) (net.Listener, func(ctx context.Context) error, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, nil, err
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{}))
	srv := &http.Server{
		Handler:           mux,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second, // one route, answered at once: server-wide deadlines fit
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    16 << 10,
	}
	serve := func(ctx context.Context) error {
		done := make(chan struct{})
		go func() {
			defer close(done)
			<-ctx.Done()
			sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
			defer cancel()
			_ = srv.Shutdown(sctx)
		}()
		if err := srv.Serve(netutil.LimitListener(ln, 64)); !errors.Is(err, http.ErrServerClosed) {
			return err // the caller's context ends with it, and so does the goroutine
		}
		<-done
		return nil
	}
	return ln, serve, nil
}
