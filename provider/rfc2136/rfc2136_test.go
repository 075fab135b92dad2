package rfc2136_test

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/gslbkit/gslb/internal/errclass"
	"github.com/gslbkit/gslb/internal/testbind"
	"github.com/gslbkit/gslb/provider/providertest"
	"github.com/gslbkit/gslb/provider/rfc2136"
	"github.com/libdns/libdns"
	"github.com/miekg/dns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newProvider(t *testing.T, s *testbind.Server) *rfc2136.Provider {
	t.Helper()
	cfg := rfc2136.DefaultConfig()
	cfg.Server, cfg.KeyName, cfg.KeyAlg, cfg.Secret = s.Addr, s.KeyName, s.KeyAlg, s.Secret
	p, err := rfc2136.New(cfg)
	require.NoError(t, err)
	return p
}

// The adapter passes the conformance suite against a real BIND 9 started
// on loopback with a generated TSIG key. BIND silently ignores a CNAME
// beside other data and at the apex (where the SOA and NS live), so both
// capabilities are Ignore: the suite reads back and asserts "not applied".
func TestConformanceBIND(t *testing.T) {
	s := testbind.Start(t, "example.test.")
	providertest.Run(t, newProvider(t, s), "example.test.", providertest.Capabilities{
		CNAMEBesideData: providertest.Ignore,
		ApexCNAME:       providertest.Ignore,
	})
}

// The SOA comes twice and the apex NS and glue are there.
func TestGetRecordsTransfer(t *testing.T) {
	s := testbind.Start(t, "example.test.")
	recs, err := newProvider(t, s).GetRecords(context.Background(), "Example.Test")
	require.NoError(t, err)
	var soa, ns, glue int
	for _, r := range recs {
		rr := r.RR()
		switch {
		case rr.Type == "SOA":
			soa++
		case rr.Type == "NS" && rr.Name == "@":
			ns++
			assert.IsType(t, libdns.NS{}, r)
		case rr.Type == "A" && rr.Name == "ns1":
			glue++
			assert.Equal(t, netip.MustParseAddr("127.0.0.1"), r.(libdns.Address).IP)
		}
	}
	assert.Equal(t, []int{2, 1, 1}, []int{soa, ns, glue})
}

// Errors from a real BIND are classified: a wrong key or a zone it does
// not serve is permanent; a port nobody listens on is transient.
func TestClassificationBIND(t *testing.T) {
	s := testbind.Start(t, "example.test.")
	closed := func() string {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		addr := l.Addr().String()
		require.NoError(t, l.Close())
		return addr
	}()
	rec := []libdns.Record{libdns.Address{Name: "x", IP: netip.MustParseAddr("192.0.2.1"), TTL: time.Minute}}
	cases := []struct {
		name   string
		mutate func(*rfc2136.Config)
		zone   string
		want   errclass.Class
		rcode  int // expected *ResponseError code, -1 for none expected
	}{
		{"wrong secret", func(c *rfc2136.Config) { c.Secret = "c2VjcmV0LXRoYXQtaXMtd3Jvbmc=" }, "example.test.", errclass.Permanent, -1},
		{"unknown key", func(c *rfc2136.Config) { c.KeyName = "nobody-key" }, "example.test.", errclass.Permanent, -1},
		{"zone not served", func(*rfc2136.Config) {}, "other.test.", errclass.Permanent, -1},
		{"nobody listening", func(c *rfc2136.Config) { c.Server = closed }, "example.test.", errclass.Transient, -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := rfc2136.DefaultConfig()
			cfg.Server, cfg.KeyName, cfg.KeyAlg, cfg.Secret = s.Addr, s.KeyName, s.KeyAlg, s.Secret
			cfg.Timeout = 5 * time.Second
			c.mutate(&cfg)
			p, err := rfc2136.New(cfg)
			require.NoError(t, err)
			ctx := context.Background()
			_, err = p.SetRecords(ctx, c.zone, rec)
			require.Error(t, err)
			assert.Equal(t, c.want, errclass.Of(err), "SetRecords: %v", err)
			_, err = p.GetRecords(ctx, c.zone)
			require.Error(t, err)
			assert.Equal(t, c.want, errclass.Of(err), "GetRecords: %v", err)
		})
	}
}

// fakeServer answers every TCP query with rcode, to test the response-code
// path deterministically (real sockets on loopback, no bubble).
func fakeServer(t *testing.T, rcode int) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := &dns.Server{Listener: l, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetRcode(r, rcode)
		_ = w.WriteMsg(m)
	}), MsgAcceptFunc: func(dns.Header) dns.MsgAcceptAction { return dns.MsgAccept }}
	started := make(chan struct{})
	srv.NotifyStartedFunc = func() { close(started) }
	done := make(chan error, 1)
	go func() { done <- srv.ActivateAndServe() }()
	<-started
	t.Cleanup(func() {
		_ = srv.Shutdown()
		<-done
	})
	return l.Addr().String()
}

func TestClassificationRcodes(t *testing.T) {
	cases := []struct {
		rcode int
		want  errclass.Class
	}{
		{dns.RcodeServerFailure, errclass.Transient},
		{dns.RcodeRefused, errclass.Permanent},
		{dns.RcodeNotAuth, errclass.Permanent},
		{dns.RcodeNotZone, errclass.Permanent},
		{dns.RcodeFormatError, errclass.Permanent},
	}
	for _, c := range cases {
		t.Run(dns.RcodeToString[c.rcode], func(t *testing.T) {
			cfg := rfc2136.DefaultConfig()
			cfg.Server = fakeServer(t, c.rcode)
			p, err := rfc2136.New(cfg)
			require.NoError(t, err)
			ctx := context.Background()
			for name, call := range map[string]func() error{
				"SetRecords": func() error {
					_, err := p.SetRecords(ctx, "example.test.", []libdns.Record{libdns.TXT{Name: "x", Text: "y"}})
					return err
				},
				"GetRecords": func() error { _, err := p.GetRecords(ctx, "example.test."); return err },
			} {
				err := call()
				var re *rfc2136.ResponseError
				require.True(t, errors.As(err, &re), "%s: %v", name, err)
				assert.Equal(t, c.rcode, re.Rcode, name)
				assert.ErrorIs(t, err, rfc2136.ErrResponse)
				assert.Equal(t, c.want, errclass.Of(err), "%s: %v", name, err)
			}
		})
	}
}

func TestCancelledContext(t *testing.T) {
	cfg := rfc2136.DefaultConfig()
	cfg.Server = fakeServer(t, dns.RcodeSuccess)
	p, err := rfc2136.New(cfg)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = p.GetRecords(ctx, "example.test.")
	assert.ErrorIs(t, err, context.Canceled)
	assert.Equal(t, errclass.Permanent, errclass.Of(err))
}

func TestBadZoneAndRecords(t *testing.T) {
	cfg := rfc2136.DefaultConfig()
	cfg.Server = "127.0.0.1:1"
	p, err := rfc2136.New(cfg)
	require.NoError(t, err)
	ctx := context.Background()
	_, err = p.GetRecords(ctx, "")
	assert.ErrorContains(t, err, "zone")
	_, err = p.SetRecords(ctx, "example.test.", []libdns.Record{libdns.RR{Name: "x", Type: "A", Data: "not-an-ip"}})
	assert.ErrorContains(t, err, "not-an-ip")
	_, err = p.DeleteRecords(ctx, "example.test.", []libdns.Record{libdns.RR{Type: "A"}})
	assert.ErrorContains(t, err, "empty name")
}
