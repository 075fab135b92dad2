//go:build unix

package memory_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gslbkit/gslb/provider/memory"
	"github.com/libdns/libdns"
	"github.com/miekg/dns"
)

// scaleZone writes the zone bench/dns-vs-peers/zonegen writes for n names
// (the same 20 kinds by name number) and returns it with its record count.
func scaleZone(n int) (string, int) {
	var w strings.Builder
	w.WriteString("$ORIGIN example.test.\n$TTL 300\n" +
		"@ IN SOA ns1.example.test. hostmaster.example.test. 1 3600 600 86400 300\n" +
		"@ IN NS ns1.example.test.\nns1 IN A 127.0.0.1\n")
	records := 2
	for i := range n {
		a := fmt.Sprintf("10.%d.%d.%d", i>>16&255, i>>8&255, i&255)
		switch k := i % 20; {
		case k < 10:
			fmt.Fprintf(&w, "h%07d IN A %s\n", i, a)
			records++
			if i%2 == 0 {
				fmt.Fprintf(&w, "h%07d IN A 10.%d.%d.%d\n", i, 128+i>>16&127, i>>8&255, i&255)
				records++
			}
		case k < 13:
			fmt.Fprintf(&w, "h%07d IN AAAA 2001:db8::%x:%x\n", i, i>>16, i&0xffff)
			records++
		case k < 15:
			fmt.Fprintf(&w, "h%07d IN TXT \"v=spf1 ip4:%s -all\"\n", i, a)
			records++
		case k < 18:
			fmt.Fprintf(&w, "h%07d IN CNAME h%07d.example.test.\n", i, i-i%20)
			records++
		case k == 18:
			fmt.Fprintf(&w, "*.w%07d IN A %s\n", i, a)
			records++
		default:
			fmt.Fprintf(&w, "d%07d IN NS ns.d%07d.example.test.\nns.d%07d IN A %s\n", i, i, i, a)
			records += 2
		}
	}
	return w.String(), records
}

// loadScale loads zone as bench/dns-vs-peers/embedded does with -load
// build: SnapshotBuilder.ReadZoneFile, RestoreBuilt.
func loadScale(zone string) (*memory.Provider, error) {
	b := memory.NewSnapshotBuilder(context.Background())
	if _, err := b.ReadZoneFile(strings.NewReader(zone), "example.test.", memory.ZoneFileConfig{Filename: "scale.zone"}); err != nil {
		return nil, err
	}
	p := new(memory.Provider)
	if err := p.RestoreBuilt(b); err != nil {
		return nil, err
	}
	return p, nil
}

