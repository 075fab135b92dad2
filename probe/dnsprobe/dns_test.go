package dnsprobe

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gslbkit/gslb/probe"
	"github.com/miekg/dns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// probersDNSServer starts a miekg/dns server on loopback (UDP, or TCP) with
// a tiny zone: up.example A 192.0.2.1 and 192.0.2.2, alias.example CNAME
// up.example, big.example with 100 A records (truncated over UDP),
// broken.example SERVFAIL, everything else NXDOMAIN.
func probersDNSServer(t *testing.T, network string) string {
	handler := dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(r)
		q := r.Question[0]
		rr := func(s string) dns.RR {
			x, err := dns.NewRR(s)
			if err != nil {
				panic(err)
			}
			return x
		}
		switch strings.ToLower(q.Name) {
		case "up.example.":
			if q.Qtype == dns.TypeA {
				m.Answer = []dns.RR{rr("up.example. 30 IN A 192.0.2.1"), rr("up.example. 30 IN A 192.0.2.2")}
			}
		case "alias.example.":
			m.Answer = []dns.RR{rr("alias.example. 30 IN CNAME Up.Example.")}
		case "big.example.":
			for i := 0; i < 100; i++ {
				m.Answer = append(m.Answer, rr("big.example. 30 IN A 198.51.100."+itoa(i)))
			}
			if w.LocalAddr().Network() == "udp" {
				m.Truncate(512)
			}
		case "broken.example.":
			m.Rcode = dns.RcodeServerFailure
		default:
			m.Rcode = dns.RcodeNameError
		}
		_ = w.WriteMsg(m)
	})
	srv := &dns.Server{Net: network, Handler: handler}
	started := make(chan struct{})
	srv.NotifyStartedFunc = func() { close(started) }
	if network == "udp" {
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		require.NoError(t, err)
		srv.PacketConn = pc
	} else {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		srv.Listener = ln
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.ActivateAndServe()
	}()
	<-started
	t.Cleanup(func() {
		_ = srv.Shutdown()
		<-done
	})
	if network == "udp" {
		return srv.PacketConn.LocalAddr().String()
	}
	return srv.Listener.Addr().String()
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

func TestDNSProbe(t *testing.T) {
	udp := probersDNSServer(t, "udp")
	tcp := probersDNSServer(t, "tcp")
	cases := []struct {
		name string
		addr string
		cfg  Config
		want probe.Status
		kind probe.Kind
		code int
	}{
		{"NOERROR passes", udp, DefaultConfig("up.example"), probe.Pass, probe.KindNone, dns.RcodeSuccess},
		{"expected answer present", udp, Config{Name: "up.example", Answers: []string{"192.0.2.2"}}, probe.Pass, probe.KindNone, 0},
		{"every expected answer must be present", udp, Config{Name: "up.example", Answers: []string{"192.0.2.1", "192.0.2.9"}}, probe.FailNow, probe.KindBody, 0},
		{"CNAME answer compares without case or final dot", udp, Config{Name: "alias.example", Type: "cname", Answers: []string{"up.example"}}, probe.Pass, probe.KindNone, 0},
		{"wrong rcode fails at once", udp, DefaultConfig("missing.example"), probe.FailNow, probe.KindStatus, dns.RcodeNameError},
		{"expected NXDOMAIN passes", udp, Config{Name: "missing.example", Rcode: "NXDOMAIN"}, probe.Pass, probe.KindNone, dns.RcodeNameError},
		{"retriable rcode counts toward the threshold", udp, Config{Name: "broken.example", RetriableRcodes: []string{"SERVFAIL"}}, probe.Fail, probe.KindStatus, dns.RcodeServerFailure},
		{"SERVFAIL not retriable fails at once", udp, Config{Name: "broken.example"}, probe.FailNow, probe.KindStatus, dns.RcodeServerFailure},
		{"over TCP", tcp, Config{Name: "up.example", Network: "tcp", Answers: []string{"192.0.2.1"}}, probe.Pass, probe.KindNone, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			d, err := New(tc.addr, tc.cfg)
			require.NoError(t, err)
			r := d.Probe(probersCtx(t, 10*time.Second))
			assert.Equal(t, tc.want, r.Status, r.Detail)
			assert.Equal(t, tc.kind, r.Kind, r.Detail)
			assert.Equal(t, tc.code, r.Code)
		})
	}
}

