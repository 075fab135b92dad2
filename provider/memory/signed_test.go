package memory_test

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gslbkit/gslb/provider/dnssec"
	"github.com/gslbkit/gslb/provider/memory"
	"github.com/libdns/libdns"
	"github.com/miekg/dns"
	"github.com/stretchr/testify/require"
)

const signedZone = "signed.test."

// signedFixture is a signed zone with a static name, a wildcard, a CNAME
// chain, an empty non-terminal, a delegation and a hooked name.
func signedFixture(t testing.TB, keys ...dnssec.ZoneKey) (*memory.Provider, *dnssec.Signer) {
	t.Helper()
	if len(keys) == 0 {
		k, err := dnssec.GenerateKey(signedZone, dnssec.ECDSAP256SHA256, dnssec.FlagsKSK, 300)
		require.NoError(t, err)
		keys = []dnssec.ZoneKey{{Key: k}}
	}
	s, err := dnssec.NewSigner(signedZone, dnssec.Config{Keys: keys, Validity: 2 * time.Hour, Refresh: 30 * time.Minute})
	require.NoError(t, err)
	p := new(memory.Provider)
	cfg := memory.DefaultZoneConfig()
	cfg.Signer = s
	require.NoError(t, p.AddZoneWith(signedZone, cfg))
	ip := func(s string) netip.Addr { return netip.MustParseAddr(s) }
	_, err = p.SetRecords(context.Background(), signedZone, []libdns.Record{
		libdns.Address{Name: "www", TTL: time.Minute, IP: ip("192.0.2.1")},
		libdns.Address{Name: "www", TTL: time.Minute, IP: ip("192.0.2.2")},
		libdns.TXT{Name: "www", TTL: time.Minute, Text: "hello"},
		libdns.Address{Name: "*.wild", TTL: time.Minute, IP: ip("192.0.2.3")},
		libdns.CNAME{Name: "alias", TTL: time.Minute, Target: "www.signed.test."},
		libdns.CNAME{Name: "dangling", TTL: time.Minute, Target: "nowhere.signed.test."},
		libdns.Address{Name: "x.ent", TTL: time.Minute, IP: ip("192.0.2.4")},
		libdns.NS{Name: "sub", TTL: time.Minute, Target: "ns.sub.signed.test."},
		libdns.Address{Name: "ns.sub", TTL: time.Minute, IP: ip("192.0.2.5")},
		libdns.Address{Name: "geo", TTL: time.Minute, IP: ip("192.0.2.10")},
		libdns.Address{Name: "geo", TTL: time.Minute, IP: ip("192.0.2.11")},
		libdns.Address{Name: "geo", TTL: time.Minute, IP: ip("192.0.2.12")},
	})
	require.NoError(t, err)
	// The hook answers one address, chosen by the client's last octet.
	p.SetAnswerFunc("geo.signed.test.", func(c netip.Prefix, _, _ string, rrs []libdns.Record) ([]libdns.Record, int) {
		i := int(c.Addr().AsSlice()[len(c.Addr().AsSlice())-1]) % len(rrs)
		return rrs[i : i+1], c.Bits()
	})
	return p, s
}

// tb is what the test helpers need of a *testing.T or *rapid.T.
type tb interface {
	require.TestingT
	Helper()
}

// signedQuery asks p over UDP (the fast path) with EDNS, DO and optionally CO.
func signedQuery(t tb, p *memory.Provider, name string, qtype uint16, do, co bool, src string) *dns.Msg {
	t.Helper()
	q := new(dns.Msg)
	q.SetQuestion(name, qtype)
	q.SetEdns0(1232, do)
	if co {
		q.IsEdns0().SetCo()
	}
	b, err := q.Pack()
	require.NoError(t, err)
	out := p.RespondUDP(b, make([]byte, 4096), netip.MustParseAddr(src))
	m := new(dns.Msg)
	require.NoError(t, m.Unpack(out))
	// The general path gives the same reply, signatures aside (ECDSA
	// signatures of a refreshed RRset may differ): compare shapes.
	g := p.Respond(q, netip.MustParseAddr(src), false)
	require.Equal(t, m.Rcode, g.Rcode)
	require.Equal(t, len(m.Answer), len(g.Answer))
	require.Equal(t, len(m.Ns), len(g.Ns))
	return m
}

