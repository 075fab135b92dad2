// Command embedded serves a zone file from gslbkit's embedded DNS zone
// (provider/memory) for side-by-side benchmarks, or writes the benchmark's
// zone and query files.
//
//	embedded -gen DIR                       write DIR/example.test.zone and DIR/queries.txt
//	embedded -zonefile F -addr 127.0.0.1:5301 [-mode fast|batch|miekg] [-nets FILE] [-sign [-sign-alg 13|15]]
//	embedded -nets FILE -sticky-ranks OUT   write gdnsd's equivalent of the sticky name's choices
//
// Modes: fast is dnsserver.Server (batched recvmmsg/sendmmsg loop and the
// packed-reply fast path); batch is the same loop answering every query
// through the general path (RespondWire); miekg is a plain miekg/dns
// dns.Server with the Provider as its handler (one recvmsg and one sendmsg
// per query). With -sign the zone is signed online (provider/dnssec: one
// combined signing key made at start, ECDSA P-256 or Ed25519, default
// settings) and answers queries with the DO bit signed. It serves until
// SIGINT or SIGTERM.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/gslbkit/gslb/provider/dnssec"
	"github.com/gslbkit/gslb/provider/dnsserver"
	"github.com/gslbkit/gslb/provider/memory"
	"github.com/gslbkit/gslb/provider/zonetransfer"
	"github.com/libdns/libdns"
	"github.com/miekg/dns"
	"golang.org/x/net/ipv4"
)

const zoneName = "example.test."

