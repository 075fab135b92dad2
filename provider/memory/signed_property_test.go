package memory_test

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gslbkit/gslb/provider/dnssec"
	"github.com/gslbkit/gslb/provider/memory"
	"github.com/libdns/libdns"
	"github.com/miekg/dns"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// TestPropertySigned: for any small zone (addresses, texts, CNAMEs, a
// wildcard, hooks choosing subsets) and any query with DO, every RRset in
// the answer and authority sections carries a valid RRSIG by an active
// key, and every negative answer carries exactly one NSEC, at the name
// that ends the answer, whose bitmap is the types held there (with RRSIG
// and NSEC), or RRSIG, NSEC and NXNAME for a name that does not exist.
func TestPropertySigned(t *testing.T) {
	k, err := dnssec.GenerateKey(signedZone, dnssec.ED25519, dnssec.FlagsKSK, 300)
	require.NoError(t, err)
	zsk, err := dnssec.GenerateKey(signedZone, dnssec.ECDSAP256SHA256, dnssec.FlagsZSK, 300)
	require.NoError(t, err)
	rapid.Check(t, func(t *rapid.T) {
		keys := []dnssec.ZoneKey{{Key: k}}
		if rapid.Bool().Draw(t, "split") {
			keys = append(keys, dnssec.ZoneKey{Key: zsk})
		}
		s, err := dnssec.NewSigner(signedZone, dnssec.Config{Keys: keys})
		if err != nil {
			t.Fatal(err)
		}
		p := new(memory.Provider)
		zc := memory.DefaultZoneConfig()
		zc.Signer = s
		if err := p.AddZoneWith(signedZone, zc); err != nil {
			t.Fatal(err)
		}
		names := []string{"@", "a", "b", "a.b", "c", "*.w", "x.*.w"}
		model := map[string]map[uint16]bool{"@": {dns.TypeNS: true}} // owner (relative) → types
		for i := range rapid.IntRange(1, 12).Draw(t, "records") {
			name := rapid.SampledFrom(names).Draw(t, fmt.Sprint("name", i))
			var r libdns.Record
			var typ uint16
			switch rapid.IntRange(0, 2).Draw(t, fmt.Sprint("type", i)) {
			case 0:
				r, typ = libdns.Address{Name: name, TTL: time.Minute, IP: netip.AddrFrom4([4]byte{192, 0, 2, byte(rapid.IntRange(1, 4).Draw(t, fmt.Sprint("ip", i)))})}, dns.TypeA
			case 1:
				r, typ = libdns.TXT{Name: name, TTL: time.Minute, Text: rapid.SampledFrom([]string{"x", "y"}).Draw(t, fmt.Sprint("txt", i))}, dns.TypeTXT
			default:
				if name == "@" {
					continue
				}
				r, typ = libdns.CNAME{Name: name, TTL: time.Minute, Target: rapid.SampledFrom([]string{"a", "c", "nx", "b.w"}).Draw(t, fmt.Sprint("target", i)) + "." + signedZone}, dns.TypeCNAME
			}
			if _, err := p.AppendRecords(context.Background(), signedZone, []libdns.Record{r}); err != nil {
				continue // a CNAME beside other data, or other data beside a CNAME
			}
			if model[name] == nil {
				model[name] = map[uint16]bool{}
			}
			model[name][typ] = true
		}
		if rapid.Bool().Draw(t, "hook") {
			p.SetZoneAnswerFunc(signedZone, func(c netip.Prefix, _, _ string, rrs []libdns.Record) ([]libdns.Record, int) {
				i := int(c.Addr().As4()[3]) % len(rrs)
				return rrs[i : i+1], 32
			})
		}
		fq := func(rel string) string {
			if rel == "@" {
				return signedZone
			}
			return rel + "." + signedZone
		}
		exists := func(rel string) bool { return len(model[rel]) > 0 }
		// typesAt is what the NSEC at name must list, or nil with nx true
		// for a name that does not exist.
		typesAt := func(name string) (types []uint16, nx bool) {
			rel := strings.TrimSuffix(strings.TrimSuffix(name, signedZone), ".")
			if rel == "" {
				rel = "@"
			}
			set := model[rel]
			if !exists(rel) {
				ent := false
				for n := range model {
					if exists(n) && strings.HasSuffix(n, "."+rel) {
						ent = true
					}
				}
				if !ent {
					// The wildcard at the closest encloser, if any.
					ce := rel
					for {
						i := strings.IndexByte(ce, '.')
						if i < 0 {
							ce = "@"
							break
						}
						ce = ce[i+1:]
						isENT := false
						for n := range model {
							if exists(n) && strings.HasSuffix(n, "."+ce) {
								isENT = true
							}
						}
						if exists(ce) || isENT {
							break
						}
					}
					w := "*." + ce
					if ce == "@" {
						w = "*"
					}
					if !exists(w) {
						return nil, true
					}
					set = model[w]
				}
			}
			for t := range set {
				types = append(types, t)
			}
			if rel == "@" {
				types = append(types, dns.TypeSOA, dns.TypeDNSKEY, dns.TypeCDS, dns.TypeCDNSKEY)
			}
			return append(types, dns.TypeRRSIG, dns.TypeNSEC), false
		}
		now := time.Now()
		for i := range rapid.IntRange(1, 6).Draw(t, "queries") {
			qname := fq(rapid.SampledFrom([]string{"@", "a", "b", "a.b", "c", "w", "q.w", "r.q.w", "x.q.w", "nx", "x.a"}).Draw(t, fmt.Sprint("q", i)))
			qtype := rapid.SampledFrom([]uint16{dns.TypeA, dns.TypeTXT, dns.TypeMX, dns.TypeCNAME}).Draw(t, fmt.Sprint("qt", i))
			co := rapid.Bool().Draw(t, fmt.Sprint("co", i))
			src := fmt.Sprintf("192.0.2.%d", rapid.IntRange(1, 4).Draw(t, fmt.Sprint("src", i)))
			m := signedQuery(t, p, qname, qtype, true, co, src)
			if err := validates(m, s.DNSKEYs(), nil, now); err != nil {
				t.Fatalf("%s %s: %v\n%s", qname, dns.TypeToString[qtype], err, m)
			}
			if len(m.Ns) == 0 || m.Ns[0].Header().Rrtype != dns.TypeSOA {
				for _, n := range nsecs(m) { // wildcard proofs only, one per expansion
					if !slices.Equal(n.TypeBitMap, []uint16{dns.TypeRRSIG, dns.TypeNSEC}) {
						t.Fatalf("positive answer with NSEC %s\n%s", n, m)
					}
				}
				continue
			}
			end := qname
			for _, rr := range m.Answer {
				if c, ok := rr.(*dns.CNAME); ok {
					end = c.Target
				}
			}
			var ns []*dns.NSEC
			for _, n := range nsecs(m) {
				if n.Hdr.Name == end {
					ns = append(ns, n)
				} else if !slices.Equal(n.TypeBitMap, []uint16{dns.TypeRRSIG, dns.TypeNSEC}) || n.NextDomain == dnssec.Successor(n.Hdr.Name) {
					t.Fatalf("an NSEC that is not a wildcard proof: %s\n%s", n, m)
				}
			}
			if len(ns) != 1 {
				t.Fatalf("negative answer for %s: want one NSEC at %s\n%s", qname, end, m)
			}
			want, nx := typesAt(end)
			if nx {
				want = []uint16{dns.TypeRRSIG, dns.TypeNSEC, dnssec.TypeNXNAME}
				if co != (m.Rcode == dns.RcodeNameError) {
					t.Fatalf("rcode %s with CO %v\n%s", dns.RcodeToString[m.Rcode], co, m)
				}
			}
			slices.Sort(want)
			want = slices.Compact(want)
			got := slices.Clone(ns[0].TypeBitMap)
			slices.Sort(got)
			if !slices.Equal(want, got) {
				t.Fatalf("NSEC bitmap at %s: got %v, want %v\n%s", end, got, want, m)
			}
		}
	})
}
