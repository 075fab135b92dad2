//go:build unix

package zonedata_test

import (
	"fmt"
	"syscall"
	"testing"

	"github.com/gslbkit/gslb/internal/zonedata"
	"github.com/miekg/dns"
)

// BenchmarkCanonicalNodes sorts the nodes of a zone of a million names,
// zonegen's (h0000000.example.test. on), made in order as a load makes
// them.
func BenchmarkCanonicalNodes(b *testing.B) {
	const n = 1_000_000
	z := &zonedata.Zone{Name: "example.test.", Nodes: make(map[string]*zonedata.Node, n)}
	for i := range n {
		name := fmt.Sprintf("h%07d.example.test.", i)
		rr := &dns.A{Hdr: dns.RR_Header{Name: name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60}, A: []byte{10, byte(i >> 16), byte(i >> 8), byte(i)}}
		z.Nodes[name] = zonedata.NewNode(dns.TypeA, []zonedata.Rec{{Wire: rr}})
	}
	b.ResetTimer()
	var ru0, ru1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	defer func() {
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
		cpu := ru1.Utime.Nano() + ru1.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano()
		b.ReportMetric(float64(cpu)/1e6/float64(b.N), "cpu-ms")
	}()
	for b.Loop() {
		c := 0
		for range zonedata.CanonicalNodes(z) {
			c++
		}
		if c != n {
			b.Fatal(c)
		}
	}
}
