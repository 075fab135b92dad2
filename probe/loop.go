package probe

import (
	"errors"
	"io"
	"net/netip"
	"time"
)

// The event loop runs the commonest checks without a worker goroutine each:
// HTTP and HTTPS checks (the lean engine, a body match within a MatchWindow
// of at most loopMaxWindow bytes; an HTTPS exchange runs in a coroutine, see
// loop_tls_linux.go) and TCP connect-only checks, to an IP address. On Linux a
// Monitor's scheduler goroutine drives them itself over non-blocking
// sockets and one epoll set, which the Go runtime's poller watches like any
// other descriptor: a probe in flight is a small record instead of a
// goroutine with its stack, and one wake-up serves every socket that became
// ready. Everything else (and every check on other systems, or with
// MonitorConfig.NoEventLoop) runs on the worker goroutines. The loop reads
// replies with the lean engine's parser (loopVerdict), so both paths judge
// the same bytes the same way; FuzzLoopVerdict holds them to it.

// loopTarget is what the event loop needs to run one probe: the address
// and, for HTTP, the prober that built the request and judges the reply.
type loopTarget struct {
	addr netip.AddrPort
	http *HTTP // nil: a TCP connect-only check
	tcp  *TCP
	// holdACK: the socket holds the handshake's last ACK back (see
	// loopHoldACK): a connect-only check resets the connection first (the
	// target never accepts it), an HTTP(S) check's first write carries it
	// (the target's kernel then hands the connection over with the
	// request in: one segment and one wake-up of the target fewer, as
	// HAProxy's checks do).
	holdACK bool
}

// loopAddr returns the IP address and port a prober dialling hostport
// could be probed at by the event loop, or the zero value: a host name (the
// resolver runs on a goroutine) or an address with a zone.
func loopAddr(hostport string) netip.AddrPort {
	ap, err := netip.ParseAddrPort(hostport)
	if err != nil || ap.Addr().Zone() != "" || ap.Port() == 0 {
		return netip.AddrPort{}
	}
	// An IPv4-mapped IPv6 address is dialled as IPv4, as package net does.
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
}

// loopTargetOf reports whether the event loop can run p's probes and how.
func loopTargetOf(p Prober) (loopTarget, bool) {
	switch p := p.(type) {
	case *HTTP:
		if p.loop.IsValid() {
			return loopTarget{addr: p.loop, http: p, holdACK: true}, true
		}
	case *TCP:
		if p.loop.IsValid() {
			return loopTarget{addr: p.loop, tcp: p, holdACK: !p.completeHandshake}, true
		}
	}
	return loopTarget{}, false
}

// loopRef is what a target's record keeps of loopTargetOf(its prober), so
// that dispatching a check to the event loop reads nothing of the prober:
// at 100,000 targets every prober is a cache miss, and a connect-only check
// needs nothing else of it. The address takes 18 bytes (a netip.AddrPort
// takes 32); the prober pointer comes from the record's interface value.
type loopRef struct {
	ip    [16]byte // an IPv4 address in its IPv4-mapped form
	port  uint16
	flags uint8 // loopRefOK, loopRefV4, loopRefHold, loopRefTLS
}

// The flags of a loopRef.
const (
	loopRefOK   uint8 = 1 << iota // the event loop runs the prober's checks
	loopRefV4                     // ip is an IPv4 address
	loopRefHold                   // loopTarget.holdACK
	loopRefTLS                    // an HTTPS check (see evLoop.tlsRoom)
)

// loopRefOf returns the loopRef of prober p.
func loopRefOf(p Prober) loopRef {
	lt, ok := loopTargetOf(p)
	if !ok {
		return loopRef{}
	}
	a := lt.addr.Addr()
	r := loopRef{ip: a.As16(), port: lt.addr.Port(), flags: loopRefOK}
	if a.Is4() {
		r.flags |= loopRefV4
	}
	if lt.holdACK {
		r.flags |= loopRefHold
	}
	if lt.http != nil && lt.http.useTLS {
		r.flags |= loopRefTLS
	}
	return r
}

// target returns loopTargetOf(p), p being the prober r was made from,
// reading only p's interface value.
func (r loopRef) target(p Prober) (loopTarget, bool) {
	if r.flags&loopRefOK == 0 {
		return loopTarget{}, false
	}
	a := netip.AddrFrom16(r.ip)
	if r.flags&loopRefV4 != 0 {
		a = a.Unmap()
	}
	lt := loopTarget{addr: netip.AddrPortFrom(a, r.port), holdACK: r.flags&loopRefHold != 0}
	switch p := p.(type) {
	case *HTTP:
		lt.http = p
	case *TCP:
		lt.tcp = p
	}
	return lt, true
}

// loopReplay is the reader the event loop parses a reply through: the
// bytes received so far, then end (the error or io.EOF that ended the
// stream), or, while the connection is still open, errLoopStarved.
type loopReplay struct {
	data    []byte
	end     error
	starved bool
}

