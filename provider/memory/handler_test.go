package memory_test

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/gslbkit/gslb/internal/testrecords"
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

type want struct {
	rcode  int
	answer []string // "name type data"
	ns     []string
	aa     bool
	tc     bool
}

func query(name string, qtype uint16) *dns.Msg {
	m := new(dns.Msg)
	m.SetQuestion(name, qtype)
	return m
}

const soaLine = "example.test. SOA ns1.example.test. hostmaster.example.test. 2 60 60 600 30"

func TestRespond(t *testing.T) {
	p := fixture(t)
	tests := []struct {
		name  string
		q     *dns.Msg
		want  want
		check func(t *testing.T, m *dns.Msg)
	}{
		{"A", query("www.example.test.", dns.TypeA),
			want{aa: true, answer: []string{"www.example.test. A 192.0.2.1", "www.example.test. A 192.0.2.2"}}, nil},
		{"AAAA", query("www.example.test.", dns.TypeAAAA),
			want{aa: true, answer: []string{"www.example.test. AAAA 2001:db8::1"}}, nil},
		{"question echoed as asked", query("WwW.ExAmple.TEST.", dns.TypeAAAA),
			want{aa: true, answer: []string{"WwW.ExAmple.TEST. AAAA 2001:db8::1"}},
			func(t *testing.T, m *dns.Msg) { assert.Equal(t, "WwW.ExAmple.TEST.", m.Question[0].Name) }},
		{"SOA at apex", query("example.test.", dns.TypeSOA), want{aa: true, answer: []string{soaLine}}, nil},
		{"NS at apex with glue", query("example.test.", dns.TypeNS),
			want{aa: true, answer: []string{"example.test. NS ns1.example.test."}},
			func(t *testing.T, m *dns.Msg) {
				assert.Equal(t, []string{"ns1.example.test. A 192.0.2.53"}, testrecords.Lines(m.Extra))
			}},
		{"CNAME chain followed", query("app.example.test.", dns.TypeA),
			want{aa: true, answer: []string{"app.example.test. CNAME alias.example.test.", "alias.example.test. CNAME www.example.test.",
				"www.example.test. A 192.0.2.1", "www.example.test. A 192.0.2.2"}}, nil},
		{"CNAME query returns the CNAME", query("app.example.test.", dns.TypeCNAME),
			want{aa: true, answer: []string{"app.example.test. CNAME alias.example.test."}}, nil},
		{"CNAME chain to NODATA", query("app.example.test.", dns.TypeTXT),
			want{aa: true, answer: []string{"app.example.test. CNAME alias.example.test.", "alias.example.test. CNAME www.example.test."},
				ns: []string{soaLine}}, nil},
		{"CNAME loop stops", query("loop1.example.test.", dns.TypeA),
			want{aa: true, answer: []string{"loop1.example.test. CNAME loop2.example.test.", "loop2.example.test. CNAME loop1.example.test."}}, nil},
		{"CNAME out of zone is not followed", query("out.example.test.", dns.TypeA),
			want{aa: true, answer: []string{"out.example.test. CNAME www.example.net."}}, nil},
		{"TXT", query("t.example.test.", dns.TypeTXT), want{aa: true, answer: []string{`t.example.test. TXT "hello world"`}}, nil},
		{"NODATA", query("t.example.test.", dns.TypeA), want{aa: true, ns: []string{soaLine}}, nil},
		{"empty non-terminal is NODATA", query("b.example.test.", dns.TypeA), want{aa: true, ns: []string{soaLine}}, nil},
		{"NXDOMAIN", query("nope.example.test.", dns.TypeA), want{aa: true, rcode: dns.RcodeNameError, ns: []string{soaLine}}, nil},
		{"NODATA at apex", query("example.test.", dns.TypeA), want{aa: true, ns: []string{soaLine}}, nil},
		{"outside every zone is REFUSED", query("www.example.net.", dns.TypeA), want{rcode: dns.RcodeRefused}, nil},
		{"other zone served", query("other.test.", dns.TypeNS), want{aa: true, answer: []string{"other.test. NS ns1.other.test."}}, nil},
		{"AXFR over UDP not implemented", query("example.test.", dns.TypeAXFR), want{rcode: dns.RcodeNotImplemented}, nil},
		{"CHAOS refused", func() *dns.Msg {
			m := query("example.test.", dns.TypeTXT)
			m.Question[0].Qclass = dns.ClassCHAOS
			return m
		}(),
			want{rcode: dns.RcodeRefused}, nil},
		{"two questions FORMERR", func() *dns.Msg {
			m := query("example.test.", dns.TypeA)
			m.Question = append(m.Question, m.Question[0])
			return m
		}(), want{rcode: dns.RcodeFormatError}, nil},
		{"no question FORMERR", func() *dns.Msg { m := query("example.test.", dns.TypeA); m.Question = nil; return m }(),
			want{rcode: dns.RcodeFormatError}, nil},
		{"NOTIFY not implemented", func() *dns.Msg { m := query("example.test.", dns.TypeSOA); m.Opcode = dns.OpcodeNotify; return m }(),
			want{rcode: dns.RcodeNotImplemented}, nil},
		{"big answer truncated over UDP without EDNS", query("big.example.test.", dns.TypeTXT), want{aa: true, tc: true}, nil},
		{"big answer fits with EDNS", func() *dns.Msg { m := query("big.example.test.", dns.TypeTXT); m.SetEdns0(1232, false); return m }(),
			want{aa: true, answer: []string{
				`big.example.test. TXT "` + strings.Repeat("x", 250) + `"`,
				`big.example.test. TXT "` + strings.Repeat("y", 250) + `"`,
				`big.example.test. TXT "` + strings.Repeat("z", 250) + `"`}},
			func(t *testing.T, m *dns.Msg) {
				opt := m.IsEdns0()
				require.NotNil(t, opt)
				assert.Equal(t, uint16(1232), opt.UDPSize())
			}},
		{"EDNS version 1 is BADVERS", func() *dns.Msg {
			m := query("www.example.test.", dns.TypeA)
			m.SetEdns0(1232, true)
			m.IsEdns0().SetVersion(1)
			return m
		}(), want{rcode: dns.RcodeBadVers}, nil},
		{"DO bit echoed", func() *dns.Msg { m := query("www.example.test.", dns.TypeAAAA); m.SetEdns0(1232, true); return m }(),
			want{aa: true, answer: []string{"www.example.test. AAAA 2001:db8::1"}},
			func(t *testing.T, m *dns.Msg) { assert.True(t, m.IsEdns0().Do()) }},
		{"ANY at a name over UDP is one RRset (RFC 8482)", query("www.example.test.", dns.TypeANY),
			want{aa: true, answer: []string{"www.example.test. A 192.0.2.1", "www.example.test. A 192.0.2.2"}}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			wire, err := tc.q.Pack()
			require.NoError(t, err)
			out := p.RespondWire(wire, netip.MustParseAddr("127.0.0.1"), false)
			require.NotNil(t, out)
			m := new(dns.Msg)
			require.NoError(t, m.Unpack(out))
			assert.Equal(t, tc.q.Id, m.Id)
			assert.True(t, m.Response)
			assert.Equal(t, tc.want.rcode, m.Rcode, dns.RcodeToString[m.Rcode])
			assert.Equal(t, tc.want.aa, m.Authoritative, "AA")
			assert.Equal(t, tc.want.tc, m.Truncated, "TC")
			assert.Equal(t, tc.want.answer, testrecords.Lines(m.Answer))
			assert.Equal(t, tc.want.ns, testrecords.Lines(m.Ns))
			if tc.check != nil {
				tc.check(t, m)
			}
		})
	}
}

