package zonetransfer_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gslbkit/gslb/internal/testproc"
	"github.com/gslbkit/gslb/provider/memory"
	"github.com/gslbkit/gslb/provider/zonetransfer"
	"github.com/libdns/libdns"
	"github.com/miekg/dns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const (
	xfrKeyName = "xfr-key."
	xfrZone    = "xfr.test."
)

var xfrSecret = base64.StdEncoding.EncodeToString([]byte("0123456789abcdef0123456789abcdef"))

// xfrProvider holds zone xfr.test with n names a0..a(n-1), one A each.
func xfrProvider(t testing.TB, n int) *memory.Provider {
	t.Helper()
	p, err := memory.New(memory.DefaultConfig())
	require.NoError(t, err)
	require.NoError(t, p.AddZone(xfrZone))
	recs := make([]libdns.Record, n)
	for i := range n {
		recs[i] = libdns.Address{Name: fmt.Sprintf("a%d", i), TTL: 30 * time.Second, IP: netip.AddrFrom4([4]byte{10, 0, byte(i >> 8), byte(i)})}
	}
	_, err = p.SetRecords(context.Background(), xfrZone, recs)
	require.NoError(t, err)
	return p
}

func xfrConfig() zonetransfer.TransferConfig {
	c := zonetransfer.DefaultTransferConfig()
	c.Keys = []zonetransfer.TSIGKey{{Name: xfrKeyName, Secret: xfrSecret}}
	c.Allow = []zonetransfer.TransferRule{{Key: xfrKeyName}}
	return c
}

// transfer runs an AXFR (serial 0) or IXFR from serial and returns the
// records of every envelope, or the first error.
func transfer(addr string, ixfr bool, serial uint32, key bool) ([]dns.RR, error) {
	m := new(dns.Msg)
	if ixfr {
		m.SetIxfr(xfrZone, serial, "ns1."+xfrZone, "hostmaster."+xfrZone)
	} else {
		m.SetAxfr(xfrZone)
	}
	tr := &dns.Transfer{}
	if key {
		m.SetTsig(xfrKeyName, dns.HmacSHA256, 300, time.Now().Unix())
		tr.TsigSecret = map[string]string{xfrKeyName: xfrSecret}
	}
	ch, err := tr.In(m, addr)
	if err != nil {
		return nil, err
	}
	var out []dns.RR
	for env := range ch {
		if env.Error != nil {
			for range ch {
			}
			return out, env.Error
		}
		out = append(out, env.RR...)
	}
	return out, nil
}

func soaSerials(rrs []dns.RR) []uint32 {
	var out []uint32
	for _, rr := range rrs {
		if s, ok := rr.(*dns.SOA); ok {
			out = append(out, s.Serial)
		}
	}
	return out
}

