//go:build linux && (amd64 || arm64)

package dnsserver

import (
	"net"
	"net/netip"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"

	"github.com/gslbkit/gslb/internal/dnswire"
)

// The raw UDP loop. Go's network poller registers every socket for read and
// write readiness, edge-triggered; on a busy UDP socket each reply sent
// later raises a write-ready edge that wakes the poller for nothing, and
// each query that arrives alone costs a poller round trip. For the DNS
// server's one socket this loop takes the socket out of the poller and
// blocks in recvmmsg (MSG_WAITFORONE) on it directly, from one goroutine per
// usable CPU, and answers with sendmmsg: two system calls per batch of up
// to udpBatch datagrams and nothing else. A receive timeout lets the loops
// notice a stop even if no datagram arrives.

const (
	msgWaitForOne = 0x10000
	rawRecvTimout = 200 * time.Millisecond
	sockaddrLen   = 28 // sizeof(struct sockaddr_in6)
)

type mmsghdr struct {
	hdr syscall.Msghdr
	n   uint32
	_   [4]byte
}

// rawUDP is a UDP socket outside Go's poller.
type rawUDP struct {
	fd      int
	stopped atomic.Bool
}

// detachUDP takes conn's socket out of Go's poller: it duplicates the
// descriptor, closes conn (which unregisters it), and makes the duplicate
// blocking with a receive timeout.
func detachUDP(conn *net.UDPConn) (*rawUDP, error) {
	rc, err := conn.SyscallConn()
	if err != nil {
		return nil, err
	}
	fd := -1
	var dupErr error
	if err := rc.Control(func(s uintptr) { fd, dupErr = syscall.Dup(int(s)) }); err != nil {
		return nil, err
	}
	if dupErr != nil {
		return nil, dupErr
	}
	syscall.CloseOnExec(fd)
	conn.Close()
	tv := syscall.NsecToTimeval(rawRecvTimout.Nanoseconds())
	if err := syscall.SetsockoptTimeval(fd, syscall.SOL_SOCKET, syscall.SO_RCVTIMEO, &tv); err != nil {
		syscall.Close(fd)
		return nil, err
	}
	if err := syscall.SetNonblock(fd, false); err != nil {
		syscall.Close(fd)
		return nil, err
	}
	return &rawUDP{fd: fd}, nil
}

// stop makes the loops return (at once for blocked receives where the kernel
// wakes them on shutdown, else within the receive timeout).
func (r *rawUDP) stop() {
	r.stopped.Store(true)
	_ = syscall.Shutdown(r.fd, syscall.SHUT_RDWR)
}

// portableUDP makes serveUDPConn use the portable loop (for tests of that
// loop on Linux).
var portableUDP bool

// serveUDPConn serves conn with the raw loop, or with the portable batched
// loop if the socket cannot be detached. It returns when stop is closed.
func (s *Server) serveUDPConn(conn *net.UDPConn, stop <-chan struct{}) {
	if portableUDP {
		s.serveUDPPortable(conn, stop)
		return
	}
	r, err := detachUDP(conn)
	if err != nil {
		s.log.Warn("raw udp loop unavailable, using the portable loop", "err", err)
		s.serveUDPPortable(conn, stop)
		return
	}
	var wg sync.WaitGroup
	for range s.udpWorkers() {
		wg.Go(func() { s.rawLoop(r) })
	}
	<-stop
	r.stop()
	wg.Wait()
	syscall.Close(r.fd)
}

// yieldPeriod is how long the raw loop runs between two runtime.Gosched
// calls. The loop never blocks in Go, only in recvmmsg, so without a yield
// its goroutine keeps one scheduling slice for ever; once a slice has
// lasted 10 ms the runtime's monitor thread (sysmon) takes the P away from
// the blocked receive to preempt it, hands it to another thread, and goes
// back to polling every 20 µs. That polling, a wake-up and a sleep each
// time, cost about a fifth of the server's CPU at 30k queries/s. Yielding
// well within the 10 ms, by the clock (a count of receive calls stretches
// with the batch size: 64 calls took over 10 ms at 30k queries/s arriving
// in bursts), keeps sysmon at its 10 ms back-off.
const yieldPeriod = 4 * time.Millisecond

