package dnsserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"runtime"
	"sync"
	"time"

	"github.com/gslbkit/gslb/internal/fielderr"
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
		return serverInvalid("tcpIdleTimeout", d, fielderr.DurationRange(100*time.Millisecond, 10*time.Minute))
	}
	if c.MaxTCPConns < 0 || c.MaxTCPConns > 1_000_000 {
		return serverInvalid("maxTCPConns", c.MaxTCPConns, fielderr.Range(0, 1_000_000)+" (0: derived from the descriptor limit)")
	}
	if c.MaxTCPConnsPerSource < 0 || c.MaxTCPConnsPerSource > 1_000_000 {
		return serverInvalid("maxTCPConnsPerSource", c.MaxTCPConnsPerSource, fielderr.Range(0, 1_000_000)+" (0: no limit)")
	}
	if c.UDPWorkers < 0 || c.UDPWorkers > 256 {
		return serverInvalid("udpWorkers", c.UDPWorkers, fielderr.Range(0, 256)+" (0: GOMAXPROCS-1)")
	}
	if d := c.ShutdownTimeout; d < time.Millisecond || d > time.Minute {
		return serverInvalid("shutdownTimeout", d, fielderr.DurationRange(time.Millisecond, time.Minute))
	}
	if d := c.UDPCoalesce; d < 0 || d > time.Millisecond {
		return serverInvalid("udpCoalesce", d, fielderr.DurationRange(0, time.Millisecond)+" (0s: off)")
	}
	if c.UDPCoalesceRate < 1000 || c.UDPCoalesceRate > 10_000_000 {
		return serverInvalid("udpCoalesceRate", c.UDPCoalesceRate, fielderr.Range(1000, 10_000_000))
	}
	if err := c.RRL.Validate(); err != nil {
		return fielderr.In("rrl", ErrInvalidConfig, err)
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
	return fielderr.New(ErrInvalidConfig, field, value, allowed)
}

// Server serves an Answerer's zones (a memory.Provider's) over UDP and
// TCP. UDP is answered by a batched loop (recvmmsg/sendmmsg, one goroutine
// per usable CPU, pausing briefly between batches under heavy load: see
// UDPCoalesce) through the store's fast path (see
// memory.Provider.RespondUDP), with optional response rate limiting (see
// RRLConfig); TCP by a loop of its own through RespondTCP, which produces
// the same bytes. NewServer starts nothing; Listen binds the sockets (Run
// does it if Listen was not called); Run serves until its context ends or
// Close is called, and returns once every goroutine it started has exited.
// A Server runs once (ErrRunning).
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
// With a transfer handler set (SetTransfer; zonetransfer.Transfer is one),
// the TCP loop streams AXFR and IXFR to the clients it allows (such a
// connection is never evicted while it carries a transfer), both loops
// answer TSIG-signed queries through it, and Run runs it (it sends NOTIFY
// to the secondaries). Without one, the UDP loops pay one pointer check per
// query.
//
// Give the process at least two Ps (GOMAXPROCS ≥ 2), even on one core. A
// UDP loop spends its idle time blocked in recvmmsg; with a single P the
// runtime cannot leave one free, so its monitor thread takes the P from
// the blocked loop and hands it back on nearly every query, which cost
// about 15 % more CPU per query at 30,000 queries/s in bench/dns-vs-peers.
// Go sets GOMAXPROCS to the CPUs a process may use, so a server pinned to
// one CPU (taskset, a 1-CPU container limit) gets 1: set GOMAXPROCS=2 in its
// environment or call runtime.GOMAXPROCS(2) in main.
//
// A Server is made by NewServer; the zero Server is not usable (its methods
// return ErrNoAnswerer). Close releases the sockets of a Server that Listen
// bound and Run never served.
type Server struct {
	a   Answerer
	cfg ServerConfig
	log *slog.Logger
	rrl *RateLimiter    // nil: off
	xfr TransferHandler // nil: off

	zones interface{ HoldsZone(name []byte) bool }   // nil: the answerer does not say
	hooks interface{ HookPanics() (uint64, string) } // nil: the answerer does not say

	mu     sync.Mutex
	addr   string
	udp    net.PacketConn
	tcp    net.Listener
	ran    bool
	closed bool
	stop   context.CancelFunc // ends a running Run (Close)
	done   chan struct{}      // closed when a running Run returns

	conns   *connTable
	stats   serverCounters
	stopUDP chan struct{} // closed to stop the UDP loops
}

// Answerer is what a Server needs from the store it serves:
// *memory.Provider is one. Both methods answer one query, read from query
// and written into buf (which they may outgrow), with src the client's
// address; RespondUDP caps the reply for UDP, RespondTCP does not. They
// return nil when the query gets no reply. Both are called from many
// goroutines at once.
//
// When the Answerer also has a method HoldsZone(name []byte) bool (name
// lower case and fully qualified), response rate limiting counts
// NXDOMAIN, error and wildcard replies for the names below one zone in the
// zone's bucket; when it has HookPanics() (uint64, string), Stats reports
// the count.
type Answerer interface {
	RespondUDP(query, buf []byte, src netip.Addr) []byte
	RespondTCP(query, buf []byte, src netip.Addr) []byte
}