// checkSigned verifies every RRset in the answer and authority sections of
// m (except a delegation's NS RRset) against the DNSKEY set keys at now,
// and that a negative answer has exactly one NSEC, at the name, with
// bitmap want (nil: not checked).
func checkSigned(t testing.TB, m *dns.Msg, keys []dns.RR, now time.Time) {
	t.Helper()
	for _, sec := range [][]dns.RR{m.Answer, m.Ns} {
		sets := map[string][]dns.RR{}
		sigs := map[string][]*dns.RRSIG{}
		var order []string
		for _, rr := range sec {
			h := rr.Header()
			if s, ok := rr.(*dns.RRSIG); ok {
				k := strings.ToLower(h.Name) + "/" + dns.TypeToString[s.TypeCovered]
				sigs[k] = append(sigs[k], s)
				continue
			}
			k := strings.ToLower(h.Name) + "/" + dns.TypeToString[h.Rrtype]
			if sets[k] == nil {
				order = append(order, k)
			}
			sets[k] = append(sets[k], rr)
		}
		for _, k := range order {
			set := sets[k]
			if set[0].Header().Rrtype == dns.TypeNS && set[0].Header().Name != signedZone {
				require.Empty(t, sigs[k], "delegation NS signed")
				continue
			}
			require.NotEmpty(t, sigs[k], "no RRSIG for %s in\n%s", k, m)
			for _, s := range sigs[k] {
				var key *dns.DNSKEY
				for _, rr := range keys {
					if d := rr.(*dns.DNSKEY); d.KeyTag() == s.KeyTag && d.Algorithm == s.Algorithm {
						key = d
					}
				}
				require.NotNil(t, key, "no DNSKEY for %s", s)
				require.NoError(t, s.Verify(key, set), "RRSIG %s over %v", s, set)
				require.True(t, s.ValidityPeriod(now), "RRSIG %s not valid at %s", s, now)
			}
		}
	}
}

func nsecs(m *dns.Msg) []*dns.NSEC {
	var out []*dns.NSEC
	for _, rr := range m.Ns {
		if n, ok := rr.(*dns.NSEC); ok {
			out = append(out, n)
		}
	}
	return out
}