func TestDNSTruncatedRetriesOverTCP(t *testing.T) {
	// The UDP half answers every query truncated and empty; the TCP half,
	// on the same port, holds the zone.
	var pc net.PacketConn
	var addr string
	for i := 0; i < 20 && pc == nil; i++ {
		addr = probersDNSServer(t, "tcp")
		pc, _ = net.ListenPacket("udp", addr)
	}
	if pc == nil {
		t.Skip("no port free on both UDP and TCP")
	}
	udpSrv := &dns.Server{PacketConn: pc, Handler: dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(r)
		m.Truncated = true
		_ = w.WriteMsg(m)
	})}
	started := make(chan struct{})
	udpSrv.NotifyStartedFunc = func() { close(started) }
	done := make(chan struct{})
	go func() { defer close(done); _ = udpSrv.ActivateAndServe() }()
	<-started
	t.Cleanup(func() { _ = udpSrv.Shutdown(); <-done })
	d, err := New(addr, Config{Name: "big.example", Answers: []string{"198.51.100.99"}})
	require.NoError(t, err)
	r := d.Probe(probersCtx(t, 10*time.Second))
	assert.Equal(t, probe.Pass, r.Status, r.Detail)
}

func TestDNSFailures(t *testing.T) {
	t.Run("no answer times out", func(t *testing.T) {
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		require.NoError(t, err)
		t.Cleanup(func() { _ = pc.Close() })
		d, err := New(pc.LocalAddr().String(), DefaultConfig("up.example"))
		require.NoError(t, err)
		r := d.Probe(probersCtx(t, 300*time.Millisecond))
		assert.Equal(t, probe.Fail, r.Status, r.Detail)
		assert.Equal(t, probe.KindTimeout, r.Kind, r.Detail)
	})
	t.Run("garbage reply is a protocol error", func(t *testing.T) {
		pc, err := net.ListenPacket("udp", "127.0.0.1:0")
		require.NoError(t, err)
		done := make(chan struct{})
		go func() {
			defer close(done)
			buf := make([]byte, 512)
			n, from, err := pc.ReadFrom(buf)
			if err != nil || n < 2 {
				return
			}
			_, _ = pc.WriteTo([]byte{buf[0], buf[1], 0x81}, from)
		}()
		t.Cleanup(func() { _ = pc.Close(); <-done })
		d, err := New(pc.LocalAddr().String(), DefaultConfig("up.example"))
		require.NoError(t, err)
		r := d.Probe(probersCtx(t, 2*time.Second))
		assert.Equal(t, probe.Fail, r.Status, r.Detail)
		assert.Contains(t, []probe.Kind{probe.KindProtocol, probe.KindTimeout}, r.Kind, r.Detail)
	})
	t.Run("TCP refused", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		require.NoError(t, err)
		addr := ln.Addr().String()
		require.NoError(t, ln.Close())
		d, err := New(addr, Config{Name: "up.example", Network: "tcp"})
		require.NoError(t, err)
		r := d.Probe(probersCtx(t, 5*time.Second))
		assert.Equal(t, probe.Fail, r.Status, r.Detail)
		assert.Equal(t, probe.KindRefused, r.Kind, r.Detail)
	})
}

func TestDNSConfigValidate(t *testing.T) {
	cases := []struct {
		name  string
		cfg   Config
		field string
	}{
		{"default", DefaultConfig("a.example"), ""},
		{"name required", Config{}, "name"},
		{"bad type", Config{Name: "a", Type: "BOGUS"}, "type"},
		{"bad rcode", Config{Name: "a", Rcode: "MAYBE"}, "rcode"},
		{"bad retriable rcode", Config{Name: "a", RetriableRcodes: []string{"X"}}, "retriableRcodes[0]"},
		{"bad network", Config{Name: "a", Network: "sctp"}, "network"},
		{"empty answer", Config{Name: "a", Answers: []string{" "}}, "answers[0]"},
		{"bad port", Config{Name: "a", Port: 70000}, "port"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if tc.field == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrInvalidConfig)
			require.ErrorIs(t, err, ErrConfig, "the deprecated name matches too")
			assert.Contains(t, err.Error(), tc.field)
		})
	}
	d, err := New("127.0.0.1", DefaultConfig("a.example"))
	require.NoError(t, err)
	assert.Equal(t, "127.0.0.1:53", d.Addr())
}
