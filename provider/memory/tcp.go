package memory

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"net/netip"
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
	defer s.conns.remove(tc)
	defer tc.c.Close()
	idle := s.cfg.TCPIdleTimeout
	step := min(tcpDeadlineStep, idle/8)
	var (
		hdr    [2]byte
		buf    []byte // pooled while a message is in progress
		pooled *[]byte
		data   []byte // buf[:len]: bytes read, starting at a message boundary
		out    []byte // replies waiting to be written, each with its length
		rdl    time.Time
		wdl    time.Time
	)
	release := func() {
		if pooled != nil {
			*pooled = buf[:0]
			tcpBufPool.Put(pooled)
			pooled = nil
		}
		buf, data = nil, nil
		if cap(out) > tcpKeepBuf {
			out = nil
		}
	}
	defer release()
	arm := func(now time.Time, dl *time.Time, set func(time.Time) error) error {
		if now.Add(idle).Sub(*dl) < step {
			return nil
		}
		*dl = now.Add(idle)
		return set(*dl)
	}
	flush := func(now time.Time) error {
		if len(out) == 0 {
			return nil
		}
		if err := arm(now, &wdl, tc.c.SetWriteDeadline); err != nil {
			return err
		}
		_, err := tc.c.Write(out)
		out = out[:0]
		return err
	}
	for {
		if len(data) == 0 {
			release()
			if err := arm(time.Now(), &rdl, tc.c.SetReadDeadline); err != nil {
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
			pooled = tcpBufPool.Get().(*[]byte)
			buf = (*pooled)[:cap(*pooled)]
			copy(buf, hdr[:])
			data = buf[:2]
		}
		// Read until data holds a whole message.
		n := 2 + int(binary.BigEndian.Uint16(data))
		if n < 2+12 {
			return // not even a header: nothing to answer, nothing to resynchronise on
		}
		for len(data) < n {
			if cap(buf)-len(data) < min(n-len(data), tcpChunk) {
				// A large message: grow with what arrives, as before.
				nb := make([]byte, len(data), len(data)+max(min(n-len(data), tcpChunk), min(n, 2*cap(buf))-len(data)))
				copy(nb, data)
				if pooled != nil {
					*pooled = buf[:0]
					tcpBufPool.Put(pooled)
					pooled = nil
				}
				buf = nb[:cap(nb)]
				data = buf[:len(data)]
			}
			m, err := tc.c.Read(buf[len(data):cap(buf)])
			data = buf[:len(data)+m]
			if err != nil && len(data) < n {
				return
			}
		}
		// Answer every whole message read.
		off := 0
		for {
			if len(data)-off < 2 {
				break
			}
			n := 2 + int(binary.BigEndian.Uint16(data[off:]))
			if n < 2+12 {
				_ = flush(time.Now())
				return
			}
			if len(data)-off < n {
				break
			}
			q := data[off+2 : off+n]
			off += n
			var reply []byte
			if s.xfr != nil {
				if err := flush(time.Now()); err != nil {
					return
				}
				handled, err := s.xfr.serveTCP(tc.c, q, tc.src, func() { tc.pin.Store(true) })
				tc.pin.Store(false)
				if err != nil {
					return
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
				out = append(out, byte(len(reply)>>8), byte(len(reply)))
				out = append(out, reply...)
				if len(out) >= tcpFlushAt {
					if err := flush(time.Now()); err != nil {
						return
					}
				}
			}
			if s.conns.isClosed() {
				_ = flush(time.Now())
				return
			}
		}
		now := time.Now()
		if err := flush(now); err != nil {
			return
		}
		// Keep the partial message (if any) at the start of the buffer; the
		// next message has until the idle timeout from now (not from each
		// byte: a client trickling one message is not kept open by it).
		rest := copy(buf, data[off:])
		data = buf[:rest]
		if rest > 0 {
			if err := arm(now, &rdl, tc.c.SetReadDeadline); err != nil {
				return
			}
		}
	}
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

// respondTCP answers one query of tc that is not a zone transfer, from the
// fast path's TCP entries when it can (Provider.RespondTCP), reusing the
// connection's reply buffer.
func (s *Server) respondTCP(tc *tcpConn, query []byte) []byte {
	r := s.p.RespondTCP(query, tc.rbuf[:0], tc.src)
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
}

// TCPFull reports whether the connection table is at its limit.
func (st ServerStats) TCPFull() bool { return st.TCPLimit > 0 && st.TCPOpen >= st.TCPLimit }

// Stats returns the server's counters. It is safe to call at any time,
// from any goroutine.
func (s *Server) Stats() ServerStats {
	st := ServerStats{
		TCPOpen:      s.conns.len(),
		TCPLimit:     s.cfg.MaxTCPConns,
		TCPAccepted:  s.stats.tcpAccepted.Load(),
		TCPEvicted:   s.stats.tcpEvicted.Load(),
		TCPRefused:   s.stats.tcpRefused.Load(),
		AcceptErrors: s.stats.acceptErrors.Load(),
		RRL:          s.rrl.Stats(),
	}
	for i := range st.Responses {
		st.Responses[i] = s.stats.rcodes[i].Load()
	}
	return st
}

// TCPLimit returns the connection limit the server applies (MaxTCPConns,
// or the default derived from the descriptor limit).
func (s *Server) TCPLimit() int { return s.cfg.MaxTCPConns }

// defaultMaxTCPConns derives the TCP connection limit from the descriptor
// limit: a quarter of it, between 16 and 1,024.
func defaultMaxTCPConns() int {
	n, ok := fileLimit()
	if !ok {
		return 1024
	}
	return int(min(max(n/4, 16), 1024))
}
