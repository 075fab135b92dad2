//go:build linux

package probe

import (
	"bufio"
	"io"
	"net"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// evLoopSupported reports whether this system has the event loop.
const evLoopSupported = true

// loopTick is the granularity of the loop's own wake-ups (the next due
// probe, the next deadline): they are rounded up to a multiple of it, so
// many due times and deadlines close together cost one wake-up. Sockets
// that become ready wake the loop at once whatever the tick.
const loopTick = time.Millisecond

// loopEvents is how many ready sockets one epoll_wait reports at most.
const loopEvents = 256

// loopScratch is the read buffer shared by every probe of a loop: a
// health check's reply usually fits it and is judged straight from it.
const loopScratch = 16 << 10

// loopSpareMax bounds each pool of idle sockets the loop keeps for reuse
// (see evLoop.recycle): more than the probes one wake-up starts at 10,000
// checks a second (the grain's 32 ms: 320).
const loopSpareMax = 1024

// loopSpareTrim is how often the loop closes the idle sockets that no probe
// took since the last time (see evLoop.trimSpare).
const loopSpareTrim = time.Second

// epollET is EPOLLET as the uint32 the event mask is.
const epollET uint32 = 1 << 31

// loopSockEvents is every probe socket's registration in the loop's epoll
// set, made once when the socket is opened and kept while it is reused:
// edge-triggered, so a socket reports each change once (the connect's
// outcome, the reply's arrival, the target's FIN), and the loop reads
// what it needs when told.
const loopSockEvents = syscall.EPOLLIN | syscall.EPOLLOUT | syscall.EPOLLRDHUP | epollET

// The phases of a probe in the loop.
const (
	loopFree       uint8 = iota // the slot is unused
	loopConnecting              // connect issued, waiting to be writable
	loopSending                 // connected, the request partly written
	loopReading                 // request written, reading the reply
	loopTLSRun                  // connected, the HTTPS exchange's coroutine runs
	loopClosing                 // judged; the socket waits for the target's FIN (see awaitFIN)
)

// loopFINWait is how long an HTTP check's socket is kept, once its reply
// is judged, for the target's FIN (see awaitFIN).
const loopFINWait = 10 * time.Millisecond

// evLoop runs probes over non-blocking sockets registered in one epoll
// set. Its epoll descriptor is itself watched by the Go runtime's poller
// (through an *os.File), so waiting parks the scheduler goroutine like any
// network read, with the file's read deadline as the timer. Only the
// scheduler goroutine calls its methods, except wake.
type evLoop struct {
	epfd  int
	f     *os.File // epfd, for the runtime's poller and deadlines
	rc    syscall.RawConn
	readF func(uintptr) bool // rc.Read's callback, made once
	wakeR int                // the wake pipe
	wakeW int

	// woken is set by wake until the loop sees the pipe; wmu orders wake
	// against close (a late wake must not write to a reused descriptor).
	woken  atomic.Bool
	wmu    sync.Mutex
	closed bool

	set time.Time // the read deadline on f now (zero: none)
	// The window of the current wait's wake-up (see wait and arm), and
	// whether the deadline was armed for it.
	lo, hi     time.Time
	has, armed bool
	evs        []syscall.EpollEvent
	nev        int
	slots      []loopProbe
	free       []int32
	// bySock holds, by socket descriptor, the slot of the probe the
	// socket serves, or -1: its epoll events name the descriptor (see
	// loopSockEvents), and an event for a socket no probe has (an idle
	// one, see recycle) is dropped.
	bySock []int32
	dl     []loopDL  // the probes in flight by deadline (see dlPush)
	dlBase time.Time // the first deadline pushed: dl's keys are offsets from it
	live   int
	buf    []byte         // loopScratch bytes
	st     *httpLeanState // the parser's scratch for status-only checks
	stb    *httpLeanState // and for checks that match the body
	rr     loopReplay
	done   []loopDone

	// The time spent in HTTPS coroutines (see loopTLSShare): since
	// tlsSince, and whether the last full window went over the share.
	tlsBusy  time.Duration
	tlsSince time.Time
	tlsFull  bool
	idleCos  []*loopTLS // coroutines for the next HTTPS checks (see tlsCo)

	// spare holds disconnected sockets, still in the epoll set, for the
	// next probes (see recycle), by address family (IPv4, IPv6) and by
	// whether they hold the handshake's last ACK back (holdACK, see
	// loopHoldACK).
	spare [2][2][]int32
	// spareLow is each pool's smallest size since spareAt: the sockets
	// below it were not needed since then.
	spareLow [2][2]int
	spareAt  time.Time
}

// loopProbe is one probe in flight: the loop's whole per-probe state.
type loopProbe struct {
	t        *monTarget
	lt       loopTarget
	co       *loopTLS // the HTTPS exchange, from connected on
	buf      []byte   // reply bytes kept while the verdict waits for more
	start    time.Time
	end      time.Time // the probe's deadline (the policy's timeout)
	deadline time.Time // the current phase's deadline
	gen      uint32    // the target's generation
	fd       int32
	hidx     int32 // index in the deadline heap
	sent     int32 // request bytes written
	phase    uint8
	readable bool // a read event came before the request was written
	// peerClosed: the target's FIN (or a hang-up) was seen, so every byte
	// it will send is in; the socket is then closed with a reset, which
	// spares the target a TIME_WAIT (see finish).
	peerClosed bool
}

// newEvLoop creates the epoll set and the wake pipe.
func newEvLoop() (_ *evLoop, err error) {
	epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return nil, os.NewSyscallError("epoll_create1", err)
	}
	p := [2]int{-1, -1}
	defer func() {
		if err != nil {
			for _, fd := range []int{epfd, p[0], p[1]} {
				if fd >= 0 {
					syscall.Close(fd)
				}
			}
		}
	}()
	if err := syscall.Pipe2(p[:], syscall.O_NONBLOCK|syscall.O_CLOEXEC); err != nil {
		return nil, os.NewSyscallError("pipe2", err)
	}
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(p[0])}
	if err := syscall.EpollCtl(epfd, syscall.EPOLL_CTL_ADD, p[0], &ev); err != nil {
		return nil, os.NewSyscallError("epoll_ctl", err)
	}
	if err := syscall.SetNonblock(epfd, true); err != nil {
		return nil, os.NewSyscallError("fcntl", err)
	}
	f := os.NewFile(uintptr(epfd), "probe-epoll")
	rc, err := f.SyscallConn()
	if err != nil {
		f.Close()
		epfd = -1 // closed with f
		return nil, err
	}
	lp := &evLoop{
		epfd: epfd, f: f, rc: rc, wakeR: p[0], wakeW: p[1],
		evs: make([]syscall.EpollEvent, loopEvents),
		buf: make([]byte, loopScratch),
		st:  &httpLeanState{br: bufio.NewReaderSize(nil, httpLeanHeadBufSize)},
		stb: &httpLeanState{br: bufio.NewReaderSize(nil, httpLeanBufSize), body: make([]byte, httpLeanBufSize)},
	}
	lp.readF = func(fd uintptr) bool {
		n := rawEpollWait(int(fd), lp.evs)
		lp.nev = n
		if n == 0 && !lp.armed {
			lp.arm() // about to park
		}
		return n > 0
	}
	return lp, nil
}

