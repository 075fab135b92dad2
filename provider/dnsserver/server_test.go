package dnsserver_test

import (
	"context"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/gslbkit/gslb/internal/testrecords"
	"github.com/gslbkit/gslb/provider/dnsserver"
	"github.com/gslbkit/gslb/provider/memory"
	"github.com/libdns/libdns"
	"github.com/miekg/dns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fixture is a zone with addresses, a CNAME chain, a loop, a TXT, an empty
// non-terminal (b.example.test holds nothing, a.b.example.test does) and a
// chain leaving the zone.
func fixture(t testing.TB) *memory.Provider {
	p := new(memory.Provider)
	testrecords.Load(t, p, zone, testrecords.Chains())
	require.NoError(t, p.AddZone("other.test."))
	return p
}

func query(name string, qtype uint16) *dns.Msg {
	m := new(dns.Msg)
	m.SetQuestion(name, qtype)
	return m
}

// startServer runs a Server for p on a free port of 127.0.0.1, with the
// default config changed by mod, until the test ends.
func startServer(t *testing.T, p *memory.Provider, mod func(*dnsserver.ServerConfig)) *dnsserver.Server {
	cfg := dnsserver.DefaultServerConfig()
	cfg.Addr = "127.0.0.1:0"
	mod(&cfg)
	srv, err := dnsserver.NewServer(p, cfg, nil)
	require.NoError(t, err)
	require.NoError(t, srv.Listen())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			assert.NoError(t, err)
		case <-time.After(30 * time.Second):
			t.Fatal("server did not stop")
		}
	})
	return srv
}

// TestServer asks a real server on 127.0.0.1 over UDP and TCP, including a
// truncated UDP answer retried over TCP, and a swap from an address set to a
// CNAME seen between two queries.
func TestServer(t *testing.T) {
	p := fixture(t)
	srv := startServer(t, p, func(*dnsserver.ServerConfig) {})

	for _, net := range []string{"udp", "tcp"} {
		t.Run(net, func(t *testing.T) {
			c := &dns.Client{Net: net, Timeout: 10 * time.Second}
			m, _, err := c.Exchange(query("www.example.test.", dns.TypeA), srv.Addr())
			require.NoError(t, err)
			assert.True(t, m.Authoritative)
			assert.Equal(t, []string{"www.example.test. A 192.0.2.1", "www.example.test. A 192.0.2.2"}, testrecords.Lines(m.Answer))
			m, _, err = c.Exchange(query("nope.example.test.", dns.TypeA), srv.Addr())
			require.NoError(t, err)
			assert.Equal(t, dns.RcodeNameError, m.Rcode)
		})
	}
	t.Run("truncated over UDP, whole over TCP", func(t *testing.T) {
		udp := &dns.Client{Net: "udp", Timeout: 10 * time.Second}
		m, _, err := udp.Exchange(query("big.example.test.", dns.TypeTXT), srv.Addr())
		require.NoError(t, err)
		require.True(t, m.Truncated)
		tcp := &dns.Client{Net: "tcp", Timeout: 10 * time.Second}
		m, _, err = tcp.Exchange(query("big.example.test.", dns.TypeTXT), srv.Addr())
		require.NoError(t, err)
		assert.False(t, m.Truncated)
		assert.Len(t, m.Answer, 3)
	})
	t.Run("A set swapped for a CNAME", func(t *testing.T) {
		_, err := p.SetRecords(context.Background(), zone, []libdns.Record{cname("www", "t.example.test.")})
		require.NoError(t, err)
		c := &dns.Client{Net: "udp", Timeout: 10 * time.Second}
		m, _, err := c.Exchange(query("www.example.test.", dns.TypeTXT), srv.Addr())
		require.NoError(t, err)
		assert.Equal(t, []string{"www.example.test. CNAME t.example.test.", `t.example.test. TXT "hello world"`}, testrecords.Lines(m.Answer))
	})
}

// TestServerUDPBurst sends queries in bursts fast enough to make the UDP
// loop pause after its batches (UDPCoalesce, with the rate threshold at its
// minimum) and requires an answer to every one.
func TestServerUDPBurst(t *testing.T) {
	srv := startServer(t, fixture(t), func(c *dnsserver.ServerConfig) { c.UDPCoalesceRate = 1000 })

	conn, err := net.Dial("udp", srv.Addr())
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.SetDeadline(time.Now().Add(30*time.Second))) // a guard
	const bursts, size = 20, 50
	buf := make([]byte, 4096)
	for b := range bursts {
		want := map[uint16]bool{}
		for i := range size {
			q := query("www.example.test.", dns.TypeA)
			q.Id = uint16(b*size + i)
			wire, err := q.Pack()
			require.NoError(t, err)
			_, err = conn.Write(wire)
			require.NoError(t, err)
			want[q.Id] = true
		}
		for len(want) > 0 {
			n, err := conn.Read(buf)
			require.NoError(t, err, "burst %d: %d answers missing", b, len(want))
			var m dns.Msg
			require.NoError(t, m.Unpack(buf[:n]))
			assert.Len(t, m.Answer, 2)
			delete(want, m.Id)
		}
	}
}

// TestServerUDPPauseTrial: a UDP loop kept above UDPCoalesceRate tries its
// pause and counts the trial in Stats, whichever way it goes; while no
// loop is above the rate no trial is counted. (Linux only: other systems
// have no pause.)
func TestServerUDPPauseTrial(t *testing.T) {
	if runtime.GOOS != "linux" || (runtime.GOARCH != "amd64" && runtime.GOARCH != "arm64") {
		t.Skip("the UDP pause is Linux's (amd64, arm64)")
	}
	srv := startServer(t, fixture(t), func(c *dnsserver.ServerConfig) { c.UDPCoalesceRate = 1000 })
	assert.Zero(t, srv.Stats().UDPPauseTrials, "idle")

	conn, err := net.Dial("udp", srv.Addr())
	require.NoError(t, err)
	defer conn.Close()
	require.NoError(t, conn.SetDeadline(time.Now().Add(60*time.Second))) // a guard
	wire, err := query("www.example.test.", dns.TypeA).Pack()
	require.NoError(t, err)
	buf := make([]byte, 4096)
	// Four queries in flight at a time, answered back to back: far above
	// 1,000 a second in every millisecond, until a trial ends.
	for range 4 {
		_, err = conn.Write(wire)
		require.NoError(t, err)
	}
	for srv.Stats().UDPPauseTrials == 0 {
		_, err := conn.Read(buf)
		require.NoError(t, err, "no trial ended within the guard")
		_, err = conn.Write(wire)
		require.NoError(t, err)
	}
	st := srv.Stats()
	assert.LessOrEqual(t, st.UDPPauseChosen, st.UDPPauseTrials)
}