func TestSignedAnswers(t *testing.T) {
	p, s := signedFixture(t)
	keys := s.DNSKEYs()
	now := time.Now()
	for _, tc := range []struct {
		name    string
		qname   string
		qtype   uint16
		co      bool
		rcode   int
		answers int      // RRs in the answer section, RRSIGs included
		bitmap  []uint16 // the negative answer's NSEC bitmap; nil: none expected
		nsecAt  string
	}{
		{"positive", "www.signed.test.", dns.TypeA, false, dns.RcodeSuccess, 3, nil, ""},
		{"apex SOA", signedZone, dns.TypeSOA, false, dns.RcodeSuccess, 2, nil, ""},
		{"apex NS", signedZone, dns.TypeNS, false, dns.RcodeSuccess, 2, nil, ""},
		{"DNSKEY", signedZone, dns.TypeDNSKEY, false, dns.RcodeSuccess, 2, nil, ""},
		{"CDS", signedZone, dns.TypeCDS, false, dns.RcodeSuccess, 2, nil, ""},
		{"CDNSKEY", signedZone, dns.TypeCDNSKEY, false, dns.RcodeSuccess, 2, nil, ""},
		{"NODATA", "www.signed.test.", dns.TypeAAAA, false, dns.RcodeSuccess, 0,
			[]uint16{dns.TypeA, dns.TypeTXT, dns.TypeRRSIG, dns.TypeNSEC}, "www.signed.test."},
		{"NODATA apex", signedZone, dns.TypeMX, false, dns.RcodeSuccess, 0,
			[]uint16{dns.TypeNS, dns.TypeSOA, dns.TypeRRSIG, dns.TypeNSEC, dns.TypeDNSKEY, dns.TypeCDS, dns.TypeCDNSKEY}, signedZone},
		{"NXDOMAIN compact", "nope.signed.test.", dns.TypeA, false, dns.RcodeSuccess, 0,
			[]uint16{dns.TypeRRSIG, dns.TypeNSEC, dnssec.TypeNXNAME}, "nope.signed.test."},
		{"NXDOMAIN with CO", "nope.signed.test.", dns.TypeA, true, dns.RcodeNameError, 0,
			[]uint16{dns.TypeRRSIG, dns.TypeNSEC, dnssec.TypeNXNAME}, "nope.signed.test."},
		{"ENT", "ent.signed.test.", dns.TypeA, false, dns.RcodeSuccess, 0,
			[]uint16{dns.TypeRRSIG, dns.TypeNSEC}, "ent.signed.test."},
		{"wildcard", "a.b.wild.signed.test.", dns.TypeA, false, dns.RcodeSuccess, 2, nil, ""},
		{"wildcard NODATA", "a.wild.signed.test.", dns.TypeTXT, false, dns.RcodeSuccess, 0,
			[]uint16{dns.TypeA, dns.TypeRRSIG, dns.TypeNSEC}, "a.wild.signed.test."},
		{"CNAME chain", "alias.signed.test.", dns.TypeA, false, dns.RcodeSuccess, 5, nil, ""},
		{"CNAME to nothing", "dangling.signed.test.", dns.TypeA, false, dns.RcodeSuccess, 2,
			[]uint16{dns.TypeRRSIG, dns.TypeNSEC, dnssec.TypeNXNAME}, "nowhere.signed.test."},
		{"DS at cut", "sub.signed.test.", dns.TypeDS, false, dns.RcodeSuccess, 0,
			[]uint16{dns.TypeNS, dns.TypeRRSIG, dns.TypeNSEC}, "sub.signed.test."},
		{"referral", "host.sub.signed.test.", dns.TypeA, false, dns.RcodeSuccess, 0,
			[]uint16{dns.TypeNS, dns.TypeRRSIG, dns.TypeNSEC}, "sub.signed.test."},
		{"hooked", "geo.signed.test.", dns.TypeA, false, dns.RcodeSuccess, 2, nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for range 2 { // a miss, then the fast path's cached reply
				m := signedQuery(t, p, tc.qname, tc.qtype, true, tc.co, "198.51.100.7")
				require.Equal(t, tc.rcode, m.Rcode, "%s", m)
				require.Len(t, m.Answer, tc.answers, "%s", m)
				checkSigned(t, m, keys, now)
				ns := nsecs(m)
				if tc.bitmap == nil {
					if tc.name == "wildcard" {
						require.Len(t, ns, 1, "wildcard proof: %s", m)
						require.True(t, dns.IsSubDomain("wild.signed.test.", ns[0].Hdr.Name))
						require.Less(t, canonicalCompare(ns[0].Hdr.Name, "b.wild.signed.test."), 0)
					} else if tc.name != "referral" {
						require.Empty(t, ns, "%s", m)
					}
					return
				}
				require.Len(t, ns, 1, "%s", m)
				require.Equal(t, tc.nsecAt, ns[0].Hdr.Name)
				require.ElementsMatch(t, tc.bitmap, ns[0].TypeBitMap)
				require.Equal(t, "\\000."+tc.nsecAt, ns[0].NextDomain)
			}
		})
	}
	// Without DO: no DNSSEC records, NXDOMAIN as always, DNSKEY answered.
	m := signedQuery(t, p, "nope.signed.test.", dns.TypeA, false, false, "198.51.100.7")
	require.Equal(t, dns.RcodeNameError, m.Rcode)
	require.Empty(t, nsecs(m))
	m = signedQuery(t, p, signedZone, dns.TypeDNSKEY, false, false, "198.51.100.7")
	require.Len(t, m.Answer, 1)
	// NXNAME asked explicitly: FORMERR.
	m = signedQuery(t, p, "www.signed.test.", dnssec.TypeNXNAME, true, false, "198.51.100.7")
	require.Equal(t, dns.RcodeFormatError, m.Rcode)
	require.True(t, p.Signed("SIGNED.test"))
}

