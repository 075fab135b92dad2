package dnsserver

import (
	"net"
	"testing"

	"github.com/miekg/dns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTruncateToTC cuts replies to header, question and OPT: with an OPT
// that carries an ECS option (kept byte for byte), without OPT, and with
// records in every section before the OPT. Malformed or question-less
// replies give nil.
func TestTruncateToTC(t *testing.T) {
	reply := func(edns bool) *dns.Msg {
		m := new(dns.Msg)
		m.SetQuestion("many.example.test.", dns.TypeA)
		m.Response, m.Authoritative, m.Id = true, true, 0xBEEF
		for i := range 20 {
			m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: "many.example.test.", Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 30}, A: net.IPv4(192, 0, 2, byte(i+1))})
		}
		m.Ns = []dns.RR{&dns.NS{Hdr: dns.RR_Header{Name: "example.test.", Rrtype: dns.TypeNS, Class: dns.ClassINET, Ttl: 30}, Ns: "ns1.example.test."}}
		m.Extra = []dns.RR{&dns.A{Hdr: dns.RR_Header{Name: "ns1.example.test.", Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 30}, A: net.IPv4(192, 0, 2, 53)}}
		if edns {
			m.SetEdns0(1232, false)
			opt := m.IsEdns0()
			opt.Option = append(opt.Option, &dns.EDNS0_SUBNET{Code: dns.EDNS0SUBNET, Family: 1, SourceNetmask: 24, SourceScope: 24, Address: net.IPv4(10, 1, 2, 0)})
		}
		return m
	}
	for _, edns := range []bool{true, false} {
		m := reply(edns)
		b, err := m.Pack()
		require.NoError(t, err)
		full := len(b)
		got := truncateToTC(b)
		require.NotNil(t, got)
		assert.Less(t, len(got), full)
		out := new(dns.Msg)
		require.NoError(t, out.Unpack(got), "a whole message")
		assert.True(t, out.Truncated)
		assert.Equal(t, uint16(0xBEEF), out.Id)
		assert.True(t, out.Authoritative)
		assert.Equal(t, m.Question, out.Question)
		assert.Empty(t, out.Answer)
		assert.Empty(t, out.Ns)
		if !edns {
			assert.Empty(t, out.Extra)
			continue
		}
		require.Len(t, out.Extra, 1, "only the OPT record")
		opt := out.IsEdns0()
		require.NotNil(t, opt)
		assert.EqualValues(t, 1232, opt.UDPSize())
		require.Len(t, opt.Option, 1)
		ecs, ok := opt.Option[0].(*dns.EDNS0_SUBNET)
		require.True(t, ok)
		assert.Equal(t, "10.1.2.0", ecs.Address.String())
		assert.EqualValues(t, 24, ecs.SourceScope)
	}

	b, err := reply(true).Pack()
	require.NoError(t, err)
	assert.Nil(t, truncateToTC(b[:len(b)-3]), "a cut message")
	assert.Nil(t, truncateToTC(b[:11]), "shorter than a header")
	noQ := new(dns.Msg)
	noQ.Response = true
	b, err = noQ.Pack()
	require.NoError(t, err)
	assert.Nil(t, truncateToTC(b), "no question")
}

// FuzzTruncateToTC feeds arbitrary bytes to truncateToTC: it never panics,
// and what it returns is no longer than what it was given, has TC set, one
// question and nothing but an OPT record after it.
func FuzzTruncateToTC(f *testing.F) {
	m := new(dns.Msg)
	m.SetQuestion("www.example.test.", dns.TypeA)
	m.Answer = []dns.RR{&dns.A{Hdr: dns.RR_Header{Name: "www.example.test.", Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 30}, A: net.IPv4(192, 0, 2, 1)}}
	m.SetEdns0(1232, false)
	b, err := m.Pack()
	require.NoError(f, err)
	f.Add(b)
	f.Add(b[:20])
	f.Fuzz(func(t *testing.T, in []byte) {
		n := len(in)
		out := truncateToTC(in)
		if out == nil {
			return
		}
		require.LessOrEqual(t, len(out), n)
		require.GreaterOrEqual(t, len(out), 12)
		assert.NotZero(t, out[2]&0x02, "TC")
		assert.Equal(t, []byte{0, 1, 0, 0, 0, 0}, out[4:10])
		assert.LessOrEqual(t, int(out[10])<<8|int(out[11]), 1)
	})
}
