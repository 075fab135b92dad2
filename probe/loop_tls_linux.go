//go:build linux

package probe

import (
	"fmt"
	"io"
	"iter"
	"net"
	"net/netip"
	"os"
	"syscall"
	"time"
)

// HTTPS checks in the event loop. crypto/tls is written against a blocking
// net.Conn, so each HTTPS probe in the loop runs the lean engine's exchange
// (leanExchange: handshake, request, reply) in a coroutine (iter.Pull) over
// a loopConn: the connection's reads and writes are the loop's raw system
// calls, and where one would block the coroutine hands control back to the
// loop, which resumes it when the socket's next epoll event comes. Control
// passes between the loop and a coroutine without the scheduler, on the
// loop's thread, and no call tells the runtime a system call is in progress
// (see the raw calls in loop_linux.go): on a worker goroutine the same check
// parks and wakes through the runtime's poller three or four times, and
// each wake-up from an idle process starts the runtime's monitor thread
// polling every 20 µs, which cost about a fifth of an HTTPS check's CPU.
// The handshake's CPU then runs on the loop's thread; a Monitor with more
// than one P sends HTTPS checks to the workers while the loop spends more
// than loopTLSShare of its time in them (see evLoop.tlsBusy), so TLS still
// spreads over the cores when one is not enough.

// The waits a coroutine yields to the loop.
const (
	loopWantRead uint8 = iota + 1
	loopWantWrite
)

// loopConnBuf is how many written bytes a loopConn keeps before it writes
// them out. Writes are held until the coroutine next reads (or the buffer
// fills): the handshake's last flight and the request go out in one write
// system call and one segment, as HAProxy sends them.
const loopConnBuf = 4 << 10

// loopIdleCos is how many idle coroutines (each a parked goroutine with
// its grown stack, 8–32 KB, and its 4 KB write buffer) a loop keeps for the
// next HTTPS checks: more than the checks in flight at once on one core
// when the targets answer in milliseconds (a few at 1,000 checks a second);
// past it, a coroutine is made and ended per check, as before there was
// reuse.
const loopIdleCos = 16

// tlsCo returns an idle coroutine set up to run h's exchange over the
// connected socket fd (see loopTLS.begin for readable).
func (lp *evLoop) tlsCo(h *HTTP, fd int, addr netip.AddrPort, readable bool) *loopTLS {
	var co *loopTLS
	if n := len(lp.idleCos); n > 0 {
		co = lp.idleCos[n-1]
		lp.idleCos[n-1] = nil
		lp.idleCos = lp.idleCos[:n-1]
	} else {
		co = newLoopTLS()
	}
	co.begin(h, fd, addr, readable)
	return co
}

// endTLS ends slot p's exchange (at once, if it has not) and keeps its
// coroutine for the next one.
func (lp *evLoop) endTLS(p *loopProbe) {
	co := p.co
	p.co = nil
	co.end()
	if co.dead || len(lp.idleCos) >= loopIdleCos {
		co.stop()
		return
	}
	lp.idleCos = append(lp.idleCos, co)
}

// stopTLS ends the idle coroutines (the loop is closing).
func (lp *evLoop) stopTLS() {
	for i, co := range lp.idleCos {
		co.stop()
		lp.idleCos[i] = nil
	}
	lp.idleCos = lp.idleCos[:0]
}

// loopConn is the net.Conn a coroutine's exchange runs over. Deadlines are
// the loop's: when the probe's phase runs out of time the loop sets expired
// and resumes the coroutine, and every call returns the timeout from then
// on.
type loopConn struct {
	fd      int
	addr    netip.AddrPort
	yield   func(uint8) bool
	wbuf    []byte
	err     error // once set (a deadline, a failed write), every call returns it
	expired bool
	// drained: the socket had nothing more to read at the last read (it
	// returned EAGAIN, or fewer bytes than asked for), and so the next
	// read waits for the loop's next event first instead of trying: the
	// socket is edge-triggered, and every segment that arrives after a
	// read is an event. Most of all, the read right after a flight of the
	// handshake is written would find nothing (the server has yet to
	// answer it): a system call fewer, twice per check.
	drained bool
}

// wait hands control to the loop until the socket's next event; false when
// the probe is over (its deadline passed, or the loop is stopping). Any
// event may be the one that says bytes arrived (a wait for writing can
// take it), so after one the next read tries first.
func (c *loopConn) wait(want uint8, op string) bool {
	if c.err == nil && !c.expired && c.yield(want) && !c.expired {
		c.drained = false
		return true
	}
	if c.err == nil {
		c.err = &net.OpError{Op: op, Net: "tcp", Addr: c.RemoteAddr(), Err: os.ErrDeadlineExceeded}
	}
	return false
}

// Read flushes the held writes, then reads what the socket has, waiting for
// the loop when it has nothing.
func (c *loopConn) Read(p []byte) (int, error) {
	if err := c.flush(); err != nil {
		return 0, err
	}
	if len(p) == 0 {
		return 0, nil
	}
	for {
		if c.err != nil {
			return 0, c.err
		}
		if c.drained && !c.wait(loopWantRead, "read") {
			return 0, c.err
		}
		n, err := rawRead(c.fd, p)
		switch {
		case n > 0:
			c.drained = n < len(p)
			return n, nil
		case err == nil:
			return 0, io.EOF
		case err == syscall.EINTR:
		case err == syscall.EAGAIN:
			c.drained = true
		default:
			c.err = &net.OpError{Op: "read", Net: "tcp", Addr: c.RemoteAddr(), Err: os.NewSyscallError("read", err)}
			return 0, c.err
		}
	}
}

