package main

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gslbkit/gslb/probe"
	"github.com/gslbkit/gslb/record"
)

// The status page (GET /) and its data (GET /api/status): one view of
// everything an operator looks at, on the controller and on a node. The
// page is one self-contained HTML document (no scripts, styles or fonts
// from elsewhere); it refreshes itself every few seconds (a small inline
// script swaps the content in place, keeping the scroll position; without
// scripts a meta refresh does it) and is laid out for screens from 360 px
// wide. Every state is written in words beside its colour and symbol.

//go:embed statuspage.html
var statusPageHTML string

var statusPage = template.Must(template.New("status").Funcs(template.FuncMap{
	"ago":   ago,
	"clock": clock,
	"stateClass": func(s string) string {
		switch s {
		case "passing", "warning", "critical", "recovery":
			return s
		}
		return "unknown"
	},
	"symbol": func(s string) string {
		switch s {
		case "passing", "ok":
			return "✔"
		case "warning", "recovery":
			return "▲"
		case "critical", "failing", "degraded", "unreachable":
			return "✖"
		}
		return "?"
	},
	"ms": func(f float64) string { return fmt.Sprintf("%.1f ms", f) },
}).Parse(statusPageHTML))

// statusView is the whole status, as /api/status returns it and the page
// shows it.
type statusView struct {
	// Mode is "controller" or "node".
	Mode        string    `json:"mode"`
	Version     string    `json:"version"`
	Zone        string    `json:"zone,omitempty"`
	GeneratedAt time.Time `json:"generatedAt"`
	// ZoneVersion is the embedded zone's version (a node: its copy's).
	ZoneVersion uint64 `json:"zoneVersion"`
	// Summary counts addresses by state.
	Summary     map[string]int   `json:"summary"`
	Records     []recordView     `json:"records"`
	Transitions []transitionView `json:"transitions"`
	Providers   []providerView   `json:"providers"`
	Nodes       []nodeView       `json:"nodes"`
	// Node is the node's own replication status (node mode only).
	Node *replicaView `json:"node,omitempty"`
	// Names is what a node's copy of the zone answers (node mode only).
	Names []string `json:"names,omitempty"`
	// Answers is the answer kind of each name a node answers per query,
	// by name (node mode only; from the node's own config).
	Answers map[string]string `json:"answers,omitempty"`
	// AnswersWithin is, for the names in Answers whose record has a
	// within, how the chosen region's addresses are answered.
	AnswersWithin map[string]string `json:"answersWithin,omitempty"`
	// AnswersCheck compares the node's per-query answers with its
	// controller's config (node mode only).
	AnswersCheck *answersCheckView `json:"answersCheck,omitempty"`
	// Problems are what /readyz reports (empty: ready).
	Problems []problem `json:"problems"`
	// Refresh is how often the page reloads itself.
	Refresh string `json:"-"`
	// RefreshMs is Refresh in milliseconds, for the page's script, and
	// RefreshSeconds in whole seconds (at least 1), for its meta refresh.
	RefreshMs      int64 `json:"-"`
	RefreshSeconds int64 `json:"-"`
}

// transitionView is one state change of an address.
type transitionView struct {
	At     time.Time `json:"at"`
	Record string    `json:"record"`
	IP     string    `json:"ip"`
	From   string    `json:"from"`
	To     string    `json:"to"`
	Cause  string    `json:"cause"`
	Detail string    `json:"detail,omitempty"`
}

// providerView is the health of one place records are published to.
type providerView struct {
	// Name is "embedded" or the provider's type.
	Name string `json:"name"`
	// Health is "ok" (the last reconcile left nothing pending), "failing"
	// (the last one failed) or "unknown" (none finished yet).
	Health      string     `json:"health"`
	LastOK      *time.Time `json:"lastOK,omitempty"`
	LastError   string     `json:"lastError,omitempty"`
	LastErrorAt *time.Time `json:"lastErrorAt,omitempty"`
	// FailingSince is the first error after the last success.
	FailingSince *time.Time `json:"failingSince,omitempty"`
	// ErrorClass is "throttled", "transient" or "permanent".
	ErrorClass string `json:"errorClass,omitempty"`
	// HeldStale counts names kept at their last answer (never empty).
	HeldStale int `json:"heldStale"`
}

