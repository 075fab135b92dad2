package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestRunServesFailsOverAndObeysTheAPI runs the daemon with short intervals
// on real loopback sockets: it answers with every healthy backend, drops
// one that starts failing, drains and undrains through the API, answers
// the failover FQDN while disabled, and exports the metrics. Only the order
// of events is asserted, under a hang guard.
func TestRunServesFailsOverAndObeysTheAPI(t *testing.T) {
	bs := []*backend{newBackend(t), newBackend(t), newBackend(t)}
	var recs strings.Builder
	// A drain lasts until the address passes passingThreshold probes again
	// (it is not permanent): 10 of them keep it out long enough to be seen.
	recs.WriteString("  - name: app.example.test.\n    ttl: 1s\n    failover: app.backup.example.net.\n    probe: {policy: {passingThreshold: 10}}\n    addresses:\n")
	for i, b := range bs {
		fmt.Fprintf(&recs, "      - {ip: 192.0.2.%d, regions: [r%d], probeAddr: %q}\n", i+1, i%2, b.addr())
	}
	d := startDaemon(t, controllerYAML("replication: {secret: 0123456789abcdef0123}", recs.String()))
	const name = "app.example.test."
	has := func(want ...string) func() bool {
		return func() bool {
			got, _ := answer(d.dns, name)
			return slices.Equal(got, want)
		}
	}
	guard := 60 * time.Second

	waitFor(t, guard, "all three addresses answered", has("192.0.2.1", "192.0.2.2", "192.0.2.3"))

	bs[1].down.Store(true) // 503: not expected, not retriable → critical at once
	waitFor(t, guard, "failing backend left the answer", has("192.0.2.1", "192.0.2.3"))

	if code := post(t, d.http, "/api/records/app.example.test/addresses/192.0.2.1/drain"); code != http.StatusOK {
		t.Fatalf("drain: status %d", code)
	}
	waitFor(t, guard, "drained address left the answer", has("192.0.2.3"))
	if code := post(t, d.http, "/api/records/app.example.test/addresses/192.0.2.1/undrain"); code != http.StatusOK {
		t.Fatalf("undrain: status %d", code)
	}
	waitFor(t, guard, "undrained address back", has("192.0.2.1", "192.0.2.3"))

	post(t, d.http, "/api/records/app.example.test./disable")
	waitFor(t, guard, "disabled record answers its failover FQDN", has("CNAME app.backup.example.net."))
	post(t, d.http, "/api/records/app.example.test./enable")
	bs[1].down.Store(false)
	waitFor(t, guard, "enabled record and recovered backend", has("192.0.2.1", "192.0.2.2", "192.0.2.3"))

	code, body := get(t, d.http, "/api/records")
	if code != http.StatusOK {
		t.Fatalf("GET /api/records: %d %s", code, body)
	}
	var views []recordView
	if err := json.Unmarshal([]byte(body), &views); err != nil {
		t.Fatalf("records JSON: %v\n%s", err, body)
	}
	if len(views) != 1 || len(views[0].Addresses) != 3 || views[0].Addresses[0].Probes == 0 || views[0].Addresses[0].ProbeAddr == "" {
		t.Fatalf("records view lacks addresses or statistics:\n%s", body)
	}

	_, metrics := get(t, d.http, "/metrics")
	for _, m := range []string{
		`gslbkit_probes_total{result="pass"}`, `gslbkit_probes_total{result="fail-now"}`,
		"gslbkit_probe_duration_seconds_bucket", `gslbkit_address_state{address="192.0.2.2",record="app.example.test.",state="passing"} 1`,
		`gslbkit_state_transitions_total{from="passing",to="critical"}`, "gslbkit_record_held_stale 0",
		`gslbkit_provider_writes_total{result="ok"}`, `gslbkit_dns_queries_total{rcode="NOERROR"}`,
	} {
		if !strings.Contains(metrics, m) {
			t.Errorf("metrics lack %s", m)
		}
	}

	// Replication needs the secret.
	if code, _ := get(t, d.http, "/replication/snapshot"); code != http.StatusUnauthorized {
		t.Errorf("snapshot without secret: status %d, want 401", code)
	}
	if code := post(t, d.http, "/api/records/nosuch.example.test/disable"); code != http.StatusNotFound {
		t.Errorf("unknown record: status %d, want 404", code)
	}
	d.stop(t)
	if s := d.stderr.String(); !strings.Contains(s, `"msg":"address state"`) || !strings.Contains(s, `"msg":"stopped"`) {
		t.Errorf("logs lack transitions or shutdown:\n%s", s)
	}
}