// TransferHandler serves zone transfers beside the Server's answers
// (zonetransfer.Transfer is one). RespondUDP answers every UDP query in
// place of the Answerer's RespondUDP (it handles TSIG-signed queries and
// IXFR over UDP and passes the rest on). ServeTCP is offered every query
// read over TCP: it returns true when it wrote the reply itself (an AXFR or
// IXFR stream, a signed reply), calling pin, when not nil, before a
// transfer starts so the connection is not evicted while it runs; false,
// having written nothing, for the Server to answer. Run runs beside the
// Server's Run (sending NOTIFY) until its context ends.
type TransferHandler interface {
	RespondUDP(query, buf []byte, src netip.Addr) []byte
	ServeTCP(w io.Writer, query []byte, src netip.Addr, pin func()) (handled bool, err error)
	Run(ctx context.Context) error
}

// NewServer returns a Server for a, or cfg's validation error (a
// *FieldError wrapping ErrInvalidConfig). log may be nil (quiet).
func NewServer(a Answerer, cfg ServerConfig, log *slog.Logger) (*Server, error) {
	if a == nil {
		return nil, ErrNoAnswerer
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
		return nil, fielderr.In("rrl", ErrInvalidConfig, err)
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s := &Server{a: a, cfg: cfg, log: log, rrl: rrl, conns: newConnTable(cfg.MaxTCPConns, cfg.MaxTCPConnsPerSource)}
	s.zones, _ = a.(interface{ HoldsZone(name []byte) bool })
	s.hooks, _ = a.(interface{ HookPanics() (uint64, string) })
	return s, nil
}

// SetTransfer has the Server serve zone transfers through t (see
// TransferHandler and the package zonetransfer); nil turns them off. Call
// it before Run: once Run has started it returns ErrRunning.
func (s *Server) SetTransfer(t TransferHandler) error {
	if s == nil || s.a == nil {
		return ErrNoAnswerer
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ran {
		return ErrRunning
	}
	s.xfr = t
	return nil
}

// Listen binds the UDP socket and the TCP listener on cfg.Addr. With port 0
// it picks a port free for both. Calling it again is a no-op.
func (s *Server) Listen() error {
	if s == nil || s.a == nil {
		return ErrNoAnswerer
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	if s.udp != nil {
		return nil
	}
	ap, _ := netip.ParseAddrPort(s.cfg.Addr)
	var lastErr error
	for range 10 {
		u, err := net.ListenPacket("udp", s.cfg.Addr)
		if err != nil {
			return fmt.Errorf("dnsserver: %w", err) // err says "listen udp <addr>: ..."
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
	return fmt.Errorf("dnsserver: %w", lastErr) // err says "listen tcp <addr>: ..."
}

// Addr returns the address the server listens on (host:port), or "" before
// Listen.
func (s *Server) Addr() string {
	if s == nil {
		return ""
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr
}

// Run serves queries until ctx ends or Close is called, then shuts down
// (waiting at most ShutdownTimeout for queries in flight), releases the
// sockets and returns nil; or returns the error that stopped it. It binds
// first if Listen was not called. Given a context that has already ended,
// it serves nothing (not even queries waiting in the bound sockets) and
// releases the sockets. A Server runs once: a second call returns
// ErrRunning, a call after Close ErrClosed.
func (s *Server) Run(ctx context.Context) error {
	if err := s.Listen(); err != nil {
		return err
	}
	s.mu.Lock()
	if s.ran {
		s.mu.Unlock()
		return ErrRunning
	}
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	s.ran = true
	if ctx.Err() != nil {
		// Ended before it began: serve nothing, not even the queries
		// already waiting in the sockets Listen bound.
		err := errors.Join(s.udp.Close(), s.tcp.Close())
		s.udp, s.tcp = nil, nil
		s.mu.Unlock()
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.stop, s.done = cancel, make(chan struct{})
	defer close(s.done)
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

// Close releases the Server's sockets. On a Server that Listen bound and
// Run never served it closes them at once (else they stay bound until the
// process ends); on a running Server it ends Run as its context would and
// waits for Run to return. Afterwards Listen and Run return ErrClosed.
// Calling Close again, or on a Server never bound, does nothing more and
// returns nil.
func (s *Server) Close() error {
	if s == nil || s.a == nil {
		return nil
	}
	s.mu.Lock()
	s.closed = true
	stop, done := s.stop, s.done
	var err error
	if !s.ran && s.udp != nil {
		err = errors.Join(s.udp.Close(), s.tcp.Close())
		s.udp, s.tcp = nil, nil
	}
	s.mu.Unlock()
	if stop != nil {
		stop()
		<-done
	}
	return err
}

// udpWorkers is the number of UDP loops to run.
func (s *Server) udpWorkers() int {
	if s.cfg.UDPWorkers > 0 {
		return s.cfg.UDPWorkers
	}
	return max(1, runtime.GOMAXPROCS(0)-1)
}
