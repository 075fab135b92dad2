//go:build unix

package zonetransfer_test

import (
	"bufio"
	"context"
	"fmt"
	"net/netip"
	"os"
	"runtime"
	"runtime/metrics"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gslbkit/gslb/provider/memory"
	"github.com/gslbkit/gslb/provider/zonetransfer"
	"github.com/libdns/libdns"
	"github.com/miekg/dns"
)

// The transfer benchmarks at scale: a zone of n A records at n names built
// through memory.SnapshotBuilder, and 1,000 of them changed in one write
// (scale.sh's fifth step).
//
//	go test -run '^$' -bench 'XFRScale' -benchtime 3x ./provider/zonetransfer/
//
// BenchmarkIXFRScale reads the IXFR of the 1,000 changes (ReadXFR),
// reporting the process's CPU time too (cpu-ms: the machine may be shared,
// and wall time then measures the share);
// BenchmarkAXFRScale serves the whole AXFR through ServeTCP to a writer
// that throws it away, reporting the time to the first message
// (first-ms), the process's CPU time (user and system, GC included) until
// then (first-cpu-ms) and in all (cpu-ms), the messages (msgs) and bytes
// (MB, with their TCP lengths) of one transfer, and the largest growth of the heap's objects during the
// transfer over the heap before it (peak-heap-MB). With
// GSLBKIT_SCALE_ZONEFILE naming a zone file of example.test. (zonegen's
// scale.zone, bench/dns-vs-peers/zonegen), it serves that zone too
// (zonefile/fresh=true: each transfer the first of a new zone version;
// fresh=false: later transfers of one version), loaded as the embedded
// server loads it.

const scaleZone = "scale.test."

var scaleSizes = []int{100_000, 1_000_000}

type scaleFixture struct {
	p      *memory.Provider
	before uint32 // the serial before the 1,000 changes
}

var scaleFixtures sync.Map // size → *scaleFixture

func scaleProvider(b *testing.B, n int) *scaleFixture {
	if f, ok := scaleFixtures.Load(n); ok {
		return f.(*scaleFixture)
	}
	p, err := memory.New(memory.DefaultConfig())
	if err != nil {
		b.Fatal(err)
	}
	bl := memory.NewSnapshotBuilder(context.Background())
	soa := memory.SOA{NS: "ns1." + scaleZone, Mbox: "hostmaster." + scaleZone, Serial: 1,
		Refresh: 60, Retry: 60, Expire: 600, Minimum: 30, TTL: 60}
	if err := bl.Zone(scaleZone, soa); err != nil {
		b.Fatal(err)
	}
	if err := bl.Add(memory.ZoneRecord{Name: "@", Type: "NS", TTL: 60, Data: "ns1." + scaleZone}); err != nil {
		b.Fatal(err)
	}
	for i := range n {
		ip := netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
		if err := bl.Add(memory.ZoneRecord{Name: fmt.Sprintf("h%d", i), Type: "A", TTL: 60, Data: ip.String()}); err != nil {
			b.Fatal(err)
		}
	}
	if err := p.RestoreBuilt(bl); err != nil {
		b.Fatal(err)
	}
	before, err := p.SOA(scaleZone)
	if err != nil {
		b.Fatal(err)
	}
	changes := make([]libdns.Record, 1000)
	for i := range changes {
		changes[i] = libdns.Address{Name: fmt.Sprintf("h%d", i*(n/1000)), TTL: time.Minute,
			IP: netip.AddrFrom4([4]byte{192, 0, 2, byte(i)})}
	}
	if _, err := p.SetRecords(context.Background(), scaleZone, changes); err != nil {
		b.Fatal(err)
	}
	f := &scaleFixture{p: p, before: before.Serial}
	scaleFixtures.Store(n, f)
	runtime.GC()
	return f
}

// cpuTime is the process's CPU time so far, user and system.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func BenchmarkIXFRScale(b *testing.B) {
	for _, n := range scaleSizes {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			f := scaleProvider(b, n)
			b.ReportAllocs()
			cpu := cpuTime()
			defer func() { b.ReportMetric(float64((cpuTime()-cpu).Microseconds())/1000/float64(b.N), "cpu-ms") }()
			for b.Loop() {
				x, err := zonetransfer.ReadXFR(f.p, scaleZone, true, f.before)
				if err != nil || x.Kind != zonetransfer.XFRIncremental || len(x.Records) != 2004 {
					b.Fatalf("%v %v %d", err, x.Kind, len(x.Records))
				}
			}
		})
	}
}