// TestTransferAXFRAndIXFR transfers a zone from a real server on loopback
// with miekg/dns's client: AXFR; IXFR from the journal after a change (the
// record deleted and the one added, between the SOAs of RFC 1995); IXFR
// from the current serial (one SOA); IXFR from a serial the journal does
// not hold (the whole zone); and refusals without the key or from outside
// the allowed prefix.
func TestTransferAXFRAndIXFR(t *testing.T) {
	p := xfrProvider(t, 20)
	srv := startServer(t, p, xfrConfig())
	addr := srv.Addr()
	soa, err := p.SOA(xfrZone)
	require.NoError(t, err)

	rrs, err := transfer(addr, false, 0, true)
	require.NoError(t, err)
	require.Len(t, rrs, 2+1+20) // SOA, NS, 20 A, SOA
	assert.Equal(t, []uint32{soa.Serial, soa.Serial}, soaSerials(rrs))

	_, err = p.SetRecords(context.Background(), xfrZone, []libdns.Record{libdns.Address{Name: "a3", TTL: 30 * time.Second, IP: netip.MustParseAddr("192.0.2.3")}})
	require.NoError(t, err)
	rrs, err = transfer(addr, true, soa.Serial, true)
	require.NoError(t, err)
	require.Len(t, rrs, 6, "%v", rrs)
	assert.Equal(t, []uint32{soa.Serial + 1, soa.Serial, soa.Serial + 1, soa.Serial + 1}, soaSerials(rrs))
	assert.Equal(t, "10.0.0.3", rrs[2].(*dns.A).A.String(), "deleted")
	assert.Equal(t, "192.0.2.3", rrs[4].(*dns.A).A.String(), "added")
	assert.Equal(t, uint64(1), srv.Transfer().Stats().IXFR)

	rrs, err = transfer(addr, true, soa.Serial+1, true)
	require.NoError(t, err)
	assert.Equal(t, []uint32{soa.Serial + 1}, soaSerials(rrs))
	assert.Len(t, rrs, 1)

	rrs, err = transfer(addr, true, soa.Serial-5, true)
	require.NoError(t, err)
	assert.Len(t, rrs, 23, "AXFR when the journal does not reach back")

	_, err = transfer(addr, false, 0, false)
	assert.Error(t, err, "an unsigned transfer is refused")
	m := new(dns.Msg)
	m.SetAxfr(xfrZone)
	m.SetTsig(xfrKeyName, dns.HmacSHA256, 300, time.Now().Unix())
	tr := &dns.Transfer{TsigSecret: map[string]string{xfrKeyName: base64.StdEncoding.EncodeToString([]byte("the wrong secret, 32 bytes long!"))}}
	ch, err := tr.In(m, addr)
	if err == nil {
		env := <-ch
		err = env.Error
		for range ch {
		}
	}
	assert.Error(t, err, "a transfer with the wrong secret is refused")
	st := srv.Transfer().Stats()
	assert.Equal(t, uint64(2), st.Refused)
	assert.Equal(t, uint64(1), st.BadTSIG)
	assert.Equal(t, uint64(2), st.AXFR)
	assert.Equal(t, uint64(1), st.UpToDate)

	// A prefix rule that excludes 127.0.0.1.
	p2 := xfrProvider(t, 3)
	cfg := xfrConfig()
	cfg.Allow = []zonetransfer.TransferRule{{Prefix: netip.MustParsePrefix("192.0.2.0/24")}}
	srv2 := startServer(t, p2, cfg)
	_, err = transfer(srv2.Addr(), false, 0, true)
	assert.Error(t, err)
	cfg.Allow = []zonetransfer.TransferRule{{Prefix: netip.MustParsePrefix("127.0.0.0/8")}}
	srv3 := startServer(t, p2, cfg)
	rrs, err = transfer(srv3.Addr(), false, 0, false)
	require.NoError(t, err)
	assert.Len(t, rrs, 6)
}

// TestTransferManyChanges: IXFR across several changes that delete, add and
// change TTLs gives, applied in order to the old copy, the new zone.
func TestTransferManyChanges(t *testing.T) {
	p := xfrProvider(t, 50)
	srv := startServer(t, p, xfrConfig())
	base, err := transfer(srv.Addr(), false, 0, true)
	require.NoError(t, err)
	from := soaSerials(base)[0]
	ctx := context.Background()
	_, err = p.DeleteRecords(ctx, xfrZone, []libdns.Record{libdns.RR{Name: "a1", Type: "A"}})
	require.NoError(t, err)
	_, err = p.SetRecords(ctx, xfrZone, []libdns.Record{libdns.Address{Name: "a2", TTL: 60 * time.Second, IP: netip.MustParseAddr("10.0.0.2")}})
	require.NoError(t, err)
	_, err = p.AppendRecords(ctx, xfrZone, []libdns.Record{libdns.TXT{Name: "new", TTL: 5 * time.Second, Text: "hello"}})
	require.NoError(t, err)

	diff, err := transfer(srv.Addr(), true, from, true)
	require.NoError(t, err)
	want, err := transfer(srv.Addr(), false, 0, true)
	require.NoError(t, err)
	assert.Equal(t, zoneSet(want), applyIXFR(t, zoneSet(base), diff))
}