// nodeView is a node the controller notifies, as it last answered.
type nodeView struct {
	URL string `json:"url"`
	// Health is "ok", "degraded", "not synced" or "unreachable".
	Health string `json:"health"`
	// Version is the node's copy's version; LagVersions how many
	// versions it is behind the controller's zone.
	Version     uint64 `json:"version"`
	LagVersions uint64 `json:"lagVersions"`
	// LastSync is the node's last good sync; SinceSync the time since.
	LastSync  *time.Time `json:"lastSync,omitempty"`
	SinceSync string     `json:"sinceSync,omitempty"`
	Degraded  bool       `json:"degraded"`
	Missed    int        `json:"missed"`
	LastError string     `json:"lastError,omitempty"`
	// LastNotify is the controller's last notify to the node and
	// NotifyError its failure, if it failed.
	LastNotify  *time.Time `json:"lastNotify,omitempty"`
	NotifyError string     `json:"notifyError,omitempty"`
}

// replicaView is a node's own replication status.
type replicaView struct {
	Source    string     `json:"source"`
	Region    string     `json:"region,omitempty"`
	Health    string     `json:"health"`
	Synced    bool       `json:"synced"`
	Version   uint64     `json:"version"`
	LastSync  *time.Time `json:"lastSync,omitempty"`
	SinceSync string     `json:"sinceSync,omitempty"`
	Missed    int        `json:"missed"`
	Degraded  bool       `json:"degraded"`
	LastError string     `json:"lastError,omitempty"`
}

// maxTransitions is how many recent transitions the status keeps.
const maxTransitions = 50

// statusTracker keeps what the status shows and nothing else holds:
// recent transitions, operator actions, provider health, notify results.
type statusTracker struct {
	mu          sync.Mutex
	transitions []transitionView // oldest first, at most maxTransitions
	intents     map[string]intentView
	disabledAt  map[string]time.Time // record → when disabled through the API
	providers   map[string]*providerView
	order       []string // provider names in the order first seen
	notified    map[string]nodeView
}

func newStatusTracker() *statusTracker {
	return &statusTracker{intents: map[string]intentView{}, disabledAt: map[string]time.Time{},
		providers: map[string]*providerView{}, notified: map[string]nodeView{}}
}

// transition records an address's state change.
func (s *statusTracker) transition(rec, ip string, t probe.Transition) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.transitions) == maxTransitions {
		s.transitions = slices.Delete(s.transitions, 0, 1)
	}
	s.transitions = append(s.transitions, transitionView{At: t.At, Record: rec, IP: ip,
		From: t.From.String(), To: t.To.String(), Cause: t.Cause.String(), Detail: t.Result.Detail})
}

// action records an operator's action on an address (by target ID).
func (s *statusTracker) action(id, action, by string, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.intents[id] = intentView{Drained: action == "drain", Action: action, At: &at, By: by}
}

// recordDisabled records an operator's disable or enable of a record.
func (s *statusTracker) recordDisabled(name string, disabled bool, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if disabled {
		s.disabledAt[name] = at
	} else {
		delete(s.disabledAt, name)
	}
}

// reconcileEvent updates the health of the provider named target.
func (s *statusTracker) reconcileEvent(target string, e record.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.providers[target]
	if p == nil {
		p = &providerView{Name: target, Health: "unknown"}
		s.providers[target] = p
		s.order = append(s.order, target)
	}
	switch e := e.(type) {
	case record.AppliedEvent:
		p.Health, p.LastOK, p.ErrorClass, p.FailingSince = "ok", timePtr(e.At), "", nil
		p.HeldStale = 0
	case record.ErrorEvent:
		if p.Health != "failing" {
			p.FailingSince = timePtr(e.At)
		}
		p.Health, p.LastError, p.LastErrorAt, p.ErrorClass = "failing", e.Err.Error(), timePtr(e.At), e.Class()
	case record.HeldStale:
		p.HeldStale++
	}
}

// provider returns the health of the provider named target.
func (s *statusTracker) provider(target string) (providerView, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.providers[target]
	if p == nil {
		return providerView{}, false
	}
	return *p, true
}

