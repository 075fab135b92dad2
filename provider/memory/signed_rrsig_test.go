package memory_test

import (
	"net"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/gslbkit/gslb/provider/memory"
	"github.com/miekg/dns"
	"github.com/stretchr/testify/require"
)

// TestSignedRRSIGQuery: a query for type RRSIG gets, in the answer
// section, the RRSIGs of every RRset at the name and of the NSEC that
// compact denial gives there (a NODATA answer for type RRSIG cannot be
// proved: the NSEC at the name lists RRSIG), with or without DO, as BIND
// answers them; the RRSIGs are not signed themselves (RFC 4035 section
// 2.2). A name a wildcard synthesises gets the wildcard's, owned by the
// name, and with DO the NSEC that proves the name does not exist. A name
// that does not exist gets the NXNAME NSEC's RRSIG with DO and without
// CO, NXDOMAIN otherwise; below a zone cut, the referral.
func TestSignedRRSIGQuery(t *testing.T) {
	p, s := signedFixture(t)
	keys := s.DNSKEYs()
	now := time.Now()
	for _, tc := range []struct {
		qname   string
		do, co  bool
		rcode   int
		covered []uint16 // the answer's RRSIGs cover these types; nil: no answer
		proof   bool     // with a wildcard's proof NSEC in the authority section
	}{
		{"www." + signedZone, true, false, dns.RcodeSuccess, []uint16{dns.TypeA, dns.TypeTXT, dns.TypeNSEC}, false},
		{"www." + signedZone, false, false, dns.RcodeSuccess, []uint16{dns.TypeA, dns.TypeTXT, dns.TypeNSEC}, false},
		{signedZone, true, false, dns.RcodeSuccess, []uint16{dns.TypeNS, dns.TypeSOA, dns.TypeNSEC, dns.TypeDNSKEY, dns.TypeCDS, dns.TypeCDNSKEY}, false},
		{"ent." + signedZone, true, false, dns.RcodeSuccess, []uint16{dns.TypeNSEC}, false},
		{"alias." + signedZone, true, false, dns.RcodeSuccess, []uint16{dns.TypeCNAME, dns.TypeNSEC}, false},
		{"geo." + signedZone, true, false, dns.RcodeSuccess, []uint16{dns.TypeA, dns.TypeNSEC}, false},
		{"a.wild." + signedZone, true, false, dns.RcodeSuccess, []uint16{dns.TypeA, dns.TypeNSEC}, true},
		{"a.wild." + signedZone, false, false, dns.RcodeSuccess, []uint16{dns.TypeA, dns.TypeNSEC}, false},
		{"nope." + signedZone, true, false, dns.RcodeSuccess, []uint16{dns.TypeNSEC}, false},
		{"nope." + signedZone, true, true, dns.RcodeNameError, nil, false},
		{"nope." + signedZone, false, false, dns.RcodeNameError, nil, false},
	} {
		for range 2 {
			m := signedQuery(t, p, tc.qname, dns.TypeRRSIG, tc.do, tc.co, "192.0.2.1")
			require.Equal(t, tc.rcode, m.Rcode, "%s", m)
			require.True(t, m.Authoritative, "%s", m)
			if tc.covered == nil {
				require.Empty(t, m.Answer, "%s", m)
				if tc.do {
					require.Len(t, nsecs(m), 1, "%s", m)
					checkSigned(t, m, keys, now)
				}
				continue
			}
			var covered []uint16
			for _, rr := range m.Answer {
				sig, ok := rr.(*dns.RRSIG)
				require.True(t, ok, "not an RRSIG: %s", rr)
				require.Equal(t, tc.qname, sig.Hdr.Name)
				if !slices.Contains(covered, sig.TypeCovered) {
					covered = append(covered, sig.TypeCovered)
				}
			}
			require.ElementsMatch(t, tc.covered, covered, "%s", m)
			require.True(t, slices.IsSorted(covered), "%s", m)
			if tc.proof {
				require.Len(t, nsecs(m), 1, "%s", m)
				checkSigned(t, m, keys, now)
			} else {
				require.Empty(t, m.Ns, "%s", m)
			}
			require.Empty(t, m.Extra[:len(m.Extra)-1], "%s", m)
			verifyRRSIGAnswer(t, p, m, tc.qname, keys, now)
		}
	}
	// Below a zone cut: the referral, as for any type.
	m := signedQuery(t, p, "host.sub."+signedZone, dns.TypeRRSIG, true, false, "192.0.2.1")
	require.False(t, m.Authoritative)
	require.Empty(t, m.Answer)
}