func zoneSet(axfr []dns.RR) map[string]bool {
	m := map[string]bool{}
	for _, rr := range axfr[1 : len(axfr)-1] {
		m[rr.String()] = true
	}
	return m
}

// applyIXFR applies an IXFR response's difference sequences to a copy.
func applyIXFR(t *testing.T, have map[string]bool, diff []dns.RR) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	for k := range have {
		out[k] = true
	}
	require.IsType(t, &dns.SOA{}, diff[0])
	deleting := false
	for _, rr := range diff[1 : len(diff)-1] {
		if _, ok := rr.(*dns.SOA); ok {
			deleting = !deleting
			continue
		}
		if deleting {
			require.True(t, out[rr.String()], "deletes a record it holds: %v", rr)
			delete(out, rr.String())
		} else {
			out[rr.String()] = true
		}
	}
	return out
}

// TestTransferSignedQuery: a TSIG-signed SOA query (how secondaries check
// the serial) gets a signed answer over UDP and TCP; an IXFR over UDP gets
// the SOA alone.
func TestTransferSignedQuery(t *testing.T) {
	p := xfrProvider(t, 3)
	srv := startServer(t, p, xfrConfig())
	for _, n := range []string{"udp", "tcp"} {
		c := &dns.Client{Net: n, TsigSecret: map[string]string{xfrKeyName: xfrSecret}, Timeout: 5 * time.Second}
		m := new(dns.Msg)
		m.SetQuestion(xfrZone, dns.TypeSOA)
		m.SetTsig(xfrKeyName, dns.HmacSHA256, 300, time.Now().Unix())
		r, _, err := c.Exchange(m, srv.Addr())
		require.NoError(t, err, n) // the client verifies the reply's TSIG
		require.NotNil(t, r.IsTsig(), n)
		require.Len(t, r.Answer, 1)
		assert.True(t, r.Authoritative)

		m = new(dns.Msg)
		m.SetIxfr(xfrZone, 1, "ns1."+xfrZone, "hostmaster."+xfrZone)
		m.SetTsig(xfrKeyName, dns.HmacSHA256, 300, time.Now().Unix())
		if n == "udp" {
			r, _, err = c.Exchange(m, srv.Addr())
			require.NoError(t, err)
			require.Len(t, r.Answer, 1)
			assert.IsType(t, &dns.SOA{}, r.Answer[0])
		}
	}
	// Plain queries still take the fast path and answer as before.
	r, err := dns.Exchange(query("a1."+xfrZone, dns.TypeA), srv.Addr())
	require.NoError(t, err)
	require.Len(t, r.Answer, 1)
}

// notifySink is a UDP secondary that records NOTIFYs and ignores the first
// drop of them.
type notifySink struct {
	mu      sync.Mutex
	serials []uint32
	drop    int
	got     chan uint32
}

func startNotifySink(t *testing.T, drop int) (*notifySink, string) {
	t.Helper()
	s := &notifySink{drop: drop, got: make(chan uint32, 100)}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		if r.Opcode != dns.OpcodeNotify || len(r.Answer) != 1 {
			return
		}
		serial := r.Answer[0].(*dns.SOA).Serial
		s.mu.Lock()
		s.serials = append(s.serials, serial)
		drop := s.drop > 0
		s.drop--
		s.mu.Unlock()
		s.got <- serial
		if drop {
			return
		}
		m := new(dns.Msg)
		m.SetReply(r)
		_ = w.WriteMsg(m)
	})}
	started := make(chan struct{})
	srv.NotifyStartedFunc = func() { close(started) }
	go func() { _ = srv.ActivateAndServe() }()
	<-started
	t.Cleanup(func() { _ = srv.Shutdown() })
	return s, pc.LocalAddr().String()
}

