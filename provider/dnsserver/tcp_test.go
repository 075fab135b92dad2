package dnsserver_test

import (
	"encoding/binary"
	"io"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/gslbkit/gslb/provider/dnsserver"
	"github.com/miekg/dns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// tcpQuery writes one length-prefixed query for name/qtype with id.
func tcpQuery(t *testing.T, c net.Conn, id uint16, name string, qtype uint16) {
	t.Helper()
	m := query(name, qtype)
	m.Id = id
	b, err := m.Pack()
	require.NoError(t, err)
	_, err = c.Write(append([]byte{byte(len(b) >> 8), byte(len(b))}, b...))
	require.NoError(t, err)
}

// tcpReply reads one length-prefixed reply.
func tcpReply(t *testing.T, c net.Conn) *dns.Msg {
	t.Helper()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(30*time.Second)))
	var hdr [2]byte
	_, err := io.ReadFull(c, hdr[:])
	require.NoError(t, err)
	b := make([]byte, binary.BigEndian.Uint16(hdr[:]))
	_, err = io.ReadFull(c, b)
	require.NoError(t, err)
	m := new(dns.Msg)
	require.NoError(t, m.Unpack(b))
	return m
}

// closedByServer waits (hang guard 30 s) for the server to close c.
func closedByServer(t *testing.T, c net.Conn) bool {
	t.Helper()
	require.NoError(t, c.SetReadDeadline(time.Now().Add(30*time.Second)))
	var b [1]byte
	_, err := c.Read(b[:])
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return false
	}
	return err != nil
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// TestServerTCPPipelined sends three queries back to back on one
// connection before reading: the answers come back in order (RFC 7766).
func TestServerTCPPipelined(t *testing.T) {
	srv := startServer(t, fixture(t), func(*dnsserver.ServerConfig) {})
	c := dial(t, srv.Addr())
	tcpQuery(t, c, 1, "www.example.test.", dns.TypeA)
	tcpQuery(t, c, 2, "nope.example.test.", dns.TypeA)
	tcpQuery(t, c, 3, "t.example.test.", dns.TypeTXT)
	for i, rcode := range []int{dns.RcodeSuccess, dns.RcodeNameError, dns.RcodeSuccess} {
		m := tcpReply(t, c)
		assert.Equal(t, uint16(i+1), m.Id)
		assert.Equal(t, rcode, m.Rcode)
	}
	st := srv.Stats()
	assert.EqualValues(t, 2, st.Responses[dns.RcodeSuccess])
	assert.EqualValues(t, 1, st.Responses[dns.RcodeNameError])
}

// TestServerTCPEvictsIdleLongest fills a table of 3 connections: a fourth
// takes the place of the one idle longest, which the server closes; the
// others, and the newcomer, are still answered.
func TestServerTCPEvictsIdleLongest(t *testing.T) {
	srv := startServer(t, fixture(t), func(c *dnsserver.ServerConfig) { c.MaxTCPConns = 3 })
	conns := make([]net.Conn, 3)
	for i := range conns {
		conns[i] = dial(t, srv.Addr())
		// Each answers once, so their idle times are ordered 0 < 1 < 2.
		tcpQuery(t, conns[i], uint16(i), "www.example.test.", dns.TypeA)
		tcpReply(t, conns[i])
	}
	// Touch conns[0] again: conns[1] is now the idle longest.
	tcpQuery(t, conns[0], 10, "www.example.test.", dns.TypeA)
	tcpReply(t, conns[0])

	newcomer := dial(t, srv.Addr())
	tcpQuery(t, newcomer, 20, "www.example.test.", dns.TypeA)
	assert.Equal(t, uint16(20), tcpReply(t, newcomer).Id)
	assert.True(t, closedByServer(t, conns[1]), "the connection idle longest is closed")
	for _, i := range []int{0, 2} {
		tcpQuery(t, conns[i], uint16(30+i), "www.example.test.", dns.TypeA)
		assert.Equal(t, uint16(30+i), tcpReply(t, conns[i]).Id)
	}
	st := srv.Stats()
	assert.EqualValues(t, 1, st.TCPEvicted)
	assert.Equal(t, 3, st.TCPLimit)
	assert.True(t, st.TCPFull())
}

// TestServerTCPPerSourceLimit closes a connection over the per-source
// limit at once, and counts it.
func TestServerTCPPerSourceLimit(t *testing.T) {
	srv := startServer(t, fixture(t), func(c *dnsserver.ServerConfig) { c.MaxTCPConnsPerSource = 2 })
	a, b := dial(t, srv.Addr()), dial(t, srv.Addr())
	for i, c := range []net.Conn{a, b} {
		tcpQuery(t, c, uint16(i), "www.example.test.", dns.TypeA)
		tcpReply(t, c)
	}
	third := dial(t, srv.Addr())
	assert.True(t, closedByServer(t, third))
	assert.EqualValues(t, 1, srv.Stats().TCPRefused)
	tcpQuery(t, a, 9, "www.example.test.", dns.TypeA)
	assert.Equal(t, uint16(9), tcpReply(t, a).Id)
}

// TestServerTCPIdleConnectionsAreCheap holds 200 idle connections and
// reports the heap they take: a connection waiting for a query keeps no
// message buffer (the old loop kept 64 KiB each).
func TestServerTCPIdleConnectionsAreCheap(t *testing.T) {
	srv := startServer(t, fixture(t), func(c *dnsserver.ServerConfig) { c.MaxTCPConns = 1000 })
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	const n = 200
	for i := range n {
		c := dial(t, srv.Addr())
		// One query each, so every connection has read something.
		tcpQuery(t, c, uint16(i), "big.example.test.", dns.TypeTXT)
		tcpReply(t, c)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	per := (int64(after.HeapInuse) - int64(before.HeapInuse)) / n
	t.Logf("heap per idle connection (server and client side together): %d bytes", per)
	assert.Less(t, per, int64(16<<10), "an idle connection must not keep a message-sized buffer")
	assert.Equal(t, n, srv.Stats().TCPOpen)
}

// TestServerTCPMalformedLength closes a connection whose length prefix
// cannot hold a DNS header.
func TestServerTCPMalformedLength(t *testing.T) {
	srv := startServer(t, fixture(t), func(*dnsserver.ServerConfig) {})
	c := dial(t, srv.Addr())
	_, err := c.Write([]byte{0, 3, 1, 2, 3})
	require.NoError(t, err)
	assert.True(t, closedByServer(t, c))
}
