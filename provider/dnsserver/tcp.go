package dnsserver

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// Accept back-off, as net/http's Server does it: a failed Accept (out of
// descriptors, for instance) waits acceptBackoffMin, doubling up to
// acceptBackoffMax, so that the loop never spins on an error that only time
// or a closed connection can cure.
const (
	acceptBackoffMin = 5 * time.Millisecond
	acceptBackoffMax = time.Second
)

// tcpChunk is how much of a query the TCP loop reads at a time: a message's
// buffer grows with what the client has sent, in steps of at most this.
const tcpChunk = 4096

// tcpKeepBuf is the largest buffer a waiting TCP connection keeps between
// two queries; a larger one (a large query or reply) is dropped.
const tcpKeepBuf = 1024

// tcpConn is one client connection in the table.
type tcpConn struct {
	c    net.Conn
	src  netip.Addr
	last atomic.Int64 // unix nanoseconds of the last query answered (or the accept)
	busy atomic.Bool  // reading or answering a query: never evicted
	// fresh: accepted, but its goroutine has not started reading yet:
	// evicted only when no connection already read from is idle, so that
	// a burst of accepts does not close one whose query is waiting.
	fresh atomic.Bool
	pin   atomic.Bool // carrying a zone transfer: never evicted
	gone  bool        // removed from the table (guarded by connTable.mu)
	rbuf  []byte      // reply buffer kept between queries (serveConn's goroutine only)
	st    tcpState    // serveConn's goroutine only
}

// connTable holds the open TCP connections: a bound on their number, an
// optional bound per client address, and eviction of the one idle longest.
type connTable struct {
	max, perSource int

	mu     sync.Mutex
	m      map[*tcpConn]struct{}
	src    map[netip.Addr]int
	closed bool
}

func newConnTable(max, perSource int) *connTable {
	return &connTable{max: max, perSource: perSource, m: map[*tcpConn]struct{}{}, src: map[netip.Addr]int{}}
}

// admission is the outcome of add.
type admission uint8

const (
	admitted        admission = iota
	admittedEvicted           // admitted in place of the connection idle longest
	refusedFull               // the table is full of busy connections
	refusedSource             // the client address holds its limit
	refusedClosed             // the server is shutting down
)

// add admits tc, evicting the connection idle longest when the table is
// full. The evicted connection is closed here; its goroutine notices.
func (t *connTable) add(tc *tcpConn) admission {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return refusedClosed
	}
	if t.perSource > 0 && t.src[tc.src] >= t.perSource {
		return refusedSource
	}
	res := admitted
	if len(t.m) >= t.max {
		// The idle longest among the connections already read from; a
		// fresh one (accepted, not yet read) only when there is none, so
		// that a burst of accepts does not close queries still unread
		// while idle connections could go instead.
		var victim, freshVictim *tcpConn
		for c := range t.m {
			if c.busy.Load() || c.pin.Load() {
				continue
			}
			if c.fresh.Load() {
				if freshVictim == nil || c.last.Load() < freshVictim.last.Load() {
					freshVictim = c
				}
				continue
			}
			if victim == nil || c.last.Load() < victim.last.Load() {
				victim = c
			}
		}
		if victim == nil {
			victim = freshVictim
		}
		if victim == nil {
			return refusedFull
		}
		t.removeLocked(victim)
		victim.c.Close()
		res = admittedEvicted
	}
	t.m[tc] = struct{}{}
	t.src[tc.src]++
	return res
}

func (t *connTable) remove(tc *tcpConn) {
	t.mu.Lock()
	t.removeLocked(tc)
	t.mu.Unlock()
}

func (t *connTable) removeLocked(tc *tcpConn) {
	if tc.gone {
		return
	}
	tc.gone = true
	delete(t.m, tc)
	if n := t.src[tc.src] - 1; n > 0 {
		t.src[tc.src] = n
	} else {
		delete(t.src, tc.src)
	}
}

func (t *connTable) len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.m)
}

// closeIdle refuses new connections and closes those waiting for a query;
// busy ones finish their query first (their loop sees closed and stops).
func (t *connTable) closeIdle() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	for c := range t.m {
		if !c.busy.Load() && !c.pin.Load() {
			c.c.Close()
		}
	}
}