// TestTransferNotifyRetries: the Transfer notifies at start and on every
// change, sending an unacknowledged NOTIFY again until acknowledged.
func TestTransferNotifyRetries(t *testing.T) {
	p := xfrProvider(t, 3)
	sink, addr := startNotifySink(t, 2)
	cfg := xfrConfig()
	cfg.Notify = []string{addr}
	cfg.NotifyTimeout = 50 * time.Millisecond
	srv := startServer(t, p, cfg)
	soa, err := p.SOA(xfrZone)
	require.NoError(t, err)

	guard := time.After(30 * time.Second)
	wait := func(want uint32) int {
		n := 0
		for {
			select {
			case s := <-sink.got:
				n++
				if s == want {
					return n
				}
			case <-guard:
				t.Fatalf("no NOTIFY for serial %d within 30s", want)
			}
		}
	}
	start := time.Now()
	// Two dropped, the third acknowledged.
	assert.Equal(t, 1, wait(soa.Serial))
	assert.Equal(t, 1, wait(soa.Serial))
	assert.Equal(t, 1, wait(soa.Serial))
	_, err = p.SetRecords(context.Background(), xfrZone, []libdns.Record{libdns.Address{Name: "x", TTL: time.Minute, IP: netip.MustParseAddr("192.0.2.9")}})
	require.NoError(t, err)
	wait(soa.Serial + 1)
	t.Logf("three NOTIFYs for serial %d and one for the next in %v", soa.Serial, time.Since(start))
	st := srv.Transfer().Stats()
	assert.GreaterOrEqual(t, st.NotifySent, uint64(4))
}

func TestTransferConfigValidate(t *testing.T) {
	ok := xfrConfig()
	require.NoError(t, ok.Validate())
	require.NoError(t, zonetransfer.TransferConfig{}.Validate())
	for name, mod := range map[string]func(*zonetransfer.TransferConfig){
		"keys[0].secret":    func(c *zonetransfer.TransferConfig) { c.Keys[0].Secret = "c2hvcnQ=" },
		"keys[0].algorithm": func(c *zonetransfer.TransferConfig) { c.Keys[0].Algorithm = "rot13" },
		"allow[0].key":      func(c *zonetransfer.TransferConfig) { c.Allow[0].Key = "other" },
		"notify[0]":         func(c *zonetransfer.TransferConfig) { c.Notify = []string{"ns2.example"} },
		"notifyKey":         func(c *zonetransfer.TransferConfig) { c.NotifyKey = "nope" },
		"notifyTimeout":     func(c *zonetransfer.TransferConfig) { c.NotifyTimeout = time.Hour },
		"notifyRetries":     func(c *zonetransfer.TransferConfig) { c.NotifyRetries = -1 },
	} {
		c := xfrConfig()
		c.Keys = append([]zonetransfer.TSIGKey(nil), c.Keys...)
		mod(&c)
		err := c.Validate()
		require.Error(t, err, name)
		assert.Contains(t, err.Error(), name)
	}
}

func TestSerialGreater(t *testing.T) {
	for _, c := range []struct {
		a, b uint32
		want bool
	}{
		{2, 1, true}, {1, 2, false}, {1, 1, false},
		{0, 0xFFFFFFFF, true}, {5, 0xFFFFFFF0, true}, {0xFFFFFFF0, 5, false},
		{1 << 31, 0, false}, {0, 1 << 31, false}, {1<<31 - 1, 0, true},
	} {
		assert.Equal(t, c.want, memory.SerialGreater(c.a, c.b), "%d > %d", c.a, c.b)
	}
}