// TestSignedWildcardProof checks the NSEC of a wildcard answer covers the
// next closer name as a validator computes it (RFC 4035 section 5.3.4).
func TestSignedWildcardProof(t *testing.T) {
	p, _ := signedFixture(t)
	m := signedQuery(t, p, "a.b.wild.signed.test.", dns.TypeA, true, false, "192.0.2.99")
	ns := nsecs(m)
	require.Len(t, ns, 1)
	nc := "b.wild.signed.test."
	require.Less(t, canonicalCompare(ns[0].Hdr.Name, nc), 0)
	require.Greater(t, canonicalCompare(ns[0].NextDomain, "a.b.wild.signed.test."), 0)
	require.Greater(t, canonicalCompare(ns[0].NextDomain, nc), 0)
	// Neither end is below the next closer name: the closest encloser
	// derived from them is the wildcard's.
	require.False(t, dns.IsSubDomain(nc, ns[0].Hdr.Name))
	require.False(t, dns.IsSubDomain(nc, ns[0].NextDomain))
	require.Equal(t, fmt.Sprint(dns.CountLabel(nc)), fmt.Sprint(dns.CountLabel(ns[0].Hdr.Name)))
	t.Log(m)
}

// canonicalCompare orders two names as RFC 4034 section 6.1 does.
func canonicalCompare(a, b string) int {
	la, lb := wireLabels(a), wireLabels(b)
	for i := 1; i <= min(len(la), len(lb)); i++ {
		x, y := la[len(la)-i], lb[len(lb)-i]
		if c := strings.Compare(x, y); c != 0 {
			return c
		}
	}
	return len(la) - len(lb)
}

// wireLabels returns name's labels, unescaped and lower case.
func wireLabels(name string) []string {
	b := make([]byte, 256)
	n, err := dns.PackDomainName(dns.Fqdn(name), b, 0, nil, false)
	if err != nil {
		panic(err)
	}
	var out []string
	for off := 0; off < n && b[off] != 0; off += 1 + int(b[off]) {
		l := []byte(string(b[off+1 : off+1+int(b[off])]))
		for i, c := range l {
			if 'A' <= c && c <= 'Z' {
				l[i] = c + 'a' - 'A'
			}
		}
		out = append(out, string(l))
	}
	return out
}

// TestSignedFastPathSameBytes: the fast path's replies (cached, or for a
// hooked name assembled with its cached signatures) are the general path's
// bytes, for every shape of query.
func TestSignedFastPathSameBytes(t *testing.T) {
	p, _ := signedFixture(t)
	buf := make([]byte, 4096)
	for _, name := range []string{"www", "geo", "nope", "a.b.wild", "alias", "ent", "host.sub", "@"} {
		qname := name + "." + signedZone
		if name == "@" {
			qname = signedZone
		}
		for _, qt := range []uint16{dns.TypeA, dns.TypeAAAA, dns.TypeDNSKEY, dns.TypeRRSIG, dns.TypeANY} {
			for _, flags := range []int{-1, 0, 1, 3} { // no EDNS, EDNS, DO, DO+CO
				q := new(dns.Msg)
				q.SetQuestion(qname, qt)
				if flags >= 0 {
					q.SetEdns0(1232, flags&1 != 0)
					if flags&2 != 0 {
						q.IsEdns0().SetCo()
					}
				}
				b, err := q.Pack()
				require.NoError(t, err)
				for _, src := range []string{"192.0.2.1", "192.0.2.2", "192.0.2.1"} {
					a := netip.MustParseAddr(src)
					for range 2 {
						fast := append([]byte(nil), p.RespondUDP(b, buf, a)...)
						require.Equal(t, p.RespondWire(b, a, false), fast, "%s %s flags %d from %s", qname, dns.TypeToString[qt], flags, src)
					}
				}
			}
		}
	}
}

// TestSignedKeptByRestore: a node that adds its zones with their signers
// and then receives them by replication (Restore) keeps signing; a signer
// of another zone is refused.
func TestSignedKeptByRestore(t *testing.T) {
	src, _ := signedFixture(t)
	node, s := signedFixture(t)
	_, err := node.DeleteRecords(context.Background(), signedZone, []libdns.Record{libdns.TXT{Name: "www", Text: "hello"}})
	require.NoError(t, err)
	require.NoError(t, node.Restore(src.Snapshot()))
	require.True(t, node.Signed(signedZone))
	m := signedQuery(t, node, "www."+signedZone, dns.TypeTXT, true, false, "192.0.2.1")
	require.Len(t, m.Answer, 2)
	checkSigned(t, m, s.DNSKEYs(), time.Now())
	cfg := memory.DefaultZoneConfig()
	cfg.Signer = s
	require.ErrorIs(t, new(memory.Provider).AddZoneWith("other.test.", cfg), memory.ErrInvalidZone)
}