// wake makes the loop's current or next wait return; safe from any
// goroutine, and cheap when a wake is already pending.
func (lp *evLoop) wake() {
	if !lp.woken.CompareAndSwap(false, true) {
		return
	}
	lp.wmu.Lock()
	if !lp.closed {
		b := [1]byte{1}
		_, _ = syscall.Write(lp.wakeW, b[:])
	}
	lp.wmu.Unlock()
}

// close releases the descriptors and ends the idle HTTPS coroutines;
// probes still in flight must have been abandoned first.
func (lp *evLoop) close() {
	lp.stopTLS()
	for s := range lp.slots {
		if lp.slots[s].phase == loopClosing {
			lp.drop(int32(s))
		}
	}
	lp.closeSpare()
	lp.wmu.Lock()
	lp.closed = true
	lp.wmu.Unlock()
	_ = lp.f.Close()
	syscall.Close(lp.wakeR)
	syscall.Close(lp.wakeW)
}

// inFlight returns the number of probes in the loop.
func (lp *evLoop) inFlight() int { return lp.live }

// takeDone returns the probes finished since the last call; the slice is
// reused by the next call.
func (lp *evLoop) takeDone() []loopDone {
	d := lp.done
	lp.done = lp.done[:0]
	return d
}

// start opens the probe's socket and starts connecting; a probe that ends
// at once (no descriptor left, refused on the spot) lands in done.
func (lp *evLoop) start(j loopJob, now time.Time) {
	s := lp.alloc()
	p := &lp.slots[s]
	*p = loopProbe{t: j.t, lt: j.lt, buf: p.buf[:0], start: j.start, gen: j.gen, fd: -1, hidx: -1, phase: loopConnecting}
	p.end = j.start.Add(j.timeout)
	p.deadline = p.end
	if h := j.lt.http; h != nil {
		p.deadline = loopDeadline(p.end, j.start, h.cfg.ConnectTimeout)
	}
	if !now.Before(p.end) {
		// Dispatched, but the loop reached it only after its deadline.
		lp.finish(s, now, probeLate(now.Sub(p.end)))
		return
	}
	family := syscall.AF_INET
	if j.lt.addr.Addr().Is6() {
		family = syscall.AF_INET6
	}
	fd, reused := lp.takeSpare(j.lt)
	if !reused {
		var err *os.SyscallError
		if fd, err = lp.open(family, j.lt.holdACK); err != nil {
			if err.Err == syscall.EMFILE || err.Err == syscall.ENFILE {
				lp.closeSpare() // descriptors are short: give the idle ones back
			}
			r := lp.connectFailed(p, err)
			if err.Syscall == "epoll_ctl" {
				r.Kind = KindLocal // the loop's own epoll set is full or out of memory
			}
			lp.finish(s, now, r)
			return
		}
	}
	p.fd = int32(fd)
	lp.bySock[fd] = s
	err := loopConnect(fd, j.lt)
	if err != nil && err != syscall.EINPROGRESS {
		r := lp.connectFailed(p, os.NewSyscallError("connect", err))
		if err == syscall.ENETUNREACH || err == syscall.EHOSTUNREACH {
			r.Kind = KindLocal // connect itself failed: no route in this host's table
		}
		lp.finish(s, now, r)
		return
	}
	lp.dlPush(s)
	// Even when connect reported success at once, the writable event the
	// socket's registration reports moves the probe on: one path for both.
}

