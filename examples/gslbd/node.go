package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gslbkit/gslb/provider/dnssec"
	"github.com/gslbkit/gslb/provider/memory"
	"github.com/gslbkit/gslb/provider/replication"
)

// node is gslbd's node mode: it never probes. A replication.Replica follows the
// controller's replication endpoints into a local zone (a snapshot first,
// then the changes since its version on every interval, at once on a
// notify), which the embedded DNS server answers from. Records its own
// config lists with a per-query answer kind (and the geo block) get the
// same answer hooks as on the controller, choosing among the replicated
// addresses, and on every interval the node compares that answer config
// with the controller's (checkAnswers) and says what differs. While the
// controller is unreachable the node keeps serving
// its last good copy; after
// the node block's degradedAfter missed syncs (default 2) it reports itself degraded on
// /readyz, in the /healthz body and in gslbkit_replica_degraded (/healthz
// itself stays 200: the node still answers).
type node struct {
	cfg     Config
	log     *slog.Logger
	met     *metrics
	zone    *memory.Provider
	replica *replication.Replica
	notify  *replication.Handler
	// answers is the answer kind of each name the node answers per query
	// (its config's records with a per-query kind), within that of those
	// with a within; fixed.
	answers, within map[string]string
	// client fetches from the controller; own is this config's answer
	// digest, compared with the controller's (checkAnswers).
	client *http.Client
	own    answerDigest

	// steer holds the node's latency and loadShed tables, copied from the
	// controller's (GET /replication/steering) after every sync; steerKick
	// asks for a copy.
	steer     *steering
	steerKick chan struct{}

	mu        sync.Mutex
	check     answersCheckView // the last comparison
	steeredAt time.Time        // the last copy of the steering data (zero: none yet)
	steerErr  error            // why the last copy failed, if it did
}

// answersCheckView is how a node's per-query answers compare with its
// controller's config (GET /replication/answers), checked on every sync
// interval. A difference is a warning, not a readiness problem: the node
// still answers only the addresses the controller published, and taking
// every node that lags out of service would be an outage.
type answersCheckView struct {
	// CheckedAt is when the controller last answered (absent: not yet).
	CheckedAt *time.Time `json:"checkedAt,omitempty"`
	// Same is true while the node answers every name as the controller's
	// config does.
	Same bool `json:"same"`
	// Differ lists the names answered differently (by kind, within,
	// weights or regions), or per query by only one side, and "geo" when
	// the geo blocks differ.
	Differ []string `json:"differ,omitempty"`
	// Error is why the last check failed, if it did.
	Error string `json:"error,omitempty"`
}

