//go:build linux

package dnsserver_test

import (
	"net"
	"testing"
	"time"

	"github.com/gslbkit/gslb/provider/dnsserver"
	"github.com/miekg/dns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestServerRRLFlood floods a server that limits responses to 5 a second
// with 300 identical UDP queries from one source: it answers at most its
// bucket (4 s of tokens) plus the refill, sends every second limited
// response truncated so a real client would retry over TCP, and drops the
// rest; a query from another source (127.0.0.2: Linux routes all of
// 127.0.0.0/8 to the loopback interface, and the test groups clients by
// /32) is answered in full all the while.
func TestServerRRLFlood(t *testing.T) {
	const rate, flood = 5, 300
	srv := startServer(t, fixture(t), func(c *dnsserver.ServerConfig) {
		c.UDPWorkers = 1 // replies leave in the order queries arrived
		c.RRL = dnsserver.RRLConfig{Rate: rate, Slip: 2, IPv4Prefix: 32}
	})
	server, err := net.ResolveUDPAddr("udp", srv.Addr())
	require.NoError(t, err)
	attacker, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	require.NoError(t, err)
	defer attacker.Close()
	bystander, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 2)})
	require.NoError(t, err)
	defer bystander.Close()

	pack := func(id uint16, name string) []byte {
		m := query(name, dns.TypeA)
		m.Id = id
		b, err := m.Pack()
		require.NoError(t, err)
		return b
	}
	start := time.Now()
	for i := range flood {
		_, err := attacker.WriteToUDP(pack(uint16(i+1), "www.example.test."), server)
		require.NoError(t, err)
	}
	// A query for another name from the same source has a bucket of its
	// own: its answer marks the end of the flood's replies.
	_, err = attacker.WriteToUDP(pack(0xFFFF, "a.b.example.test."), server)
	require.NoError(t, err)
	_, err = bystander.WriteToUDP(pack(42, "www.example.test."), server)
	require.NoError(t, err)

	var full, truncated int
	buf := make([]byte, 65535)
	require.NoError(t, attacker.SetReadDeadline(time.Now().Add(30*time.Second)))
	for {
		n, _, err := attacker.ReadFromUDP(buf)
		require.NoError(t, err, "hang guard: the end marker's answer never came")
		m := new(dns.Msg)
		require.NoError(t, m.Unpack(buf[:n]))
		if m.Id == 0xFFFF {
			assert.NotEmpty(t, m.Answer)
			break
		}
		if m.Truncated {
			assert.Empty(t, m.Answer)
			assert.Len(t, m.Question, 1, "a slipped reply keeps the question")
			truncated++
		} else {
			assert.Len(t, m.Answer, 2)
			full++
		}
	}
	elapsed := time.Since(start)
	require.NoError(t, bystander.SetReadDeadline(time.Now().Add(30*time.Second)))
	n, _, err := bystander.ReadFromUDP(buf)
	require.NoError(t, err)
	m := new(dns.Msg)
	require.NoError(t, m.Unpack(buf[:n]))
	assert.False(t, m.Truncated)
	assert.Len(t, m.Answer, 2, "another source is not limited")

	st := srv.Stats()
	t.Logf("flood of %d in %v: %d answered, %d truncated, %d dropped; limiter %+v", flood, elapsed, full, truncated, flood-full-truncated, st.RRL)
	allowed := 4*rate + rate*(int(elapsed/time.Second)+1)
	assert.GreaterOrEqual(t, full, 4*rate, "a fresh bucket holds four seconds of tokens")
	assert.LessOrEqual(t, full, allowed)
	limited := flood - full
	assert.InDelta(t, limited/2, truncated, 1, "every second limited response slips")
	assert.EqualValues(t, truncated, st.RRL.Slipped)
	assert.EqualValues(t, limited-truncated, st.RRL.Dropped)
}