// open opens a socket for the loop's probes, adds it to the epoll set for
// good (see loopSockEvents) and, with hold, makes it hold the handshake's
// last ACK back (see loopHoldACK). The error names the call that failed.
func (lp *evLoop) open(family int, hold bool) (int, *os.SyscallError) {
	fd, err := rawSocket(family, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, syscall.IPPROTO_TCP)
	if err != nil {
		return -1, &os.SyscallError{Syscall: "socket", Err: err}
	}
	if hold {
		loopHoldACK(fd)
	}
	ev := syscall.EpollEvent{Events: loopSockEvents, Fd: int32(fd)}
	if err := rawEpollCtl(lp.epfd, syscall.EPOLL_CTL_ADD, fd, &ev); err != nil {
		rawClose(fd)
		return -1, &os.SyscallError{Syscall: "epoll_ctl", Err: err}
	}
	for fd >= len(lp.bySock) {
		lp.bySock = append(lp.bySock, -1)
	}
	return fd, nil
}

// loopHoldACK makes socket fd hold back the last ACK of each handshake it
// starts (see loopTarget.holdACK), for as long as it is open: it sets
// TCP_DEFER_ACCEPT, which the kernel reads, on a connecting socket, as
// TCP_QUICKACK off (Linux's tcp_rcv_synsent_state_process delays the ACK
// when either is set). Unlike TCP_QUICKACK, which the disconnect that
// recycles a socket clears, it survives the disconnect, so a reused socket
// needs no system call to hold its next ACK. TestLoopReusesSockets holds
// the kernel to it: no check of a reused socket is accepted by its
// target. Failing to set it is not an error: the check then completes the
// handshake.
func loopHoldACK(fd int) {
	rawSetsockoptInt(fd, syscall.IPPROTO_TCP, syscall.TCP_DEFER_ACCEPT, 1)
}

// loopConnect issues a non-blocking connect to lt.addr, with the socket
// address on the stack (syscall.Connect would allocate it per probe).
func loopConnect(fd int, lt loopTarget) error {
	var (
		ptr  unsafe.Pointer
		size uintptr
		sa4  syscall.RawSockaddrInet4
		sa6  syscall.RawSockaddrInet6
	)
	port := lt.addr.Port()
	if a := lt.addr.Addr(); a.Is4() {
		sa4.Family = syscall.AF_INET
		sa4.Addr = a.As4()
		pp := (*[2]byte)(unsafe.Pointer(&sa4.Port))
		pp[0], pp[1] = byte(port>>8), byte(port)
		ptr, size = unsafe.Pointer(&sa4), unsafe.Sizeof(sa4)
	} else {
		sa6.Family = syscall.AF_INET6
		sa6.Addr = a.As16()
		pp := (*[2]byte)(unsafe.Pointer(&sa6.Port))
		pp[0], pp[1] = byte(port>>8), byte(port)
		ptr, size = unsafe.Pointer(&sa6), unsafe.Sizeof(sa6)
	}
	for {
		_, _, e := syscall.RawSyscall(sysConnect, uintptr(fd), uintptr(ptr), size)
		switch e {
		case 0:
			return nil
		case syscall.EINTR:
			continue
		}
		return e
	}
}

// loopDisconnect dissolves fd's connection or connection attempt
// (connect with an AF_UNSPEC address), resetting an established one.
func loopDisconnect(fd int) syscall.Errno {
	sa := syscall.RawSockaddr{Family: syscall.AF_UNSPEC}
	for {
		_, _, e := syscall.RawSyscall(sysConnect, uintptr(fd), uintptr(unsafe.Pointer(&sa)), unsafe.Sizeof(sa))
		if e != syscall.EINTR {
			return e
		}
	}
}

// alloc returns a free slot's index.
func (lp *evLoop) alloc() int32 {
	lp.live++
	if n := len(lp.free); n > 0 {
		s := lp.free[n-1]
		lp.free = lp.free[:n-1]
		return s
	}
	lp.slots = append(lp.slots, loopProbe{})
	return int32(len(lp.slots) - 1)
}

// finish closes slot s's socket, frees the slot and records r.
func (lp *evLoop) finish(s int32, now time.Time, r Result) {
	p := &lp.slots[s]
	var panicked any
	if co := p.co; co != nil {
		panicked = co.panicked
		lp.endTLS(p) // ended already, unless the loop is giving up on it
	}
	lp.report(p, now, r, panicked)
	lp.drop(s)
}