func (t *connTable) isClosed() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.closed
}

// closeAll closes every connection.
func (t *connTable) closeAll() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.closed = true
	for c := range t.m {
		c.c.Close()
	}
}

// serveTCP accepts connections until stop is closed, starting one
// goroutine per connection under wg.
func (s *Server) serveTCP(ln net.Listener, stop <-chan struct{}, wg *sync.WaitGroup) {
	var delay time.Duration
	for {
		c, err := ln.Accept()
		if err != nil {
			select {
			case <-stop:
				return
			default:
			}
			if errors.Is(err, net.ErrClosed) {
				return
			}
			s.stats.acceptErrors.Add(1)
			if delay == 0 {
				delay = acceptBackoffMin
				s.log.Warn("tcp accept failed; backing off", "err", err)
			} else {
				delay = min(2*delay, acceptBackoffMax)
			}
			t := time.NewTimer(delay)
			select {
			case <-stop:
				t.Stop()
				return
			case <-t.C:
			}
			continue
		}
		delay = 0
		s.stats.tcpAccepted.Add(1)
		tc := &tcpConn{c: c}
		if ap, err := netip.ParseAddrPort(c.RemoteAddr().String()); err == nil {
			tc.src = ap.Addr().Unmap()
		}
		tc.last.Store(time.Now().UnixNano())
		tc.fresh.Store(true)
		switch s.conns.add(tc) {
		case admitted:
		case admittedEvicted:
			s.stats.tcpEvicted.Add(1)
		case refusedFull, refusedSource:
			s.stats.tcpRefused.Add(1)
			c.Close()
			continue
		case refusedClosed:
			c.Close()
			return
		}
		wg.Go(func() { s.serveConn(tc) })
	}
}

// serveConn answers the queries of one connection in order until the
// client closes it, it idles for TCPIdleTimeout, or it is evicted.
//
// A waiting connection holds no read buffer: it blocks on the next
// message's two-byte length. Once a message starts, it reads into a pooled
// buffer as much as the client has sent, answers every whole message there
// (queries pipelined back to back, RFC 7766 section 6.2.1.1), and writes
// their replies with one write; a partial message left over is read on.
// Deadlines are pushed forward at most every tcpDeadlineStep, so the idle
// timeout is between TCPIdleTimeout - tcpDeadlineStep and TCPIdleTimeout
// after the last query.
func (s *Server) serveConn(tc *tcpConn) {
	st := &tc.st // in the connection's heap object: a small frame here keeps the stack of a waiting connection at its first 2 KiB
	st.idle = s.cfg.TCPIdleTimeout
	st.step = min(tcpDeadlineStep, st.idle/8)
	defer func() {
		if v := recover(); v != nil {
			s.panicked("tcp", tc.src, v) // this connection is closed; the server goes on
		}
		st.release()
		tc.c.Close()
		s.conns.remove(tc)
	}()
	// The waiting loop stays in this small frame; serveBurst's larger one
	// is on the stack only while a client is sending.
	var hdr [2]byte
	for {
		if err := st.arm(time.Now(), &st.rdl, tc.c.SetReadDeadline); err != nil {
			return
		}
		tc.fresh.Store(false)
		tc.busy.Store(false)
		if s.conns.isClosed() {
			return
		}
		if _, err := io.ReadFull(tc.c, hdr[:]); err != nil {
			return
		}
		tc.busy.Store(true)
		if !s.serveBurst(tc, st, hdr) {
			return
		}
	}
}

// tcpState is one connection's buffers and deadlines.
type tcpState struct {
	idle, step time.Duration
	buf        []byte // pooled while a message is in progress
	pooled     *[]byte
	data       []byte // buf[:len]: bytes read, starting at a message boundary
	out        []byte // replies waiting to be written, each with its length
	rdl, wdl   time.Time
}

// release gives the read buffer back to the pool.
func (st *tcpState) release() {
	if st.pooled != nil {
		*st.pooled = st.buf[:0]
		tcpBufPool.Put(st.pooled)
		st.pooled = nil
	}
	st.buf, st.data = nil, nil
	if cap(st.out) > tcpKeepBuf {
		st.out = nil
	}
}

