package main

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"runtime"
	"sync"
	"time"

	"github.com/gslbkit/gslb/provider/memory"
)

// dnsServer answers DNS from a memory zone on UDP and TCP and counts every
// reply by response code. memory.Server would serve the zone as well; gslbd
// runs its own small loops around the zone's RespondUDP (the same fast path)
// and RespondWire so that each reply passes through gslbkit_dns_queries_total.
type dnsServer struct {
	zone *memory.Provider
	xfr  *memory.Transfer // nil: no zone transfer
	met  *metrics
	log  *slog.Logger
	idle time.Duration

	udp net.PacketConn
	tcp net.Listener
}

// listenDNS binds UDP and TCP on addr, on the same port (a free one for
// port 0, retried a few times in case TCP finds it taken).
func listenDNS(addr string, zone *memory.Provider, met *metrics, idle time.Duration, log *slog.Logger) (*dnsServer, error) {
	s := &dnsServer{zone: zone, met: met, log: log, idle: idle}
	var last error
	for try := 0; try < 10; try++ {
		pc, err := net.ListenPacket("udp", addr)
		if err != nil {
			return nil, fmt.Errorf("dns: %w", err) // err says "listen udp <addr>: ..."
		}
		ln, err := net.Listen("tcp", pc.LocalAddr().String())
		if err == nil {
			s.udp, s.tcp = pc, ln
			return s, nil
		}
		pc.Close()
		last = err
		if _, port, _ := net.SplitHostPort(addr); port != "0" {
			break
		}
	}
	return nil, fmt.Errorf("dns: %w", last)
}

// Addr is the host:port served.
func (s *dnsServer) Addr() string { return s.udp.LocalAddr().String() }

// enableTransfer turns on zone transfer to standard secondaries (AXFR,
// IXFR and NOTIFY on the DNS port) when cfg's transfer block allows or
// notifies anyone. Secondaries get the stored records: the region-filtered
// views of replication do not travel, which it logs when a record has
// region tags.
func (s *dnsServer) enableTransfer(cfg Config, log *slog.Logger) error {
	if !cfg.Transfer.Enabled() {
		return nil
	}
	x, err := memory.NewTransfer(s.zone, cfg.Transfer, log)
	if err != nil {
		return err
	}
	s.xfr = x
	for _, r := range cfg.Records {
		for _, a := range r.Addresses {
			if len(a.Regions) > 0 {
				log.Warn("transfer: records have region tags; secondaries serve every address to every client (region-filtered views are for gslbd nodes only)", "record", r.Name)
				return nil
			}
		}
	}
	return nil
}

// Run serves until ctx ends, then closes the sockets and waits for every
// goroutine it started.
func (s *dnsServer) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	if s.xfr != nil {
		xctx, cancel := context.WithCancel(ctx)
		defer cancel()
		wg.Go(func() { _ = s.xfr.Run(xctx) })
	}
	workers := min(runtime.GOMAXPROCS(0), 4)
	for range workers {
		wg.Go(s.serveUDP)
	}
	conns := &connSet{m: map[net.Conn]bool{}}
	wg.Go(func() { s.serveTCP(conns, &wg) })
	<-ctx.Done()
	s.udp.Close()
	s.tcp.Close()
	conns.closeAll()
	wg.Wait()
	return nil
}

func (s *dnsServer) serveUDP() {
	buf := make([]byte, 65535)
	out := make([]byte, 4096)
	for {
		n, src, err := s.udp.ReadFrom(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		ua, ok := src.(*net.UDPAddr)
		if !ok {
			continue
		}
		ap := ua.AddrPort()
		var reply []byte
		if s.xfr != nil {
			reply = s.xfr.RespondUDP(buf[:n], out, ap.Addr().Unmap())
		} else {
			reply = s.zone.RespondUDP(buf[:n], out, ap.Addr().Unmap())
		}
		if reply == nil {
			continue
		}
		s.met.query(reply)
		_, _ = s.udp.WriteTo(reply, src)
	}
}

// connSet tracks open TCP connections so Run can close them on shutdown.
type connSet struct {
	mu     sync.Mutex
	m      map[net.Conn]bool
	closed bool
}

func (c *connSet) add(conn net.Conn) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return false
	}
	c.m[conn] = true
	return true
}

func (c *connSet) remove(conn net.Conn) {
	c.mu.Lock()
	delete(c.m, conn)
	c.mu.Unlock()
}

func (c *connSet) closeAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	for conn := range c.m {
		conn.Close()
	}
}

func (s *dnsServer) serveTCP(conns *connSet, wg *sync.WaitGroup) {
	for {
		conn, err := s.tcp.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		if !conns.add(conn) {
			conn.Close()
			return
		}
		wg.Go(func() {
			defer conns.remove(conn)
			defer conn.Close()
			s.serveConn(conn)
		})
	}
}

// serveConn answers length-prefixed queries on one TCP connection until
// the client closes it or stays idle for too long.
func (s *dnsServer) serveConn(conn net.Conn) {
	var src netip.Addr
	if ta, ok := conn.RemoteAddr().(*net.TCPAddr); ok {
		src = ta.AddrPort().Addr().Unmap()
	}
	var hdr [2]byte
	buf := make([]byte, 65535)
	for {
		_ = conn.SetReadDeadline(time.Now().Add(s.idle))
		if _, err := io.ReadFull(conn, hdr[:]); err != nil {
			return
		}
		n := int(binary.BigEndian.Uint16(hdr[:]))
		if _, err := io.ReadFull(conn, buf[:n]); err != nil {
			return
		}
		if s.xfr != nil {
			handled, err := s.xfr.ServeTCP(conn, buf[:n], src)
			if err != nil {
				return
			}
			if handled {
				continue
			}
		}
		reply := s.zone.RespondWire(buf[:n], src, true)
		if reply == nil {
			continue
		}
		s.met.query(reply)
		out := make([]byte, 2+len(reply))
		binary.BigEndian.PutUint16(out, uint16(len(reply)))
		copy(out[2:], reply)
		_ = conn.SetWriteDeadline(time.Now().Add(s.idle))
		if _, err := conn.Write(out); err != nil {
			return
		}
	}
}