// report records probe p's verdict r as of now.
func (lp *evLoop) report(p *loopProbe, now time.Time, r Result, panicked any) {
	r.Latency = now.Sub(p.start)
	lp.done = append(lp.done, loopDone{t: p.t, gen: p.gen, start: p.start, r: r, panicked: panicked})
}

// judged ends an HTTP check whose reply was judged: at once when the
// target has closed its side, else after awaitFIN.
func (lp *evLoop) judged(s int32, now time.Time, r Result) {
	if p := &lp.slots[s]; p.peerClosed || p.co != nil {
		lp.finish(s, now, r)
		return
	}
	lp.awaitFIN(s, now, r)
}

// awaitFIN records slot s's verdict r, and keeps its socket for up to
// loopFINWait for the target's FIN. An HTTP check asks the target to close
// (Connection: close), and it usually does right after its reply, but its
// FIN may come a moment after the reply was judged. Closing then would
// send a FIN first and leave the checker's side in TIME_WAIT for a minute
// (some checks in a hundred, on loopback), a new socket for the next
// check and the connection table fuller; once the FIN is in, the
// connection is reset and the socket reused instead, as when the FIN came
// with the reply. A target that keeps the connection open gets a FIN when
// the wait is over, as before. The slot holds the socket meanwhile; it is
// no longer a probe in flight.
func (lp *evLoop) awaitFIN(s int32, now time.Time, r Result) {
	p := &lp.slots[s]
	lp.report(p, now, r, nil)
	lp.live--
	p.t = nil
	p.phase = loopClosing
	p.deadline = now.Add(loopFINWait)
	lp.dlFix(p.hidx)
}

// drop closes slot s's socket and frees the slot.
func (lp *evLoop) drop(s int32) {
	p := &lp.slots[s]
	if p.fd >= 0 {
		lp.bySock[p.fd] = -1
		if p.lt.http == nil || p.peerClosed {
			// A connect-only check: reset rather than close (see TCP).
			// An HTTP(S) check whose target has closed its side (its FIN
			// seen, so nothing more can come): a reset too. A close would
			// send a FIN, and the target, having closed first, would
			// keep the connection in TIME_WAIT for a minute, one per
			// check (HAProxy resets its check connections likewise). A
			// target that has not closed gets a FIN, as before. The
			// reset comes from disconnecting the socket for reuse, or
			// else from closing it with SO_LINGER 0.
			if !lp.recycle(p) {
				rawSetLinger0(int(p.fd))
				rawClose(int(p.fd))
			}
		} else {
			rawClose(int(p.fd))
		}
	}
	if p.hidx >= 0 {
		lp.dlRemove(p.hidx)
	}
	lp.release(s)
}

// spareOf returns the pool of idle sockets for lt's probes and its
// low-water mark.
func (lp *evLoop) spareOf(lt loopTarget) (*[]int32, *int) {
	v6, hold := 0, 0
	if lt.addr.Addr().Is6() {
		v6 = 1
	}
	if lt.holdACK {
		hold = 1
	}
	return &lp.spare[v6][hold], &lp.spareLow[v6][hold]
}

// takeSpare returns an idle socket for a probe of lt, if the loop has one:
// the one idle the shortest time (the others may be closed by trimSpare).
func (lp *evLoop) takeSpare(lt loopTarget) (int, bool) {
	sp, low := lp.spareOf(lt)
	n := len(*sp)
	if n == 0 {
		return -1, false
	}
	fd := (*sp)[n-1]
	*sp = (*sp)[:n-1]
	*low = min(*low, n-1)
	return int(fd), true
}

// trimSpare closes, once every loopSpareTrim, the idle sockets no probe
// took since the last time (those below each pool's low-water mark), so
// the pools hold the descriptors the recent probes needed, not those of a
// past burst.
func (lp *evLoop) trimSpare(now time.Time) {
	if now.Sub(lp.spareAt) < loopSpareTrim {
		return
	}
	lp.spareAt = now
	for i := range lp.spare {
		for k := range lp.spare[i] {
			sp, low := &lp.spare[i][k], lp.spareLow[i][k]
			if low > 0 {
				for _, fd := range (*sp)[:low] {
					rawClose(int(fd))
				}
				*sp = append((*sp)[:0], (*sp)[low:]...)
			}
			lp.spareLow[i][k] = len(*sp)
		}
	}
}

