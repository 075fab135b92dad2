package memory_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gslbkit/gslb/provider/dnssec"
	"github.com/miekg/dns"
	"github.com/stretchr/testify/require"
)

// validates reports why the RRsets of m's answer and authority sections
// (a delegation's NS RRset excepted) would not validate with the DNSKEY
// set keys at now, as a validator does: each needs at least one RRSIG by
// one of keys that verifies and is in its validity period. sep, when not
// nil, are the key tags the parent's DS set names: the DNSKEY RRset must
// then be signed by one of them.
func validates(m *dns.Msg, keys []dns.RR, sep map[uint16]bool, now time.Time) error {
	for _, sec := range [][]dns.RR{m.Answer, m.Ns} {
		sets := map[string][]dns.RR{}
		sigs := map[string][]*dns.RRSIG{}
		for _, rr := range sec {
			h := rr.Header()
			if s, ok := rr.(*dns.RRSIG); ok {
				k := strings.ToLower(h.Name) + "/" + dns.TypeToString[s.TypeCovered]
				sigs[k] = append(sigs[k], s)
				continue
			}
			k := strings.ToLower(h.Name) + "/" + dns.TypeToString[h.Rrtype]
			sets[k] = append(sets[k], rr)
		}
		for k, set := range sets {
			if set[0].Header().Rrtype == dns.TypeNS && set[0].Header().Name != signedZone {
				continue
			}
			ok := false
			for _, s := range sigs[k] {
				if set[0].Header().Rrtype == dns.TypeDNSKEY && sep != nil && !sep[s.KeyTag] {
					continue
				}
				for _, rr := range keys {
					d := rr.(*dns.DNSKEY)
					if d.KeyTag() == s.KeyTag && d.Algorithm == s.Algorithm && s.Verify(d, set) == nil && s.ValidityPeriod(now) {
						ok = true
					}
				}
			}
			if !ok {
				return fmt.Errorf("%s: no RRSIG validates with keys %v (sigs %v)", k, tags(keys), sigs[k])
			}
		}
	}
	return nil
}

func tags(keys []dns.RR) []uint16 {
	var out []uint16
	for _, k := range keys {
		out = append(out, k.(*dns.DNSKEY).KeyTag())
	}
	return out
}