func main() {
	gen := flag.String("gen", "", "write the zone and query files into this directory and exit")
	zoneFile := flag.String("zonefile", "", "zone file to serve")
	addr := flag.String("addr", "127.0.0.1:5301", "UDP and TCP address")
	mode := flag.String("mode", "fast", "fast, batch or miekg")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile here while serving")
	memprofile := flag.String("memprofile", "", "write a heap profile here once the zone is loaded")
	stickyRanks := flag.String("sticky-ranks", "", "with -nets: write each prefix's sticky addresses in failover.Sticky's order of choice to this file and exit (gdnsd's equivalent map)")
	nets := flag.String("nets", "", "dynamic scenario: answer w and g with weighted and geo hooks, g's table from this file (\"prefix region\" lines)")
	coalesce := flag.Duration("udp-coalesce", -1, "fast mode: ServerConfig.UDPCoalesce (0 turns the pause off; default: the config's default)")
	sign := flag.Bool("sign", false, "sign the zone online with a key made at start (answers to DO queries carry RRSIGs)")
	signAlg := flag.Int("sign-alg", int(dnssec.ECDSAP256SHA256), "with -sign: the key's algorithm, 13 (ECDSA P-256) or 15 (Ed25519)")
	coalesceRate := flag.Int("udp-coalesce-rate", 0, "fast mode: ServerConfig.UDPCoalesceRate (0: the config's default)")
	xfr := flag.Bool("xfr", false, "fast mode: serve AXFR and IXFR to 127.0.0.0/8 (zonetransfer.Transfer) and log the load time")
	changes := flag.String("changes", "", "fast mode: on SIGUSR1 apply the changes in this file in one write (\"name ttl A address\" lines: each name's A RRset replaced)")
	loadWith := flag.String("load", "append", "how the zone file goes into the Provider: append (one AppendRecords call, the libdns write path) or build (memory.SnapshotBuilder and RestoreBuilt, the bulk path replicas use)")
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
	if *stickyRanks != "" {
		if err := writeStickyRanks(*nets, *stickyRanks); err != nil {
			log.Fatal(err)
		}
		return
	}
	if *gen != "" {
		if err := generate(*gen); err != nil {
			log.Fatal(err)
		}
		return
	}
	var signer *dnssec.Signer
	if *sign {
		k, err := dnssec.GenerateKey(zoneName, uint8(*signAlg), dnssec.FlagsKSK, 3600)
		if err != nil {
			log.Fatal(err)
		}
		if signer, err = dnssec.NewSigner(zoneName, dnssec.Config{Keys: []dnssec.ZoneKey{{Key: k}}}); err != nil {
			log.Fatal(err)
		}
		defer func() {
			st := signer.Stats()
			log.Printf("signer: %d signatures made, %d RRsets from the cache, %d failed, %d over budget", st.Made, st.Hits, st.Failed, st.OverBudget)
		}()
	}
	start := time.Now()
	var p *memory.Provider
	var err error
	switch *loadWith {
	case "append":
		p, err = load(*zoneFile, signer)
	case "build":
		p, err = loadBuilt(*zoneFile, signer)
	default:
		err = fmt.Errorf("unknown -load %q (append or build)", *loadWith)
	}
	if err != nil {
		log.Fatal(err)
	}
	if *xfr {
		// The scale run reads this line: the zone's load time in this
		// process. Then the load's garbage goes back to the system once, as
		// a daemon loading a large zone at start would do, so RSS is the
		// zone's and not the parser's (Go's default GOGC, no GOMEMLIMIT).
		log.Printf("loaded %s in %.3f s", *zoneFile, time.Since(start).Seconds())
		debug.FreeOSMemory()
		// And where the RSS goes: the live heap, the spans holding it (live
		// objects plus the holes the load's garbage left), and the rest.
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		log.Printf("heap: %d objects, %.1f MiB live, %.1f MiB in spans, %.1f MiB from the OS, %.1f MiB released; %d GCs",
			ms.HeapObjects, mib(ms.HeapAlloc), mib(ms.HeapInuse), mib(ms.Sys), mib(ms.HeapReleased), ms.NumGC)
	}
	if *memprofile != "" {
		if err := writeHeapProfile(*memprofile); err != nil {
			log.Fatal(err)
		}
	}
	if *nets != "" {
		if err := setupDynamic(p, *nets); err != nil {
			log.Fatal(err)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	switch *mode {
	case "fast":
		// The script pins this process to one CPU, so Go's default
		// GOMAXPROCS is 1; dnsserver.Server asks for at least 2 (see its doc).
		// The other modes stand for other server designs and keep the
		// default: with netpoller-driven loops a second P on one core only
		// adds wake-ups.
		if runtime.GOMAXPROCS(0) < 2 {
			runtime.GOMAXPROCS(2)
		}
		cfg := dnsserver.DefaultServerConfig()
		cfg.Addr = *addr
		if *coalesceRate > 0 {
			cfg.UDPCoalesceRate = *coalesceRate
		}
		if *coalesce >= 0 {
			cfg.UDPCoalesce = *coalesce
		}
		srv, nerr := dnsserver.NewServer(p, cfg, nil)
		if nerr != nil {
			log.Fatal(nerr)
		}
		if *xfr {
			tc := zonetransfer.DefaultTransferConfig()
			tc.Allow = []zonetransfer.TransferRule{{Prefix: netip.MustParsePrefix("127.0.0.0/8")}}
			t, terr := zonetransfer.NewTransfer(p, tc, nil)
			if terr != nil {
				log.Fatal(terr)
			}
			if terr := srv.SetTransfer(t); terr != nil {
				log.Fatal(terr)
			}
		}
		if *changes != "" {
			go applyOnSignal(ctx, p, *changes)
		}
		err = srv.Run(ctx)
		// The bench scripts print this line: whether the UDP pause was
		// tried and kept during the run.
		st := srv.Stats()
		log.Printf("udp pause: %d trials, %d chose to pause", st.UDPPauseTrials, st.UDPPauseChosen)
	case "batch":
		err = serveBatch(ctx, p, *addr)
	case "miekg":
		srv := &dns.Server{Addr: *addr, Net: "udp", Handler: p}
		go func() { <-ctx.Done(); _ = srv.Shutdown() }()
		err = srv.ListenAndServe()
	default:
		err = fmt.Errorf("unknown mode %q", *mode)
	}
	if err != nil {
		log.Print(err)
	}
}

// load reads a zone file into a Provider: its SOA, apex NS and the A, AAAA,
// CNAME, TXT and NS (delegation) records; signer, when not nil, signs
// the zone.
func load(path string, signer *dnssec.Signer) (*memory.Provider, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zp := dns.NewZoneParser(f, zoneName, path)
	cfg := memory.DefaultZoneConfig()
	cfg.NS = nil
	cfg.Signer = signer
	var recs []libdns.Record
	for rr, ok := zp.Next(); ok; rr, ok = zp.Next() {
		h := rr.Header()
		ttl := time.Duration(h.Ttl) * time.Second
		name := libdns.RelativeName(strings.ToLower(h.Name), zoneName)
		switch v := rr.(type) {
		case *dns.SOA:
			cfg.Mbox, cfg.Serial, cfg.TTL = v.Mbox, v.Serial, ttl
			cfg.Refresh = time.Duration(v.Refresh) * time.Second
			cfg.Retry = time.Duration(v.Retry) * time.Second
			cfg.Expire = time.Duration(v.Expire) * time.Second
			cfg.Minimum = time.Duration(v.Minttl) * time.Second
		case *dns.NS:
			if name == "@" {
				cfg.NS = append(cfg.NS, v.Ns)
			} else {
				recs = append(recs, libdns.NS{Name: name, TTL: ttl, Target: v.Ns})
			}
		case *dns.A:
			recs = append(recs, libdns.Address{Name: name, TTL: ttl, IP: netip.AddrFrom4([4]byte(v.A.To4()))})
		case *dns.AAAA:
			recs = append(recs, libdns.Address{Name: name, TTL: ttl, IP: netip.AddrFrom16([16]byte(v.AAAA.To16()))})
		case *dns.CNAME:
			recs = append(recs, libdns.CNAME{Name: name, TTL: ttl, Target: v.Target})
		case *dns.TXT:
			recs = append(recs, libdns.TXT{Name: name, TTL: ttl, Text: strings.Join(v.Txt, "")})
		}
	}
	if err := zp.Err(); err != nil {
		return nil, err
	}
	p := new(memory.Provider)
	if err := p.AddZoneWith(zoneName, cfg); err != nil {
		return nil, err
	}
	if _, err := p.AppendRecords(context.Background(), zoneName, recs); err != nil {
		return nil, err
	}
	return p, nil
}

// loadBuilt reads a zone file with memory.SnapshotBuilder.ReadZoneFile
// and publishes it with RestoreBuilt, instead of one AppendRecords call:
// no transaction, no journal entry per record, no libdns.Record values or
// text forms in between. The zone is added first with a ZoneConfig holding
// signer, so RestoreBuilt keeps it (the SOA and records are the file's).
func loadBuilt(path string, signer *dnssec.Signer) (*memory.Provider, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := memory.NewSnapshotBuilder(context.Background())
	if _, err := b.ReadZoneFile(f, zoneName, memory.ZoneFileConfig{Filename: path}); err != nil {
		return nil, err
	}
	cfg := memory.DefaultZoneConfig()
	cfg.Signer = signer
	p := new(memory.Provider)
	if err := p.AddZoneWith(zoneName, cfg); err != nil {
		return nil, err
	}
	if err := p.RestoreBuilt(b); err != nil {
		return nil, err
	}
	return p, nil
}

// generate writes about 100 names (2-4 A records each, TTL 30, some CNAMEs)
// and 10,000 queries of which about 10 % are for names that do not exist.
func generate(dir string) error {
	r := rand.New(rand.NewPCG(1, 2))
	var z strings.Builder
	z.WriteString("$ORIGIN example.test.\n$TTL 30\n")
	z.WriteString("@ IN SOA ns1.example.test. hostmaster.example.test. 1 60 60 600 30\n")
	z.WriteString("@ IN NS ns1.example.test.\nns1 IN A 127.0.0.1\n")
	var names []string
	for i := range 100 {
		name := fmt.Sprintf("svc%03d", i)
		names = append(names, name)
		if i%5 == 4 {
			fmt.Fprintf(&z, "%s IN CNAME svc%03d.example.test.\n", name, i-1-r.IntN(3))
			continue
		}
		for j := range 2 + r.IntN(3) {
			fmt.Fprintf(&z, "%s IN A 10.%d.%d.%d\n", name, i/250, i%250, j+1)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, "example.test.zone"), []byte(z.String()), 0o644); err != nil {
		return err
	}
	var q strings.Builder
	for range 10000 {
		if r.IntN(10) == 0 {
			fmt.Fprintf(&q, "nx%06d.example.test A\n", r.IntN(1000000))
			continue
		}
		fmt.Fprintf(&q, "%s.example.test A\n", names[r.IntN(len(names))])
	}
	return os.WriteFile(filepath.Join(dir, "queries.txt"), []byte(q.String()), 0o644)
}

// serveBatch is the batched receive/send loop answering every query through
// the general path, to measure the fast path's share.
func serveBatch(ctx context.Context, p *memory.Provider, addr string) error {
	c, err := net.ListenPacket("udp4", addr)
	if err != nil {
		return err
	}
	go func() { <-ctx.Done(); c.Close() }()
	pc := ipv4.NewPacketConn(c)
	const batch = 32
	in := make([]ipv4.Message, batch)
	out := make([]ipv4.Message, batch)
	for i := range in {
		in[i].Buffers = [][]byte{make([]byte, 4096)}
		out[i].Buffers = [][]byte{nil}
	}
	for {
		n, err := pc.ReadBatch(in, 0)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			continue
		}
		k := 0
		for i := range n {
			ua := in[i].Addr.(*net.UDPAddr)
			src, _ := netip.AddrFromSlice(ua.IP)
			reply := p.RespondWire(in[i].Buffers[0][:in[i].N], src.Unmap(), false)
			if reply == nil {
				continue
			}
			out[k].Buffers[0], out[k].Addr = reply, ua
			k++
		}
		for off := 0; off < k; {
			m, err := pc.WriteBatch(out[off:k], 0)
			if err != nil {
				break
			}
			off += max(m, 1)
		}
	}
}

// applyOnSignal applies the changes in path (see the -changes flag) in one
// SetRecords call each time the process gets SIGUSR1, and logs it.
func applyOnSignal(ctx context.Context, p *memory.Provider, path string) {
	if changeSignal == nil {
		log.Print("-changes: no SIGUSR1 on this platform")
		return
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, changeSignal)
	defer signal.Stop(sig)
	for {
		select {
		case <-ctx.Done():
			return
		case <-sig:
		}
		b, err := os.ReadFile(path)
		if err != nil {
			log.Print(err)
			continue
		}
		var recs []libdns.Record
		for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
			var name, typ, addr string
			var ttl int
			if _, err := fmt.Sscanf(line, "%s %d %s %s", &name, &ttl, &typ, &addr); err != nil || typ != "A" {
				log.Printf("changes: bad line %q", line)
				continue
			}
			ip, err := netip.ParseAddr(addr)
			if err != nil {
				log.Printf("changes: bad line %q", line)
				continue
			}
			recs = append(recs, libdns.Address{Name: name, TTL: time.Duration(ttl) * time.Second, IP: ip})
		}
		if _, err := p.SetRecords(ctx, zoneName, recs); err != nil {
			log.Print(err)
			continue
		}
		log.Printf("changes: applied %d", len(recs))
	}
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

// writeHeapProfile writes the live heap (after a collection) to path.
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	runtime.GC()
	if err := pprof.WriteHeapProfile(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
