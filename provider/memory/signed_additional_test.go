package memory_test

import (
	"context"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/gslbkit/gslb/provider/dnssec"
	"github.com/libdns/libdns"
	"github.com/miekg/dns"
	"github.com/stretchr/testify/require"
)

// additionalSigs maps each RRset of m's additional section (owner/type,
// the OPT record aside) to whether an RRSIG that verifies with keys covers
// it.
func additionalSigs(t *testing.T, m *dns.Msg, keys []dns.RR, now time.Time) map[string]bool {
	t.Helper()
	sets := map[string][]dns.RR{}
	sigs := map[string][]*dns.RRSIG{}
	for _, rr := range m.Extra {
		h := rr.Header()
		switch x := rr.(type) {
		case *dns.OPT:
		case *dns.RRSIG:
			k := strings.ToLower(h.Name) + "/" + dns.TypeToString[x.TypeCovered]
			sigs[k] = append(sigs[k], x)
		default:
			k := strings.ToLower(h.Name) + "/" + dns.TypeToString[h.Rrtype]
			sets[k] = append(sets[k], rr)
		}
	}
	out := map[string]bool{}
	for k, set := range sets {
		out[k] = false
		for _, s := range sigs[k] {
			for _, rr := range keys {
				if d := rr.(*dns.DNSKEY); d.KeyTag() == s.KeyTag && s.Verify(d, set) == nil && s.ValidityPeriod(now) {
					out[k] = true
				}
			}
		}
	}
	for k := range sigs {
		_, ok := sets[k]
		require.True(t, ok, "RRSIG without its RRset in the additional section: %s\n%s", k, m)
	}
	return out
}

// TestSignedAdditional: with DO, the in-zone addresses of NS, MX and SRV
// targets in the additional section carry their RRSIGs (RFC 4035 section
// 3.1.1); glue below a zone cut does not (RFC 4035 section 2.2); without
// DO nothing is signed; the fast path's cached reply is the general
// path's.
func TestSignedAdditional(t *testing.T) {
	p, s := signedFixture(t)
	ip := netip.MustParseAddr
	_, err := p.AppendRecords(context.Background(), signedZone, []libdns.Record{
		libdns.Address{Name: "ns1", TTL: time.Minute, IP: ip("192.0.2.53")},
		libdns.Address{Name: "ns1", TTL: time.Minute, IP: ip("2001:db8::53")},
		libdns.MX{Name: "mail", TTL: time.Minute, Preference: 10, Target: "mx.signed.test."},
		libdns.MX{Name: "mail", TTL: time.Minute, Preference: 20, Target: "ns.sub.signed.test."},
		libdns.Address{Name: "mx", TTL: time.Minute, IP: ip("192.0.2.25")},
		libdns.SRV{Service: "sip", Transport: "udp", Name: "@", TTL: time.Minute, Priority: 1, Weight: 1, Port: 5060, Target: "mx.signed.test."},
	})
	require.NoError(t, err)
	keys := s.DNSKEYs()
	now := time.Now()
	buf := make([]byte, 4096)
	for _, tc := range []struct {
		qname string
		qtype uint16
		want  map[string]bool // additional RRset → signed
	}{
		{signedZone, dns.TypeNS, map[string]bool{"ns1.signed.test./A": true, "ns1.signed.test./AAAA": true}},
		{"mail." + signedZone, dns.TypeMX, map[string]bool{"mx.signed.test./A": true, "ns.sub.signed.test./A": false}},
		{"_sip._udp." + signedZone, dns.TypeSRV, map[string]bool{"mx.signed.test./A": true}},
		{"host.sub." + signedZone, dns.TypeA, map[string]bool{"ns.sub.signed.test./A": false}}, // referral: glue
	} {
		for _, do := range []bool{true, false} {
			q := new(dns.Msg)
			q.SetQuestion(tc.qname, tc.qtype)
			q.SetEdns0(1232, do)
			b, err := q.Pack()
			require.NoError(t, err)
			src := ip("192.0.2.1")
			for i := range 2 { // a miss, then the cached reply
				out := append([]byte(nil), p.RespondUDP(b, buf, src)...)
				require.Equal(t, p.RespondWire(b, src, false), out, "%s %s DO=%v query %d", tc.qname, dns.TypeToString[tc.qtype], do, i)
				m := new(dns.Msg)
				require.NoError(t, m.Unpack(out))
				want := tc.want
				if !do {
					want = map[string]bool{}
					for k := range tc.want {
						want[k] = false
					}
				}
				require.Equal(t, want, additionalSigs(t, m, keys, now), "%s", m)
				if do {
					checkSigned(t, m, keys, now)
				}
			}
		}
	}
}