// recycle resets probe p's connection by disconnecting its socket
// (connect with AF_UNSPEC: the kernel's tcp_disconnect sends the reset
// that a close with SO_LINGER 0 would, and leaves the socket unconnected)
// and keeps the socket, still in the epoll set, for a later probe, which
// then needs neither a new socket nor an epoll registration, nor a close:
// about a quarter of the kernel's work for a connect-only check. It reports
// false, leaving the socket alone, when the pool is full or the disconnect
// failed. The disconnect leaves an error pending on the socket
// (ECONNRESET); it is not read here (a getsockopt per check): the next
// connect clears it before its handshake starts (Linux's tcp_connect_init
// resets the socket's error), and until then the events the socket
// reports are dropped (no probe has it, see handle); once reused, it
// reports its new connection's state, which epoll reads when it hands the
// event over. TestLoopReusesSockets checks that a reused socket's next
// check passes, after a pass and after a refusal.
func (lp *evLoop) recycle(p *loopProbe) bool {
	sp, _ := lp.spareOf(p.lt)
	if len(*sp) >= loopSpareMax {
		return false
	}
	if loopDisconnect(int(p.fd)) != 0 {
		return false
	}
	*sp = append(*sp, p.fd)
	p.fd = -1
	return true
}

// closeSpare closes every idle socket.
func (lp *evLoop) closeSpare() {
	for i := range lp.spare {
		for k, sp := range lp.spare[i] {
			for _, fd := range sp {
				rawClose(int(fd))
			}
			lp.spare[i][k], lp.spareLow[i][k] = nil, 0
		}
	}
}

// release frees slot s, keeping a small reply buffer.
func (lp *evLoop) release(s int32) {
	p := &lp.slots[s]
	if p.phase != loopClosing {
		lp.live--
	}
	buf := p.buf
	if cap(buf) > httpLeanBufSize {
		buf = nil
	}
	*p = loopProbe{buf: buf[:0], fd: -1, hidx: -1}
	lp.free = append(lp.free, s)
}

// abandon closes every probe in flight without a verdict (Run is
// stopping); each lands in done with a zero Result.
func (lp *evLoop) abandon() {
	for s := range lp.slots {
		p := &lp.slots[s]
		if p.phase == loopFree {
			continue
		}
		if p.phase == loopClosing {
			lp.drop(int32(s)) // its verdict is out already
			continue
		}
		if p.co != nil {
			lp.endTLS(p)
		}
		if p.fd >= 0 {
			lp.bySock[p.fd] = -1
			rawClose(int(p.fd))
		}
		lp.done = append(lp.done, loopDone{t: p.t, gen: p.gen, start: p.start})
		lp.release(int32(s))
	}
	lp.dl = lp.dl[:0]
}

// next returns the earliest deadline of a probe in flight.
func (lp *evLoop) next() (time.Time, bool) {
	if len(lp.dl) == 0 {
		return time.Time{}, false
	}
	return lp.slots[lp.dl[0].s].deadline, true
}

// settle ends every probe whose deadline has passed, after first reading
// the events that are already waiting: when the loop itself was held up
// (a loaded machine, a long GC pause), a probe whose connect or reply has
// arrived meanwhile gets that verdict, not a timeout it did not earn. A
// timeout blamed on the target for the prober's own delay is a false
// failover in the making.
func (lp *evLoop) settle(now time.Time) {
	if until, has := lp.next(); has && !until.After(now) {
		lp.wait(now, now, now, true)
	}
	lp.expire(now)
	lp.trimSpare(now)
}

// expire ends every probe whose deadline has passed.
func (lp *evLoop) expire(now time.Time) {
	for len(lp.dl) > 0 {
		s := lp.dl[0].s
		p := &lp.slots[s]
		if p.deadline.After(now) {
			return
		}
		if p.phase == loopClosing {
			lp.drop(s) // no FIN came: close with one
			continue
		}
		lp.finish(s, now, lp.timedOut(p))
	}
}

// timedOut is the verdict on a probe whose phase ran out of time, worded
// as the goroutine path's.
func (lp *evLoop) timedOut(p *loopProbe) Result {
	switch p.phase {
	case loopSending:
		return httpFailed("write request", lp.opError(p, "write", os.ErrDeadlineExceeded))
	case loopReading:
		h := p.lt.http
		r, _ := h.loopVerdict(lp.state(h), &lp.rr, p.buf, lp.opError(p, "read", os.ErrDeadlineExceeded))
		return r
	case loopTLSRun:
		t0 := time.Now()
		r := p.co.expire()
		lp.tlsBusy += time.Since(t0)
		return r
	}
	return lp.connectFailed(p, os.ErrDeadlineExceeded)
}

// connectFailed is the verdict on a connect that failed with err. An
// unreachable error is classified by the caller, which knows where it came
// from, so no route lookup is made here.
func (lp *evLoop) connectFailed(p *loopProbe, err error) Result {
	e := lp.opError(p, "dial", err)
	k := KindNetwork
	if !probeUnreachable(e) {
		k = KindOf(e)
	}
	return Result{Status: Fail, Kind: k, Detail: "connect: " + e.Error()}
}

// opError wraps err as package net would report it.
func (lp *evLoop) opError(p *loopProbe, op string, err error) error {
	return &net.OpError{Op: op, Net: "tcp", Addr: net.TCPAddrFromAddrPort(p.lt.addr), Err: err}
}