// notifyResult records the result of a notify to a node.
func (s *statusTracker) notifyResult(url string, at time.Time, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := nodeView{URL: url, LastNotify: &at}
	if err != nil {
		n.NotifyError = err.Error()
	}
	s.notified[url] = n
}

// intent returns the operator's intent for an address.
func (s *statusTracker) intent(id string) intentView {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.intents[id]
}

// disabledSince returns when a record was disabled through the API.
func (s *statusTracker) disabledSince(name string) *time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t, ok := s.disabledAt[name]; ok {
		return &t
	}
	return nil
}

// fill copies the tracker's part of the status into v, newest transition
// first.
func (s *statusTracker) fill(v *statusView) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v.Transitions = make([]transitionView, 0, len(s.transitions))
	for i := len(s.transitions) - 1; i >= 0; i-- {
		v.Transitions = append(v.Transitions, s.transitions[i])
	}
	v.Providers = []providerView{}
	for _, name := range s.order {
		v.Providers = append(v.Providers, *s.providers[name])
	}
}

// clientOf names who made a request, for the operator-intent record.
func clientOf(r *http.Request) string { return r.RemoteAddr }

// status builds the controller's status.
func (c *controller) status(ctx context.Context) statusView {
	v := statusView{Mode: "controller", Version: buildVersion(), Zone: c.cfg.Zone, GeneratedAt: time.Now().UTC(),
		ZoneVersion: c.zone.Version(), Summary: map[string]int{}, Records: []recordView{}}
	for _, rs := range c.records {
		rv := c.view(ctx, rs)
		for _, a := range rv.Addresses {
			v.Summary[a.State]++
		}
		v.Records = append(v.Records, rv)
	}
	c.st.fill(&v)
	v.Nodes = c.nodeStatus(ctx, v.ZoneVersion)
	v.Problems = c.met.ready.evaluate(time.Now())
	return v
}

// nodeStatus asks every node in replication.notify for its status, at
// once, with a short timeout.
func (c *controller) nodeStatus(ctx context.Context, version uint64) []nodeView {
	urls := c.cfg.Replication.Notify
	out := make([]nodeView, len(urls))
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for i, u := range urls {
		c.st.mu.Lock()
		out[i] = c.st.notified[u]
		c.st.mu.Unlock()
		out[i].URL = u
		wg.Go(func() {
			rv, err := fetchNodeStatus(ctx, c.client, u)
			n := &out[i]
			if err != nil {
				n.Health, n.LastError = "unreachable", err.Error()
				return
			}
			n.Health, n.Version, n.Degraded, n.Missed = rv.Health, rv.Version, rv.Degraded, rv.Missed
			n.LastSync, n.SinceSync, n.LastError = rv.LastSync, rv.SinceSync, rv.LastError
			if version > rv.Version {
				n.LagVersions = version - rv.Version
			}
		})
	}
	wg.Wait()
	return out
}

// nodeStatusURL is the status endpoint of the node whose replication base
// URL is u ("http://node:8054/replication" → "http://node:8054/api/status").
func nodeStatusURL(u string) (string, error) {
	p, err := url.Parse(u)
	if err != nil {
		return "", err
	}
	p.Path = strings.TrimSuffix(strings.TrimSuffix(p.Path, "/"), "/replication") + "/api/status"
	p.RawQuery = ""
	return p.String(), nil
}

// fetchNodeStatus reads a node's /api/status.
func fetchNodeStatus(ctx context.Context, client *http.Client, u string) (*replicaView, error) {
	su, err := nodeStatusURL(u)
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, su, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", su, resp.Status)
	}
	var v statusView
	if err := json.NewDecoder(io.LimitReader(resp.Body, 4<<20)).Decode(&v); err != nil {
		return nil, fmt.Errorf("GET %s: %w", su, err)
	}
	if v.Node == nil {
		return nil, errors.New("GET " + su + ": not a gslbd node")
	}
	return v.Node, nil
}