func (s *Server) rawLoop(r *rawUDP) {
	var cpu loopCPU
	co := newUDPCoalescer(s.cfg.UDPCoalesce, s.cfg.UDPCoalesceRate, cpu.read, s.stats.udpTrial)
	// The CPU count and the timer slack serve the pause only, which is
	// tried above the rate: below it (30,000 queries/s, say) their system
	// calls around each yield (gettid, clock_gettime, prctl) were a tenth
	// of the loop's.
	co.arm = func(on bool) {
		if on {
			setTimerSlack()
			cpu.resume()
		} else {
			cpu.suspend()
		}
	}
	var tally rcodeTally
	var (
		in    [udpBatch]mmsghdr
		out   [udpBatch]mmsghdr
		inIov [udpBatch]syscall.Iovec
		outIo [udpBatch]syscall.Iovec
		names [udpBatch][sockaddrLen]byte
		keep  [udpBatch][]byte
	)
	inBuf := make([]byte, udpBatch*dnswire.MaxUDP)
	outBuf := make([]byte, udpBatch*dnswire.MaxUDP)
	for i := range in {
		inIov[i].Base = &inBuf[i*dnswire.MaxUDP]
		inIov[i].SetLen(dnswire.MaxUDP)
		in[i].hdr.Iov = &inIov[i]
		in[i].hdr.Iovlen = 1
		in[i].hdr.Name = &names[i][0]
		out[i].hdr.Iov = &outIo[i]
		out[i].hdr.Iovlen = 1
	}
	lastYield := time.Now()
	for !r.stopped.Load() {
		if now := time.Now(); now.Sub(lastYield) >= yieldPeriod {
			// See yieldPeriod.
			lastYield = now
			if co.on {
				cpu.suspend()
			}
			runtime.Gosched()
			if co.on {
				setTimerSlack() // the goroutine may be on another thread now
				cpu.resume()
			}
		}
		for i := range in {
			in[i].hdr.Namelen = sockaddrLen
		}
		n, _, errno := syscall.Syscall6(sysRecvmmsg, uintptr(r.fd), uintptr(unsafe.Pointer(&in[0])), udpBatch, msgWaitForOne, 0, 0)
		if errno != 0 {
			if errno == syscall.EAGAIN || errno == syscall.EINTR || errno == syscall.ECONNREFUSED {
				continue
			}
			if !r.stopped.Load() {
				s.log.Debug("udp receive", "err", errno)
			}
			if errno == syscall.EBADF || errno == syscall.EINVAL {
				return
			}
			continue
		}
		if n == 0 {
			continue // shut down
		}
		k := 0
		var now time.Time
		if s.rrl != nil {
			now = time.Now()
		}
		for i := range int(n) {
			src, ok := sockaddrAddr(names[i][:in[i].hdr.Namelen])
			if !ok {
				continue
			}
			q := inBuf[i*dnswire.MaxUDP : i*dnswire.MaxUDP+int(in[i].n)]
			var reply []byte
			reply = s.answerUDP(q, outBuf[k*dnswire.MaxUDP:(k+1)*dnswire.MaxUDP:(k+1)*dnswire.MaxUDP], src)
			if s.rrl != nil {
				reply = s.limitUDP(now, src, reply)
			}
			if len(reply) == 0 {
				continue
			}
			tally.count(reply)
			keep[k] = reply
			outIo[k].Base = &reply[0]
			outIo[k].SetLen(len(reply))
			out[k].hdr.Name = &names[i][0]
			out[k].hdr.Namelen = in[i].hdr.Namelen
			k++
		}
		// Counted before sending: a client that has its reply finds it
		// in Stats.
		s.stats.add(&tally)
		for off := 0; off < k; {
			m, _, errno := syscall.Syscall6(sysSendmmsg, uintptr(r.fd), uintptr(unsafe.Pointer(&out[off])), uintptr(k-off), 0, 0, 0)
			if errno != 0 {
				if errno == syscall.EINTR || errno == syscall.EAGAIN {
					continue
				}
				if errno == syscall.EMSGSIZE {
					// Larger than the interface's MTU: send it truncated
					// rather than fragmented (see dontfrag.go).
					if tc := s.truncateTooBig(keep[off]); tc != nil {
						keep[off] = tc
						outIo[off].SetLen(len(tc))
						continue
					}
				}
				// Skip the datagram that failed (e.g. an unreachable
				// destination) and send the rest.
				off++
				continue
			}
			off += max(int(m), 1)
		}
		for i := range k {
			keep[i] = nil
		}
		if co.delay <= 0 {
			continue
		}
		if d := co.after(int(n), time.Now()); d > 0 {
			// A raw call: the runtime does not see this goroutine in a
			// system call, so its monitor thread neither hands the P away
			// nor wakes every 20 µs to check on it (another 8 % off the
			// CPU per query at saturation). The P is idle for the pause
			// anyway: this loop is all the work it has.
			ts := syscall.NsecToTimespec(d.Nanoseconds())
			syscall.RawSyscall(syscall.SYS_NANOSLEEP, uintptr(unsafe.Pointer(&ts)), 0, 0)
		}
	}
}

