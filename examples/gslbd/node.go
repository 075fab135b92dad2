package main

import (
	"context"
	"log/slog"
	"net/http"

	"github.com/gslbkit/gslb/provider/memory"
)

// node is gslbd's node mode: it never probes. A memory.Replica follows the
// controller's replication endpoints into a local zone (a snapshot first,
// then the changes since its version on every interval, at once on a
// notify), which the embedded DNS server answers from. While the controller
// is unreachable the node keeps serving its last good copy; after
// node.degradedAfter missed syncs (default 2) it reports itself degraded on
// /healthz and in gslbkit_replica_degraded.
type node struct {
	cfg     Config
	log     *slog.Logger
	met     *metrics
	zone    *memory.Provider
	replica *memory.Replica
	notify  *memory.Handler
}

// newNode builds a node from a config that passed ValidateNode; client
// fetches from the controller (nil: http.DefaultClient). It starts nothing.
func newNode(cfg Config, client *http.Client, met *metrics, log *slog.Logger) (*node, error) {
	n := &node{cfg: cfg, log: log, met: met}
	var err error
	if n.zone, err = memory.New(memory.DefaultConfig()); err != nil {
		return nil, err
	}
	// The node logs the replica's events itself (logEvent), so the
	// Replica gets no logger of its own: each failed sync is said once.
	n.replica, err = memory.NewReplica(n.zone, cfg.Node, client, met.replicaObserver(n.logEvent), nil)
	if err != nil {
		return nil, err
	}
	if n.notify, err = memory.NewHandler(nil, cfg.Node.Auth, nil, n.replica.Notify); err != nil {
		return nil, err
	}
	return n, nil
}

// Run follows the controller until ctx ends.
func (n *node) Run(ctx context.Context) error { return n.replica.Run(ctx) }

// handler serves POST /replication/notify (shared secret), /healthz (503
// while degraded or before the first sync) and /metrics.
func (n *node) handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("POST /replication/notify", n.notify)
	mux.HandleFunc("GET /{$}", n.statusPage)
	mux.HandleFunc("GET /api/status", n.statusPage)
	mux.HandleFunc("GET /api/openapi.yaml", serveOpenAPI)
	mux.Handle("GET /metrics", n.met.handler())
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		st := n.replica.Status()
		code := http.StatusOK
		status := "ok"
		switch {
		case !st.Synced:
			code, status = http.StatusServiceUnavailable, "not synced"
		case st.Degraded:
			code, status = http.StatusServiceUnavailable, "degraded"
		}
		body := map[string]any{"status": status, "mode": "node", "version": st.Version, "missed": st.Missed, "lastSync": st.LastSync}
		if st.LastErr != nil {
			body["lastError"] = st.LastErr.Error()
		}
		writeJSON(w, code, body)
	})
	return mux
}

func (n *node) logEvent(e memory.ReplicaEvent) {
	switch e.Kind {
	case memory.ReplicaSynced:
		if e.Changes > 0 || e.Full {
			n.log.Info("synced", "version", e.Version, "full", e.Full, "changes", e.Changes)
		}
	case memory.ReplicaSyncFailed:
		n.log.Warn("sync failed", "missed", e.Missed, "err", e.Err)
	case memory.ReplicaDegraded:
		n.log.Error("degraded: serving the last good copy", "missed", e.Missed, "version", e.Version)
	case memory.ReplicaRecovered:
		n.log.Info("recovered", "version", e.Version)
	}
}

// zoneServer is what the DNS server answers from.
func (n *node) zoneServer() zoneSource { return zoneSource{zone: n.zone, met: n.met} }