// arm pushes the deadline *dl to now plus the idle timeout, unless that
// moves it by less than the step.
func (st *tcpState) arm(now time.Time, dl *time.Time, set func(time.Time) error) error {
	if now.Add(st.idle).Sub(*dl) < st.step {
		return nil
	}
	*dl = now.Add(st.idle)
	return set(*dl)
}

// flush writes the replies gathered.
func (st *tcpState) flush(c net.Conn, now time.Time) error {
	if len(st.out) == 0 {
		return nil
	}
	if err := st.arm(now, &st.wdl, c.SetWriteDeadline); err != nil {
		return err
	}
	_, err := c.Write(st.out)
	st.out = st.out[:0]
	return err
}

// serveBurst answers the message whose length is hdr and every message the
// client sends right behind it, until no partial message is left; false
// means the connection is done.
func (s *Server) serveBurst(tc *tcpConn, st *tcpState, hdr [2]byte) bool {
	defer st.release()
	st.pooled = tcpBufPool.Get().(*[]byte)
	st.buf = (*st.pooled)[:cap(*st.pooled)]
	copy(st.buf, hdr[:])
	st.data = st.buf[:2]
	for len(st.data) > 0 {
		// Read until data holds a length, then the whole message (a client
		// may split anywhere, the length itself included).
		if !s.fill(tc, st, 2) {
			return false
		}
		n := 2 + int(binary.BigEndian.Uint16(st.data))
		if n < 2+12 {
			return false // not even a header: nothing to answer, nothing to resynchronise on
		}
		if !s.fill(tc, st, n) {
			return false
		}
		// Answer every whole message read.
		off := 0
		for len(st.data)-off >= 2 {
			n := 2 + int(binary.BigEndian.Uint16(st.data[off:]))
			if n < 2+12 {
				_ = st.flush(tc.c, time.Now())
				return false
			}
			if len(st.data)-off < n {
				break
			}
			q := st.data[off+2 : off+n]
			off += n
			var reply []byte
			if s.xfr != nil {
				if err := st.flush(tc.c, time.Now()); err != nil {
					return false
				}
				handled, err := s.xfr.ServeTCP(tc.c, q, tc.src, func() { tc.pin.Store(true) })
				tc.pin.Store(false)
				if err != nil {
					return false
				}
				if !handled {
					reply = s.respondTCP(tc, q)
				}
			} else {
				reply = s.respondTCP(tc, q)
			}
			// Stored before the reply goes out: a client that has its
			// answer finds this connection's idle time ordered after its
			// query.
			tc.last.Store(time.Now().UnixNano())
			if reply != nil {
				s.stats.countTCP(reply)
				st.out = append(st.out, byte(len(reply)>>8), byte(len(reply)))
				st.out = append(st.out, reply...)
				if len(st.out) >= tcpFlushAt {
					if err := st.flush(tc.c, time.Now()); err != nil {
						return false
					}
				}
			}
			if s.conns.isClosed() {
				_ = st.flush(tc.c, time.Now())
				return false
			}
		}
		now := time.Now()
		if err := st.flush(tc.c, now); err != nil {
			return false
		}
		// Keep the partial message (if any) at the start of the buffer; it
		// has until the idle timeout from now (not from each byte: a client
		// trickling one message is not kept open by it).
		rest := copy(st.buf, st.data[off:])
		st.data = st.buf[:rest]
		if rest > 0 {
			if err := st.arm(now, &st.rdl, tc.c.SetReadDeadline); err != nil {
				return false
			}
		}
	}
	return true
}

