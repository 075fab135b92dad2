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
//	GET  /                                             the status page (HTML)
//	GET  /api/status                                   the status page's data
//	GET  /api/openapi.yaml                             this API, described in OpenAPI 3
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
	mux.HandleFunc("GET /{$}", c.statusPage)
	mux.HandleFunc("GET /api/status", c.statusPage)
	mux.HandleFunc("GET /api/openapi.yaml", serveOpenAPI)
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

// notifyView is the answer to POST /api/notify: 200 when every node took
// the notify, 502 with each node's result when any did not.
type notifyView struct {
	Nodes   int            `json:"nodes"`
	Failed  int            `json:"failed"`
	Results []notifyResult `json:"results"`
}

func (c *controller) view(ctx context.Context, rs *recState) recordView {
	c.mu.Lock()
	v := recordView{Name: rs.spec.Name, TTL: rs.spec.TTL.String(), Failover: rs.spec.Failover, Disabled: rs.disabled, Addresses: []addressView{}}
	ids := make([]string, 0, len(rs.addrs))
	for _, a := range rs.addrs {
		v.Addresses = append(v.Addresses, addressView{IP: a.ip.String(), ProbeAddr: probeAddr(a.spec, a.ip), Regions: a.spec.Regions,
			Weight: a.spec.Weight, State: a.state.String(), Served: a.state.Served()})
		ids = append(ids, a.id)
	}
	c.mu.Unlock()
	if rs.disabled {
		v.DisabledSince = c.st.disabledSince(rs.spec.Name)
	}
	for i := range v.Addresses {
		a := &v.Addresses[i]
		a.Intent = c.st.intent(ids[i])
		if st, ok := c.mon.Stats(ids[i]); ok {
			a.fillStats(st)
		}
		// A drain holds while it keeps the address out of answers.
		if a.Served {
			a.Intent.Drained = false
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
	c.st.action(targetID(rs.spec.Name, ip.Unmap()), r.PathValue("action"), clientOf(r), time.Now().UTC())
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
	c.st.recordDisabled(rs.spec.Name, disable, time.Now().UTC())
	c.log.Info("record", "record", rs.spec.Name, "disabled", disable)
	c.publish()
	writeJSON(w, http.StatusOK, c.view(r.Context(), rs))
}

func (c *controller) notifyNow(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	res := c.notifyAll(ctx)
	failed := 0
	for _, r := range res {
		if !r.OK {
			failed++
		}
	}
	code := http.StatusOK
	if failed > 0 {
		code = http.StatusBadGateway // a partial failure is not a success
	}
	writeJSON(w, code, notifyView{Nodes: len(res), Failed: failed, Results: res})
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}
