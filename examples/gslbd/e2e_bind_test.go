package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gslbkit/gslb/internal/testbind"
	"github.com/gslbkit/gslb/probe"
)

// addrsOf keeps the addresses of an answer (drops "CNAME ..." entries).
func addrsOf(ans []string) []string {
	var out []string
	for _, a := range ans {
		if !strings.HasPrefix(a, "CNAME ") {
			out = append(out, a)
		}
	}
	return out
}

// bindControllerYAML is a controller that publishes app.example.test.
// (192.0.2.1, .2, … probed at bs; failover name failover, "" for none) to
// bind over RFC 2136, resyncing every second, and serves no DNS itself.
func bindControllerYAML(bind *testbind.Server, bs []*backend, failover string) string {
	var recs strings.Builder
	recs.WriteString("  - name: app.example.test.\n    ttl: 1s\n")
	if failover != "" {
		fmt.Fprintf(&recs, "    failover: %s\n", failover)
	}
	recs.WriteString("    addresses:\n")
	for i, b := range bs {
		fmt.Fprintf(&recs, "      - {ip: 192.0.2.%d, probeAddr: %q}\n", i+1, b.addr())
	}
	provider := fmt.Sprintf(`provider:
  type: rfc2136
  resyncInterval: 1s
  rfc2136: {server: %q, keyName: %q, keyAlg: %q, secret: %q}`, bind.Addr, bind.KeyName, bind.KeyAlg, bind.Secret)
	return strings.Replace(controllerYAML(provider, recs.String()), `dns: {addr: "127.0.0.1:0"}`, `dns: {addr: ""}`, 1)
}

// TestEndToEndThroughBIND runs gslbd publishing to a real BIND through RFC
// 2136 (provider output: the name is a CNAME to its pool name, which holds
// the address set), kills a backend, and records when BIND's answer stops
// containing it. Asserted: the order of events; the time is reported beside
// the SPEC bound, not asserted. Hang guard 60 s. Skipped without named
// unless GSLBKIT_REQUIRE_BIND=1.
func TestEndToEndThroughBIND(t *testing.T) {
	bind := testbind.Start(t, "example.test.")
	bs := []*backend{newBackend(t), newBackend(t), newBackend(t)}
	d := startDaemon(t, bindControllerYAML(bind, bs, ""))
	if d.dns != "-" {
		t.Fatalf("dns served on %s with dns.addr empty", d.dns)
	}

	const name = "app.example.test."
	all := []string{"192.0.2.1", "192.0.2.2", "192.0.2.3"}
	guard := 60 * time.Second
	waitFor(t, guard, "BIND answers all three addresses", func() bool {
		got, _ := answer(bind.Addr, name)
		return slices.Equal(addrsOf(got), all)
	})
	if got, _ := answer(bind.Addr, name); !slices.Contains(got, "CNAME app.pool.example.test.") {
		t.Errorf("BIND answers %v, want a CNAME to the pool name first", got)
	}

	bs[1].srv.Close()
	killed := time.Now()
	waitFor(t, guard, "BIND's answer drops the killed backend", func() bool {
		got, _ := answer(bind.Addr, name)
		return slices.Equal(addrsOf(got), []string{"192.0.2.1", "192.0.2.3"})
	})
	gone := time.Since(killed)

	_, metrics := get(t, d.http, "/metrics")
	if !strings.Contains(metrics, `gslbkit_provider_writes_total{result="ok"}`) {
		t.Error("metrics lack the provider's writes")
	}
	pol := probe.DefaultPolicy()
	pol.Interval, pol.Timeout = 200*time.Millisecond, 200*time.Millisecond
	pol.WarningThreshold, pol.CriticalThreshold, pol.PassingThreshold = 1, 2, 1
	pol.MaxBackoff = 400 * time.Millisecond
	detect := probe.WorstCaseDetection(pol)
	t.Logf("BIND's answer dropped the killed backend after %v; SPEC bound %v + publish delay (worst-case detection; the reconciler writes on each change, re-reads every 1s; asked directly, no TTL term)",
		gone.Round(time.Millisecond), detect)
}
