package memory

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"runtime"
	"sync"
	"time"

	"github.com/gslbkit/gslb/internal/jsontime"
)

// ServerConfig configures a Server. Start from DefaultServerConfig and
// change fields; a field left at zero takes its default, except UDPCoalesce
// (0 turns the pause off), MaxTCPConnsPerSource (0: no per-source limit) and
// RRL (a zero RRLConfig is off). A wholly zero ServerConfig is therefore
// valid and serves on 127.0.0.1:5353 without the UDP pause.
type ServerConfig struct {
	// Addr is the host:port to listen on, UDP and TCP alike. Port 0 picks a
	// free port (the same one for both). Default "127.0.0.1:5353".
	Addr string `json:"addr"`
	// TCPIdleTimeout closes a TCP connection that sends no query for this
	// long, 100ms to 10m. Default 10s. It also bounds how long one query may
	// take to arrive once its length has been read, and how long a reply may
	// take to be written. The deadlines move forward at most once per
	// min(1s, TCPIdleTimeout/8), so a connection may close up to that much
	// earlier. Queries sent back to back are read together and their
	// replies written together, in order (RFC 7766 section 6.2.1.1).
	TCPIdleTimeout time.Duration `json:"tcpIdleTimeout"`
	// MaxTCPConns is how many TCP connections the server holds at once, 1 to
	// 1,000,000. When the table is full, a new connection takes the place of
	// the connection that has been idle longest (RFC 7766 section 6.2.3 lets a
	// server close idle connections under load); connections in the middle
	// of a query or a zone transfer are never chosen, and when every one
	// is, the new connection is closed at once; connections accepted but
	// not yet read from are chosen only when no other is idle (so a burst
	// of accepts does not close one whose query is already waiting). 0 (the default) derives the limit
	// from the process's descriptor limit (RLIMIT_NOFILE): a quarter of it,
	// at least 16 and at most 1,024, so that probes, the HTTP API and the
	// provider keep most descriptors to themselves.
	MaxTCPConns int `json:"maxTCPConns"`
	// MaxTCPConnsPerSource limits the connections one client address holds
	// at once, 0 to 1,000,000; a connection over the limit is closed as soon
	// as it is accepted. 0 (the default) means no per-source limit.
	MaxTCPConnsPerSource int `json:"maxTCPConnsPerSource"`
	// UDPWorkers is how many goroutines receive and answer UDP queries, 0
	// to 256. 0 (the default) means GOMAXPROCS-1, at least 1: one P is left
	// free so that a worker blocked in its receive call keeps its P instead
	// of the runtime handing it off (and waking threads) on every query.
	UDPWorkers int `json:"udpWorkers"`
	// ShutdownTimeout bounds how long Run waits for in-flight queries once
	// its context ends, 1ms to 1m. Default 2s.
	ShutdownTimeout time.Duration `json:"shutdownTimeout"`
	// UDPCoalesce is how long a UDP loop may pause after answering a batch
	// while it receives more than UDPCoalesceRate queries a second, so the
	// next receive finds several queries waiting: fewer, fuller system
	// calls, and the clients' receivers woken once per batch instead of
	// once per reply (Linux only). Whether that saves CPU depends on the
	// machine — a pause is a sleep and a wake-up, dear where timers are
	// (on a virtual machine a 60 µs sleep was seen to last 130 µs and cost
	// more than it saved; on another the pause cut CPU per query by a
	// third at 125,000–150,000 queries/s) — so the loop measures: above the
	// rate it answers 160 ms in alternating 20 ms phases with and without
	// the pause, reads its thread's CPU clock, pauses only if that costs at
	// least 10 % less CPU per query, and tries again every 5 s
	// (ServerStats.UDPPauseTrials and UDPPauseChosen count the trials and
	// the choices). Below the rate it never pauses. 0 turns it off; at most
	// 1ms. Default 60µs, which adds at most that much latency (plus the
	// timer's lateness) while it pauses.
	UDPCoalesce time.Duration `json:"udpCoalesce"`
	// UDPCoalesceRate is the query rate of one UDP loop, measured over each
	// millisecond, above which it pauses (see UDPCoalesce); 1,000 to
	// 10,000,000 queries a second. Default 60,000.
	UDPCoalesceRate int `json:"udpCoalesceRate"`
	// RRL limits the rate of UDP responses per client netblock (see
	// RRLConfig). Off unless RRL.Rate is set.
	RRL RRLConfig `json:"rrl"`
	// Transfer serves the zones to secondaries by AXFR and IXFR and sends
	// them NOTIFY (see TransferConfig). Off unless it allows someone or
	// names a secondary.
	Transfer TransferConfig `json:"transfer"`
}

