package zonetransfer

import (
	"context"
	"net"
	"sync"
	"time"

	"github.com/miekg/dns"
)

// Run sends NOTIFY (RFC 1996) to every configured secondary: once for each
// offered zone when it starts (a restarted primary may hold a new serial),
// then whenever an offered zone's serial changes. A NOTIFY not acknowledged
// within NotifyTimeout is sent again, up to NotifyRetries times; a newer
// serial replaces one still being sent. Run returns nil when ctx ends, once
// every goroutine it started has exited. Without secondaries it just waits.
// A Transfer runs once: a second call returns ErrRunning. dnsserver.Server
// runs the Transfer set on it (SetTransfer); do not run that one yourself.
func (x *Transfer) Run(ctx context.Context) error {
	if x == nil || x.p == nil {
		return ErrNoProvider
	}
	if !x.running.CompareAndSwap(false, true) {
		return ErrRunning
	}
	targets := make([]*notifyTarget, len(x.cfg.Notify))
	var wg sync.WaitGroup
	for i, a := range x.cfg.Notify {
		t := &notifyTarget{x: x, addr: a, pending: map[string]*pendingNotify{}, wake: make(chan struct{}, 1)}
		targets[i] = t
		wg.Go(func() { t.run(ctx) })
	}
	defer wg.Wait()
	if len(targets) == 0 {
		<-ctx.Done()
		return nil
	}
	seen := map[string]uint32{}
	var v uint64
	for {
		var soas map[string]*dns.SOA
		v, soas = x.p.SOARecords()
		for name, soa := range soas {
			if !x.offered(name) {
				continue
			}
			if old, ok := seen[name]; ok && old == soa.Serial {
				continue
			}
			seen[name] = soa.Serial
			for _, t := range targets {
				t.update(name, dns.Copy(soa).(*dns.SOA))
			}
		}
		for name := range seen {
			if _, ok := soas[name]; !ok {
				delete(seen, name)
			}
		}
		if _, err := x.p.Wait(ctx, v); err != nil {
			return nil
		}
	}
}

// notifyTarget sends NOTIFYs to one secondary, one zone at a time.
type notifyTarget struct {
	x    *Transfer
	addr string
	wake chan struct{}

	mu      sync.Mutex
	pending map[string]*pendingNotify // zone → the newest serial to announce
}

type pendingNotify struct {
	soa   *dns.SOA
	tries int
}

func (t *notifyTarget) update(zone string, soa *dns.SOA) {
	t.mu.Lock()
	t.pending[zone] = &pendingNotify{soa: soa}
	t.mu.Unlock()
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

// next returns a zone to announce, or nil.
func (t *notifyTarget) next() (string, *pendingNotify) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for z, p := range t.pending {
		return z, p
	}
	return "", nil
}

// done removes zone's entry if it is still p.
func (t *notifyTarget) done(zone string, p *pendingNotify) {
	t.mu.Lock()
	if t.pending[zone] == p {
		delete(t.pending, zone)
	}
	t.mu.Unlock()
}

func (t *notifyTarget) run(ctx context.Context) {
	for {
		zone, p := t.next()
		if p == nil {
			select {
			case <-ctx.Done():
				return
			case <-t.wake:
				continue
			}
		}
		p.tries++
		t.x.stats.notifySent.Add(1)
		start := time.Now()
		err := t.send(ctx, zone, p.soa)
		if ctx.Err() != nil {
			return
		}
		switch {
		case err == nil:
			t.x.stats.notifyAcked.Add(1)
			t.x.log.Debug("notify acknowledged", "zone", zone, "serial", p.soa.Serial, "secondary", t.addr, "tries", p.tries)
			t.done(zone, p)
		case p.tries > t.x.cfg.NotifyRetries:
			t.x.stats.notifyFailed.Add(1)
			t.x.log.Warn("notify not acknowledged; giving up (the secondary will check at its refresh interval)",
				"zone", zone, "serial", p.soa.Serial, "secondary", t.addr, "tries", p.tries, "err", err)
			t.done(zone, p)
		default:
			t.x.log.Debug("notify not acknowledged; retrying", "zone", zone, "secondary", t.addr, "tries", p.tries, "err", err)
			// Keep the pace of one try per NotifyTimeout even when the
			// answer was an error or the port unreachable.
			if d := time.Until(start.Add(t.x.cfg.NotifyTimeout)); d > 0 {
				tm := time.NewTimer(d)
				select {
				case <-ctx.Done():
					tm.Stop()
					return
				case <-tm.C:
				}
			}
		}
	}
}

// send sends one NOTIFY for zone and waits up to NotifyTimeout for its
// acknowledgement.
func (t *notifyTarget) send(ctx context.Context, zone string, soa *dns.SOA) error {
	m := new(dns.Msg)
	m.SetNotify(zone)
	m.Authoritative = true
	m.Answer = []dns.RR{soa}
	var out []byte
	var err error
	if k := t.x.notify; k != nil {
		out, _, err = t.x.sign(m, k, "", false)
	} else {
		out, err = m.Pack()
	}
	if err != nil {
		return err
	}
	c, err := net.Dial("udp", t.addr)
	if err != nil {
		return err
	}
	defer c.Close()
	deadline := time.Now().Add(t.x.cfg.NotifyTimeout)
	stop := context.AfterFunc(ctx, func() { _ = c.SetDeadline(time.Now()) })
	defer stop()
	if err := c.SetDeadline(deadline); err != nil {
		return err
	}
	if _, err := c.Write(out); err != nil {
		return err
	}
	buf := make([]byte, 4096)
	for {
		n, err := c.Read(buf)
		if err != nil {
			return err
		}
		r := new(dns.Msg)
		if r.Unpack(buf[:n]) != nil || r.Id != m.Id || !r.Response || r.Opcode != dns.OpcodeNotify {
			continue
		}
		if r.Rcode != dns.RcodeSuccess {
			return &notifyError{rcode: r.Rcode}
		}
		return nil
	}
}

type notifyError struct{ rcode int }

func (e *notifyError) Error() string {
	return "zonetransfer: notify answered " + dns.RcodeToString[e.rcode]
}
