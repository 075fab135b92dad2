package dnsserver_test

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/gslbkit/gslb/provider/dnsserver"
	"github.com/gslbkit/gslb/provider/memory"
	"github.com/miekg/dns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// panicky answers through p, except that a query naming "boom" panics (a
// bug in the answerer).
type panicky struct{ p *memory.Provider }

func (a panicky) RespondUDP(q, buf []byte, src netip.Addr) []byte {
	if strings.Contains(strings.ToLower(string(q)), "boom") {
		panic("boom")
	}
	return a.p.RespondUDP(q, buf, src)
}

func (a panicky) RespondTCP(q, buf []byte, src netip.Addr) []byte {
	if strings.Contains(strings.ToLower(string(q)), "boom") {
		panic("boom")
	}
	return a.p.RespondTCP(q, buf, src)
}

// TestServerSurvivesAPanic: a query whose answering panics costs that query
// its UDP reply and that TCP connection, not the server: other queries are
// answered, and Stats counts the panics.
func TestServerSurvivesAPanic(t *testing.T) {
	s, err := dnsserver.NewServer(panicky{fixture(t)}, dnsserver.ServerConfig{Addr: "127.0.0.1:0"}, nil)
	require.NoError(t, err)
	require.NoError(t, s.Listen())
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() { cancel(); require.NoError(t, <-done) })

	for _, network := range []string{"udp", "tcp"} {
		c := &dns.Client{Net: network, Timeout: 500 * time.Millisecond}
		if r, _, err := c.Exchange(query("boom.example.test.", dns.TypeA), s.Addr()); err == nil && r != nil {
			t.Errorf("%s: the panicking query answered %v", network, r)
		}
		c.Timeout = 5 * time.Second
		r, _, err := c.Exchange(query("www.example.test.", dns.TypeA), s.Addr())
		require.NoError(t, err, network)
		assert.Len(t, r.Answer, 2, network)
	}
	assert.GreaterOrEqual(t, s.Stats().Panics, uint64(2), "one UDP, one TCP")
}

// TestServerCloseWithoutRun: Close releases the sockets Listen bound when
// Run never served them; the address can be bound again, and Listen and
// Run refuse afterwards.
func TestServerCloseWithoutRun(t *testing.T) {
	s, err := dnsserver.NewServer(fixture(t), dnsserver.ServerConfig{Addr: "127.0.0.1:0"}, nil)
	require.NoError(t, err)
	require.NoError(t, s.Listen())
	addr := s.Addr()
	require.NoError(t, s.Close())
	u, err := net.ListenPacket("udp", addr)
	require.NoError(t, err, "the UDP port is free again")
	u.Close()
	l, err := net.Listen("tcp", addr)
	require.NoError(t, err, "the TCP port is free again")
	l.Close()
	assert.ErrorIs(t, s.Listen(), dnsserver.ErrClosed)
	assert.ErrorIs(t, s.Run(context.Background()), dnsserver.ErrClosed)
	assert.NoError(t, s.Close(), "a second Close does nothing")

	never, err := dnsserver.NewServer(fixture(t), dnsserver.ServerConfig{Addr: "127.0.0.1:0"}, nil)
	require.NoError(t, err)
	assert.NoError(t, never.Close(), "Close of a server never bound")
}

