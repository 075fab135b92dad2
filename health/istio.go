package health

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// SyncStatus is the xDS sync status of one resource type of one proxy, as
// `istioctl proxy-status` reports it.
type SyncStatus uint8

const (
	// NotSent: the control plane has sent nothing of this type.
	NotSent SyncStatus = iota
	// Synced: the proxy acknowledged the latest version sent.
	Synced
	// Stale: something was sent that the proxy has not acknowledged.
	Stale
)

// String returns "SYNCED", "NOT SENT" or "STALE", as istioctl prints them.
func (s SyncStatus) String() string {
	switch s {
	case Synced:
		return "SYNCED"
	case Stale:
		return "STALE"
	}
	return "NOT SENT"
}

// xdsStatus decides one type's status from its nonces: NOT SENT when
// nothing was sent, SYNCED when the acknowledged nonce equals the sent one,
// STALE otherwise (including never acknowledged).
func xdsStatus(sent, acked string) SyncStatus {
	switch {
	case sent == "":
		return NotSent
	case sent == acked:
		return Synced
	}
	return Stale
}

// ProxyStatus is the sync status of one proxy for the four types a gateway
// needs: listeners (LDS), routes (RDS), clusters (CDS) and endpoints (EDS).
type ProxyStatus struct {
	// Proxy is the proxy's id, "<pod>.<namespace>".
	Proxy                                  string
	Listeners, Routes, Clusters, Endpoints SyncStatus
}

// Synced reports whether all four types are synced.
func (p ProxyStatus) Synced() bool {
	return p.Listeners == Synced && p.Routes == Synced && p.Clusters == Synced && p.Endpoints == Synced
}

// String lists the types that are not synced, or "all synced".
func (p ProxyStatus) String() string {
	var bad []string
	for _, t := range []struct {
		n string
		s SyncStatus
	}{{"LDS", p.Listeners}, {"RDS", p.Routes}, {"CDS", p.Clusters}, {"EDS", p.Endpoints}} {
		if t.s != Synced {
			bad = append(bad, t.n+" "+t.s.String())
		}
	}
	if len(bad) == 0 {
		return p.Proxy + ": all synced"
	}
	return p.Proxy + ": " + strings.Join(bad, ", ")
}

// syncz is one element of istiod's /debug/syncz array (the fields used).
type syncz struct {
	Proxy         string `json:"proxy"`
	ClusterSent   string `json:"cluster_sent"`
	ClusterAcked  string `json:"cluster_acked"`
	ListenerSent  string `json:"listener_sent"`
	ListenerAcked string `json:"listener_acked"`
	RouteSent     string `json:"route_sent"`
	RouteAcked    string `json:"route_acked"`
	EndpointSent  string `json:"endpoint_sent"`
	EndpointAcked string `json:"endpoint_acked"`
}

// MaxSyncz bounds the size of a /debug/syncz document ParseSyncz accepts.
const MaxSyncz = 64 << 20

// ParseSyncz parses istiod's `GET /debug/syncz` document: a JSON array with
// one object per connected proxy. Other fields are ignored. A document that
// is not such an array, or an element without a proxy id, is an error
// wrapping ErrSyncz.
func ParseSyncz(data []byte) ([]ProxyStatus, error) {
	if len(data) > MaxSyncz {
		return nil, fmt.Errorf("%w: document of %d bytes, allowed at most %d", ErrSyncz, len(data), MaxSyncz)
	}
	var raw []syncz
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSyncz, err)
	}
	out := make([]ProxyStatus, 0, len(raw))
	for i, r := range raw {
		if r.Proxy == "" {
			return nil, fmt.Errorf("%w: element %d has no proxy id", ErrSyncz, i)
		}
		out = append(out, ProxyStatus{
			Proxy:     r.Proxy,
			Listeners: xdsStatus(r.ListenerSent, r.ListenerAcked),
			Routes:    xdsStatus(r.RouteSent, r.RouteAcked),
			Clusters:  xdsStatus(r.ClusterSent, r.ClusterAcked),
			Endpoints: xdsStatus(r.EndpointSent, r.EndpointAcked),
		})
	}
	return out, nil
}

