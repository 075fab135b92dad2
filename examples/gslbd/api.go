package main

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
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
//	GET  /api/explain?name=N[&type=A|AAAA][&client=C]   why a client gets its answer (explain.go)
//	POST /api/records/{name}/addresses/{ip}/drain      keep the address out of answers until undrained (probing goes on)
//	POST /api/records/{name}/addresses/{ip}/undrain    serve it again when its probes say so
//	POST /api/records/{name}/disable                   answer the failover FQDN until enabled
//	POST /api/records/{name}/enable
//	POST /api/notify                                   tell every configured node to sync now
//	GET  /api/load                                     the load of every loadShed pool
//	PUT  /api/load/{pool}                              set a loadShed pool's load: {"load": 0.93}
//	GET  /replication/snapshot[?region=R]              for nodes; shared-secret header
//	GET  /replication/changes?since=V[&region=R]       for nodes; shared-secret header
//	GET  /replication/answers                          for nodes: digests of the per-query answer config; shared-secret header
//	GET  /replication/steering                         for nodes: the latency steps' state and the pools' load; shared-secret header
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
	read := func(h http.HandlerFunc) http.HandlerFunc { return h }
	if c.cfg.HTTP.ProtectReads {
		read = func(h http.HandlerFunc) http.HandlerFunc { return tokenOnly(c.cfg.HTTP.APIToken, h) }
	}
	mux.HandleFunc("GET /{$}", read(c.statusPage))
	mux.HandleFunc("GET /api/status", read(c.statusPage))
	mux.HandleFunc("GET /api/openapi.yaml", read(serveOpenAPI))
	mux.HandleFunc("GET /api/records", read(c.listRecords))
	mux.HandleFunc("GET /api/records/{name}", read(c.getRecord))
	mux.HandleFunc("GET /api/explain", read(c.explain))
	mux.HandleFunc("GET /api/load", read(c.listLoad))
	if !c.cfg.HTTP.DisableAPI {
		mux.HandleFunc("PUT /api/load/{pool}", c.authorized(c.putLoad))
		mux.HandleFunc("POST /api/records/{name}/addresses/{ip}/{action}", c.authorized(c.addressAction))
		mux.HandleFunc("POST /api/records/{name}/{action}", c.authorized(c.recordAction))
		mux.HandleFunc("POST /api/notify", c.authorized(c.notifyNow))
	}
	if c.repl != nil {
		mux.Handle("/replication/", c.gateReplication(c.repl))
		ra := c.cfg.Replication.auth()
		mux.HandleFunc("GET /replication/answers", func(w http.ResponseWriter, r *http.Request) {
			if !ra.VerifyRequest(r) {
				writeJSON(w, http.StatusUnauthorized, apiError{"missing or wrong replication secret or MAC"})
				return
			}
			ra.WriteSignedJSON(w, r, c.answerDigest)
		})
		mux.Handle("GET /replication/steering", c.gateReplication(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !ra.VerifyRequest(r) {
				writeJSON(w, http.StatusUnauthorized, apiError{"missing or wrong replication secret or MAC"})
				return
			}
			ra.WriteSignedJSON(w, r, c.steer.view())
		})))
	}
	mux.HandleFunc("GET /metrics", read(c.met.handler().ServeHTTP))
	mux.Handle("GET /readyz", c.met.ready.handler("controller"))
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		ps := c.met.ready.evaluate(time.Now())
		writeJSON(w, http.StatusOK, map[string]any{"status": "ok", "mode": "controller", "version": c.zone.Version(), "ready": len(ps) == 0, "problems": ps})
	})
	return mux
}

// authorized guards a request that changes something. With a token it
// must carry "Authorization: Bearer <token>", compared in constant time
// as SHA-256 digests (which reveals neither the token nor its length).
// Without one the API is closed to everything but a local client: the
// connection must have reached a loopback listener, with
// "Content-Type: application/json" (a cross-site form cannot send it
// without a preflight, which gslbd never answers), a Host naming the
// listener (against DNS rebinding) and no foreign Origin.
func (c *controller) authorized(h http.HandlerFunc) http.HandlerFunc {
	tok := c.cfg.HTTP.APIToken
	if tok != "" {
		return tokenOnly(tok, h)
	}
	return func(w http.ResponseWriter, r *http.Request) {
		if code, why := localOnly(r); code != 0 {
			writeJSON(w, code, apiError{why})
			return
		}
		h(w, r)
	}
}

// tokenOnly serves h only to requests that carry the bearer token:
// "Authorization: Bearer <token>", the scheme in any case (RFC 9110
// §11.1), the token compared in constant time as SHA-256 digests.
func tokenOnly(tok string, h http.HandlerFunc) http.HandlerFunc {
	want := sha256.Sum256([]byte(tok))
	return func(w http.ResponseWriter, r *http.Request) {
		scheme, cred, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		got := sha256.Sum256([]byte(strings.TrimLeft(cred, " ")))
		if subtle.ConstantTimeCompare(got[:], want[:]) != 1 || !strings.EqualFold(scheme, "Bearer") {
			w.Header().Set("WWW-Authenticate", `Bearer realm="gslbd"`)
			writeJSON(w, http.StatusUnauthorized, apiError{"missing or wrong API token"})
			return
		}
		h(w, r)
	}
}

// localOnly returns 0, or the status and reason to refuse a token-less
// request that changes something.
func localOnly(r *http.Request) (int, string) {
	la, _ := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	local, err := netip.ParseAddrPort(fmt.Sprint(la))
	if la == nil || err != nil || !local.Addr().Unmap().IsLoopback() {
		return http.StatusForbidden, "no API token is configured: changes are accepted only on a loopback listener"
	}
	if mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		return http.StatusUnsupportedMediaType, "no API token is configured: send Content-Type: application/json"
	}
	if !namesListener(r.Host, local) {
		return http.StatusForbidden, "no API token is configured: the Host header must name this listener (" + local.String() + ")"
	}
	if o := r.Header.Get("Origin"); o != "" {
		u, err := url.Parse(o)
		if err != nil || !strings.EqualFold(u.Host, r.Host) {
			return http.StatusForbidden, "no API token is configured: requests from another origin are refused"
		}
	}
	return 0, ""
}

// namesListener reports whether host (a Host header) names the loopback
// listener at local: its address, localhost or another loopback address,
// with its port.
func namesListener(host string, local netip.AddrPort) bool {
	h, p, err := net.SplitHostPort(host)
	if err != nil || p != strconv.Itoa(int(local.Port())) {
		return false
	}
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(h)
	return err == nil && ip.IsLoopback()
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
	v := recordView{Name: rs.spec.Name, TTL: rs.spec.TTL.String(), Failover: rs.spec.Failover, Disabled: rs.disabled,
		AnswerKind: string(c.answers[rs.spec.Name].kind), AnswerWithin: string(c.answers[rs.spec.Name].within), AnswerSteps: stepKindsOf(rs.spec), Addresses: []addressView{}}
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
	case errors.Is(err, errStarting):
		w.Header().Set("Retry-After", "2")
		writeJSON(w, http.StatusServiceUnavailable, apiError{err.Error()})
	case errors.Is(err, errStateNotSaved):
		writeJSON(w, http.StatusInternalServerError, apiError{"applied in this process but NOT saved: a restart would forget it (" + err.Error() + "); see /readyz"})
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
