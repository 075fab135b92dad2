//go:build unix

package zonedata_test

import (
	"fmt"
	"iter"
	"syscall"
	"testing"

	"github.com/gslbkit/gslb/provider/internal/zonedata"
	"github.com/miekg/dns"
)

// millionNames is a zone of a million names, zonegen's
// (h0000000.example.test. on), made in order as a load makes them.
func millionNames() *zonedata.Zone {
	const n = 1_000_000
	z := &zonedata.Zone{Name: "example.test.", Nodes: make(map[string]*zonedata.Node, n)}
	for i := range n {
		name := fmt.Sprintf("h%07d.example.test.", i)
		rr := &dns.A{Hdr: dns.RR_Header{Name: name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60}, A: []byte{10, byte(i >> 16), byte(i >> 8), byte(i)}}
		z.Nodes[name] = zonedata.NewNode(dns.TypeA, []zonedata.Rec{{Wire: rr}})
	}
	return z
}

// benchSort reports the CPU time (the process's, which load does not
// inflate as it does wall time) of walking z in the order of sorted.
func benchSort(b *testing.B, z *zonedata.Zone, sorted func(*zonedata.Zone) int) {
	b.ResetTimer()
	var ru0, ru1 syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	defer func() {
		_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru1)
		cpu := ru1.Utime.Nano() + ru1.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano()
		b.ReportMetric(float64(cpu)/1e6/float64(b.N), "cpu-ms")
	}()
	for b.Loop() {
		if c := sorted(z); c < len(z.Nodes)-1 {
			b.Fatal(c)
		}
	}
}

func count(nodes iter.Seq[*zonedata.Node]) int {
	c := 0
	for range nodes {
		c++
	}
	return c
}

// BenchmarkCanonicalNodes sorts the nodes of a zone of a million names.
func BenchmarkCanonicalNodes(b *testing.B) {
	benchSort(b, millionNames(), func(z *zonedata.Zone) int { return count(zonedata.CanonicalNodes(z)) })
}

// BenchmarkSortedNodes is BenchmarkCanonicalNodes for SortedNodes (what a
// snapshot writes), BenchmarkSortedOwners for the names SortedOwners
// sorts.
func BenchmarkSortedNodes(b *testing.B) {
	benchSort(b, millionNames(), func(z *zonedata.Zone) int { return count(zonedata.SortedNodes(z)) })
}

func BenchmarkSortedOwners(b *testing.B) {
	benchSort(b, millionNames(), func(z *zonedata.Zone) int { return len(zonedata.SortedOwners(z)) })
}

// BenchmarkNewIndex builds the name index of a zone of a million names
// (what a version of a large zone costs beside a write's Clone of its
// Nodes, BenchmarkZoneClone).
func BenchmarkNewIndex(b *testing.B) {
	benchSort(b, millionNames(), func(z *zonedata.Zone) int { zonedata.NewIndex(z); return len(z.Nodes) })
}

// BenchmarkZoneClone clones a zone of a million names, as every write
// does.
func BenchmarkZoneClone(b *testing.B) {
	benchSort(b, millionNames(), func(z *zonedata.Zone) int { return len(z.Clone().Nodes) })
}
