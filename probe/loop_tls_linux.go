//go:build linux

package probe

import (
	"fmt"
	"io"
	"iter"
	"net"
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
// them out (the loop keeps up to loopConnBufs such buffers for reuse). Writes are held until the coroutine next reads (or the buffer
// fills): the handshake's last flight and the request go out in one write
// system call and one segment, as HAProxy sends them.
const (
	loopConnBuf  = 4 << 10
	loopConnBufs = 64
)

// wbuf returns an empty write buffer for a coroutine's connection.
func (lp *evLoop) wbuf() []byte {
	if n := len(lp.wbufs); n > 0 {
		b := lp.wbufs[n-1]
		lp.wbufs = lp.wbufs[:n-1]
		return b
	}
	return make([]byte, 0, loopConnBuf)
}

// endTLS ends slot p's coroutine (at once, if it has not) and keeps its
// write buffer for the next one.
func (lp *evLoop) endTLS(p *loopProbe) {
	p.co.abandon()
	if len(lp.wbufs) < loopConnBufs {
		lp.wbufs = append(lp.wbufs, p.co.conn.wbuf[:0])
	}
	p.co = nil
}

// loopConn is the net.Conn a coroutine's exchange runs over. Deadlines are
// the loop's: when the probe's phase runs out of time the loop sets expired
// and resumes the coroutine, and every call returns the timeout from then
// on.
type loopConn struct {
	fd      int
	addr    *net.TCPAddr
	yield   func(uint8) bool
	wbuf    []byte
	err     error // once set (a deadline, a failed write), every call returns it
	expired bool
}

// wait hands control to the loop until the socket's next event; false when
// the probe is over (its deadline passed, or the loop is stopping).
func (c *loopConn) wait(want uint8, op string) bool {
	if c.err == nil && !c.expired && c.yield(want) && !c.expired {
		return true
	}
	if c.err == nil {
		c.err = &net.OpError{Op: op, Net: "tcp", Addr: c.addr, Err: os.ErrDeadlineExceeded}
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
		n, err := rawRead(c.fd, p)
		switch {
		case n > 0:
			return n, nil
		case err == nil:
			return 0, io.EOF
		case err == syscall.EINTR:
		case err == syscall.EAGAIN:
			if !c.wait(loopWantRead, "read") {
				return 0, c.err
			}
		default:
			c.err = &net.OpError{Op: "read", Net: "tcp", Addr: c.addr, Err: os.NewSyscallError("read", err)}
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
			c.err = &net.OpError{Op: "write", Net: "tcp", Addr: c.addr, Err: os.NewSyscallError("write", err)}
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
func (c *loopConn) RemoteAddr() net.Addr { return c.addr }

// The deadlines are the loop's; these do nothing.
func (c *loopConn) SetDeadline(time.Time) error      { return nil }
func (c *loopConn) SetReadDeadline(time.Time) error  { return nil }
func (c *loopConn) SetWriteDeadline(time.Time) error { return nil }

// loopTLS is an HTTPS probe's coroutine.
type loopTLS struct {
	conn   loopConn
	next   func() (uint8, bool)
	stop   func()
	result Result
	done   bool
	// panicked is the value of a panic the exchange ended with, for the
	// Monitor to log as it logs a prober's panic on a worker.
	panicked any
}

// newLoopTLS makes the coroutine that runs h's exchange over the connected
// socket fd, holding writes in wbuf (empty, loopConnBuf of capacity); it
// runs when first resumed.
func newLoopTLS(h *HTTP, fd int, addr *net.TCPAddr, wbuf []byte) *loopTLS {
	co := &loopTLS{conn: loopConn{fd: fd, addr: addr, wbuf: wbuf}}
	co.next, co.stop = iter.Pull(func(yield func(uint8) bool) {
		co.conn.yield = yield
		defer func() {
			// A panic must not unwind into the loop, which every
			// other probe of the Monitor depends on.
			// Worded as Monitor.probe words a prober's panic on a
			// worker.
			if v := recover(); v != nil {
				co.panicked = v
				co.result = Result{Status: Fail, Kind: KindOther, Detail: fmt.Sprintf("prober panicked: %v", v)}
			}
		}()
		co.result = loopTLSExchange(h, &co.conn)
	})
	return co
}

// loopTLSExchange is the exchange a coroutine runs; a variable so that a
// test can make it panic.
var loopTLSExchange = (*HTTP).leanExchange

// resume runs the coroutine until it waits again or ends; it reports
// whether it ended (its verdict in co.result).
func (co *loopTLS) resume() bool {
	if co.done {
		return true
	}
	if _, ok := co.next(); ok {
		return false
	}
	co.done = true
	return true
}

// expire ends the coroutine on its deadline: every call it makes from now
// on fails with a timeout, so it reaches its verdict (the exchange's own
// wording of the timeout) when resumed.
func (co *loopTLS) expire() Result {
	co.conn.expired = true
	if !co.resume() {
		co.abandon() // cannot happen: an expired conn never waits
	}
	return co.result
}

// abandon ends the coroutine without resuming it for a verdict: its calls
// fail from then on and it runs to its end now.
func (co *loopTLS) abandon() {
	if !co.done {
		co.done = true
		co.conn.expired = true
		co.stop()
	}
}