// TestSignedAdditionalTrimmed: signed addresses that do not fit are left
// out with their RRSIGs, never truncating the answer (RFC 4035 section
// 3.1.1, RFC 2181 section 9).
func TestSignedAdditionalTrimmed(t *testing.T) {
	p, _ := signedFixture(t)
	var rrs []libdns.Record
	for i := range 6 {
		target := string(rune('a'+i)) + "-mx"
		rrs = append(rrs,
			libdns.MX{Name: "mail", TTL: time.Minute, Preference: uint16(i), Target: target + ".signed.test."},
			libdns.Address{Name: target, TTL: time.Minute, IP: netip.AddrFrom4([4]byte{192, 0, 2, byte(i)})},
			libdns.Address{Name: target, TTL: time.Minute, IP: netip.AddrFrom16([16]byte{0x20, 0x01, 0x0d, 0xb8, 15: byte(i)})})
	}
	_, err := p.AppendRecords(context.Background(), signedZone, rrs)
	require.NoError(t, err)
	q := new(dns.Msg)
	q.SetQuestion("mail."+signedZone, dns.TypeMX)
	q.SetEdns0(512, true)
	b, err := q.Pack()
	require.NoError(t, err)
	src := netip.MustParseAddr("192.0.2.1")
	for range 2 {
		out := p.RespondUDP(b, make([]byte, 4096), src)
		require.LessOrEqual(t, len(out), 512)
		m := new(dns.Msg)
		require.NoError(t, m.Unpack(out))
		require.False(t, m.Truncated, "%s", m)
		require.Len(t, m.Answer, 7, "the MX RRset and its RRSIG: %s", m)
		require.Len(t, m.Extra, 1, "only the OPT record: %s", m)
	}
	// Over TCP the whole reply, every address signed.
	m := p.Respond(q, src, true)
	require.Len(t, m.Extra, 6*4+1)
}

// TestSignedNSECQuery: a query for type NSEC gets the NSEC that compact
// denial gives at the name, in the answer section (a NODATA answer for
// type NSEC cannot be proved: the NSEC at the name lists NSEC), signed
// with DO; at a name that does not exist, the NXNAME NSEC with DO, the
// NXDOMAIN with CO or without DO.
func TestSignedNSECQuery(t *testing.T) {
	p, s := signedFixture(t)
	keys := s.DNSKEYs()
	now := time.Now()
	for _, tc := range []struct {
		qname  string
		do, co bool
		rcode  int
		bitmap []uint16 // the answer's NSEC; nil: none
	}{
		{"www." + signedZone, true, false, dns.RcodeSuccess, []uint16{dns.TypeA, dns.TypeTXT, dns.TypeRRSIG, dns.TypeNSEC}},
		{"www." + signedZone, false, false, dns.RcodeSuccess, []uint16{dns.TypeA, dns.TypeTXT, dns.TypeRRSIG, dns.TypeNSEC}},
		{signedZone, true, false, dns.RcodeSuccess, []uint16{dns.TypeNS, dns.TypeSOA, dns.TypeRRSIG, dns.TypeNSEC, dns.TypeDNSKEY, dns.TypeCDS, dns.TypeCDNSKEY}},
		{"ent." + signedZone, true, false, dns.RcodeSuccess, []uint16{dns.TypeRRSIG, dns.TypeNSEC}},
		{"alias." + signedZone, true, false, dns.RcodeSuccess, []uint16{dns.TypeCNAME, dns.TypeRRSIG, dns.TypeNSEC}},
		{"a.wild." + signedZone, true, false, dns.RcodeSuccess, []uint16{dns.TypeA, dns.TypeRRSIG, dns.TypeNSEC}},
		{"nope." + signedZone, true, false, dns.RcodeSuccess, []uint16{dns.TypeRRSIG, dns.TypeNSEC, dnssec.TypeNXNAME}},
		{"nope." + signedZone, true, true, dns.RcodeNameError, nil},
		{"nope." + signedZone, false, false, dns.RcodeNameError, nil},
	} {
		for range 2 {
			m := signedQuery(t, p, tc.qname, dns.TypeNSEC, tc.do, tc.co, "192.0.2.1")
			require.Equal(t, tc.rcode, m.Rcode, "%s", m)
			if tc.bitmap == nil {
				require.Empty(t, m.Answer, "%s", m)
				continue
			}
			wantLen := 1
			if tc.do {
				wantLen = 2
			}
			require.Len(t, m.Answer, wantLen, "%s", m)
			nsec, ok := m.Answer[0].(*dns.NSEC)
			require.True(t, ok, "%s", m)
			require.Equal(t, tc.qname, nsec.Hdr.Name)
			require.Equal(t, "\\000."+tc.qname, nsec.NextDomain)
			require.ElementsMatch(t, tc.bitmap, nsec.TypeBitMap)
			require.Empty(t, m.Ns, "%s", m)
			if tc.do {
				checkSigned(t, m, keys, now)
			}
		}
	}
	// Below a zone cut: the referral, as for any type.
	m := signedQuery(t, p, "host.sub."+signedZone, dns.TypeNSEC, true, false, "192.0.2.1")
	require.False(t, m.Authoritative)
	require.Empty(t, m.Answer)
}