// newNode builds a node from a config that passed ValidateNode; client
// fetches from the controller (nil: http.DefaultClient). It starts nothing.
func newNode(cfg Config, client *http.Client, met *metrics, log *slog.Logger) (*node, error) {
	if client == nil {
		client = http.DefaultClient
	}
	n := &node{cfg: cfg, log: log, met: met, client: client, own: digestAnswers(cfg), steer: newSteering(), steerKick: make(chan struct{}, 1)}
	// A node signs with the key files it was given (dnssec.go): the
	// signer is the Provider's for the zone, whenever replication brings it.
	signer, err := newZoneSigner(cfg, cfg.Zone, met, log)
	if err != nil {
		return nil, err
	}
	mc := memory.DefaultConfig()
	if signer != nil {
		mc.Signers = []*dnssec.Signer{signer}
	}
	if n.zone, err = memory.New(mc); err != nil {
		return nil, err
	}
	watchSigner(n.zone, signer, cfg.Zone, met.ready)
	// Answer hooks do not travel with replication: the node registers
	// those of the records its own config lists with a per-query kind.
	kinds, err := installAnswersWith(n.zone, cfg, n.steer)
	if err != nil {
		return nil, err
	}
	n.answers, n.within = map[string]string{}, map[string]string{}
	for name, a := range kinds {
		if a.kind.perQuery() {
			n.answers[name] = string(a.kind)
		}
		if a.within != "" {
			n.within[name] = string(a.within)
		}
	}
	// The node logs the replica's events itself (logEvent), so the
	// Replica gets no logger of its own: each failed sync is said once.
	n.replica, err = replication.NewReplica(n.zone, cfg.Node, client, met.replicaObserver(n.logEvent), nil)
	if err != nil {
		return nil, err
	}
	if n.notify, err = replication.NewHandler(nil, cfg.Node.Auth, nil, n.replica.Notify); err != nil {
		return nil, err
	}
	met.ready.add("replica_not_synced", func(time.Time) (bool, string) {
		st := n.replica.Status()
		if st.Synced {
			return false, ""
		}
		if st.LastSync.IsZero() && !st.FromDisk {
			return true, "no copy of the zone yet from " + cfg.Node.URL + " (answering REFUSED)" + lastErr(st.LastErr)
		}
		// A change set was refused: the next sync takes a whole snapshot,
		// and until then the node answers the copy it has.
		return true, fmt.Sprintf("waiting for a whole snapshot from %s; answering its last good copy (version %d)", cfg.Node.URL, st.Version) + lastErr(st.LastErr)
	})
	met.ready.add("replica_source_untrusted", func(time.Time) (bool, string) {
		st := n.replica.Status()
		var re *replication.RejectError
		if !errors.As(st.LastErr, &re) {
			return false, ""
		}
		switch re.Reason {
		case replication.RejectUnsigned, replication.RejectForged:
			return true, fmt.Sprintf("forged or older source: the last reply from %s was not signed with the shared secret (%s); refused, serving the copy of version %d", cfg.Node.URL, re.Reason, st.Version) + lastErr(st.LastErr)
		case replication.RejectRollback:
			return true, fmt.Sprintf("forged or older source: %s served an older version of the copy's epoch; refused, serving the copy of version %d", cfg.Node.URL, st.Version) + lastErr(st.LastErr)
		}
		return false, ""
	})
	met.ready.add("replica_degraded", func(time.Time) (bool, string) {
		st := n.replica.Status()
		if !st.Synced || !st.Degraded {
			return false, ""
		}
		return true, fmt.Sprintf("missed %d syncs with %s; serving the copy of version %d synced at %s",
			st.Missed, cfg.Node.URL, st.Version, st.LastSync.UTC().Format(time.RFC3339)) + lastErr(st.LastErr)
	})
	met.ready.add("steering_not_copied", func(time.Time) (bool, string) {
		if !n.steer.steers() {
			return false, ""
		}
		n.mu.Lock()
		defer n.mu.Unlock()
		if !n.steeredAt.IsZero() {
			return false, "" // a failed copy keeps the last one: not a readiness problem
		}
		return true, "no copy yet of the latency and loadShed steps' data from " + cfg.Node.URL + " (those steps answer every address)" + lastErr(n.steerErr)
	})
	return n, nil
}

