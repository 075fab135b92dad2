//go:build unix

package memory_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gslbkit/gslb/provider/memory"
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
// load: "heapB/rec"), the process's CPU seconds per load (user + system, GC
// included: "cpu-s/load") and the allocations per load. A heap figure is
// exact on a shared machine, unlike RSS and time; run it with
// -benchtime=1x or 3x:
//
//	go test -run '^$' -bench ScaleLoad -benchtime 3x ./provider/memory/
func BenchmarkScaleLoad(b *testing.B) {
	n := 100000
	if s := os.Getenv("GSLBKIT_SCALE_NAMES"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 20 {
			b.Fatalf("GSLBKIT_SCALE_NAMES=%q: want a number of names ≥ 20", s)
		}
		n = v
	}
	zone, records := scaleZone(n)
	b.ReportAllocs()
	var heap, cpu float64
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
		scaleKept = p // for -memprofile's inuse figures
		b.StartTimer()
	}
	b.ReportMetric(heap/float64(b.N)/float64(records), "heapB/rec")
	b.ReportMetric(cpu/float64(b.N), "cpu-s/load")
	b.ReportMetric(float64(records), "records")
}