// status builds a node's status.
func (n *node) status(ctx context.Context) statusView {
	st := n.replica.Status()
	v := statusView{Mode: "node", Version: buildVersion(), GeneratedAt: time.Now().UTC(), ZoneVersion: st.Version,
		Summary: map[string]int{}, Records: []recordView{}, Transitions: []transitionView{}, Providers: []providerView{}, Nodes: []nodeView{}}
	rv := &replicaView{Source: n.cfg.Node.URL, Region: n.cfg.Node.Region, Synced: st.Synced, Version: st.Version,
		LastSync: timePtr(st.LastSync), Missed: st.Missed, Degraded: st.Degraded}
	switch {
	case !st.Synced:
		rv.Health = "not synced"
	case st.Degraded:
		rv.Health = "degraded"
	default:
		rv.Health = "ok"
	}
	if !st.LastSync.IsZero() {
		rv.SinceSync = durString(time.Since(st.LastSync))
	}
	if st.LastErr != nil {
		rv.LastError = st.LastErr.Error()
	}
	v.Node = rv
	for _, z := range n.zone.Zones() {
		if v.Zone == "" {
			v.Zone = z
		}
		recs, err := n.zone.GetRecords(ctx, z)
		if err != nil {
			continue
		}
		for _, r := range recs {
			rr := r.RR()
			switch rr.Type {
			case "A", "AAAA", "CNAME":
				v.Names = append(v.Names, rr.Name+"."+strings.TrimSuffix(z, ".")+". "+rr.Type+" "+rr.Data)
			}
		}
	}
	slices.Sort(v.Names)
	if len(n.answers) > 0 {
		v.Answers = n.answers
	}
	if len(n.within) > 0 {
		v.AnswersWithin = n.within
	}
	n.mu.Lock()
	ac := n.check
	n.mu.Unlock()
	v.AnswersCheck = &ac
	v.Problems = n.met.ready.evaluate(time.Now())
	return v
}

// serveStatus writes v as the page (GET /) or as JSON (GET /api/status).
// The page's refresh period is ?refresh=D (a Go duration, 200ms–10m;
// default 2s).
func serveStatus(w http.ResponseWriter, r *http.Request, v statusView) {
	if r.URL.Path == "/api/status" {
		writeJSON(w, http.StatusOK, v)
		return
	}
	if r.URL.Path != "/" {
		writeJSON(w, http.StatusNotFound, apiError{"no such page " + r.URL.Path + " (see / and /api/openapi.yaml)"})
		return
	}
	refresh := 2 * time.Second
	if q := r.URL.Query().Get("refresh"); q != "" {
		d, err := time.ParseDuration(q)
		if err != nil || d < 200*time.Millisecond || d > 10*time.Minute {
			http.Error(w, fmt.Sprintf("refresh %q: allowed a duration from 200ms to 10m", q), http.StatusBadRequest)
			return
		}
		refresh = d
	}
	v.Refresh, v.RefreshMs, v.RefreshSeconds = refresh.String(), refresh.Milliseconds(), max(int64(refresh/time.Second), 1)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; connect-src 'self'; img-src data:")
	if err := statusPage.Execute(w, v); err != nil {
		// Headers are gone; the error can only be logged by the caller's
		// server. Execute fails only on a broken template, caught by tests.
		_, _ = io.WriteString(w, "<p>status page error: "+template.HTMLEscapeString(err.Error())+"</p>")
	}
}

// ago formats the time since t ("12s ago"), or "never".
func ago(t *time.Time) string {
	if t == nil || t.IsZero() {
		return "never"
	}
	d := time.Since(*t)
	if d < 0 {
		return "in " + (-d).Round(time.Second).String()
	}
	if d < time.Second {
		return "just now"
	}
	return d.Round(time.Second).String() + " ago"
}

// clock formats t as UTC time of day with the date, e.g.
// "2026-12-01 20:31:05 UTC".
func clock(t *time.Time) string {
	if t == nil || t.IsZero() {
		return "—"
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

func (c *controller) statusPage(w http.ResponseWriter, r *http.Request) {
	serveStatus(w, r, c.status(r.Context()))
}

func (n *node) statusPage(w http.ResponseWriter, r *http.Request) {
	serveStatus(w, r, n.status(r.Context()))
}

//go:embed openapi.yaml
var openAPIYAML []byte

// serveOpenAPI serves the API's OpenAPI description.
func serveOpenAPI(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/yaml")
	_, _ = w.Write(openAPIYAML)
}