// wait waits for sockets to become ready or, when has, until a wake-up
// within [lo, hi], whichever comes first, and handles the ready sockets. It
// returns at once after a wake, and polls without waiting when lo has
// passed.
//
// The read deadline on f, the runtime's timer, is set only when the loop
// is about to park (readF found nothing ready; usually sockets are ready at
// once after probes start) and kept while it lies within the window: the
// runtime keeps a timer moved later at its old place until that passes,
// and wakes there for nothing.
func (lp *evLoop) wait(now, lo, hi time.Time, has bool) {
	lp.nev = 0
	if has && !lo.After(now) {
		lp.nev = rawEpollWait(lp.epfd, lp.evs)
	} else {
		lp.lo, lp.hi, lp.has, lp.armed = lo, hi, has, false
		if !lp.set.IsZero() && !lp.set.After(now) {
			// Passed: the runtime fails every read until the deadline
			// changes. Clearing it is cheap once it has fired.
			_ = lp.f.SetReadDeadline(time.Time{})
			lp.set = time.Time{}
		}
		_ = lp.rc.Read(lp.readF)
	}
	if lp.nev == 0 {
		return
	}
	now = time.Now()
	for i := range lp.evs[:lp.nev] {
		lp.handle(lp.evs[i], now)
	}
}

// arm sets the read deadline for a loop about to park on wait's window
// (see loopWakeAt), unless the one set already lies within it.
func (lp *evLoop) arm() {
	lp.armed = true
	var dl time.Time
	if lp.has {
		if !lp.set.IsZero() && !lp.set.Before(lp.lo) && !lp.set.After(lp.hi) {
			return
		}
		dl = loopWakeAt(time.Now(), lp.lo, lp.hi)
	}
	if !dl.Equal(lp.set) {
		_ = lp.f.SetReadDeadline(dl)
		lp.set = dl
	}
}

// handle moves one probe on after an epoll event.
func (lp *evLoop) handle(ev syscall.EpollEvent, now time.Time) {
	if int(ev.Fd) == lp.wakeR {
		lp.woken.Store(false)
		var b [64]byte
		for {
			if n, err := rawRead(lp.wakeR, b[:]); n <= 0 || err != nil {
				break
			}
		}
		return
	}
	fd := int(ev.Fd)
	if fd < 0 || fd >= len(lp.bySock) || lp.bySock[fd] < 0 {
		return // an idle socket's: its last probe's reset, say
	}
	s := lp.bySock[fd]
	p := &lp.slots[s]
	if p.phase == loopFree {
		return
	}
	const errs = syscall.EPOLLERR | syscall.EPOLLHUP
	if ev.Events&(syscall.EPOLLIN|syscall.EPOLLRDHUP|errs) != 0 {
		p.readable = true
	}
	if ev.Events&(syscall.EPOLLRDHUP|syscall.EPOLLHUP) != 0 {
		p.peerClosed = true
	}
	switch p.phase {
	case loopConnecting:
		if ev.Events&(syscall.EPOLLOUT|errs) == 0 {
			return
		}
		if e := loopConnectErr(ev.Events, int(p.fd)); e != 0 {
			r := lp.connectFailed(p, os.NewSyscallError("connect", e))
			if e == syscall.ENETUNREACH || e == syscall.EHOSTUNREACH {
				r.Kind = KindNetwork // reported after the SYN went out: the network's answer
			}
			lp.finish(s, now, r)
			return
		}
		lp.connected(s, now)
	case loopSending:
		if ev.Events&(syscall.EPOLLOUT|errs) != 0 {
			lp.send(s, now)
		}
	case loopReading:
		lp.read(s, now)
	case loopTLSRun:
		lp.resumeTLS(s)
	case loopClosing:
		if p.peerClosed || ev.Events&errs != 0 {
			lp.drop(s) // the FIN (or a reset) came: reset, and reuse the socket
		}
	}
}

// loopSoError reads a socket's pending error (SO_ERROR); a variable so
// that tests can count the calls.
var loopSoError = rawSoError

// loopConnectErr returns how the non-blocking connect of fd ended, given
// the epoll events that reported it (writable, or an error or hang-up). A
// writable socket with neither error nor hang-up is connected (the kernel
// reports EPOLLOUT on a TCP socket only once the handshake completed, and
// EPOLLERR whenever an error is pending), so only a socket with one of
// them costs a getsockopt: one system call per probe less, as in
// HAProxy's connect check.
func loopConnectErr(events uint32, fd int) syscall.Errno {
	if events&(syscall.EPOLLERR|syscall.EPOLLHUP) == 0 {
		return 0
	}
	return loopSoError(fd)
}

// connected ends a connect-only check, or starts an HTTP exchange.
func (lp *evLoop) connected(s int32, now time.Time) {
	p := &lp.slots[s]
	h := p.lt.http
	if h == nil {
		lp.finish(s, now, Result{Status: Pass, Detail: "connected"})
		return
	}
	p.deadline = loopDeadline(p.end, now, h.cfg.ResponseTimeout)
	lp.dlFix(p.hidx)
	if h.useTLS {
		p.phase = loopTLSRun
		p.co = lp.tlsCo(h, int(p.fd), p.lt.addr, p.readable)
		lp.resumeTLS(s)
		return
	}
	p.phase = loopSending
	lp.send(s, now)
}