// DefaultServerConfig returns 127.0.0.1:5353, TCP idle timeout 10s, a TCP
// connection limit derived from the descriptor limit, shutdown timeout 2s,
// a 60µs UDP pause above 60,000 queries a second where it saves CPU, and no
// rate limiting.
func DefaultServerConfig() ServerConfig {
	return ServerConfig{
		Addr:            "127.0.0.1:5353",
		TCPIdleTimeout:  10 * time.Second,
		ShutdownTimeout: 2 * time.Second,
		UDPCoalesce:     60 * time.Microsecond,
		UDPCoalesceRate: 60000,
	}
}

// withDefaults fills the zero fields that take a default.
func (c ServerConfig) withDefaults() ServerConfig {
	d := DefaultServerConfig()
	if c.Addr == "" {
		c.Addr = d.Addr
	}
	if c.TCPIdleTimeout == 0 {
		c.TCPIdleTimeout = d.TCPIdleTimeout
	}
	if c.ShutdownTimeout == 0 {
		c.ShutdownTimeout = d.ShutdownTimeout
	}
	if c.UDPCoalesceRate == 0 {
		c.UDPCoalesceRate = d.UDPCoalesceRate
	}
	return c
}

// Validate reports the first field out of range. Zero fields are valid:
// they take their defaults.
func (c ServerConfig) Validate() error {
	c = c.withDefaults()
	if _, err := netip.ParseAddrPort(c.Addr); err != nil {
		return serverInvalid("addr", c.Addr, "an IP:port such as 127.0.0.1:53")
	}
	if d := c.TCPIdleTimeout; d < 100*time.Millisecond || d > 10*time.Minute {
		return serverInvalid("tcpIdleTimeout", d, "100ms to 10m")
	}
	if c.MaxTCPConns < 0 || c.MaxTCPConns > 1_000_000 {
		return serverInvalid("maxTCPConns", c.MaxTCPConns, "0 (derived from the descriptor limit) to 1000000")
	}
	if c.MaxTCPConnsPerSource < 0 || c.MaxTCPConnsPerSource > 1_000_000 {
		return serverInvalid("maxTCPConnsPerSource", c.MaxTCPConnsPerSource, "0 (no limit) to 1000000")
	}
	if c.UDPWorkers < 0 || c.UDPWorkers > 256 {
		return serverInvalid("udpWorkers", c.UDPWorkers, "0 (GOMAXPROCS-1) to 256")
	}
	if d := c.ShutdownTimeout; d < time.Millisecond || d > time.Minute {
		return serverInvalid("shutdownTimeout", d, "1ms to 1m")
	}
	if d := c.UDPCoalesce; d < 0 || d > time.Millisecond {
		return serverInvalid("udpCoalesce", d, "0s (off) to 1ms")
	}
	if c.UDPCoalesceRate < 1000 || c.UDPCoalesceRate > 10_000_000 {
		return serverInvalid("udpCoalesceRate", c.UDPCoalesceRate, "1000 to 10000000")
	}
	if err := c.RRL.Validate(); err != nil {
		return err
	}
	if err := c.Transfer.Validate(); err != nil {
		var fe *FieldError
		if errors.As(err, &fe) {
			f := *fe
			f.Field = "transfer." + f.Field
			return &f
		}
		return err
	}
	return nil
}

// MarshalJSON writes the durations as strings such as "10s".
func (c ServerConfig) MarshalJSON() ([]byte, error) {
	type plain ServerConfig
	return json.Marshal(struct {
		plain
		TCPIdleTimeout  jsontime.Duration `json:"tcpIdleTimeout"`
		ShutdownTimeout jsontime.Duration `json:"shutdownTimeout"`
		UDPCoalesce     jsontime.Duration `json:"udpCoalesce"`
	}{plain(c), jsontime.Duration(c.TCPIdleTimeout), jsontime.Duration(c.ShutdownTimeout), jsontime.Duration(c.UDPCoalesce)})
}

// UnmarshalJSON reads the durations as strings such as "10s" or as numbers
// of seconds.
func (c *ServerConfig) UnmarshalJSON(b []byte) error {
	type plain ServerConfig
	aux := struct {
		*plain
		TCPIdleTimeout  jsontime.Duration `json:"tcpIdleTimeout"`
		ShutdownTimeout jsontime.Duration `json:"shutdownTimeout"`
		UDPCoalesce     jsontime.Duration `json:"udpCoalesce"`
	}{(*plain)(c), jsontime.Duration(c.TCPIdleTimeout), jsontime.Duration(c.ShutdownTimeout), jsontime.Duration(c.UDPCoalesce)}
	if err := json.Unmarshal(b, &aux); err != nil {
		return err
	}
	c.TCPIdleTimeout, c.ShutdownTimeout, c.UDPCoalesce = time.Duration(aux.TCPIdleTimeout), time.Duration(aux.ShutdownTimeout), time.Duration(aux.UDPCoalesce)
	return nil
}

func serverInvalid(field string, value any, allowed string) error {
	return configErr(field, value, allowed)
}

