package main

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gslbkit/gslb/internal/testunbound"
	"github.com/gslbkit/gslb/probe"
)

// TestEndToEndThroughUnbound serves gslbd's zone on loopback behind a real
// caching resolver (unbound, stub zone), kills a backend, and records when
// unbound's answer stops containing it. Asserted: the order of events (all
// three answered; backend killed; gslbd's own answer drops it; unbound's
// answer drops it, not before gslbd's). The time is reported beside the
// SPEC bound (probe.WorstCaseDetection + 0 publish delay + the TTL), not
// asserted: real time on a shared machine is not a test. Hang guard 60 s.
func TestEndToEndThroughUnbound(t *testing.T) {
	testunbound.Require(t)
	bs := []*backend{newBackend(t), newBackend(t), newBackend(t)}
	var recs strings.Builder
	recs.WriteString("  - name: app.example.test.\n    ttl: 1s\n    addresses:\n")
	for i, b := range bs {
		fmt.Fprintf(&recs, "      - {ip: 192.0.2.%d, probeAddr: %q}\n", i+1, b.addr())
	}
	yaml := controllerYAML("", recs.String())
	d := startDaemon(t, yaml)
	resolver := testunbound.Start(t, testunbound.Config{Stubs: map[string]string{"example.test.": d.dns}})

	const name = "app.example.test."
	const ttl = time.Second
	all := []string{"192.0.2.1", "192.0.2.2", "192.0.2.3"}
	guard := 60 * time.Second
	waitFor(t, guard, "unbound answers all three addresses", func() bool {
		got, _ := answer(resolver, name)
		return slices.Equal(got, all)
	})

	bs[1].srv.Close() // kill backend 2: connections are refused from now on
	killed := time.Now()
	var authGone, resolverGone time.Duration
	waitFor(t, guard, "unbound's answer drops the killed backend", func() bool {
		if authGone == 0 {
			if got, _ := answer(d.dns, name); len(got) > 0 && !slices.Contains(got, "192.0.2.2") {
				authGone = time.Since(killed)
			}
		}
		got, _ := answer(resolver, name)
		if len(got) > 0 && !slices.Contains(got, "192.0.2.2") {
			resolverGone = time.Since(killed)
			return true
		}
		return false
	})
	if authGone == 0 {
		t.Fatalf("unbound dropped the backend (after %v) before gslbd's own answer did", resolverGone)
	}
	if got, _ := answer(resolver, name); !slices.Equal(got, []string{"192.0.2.1", "192.0.2.3"}) {
		t.Errorf("unbound answers %v after the failover, want the two live backends", got)
	}
	pol := probe.DefaultPolicy()
	pol.Interval, pol.Timeout = 200*time.Millisecond, 200*time.Millisecond
	pol.WarningThreshold, pol.CriticalThreshold, pol.PassingThreshold = 1, 2, 1
	pol.MaxBackoff = 400 * time.Millisecond
	detect := probe.WorstCaseDetection(pol)
	t.Logf("gslbd's answer dropped the killed backend after %v; unbound's after %v; SPEC bound %v (worst-case detection %v + publish 0 + TTL %v; unbound keeps time in whole seconds, so a 1s TTL may live up to 2s in its cache)",
		authGone.Round(time.Millisecond), resolverGone.Round(time.Millisecond), (detect + ttl).Round(time.Millisecond), detect, ttl)
}