// TestRunNodeFollowsController runs a controller and a node on real sockets:
// the node answers what the controller answers, and follows a failover.
func TestRunNodeFollowsController(t *testing.T) {
	b, b2 := newBackend(t), newBackend(t)
	const secret = "0123456789abcdef0123"
	ctl := startDaemon(t, controllerYAML("replication: {secret: "+secret+"}",
		fmt.Sprintf("  - name: www.example.test.\n    ttl: 1s\n    addresses:\n      - {ip: 192.0.2.7, probeAddr: %q}\n      - {ip: 192.0.2.8, probeAddr: %q}\n", b.addr(), b2.addr())))
	nodeCfg := fmt.Sprintf(`zone: example.test.
dns: {addr: "127.0.0.1:0"}
http: {addr: "127.0.0.1:0"}
replication: {secret: %s}
node: {url: "http://%s/replication", interval: 200ms}
`, secret, ctl.http)
	node := startDaemon(t, nodeCfg, "-node")
	both := func(want ...string) func() bool {
		return func() bool {
			a, _ := answer(ctl.dns, "www.example.test.")
			b, _ := answer(node.dns, "www.example.test.")
			return slices.Equal(a, want) && slices.Equal(b, want)
		}
	}
	waitFor(t, 60*time.Second, "controller and node answer both addresses", both("192.0.2.7", "192.0.2.8"))
	b2.down.Store(true)
	waitFor(t, 60*time.Second, "node follows the failover", both("192.0.2.7"))
	if code, body := get(t, node.http, "/healthz"); code != http.StatusOK {
		t.Errorf("node healthz: %d %s", code, body)
	}
}

// TestErrorsAreSaidOnce: a port in use and a bad config are reported with
// one prefix each and the address once (they used to read "gslbd: gslbd:
// config: ..." and "listen udp A: listen udp A: bind: ...").
func TestErrorsAreSaidOnce(t *testing.T) {
	d := startDaemon(t, controllerYAML("", "  - name: app.example.test.\n    addresses: [{ip: 192.0.2.1, probeAddr: \"127.0.0.1:1\"}]\n"))
	for name, tc := range map[string]struct{ yaml, addr string }{
		"dns port in use":  {strings.Replace(controllerYAML("", "  - name: app.example.test.\n    addresses: [{ip: 192.0.2.1, probeAddr: \"127.0.0.1:1\"}]\n"), `dns: {addr: "127.0.0.1:0"}`, `dns: {addr: "`+d.dns+`"}`, 1), d.dns},
		"http port in use": {strings.Replace(controllerYAML("", "  - name: app.example.test.\n    addresses: [{ip: 192.0.2.1, probeAddr: \"127.0.0.1:1\"}]\n"), `http: {addr: "127.0.0.1:0"}`, `http: {addr: "`+d.http+`"}`, 1), d.http},
		"bad ttl":          {"zone: example.test.\nrecords:\n  - name: app.example.test.\n    ttl: thirty\n", "records[0].ttl (line 4)"},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "gslbd.yaml")
			if err := os.WriteFile(path, []byte(tc.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
			err := run(context.Background(), []string{"-config", path}, io.Discard, io.Discard)
			if err == nil {
				t.Fatal("run succeeded")
			}
			msg := errorLine(err) // as main prints it
			if strings.Count(msg, tc.addr) != 1 || strings.Count(msg, "gslbd:") != 1 || strings.Count(msg, "config:") > 1 || strings.Count(msg, "listen") > 1 {
				t.Fatalf("error says things more than once: %q", msg)
			}
			t.Logf("%s", msg)
		})
	}
}
