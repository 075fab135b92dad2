package main

import (
	"context"
	"fmt"
	"github.com/gslbkit/gslb/provider/replication"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestNodeRefusesForgedController: the controller goes
// away and another local process answers at its address, serving a forged
// zone. The node never sends its secret (to the real controller or the
// forger), refuses the forged snapshot and keeps answering its copy, and
// its /readyz names replica_source_untrusted, "forged or older source",
// at once. Before, it sent the secret in clear text, took the forged zone
// and stayed ready. The controller's notify and answer digest are signed
// too.
func TestNodeRefusesForgedController(t *testing.T) {
	c := newTestController(t, syncTestYAML)
	var mu sync.Mutex
	var h http.Handler = c.handler()
	var seen []http.Header
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Clone())
		cur := h
		mu.Unlock()
		cur.ServeHTTP(w, r)
	}))
	defer srv.Close()
	cfg, err := ParseConfig([]byte(strings.Replace(syncTestYAML, "http://controller/replication", srv.URL+"/replication", 1)))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Node.Interval = time.Hour // synced by notify only
	if err := cfg.ValidateNode(); err != nil {
		t.Fatal(err)
	}
	n, err := newNode(cfg, srv.Client(), newMetrics(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = n.Run(ctx) }()
	defer func() { cancel(); <-done }()
	want := zoneAnswer(c.zone, "app.example.test.")
	waitFor(t, 30*time.Second, "the node synced", func() bool { return n.replica.Status().Synced })
	if got := zoneAnswer(n.zone, "app.example.test."); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("node answers %v, controller %v", got, want)
	}
	nsrv := httptest.NewServer(n.handler())
	defer nsrv.Close()
	if err := replication.SendNotify(ctx, nil, nsrv.URL+"/replication", cfg.Replication.auth()); err != nil {
		t.Fatalf("a signed notify: %v", err)
	}

	// The forger: knows the zone's shape, not the secret.
	forged := `{"version":1000,"epoch":"forged","zones":[{"name":"example.test.","records":[{"name":"app","type":"A","ttl":5,"data":"203.0.113.66"}]}]}`
	mu.Lock()
	h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/changes") {
			forged := `{"version":1000,"epoch":"forged","full":true,"snapshot":` + forged + `}`
			io.WriteString(w, forged)
			return
		}
		io.WriteString(w, forged)
	})
	mu.Unlock()
	before := n.replica.Status().Rejected
	n.replica.Notify()
	waitFor(t, 30*time.Second, "the forged reply refused", func() bool { return n.replica.Status().Rejected > before })
	if got := zoneAnswer(n.zone, "app.example.test."); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("after the forger answered, the node answers %v, want the controller's %v", got, want)
	}
	rec := do(n.handler(), "GET", "/readyz", nil)
	body := rec.Body.String()
	t.Logf("/readyz: %d %s", rec.Code, body)
	if rec.Code != http.StatusServiceUnavailable || !strings.Contains(body, "replica_source_untrusted") || !strings.Contains(body, "forged or older source") {
		t.Errorf("/readyz with a forged source: %d %s", rec.Code, body)
	}
	if strings.Contains(body, "answering REFUSED") {
		t.Errorf("/readyz says REFUSED while the node answers its copy: %s", body)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, hdr := range seen {
		for k, vs := range hdr {
			for _, v := range vs {
				if strings.Contains(v, cfg.Replication.Secret) {
					t.Errorf("the node sent its secret in header %s", k)
				}
			}
		}
	}
}

// TestNodeReadyzWhileWaitingForASnapshot: a change set that does not
// apply makes the node wait for a whole snapshot while it answers its
// last good copy; /readyz says so instead of "no copy yet (answering
// REFUSED)", which it said before.
func TestNodeReadyzWhileWaitingForASnapshot(t *testing.T) {
	c := newTestController(t, syncTestYAML)
	var mu sync.Mutex
	var h http.Handler = c.handler()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		cur := h
		mu.Unlock()
		cur.ServeHTTP(w, r)
	}))
	defer srv.Close()
	cfg, err := ParseConfig([]byte(strings.Replace(syncTestYAML, "http://controller/replication", srv.URL+"/replication", 1)))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Node.Interval = time.Hour
	if err := cfg.ValidateNode(); err != nil {
		t.Fatal(err)
	}
	n, err := newNode(cfg, srv.Client(), newMetrics(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); _ = n.Run(ctx) }()
	defer func() { cancel(); <-done }()
	waitFor(t, 30*time.Second, "the node synced", func() bool { return n.replica.Status().Synced })
	st := n.replica.Status()
	want := zoneAnswer(n.zone, "app.example.test.")
	// The controller, signed, sends a change the node cannot apply.
	bad := fmt.Sprintf(`{"version":%d,"epoch":%q,"changes":[{"version":%d,"kind":"rrset","zone":"example.test.","name":"app","type":"A","records":[{"name":"app","type":"A","ttl":5,"data":"not-an-address"}]}]}`,
		st.Version+1, st.Epoch, st.Version+1)
	auth := cfg.Replication.auth()
	mu.Lock()
	h = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set(replication.SignatureHeader, auth.SignReply(r.Header.Get(replication.NonceHeader), []byte(bad)))
		io.WriteString(w, bad)
	})
	mu.Unlock()
	n.replica.Notify()
	waitFor(t, 30*time.Second, "the change refused", func() bool { return !n.replica.Status().Synced })
	if got := zoneAnswer(n.zone, "app.example.test."); strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("the node answers %v, want its copy %v", got, want)
	}
	rec := do(n.handler(), "GET", "/readyz", nil)
	body := rec.Body.String()
	if strings.Contains(body, "REFUSED") || !strings.Contains(body, "last good copy") {
		t.Errorf("/readyz while answering the last good copy: %s", body)
	}
}