// TestSignedBudget: past the signing budget a miss is answered SERVFAIL
// (and not cached); cached signatures keep being served; the signer counts
// what it refused.
func TestSignedBudget(t *testing.T) {
	// In a bubble, time stands still: the budget refills only as the test
	// says.
	synctest.Test(t, func(t *testing.T) {
		k, err := dnssec.GenerateKey(signedZone, dnssec.ECDSAP256SHA256, dnssec.FlagsKSK, 300)
		require.NoError(t, err)
		s, err := dnssec.NewSigner(signedZone, dnssec.Config{Keys: []dnssec.ZoneKey{{Key: k}}, SignaturesPerSecond: 3})
		require.NoError(t, err)
		p := new(memory.Provider)
		cfg := memory.DefaultZoneConfig()
		cfg.Signer = s
		require.NoError(t, p.AddZoneWith(signedZone, cfg))
		// The SOA's signature, then one NSEC per name: the budget of 3 lasts
		// for two names.
		var rcodes []int
		for i := range 4 {
			m := signedQuery(t, p, fmt.Sprintf("n%d.%s", i, signedZone), dns.TypeA, true, false, "192.0.2.1")
			rcodes = append(rcodes, m.Rcode)
		}
		require.Equal(t, []int{dns.RcodeSuccess, dns.RcodeSuccess, dns.RcodeServerFailure, dns.RcodeServerFailure}, rcodes)
		require.NotZero(t, s.Stats().OverBudget)
		m := signedQuery(t, p, "n0."+signedZone, dns.TypeA, true, false, "192.0.2.1")
		require.Equal(t, dns.RcodeSuccess, m.Rcode, "cached signatures still served")
		m = signedQuery(t, p, "n3."+signedZone, dns.TypeA, false, false, "192.0.2.1")
		require.Equal(t, dns.RcodeNameError, m.Rcode, "no DO: nothing to sign")
		time.Sleep(time.Second) // the budget refills
		m = signedQuery(t, p, "n2."+signedZone, dns.TypeA, true, false, "192.0.2.1")
		require.Equal(t, dns.RcodeSuccess, m.Rcode)
	})
}

// TestSignedDelegationWithDS: a DS held at a delegation point is answered
// signed at the cut and carried, signed, in referrals (RFC 4035 section
// 3.1.4); without DO the referral has no DS.
func TestSignedDelegationWithDS(t *testing.T) {
	p, s := signedFixture(t)
	child, err := dnssec.GenerateKey("sub."+signedZone, dnssec.ECDSAP256SHA256, dnssec.FlagsKSK, 300)
	require.NoError(t, err)
	ds := child.DS()
	_, err = p.AppendRecords(context.Background(), signedZone, []libdns.Record{libdns.RR{Name: "sub", TTL: time.Minute, Type: "DS",
		Data: fmt.Sprintf("%d %d %d %s", ds.KeyTag, ds.Algorithm, ds.DigestType, ds.Digest)}})
	require.NoError(t, err)
	now := time.Now()
	m := signedQuery(t, p, "sub."+signedZone, dns.TypeDS, true, false, "192.0.2.1")
	require.Len(t, m.Answer, 2, "%s", m)
	checkSigned(t, m, s.DNSKEYs(), now)
	m = signedQuery(t, p, "host.sub."+signedZone, dns.TypeA, true, false, "192.0.2.1")
	require.False(t, m.Authoritative)
	var types []uint16
	for _, rr := range m.Ns {
		types = append(types, rr.Header().Rrtype)
	}
	require.Equal(t, []uint16{dns.TypeNS, dns.TypeDS, dns.TypeRRSIG}, types, "%s", m)
	checkSigned(t, m, s.DNSKEYs(), now)
	m = signedQuery(t, p, "host.sub."+signedZone, dns.TypeA, false, false, "192.0.2.1")
	require.Len(t, m.Ns, 1)
}