// verifyRRSIGAnswer checks each RRSIG of m's answer against the RRset it
// covers as the zone answers a DO query for that type at qname (the NSEC:
// a query for type NSEC); geo's A RRset, whose answers a hook chooses, is
// checked whole.
func verifyRRSIGAnswer(t *testing.T, p *memory.Provider, m *dns.Msg, qname string, keys []dns.RR, now time.Time) {
	t.Helper()
	for _, rr := range m.Answer {
		sig := rr.(*dns.RRSIG)
		var set []dns.RR
		if qname == "geo."+signedZone && sig.TypeCovered == dns.TypeA {
			for _, a := range []string{"192.0.2.10", "192.0.2.11", "192.0.2.12"} {
				set = append(set, &dns.A{Hdr: dns.RR_Header{Name: qname, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60}, A: net.ParseIP(a)})
			}
		} else {
			a := signedQuery(t, p, qname, sig.TypeCovered, true, false, "192.0.2.1")
			for _, r := range a.Answer {
				if r.Header().Rrtype == sig.TypeCovered {
					set = append(set, r)
				}
			}
		}
		require.NotEmpty(t, set, "no %s RRset at %s", dns.TypeToString[sig.TypeCovered], qname)
		var key *dns.DNSKEY
		for _, k := range keys {
			if d := k.(*dns.DNSKEY); d.KeyTag() == sig.KeyTag {
				key = d
			}
		}
		require.NotNil(t, key)
		require.NoError(t, sig.Verify(key, set), "RRSIG %s over %v", sig, set)
		require.True(t, sig.ValidityPeriod(now))
	}
}

// TestSignedANY: a DO query for type ANY gets over UDP one RRset with its
// RRSIGs (RFC 8482 section 4.1), over TCP every RRset at the name, each
// signed; an empty non-terminal and a missing name (DO without CO) get a
// NODATA whose one NSEC, at the name, does not list ANY; a wildcard's name
// the wildcard's signatures and the proof NSEC.
func TestSignedANY(t *testing.T) {
	p, s := signedFixture(t)
	keys := s.DNSKEYs()
	now := time.Now()
	src := netip.MustParseAddr("192.0.2.1")
	for _, tc := range []struct {
		qname     string
		udp, tcp  int // RRsets in the answer (not counting RRSIGs)
		nsecs     int
		ancovered bool
	}{
		{"www." + signedZone, 1, 2, 0, true},
		{signedZone, 1, 2, 0, true}, // NS; NS and SOA
		{"a.wild." + signedZone, 1, 1, 1, true},
		{"ent." + signedZone, 0, 0, 1, false},
		{"nope." + signedZone, 0, 0, 1, false},
	} {
		for _, tcp := range []bool{false, true} {
			q := new(dns.Msg)
			q.SetQuestion(tc.qname, dns.TypeANY)
			q.SetEdns0(1232, true)
			m := p.Respond(q, src, tcp)
			require.Equal(t, dns.RcodeSuccess, m.Rcode, "%s", m)
			sets := map[uint16]bool{}
			for _, rr := range m.Answer {
				if rr.Header().Rrtype != dns.TypeRRSIG {
					sets[rr.Header().Rrtype] = true
				}
			}
			want := tc.udp
			if tcp {
				want = tc.tcp
			}
			require.Len(t, sets, want, "tcp %v: %s", tcp, m)
			require.Len(t, nsecs(m), tc.nsecs, "tcp %v: %s", tcp, m)
			for _, n := range nsecs(m) {
				require.NotContains(t, n.TypeBitMap, dns.TypeANY)
			}
			checkSigned(t, m, keys, now)
		}
	}
}