// scaleNames returns the names GSLBKIT_SCALE_NAMES asks for, 100,000 by
// default.
func scaleNames(b *testing.B) int {
	s := os.Getenv("GSLBKIT_SCALE_NAMES")
	if s == "" {
		return 100000
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 20 {
		b.Fatalf("GSLBKIT_SCALE_NAMES=%q: want a number of names ≥ 20", s)
	}
	return n
}

// scaleLoaded returns the zone of GSLBKIT_SCALE_NAMES names (scaleNames)
// loaded (loadScale), and that number.
func scaleLoaded(b *testing.B) (*memory.Provider, int) {
	n := scaleNames(b)
	zone, _ := scaleZone(n)
	p, err := loadScale(zone)
	if err != nil {
		b.Fatal(err)
	}
	return p, n
}

// scaleKept keeps BenchmarkScaleLoad's last zone live, so that a heap
// profile (-memprofile) shows what it holds.
var scaleKept *memory.Provider

func cpuSeconds() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// BenchmarkScaleLoad loads a zone like bench/dns-vs-peers/scale.sh's
// (GSLBKIT_SCALE_NAMES names, 100,000 by default) through the path of its
// -load build, and reports the live heap the loaded zone holds per record
// (runtime.MemStats.HeapAlloc after runtime.GC, less the heap before the
// load: "heapB/rec"), the bytes of the spans holding it once the load's
// garbage went back to the system (HeapInuse after debug.FreeOSMemory:
// "spanB/rec", what the heap adds to the RSS: live objects and the holes
// the load's garbage left beside them), the process's CPU seconds per
// load (user + system, GC included: "cpu-s/load") and the allocations per
// load. A heap figure is exact on a shared machine, unlike RSS and time;
// run it with -benchtime=1x or 3x:
//
//	go test -run '^$' -bench ScaleLoad -benchtime 3x ./provider/memory/
func BenchmarkScaleLoad(b *testing.B) {
	n := scaleNames(b)
	zone, records := scaleZone(n)
	b.ReportAllocs()
	var heap, spans, cpu float64
	for b.Loop() {
		b.StopTimer()
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		c0 := cpuSeconds()
		b.StartTimer()
		p, err := loadScale(zone)
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		cpu += cpuSeconds() - c0
		runtime.GC()
		debug.FreeOSMemory()
		runtime.ReadMemStats(&after)
		heap += float64(after.HeapAlloc) - float64(before.HeapAlloc)
		spans += float64(after.HeapInuse) - float64(before.HeapInuse)
		scaleKept = p // for -memprofile's inuse figures
		b.StartTimer()
	}
	b.ReportMetric(heap/float64(b.N)/float64(records), "heapB/rec")
	b.ReportMetric(spans/float64(b.N)/float64(records), "spanB/rec")
	b.ReportMetric(cpu/float64(b.N), "cpu-s/load")
	b.ReportMetric(float64(records), "records")
}

// scaleQueries returns count queries for the zone of scaleZone(n) as
// bench/dns-vs-peers/zonegen writes its uniform.txt: uniform over the
// names, each asked its own type (A for a CNAME, a random label under a
// wildcard, a name below a delegation), 1 in 20 a name that does not
// exist; no EDNS, RD set, as dnsperf sends them. The queries lie end to
// end in one slab, as a server's receive buffers are few: 2,000,000
// allocations of their own cost the loop a cache miss per query of its
// own (0.75 of parseFast's 10.8 D1 misses a query at 100,000 names).
func scaleQueries(tb testing.TB, n, count int) [][]byte {
	return scaleQueriesSpread(tb, n, count, false)
}

// scaleQueriesSpread is scaleQueries, or with zipf its zipf.txt: the names
// asked Zipf-like (s = 1.1 over a random permutation of the names).
func scaleQueriesSpread(tb testing.TB, n, count int, zipf bool) [][]byte {
	r := rand.New(rand.NewPCG(uint64(n), 7))
	var perm []int
	var z *rand.Zipf
	if zipf { // drawn only then: the uniform queries stay those of before
		perm, z = r.Perm(n), rand.NewZipf(r, 1.1, 1, uint64(n-1))
	}
	qs := make([][]byte, count)
	var slab []byte
	ends := make([]int, count)
	for k := range qs {
		name, typ := fmt.Sprintf("nx%08d.example.test.", r.IntN(100000000)), dns.TypeA
		if r.IntN(20) != 0 {
			i := r.IntN(n)
			if zipf {
				i = perm[z.Uint64()]
			}
			switch c := i % 20; {
			case c < 10, c >= 15 && c < 18:
				name = fmt.Sprintf("h%07d.example.test.", i)
			case c < 13:
				name, typ = fmt.Sprintf("h%07d.example.test.", i), dns.TypeAAAA
			case c < 15:
				name, typ = fmt.Sprintf("h%07d.example.test.", i), dns.TypeTXT
			case c == 18:
				name = fmt.Sprintf("q%d.w%07d.example.test.", r.IntN(1000), i)
			default:
				name = fmt.Sprintf("www.d%07d.example.test.", i)
			}
		}
		m := new(dns.Msg)
		m.SetQuestion(name, typ)
		m.Id = uint16(k)
		q, err := m.Pack()
		if err != nil {
			tb.Fatal(err)
		}
		slab = append(slab, q...)
		ends[k] = len(slab)
	}
	start := 0
	for k, end := range ends {
		qs[k] = slab[start:end:end]
		start = end
	}
	return qs
}

// BenchmarkScaleQueries answers scaleQueries through RespondUDP over the
// zone BenchmarkScaleLoad loads (GSLBKIT_SCALE_NAMES names, 100,000 by
// default), as bench/dns-vs-peers/scale.sh's uniform load asks it. What a
// query costs as the zone grows is its memory traffic more than its
// instructions: without hardware counters, count both per query with
// callgrind's cache simulation, collecting in its loop only (askScale:
// every event then belongs to one of the N queries), at 10,000 and at
// 1,000,000 names (the caches given are this host's L1 and L3):
//
//	go test -c -o /tmp/memory.test ./provider/memory/
//	GODEBUG=asyncpreemptoff=1 GOMAXPROCS=1 GSLBKIT_SCALE_NAMES=1000000 \
//	  valgrind --tool=callgrind --cache-sim=yes --D1=32768,8,64 --LL=33554432,16,64 \
//	  --collect-atstart=no --toggle-collect='*memory_test.askScale' \
//	  /tmp/memory.test -test.run '^$' -test.bench 'ScaleQueries$' -test.benchtime 200000x
func BenchmarkScaleQueries(b *testing.B) { benchScaleQueries(b, false) }

// BenchmarkScaleQueriesZipf is BenchmarkScaleQueries with scale.sh's
// Zipf-like load (scaleQueriesSpread), whose head the hot table answers.
func BenchmarkScaleQueriesZipf(b *testing.B) { benchScaleQueries(b, true) }

func benchScaleQueries(b *testing.B, zipf bool) {
	p, n := scaleLoaded(b)
	qs := scaleQueriesSpread(b, n, 1<<17, zipf)
	buf := make([]byte, 4096)
	src := netip.MustParseAddr("192.0.2.1")
	for _, q := range qs[:1<<14] { // the hot table, and the stack grown
		p.RespondUDP(q, buf, src)
	}
	runtime.GC()
	b.ReportAllocs()
	askScale(b, p, qs, buf, src)
}

// askScale is BenchmarkScaleQueries's loop, a function of its own for
// callgrind's --toggle-collect: what it counts is the queries' alone.
//
//go:noinline
func askScale(b *testing.B, p *memory.Provider, qs [][]byte, buf []byte, src netip.Addr) {
	i := 0
	for b.Loop() {
		if p.RespondUDP(qs[i%len(qs)], buf, src) == nil {
			b.Fatalf("%x: no reply", qs[i%len(qs)])
		}
		i++
	}
}

// TestScaleZoneBuiltAnswersAsWritten: the zone of scale.sh loaded in bulk
// (ReadZoneFile and RestoreBuilt, whose builder packs its common names
// with their records) answers its uniform mix as the same records written
// with AppendRecords do: the same rcode and the same answer, referral and
// additional records, through the fast path as through the general one.
func TestScaleZoneBuiltAnswersAsWritten(t *testing.T) {
	const names = 400
	zone, _ := scaleZone(names)
	built, err := loadScale(zone)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	recs, err := built.GetRecords(ctx, "example.test.")
	if err != nil {
		t.Fatal(err)
	}
	written := new(memory.Provider)
	if err := written.AddZone("example.test."); err != nil {
		t.Fatal(err)
	}
	if _, err := written.SetRecords(ctx, "example.test.", recs); err != nil {
		t.Fatal(err)
	}
	src := netip.MustParseAddr("192.0.2.1")
	buf := make([]byte, 4096)
	answered := 0
	for _, q := range scaleQueries(t, names, 3000) {
		want := new(dns.Msg)
		if err := want.Unpack(written.RespondWire(q, src, false)); err != nil {
			t.Fatal(err)
		}
		if len(want.Answer) > 0 {
			answered++
		}
		for _, got := range [][]byte{built.RespondWire(q, src, false), built.RespondUDP(q, buf, src)} {
			m := new(dns.Msg)
			if err := m.Unpack(got); err != nil {
				t.Fatal(err)
			}
			if m.Rcode != want.Rcode || fmt.Sprint(m.Answer, m.Extra, nonSOA(m.Ns)) != fmt.Sprint(want.Answer, want.Extra, nonSOA(want.Ns)) {
				t.Fatalf("%s: built\n%v\nwritten\n%v", want.Question[0].Name, m, want)
			}
		}
	}
	if answered < 2000 {
		t.Errorf("%d of 3,000 queries answered: the zone was not loaded", answered)
	}
}

func nonSOA(rrs []dns.RR) []dns.RR {
	var out []dns.RR
	for _, rr := range rrs {
		if rr.Header().Rrtype != dns.TypeSOA {
			out = append(out, rr)
		}
	}
	return out
}

// BenchmarkScaleWrite changes one name's address in the zone
// BenchmarkScaleLoad loads (GSLBKIT_SCALE_NAMES names), one SetRecords a
// write, and reports the process's CPU milliseconds per write ("cpu-ms":
// the write's clone of the zone's names, and what a new version costs
// besides: the name index carried over, updated for the name; a zone
// whose version has none builds it in the background once a query asks,
// and the loop asks one after each write).
func BenchmarkScaleWrite(b *testing.B) {
	p, n := scaleLoaded(b)
	q := scaleQueries(b, n, 1)[0]
	buf := make([]byte, 4096)
	src := netip.MustParseAddr("192.0.2.1")
	ctx := context.Background()
	runtime.GC()
	c0 := cpuSeconds()
	i := 0
	for b.Loop() {
		rr := libdns.Address{Name: "h0000000", TTL: 300 * time.Second, IP: netip.AddrFrom4([4]byte{10, 99, byte(i >> 8), byte(i)})}
		if _, err := p.SetRecords(ctx, "example.test.", []libdns.Record{rr}); err != nil {
			b.Fatal(err)
		}
		p.RespondUDP(q, buf, src)
		i++
	}
	b.ReportMetric((cpuSeconds()-c0)*1e3/float64(b.N), "cpu-ms")
}
