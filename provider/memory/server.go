package memory

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"runtime"
	"sync"
	"time"

	"github.com/miekg/dns"
)

// ServerConfig configures a Server.
type ServerConfig struct {
	// Addr is the host:port to listen on, UDP and TCP alike. Port 0 picks a
	// free port (the same one for both). Default "127.0.0.1:5353".
	Addr string `json:"addr"`
	// TCPIdleTimeout closes a TCP connection that sends no query for this
	// long, 100ms to 10m. Default 10s.
	TCPIdleTimeout Duration `json:"tcpIdleTimeout"`
	// UDPWorkers is how many goroutines receive and answer UDP queries, 0
	// to 256. 0 (the default) means GOMAXPROCS-1, at least 1: one P is left
	// free so that a worker blocked in its receive call keeps its P instead
	// of the runtime handing it off (and waking threads) on every query.
	UDPWorkers int `json:"udpWorkers"`
	// ShutdownTimeout bounds how long Run waits for in-flight queries once
	// its context ends, 0s to 1m. Default 2s.
	ShutdownTimeout Duration `json:"shutdownTimeout"`
	// UDPCoalesce is how long a UDP loop pauses after answering a batch
	// while it receives more than UDPCoalesceRate queries a second, so the
	// next receive finds several queries waiting: fewer, fuller system
	// calls, and the clients' receivers woken once per batch instead of
	// once per reply (Linux only). Below the rate it never pauses. 0 turns
	// it off; at most 1ms. Default 60µs: at 125,000–150,000 queries/s it
	// cut CPU per query by about a third in bench/dns-vs-peers (5.3 µs to
	// 3.5–3.7) and adds at most that much latency.
	UDPCoalesce Duration `json:"udpCoalesce"`
	// UDPCoalesceRate is the query rate of one UDP loop, measured over each
	// millisecond, above which it pauses (see UDPCoalesce); 1,000 to
	// 10,000,000 queries a second. Default 60,000.
	UDPCoalesceRate int `json:"udpCoalesceRate"`
}

// DefaultServerConfig returns 127.0.0.1:5353, TCP idle timeout 10s,
// shutdown timeout 2s, and a 60µs UDP pause above 60,000 queries a second.
func DefaultServerConfig() ServerConfig {
	return ServerConfig{
		Addr:            "127.0.0.1:5353",
		TCPIdleTimeout:  Duration(10 * time.Second),
		ShutdownTimeout: Duration(2 * time.Second),
		UDPCoalesce:     Duration(60 * time.Microsecond),
		UDPCoalesceRate: 60000,
	}
}

// Validate reports the first field out of range.
func (c ServerConfig) Validate() error {
	if _, err := netip.ParseAddrPort(c.Addr); err != nil {
		return fmt.Errorf("memory: server addr %q is not an IP:port (%v)", c.Addr, err)
	}
	if d := c.TCPIdleTimeout.D(); d < 100*time.Millisecond || d > 10*time.Minute {
		return fmt.Errorf("memory: server tcpIdleTimeout %v is out of range (allowed 100ms to 10m)", d)
	}
	if c.UDPWorkers < 0 || c.UDPWorkers > 256 {
		return fmt.Errorf("memory: server udpWorkers %d is out of range (allowed 0 to 256)", c.UDPWorkers)
	}
	if d := c.ShutdownTimeout.D(); d < 0 || d > time.Minute {
		return fmt.Errorf("memory: server shutdownTimeout %v is out of range (allowed 0s to 1m)", d)
	}
	if d := c.UDPCoalesce.D(); d < 0 || d > time.Millisecond {
		return fmt.Errorf("memory: server udpCoalesce %v is out of range (allowed 0s to 1ms)", d)
	}
	if c.UDPCoalesce > 0 && (c.UDPCoalesceRate < 1000 || c.UDPCoalesceRate > 10_000_000) {
		return fmt.Errorf("memory: server udpCoalesceRate %d is out of range (allowed 1000 to 10000000)", c.UDPCoalesceRate)
	}
	return nil
}

// Server serves a Provider's zones over UDP and TCP. UDP is answered by a
// batched loop (recvmmsg/sendmmsg, one goroutine per usable CPU, pausing
// briefly between batches under heavy load: see UDPCoalesce) through the
// fast path (see RespondUDP); TCP by miekg/dns's server through
// ServeDNS, which produces the same bytes. NewServer starts
// nothing; Listen binds the sockets (Run does it if Listen was not called);
// Run serves until its context ends and returns once every goroutine it
// started has exited. A Server runs once.
//
// Give the process at least two Ps (GOMAXPROCS ≥ 2), even on one core. A
// UDP loop spends its idle time blocked in recvmmsg; with a single P the
// runtime cannot leave one free, so its monitor thread takes the P from
// the blocked loop and hands it back on nearly every query, which cost
// about 15 % more CPU per query at 30,000 queries/s in bench/dns-vs-peers.
// Go sets GOMAXPROCS to the CPUs a process may use, so a server pinned to
// one CPU (taskset, a 1-CPU container limit) gets 1: set GOMAXPROCS=2 in its
// environment or call runtime.GOMAXPROCS(2) in main.
type Server struct {
	p   *Provider
	cfg ServerConfig
	log *slog.Logger

	mu   sync.Mutex
	addr string
	udp  net.PacketConn
	tcp  net.Listener
	ran  bool

	stopUDP chan struct{} // closed to stop the UDP loops
}