// TestServerRunEndedBeforeItBegan: Run with a context already ended
// serves nothing, not even the queries waiting in the sockets Listen bound
// (a caller stopping before it meant to answer must not have its queries
// answered on the way out), releases the sockets and returns nil.
func TestServerRunEndedBeforeItBegan(t *testing.T) {
	s, err := dnsserver.NewServer(fixture(t), dnsserver.ServerConfig{Addr: "127.0.0.1:0"}, nil)
	require.NoError(t, err)
	require.NoError(t, s.Listen())
	c, err := net.Dial("udp", s.Addr())
	require.NoError(t, err)
	defer c.Close()
	q, err := query("www.example.test.", dns.TypeA).Pack()
	require.NoError(t, err)
	for range 3 {
		_, err = c.Write(q)
		require.NoError(t, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	require.NoError(t, s.Run(ctx))
	// A reply on loopback is in c's queue once the server's send returns,
	// and Run waits for its loops: nothing queued now means nothing sent.
	// (A write to the closed port makes the next read fail with
	// "connection refused" first, whatever is queued; none is made.)
	require.NoError(t, c.SetReadDeadline(time.Now()))
	n, err := c.Read(make([]byte, 512))
	var ne net.Error
	require.Truef(t, errors.As(err, &ne) && ne.Timeout(), "a reply was sent (%d bytes, err %v)", n, err)
	u, err := net.ListenPacket("udp", s.Addr())
	require.NoError(t, err, "the UDP port is free again")
	u.Close()
	assert.ErrorIs(t, s.Run(context.Background()), dnsserver.ErrRunning)
	assert.NoError(t, s.Close())
}

// TestServerRunTwice: a Server runs once; Close ends a running Run and
// waits for it.
func TestServerRunTwice(t *testing.T) {
	s, err := dnsserver.NewServer(fixture(t), dnsserver.ServerConfig{Addr: "127.0.0.1:0"}, nil)
	require.NoError(t, err)
	require.NoError(t, s.Listen())
	done := make(chan error, 1)
	go func() { done <- s.Run(context.Background()) }()
	// Answered over TCP once Run serves (the listener queues connections
	// before that, so the exchange waits for Run rather than failing).
	_, _, err = (&dns.Client{Net: "tcp", Timeout: 10 * time.Second}).Exchange(query("www.example.test.", dns.TypeA), s.Addr())
	require.NoError(t, err)
	assert.ErrorIs(t, s.Run(context.Background()), dnsserver.ErrRunning)
	assert.ErrorIs(t, s.SetTransfer(nil), dnsserver.ErrRunning)
	require.NoError(t, s.Close())
	assert.NoError(t, <-done)
	assert.ErrorIs(t, s.Run(context.Background()), dnsserver.ErrClosed)
}

// TestZeroValues: the zero Server is not usable and says so; no method
// panics. A zero ServerConfig and RRLConfig are valid; a zero RateLimiter
// limits nothing.
func TestZeroValues(t *testing.T) {
	var s dnsserver.Server
	assert.ErrorIs(t, s.Listen(), dnsserver.ErrNoAnswerer)
	assert.ErrorIs(t, s.Run(context.Background()), dnsserver.ErrNoAnswerer)
	assert.ErrorIs(t, s.SetTransfer(nil), dnsserver.ErrNoAnswerer)
	assert.NoError(t, s.Close())
	assert.Empty(t, s.Addr())
	assert.Equal(t, dnsserver.ServerStats{}, s.Stats())
	assert.Zero(t, s.TCPLimit())
	var ns *dnsserver.Server
	assert.ErrorIs(t, ns.Run(context.Background()), dnsserver.ErrNoAnswerer)
	_, err := dnsserver.NewServer(nil, dnsserver.ServerConfig{}, nil)
	assert.ErrorIs(t, err, dnsserver.ErrNoAnswerer)

	assert.NoError(t, dnsserver.ServerConfig{}.Validate())
	assert.NoError(t, dnsserver.RRLConfig{}.Validate())
	var l dnsserver.RateLimiter
	assert.Equal(t, dnsserver.RRLSend, l.Check(time.Now(), netip.MustParseAddr("192.0.2.1"), dnsserver.RRLPositive, []byte{0}))
	assert.Equal(t, dnsserver.RRLStats{}, l.Stats())
}

// TestConfigMessages pins the message of a few fields: one shape across
// the module (internal/fielderr), nested configs under their path.
func TestConfigMessages(t *testing.T) {
	for _, tc := range []struct {
		set  func(*dnsserver.ServerConfig)
		want string
	}{
		{func(c *dnsserver.ServerConfig) { c.Addr = "localhost:53" }, `dnsserver: invalid config: addr = "localhost:53": allowed an IP:port such as 127.0.0.1:53`},
		{func(c *dnsserver.ServerConfig) { c.TCPIdleTimeout = time.Millisecond }, "dnsserver: invalid config: tcpIdleTimeout = 1ms: allowed [100ms, 10m]"},
		{func(c *dnsserver.ServerConfig) { c.UDPCoalesceRate = 10 }, "dnsserver: invalid config: udpCoalesceRate = 10: allowed [1000, 10000000]"},
		{func(c *dnsserver.ServerConfig) { c.UDPWorkers = 300 }, "dnsserver: invalid config: udpWorkers = 300: allowed [0, 256] (0: GOMAXPROCS-1)"},
		{func(c *dnsserver.ServerConfig) { c.RRL.Rate, c.RRL.Slip = 20, 500 }, "dnsserver: invalid config: rrl.slip = 500: allowed [1, 100]"},
	} {
		c := dnsserver.DefaultServerConfig()
		tc.set(&c)
		err := c.Validate()
		require.Error(t, err)
		assert.Equal(t, tc.want, err.Error())
		assert.True(t, errors.Is(err, dnsserver.ErrInvalidConfig))
		var fe *dnsserver.FieldError
		assert.True(t, errors.As(err, &fe))
	}
	// Rows kept from memory's config test.
	for name, c := range map[string]struct {
		set   func(*dnsserver.ServerConfig)
		field string
	}{
		"default":                  {func(*dnsserver.ServerConfig) {}, ""},
		"shutdown":                 {func(c *dnsserver.ServerConfig) { c.ShutdownTimeout = time.Hour }, "shutdownTimeout"},
		"coalesce":                 {func(c *dnsserver.ServerConfig) { c.UDPCoalesce = 2 * time.Millisecond }, "udpCoalesce"},
		"coalesce negative":        {func(c *dnsserver.ServerConfig) { c.UDPCoalesce = -time.Microsecond }, "udpCoalesce"},
		"coalesce off, rate unset": {func(c *dnsserver.ServerConfig) { c.UDPCoalesce, c.UDPCoalesceRate = 0, 0 }, ""},
		"maxTCPConns":              {func(c *dnsserver.ServerConfig) { c.MaxTCPConns = -1 }, "maxTCPConns"},
		"maxTCPConnsPerSource":     {func(c *dnsserver.ServerConfig) { c.MaxTCPConnsPerSource = -2 }, "maxTCPConnsPerSource"},
	} {
		cfg := dnsserver.DefaultServerConfig()
		c.set(&cfg)
		err := cfg.Validate()
		if c.field == "" {
			assert.NoError(t, err, name)
			continue
		}
		var fe *dnsserver.FieldError
		if assert.ErrorAs(t, err, &fe, name) {
			assert.Equal(t, c.field, fe.Path, name)
		}
	}
}
