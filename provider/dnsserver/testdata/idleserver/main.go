// Command idleserver is a dnsserver.Server for TestServerIdleConnectionCost:
// built without -race, it serves one zone on 127.0.0.1 with the descriptor
// limit and connection limit it is given, and answers "mem" on stdin with
// its heap and stack in use after a GC, and its ServerStats.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net/netip"
	"os"
	"runtime"
	"syscall"
	"time"

	"github.com/libdns/libdns"

	"github.com/gslbkit/gslb/provider/dnsserver"
	"github.com/gslbkit/gslb/provider/memory"
)

func main() {
	nofile := flag.Uint64("nofile", 4096, "descriptor limit, soft and hard")
	maxConns := flag.Int("max-conns", 3000, "ServerConfig.MaxTCPConns")
	flag.Parse()
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: *nofile, Max: *nofile}); err != nil {
		log.Fatal(err)
	}
	p := new(memory.Provider)
	if err := p.AddZone("example.test."); err != nil {
		log.Fatal(err)
	}
	if _, err := p.AppendRecords(context.Background(), "example.test.", []libdns.Record{
		libdns.Address{Name: "www", IP: netip.MustParseAddr("192.0.2.1"), TTL: time.Minute},
	}); err != nil {
		log.Fatal(err)
	}
	cfg := dnsserver.DefaultServerConfig()
	cfg.Addr, cfg.MaxTCPConns, cfg.TCPIdleTimeout = "127.0.0.1:0", *maxConns, 10*time.Minute
	srv, err := dnsserver.NewServer(p, cfg, nil)
	if err != nil {
		log.Fatal(err)
	}
	if err := srv.Listen(); err != nil {
		log.Fatal(err)
	}
	go func() {
		if err := srv.Run(context.Background()); err != nil {
			log.Fatal(err)
		}
	}()
	fmt.Printf("addr %s\n", srv.Addr())
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		b, _ := json.Marshal(struct {
			Heap, Stack uint64
			Server      dnsserver.ServerStats
		}{ms.HeapInuse, ms.StackInuse, srv.Stats()})
		fmt.Printf("mem %s\n", b)
	}
}
