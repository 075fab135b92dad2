package record

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/libdns/libdns"
)

// benchState builds n desired RRsets and a zone holding them with a share
// of them changed (every tenth has another address).
func benchState(n int) (Desired, []Zone) {
	zone := "bench.test."
	var d Desired
	cur := Zone{Name: zone}
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("svc-%05d", i)
		ip := fmt.Sprintf("10.%d.%d.1", i/256%256, i%256)
		d.Sets = append(d.Sets, RRSet{Zone: zone, Name: name, Type: "A", TTL: 30 * time.Second, Values: []string{ip, "192.0.2.1"}})
		cur.Records = append(cur.Records,
			libdns.TXT{Name: "_gslb-owner." + name, TTL: 300 * time.Second, Text: "bench"},
			libdns.Address{Name: name, TTL: 30 * time.Second, IP: mustAddr("192.0.2.1")})
		if i%10 != 0 {
			cur.Records = append(cur.Records, libdns.Address{Name: name, TTL: 30 * time.Second, IP: mustAddr(ip)})
		}
	}
	return d, []Zone{cur}
}

// BenchmarkPlan plans 10,000 desired RRsets against 10,000 current ones
// (a tenth of them changed).
func BenchmarkPlan(b *testing.B) {
	d, cur := benchState(10000)
	cfg := DefaultConfig("bench")
	b.ReportAllocs()
	var changes int
	cpu := cpuTime()
	for b.Loop() {
		c, err := Plan(d, cur, cfg)
		if err != nil {
			b.Fatal(err)
		}
		changes = c.Len()
	}
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
	b.ReportMetric(float64(changes), "changes/op")
}

// BenchmarkFlapStorm flips the target of 100 names spread over 4 zones on
// each reconcile and reports provider write calls per reconcile against
// RRsets really changed.
func BenchmarkFlapStorm(b *testing.B) {
	const names = 100
	zones := []string{"s0.test.", "s1.test.", "s2.test.", "s3.test."}
	f := newFake(zones...)
	cfg := localConfig()
	r, err := New(f, cfg, Options{})
	if err != nil {
		b.Fatal(err)
	}
	desired := func(flip int) Desired {
		var d Desired
		for i := 0; i < names; i++ {
			v := "192.0.2.1"
			if (i+flip)%2 == 0 {
				v = "192.0.2.2"
			}
			d.Sets = append(d.Sets, RRSet{Zone: zones[i%len(zones)], Name: fmt.Sprintf("n%03d", i), Type: "A", TTL: 30 * time.Second, Values: []string{v}})
		}
		return d
	}
	ctx := context.Background()
	if _, err := r.Apply(ctx, desired(0)); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	writes, changed, flip := 0, 0, 0
	for b.Loop() {
		flip++
		rep, err := r.Apply(ctx, desired(flip))
		if err != nil {
			b.Fatal(err)
		}
		writes += rep.Writes
		changed += rep.Changes.Len()
	}
	b.ReportMetric(float64(writes)/float64(b.N), "writes/reconcile")
	b.ReportMetric(float64(changed)/float64(b.N), "rrsets-changed/reconcile")
}

// BenchmarkPlanSteady plans 10,000 desired RRsets against a zone that
// already matches: the cost of every periodic resync.
func BenchmarkPlanSteady(b *testing.B) {
	d, cur := benchState(10000)
	for i := range d.Sets {
		d.Sets[i].Values = []string{"192.0.2.1"}
	}
	for i, r := range cur[0].Records {
		if a, ok := r.(libdns.Address); ok && a.IP != mustAddr("192.0.2.1") {
			cur[0].Records[i] = libdns.TXT{Name: "noise" + a.Name, TTL: a.TTL, Text: "x"}
		}
	}
	cfg := DefaultConfig("bench")
	b.ReportAllocs()
	cpu := cpuTime()
	for b.Loop() {
		c, err := Plan(d, cur, cfg)
		if err != nil || !c.Empty() {
			b.Fatal(err, c.Len())
		}
	}
	b.ReportMetric(float64(cpuTime()-cpu)/float64(b.N), "cpu-ns/op")
}