// firstWriter throws away what is written, noting when the first write
// came and the most the heap's objects grew over base.
type firstWriter struct {
	start, first time.Time
	firstCPU     time.Duration
	base, peak   uint64
	bytes, msgs  int
	sample       []metrics.Sample
}

func (w *firstWriter) Write(b []byte) (int, error) {
	if w.first.IsZero() {
		w.first = time.Now()
		w.firstCPU = cpuTime()
	}
	w.bytes += len(b)
	w.msgs++
	metrics.Read(w.sample)
	if h := w.sample[0].Value.Uint64(); h > w.base && h-w.base > w.peak {
		w.peak = h - w.base
	}
	return len(b), nil
}

func BenchmarkAXFRScale(b *testing.B) {
	for _, n := range scaleSizes {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			benchAXFR(b, scaleProvider(b, n).p, scaleZone, n*16, false)
		})
	}
	if file := os.Getenv("GSLBKIT_SCALE_ZONEFILE"); file != "" {
		var p *memory.Provider
		for _, fresh := range []bool{true, false} {
			b.Run(fmt.Sprintf("zonefile/fresh=%v", fresh), func(b *testing.B) {
				var err error
				if p == nil {
					if p, err = zoneFileProvider(file); err != nil {
						b.Fatal(err)
					}
				}
				benchAXFR(b, p, "example.test.", 0, fresh)
			})
		}
	}
}

// zoneFileProvider loads example.test. from file as the embedded server
// of bench/dns-vs-peers does with -load build.
func zoneFileProvider(file string) (*memory.Provider, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	bl := memory.NewSnapshotBuilder(context.Background())
	if _, err := bl.ReadZoneFile(bufio.NewReaderSize(f, 1<<20), "example.test.", memory.ZoneFileConfig{Filename: file}); err != nil {
		return nil, err
	}
	p := new(memory.Provider)
	if err := p.RestoreBuilt(bl); err != nil {
		return nil, err
	}
	runtime.GC()
	return p, nil
}

// benchAXFR serves zone's AXFR from p (see BenchmarkAXFRScale), failing
// when a transfer is under minBytes. With fresh, each transfer is the
// first of its zone version (one record written before it, the timer
// stopped), which sorts the names; without, transfers after the first
// read the order the first kept.
func benchAXFR(b *testing.B, p *memory.Provider, zone string, minBytes int, fresh bool) {
	x, err := zonetransfer.NewTransfer(p, zonetransfer.TransferConfig{Allow: []zonetransfer.TransferRule{{}}}, nil)
	if err != nil {
		b.Fatal(err)
	}
	m := new(dns.Msg)
	m.SetAxfr(zone)
	q, err := m.Pack()
	if err != nil {
		b.Fatal(err)
	}
	src := netip.MustParseAddr("127.0.0.1")
	var first, firstCPU, allCPU time.Duration
	var peak uint64
	var msgs, bytes int
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		if fresh {
			rec := libdns.Address{Name: "bench-fresh", TTL: time.Minute, IP: netip.AddrFrom4([4]byte{192, 0, 2, byte(i)})}
			if _, err := p.SetRecords(context.Background(), zone, []libdns.Record{rec}); err != nil {
				b.Fatal(err)
			}
		}
		runtime.GC()
		w := &firstWriter{sample: []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}}
		metrics.Read(w.sample)
		w.base = w.sample[0].Value.Uint64()
		b.StartTimer()
		w.start = time.Now()
		cpu := cpuTime()
		if ok, err := x.ServeTCP(w, q, src, nil); !ok || err != nil {
			b.Fatal(ok, err)
		}
		allCPU += cpuTime() - cpu
		first += w.first.Sub(w.start)
		firstCPU += w.firstCPU - cpu
		peak = max(peak, w.peak)
		msgs, bytes = w.msgs, w.bytes
		if w.bytes < minBytes {
			b.Fatalf("%d bytes, want at least %d", w.bytes, minBytes)
		}
	}
	b.ReportMetric(float64(first.Microseconds())/1000/float64(b.N), "first-ms")
	b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
	b.ReportMetric(float64(firstCPU.Microseconds())/1000/float64(b.N), "first-cpu-ms")
	b.ReportMetric(float64(allCPU.Microseconds())/1000/float64(b.N), "cpu-ms")
	b.ReportMetric(float64(msgs), "msgs")
	b.ReportMetric(float64(bytes)/1e6, "MB")
}
