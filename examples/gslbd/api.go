package main

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"io"
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
//	POST /api/records/{name}/addresses/{ip}/drain      keep the address out of answers until undrained (probing goes on)
//	POST /api/records/{name}/addresses/{ip}/undrain    serve it again when its probes say so
//	POST /api/records/{name}/disable                   answer the failover FQDN until enabled
//	POST /api/records/{name}/enable
//	POST /api/notify                                   tell every configured node to sync now
//	GET  /replication/snapshot[?region=R]              for nodes; shared-secret header
//	GET  /replication/changes?since=V[&region=R]       for nodes; shared-secret header
//	GET  /metrics                                      Prometheus
//	GET  /healthz                                      liveness: 200 while serving; the body lists problems
//	GET  /readyz                                       readiness: 503 with the problems while any is present
//
// The four actions take an optional JSON body {"by": "who", "reason": "why",
// "force": true, "expires": "2h"} (expires: drains only). A drain that would
// leave the record no served address, and a disable of a record without a
// failover name, are refused with 409 and the reason unless "force" is true.
// Every response is the record as it is after the action; with a stateDir
// the intent survives restarts.
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
	mux.Handle("GET /readyz", c.met.ready.handler("controller"))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		ps := c.met.ready.evaluate(time.Now())
		writeJSON(w, http.StatusOK, map[string]any{"status": "ok", "mode": "controller", "version": c.zone.Version(), "ready": len(ps) == 0, "problems": ps})
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
	if rs.disabled && rs.intent != nil && rs.intent.Disabled {
		at := rs.intent.At
		v.DisabledSince = &at
	}
	now := time.Now()
	ids := make([]string, 0, len(rs.addrs))
	for _, a := range rs.addrs {
		av := addressView{IP: a.ip.String(), ProbeAddr: probeAddr(a.spec, a.ip), Regions: a.spec.Regions,
			Weight: a.spec.Weight, State: a.state.String(), Served: a.servedLocked(now) && !rs.disabled}
		if a.drainedAt(now) {
			d := a.drain
			at := d.At
			av.Intent = intentView{Drained: true, Action: "drain", At: &at, By: d.By, Reason: d.Reason, Forced: d.Forced}
			if !d.Until.IsZero() {
				until := d.Until
				av.Intent.Until = &until
			}
		}
		v.Addresses = append(v.Addresses, av)
		ids = append(ids, a.id)
	}
	c.mu.Unlock()
	if v.DisabledSince == nil && rs.disabled {
		v.DisabledSince = c.st.disabledSince(rs.spec.Name)
	}
	for i := range v.Addresses {
		a := &v.Addresses[i]
		if !a.Intent.Drained {
			a.Intent = c.st.intent(ids[i]) // the last action, an undrain say
			a.Intent.Drained = false
		}
		if st, ok := c.mon.Stats(ids[i]); ok {
			a.fillStats(st)
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

// readAction reads an action's optional JSON body (and ?force=true).
func readAction(w http.ResponseWriter, r *http.Request) (actionRequest, bool) {
	var req actionRequest
	body, err := io.ReadAll(io.LimitReader(r.Body, 64<<10))
	if err != nil {
		writeJSON(w, http.StatusBadRequest, apiError{"reading the body: " + err.Error()})
		return req, false
	}
	if len(strings.TrimSpace(string(body))) > 0 {
		dec := json.NewDecoder(strings.NewReader(string(body)))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&req); err != nil {
			writeJSON(w, http.StatusBadRequest, apiError{"body: " + err.Error() + ` (allowed: {"by": "...", "reason": "...", "force": true, "expires": "2h"})`})
			return req, false
		}
	}
	if r.URL.Query().Get("force") == "true" {
		req.Force = true
	}
	if req.Expires < 0 {
		writeJSON(w, http.StatusBadRequest, apiError{"expires: allowed a positive duration such as \"2h\""})
		return req, false
	}
	if req.By == "" {
		req.By = clientOf(r)
	}
	return req, true
}

// actionDone answers an action: the record after it, or why it was refused.
func (c *controller) actionDone(w http.ResponseWriter, r *http.Request, rs *recState, err error) {
	var ref *refusal
	switch {
	case errors.As(err, &ref):
		writeJSON(w, http.StatusConflict, apiError{ref.why})
	case errors.Is(err, probe.ErrUnknownTarget):
		writeJSON(w, http.StatusNotFound, apiError{err.Error()})
	case err != nil:
		writeJSON(w, http.StatusBadRequest, apiError{err.Error()})
	default:
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
	var on bool
	switch r.PathValue("action") {
	case "drain":
		on = true
	case "undrain":
	default:
		writeJSON(w, http.StatusNotFound, apiError{"unknown action " + r.PathValue("action") + " (drain, undrain)"})
		return
	}
	a := c.byID[targetID(rs.spec.Name, ip.Unmap())]
	if a == nil {
		writeJSON(w, http.StatusNotFound, apiError{"record " + rs.spec.Name + " has no address " + ip.String()})
		return
	}
	req, ok := readAction(w, r)
	if !ok {
		return
	}
	what, err := c.setDrain(rs, a, on, req, time.Now().UTC())
	if err == nil {
		c.st.action(a.id, r.PathValue("action"), req.By, time.Now().UTC())
		c.log.Info("drain", "record", rs.spec.Name, "address", ip.String(), "drained", on, "by", req.By, "reason", req.Reason, "force", req.Force, "result", what)
	}
	c.actionDone(w, r, rs, err)
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
	req, ok := readAction(w, r)
	if !ok {
		return
	}
	what, err := c.setDisabled(rs, disable, req, time.Now().UTC())
	if err == nil {
		c.st.recordDisabled(rs.spec.Name, disable, time.Now().UTC())
		c.log.Info("record", "record", rs.spec.Name, "disabled", disable, "by", req.By, "reason", req.Reason, "force", req.Force, "result", what)
	}
	c.actionDone(w, r, rs, err)
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
