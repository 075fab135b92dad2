package probe

import (
	"context"
	"errors"
	"io"
	"net"
	"net/netip"
	"sync"
	"syscall"
	"time"

	"github.com/gslbkit/gslb/internal/hostport"
)

// TCPConfig configures a TCP prober. JSON names follow Envoy Gateway's TCP
// health checker (send, receive) and overrides.port. The zero value is a
// valid connect-only check.
type TCPConfig struct {
	// Send, when not nil, is written once the connection is up.
	Send *Payload `json:"send,omitempty"`
	// Receive are segments that must arrive in order (not necessarily
	// contiguous) for the probe to pass. Empty means connect-only (after
	// sending Send, if set). JSON: one payload object or a list.
	Receive Segments `json:"receive,omitempty"`
	// Port, when not 0, replaces the target's port; 1–65535.
	Port int `json:"port,omitempty"`
	// CompleteHandshake applies to connect-only checks (no Send, no
	// Receive). When false (the default) a check ends as soon as the
	// target's SYN-ACK arrives, with a reset instead of the handshake's
	// last ACK, as HAProxy's connect-only checks do: the target's kernel
	// answered, so the port is open, and its application never accepts a
	// connection that only a health check made. On Linux this works by
	// asking the kernel to hold the ACK back (TCP_QUICKACK off before
	// connecting, or TCP_DEFER_ACCEPT on the sockets the Monitor's event
	// loop reuses); elsewhere the handshake always completes. Set it to
	// complete the handshake (then reset) for a target that should see
	// its checks' connections.
	CompleteHandshake bool `json:"completeHandshake,omitempty"`
}

// DefaultTCPConfig returns a connect-only check.
func DefaultTCPConfig() TCPConfig { return TCPConfig{} }

// ErrTCPConfig is wrapped by every TCPConfig validation error (a
// *FieldError).
var ErrTCPConfig = errors.New("probe: invalid tcp config")

// Validate checks the payloads and the port; errors are *FieldErrors.
func (c TCPConfig) Validate() error {
	if c.Send != nil {
		if err := c.Send.validate(ErrTCPConfig, "send"); err != nil {
			return err
		}
	}
	if _, err := c.Receive.decode(ErrTCPConfig, "receive"); err != nil {
		return err
	}
	if c.Port < 0 || c.Port > 65535 {
		return fieldErr(ErrTCPConfig, "port", c.Port, "[1, 65535], or 0 for the target's port")
	}
	return nil
}

// TCP is a TCP prober, classified by Envoy's rules 6–8:
//
//   - connect error, refusal or timeout → Fail;
//   - connect-only (no Send, no Receive): the SYN-ACK → Pass, closed at
//     once with a reset (SO_LINGER 0) before the handshake's last ACK, as
//     HAProxy does, so the target's application never accepts it and no
//     TIME_WAIT is left behind (see TCPConfig.CompleteHandshake);
//   - with Receive: all segments in order → Pass; the peer closing first →
//     Fail (KindReset, an unexpected close); data that does not match is not
//     itself a failure: the prober keeps reading until the probe's deadline
//     and then fails with KindTimeout (Envoy's rule 7).
//
// Probe is safe for concurrent use and runs on the caller's goroutine.
type TCP struct {
	addr string
	send []byte
	segs [][]byte
	// loop is the address the Monitor's event loop probes, or the zero
	// value when the check needs a goroutine (see loopTargetOf).
	loop netip.AddrPort
	// completeHandshake is TCPConfig.CompleteHandshake; the rest of the
	// config is compiled into the fields above.
	completeHandshake bool
}

var _ Prober = (*TCP)(nil)

// NewTCP returns a TCP prober for addr ("host:port", "[v6]:port"; a port is
// required unless cfg.Port is set). cfg is validated and copied.
func NewTCP(addr string, cfg TCPConfig) (*TCP, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	host, port, err := hostport.Split(addr, "", cfg.Port)
	if err != nil {
		return nil, err
	}
	t := &TCP{addr: hostport.Join(addr, host, port), completeHandshake: cfg.CompleteHandshake}
	if cfg.Send != nil {
		if t.send, err = cfg.Send.decode(); err != nil {
			return nil, err
		}
	}
	if t.segs, err = cfg.Receive.decode(ErrTCPConfig, "receive"); err != nil {
		return nil, err
	}
	if len(t.send) == 0 && len(t.segs) == 0 {
		t.loop = loopAddr(t.addr)
	}
	return t, nil
}

// Addr returns the host:port the prober connects to.
func (t *TCP) Addr() string { return t.addr }

// tcpBufPool holds read buffers for TCP probes.
var tcpBufPool = sync.Pool{New: func() any { b := make([]byte, 512); return &b }}

// Probe connects, optionally sends and matches, and closes. ctx's deadline
// is the probe's timeout.
func (t *TCP) Probe(ctx context.Context) Result {
	start := time.Now()
	r := t.probe(ctx)
	if r.Status != Pass && ctx.Err() == context.Canceled {
		r.Status, r.Kind, r.Detail = Fail, KindOther, "canceled"
	}
	r.Latency = time.Since(start)
	return r
}

func (t *TCP) probe(ctx context.Context) Result {
	d := net.Dialer{KeepAlive: -1} // the connection lives for one probe
	connectOnly := len(t.send) == 0 && len(t.segs) == 0
	if connectOnly && !t.completeHandshake {
		d.Control = tcpHoldACK
	}
	conn, err := probeDial(ctx, &d, t.addr)
	if err != nil {
		return Result{Status: Fail, Kind: KindOf(err), Detail: "connect: " + err.Error()}
	}
	if connectOnly {
		tcpAbort(conn)
		return Result{Status: Pass, Detail: "connected"}
	}
	probeSetDeadline(ctx, conn, 0)
	if ctx.Done() != nil {
		stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(httpLongAgo) })
		defer stop()
	}
	if len(t.send) > 0 {
		if _, err := conn.Write(t.send); err != nil {
			tcpAbort(conn)
			return Result{Status: Fail, Kind: tcpErrKind(err), Detail: "send: " + err.Error()}
		}
	}
	if len(t.segs) == 0 {
		_ = conn.Close() // an orderly close, so the sent bytes are delivered
		return Result{Status: Pass, Detail: "sent"}
	}
	defer tcpAbort(conn)
	bp := tcpBufPool.Get().(*[]byte)
	defer tcpBufPool.Put(bp)
	var m segMatcher
	m.reset(t.segs)
	for {
		n, err := conn.Read(*bp)
		if m.feed((*bp)[:n]) {
			return Result{Status: Pass, Detail: "received"}
		}
		if err != nil {
			if err == io.EOF {
				return Result{Status: Fail, Kind: KindReset, Detail: "closed before the expected payload"}
			}
			return Result{Status: Fail, Kind: tcpErrKind(err), Detail: "receive: " + err.Error()}
		}
	}
}

// tcpErrKind classifies an error after the connect.
func tcpErrKind(err error) Kind {
	if k := KindOf(err); k != KindOther && k != KindNetwork {
		return k
	}
	return KindReset
}

// tcpAbort closes conn with a reset (SO_LINGER 0): the peer sees RST and no
// TIME_WAIT is left on either side.
func tcpAbort(conn net.Conn) {
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}

// probeIsRefused reports a refused connection.
func probeIsRefused(err error) bool { return errors.Is(err, syscall.ECONNREFUSED) }

// probeIsReset reports a reset, broken or early-closed connection.
func probeIsReset(err error) bool {
	return errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) ||
		errors.Is(err, syscall.ECONNABORTED) || errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed)
}