// loopCPU adds up the CPU time a loop's goroutine uses on the threads it
// runs on, from each thread's CPU clock (CLOCK_THREAD_CPUTIME_ID). The
// goroutine stays on its thread but at runtime.Gosched, and the loop
// suspends the count before that and resumes it after (while it counts:
// above the pause's rate, see udpCoalescer.arm). If the runtime
// moved the goroutine some other way (a preemption), a reading on the new
// thread, and the first reading after a stint that was lost that way, are
// reported as not good.
type loopCPU struct {
	used     time.Duration // over the threads before this one
	base     time.Duration // this thread's clock when the count resumed
	tid      int
	gaps     int // stints lost to a move
	gapsRead int // gaps at the last reading
}

const clockThreadCPUTimeID = 3

func threadCPUTime() time.Duration {
	var ts syscall.Timespec
	syscall.RawSyscall(syscall.SYS_CLOCK_GETTIME, clockThreadCPUTimeID, uintptr(unsafe.Pointer(&ts)), 0)
	return time.Duration(ts.Nano())
}

func (c *loopCPU) resume() {
	c.tid = syscall.Gettid()
	c.base = threadCPUTime()
}

func (c *loopCPU) suspend() {
	if syscall.Gettid() == c.tid {
		c.used += threadCPUTime() - c.base
	} else {
		c.gaps++
	}
	c.tid = 0
}

// read returns the CPU time used so far and whether it is good: taken on
// the thread the count resumed on, with no stint lost since the previous
// reading.
func (c *loopCPU) read() (time.Duration, bool) {
	ok := c.gaps == c.gapsRead
	c.gapsRead = c.gaps
	if syscall.Gettid() != c.tid {
		return c.used, false
	}
	return c.used + threadCPUTime() - c.base, ok
}

// setTimerSlack sets the calling thread's timer slack to 1 ns, so the
// loop's pauses (tens of microseconds) are not stretched by the default
// 50 µs slack.
func setTimerSlack() {
	const prSetTimerSlack = 29
	syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerSlack, 1, 0)
}

// sockaddrAddr reads the address of a raw sockaddr_in or sockaddr_in6.
func sockaddrAddr(b []byte) (netip.Addr, bool) {
	if len(b) < 2 {
		return netip.Addr{}, false
	}
	switch *(*uint16)(unsafe.Pointer(&b[0])) {
	case syscall.AF_INET:
		if len(b) < 8 {
			return netip.Addr{}, false
		}
		return netip.AddrFrom4([4]byte(b[4:8])), true
	case syscall.AF_INET6:
		if len(b) < 24 {
			return netip.Addr{}, false
		}
		return netip.AddrFrom16([16]byte(b[8:24])).Unmap(), true
	}
	return netip.Addr{}, false
}