// Write holds p for the next flush, or writes the held bytes and p out
// when they would not fit.
func (c *loopConn) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	if len(c.wbuf)+len(p) <= cap(c.wbuf) {
		c.wbuf = append(c.wbuf, p...)
		return len(p), nil
	}
	if err := c.flush(); err != nil {
		return 0, err
	}
	if err := c.writeAll(p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// flush writes the held bytes out.
func (c *loopConn) flush() error {
	if len(c.wbuf) == 0 {
		return c.err
	}
	err := c.writeAll(c.wbuf)
	c.wbuf = c.wbuf[:0]
	return err
}

func (c *loopConn) writeAll(p []byte) error {
	for len(p) > 0 {
		if c.err != nil {
			return c.err
		}
		n, err := rawWrite(c.fd, p)
		if n > 0 {
			p = p[n:]
		}
		switch {
		case err == nil, err == syscall.EINTR:
		case err == syscall.EAGAIN:
			if !c.wait(loopWantWrite, "write") {
				return c.err
			}
		default:
			c.err = &net.OpError{Op: "write", Net: "tcp", Addr: c.RemoteAddr(), Err: os.NewSyscallError("write", err)}
			return c.err
		}
	}
	return nil
}

// Close does nothing: the loop closes the socket when the probe ends.
func (c *loopConn) Close() error { return nil }

// LocalAddr returns an empty address: the loop does not ask the kernel.
func (c *loopConn) LocalAddr() net.Addr { return &net.TCPAddr{} }

// RemoteAddr returns the target's address.
func (c *loopConn) RemoteAddr() net.Addr { return net.TCPAddrFromAddrPort(c.addr) }

// The deadlines are the loop's; these do nothing.
func (c *loopConn) SetDeadline(time.Time) error      { return nil }
func (c *loopConn) SetReadDeadline(time.Time) error  { return nil }
func (c *loopConn) SetWriteDeadline(time.Time) error { return nil }

// loopTLS is a coroutine that runs HTTPS exchanges, one after another: a
// loop keeps idle ones (see evLoop.tlsCo), so that a check neither starts a
// goroutine nor grows a new stack to the depth of a TLS handshake.
type loopTLS struct {
	conn   loopConn
	h      *HTTP
	next   func() (uint8, bool)
	stop   func()
	result Result
	done   bool // the exchange has its verdict (the coroutine is idle)
	dead   bool // the coroutine has returned (stopped): not reusable
	// panicked is the value of a panic the exchange ended with, for the
	// Monitor to log as it logs a prober's panic on a worker.
	panicked any
}

// loopExchanged is what a coroutine yields when its exchange has its
// verdict, as opposed to loopWantRead and loopWantWrite.
const loopExchanged uint8 = 0

// newLoopTLS makes an idle coroutine; begin gives it an exchange, which
// runs when it is first resumed.
func newLoopTLS() *loopTLS {
	co := &loopTLS{conn: loopConn{wbuf: make([]byte, 0, loopConnBuf)}, done: true}
	co.next, co.stop = iter.Pull(func(yield func(uint8) bool) {
		co.conn.yield = yield
		for {
			co.run()
			if !yield(loopExchanged) {
				return
			}
		}
	})
	return co
}

// begin sets co up for h's exchange over the connected socket fd;
// readable says whether the loop has seen a read event on it (a server
// that speaks first: a TLS server does not, and then the first read waits
// for its answer to the ClientHello).
func (co *loopTLS) begin(h *HTTP, fd int, addr netip.AddrPort, readable bool) {
	co.h = h
	co.conn.fd, co.conn.addr, co.conn.drained = fd, addr, !readable
	co.conn.wbuf = co.conn.wbuf[:0]
	co.conn.err, co.conn.expired = nil, false
	co.result, co.done, co.panicked = Result{}, false, nil
}

// run runs one exchange; a panic in it is its verdict.
func (co *loopTLS) run() {
	defer func() {
		// A panic must not unwind into the loop, which every other
		// probe of the Monitor depends on. Worded as Monitor.probe
		// words a prober's panic on a worker.
		if v := recover(); v != nil {
			co.panicked = v
			co.result = Result{Status: Fail, Kind: KindOther, Detail: fmt.Sprintf("prober panicked: %v", v)}
		}
	}()
	co.result = loopTLSExchange(co.h, &co.conn)
}

// loopTLSExchange is the exchange a coroutine runs; a variable so that a
// test can make it panic.
var loopTLSExchange = (*HTTP).leanExchange

// resume runs the coroutine until it waits again or its exchange ends; it
// reports whether the exchange ended (its verdict in co.result).
func (co *loopTLS) resume() bool {
	if co.done {
		return true
	}
	v, ok := co.next()
	if ok && v != loopExchanged {
		return false
	}
	co.done = true
	co.dead = !ok
	co.h, co.conn.fd = nil, -1
	return true
}

// expire ends the exchange on its deadline: every call it makes from now
// on fails with a timeout, so it reaches its verdict (the exchange's own
// wording of the timeout) when resumed.
func (co *loopTLS) expire() Result {
	co.conn.expired = true
	if !co.resume() {
		// Cannot happen: an expired conn never waits.
		co.stop()
		co.done, co.dead = true, true
	}
	return co.result
}

// end ends the exchange without taking its verdict, if it has not ended:
// its calls fail from then on and it runs to its end now.
func (co *loopTLS) end() {
	if !co.done {
		co.expire()
	}
}