// TestKeyRollover walks a ZSK roll by pre-publication and then a KSK roll
// by double signature, with the parent's DS set following the CDS RRset,
// as docs/dnssec.md describes. At every step a resolver may hold, from the
// step before, the DNSKEY RRset, the DS set and signed answers in its
// cache: every answer of this step must validate with the keys cached,
// and every cached answer with this step's keys; the DNSKEY RRset must be
// signed by a key the parent's DS set names (the current or the cached).
func TestKeyRollover(t *testing.T) {
	gen := func(flags uint16) *dnssec.Key {
		k, err := dnssec.GenerateKey(signedZone, dnssec.ECDSAP256SHA256, flags, 300)
		require.NoError(t, err)
		return k
	}
	ksk1, zsk1, zsk2, ksk2 := gen(dnssec.FlagsKSK), gen(dnssec.FlagsZSK), gen(dnssec.FlagsZSK), gen(dnssec.FlagsKSK)
	a, p := dnssec.Active, dnssec.Published
	steps := []struct {
		name string
		keys []dnssec.ZoneKey
		ds   []*dnssec.Key // the parent's DS set during the step
	}{
		{"start: KSK1 and ZSK1", []dnssec.ZoneKey{{Key: ksk1, State: a}, {Key: zsk1, State: a}}, []*dnssec.Key{ksk1}},
		{"ZSK roll 1: ZSK2 pre-published", []dnssec.ZoneKey{{Key: ksk1, State: a}, {Key: zsk1, State: a}, {Key: zsk2, State: p}}, []*dnssec.Key{ksk1}},
		{"ZSK roll 2: ZSK2 signs, ZSK1 kept published", []dnssec.ZoneKey{{Key: ksk1, State: a}, {Key: zsk1, State: p}, {Key: zsk2, State: a}}, []*dnssec.Key{ksk1}},
		{"ZSK roll 3: ZSK1 removed", []dnssec.ZoneKey{{Key: ksk1, State: a}, {Key: zsk2, State: a}}, []*dnssec.Key{ksk1}},
		{"KSK roll 1: KSK2 double-signs the key set; CDS lists both", []dnssec.ZoneKey{{Key: ksk1, State: a}, {Key: ksk2, State: a}, {Key: zsk2, State: a}}, []*dnssec.Key{ksk1}},
		{"KSK roll 2: the parent publishes both DS", []dnssec.ZoneKey{{Key: ksk1, State: a}, {Key: ksk2, State: a}, {Key: zsk2, State: a}}, []*dnssec.Key{ksk1, ksk2}},
		{"KSK roll 3: KSK1 removed, the parent keeps KSK2's DS", []dnssec.ZoneKey{{Key: ksk2, State: a}, {Key: zsk2, State: a}}, []*dnssec.Key{ksk2}},
	}
	prov, s := signedFixture(t, steps[0].keys...)
	questions := []struct {
		name string
		t    uint16
	}{{signedZone, dns.TypeDNSKEY}, {signedZone, dns.TypeCDS}, {"www." + signedZone, dns.TypeA}, {"geo." + signedZone, dns.TypeA},
		{"nope." + signedZone, dns.TypeA}, {"a.b.wild." + signedZone, dns.TypeA}, {"www." + signedZone, dns.TypeMX}}
	var prevKeys []dns.RR
	var prevDS map[uint16]bool
	var prevAnswers []*dns.Msg
	var firstKeys []dns.RR
	for i, st := range steps {
		require.NoError(t, s.SetKeys(st.keys), st.name)
		now := time.Now()
		keys := signedQuery(t, prov, signedZone, dns.TypeDNSKEY, true, false, "192.0.2.1").Answer
		var published []dns.RR
		for _, rr := range keys {
			if _, ok := rr.(*dns.DNSKEY); ok {
				published = append(published, rr)
			}
		}
		require.Len(t, published, len(st.keys), st.name)
		ds := map[uint16]bool{}
		for _, k := range st.ds {
			ds[k.Tag()] = true
		}
		var answers []*dns.Msg
		for _, q := range questions {
			m := signedQuery(t, prov, q.name, q.t, true, false, "192.0.2.1")
			answers = append(answers, m)
			require.NoError(t, validates(m, published, ds, now), "%s: %s %s with this step's keys", st.name, q.name, dns.TypeToString[q.t])
			if i > 0 {
				require.NoError(t, validates(m, prevKeys, prevDS, now), "%s: %s %s with the cached keys", st.name, q.name, dns.TypeToString[q.t])
			}
		}
		for j, m := range prevAnswers {
			if questions[j].t == dns.TypeDNSKEY || questions[j].t == dns.TypeCDS {
				continue // the key RRsets are validated as fetched, above
			}
			require.NoError(t, validates(m, published, ds, now), "%s: cached %s %s with this step's keys", st.name, questions[j].name, dns.TypeToString[questions[j].t])
		}
		// CDS names the active SEP keys: what the parent moves to next.
		var cds []uint16
		for _, rr := range signedQuery(t, prov, signedZone, dns.TypeCDS, true, false, "192.0.2.1").Answer {
			if c, ok := rr.(*dns.CDS); ok {
				cds = append(cds, c.KeyTag)
			}
		}
		var want []uint16
		for _, zk := range st.keys {
			if zk.Key.SEP() && zk.State == dnssec.Active {
				want = append(want, zk.Key.Tag())
			}
		}
		require.ElementsMatch(t, want, cds, st.name)
		if i == 0 {
			firstKeys = published
		}
		prevKeys, prevDS, prevAnswers = published, ds, answers
	}
	// The check has teeth: skipping the pre-publication (a resolver still
	// holding the first DNSKEY RRset) fails on the new ZSK's signatures.
	require.Error(t, validates(prevAnswers[2], firstKeys, nil, time.Now()))
}
