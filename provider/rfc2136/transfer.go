package rfc2136

import (
	"context"
	"net"
	"sync"
	"time"

	"github.com/miekg/dns"
)

// transfer runs an AXFR of zone and returns its records in order (the SOA
// first and last). The transfer ends with ctx: the connection is closed
// under it.
func (p *Provider) transfer(ctx context.Context, zone string) ([]dns.RR, error) {
	if p.addr == "" {
		return nil, ErrNotConfigured
	}
	ctx, cancel := p.withTimeout(ctx)
	defer cancel()
	nc, err := (&net.Dialer{}).DialContext(ctx, "tcp", p.addr)
	if err != nil {
		return nil, classify("transfer", zone, ctxOr(ctx, err))
	}
	sn := &sniffConn{Conn: nc}
	stop := context.AfterFunc(ctx, func() { _ = nc.Close() })
	defer stop()

	timeout := p.cfg.Timeout
	if dl, ok := ctx.Deadline(); ok {
		timeout = max(time.Until(dl), time.Millisecond)
	}
	t := &dns.Transfer{Conn: &dns.Conn{Conn: sn}, TsigSecret: p.secrets, ReadTimeout: timeout, WriteTimeout: timeout}
	m := new(dns.Msg)
	m.SetAxfr(zone)
	p.sign(m)
	env, err := t.In(m, p.addr)
	if err != nil {
		_ = nc.Close()
		return nil, classify("transfer", zone, ctxOr(ctx, err))
	}
	var (
		out     []dns.RR
		lastErr error
	)
	// Drain the channel to the end so the transfer goroutine always exits.
	for e := range env {
		if e.Error != nil && lastErr == nil {
			lastErr = e.Error
		}
		if lastErr == nil {
			out = append(out, e.RR...)
		}
	}
	if lastErr != nil {
		if rc, ok := sn.rcode(); ok && rc != dns.RcodeSuccess {
			r := new(dns.Msg)
			r.Rcode = rc
			return nil, responseError("transfer", zone, r)
		}
		return nil, classify("transfer", zone, ctxOr(ctx, lastErr))
	}
	return out, nil
}

// sniffConn remembers the first bytes read from a DNS-over-TCP stream so
// the response code of the first message is known even when miekg/dns
// reports it only as text.
type sniffConn struct {
	net.Conn
	mu   sync.Mutex
	head []byte
}

// headLen is the 2-byte TCP length prefix plus the 4 header bytes holding
// the ID and the flags (whose low 4 bits are the RCODE).
const headLen = 6

// Read reads from the connection, keeping the stream's first bytes.
func (c *sniffConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	if n > 0 {
		c.mu.Lock()
		if need := headLen - len(c.head); need > 0 {
			c.head = append(c.head, p[:min(n, need)]...)
		}
		c.mu.Unlock()
	}
	return n, err
}

// rcode returns the first message's response code once its header was read.
func (c *sniffConn) rcode() (int, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.head) < headLen {
		return 0, false
	}
	return int(c.head[5] & 0x0f), true
}