// Run follows the controller until ctx ends, and compares answer configs
// with it on every sync interval.
func (n *node) Run(ctx context.Context) error {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	wg.Go(func() {
		// The replica's defaults where the config left 0 (it reads 0 so).
		t := time.NewTicker(cmp.Or(n.cfg.Node.Interval, replication.DefaultReplicaConfig().Interval))
		defer t.Stop()
		for {
			n.checkAnswers(ctx)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	})
	if n.steer.steers() {
		wg.Go(func() {
			for {
				select {
				case <-ctx.Done():
					return
				case <-n.steerKick:
					n.copySteering(ctx)
				}
			}
		})
	}
	return n.replica.Run(ctx)
}

// checkAnswers fetches the controller's answer digest and compares it with
// the node's own; a change of outcome is logged once.
func (n *node) checkAnswers(ctx context.Context) {
	got, err := n.fetchAnswerDigest(ctx)
	if ctx.Err() != nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	prev := n.check
	if err != nil {
		n.check.Error = err.Error()
		if prev.Error != n.check.Error {
			n.log.Warn("cannot compare per-query answers with the controller's", "err", err)
		}
		return
	}
	now := time.Now().UTC()
	differ := n.own.differences(got)
	n.check = answersCheckView{CheckedAt: &now, Same: len(differ) == 0, Differ: differ}
	n.met.answersDiffer.Set(float64(len(differ)))
	switch {
	case len(differ) > 0 && !slices.Equal(differ, prev.Differ):
		n.log.Warn("per-query answers differ from the controller's config: give this node the controller's records and geo block", "differ", differ)
	case len(differ) == 0 && (len(prev.Differ) > 0 || prev.CheckedAt == nil):
		n.log.Info("per-query answers match the controller's config", "names", len(n.own.Names))
	}
}

// fetchAnswerDigest asks the controller for its answer digest.
func (n *node) fetchAnswerDigest(ctx context.Context) (answerDigest, error) {
	var d answerDigest
	u, err := n.fetchSigned(ctx, "answers", "answer digests", 4<<20, &d)
	if err != nil {
		return answerDigest{}, err
	}
	if d.Names == nil {
		return answerDigest{}, fmt.Errorf("GET %s: no names in the reply", u)
	}
	return d, nil
}

// copySteering copies the controller's steering data into the node's
// tables (GET /replication/steering). A failure keeps the last copy.
func (n *node) copySteering(ctx context.Context) {
	var v steeringView
	_, err := n.fetchSigned(ctx, "steering", "steering data", 1<<20, &v)
	if ctx.Err() != nil {
		return
	}
	if err == nil && (v.Latency == nil || v.Load == nil) {
		err = errors.New("GET steering: no latency or load in the reply")
	}
	n.mu.Lock()
	prev := n.steerErr
	n.steerErr = err
	if err == nil {
		n.steer.apply(v)
		n.steeredAt = time.Now()
	}
	n.mu.Unlock()
	if err != nil && (prev == nil || prev.Error() != err.Error()) {
		n.log.Warn("cannot copy the controller's steering data: the latency and loadShed steps keep the last copy", "err", err)
	}
}

// fetchSigned GETs the controller's replication endpoint, refuses a reply
// that is not signed with the shared secret or is over limit bytes, and
// decodes it into v; what names the endpoint's data in errors. It returns
// the URL asked.
func (n *node) fetchSigned(ctx context.Context, endpoint, what string, limit int64, v any) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, cmp.Or(n.cfg.Node.Timeout, replication.DefaultReplicaConfig().Timeout))
	defer cancel()
	u := strings.TrimSuffix(n.cfg.Node.URL, "/") + "/" + endpoint
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return u, err
	}
	nonce := n.cfg.Node.Auth.SignRequest(req) // never the secret itself
	resp, err := n.client.Do(req)
	if err != nil {
		return u, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4096))
		if resp.StatusCode == http.StatusNotFound {
			return u, fmt.Errorf("GET %s: 404: the controller is older than this node and does not serve %s", u, what)
		}
		return u, fmt.Errorf("GET %s: %s", u, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return u, fmt.Errorf("GET %s: %w", u, err)
	}
	if int64(len(body)) > limit {
		return u, fmt.Errorf("GET %s: the reply is over %d bytes", u, limit)
	}
	if !n.cfg.Node.Auth.VerifyReply(nonce, body, resp.Header.Get(replication.SignatureHeader)) {
		return u, fmt.Errorf("GET %s: the reply is unsigned or its signature does not verify with the shared secret: not the configured controller", u)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return u, fmt.Errorf("GET %s: %w", u, err)
	}
	return u, nil
}

// handler serves POST /replication/notify (shared secret), /healthz (200
// while serving; the body lists the problems /readyz reports) and /metrics.
func (n *node) handler() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("POST /replication/notify", n.notify)
	mux.HandleFunc("GET /{$}", n.statusPage)
	mux.HandleFunc("GET /api/status", n.statusPage)
	mux.HandleFunc("GET /api/openapi.yaml", serveOpenAPI)
	mux.Handle("GET /metrics", n.met.handler())
	mux.Handle("GET /readyz", n.met.ready.handler("node"))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		st := n.replica.Status()
		ps := n.met.ready.evaluate(time.Now())
		body := map[string]any{"status": "ok", "mode": "node", "ready": len(ps) == 0, "problems": ps,
			"synced": st.Synced, "degraded": st.Degraded, "version": st.Version, "missed": st.Missed, "lastSync": st.LastSync}
		if st.LastErr != nil {
			body["lastError"] = st.LastErr.Error()
		}
		writeJSON(w, http.StatusOK, body)
	})
	return mux
}

func (n *node) logEvent(e replication.ReplicaEvent) {
	switch e.Kind {
	case replication.ReplicaSynced:
		// Every sync (on the interval or a notify) copies the steering
		// data too, without holding up the replica.
		select {
		case n.steerKick <- struct{}{}:
		default:
		}
		if e.Changes > 0 || e.Full {
			n.log.Info("synced", "version", e.Version, "full", e.Full, "changes", e.Changes)
		}
	case replication.ReplicaSyncFailed:
		n.log.Warn("sync failed", "missed", e.Missed, "err", e.Err)
	case replication.ReplicaDegraded:
		n.log.Error("degraded: serving the last good copy", "missed", e.Missed, "version", e.Version)
	case replication.ReplicaRecovered:
		n.log.Info("recovered", "version", e.Version)
	}
}

// zoneServer is what the DNS server answers from.
func (n *node) zoneServer() zoneSource { return zoneSource{zone: n.zone, met: n.met} }

// lastErr formats an error for a problem's detail ("" for nil).
func lastErr(err error) string {
	if err == nil {
		return ""
	}
	return "; last error: " + err.Error()
}