// fill reads until st.data holds at least need bytes, growing the buffer
// with what arrives (at most tcpChunk more at a time) for a large message;
// false means the connection failed or ended first.
func (s *Server) fill(tc *tcpConn, st *tcpState, need int) bool {
	for len(st.data) < need {
		if cap(st.buf)-len(st.data) < min(need-len(st.data), tcpChunk) {
			nb := make([]byte, len(st.data), len(st.data)+max(min(need-len(st.data), tcpChunk), min(need, 2*cap(st.buf))-len(st.data)))
			copy(nb, st.data)
			st.release()
			st.buf = nb[:cap(nb)]
			st.data = st.buf[:len(nb)]
		}
		m, err := tc.c.Read(st.buf[len(st.data):cap(st.buf)])
		st.data = st.buf[:len(st.data)+m]
		if err != nil && len(st.data) < need {
			return false
		}
	}
	return true
}

// tcpBufPool holds the read buffers of connections in the middle of a
// message (a waiting connection holds none).
var tcpBufPool = sync.Pool{New: func() any { b := make([]byte, 0, tcpChunk); return &b }}

// tcpFlushAt is how many bytes of replies a connection gathers before it
// writes them even though more queries are waiting.
const tcpFlushAt = 16 << 10

// tcpDeadlineStep bounds how often a connection pushes its read and write
// deadlines forward (each is a timer update in the runtime).
const tcpDeadlineStep = time.Second

// answerUDP answers one UDP query into out: transfers and TSIG through the
// Transfer when there is one, else the Answerer's (the store's fast path). A panic (a bug)
// costs this query its reply, not the server its life.
func (s *Server) answerUDP(q, out []byte, src netip.Addr) (reply []byte) {
	defer func() {
		if v := recover(); v != nil {
			s.panicked("udp", src, v)
			reply = nil
		}
	}()
	if s.xfr != nil {
		return s.xfr.RespondUDP(q, out, src)
	}
	return s.a.RespondUDP(q, out, src)
}

// panicked counts a recovered panic and logs it with its stack, at most
// once a second (a query of death repeated at line rate must not flood
// the log).
func (s *Server) panicked(transport string, src netip.Addr, v any) {
	s.stats.panics.Add(1)
	now := time.Now().UnixNano()
	last := s.stats.panicLogged.Load()
	if now-last < int64(time.Second) || !s.stats.panicLogged.CompareAndSwap(last, now) {
		return
	}
	s.log.Error("dns: answering a query panicked; query dropped, server goes on",
		"transport", transport, "client", src.String(), "panic", fmt.Sprint(v), "stack", string(debug.Stack()),
		"panics", s.stats.panics.Load())
}

// respondTCP answers one query of tc that is not a zone transfer, from the
// fast path's TCP entries when it can (memory.Provider.RespondTCP), reusing the
// connection's reply buffer.
func (s *Server) respondTCP(tc *tcpConn, query []byte) []byte {
	r := s.a.RespondTCP(query, tc.rbuf[:0], tc.src)
	if cap(r) <= tcpKeepBuf {
		tc.rbuf = r[:0]
	} else {
		tc.rbuf = nil
	}
	return r
}

// serverCounters are the Server's running counts.
type serverCounters struct {
	rcodes       [16]atomic.Uint64
	tcpAccepted  atomic.Uint64
	tcpEvicted   atomic.Uint64
	tcpRefused   atomic.Uint64
	acceptErrors atomic.Uint64
	panics       atomic.Uint64
	panicLogged  atomic.Int64 // unix nanoseconds of the last panic logged
	udpTrials    atomic.Uint64
	udpPausing   atomic.Uint64
	udpTooBig    atomic.Uint64
}

// udpTrial counts a UDP loop's trial of its pause and its choice.
func (c *serverCounters) udpTrial(pause bool) {
	c.udpTrials.Add(1)
	if pause {
		c.udpPausing.Add(1)
	}
}

func (c *serverCounters) countTCP(reply []byte) {
	if len(reply) >= 4 {
		c.rcodes[reply[3]&0x0F].Add(1)
	}
}

// rcodeTally counts the replies of one UDP batch; add publishes them with
// one atomic addition per response code seen.
type rcodeTally [16]uint32

func (t *rcodeTally) count(reply []byte) {
	if len(reply) >= 4 {
		t[reply[3]&0x0F]++
	}
}

func (c *serverCounters) add(t *rcodeTally) {
	for i, n := range t {
		if n != 0 {
			c.rcodes[i].Add(uint64(n))
			t[i] = 0
		}
	}
}