func TestNegativeTTL(t *testing.T) {
	p := fixture(t)
	m := p.Respond(query("nope.example.test.", dns.TypeA), netip.Addr{}, false)
	require.Len(t, m.Ns, 1)
	assert.Equal(t, uint32(30), m.Ns[0].Header().Ttl, "min(SOA TTL 60, minimum 30)")
}

func TestRespondIgnoresResponses(t *testing.T) {
	p := fixture(t)
	q := query("www.example.test.", dns.TypeA)
	q.Response = true
	wire, _ := q.Pack()
	assert.Nil(t, p.RespondWire(wire, netip.Addr{}, false))
	assert.Nil(t, p.RespondWire([]byte{1, 2, 3}, netip.Addr{}, false))
	garbage := append([]byte{0xab, 0xcd, 0x01, 0x00}, make([]byte, 20)...)
	garbage[5] = 3 // three questions, none present
	out := p.RespondWire(garbage, netip.Addr{}, false)
	require.NotNil(t, out)
	m := new(dns.Msg)
	require.NoError(t, m.Unpack(out))
	assert.Equal(t, dns.RcodeFormatError, m.Rcode)
	assert.Equal(t, uint16(0xabcd), m.Id)
}

func TestAnswerFunc(t *testing.T) {
	p := fixture(t)
	var gotClient netip.Prefix
	var gotName, gotType string
	// Keep only the address whose last byte matches the client's.
	p.SetAnswerFunc("WWW.example.test", func(client netip.Prefix, name, qtype string, rrs []libdns.Record) ([]libdns.Record, int) {
		gotClient, gotName, gotType = client, name, qtype
		for _, r := range rrs {
			if ad, ok := r.(libdns.Address); ok && ad.IP.Is4() && ad.IP.As4()[3] == client.Addr().As4()[3] {
				return []libdns.Record{r}, client.Bits()
			}
		}
		return nil, client.Bits()
	})
	ecs := func(addr string, bits uint8) *dns.Msg {
		m := query("app.example.test.", dns.TypeA)
		m.SetEdns0(1232, false)
		m.IsEdns0().Option = append(m.IsEdns0().Option, &dns.EDNS0_SUBNET{Code: dns.EDNS0SUBNET, Family: 1, SourceNetmask: bits, Address: netip.MustParseAddr(addr).AsSlice()})
		return m
	}
	tests := []struct {
		name       string
		q          *dns.Msg
		src        string
		wantClient string
		want       []string
		wantScope  int
	}{
		{"source address", query("www.example.test.", dns.TypeA), "198.51.100.2", "198.51.100.2/32",
			[]string{"www.example.test. A 192.0.2.2"}, -1},
		{"no opinion answers everything", query("www.example.test.", dns.TypeA), "198.51.100.7", "198.51.100.7/32",
			[]string{"www.example.test. A 192.0.2.1", "www.example.test. A 192.0.2.2"}, -1},
		{"client subnet at the end of a chain", ecs("203.0.113.1", 32), "127.0.0.1", "203.0.113.1/32",
			[]string{"app.example.test. CNAME alias.example.test.", "alias.example.test. CNAME www.example.test.", "www.example.test. A 192.0.2.1"}, 32},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := p.Respond(tc.q, netip.MustParseAddr(tc.src), false)
			assert.Equal(t, tc.wantClient, gotClient.String())
			assert.Equal(t, "www.example.test.", gotName)
			assert.Equal(t, "A", gotType)
			assert.Equal(t, tc.want, testrecords.Lines(m.Answer))
			if tc.wantScope >= 0 {
				opt := m.IsEdns0()
				require.NotNil(t, opt)
				require.Len(t, opt.Option, 1)
				assert.Equal(t, uint8(tc.wantScope), opt.Option[0].(*dns.EDNS0_SUBNET).SourceScope)
			}
		})
	}
	p.SetAnswerFunc("www.example.test.", nil)
	m := p.Respond(query("www.example.test.", dns.TypeA), netip.MustParseAddr("198.51.100.2"), false)
	assert.Len(t, m.Answer, 2, "hook removed")

	// A zone-wide hook that reverses the order.
	p.SetZoneAnswerFunc(zone, func(_ netip.Prefix, _, _ string, rrs []libdns.Record) ([]libdns.Record, int) {
		out := make([]libdns.Record, len(rrs))
		for i, r := range rrs {
			out[len(rrs)-1-i] = r
		}
		return out, 0
	})
	m = p.Respond(query("www.example.test.", dns.TypeA), netip.MustParseAddr("198.51.100.2"), false)
	assert.Equal(t, []string{"www.example.test. A 192.0.2.2", "www.example.test. A 192.0.2.1"}, testrecords.Lines(m.Answer))
}