// errLoopStarved is returned by loopReplay when the parser wants bytes not
// received yet; the verdict is then left for the next read.
var errLoopStarved = errors.New("probe: reply incomplete")

func (r *loopReplay) Read(p []byte) (int, error) {
	if len(r.data) > 0 {
		n := copy(p, r.data)
		r.data = r.data[n:]
		return n, nil
	}
	if r.end != nil {
		return 0, r.end
	}
	r.starved = true
	return 0, errLoopStarved
}

// loopVerdict judges the reply bytes received so far with the lean
// engine's parser. end is nil while the connection is open (more bytes may
// come), else why the stream ended (io.EOF for an orderly close). ok is
// false when the bytes do not decide yet. st and rr are the caller's
// scratch. Replaying all the bytes from the start on each call keeps the
// parser the lean engine's, unchanged; a reply usually arrives in one read.
func (h *HTTP) loopVerdict(st *httpLeanState, rr *loopReplay, data []byte, end error) (r Result, ok bool) {
	*rr = loopReplay{data: data, end: end}
	st.br.Reset(rr)
	r = st.exchange(h)
	st.br.Reset(nil)
	st.m.reset(nil)
	if cap(st.line) > httpLeanBufSize || cap(st.cont) > httpLeanBufSize {
		st.line, st.cont = nil, nil
	}
	if rr.starved {
		return Result{}, false
	}
	return r, true
}

// loopMaxWindow is the largest MatchWindow of an HTTP check the event loop
// runs: it keeps a reply's bytes until the verdict, and a body match with
// no window (the whole body) or a large one goes to a worker, which reads
// through a fixed buffer instead.
const loopMaxWindow = 16 << 10

// loopMaxReply bounds the bytes the loop keeps for one reply of h. The
// parser decides within httpMaxHeaderBytes of header lines (interim
// responses and trailers included), then, when it matches the body, within
// the window's bytes of body plus the chunk framing the chunked decoder
// allows (at most 16 KiB beyond 16 bytes and twice the size per chunk, so
// about 18 bytes per body byte in one-byte chunks). Beyond the bound the
// reply is a protocol error; only a reply built to exceed it is judged
// otherwise than by a worker.
func loopMaxReply(h *HTTP) int {
	return 2*httpMaxHeaderBytes + 32*h.window + 32<<10
}

// loopTooLong is the verdict on a reply that passed loopMaxReply undecided.
func loopTooLong() Result {
	return Result{Status: Fail, Kind: KindProtocol, Detail: "read response: response headers too long"}
}

var _ io.Reader = (*loopReplay)(nil)

// loopJob is a probe the scheduler hands to the loop.
type loopJob struct {
	t       *monTarget
	lt      loopTarget
	start   time.Time
	timeout time.Duration
	gen     uint32
}

// loopDone is a probe the loop finished (or abandoned, with no result).
type loopDone struct {
	t        *monTarget
	start    time.Time
	r        Result
	gen      uint32
	panicked any // the panic an HTTPS coroutine ended with, to log
}

// monLoopRunning is the cancel function of a target whose probe runs in
// the event loop: it marks the probe in flight (TargetStats.InFlight); the
// loop cannot be interrupted from outside, so a removed or updated target's
// probe ends at its own deadline and its result is dropped.
func monLoopRunning() {}

// loopWakeMargin is how far past a whole number of milliseconds from the
// moment it parks the loop sets its wake-up (see loopWakeAt): more than the
// few microseconds the runtime takes to go to sleep after, less than the
// tens it oversleeps an epoll timeout by.
const loopWakeMargin = 40 * time.Microsecond

// loopWakeAt returns when a loop parking at now should wake to act within
// [lo, hi]: the latest instant of the window that lies loopWakeMargin past
// a whole number (at least one) of milliseconds from now, else the first
// such instant after lo. The Go runtime sleeps for its timers in whole
// milliseconds (epoll's timeout), rounded down, and sleeps again when it
// woke before the timer: a wake-up just past a whole millisecond costs one
// sleep instead of two. Waking as late as the window allows lets the probes
// due within one grain (see monGrain) start after one wake-up.
func loopWakeAt(now, lo, hi time.Time) time.Time {
	const ms = time.Millisecond
	k := (hi.Sub(now) - loopWakeMargin) / ms
	if k < 1 {
		k = 1
	}
	w := now.Add(k*ms + loopWakeMargin)
	if w.Before(lo) {
		k = (lo.Sub(now) - loopWakeMargin + ms - 1) / ms
		w = now.Add(k*ms + loopWakeMargin)
	}
	return w
}

// loopDeadline returns the earlier of a and start+d (d 0 = no such bound).
func loopDeadline(a, start time.Time, d time.Duration) time.Time {
	if d > 0 {
		if b := start.Add(d); b.Before(a) {
			return b
		}
	}
	return a
}
