package main

import (
	"context"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/libdns/libdns"

	"github.com/gslbkit/gslb/heartbeat"
)

// benchDeployment builds an in-memory deployment of regions × 2 clusters ×
// 2 gateways, with every beat freshly written and every controller's
// records published, so a tick sees the steady state.
func benchDeployment(b *testing.B, regions int) []*controller {
	b.Helper()
	opts, err := parseFlags([]string{"-regions", fmt.Sprint(regions), "-dns-port", "-1"}, io.Discard)
	if err != nil {
		b.Fatal(err)
	}
	d, err := newDeployment(opts)
	if err != nil {
		b.Fatal(err)
	}
	out := newPrinter(io.Discard)
	ctx := context.Background()
	now := time.Now()
	for _, cl := range d.clusters() {
		c, err := newController(d, cl, out, nil)
		if err != nil {
			b.Fatal(err)
		}
		d.ctrls = append(d.ctrls, c)
		for _, s := range []heartbeat.Scope{heartbeat.Local, heartbeat.Global} {
			text, err := d.keyring.Seal(s, heartbeat.Beat{Cluster: cl.name, Region: cl.region, Time: now, Gateways: 2})
			if err != nil {
				b.Fatal(err)
			}
			label, _ := heartbeat.Naming{}.Label(cl.name)
			zone := d.names.global
			if s == heartbeat.Local {
				zone = d.names.local
			}
			if _, err := c.view.SetRecords(ctx, zone, []libdns.Record{libdns.TXT{Name: label, TTL: 5 * time.Second, Text: text}}); err != nil {
				b.Fatal(err)
			}
		}
	}
	for range 3 { // the regional sets fill in over a few rounds
		for _, c := range d.ctrls {
			c.tick(ctx, now)
			if _, err := c.rec.ReconcileOnce(ctx); err != nil {
				b.Fatal(err)
			}
		}
	}
	return d.ctrls
}

// BenchmarkControllerTick measures one controller's reconcile round in
// memory: gates, both beat reads, read-backs and the topology decision
// (the reconciler is only handed the result).
func BenchmarkControllerTick(b *testing.B) {
	for _, regions := range []int{2, 8} {
		b.Run(fmt.Sprintf("regions=%d", regions), func(b *testing.B) {
			c := benchDeployment(b, regions)[0]
			ctx := context.Background()
			now := time.Now()
			b.ReportAllocs()
			for b.Loop() {
				c.tick(ctx, now)
			}
		})
	}
}

// BenchmarkSteadyReconcile measures the reconciler's steady-state round
// after a tick: read the zones, plan, write nothing.
func BenchmarkSteadyReconcile(b *testing.B) {
	c := benchDeployment(b, 2)[0]
	ctx := context.Background()
	now := time.Now()
	b.ReportAllocs()
	for b.Loop() {
		c.tick(ctx, now)
		r, err := c.rec.ReconcileOnce(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if r.Writes != 0 {
			b.Fatalf("steady state wrote %d times", r.Writes)
		}
	}
}