// ProxySelector picks a gateway's proxies among all of istiod's: those
// whose pod name starts with NamePrefix, in Namespace.
type ProxySelector struct {
	// NamePrefix is the pod-name prefix, e.g. "istio-ingressgateway-". Required.
	NamePrefix string `json:"namePrefix"`
	// Namespace is the pods' namespace, e.g. "istio-system". Required.
	Namespace string `json:"namespace"`
}

// Match reports whether proxy id "<pod>.<namespace>" is selected.
func (s ProxySelector) Match(proxy string) bool {
	i := strings.LastIndexByte(proxy, '.')
	if i < 0 {
		return false
	}
	return proxy[i+1:] == s.Namespace && strings.HasPrefix(proxy[:i], s.NamePrefix)
}

// Select returns the statuses of the selected proxies.
func (s ProxySelector) Select(all []ProxyStatus) []ProxyStatus {
	var out []ProxyStatus
	for _, p := range all {
		if s.Match(p.Proxy) {
			out = append(out, p)
		}
	}
	return out
}

// Verdict is healthy when at least one proxy is selected and every selected
// proxy has all four types synced; the signal names the first that is not.
func (s ProxySelector) Verdict(all []ProxyStatus) Signal {
	sel := s.Select(all)
	if len(sel) == 0 {
		return Fail("no proxy %s*.%s connected to istiod", s.NamePrefix, s.Namespace)
	}
	for _, p := range sel {
		if !p.Synced() {
			return Fail("%s", p.String())
		}
	}
	return Signal{Healthy: true}
}

// IstioSync is the proxy-config-sync signal fed from istiod's debug
// endpoint: Poll fetches `GET <BaseURL>/debug/syncz` (istiod's debug port,
// 15014) and keeps the verdict for Check; Run polls on an interval. A fetch
// that fails makes the signal unhealthy (the sync cannot be shown). Safe for
// concurrent use. The Gate gives this check its 3-pass recovery.
type IstioSync struct {
	// BaseURL is istiod's debug address, e.g. "http://istiod.istio-system:15014".
	BaseURL string
	// Selector picks the gateway's proxies.
	Selector ProxySelector
	// Client makes the requests; nil means http.DefaultClient.
	Client *http.Client
	// Interval is Run's polling interval; 0 means 10s.
	Interval time.Duration

	mu      sync.Mutex
	last    Signal
	have    bool
	running atomic.Bool
}

// Poll fetches the document once and updates the signal.
func (s *IstioSync) Poll(ctx context.Context) error {
	sig, err := s.fetch(ctx)
	s.mu.Lock()
	s.last, s.have = sig, true
	s.mu.Unlock()
	return err
}

func (s *IstioSync) fetch(ctx context.Context) (Signal, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(s.BaseURL, "/")+"/debug/syncz", nil)
	if err != nil {
		return Fail("syncz request: %v", err), err
	}
	c := s.Client
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		return Fail("syncz: %v", err), err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		err := fmt.Errorf("%w: status %d", ErrSyncz, resp.StatusCode)
		return Fail("syncz: status %d", resp.StatusCode), err
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, MaxSyncz+1))
	if err != nil {
		return Fail("syncz: %v", err), err
	}
	all, err := ParseSyncz(body)
	if err != nil {
		return Fail("%v", err), err
	}
	return s.Selector.Verdict(all), nil
}

// Check returns the last poll's verdict (unhealthy before the first poll).
func (s *IstioSync) Check(time.Time) Signal {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.have {
		return Fail("proxy sync not polled yet")
	}
	return s.last
}

// Run polls at once and then every Interval until ctx is done; it returns
// nil then. Fetch errors are kept in the signal, not returned.
func (s *IstioSync) Run(ctx context.Context) error {
	if !s.running.CompareAndSwap(false, true) {
		return ErrRunning
	}
	defer s.running.Store(false)
	iv := s.Interval
	if iv <= 0 {
		iv = 10 * time.Second
	}
	t := time.NewTicker(iv)
	defer t.Stop()
	for {
		_ = s.Poll(ctx)
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
	}
}