// Server serves a Provider's zones over UDP and TCP. UDP is answered by a
// batched loop (recvmmsg/sendmmsg, one goroutine per usable CPU, pausing
// briefly between batches under heavy load: see UDPCoalesce) through the
// fast path (see RespondUDP), with optional response rate limiting (see
// RRLConfig); TCP by a loop of its own through RespondWire, which produces
// the same bytes. NewServer starts nothing; Listen binds the sockets (Run
// does it if Listen was not called); Run serves until its context ends and
// returns once every goroutine it started has exited. A Server runs once.
//
// # TCP under load
//
// The server holds at most MaxTCPConns connections (by default a share of
// the descriptor limit), evicting the connection idle longest when a new
// one arrives at a full table, and optionally at most MaxTCPConnsPerSource
// per client address. A connection costs what its client sends: the loop
// reads the two-byte length and then the message as it arrives, and keeps
// no 64 KiB buffer while the connection waits. Queries sent back to back on
// one connection (pipelining, RFC 7766 section 6.2.1.1) are answered in
// order. When accepting fails (out of descriptors, for instance) the
// accept loop backs off — 5ms, doubling up to 1s — instead of spinning, and
// counts the failures (see Stats). So a client that opens connections by
// the thousand takes at most MaxTCPConns descriptors and one core's worth
// of nothing: probes and the rest of the program keep theirs.
//
// # Zone transfers
//
// With ServerConfig.Transfer on, the TCP loop streams AXFR and IXFR to the
// clients it allows (such a connection is never evicted while it carries
// a transfer), both loops answer TSIG-signed queries signed, and Run sends
// NOTIFY to the secondaries (see Transfer). With it off, the UDP loops pay
// one pointer check per query.
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
	rrl *RateLimiter // nil: off
	xfr *Transfer    // nil: off

	mu   sync.Mutex
	addr string
	udp  net.PacketConn
	tcp  net.Listener
	ran  bool

	conns   *connTable
	stats   serverCounters
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
	cfg = cfg.withDefaults()
	if cfg.MaxTCPConns == 0 {
		cfg.MaxTCPConns = defaultMaxTCPConns()
	}
	rrl, err := NewRateLimiter(cfg.RRL)
	if err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{p: p, cfg: cfg, log: log, rrl: rrl, conns: newConnTable(cfg.MaxTCPConns, cfg.MaxTCPConnsPerSource)}
	if cfg.Transfer.Enabled() {
		if s.xfr, err = NewTransfer(p, cfg.Transfer, log); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// Transfer returns the server's zone transfer side (its Stats), or nil
// when ServerConfig.Transfer is off.
func (s *Server) Transfer() *Transfer { return s.xfr }

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
			return fmt.Errorf("memory: %w", err) // err says "listen udp <addr>: ..."
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
			// Replies never fragmented (see dontfrag.go).
			if err := dontFragment(uc); err != nil {
				s.log.Warn("udp replies may be fragmented: cannot set path MTU discovery to probe", "err", err)
			}
		}
		s.udp, s.tcp, s.addr = u, t, u.LocalAddr().String()
		return nil
	}
	return fmt.Errorf("memory: %w", lastErr) // err says "listen tcp <addr>: ..."
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

	s.stopUDP = make(chan struct{})
	stopTCP := make(chan struct{})
	var wg, connWG sync.WaitGroup
	// The accept loop is the only one adding to connWG: it must have
	// returned before connWG.Wait, or a connection accepted during the
	// shutdown could start after the wait (and outlive Run).
	acceptDone := make(chan struct{})
	wg.Go(func() {
		defer close(acceptDone)
		s.serveTCP(tcp, stopTCP, &connWG)
	})
	wg.Go(func() { s.serveUDPConn(udp.(*net.UDPConn), s.stopUDP) })
	xctx, xcancel := context.WithCancel(ctx)
	defer xcancel()
	if s.xfr != nil {
		wg.Go(func() { _ = s.xfr.Run(xctx) })
	}
	s.log.Info("dns server listening", "addr", s.addr, "maxTCPConns", s.cfg.MaxTCPConns)
	<-ctx.Done()

	close(stopTCP)
	tcp.Close()
	<-acceptDone
	s.conns.closeIdle()
	done := make(chan struct{})
	go func() { connWG.Wait(); close(done) }()
	t := time.NewTimer(s.cfg.ShutdownTimeout)
	select {
	case <-done:
	case <-t.C:
	}
	t.Stop()
	s.conns.closeAll()
	connWG.Wait()
	close(s.stopUDP)
	xcancel()
	wg.Wait()
	s.log.Info("dns server stopped")
	return nil
}

// udpWorkers is the number of UDP loops to run.
func (s *Server) udpWorkers() int {
	if s.cfg.UDPWorkers > 0 {
		return s.cfg.UDPWorkers
	}
	return max(1, runtime.GOMAXPROCS(0)-1)
}