// ServerStats is a snapshot of a Server's counters since it was made.
type ServerStats struct {
	// Responses counts the replies sent over UDP and TCP by response code
	// (the header's four bits: 0 NOERROR, 1 FORMERR, 2 SERVFAIL, 3
	// NXDOMAIN, 4 NOTIMP, 5 REFUSED, ...). Slipped replies count under their
	// code; dropped ones do not count. A reply is counted before it is
	// sent, so a client that has its answer finds it counted.
	Responses [16]uint64
	// TCPOpen is the number of TCP connections open now, TCPLimit the most
	// the server holds (MaxTCPConns, or the derived default).
	TCPOpen, TCPLimit int
	// TCPAccepted counts accepted TCP connections; TCPEvicted those closed
	// to make room for a new one; TCPRefused those closed at once because
	// the table was full of busy connections or the client address held its
	// MaxTCPConnsPerSource.
	TCPAccepted, TCPEvicted, TCPRefused uint64
	// AcceptErrors counts failed accepts (each followed by a back-off).
	AcceptErrors uint64
	// RRL counts the rate limiter's decisions (zeros when RRL is off).
	RRL RRLStats
	// Panics counts queries whose answering panicked (a bug): the UDP
	// query got no reply, the TCP connection was closed, and the server
	// went on (the first panic each second is logged with its stack).
	Panics uint64
	// HookPanics counts answer hooks that panicked, whose queries were
	// answered as if the hook had no opinion (memory.Provider.HookPanics; 0 for an Answerer without it).
	HookPanics uint64
	// UDPPauseTrials counts the UDP loops' trials of their pause (see
	// ServerConfig.UDPCoalesce), UDPPauseChosen those that chose to pause.
	// Both stay at zero while no loop receives more than UDPCoalesceRate
	// queries a second, and on systems without the pause (all but Linux).
	UDPPauseTrials, UDPPauseChosen uint64
	// UDPTooBig counts UDP replies larger than the outgoing interface's
	// MTU, which the server does not fragment (see Server): each was sent
	// truncated (TC set, question and OPT only) so that the client retried
	// over TCP. Non-zero means memory.Config.MaxUDPSize is above what a link
	// carries in one packet.
	UDPTooBig uint64
}

// TCPFull reports whether the connection table is at its limit.
func (st ServerStats) TCPFull() bool { return st.TCPLimit > 0 && st.TCPOpen >= st.TCPLimit }

// Stats returns the server's counters. It is safe to call at any time,
// from any goroutine.
func (s *Server) Stats() ServerStats {
	if s == nil || s.conns == nil {
		return ServerStats{}
	}
	st := ServerStats{
		TCPOpen:      s.conns.len(),
		TCPLimit:     s.cfg.MaxTCPConns,
		TCPAccepted:  s.stats.tcpAccepted.Load(),
		TCPEvicted:   s.stats.tcpEvicted.Load(),
		TCPRefused:   s.stats.tcpRefused.Load(),
		AcceptErrors: s.stats.acceptErrors.Load(),
		Panics:       s.stats.panics.Load(),
		RRL:          s.rrl.Stats(),

		UDPPauseTrials: s.stats.udpTrials.Load(),
		UDPPauseChosen: s.stats.udpPausing.Load(),
		UDPTooBig:      s.stats.udpTooBig.Load(),
	}
	for i := range st.Responses {
		st.Responses[i] = s.stats.rcodes[i].Load()
	}
	if s.hooks != nil {
		st.HookPanics, _ = s.hooks.HookPanics()
	}
	return st
}

// TCPLimit returns the connection limit the server applies (MaxTCPConns,
// or the default derived from the descriptor limit).
func (s *Server) TCPLimit() int {
	if s == nil {
		return 0
	}
	return s.cfg.MaxTCPConns
}

// defaultMaxTCPConns derives the TCP connection limit from the descriptor
// limit: a quarter of it, between 16 and 1,024.
func defaultMaxTCPConns() int {
	n, ok := fileLimit()
	if !ok {
		return 1024
	}
	return int(min(max(n/4, 16), 1024))
}