// resumeTLS runs slot s's HTTPS coroutine until it waits for the socket
// again, or finishes the probe with its verdict. The verdict's time is
// taken after the coroutine ran: a handshake's CPU is part of the probe.
func (lp *evLoop) resumeTLS(s int32) {
	p := &lp.slots[s]
	t0 := time.Now()
	ended := p.co.resume()
	t1 := time.Now()
	lp.tlsBusy += t1.Sub(t0)
	if ended {
		lp.finish(s, t1, p.co.result)
	}
}

// loopTLSShare is the share of its time the loop may spend in HTTPS
// coroutines, as a fraction of loopTLSWindow, before HTTPS checks go to
// the workers, which spread over the cores; with one P there is no other
// core and the loop takes them all.
const (
	loopTLSShare  = 0.5
	loopTLSWindow = 100 * time.Millisecond
)

// tlsRoom reports whether the loop takes more HTTPS checks: with one P,
// always; else unless it spent more than loopTLSShare of the last whole
// window in HTTPS coroutines.
func (lp *evLoop) tlsRoom(now time.Time) bool {
	if el := now.Sub(lp.tlsSince); el >= loopTLSWindow {
		lp.tlsFull = runtime.GOMAXPROCS(0) > 1 && float64(lp.tlsBusy) > loopTLSShare*float64(el)
		lp.tlsBusy, lp.tlsSince = 0, now
	}
	return !lp.tlsFull
}

// send writes what is left of the request; once it is all written the
// probe waits for the reply.
func (lp *evLoop) send(s int32, now time.Time) {
	p := &lp.slots[s]
	req := p.lt.http.req
	for int(p.sent) < len(req) {
		n, err := rawWrite(int(p.fd), req[p.sent:])
		if n > 0 {
			p.sent += int32(n)
		}
		switch {
		case err == syscall.EAGAIN:
			return // the next writable event resumes it
		case err == syscall.EINTR:
		case err != nil:
			lp.finish(s, now, httpFailed("write request", lp.opError(p, "write", os.NewSyscallError("write", err))))
			return
		}
	}
	p.phase = loopReading
	if p.readable {
		lp.read(s, now)
	}
}

// read reads what the socket has and judges the reply so far.
func (lp *evLoop) read(s int32, now time.Time) {
	p := &lp.slots[s]
	h := p.lt.http
	data := append(lp.buf[:0], p.buf...)
	for {
		if len(data) == cap(data) {
			if len(data) >= loopMaxReply(h) {
				lp.finish(s, now, loopTooLong())
				return
			}
			data = append(data, 0)[:len(data)]
		}
		n, err := rawRead(int(p.fd), data[len(data):cap(data)])
		if n > 0 {
			data = data[:len(data)+n]
			if r, ok := h.loopVerdict(lp.state(h), &lp.rr, data, nil); ok {
				lp.judged(s, now, r)
				return
			}
			continue
		}
		var end error
		switch {
		case err == syscall.EAGAIN:
			p.buf = append(p.buf[:0], data...)
			return
		case err == syscall.EINTR:
			continue
		case err == nil:
			end = io.EOF
			p.peerClosed = true
		default:
			end = lp.opError(p, "read", os.NewSyscallError("read", err))
		}
		r, _ := h.loopVerdict(lp.state(h), &lp.rr, data, end)
		lp.finish(s, now, r)
		return
	}
}

// state returns the parser scratch for h's replies.
func (lp *evLoop) state(h *HTTP) *httpLeanState {
	if len(h.segs) > 0 {
		return lp.stb
	}
	return lp.st
}

// loopDL is an entry of the loop's deadline heap: a probe's slot and its
// current deadline, as an offset from evLoop.dlBase, so that a sift
// compares entries without reading the probes' slots.
type loopDL struct {
	key int64
	s   int32
}

// The deadline heap: a 4-ary min-heap of the probes in flight by deadline
// (ties in any order); each probe's slot records its index (hidx). Most
// probes have the same timeout, so a new one sorts last and its push stops
// at once, and a probe that ends (usually among the oldest) is replaced by
// the last entry, which sifts down: four children a level halve the levels
// a binary heap would cross.

// dlKey returns slot s's deadline as a key of the heap.
func (lp *evLoop) dlKey(s int32) int64 {
	d := lp.slots[s].deadline
	if lp.dlBase.IsZero() {
		lp.dlBase = d
	}
	return int64(d.Sub(lp.dlBase))
}

// dlPush adds slot s, by its deadline.
func (lp *evLoop) dlPush(s int32) {
	i := len(lp.dl)
	lp.dl = append(lp.dl, loopDL{key: lp.dlKey(s), s: s})
	lp.slots[s].hidx = int32(i)
	lp.dlUp(i)
}

