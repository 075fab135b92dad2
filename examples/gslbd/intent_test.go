package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gslbkit/gslb/probe"
)

// act POSTs an action with an optional JSON body and decodes the response.
func act(t *testing.T, h http.Handler, path, body string) (int, recordView, string) {
	t.Helper()
	req := httptest.NewRequest("POST", path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer let-me-in-0123456789")
	req.Header.Set("Content-Type", "application/json")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	var res recordView
	_ = json.Unmarshal(rec.Body.Bytes(), &res)
	return rec.Code, res, rec.Body.String()
}

// reconcile publishes c's desired state into its embedded zone at once.
func reconcile(t *testing.T, c *controller) {
	t.Helper()
	c.publish()
	if _, err := c.local.ReconcileOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// pass delivers a passing transition for id, as the Monitor would.
func pass(c *controller, id string) {
	c.observe(probe.Event{Target: id, Transition: probe.Transition{From: probe.Critical, To: probe.Passing, At: time.Now()}, Served: true})
}

// TestDrainIsSticky: a drained address stays out of the answer while its
// probes pass, until undrained; the response shows the state after the
// action. The old drain was a one-shot override that the next passing
// probe undid.
func TestDrainIsSticky(t *testing.T) {
	c := newTestController(t, apiYAML)
	h := c.handler()
	const name = "app.example.test."
	all := []string{"192.0.2.1", "192.0.2.2", "192.0.2.3"}
	if got := zoneAnswer(c.zone, name); !slices.Equal(got, all) {
		t.Fatalf("before: %v", got)
	}
	code, res, body := act(t, h, "/api/records/app.example.test/addresses/192.0.2.1/drain", `{"by": "alice", "reason": "kernel upgrade"}`)
	if code != http.StatusOK {
		t.Fatalf("drain: %d %s", code, body)
	}
	a := res.Addresses[0]
	if a.Served || !a.Intent.Drained || a.Intent.By != "alice" || a.Intent.Reason != "kernel upgrade" {
		t.Fatalf("the response does not show the address drained: %s", body)
	}
	reconcile(t, c)
	for range 3 { // passing probes keep coming
		pass(c, targetID(name, c.records[0].addrs[0].ip))
		reconcile(t, c)
		if got := zoneAnswer(c.zone, name); slices.Contains(got, "192.0.2.1") {
			t.Fatalf("a passing probe undid the drain: %v", got)
		}
	}
	if code, res, body = act(t, h, "/api/records/app.example.test/addresses/192.0.2.1/undrain", ""); code != http.StatusOK || res.Addresses[0].Intent.Drained || !res.Addresses[0].Served {
		t.Fatalf("undrain: %d %s", code, body)
	}
	reconcile(t, c)
	if got := zoneAnswer(c.zone, name); !slices.Equal(got, all) {
		t.Fatalf("after undrain: %v", got)
	}
}

// TestDrainLastServedAddressNeedsForce: draining the last served address is
// refused with 409 and a reason unless forced; a bad body is a 400.
func TestDrainLastServedAddressNeedsForce(t *testing.T) {
	c := newTestController(t, apiYAML)
	h := c.handler()
	for _, ip := range []string{"192.0.2.1", "192.0.2.2"} {
		if code, _, body := act(t, h, "/api/records/app.example.test/addresses/"+ip+"/drain", ""); code != http.StatusOK {
			t.Fatalf("drain %s: %d %s", ip, code, body)
		}
	}
	code, _, body := act(t, h, "/api/records/app.example.test/addresses/192.0.2.3/drain", "")
	if code != http.StatusConflict || !strings.Contains(body, "no served address") || !strings.Contains(body, "force") {
		t.Fatalf("draining the last served address: %d %s", code, body)
	}
	if code, res, body := act(t, h, "/api/records/app.example.test/addresses/192.0.2.3/drain", `{"force": true}`); code != http.StatusOK || !res.Addresses[2].Intent.Drained || !res.Addresses[2].Intent.Forced {
		t.Fatalf("forced drain: %d %s", code, body)
	}
	if code, _, body := act(t, h, "/api/records/app.example.test/addresses/192.0.2.1/undrain", `{"forse": true}`); code != http.StatusBadRequest {
		t.Fatalf("misspelt body: %d %s", code, body)
	}
	code, _, body = act(t, h, "/api/records/app.example.test/disable", `{"by": "bob"}`)
	if code != http.StatusConflict || !strings.Contains(body, "no failover name") {
		t.Fatalf("disable without failover: %d %s", code, body)
	}
}

// TestDrainExpires: a drain with "expires" ends by itself.
func TestDrainExpires(t *testing.T) {
	c := newTestController(t, apiYAML)
	h := c.handler()
	code, res, body := act(t, h, "/api/records/app.example.test/addresses/192.0.2.2/drain", `{"expires": "1h"}`)
	if code != http.StatusOK || !res.Addresses[1].Intent.Drained || res.Addresses[1].Intent.Until == nil {
		t.Fatalf("drain with expiry: %d %s", code, body)
	}
	c.expireDrains(time.Now().Add(30 * time.Minute))
	if c.records[0].addrs[1].drain == nil {
		t.Fatal("expired early")
	}
	c.expireDrains(time.Now().Add(61 * time.Minute))
	if c.records[0].addrs[1].drain != nil {
		t.Fatal("the drain did not expire")
	}
}

// TestStateFile: the state file round-trips; a corrupt, torn, foreign or
// other-format file is refused with a reason, never trusted.
func TestStateFile(t *testing.T) {
	dir := t.TempDir()
	st := controllerState{SavedAt: time.Now().UTC().Truncate(time.Millisecond), Zone: "example.test.", OwnerID: "gslbd",
		Records:   map[string]recordIntent{"app.example.test.": {Disabled: true, By: "alice", At: time.Now().UTC().Truncate(time.Second)}},
		Addresses: map[string]addressMemory{"app.example.test./192.0.2.1": {State: "critical", Drain: &drainIntent{By: "bob"}}}}
	if _, ok, err := loadState(dir, "example.test.", "gslbd"); ok || err != nil {
		t.Fatalf("missing file: ok %v err %v", ok, err)
	}
	if err := saveState(dir, st); err != nil {
		t.Fatal(err)
	}
	got, ok, err := loadState(dir, "EXAMPLE.test", "gslbd")
	if err != nil || !ok || !got.SavedAt.Equal(st.SavedAt) || !got.Records["app.example.test."].Disabled || got.Addresses["app.example.test./192.0.2.1"].Drain.By != "bob" {
		t.Fatalf("round trip: %+v ok %v err %v", got, ok, err)
	}
	if _, _, err := loadState(dir, "other.test.", "gslbd"); !errors.Is(err, errForeignState) {
		t.Fatalf("another zone: %v", err)
	}
	if _, _, err := loadState(dir, "example.test.", "someone-else"); !errors.Is(err, errForeignState) {
		t.Fatalf("another owner: %v", err)
	}
	path := filepath.Join(dir, stateFileName)
	good, _ := os.ReadFile(path)
	for name, data := range map[string][]byte{
		"flipped byte": bytes.Replace(good, []byte("alice"), []byte("alicf"), 1),
		"torn":         good[:len(good)/2],
		"empty":        nil,
		"other format": bytes.Replace(good, []byte(`"format":1`), []byte(`"format":7`), 1),
	} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		if _, ok, err := loadState(dir, "example.test.", "gslbd"); ok || err == nil {
			t.Errorf("%s: accepted (ok %v)", name, ok)
		} else {
			t.Logf("%s: %v", name, err)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}

const stateYAML = `zone: example.test.
ownerId: gslbd
http: {apiToken: let-me-in-0123456789}
records:
  - name: app.example.test.
    failover: app.backup.example.net.
    addresses:
      - {ip: 192.0.2.1, probeAddr: "10.0.0.1:80"}
      - {ip: 192.0.2.2, probeAddr: "10.0.0.2:80"}
      - {ip: 192.0.2.3, probeAddr: "10.0.0.3:80"}
  - name: www.example.test.
    failover: www.backup.example.net.
    addresses:
      - {ip: 192.0.2.7, probeAddr: "10.0.0.7:80"}
`

func stateController(t *testing.T, dir string) *controller {
	t.Helper()
	c := newFakeController(t, stateYAML+"stateDir: "+dir+"\n")
	return c
}

// TestRestartRestoresIntentStatesAndZone: a controller restarted over its
// state directory keeps drains and disables, restores each address's
// state (critical stays critical), serves the zone it last published with
// the same serial, and starts addresses critical when the file is too old.
func TestRestartRestoresIntentStatesAndZone(t *testing.T) {
	dir := t.TempDir()
	c := stateController(t, dir)
	allPassing(t, c)
	c.holding.Store(false)
	reconcile(t, c)
	h := c.handler()
	if code, _, body := act(t, h, "/api/records/app.example.test/addresses/192.0.2.1/drain", `{"by": "alice"}`); code != http.StatusOK {
		t.Fatalf("drain: %d %s", code, body)
	}
	if code, _, body := act(t, h, "/api/records/www.example.test/disable", ""); code != http.StatusOK {
		t.Fatalf("disable: %d %s", code, body)
	}
	c.observe(probe.Event{Target: "app.example.test./192.0.2.2", Transition: probe.Transition{From: probe.Passing, To: probe.Critical, At: time.Now()}})
	reconcile(t, c)
	before := zoneAnswer(c.zone, "app.example.test.")
	if !slices.Equal(before, []string{"192.0.2.3"}) {
		t.Fatalf("before the restart: %v", before)
	}
	soa, err := c.zone.SOA("example.test.")
	if err != nil {
		t.Fatal(err)
	}
	if err := saveState(dir, c.stateNow(time.Now())); err != nil {
		t.Fatal(err)
	}

	r := stateController(t, dir) // the restart: nothing has run yet
	if got := zoneAnswer(r.zone, "app.example.test."); !slices.Equal(got, before) {
		t.Fatalf("after the restart the zone answers %v, before it answered %v", got, before)
	}
	if got := zoneAnswer(r.zone, "www.example.test."); !slices.Equal(got, []string{"CNAME www.backup.example.net."}) {
		t.Fatalf("the disabled record answers %v after the restart", got)
	}
	rsoa, _ := r.zone.SOA("example.test.")
	if rsoa.Serial < soa.Serial {
		t.Fatalf("serial went back: %d → %d", soa.Serial, rsoa.Serial)
	}
	app := r.byName["app.example.test."]
	if d := app.addrs[0].drain; d == nil || d.By != "alice" {
		t.Fatalf("the drain was forgotten: %+v", app.addrs[0])
	}
	if st, _ := r.mon.Stats(app.addrs[1].id); st.State != probe.Critical {
		t.Fatalf("the critical address restarted %v", st.State)
	}
	if st, _ := r.mon.Stats(app.addrs[0].id); !st.Disabled {
		t.Fatal("the drained address is not disabled in the monitor")
	}
	if !r.byName["www.example.test."].disabled {
		t.Fatal("the disable was forgotten")
	}
	r.publish() // held until first probe results: changes nothing
	if got := zoneAnswer(r.zone, "app.example.test."); !slices.Equal(got, before) {
		t.Fatalf("publishing during the startup hold changed the answer to %v", got)
	}

	// A state file saved long ago: every address starts critical, its
	// first probe result deciding.
	old := c.stateNow(time.Now().Add(-time.Hour))
	if err := saveState(dir, old); err != nil {
		t.Fatal(err)
	}
	o := stateController(t, dir)
	for _, a := range o.byName["app.example.test."].addrs {
		if st, _ := o.mon.Stats(a.id); st.State != probe.Critical {
			t.Fatalf("%s restarted %v from an hour-old state", a.ip, st.State)
		}
	}
}
