package memory_test

import (
	"net/netip"
	"testing"

	"github.com/gslbkit/gslb/provider/memory"
	"github.com/libdns/libdns"
	"github.com/miekg/dns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestAnswerRFC checks the wildcard, delegation and wire-hygiene answers on
// diffZone without knotd (TestKnotDifferential compares them with Knot).
func TestAnswerRFC(t *testing.T) {
	p := new(memory.Provider)
	loadZone(t, p, "example.test.", diffZone+manyAddrs())
	src := netip.MustParseAddr("127.0.0.1")
	ask := func(t *testing.T, q []byte, tcp bool) *dns.Msg {
		t.Helper()
		m := new(dns.Msg)
		require.NoError(t, m.Unpack(p.RespondWire(q, src, tcp)))
		return m
	}
	q := func(name string, qt uint16) []byte { return mkQuery(name+".example.test.", qt, 1232, false) }
	lines := func(rrs []dns.RR) []string {
		var out []string
		for _, rr := range rrs {
			if rr.Header().Rrtype != dns.TypeOPT {
				out = append(out, rr.String())
			}
		}
		return out
	}
	t.Run("wildcard synthesises", func(t *testing.T) {
		m := ask(t, q("a.b.wild", dns.TypeA), false)
		assert.True(t, m.Authoritative)
		assert.Equal(t, []string{"a.b.wild.example.test.\t300\tIN\tA\t192.0.2.100"}, lines(m.Answer))
	})
	t.Run("existing name blocks the wildcard", func(t *testing.T) {
		m := ask(t, q("x.wild", dns.TypeTXT), false)
		assert.Equal(t, dns.RcodeSuccess, m.Rcode)
		assert.Empty(t, m.Answer)
		assert.Equal(t, dns.RcodeNameError, ask(t, q("y.x.wild", dns.TypeA), false).Rcode)
	})
	t.Run("empty non-terminal blocks the wildcard", func(t *testing.T) {
		assert.Equal(t, dns.RcodeNameError, ask(t, q("z.ent.deep", dns.TypeA), false).Rcode)
		assert.Len(t, ask(t, q("foo.deep", dns.TypeA), false).Answer, 1)
	})
	t.Run("wildcard CNAME", func(t *testing.T) {
		m := ask(t, q("a.b.wc", dns.TypeA), false)
		assert.Equal(t, []string{"a.b.wc.example.test.\t300\tIN\tCNAME\twww.example.test.",
			"www.example.test.\t300\tIN\tA\t192.0.2.1", "www.example.test.\t300\tIN\tA\t192.0.2.2"}, lines(m.Answer))
	})
	t.Run("NODATA at a wildcard", func(t *testing.T) {
		m := ask(t, q("foo.nod", dns.TypeA), false)
		assert.Equal(t, dns.RcodeSuccess, m.Rcode)
		assert.Empty(t, m.Answer)
		require.Len(t, m.Ns, 1)
		assert.Equal(t, dns.TypeSOA, m.Ns[0].Header().Rrtype)
	})
	t.Run("referral below a delegation", func(t *testing.T) {
		for _, name := range []string{"host.sub", "ns.sub", "sub"} {
			m := ask(t, q(name, dns.TypeA), false)
			assert.False(t, m.Authoritative, name)
			assert.Empty(t, m.Answer, name)
			assert.Len(t, m.Ns, 2, name)
			assert.Equal(t, []string{"ns.sub.example.test.\t300\tIN\tA\t192.0.2.200", "ns.sub.example.test.\t300\tIN\tAAAA\t2001:db8::200"}, lines(m.Extra), name)
		}
	})
	t.Run("DS at the cut from the parent", func(t *testing.T) {
		m := ask(t, q("sub", dns.TypeDS), false)
		assert.True(t, m.Authoritative)
		assert.Equal(t, dns.TypeSOA, m.Ns[0].Header().Rrtype)
	})
	t.Run("CNAME into a delegation", func(t *testing.T) {
		m := ask(t, q("tosub", dns.TypeA), false)
		assert.True(t, m.Authoritative)
		assert.Len(t, m.Answer, 1)
		assert.Len(t, m.Ns, 2)
	})
	t.Run("UDP capped at 1232 with TC", func(t *testing.T) {
		m := ask(t, mkQuery("many.example.test.", dns.TypeA, 4096, false), false)
		assert.True(t, m.Truncated)
		assert.Empty(t, m.Answer)
		require.NotNil(t, m.IsEdns0())
		assert.Len(t, ask(t, mkQuery("many.example.test.", dns.TypeA, 4096, false), true).Answer, 240)
	})
	t.Run("FORMERR carries OPT", func(t *testing.T) {
		b := append(mkQuery("www.example.test.", dns.TypeA, 1232, false), 1, 2, 3)
		m := ask(t, b, false)
		assert.Equal(t, dns.RcodeFormatError, m.Rcode)
		assert.NotNil(t, m.IsEdns0())
		require.Len(t, m.Question, 1)
	})
	t.Run("ANY over UDP is one RRset, over TCP all", func(t *testing.T) {
		assert.Len(t, ask(t, q("www", dns.TypeANY), false).Answer, 2)
		assert.Len(t, ask(t, q("www", dns.TypeANY), true).Answer, 3)
	})
	t.Run("a hook answers for a wildcard, never for a referral", func(t *testing.T) {
		h := new(memory.Provider)
		loadZone(t, h, "example.test.", diffZone)
		var names []string
		h.SetAnswerFunc("*.wild.example.test.", func(_ netip.Prefix, name, _ string, rrs []libdns.Record) ([]libdns.Record, int) {
			names = append(names, name)
			return []libdns.Record{libdns.Address{Name: "*.wild", IP: netip.MustParseAddr("192.0.2.99")}}, 0
		})
		h.SetZoneAnswerFunc("example.test.", func(_ netip.Prefix, name, _ string, rrs []libdns.Record) ([]libdns.Record, int) {
			names = append(names, name)
			return nil, 0
		})
		m := new(dns.Msg)
		require.NoError(t, m.Unpack(h.RespondUDP(q("foo.wild", dns.TypeA), make([]byte, 4096), src)))
		assert.Equal(t, []string{"foo.wild.example.test.\t0\tIN\tA\t192.0.2.99"}, lines(m.Answer))
		require.NoError(t, m.Unpack(h.RespondUDP(q("host.sub", dns.TypeA), make([]byte, 4096), src)))
		assert.False(t, m.Authoritative)
		assert.Equal(t, []string{"foo.wild.example.test."}, names)
	})
}