// TestJournalKeepsOld: a change's journal entry carries the RRset before
// it as well as after.
func TestJournalKeepsOld(t *testing.T) {
	p := xfrProvider(t, 2)
	v := p.Version()
	_, err := p.SetRecords(context.Background(), xfrZone, []libdns.Record{libdns.Address{Name: "a1", TTL: 30 * time.Second, IP: netip.MustParseAddr("192.0.2.1")}})
	require.NoError(t, err)
	ch, ok := p.Changes(v)
	require.True(t, ok)
	require.Len(t, ch, 1)
	assert.Equal(t, []memory.ZoneRecord{{Name: "a1", Type: "A", TTL: 30, Data: "10.0.0.1"}}, ch[0].Old)
	assert.Equal(t, []memory.ZoneRecord{{Name: "a1", Type: "A", TTL: 30, Data: "192.0.2.1"}}, ch[0].Records)
}

// TestTransferWarnsAboutHooks: transferring a zone that has an answer hook
// logs a warning (secondaries serve the stored records only), once for a
// given set of hooks.
func TestTransferWarnsAboutHooks(t *testing.T) {
	p := xfrProvider(t, 3)
	var logs testproc.Buffer
	cfg := zonetransfer.DefaultTransferConfig()
	cfg.Allow = []zonetransfer.TransferRule{{}}
	x, err := zonetransfer.NewTransfer(p, cfg, slog.New(slog.NewTextHandler(&logs, nil)))
	require.NoError(t, err)
	m := new(dns.Msg)
	m.SetAxfr(xfrZone)
	q, err := m.Pack()
	require.NoError(t, err)
	src := netip.MustParseAddr("127.0.0.1")
	_, err = x.ServeTCP(io.Discard, q, src, nil)
	require.NoError(t, err)
	assert.NotContains(t, logs.String(), "answer hooks")

	p.SetAnswerFunc("a1."+xfrZone, func(netip.Prefix, string, string, []libdns.Record) ([]libdns.Record, int) { return nil, 0 })
	for range 2 {
		_, err = x.ServeTCP(io.Discard, q, src, nil)
		require.NoError(t, err)
	}
	assert.Equal(t, 1, strings.Count(logs.String(), "answer hooks"), logs.String())
}

// TestTransferLeavesQueryAlone: verifying a signed query whose header ID
// differs from its TSIG's original ID (a forwarder may rewrite it) neither
// changes the caller's bytes nor the reply's ID. (miekg/dns's TsigVerify
// rewrites the ID in the buffer it is given; found by FuzzTransfer.)
func TestTransferLeavesQueryAlone(t *testing.T) {
	p := xfrProvider(t, 3)
	x, err := zonetransfer.NewTransfer(p, xfrConfig(), nil)
	require.NoError(t, err)
	m := new(dns.Msg)
	m.SetQuestion(xfrZone, dns.TypeSOA)
	m.Id = 0x4156
	m.SetTsig(xfrKeyName, dns.HmacSHA256, 300, time.Now().Unix())
	b, _, err := dns.TsigGenerate(m, xfrSecret, "", false)
	require.NoError(t, err)
	b[0], b[1] = 0x99, 0x9f
	orig := append([]byte(nil), b...)
	for _, tcp := range []bool{false, true} {
		out := x.RespondWire(b, netip.MustParseAddr("127.0.0.1"), tcp)
		assert.Equal(t, orig, b, "the query's bytes changed")
		r := new(dns.Msg)
		require.NoError(t, r.Unpack(out))
		assert.Equal(t, uint16(0x999f), r.Id)
	}
}

// TestConcurrentAXFR runs AXFRs of one zone at once: they share the
// stored records, which packing must only read (go test -race).
func TestConcurrentAXFR(t *testing.T) {
	p := xfrProvider(t, 2000)
	x, err := zonetransfer.NewTransfer(p, zonetransfer.TransferConfig{Allow: []zonetransfer.TransferRule{{}}}, nil)
	require.NoError(t, err)
	m := new(dns.Msg)
	m.SetAxfr(xfrZone)
	q, err := m.Pack()
	require.NoError(t, err)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			ok, err := x.ServeTCP(io.Discard, q, netip.MustParseAddr("127.0.0.1"), nil)
			assert.True(t, ok)
			assert.NoError(t, err)
		})
	}
	wg.Wait()
}