// dlRemove takes out the entry at i.
func (lp *evLoop) dlRemove(i32 int32) {
	i, n := int(i32), len(lp.dl)-1
	lp.slots[lp.dl[i].s].hidx = -1
	if i != n {
		lp.dlSet(i, lp.dl[n])
	}
	lp.dl = lp.dl[:n]
	if i < n && !lp.dlDown(i) {
		lp.dlUp(i)
	}
}

// dlFix moves the entry at i to its place after its slot's deadline
// changed.
func (lp *evLoop) dlFix(i32 int32) {
	i := int(i32)
	lp.dl[i].key = lp.dlKey(lp.dl[i].s)
	if !lp.dlDown(i) {
		lp.dlUp(i)
	}
}

// dlSet places x at i and records the index in its slot.
func (lp *evLoop) dlSet(i int, x loopDL) {
	lp.dl[i] = x
	lp.slots[x.s].hidx = int32(i)
}

func (lp *evLoop) dlUp(i int) {
	x := lp.dl[i]
	start := i
	for i > 0 {
		p := (i - 1) / 4
		if x.key >= lp.dl[p].key {
			break
		}
		lp.dlSet(i, lp.dl[p])
		i = p
	}
	if i != start {
		lp.dlSet(i, x)
	}
}

// dlDown sifts the entry at i0 toward the leaves and reports whether it
// moved.
func (lp *evLoop) dlDown(i0 int) bool {
	i, n := i0, len(lp.dl)
	x := lp.dl[i]
	for {
		c := 4*i + 1
		if c >= n {
			break
		}
		end := min(c+4, n)
		for k := c + 1; k < end; k++ {
			if lp.dl[k].key < lp.dl[c].key {
				c = k
			}
		}
		if lp.dl[c].key >= x.key {
			break
		}
		lp.dlSet(i, lp.dl[c])
		i = c
	}
	if i != i0 {
		lp.dlSet(i, x)
	}
	return i > i0
}

// The loop's system calls. Every socket is non-blocking, so each call
// returns at once; they are made with RawSyscall, which does not tell the
// runtime a call is in progress. With Syscall a call slower than 20 µs (a
// loopback connect, which runs the handshake inline, often is) lets the
// runtime's monitor hand the goroutine's P to another thread, and keeps
// that monitor polling every 20 µs: at thousands of probes a second the
// hand-offs and the polling cost more than the probes.

func rawSocket(family, typ, proto int) (int, error) {
	fd, _, e := syscall.RawSyscall(sysSocket, uintptr(family), uintptr(typ), uintptr(proto))
	if e != 0 {
		return -1, e
	}
	return int(fd), nil
}

func rawSetsockoptInt(fd, level, opt, v int) {
	x := int32(v)
	syscall.RawSyscall6(sysSetsockopt, uintptr(fd), uintptr(level), uintptr(opt), uintptr(unsafe.Pointer(&x)), 4, 0)
}

// rawSetLinger0 sets SO_LINGER to on, 0 s: close then resets the
// connection.
func rawSetLinger0(fd int) {
	l := syscall.Linger{Onoff: 1, Linger: 0}
	syscall.RawSyscall6(sysSetsockopt, uintptr(fd), syscall.SOL_SOCKET, syscall.SO_LINGER, uintptr(unsafe.Pointer(&l)), unsafe.Sizeof(l), 0)
}

func rawSoError(fd int) syscall.Errno {
	var v int32
	l := uint32(4)
	_, _, e := syscall.RawSyscall6(sysGetsockopt, uintptr(fd), syscall.SOL_SOCKET, syscall.SO_ERROR, uintptr(unsafe.Pointer(&v)), uintptr(unsafe.Pointer(&l)), 0)
	if e != 0 {
		return e
	}
	return syscall.Errno(v)
}

func rawEpollCtl(epfd, op, fd int, ev *syscall.EpollEvent) error {
	_, _, e := syscall.RawSyscall6(syscall.SYS_EPOLL_CTL, uintptr(epfd), uintptr(op), uintptr(fd), uintptr(unsafe.Pointer(ev)), 0, 0)
	if e != 0 {
		return e
	}
	return nil
}

func rawEpollWait(epfd int, evs []syscall.EpollEvent) int {
	n, _, e := syscall.RawSyscall6(syscall.SYS_EPOLL_PWAIT, uintptr(epfd), uintptr(unsafe.Pointer(&evs[0])), uintptr(len(evs)), 0, 0, 0)
	if e != 0 {
		return 0
	}
	return int(n)
}

func rawRead(fd int, p []byte) (int, error) {
	n, _, e := syscall.RawSyscall(syscall.SYS_READ, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

func rawWrite(fd int, p []byte) (int, error) {
	n, _, e := syscall.RawSyscall(syscall.SYS_WRITE, uintptr(fd), uintptr(unsafe.Pointer(unsafe.SliceData(p))), uintptr(len(p)))
	if e != 0 {
		return 0, e
	}
	return int(n), nil
}

func rawClose(fd int) { syscall.RawSyscall(syscall.SYS_CLOSE, uintptr(fd), 0, 0) }
