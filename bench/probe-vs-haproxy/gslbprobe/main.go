// Command gslbprobe health-checks N loopback targets with probe.Monitor, the
// gslbkit side of the probe-vs-haproxy benchmark: the same interval as
// HAProxy's "check inter", a new connection per probe, HTTP ("GET /",
// expecting 200), HTTPS (the same over TLS, verified against the CA file
// -ca names, X25519 only by default, sessions resumed unless -no-resume)
// or TCP connect-only checks. It runs until SIGTERM or SIGINT and prints a
// one-line summary of the Monitor's statistics on exit.
//
// Target i is 127.0.0.1:base+i, or, with -ports P > 0, port base + i mod P
// of loopback address 127.1.0.0 + i / P (P targets per address, one per
// port: 100,000 targets over 25,000 addresses and 4 ports with P = 4);
// HTTPS checks then verify the name target.test (the targets'
// certificate has it and 127.0.0.1 only). bench/probe-vs-haproxy's lib.sh
// gives HAProxy the same addresses.
package main

import (
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"log"
	"net/netip"
	"os"
	"os/signal"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/gslbkit/gslb/probe"
)

func main() {
	n := flag.Int("n", 1000, "number of targets")
	base := flag.Int("base", 20000, "first port")
	ports := flag.Int("ports", 0, "targets per loopback address, one per port from base (0: every target on 127.0.0.1, one port each)")
	mode := flag.String("mode", "http", "http, https or tcp")
	caFile := flag.String("ca", "", "https: the CA certificate file the targets' certificates are verified with (empty: no verification)")
	curves := flag.String("curves", "X25519", "https: the key exchanges offered, comma-separated (TLSConfig.Curves; empty: Go's default)")
	noResume := flag.Bool("no-resume", false, "https: a full TLS handshake at every probe (TLSConfig.DisableResumption)")
	maxVersion := flag.String("max-version", "", `https: the highest TLS version offered (TLSConfig.MaxVersion: "1.2" or "1.3"; empty: 1.3)`)
	interval := flag.Duration("interval", time.Second, "probe interval")
	timeout := flag.Duration("timeout", time.Second, "probe timeout")
	workers := flag.Int("workers", 256, "Monitor concurrency")
	complete := flag.Bool("complete-handshake", false, "tcp mode: complete the handshake before the reset (TCPConfig.CompleteHandshake)")
	noLoop := flag.Bool("no-event-loop", false, "run every probe on a worker goroutine (MonitorConfig.NoEventLoop)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile to this file")
	memprofile := flag.String("memprofile", "", "write a heap profile to this file on exit")
	flag.Parse()

	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			log.Fatal(err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			log.Fatal(err)
		}
		defer pprof.StopCPUProfile()
	}

	cfg := probe.DefaultMonitorConfig()
	cfg.Concurrency = *workers
	cfg.NoEventLoop = *noLoop
	m, err := probe.NewMonitor(cfg, nil, nil)
	if err != nil {
		log.Fatal(err)
	}
	pol := probe.DefaultPolicy()
	pol.Interval = *interval
	pol.Timeout = *timeout
	pol.MaxBackoff = *interval
	pol.InitialJitter = *interval // spread the first probes over one interval, as HAProxy does
	for i := range *n {
		addr := targetAddr(i, *base, *ports)
		var p probe.Prober
		switch *mode {
		case "http":
			p, err = probe.NewHTTP(addr, probe.DefaultHTTPConfig())
		case "https":
			hc := probe.DefaultHTTPConfig()
			hc.TLS = &probe.TLSConfig{CAFile: *caFile, InsecureSkipVerify: *caFile == "", DisableResumption: *noResume, MaxVersion: *maxVersion}
			if *ports > 0 {
				hc.TLS.ServerName = "target.test"
			}
			if *curves != "" {
				hc.TLS.Curves = strings.Split(*curves, ",")
			}
			p, err = probe.NewHTTP(addr, hc)
		case "tcp":
			p, err = probe.NewTCP(addr, probe.TCPConfig{CompleteHandshake: *complete})
		default:
			log.Fatalf("mode %q: want http, https or tcp", *mode)
		}
		if err != nil {
			log.Fatal(err)
		}
		if err := m.Add(probe.Target{ID: addr, Prober: p, Policy: pol}); err != nil {
			log.Fatal(err)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	fmt.Println("ready")
	runDone := make(chan error, 1)
	go func() { runDone <- m.Run(ctx) }()
	// Sample the runtime once a second while the Monitor runs: the last
	// sample is what the RSS read by run.sh reflects; goroutines (the
	// Monitor's workers, started on demand) are reported at their peak.
	var ms runtime.MemStats
	live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}} // heap marked live by the last GC
	peakG, lastG := 0, 0
	tick := time.NewTicker(time.Second)
	for sampling := true; sampling; {
		select {
		case <-ctx.Done():
			sampling = false
		case <-tick.C:
			runtime.ReadMemStats(&ms)
			metrics.Read(live)
			lastG = runtime.NumGoroutine()
			peakG = max(peakG, lastG)
		}
	}
	tick.Stop()
	if err := <-runDone; err != nil {
		log.Print(err)
		return
	}
	fmt.Fprintf(os.Stderr, "gslbprobe: memory while running: heap in use %d KiB (live after the last GC %d KiB, GC goal %d KiB), stacks %d KiB, runtime other %d KiB, heap kept idle %d KiB, from the OS %d KiB, %d goroutines (peak %d), %d GCs\n",
		ms.HeapInuse>>10, live[0].Value.Uint64()>>10, ms.NextGC>>10, ms.StackInuse>>10, (ms.MSpanInuse+ms.MCacheInuse+ms.BuckHashSys+ms.GCSys+ms.OtherSys)>>10,
		(ms.HeapIdle-ms.HeapReleased)>>10, ms.Sys>>10, lastG, peakG, ms.NumGC)
	if *memprofile != "" {
		f, err := os.Create(*memprofile)
		if err != nil {
			log.Fatal(err)
		}
		runtime.GC()
		if err := pprof.WriteHeapProfile(f); err != nil {
			log.Fatal(err)
		}
		f.Close()
	}
	var probes, fails uint64
	var byKind [probe.NumKinds]uint64
	served, lastErr := 0, ""
	var latency time.Duration
	snap := m.Snapshot()
	for _, st := range snap {
		latency += st.SmoothedLatency / time.Duration(len(snap))
		probes += st.Probes
		fails += st.Failures
		for k, c := range st.FailuresByKind {
			byKind[k] += c
		}
		if st.LastError != "" {
			lastErr = st.LastError
		}
		if st.Served {
			served++
		}
	}
	fmt.Fprintf(os.Stderr, "gslbprobe: %d targets, %d served, %d probes, mean latency %v, %d failures",
		*n, served, probes, latency.Round(time.Microsecond), fails)
	for k, c := range byKind {
		if c > 0 {
			fmt.Fprintf(os.Stderr, ", %s %d", probe.Kind(k), c)
		}
	}
	if lastErr != "" {
		fmt.Fprintf(os.Stderr, " (last error: %s)", lastErr)
	}
	fmt.Fprintln(os.Stderr)
}

// targetAddr returns target i's address (see the package doc).
func targetAddr(i, base, ports int) string {
	if ports <= 0 {
		return "127.0.0.1:" + strconv.Itoa(base+i)
	}
	a := [4]byte{127, 1, 0, 0}
	binary.BigEndian.PutUint32(a[:], binary.BigEndian.Uint32(a[:])+uint32(i/ports))
	return netip.AddrPortFrom(netip.AddrFrom4(a), uint16(base+i%ports)).String()
}