// NewServer returns a Server for p, or cfg's validation error. log may be
// nil (quiet).
func NewServer(p *Provider, cfg ServerConfig, log *slog.Logger) (*Server, error) {
	if p == nil {
		return nil, errors.New("memory: NewServer needs a Provider")
	}
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Server{p: p, cfg: cfg, log: log}, nil
}

// Listen binds the UDP socket and the TCP listener on cfg.Addr. With port 0
// it picks a port free for both. Calling it again is a no-op.
func (s *Server) Listen() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.udp != nil {
		return nil
	}
	ap, _ := netip.ParseAddrPort(s.cfg.Addr)
	var lastErr error
	for range 10 {
		u, err := net.ListenPacket("udp", s.cfg.Addr)
		if err != nil {
			return fmt.Errorf("memory: listen udp %s: %w", s.cfg.Addr, err)
		}
		port := u.LocalAddr().(*net.UDPAddr).Port
		t, err := net.Listen("tcp", netip.AddrPortFrom(ap.Addr(), uint16(port)).String())
		if err != nil {
			u.Close()
			lastErr = err
			if ap.Port() != 0 {
				break
			}
			continue
		}
		if uc, ok := u.(*net.UDPConn); ok {
			// Room for a burst of queries while the loop is busy or
			// pausing (see UDPCoalesce); the kernel caps it at rmem_max.
			_ = uc.SetReadBuffer(udpReadBuffer)
		}
		s.udp, s.tcp, s.addr = u, t, u.LocalAddr().String()
		return nil
	}
	return fmt.Errorf("memory: listen tcp %s: %w", s.cfg.Addr, lastErr)
}

// Addr returns the address the server listens on (host:port), or "" before
// Listen.
func (s *Server) Addr() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr
}

// Run serves queries until ctx ends, then shuts down (waiting at most
// ShutdownTimeout for queries in flight) and returns nil; or returns the
// error that stopped it. It binds first if Listen was not called.
func (s *Server) Run(ctx context.Context) error {
	if err := s.Listen(); err != nil {
		return err
	}
	s.mu.Lock()
	if s.ran {
		s.mu.Unlock()
		return errors.New("memory: Server.Run called twice")
	}
	s.ran = true
	udp, tcp := s.udp, s.tcp
	s.mu.Unlock()

	idle := s.cfg.TCPIdleTimeout.D()
	tcpSrv := &dns.Server{Listener: tcp, Handler: s.p, IdleTimeout: func() time.Duration { return idle }, MsgAcceptFunc: acceptAll}
	started := make(chan struct{})
	tcpSrv.NotifyStartedFunc = func() { close(started) }
	errs := make(chan error, 1)
	s.stopUDP = make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() { errs <- tcpSrv.ActivateAndServe() })
	wg.Go(func() { s.serveUDPConn(udp.(*net.UDPConn), s.stopUDP) })
	select {
	case <-started:
	case err := <-errs:
		return s.stop(tcpSrv, &wg, fmt.Errorf("memory: serve tcp: %w", err))
	}
	s.log.Info("dns server listening", "addr", s.addr)
	select {
	case <-ctx.Done():
		return s.stop(tcpSrv, &wg, nil)
	case err := <-errs:
		return s.stop(tcpSrv, &wg, fmt.Errorf("memory: serve tcp: %w", err))
	}
}

func (s *Server) stop(tcpSrv *dns.Server, wg *sync.WaitGroup, err error) error {
	sctx, cancel := context.WithTimeout(context.Background(), s.cfg.ShutdownTimeout.D())
	defer cancel()
	_ = tcpSrv.ShutdownContext(sctx)
	close(s.stopUDP)
	s.tcp.Close()
	wg.Wait()
	s.log.Info("dns server stopped")
	return err
}

// acceptAll hands every query to the Provider, which judges malformed ones
// itself (FORMERR, NOTIMP) the same way on every path.
func acceptAll(dh dns.Header) dns.MsgAcceptAction {
	if dh.Bits&(1<<15) != 0 {
		return dns.MsgIgnore
	}
	return dns.MsgAccept
}

// udpWorkers is the number of UDP loops to run.
func (s *Server) udpWorkers() int {
	if s.cfg.UDPWorkers > 0 {
		return s.cfg.UDPWorkers
	}
	return max(1, runtime.GOMAXPROCS(0)-1)
}
