package main

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"net/http"
	"net/netip"
	"strings"
	"time"

	"github.com/libdns/libdns"

	"github.com/gslbkit/gslb/internal/dnsname"
	"github.com/gslbkit/gslb/probe"
)

// The controller's HTTP API:
//
//	GET  /api/records                                  every record, its addresses, states and statistics
//	GET  /api/records/{name}                           one record
//	POST /api/records/{name}/addresses/{ip}/drain      force the address critical (not permanent)
//	POST /api/records/{name}/addresses/{ip}/undrain    force it passing (not permanent)
//	POST /api/records/{name}/disable                   answer the failover FQDN (or nothing) until enabled
//	POST /api/records/{name}/enable
//	POST /api/notify                                   tell every configured node to sync now
//	GET  /replication/snapshot[?region=R]              for nodes; shared-secret header
//	GET  /replication/changes?since=V[&region=R]       for nodes; shared-secret header
//	GET  /metrics                                      Prometheus
//	GET  /healthz                                      liveness
func (c *controller) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/records", c.listRecords)
	mux.HandleFunc("GET /api/records/{name}", c.getRecord)
	mux.HandleFunc("POST /api/records/{name}/addresses/{ip}/{action}", c.authorized(c.addressAction))
	mux.HandleFunc("POST /api/records/{name}/{action}", c.authorized(c.recordAction))
	mux.HandleFunc("POST /api/notify", c.authorized(c.notifyNow))
	if c.repl != nil {
		mux.Handle("/replication/", c.repl)
	}
	mux.Handle("GET /metrics", c.met.handler())
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"status": "ok", "mode": "controller", "version": c.zone.Version()})
	})
	return mux
}

// authorized checks the API token, when one is configured, in constant time.
func (c *controller) authorized(h http.HandlerFunc) http.HandlerFunc {
	tok := c.cfg.HTTP.APIToken
	if tok == "" {
		return h
	}
	want := []byte("Bearer " + tok)
	return func(w http.ResponseWriter, r *http.Request) {
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			writeJSON(w, http.StatusUnauthorized, apiError{"missing or wrong API token"})
			return
		}
		h(w, r)
	}
}

type apiError struct {
	Error string `json:"error"`
}

// recordView is a record as the API shows it.
type recordView struct {
	Name      string        `json:"name"`
	TTL       Duration      `json:"ttl"`
	Failover  string        `json:"failover,omitempty"`
	Disabled  bool          `json:"disabled"`
	Answer    []string      `json:"answer"`
	Addresses []addressView `json:"addresses"`
}

// addressView is one address with its state and statistics.
type addressView struct {
	IP      string             `json:"ip"`
	Regions []string           `json:"regions,omitempty"`
	Weight  int                `json:"weight,omitempty"`
	State   probe.State        `json:"state"`
	Served  bool               `json:"served"`
	Stats   *probe.TargetStats `json:"stats,omitempty"`
}

func (c *controller) view(ctx context.Context, rs *recState) recordView {
	c.mu.Lock()
	v := recordView{Name: rs.spec.Name, TTL: rs.spec.TTL, Failover: rs.spec.Failover, Disabled: rs.disabled}
	for _, a := range rs.addrs {
		v.Addresses = append(v.Addresses, addressView{IP: a.ip.String(), Regions: a.spec.Regions, Weight: a.spec.Weight, State: a.state, Served: a.state.Served()})
	}
	c.mu.Unlock()
	for i := range v.Addresses {
		ip, _ := netip.ParseAddr(v.Addresses[i].IP)
		if st, ok := c.mon.Stats(targetID(rs.spec.Name, ip)); ok {
			v.Addresses[i].Stats = &st
		}
	}
	v.Answer = c.answer(ctx, rs.spec.Name)
	return v
}

// answer returns what the embedded zone holds at name (A, AAAA, CNAME).
func (c *controller) answer(ctx context.Context, name string) []string {
	recs, err := c.zone.GetRecords(ctx, c.cfg.Zone)
	if err != nil {
		return nil
	}
	out := []string{}
	for _, r := range recs {
		rr := r.RR()
		if !strings.EqualFold(libdns.AbsoluteName(rr.Name, c.cfg.Zone), name) {
			continue
		}
		switch rr.Type {
		case "A", "AAAA", "CNAME":
			out = append(out, rr.Type+" "+rr.Data)
		}
	}
	return out
}

func (c *controller) listRecords(w http.ResponseWriter, r *http.Request) {
	out := make([]recordView, 0, len(c.records))
	for _, rs := range c.records {
		out = append(out, c.view(r.Context(), rs))
	}
	writeJSON(w, http.StatusOK, out)
}

// lookup finds the record named in the request path (with or without the
// final dot, any case).
func (c *controller) lookup(w http.ResponseWriter, r *http.Request) *recState {
	name := dnsname.Fqdn(strings.ToLower(r.PathValue("name")))
	rs := c.byName[name]
	if rs == nil {
		writeJSON(w, http.StatusNotFound, apiError{"no record " + name})
	}
	return rs
}

func (c *controller) getRecord(w http.ResponseWriter, r *http.Request) {
	if rs := c.lookup(w, r); rs != nil {
		writeJSON(w, http.StatusOK, c.view(r.Context(), rs))
	}
}

func (c *controller) addressAction(w http.ResponseWriter, r *http.Request) {
	rs := c.lookup(w, r)
	if rs == nil {
		return
	}
	ip, err := netip.ParseAddr(r.PathValue("ip"))
	if err != nil {
		writeJSON(w, http.StatusBadRequest, apiError{"bad address: " + err.Error()})
		return
	}
	var to probe.State
	switch r.PathValue("action") {
	case "drain":
		to = probe.Critical
	case "undrain":
		to = probe.Passing
	default:
		writeJSON(w, http.StatusNotFound, apiError{"unknown action " + r.PathValue("action") + " (drain, undrain)"})
		return
	}
	if err := c.mon.Override(targetID(rs.spec.Name, ip.Unmap()), to); err != nil {
		code := http.StatusBadRequest
		if errors.Is(err, probe.ErrUnknownTarget) {
			code = http.StatusNotFound
		}
		writeJSON(w, code, apiError{err.Error()})
		return
	}
	c.log.Info("override", "record", rs.spec.Name, "address", ip.String(), "to", to.String())
	writeJSON(w, http.StatusOK, c.view(r.Context(), rs))
}

func (c *controller) recordAction(w http.ResponseWriter, r *http.Request) {
	rs := c.lookup(w, r)
	if rs == nil {
		return
	}
	var disable bool
	switch r.PathValue("action") {
	case "disable":
		disable = true
	case "enable":
	default:
		writeJSON(w, http.StatusNotFound, apiError{"unknown action " + r.PathValue("action") + " (enable, disable)"})
		return
	}
	c.mu.Lock()
	rs.disabled = disable
	c.mu.Unlock()
	c.log.Info("record", "record", rs.spec.Name, "disabled", disable)
	c.publish()
	writeJSON(w, http.StatusOK, c.view(r.Context(), rs))
}

func (c *controller) notifyNow(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	failed := c.notifyAll(ctx)
	writeJSON(w, http.StatusOK, map[string]int{"nodes": len(c.cfg.Replication.Notify), "failed": failed})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
