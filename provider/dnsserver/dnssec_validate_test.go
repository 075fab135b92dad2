package dnsserver_test

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gslbkit/gslb/internal/testdnssec"
	"github.com/gslbkit/gslb/provider/dnssec"
	"github.com/gslbkit/gslb/provider/dnsserver"
	"github.com/gslbkit/gslb/provider/memory"
	"github.com/libdns/libdns"
	"github.com/miekg/dns"
)

// signedChain is the chain of trust the validation tests walk: a parent
// zone test. that BIND serves pre-signed (dnssec-signzone), holding the DS
// of example.test., which the embedded server signs online and which holds
// the DS of sec.example.test., pre-signed and served by BIND again; unbound
// and delv validate from the parent's KSK as trust anchor.
type signedChain struct {
	parent *testdnssec.Zone
	auth   *testdnssec.Authority
	v      *testdnssec.Validator
	p      *memory.Provider
	signer *dnssec.Signer
	srv    *dnsserver.Server
	hooked atomic.Uint64
}

// parentOf returns the parent zone's text delegating example.test. with
// the given DS records.
func parentOf(ds ...dns.RR) string {
	var b strings.Builder
	b.WriteString("@ IN SOA ns hostmaster SERIAL 60 60 600 30\n@ IN NS ns\nns IN A 127.0.0.1\n")
	b.WriteString("example IN NS ns1.example\nns1.example IN A 127.0.0.1\n")
	for _, d := range ds {
		b.WriteString(d.String() + "\n")
	}
	return b.String()
}

// startSignedChain serves example.test. signed online with keys, behind a
// parent whose DS names the SEP keys among them, and starts the validators.
func startSignedChain(t *testing.T, keys []dnssec.ZoneKey) *signedChain {
	t.Helper()
	testdnssec.Require(t, "named", "dnssec-keygen", "dnssec-signzone", "unbound", "unbound-control", "delv")
	c := &signedChain{}
	signer, err := dnssec.NewSigner("example.test.", dnssec.Config{Keys: keys, Validity: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	c.signer = signer
	cfg := memory.DefaultZoneConfig()
	cfg.Signer = signer
	c.p = new(memory.Provider)
	if err := c.p.AddZoneWith("example.test.", cfg); err != nil {
		t.Fatal(err)
	}
	ip := netip.MustParseAddr
	ttl := 30 * time.Second
	if _, err := c.p.AppendRecords(context.Background(), "example.test.", []libdns.Record{
		libdns.Address{Name: "ns1", TTL: ttl, IP: ip("127.0.0.1")},
		libdns.Address{Name: "www", TTL: ttl, IP: ip("192.0.2.1")},
		libdns.Address{Name: "www", TTL: ttl, IP: ip("192.0.2.2")},
		libdns.Address{Name: "a.ent", TTL: ttl, IP: ip("192.0.2.3")},
		libdns.Address{Name: "*.w", TTL: ttl, IP: ip("192.0.2.5")},
		libdns.CNAME{Name: "app", TTL: ttl, Target: "app2.example.test."},
		libdns.CNAME{Name: "app2", TTL: ttl, Target: "www.example.test."},
		libdns.NS{Name: "sub", TTL: ttl, Target: "ns.sub.example.test."},
		libdns.Address{Name: "ns.sub", TTL: ttl, IP: ip("127.0.0.1")},
		libdns.Address{Name: "hooked", TTL: ttl, IP: ip("198.51.100.1")},
		libdns.Address{Name: "hooked", TTL: ttl, IP: ip("198.51.100.2")},
		libdns.Address{Name: "hooked", TTL: ttl, IP: ip("198.51.100.3")},
	}); err != nil {
		t.Fatal(err)
	}
	// The hook answers one address per query, in turn (as a weighted or
	// geographic choice answers a subset), so the validators see each.
	c.p.SetAnswerFunc("hooked.example.test.", func(_ netip.Prefix, _, _ string, rrs []libdns.Record) ([]libdns.Record, int) {
		if len(rrs) == 0 {
			return rrs, 0
		}
		i := c.hooked.Add(1) % uint64(len(rrs))
		return rrs[i : i+1], 0
	})
	// A signed grandchild, sec.example.test., pre-signed by dnssec-signzone
	// and served by BIND: the zone holds its DS (a secure delegation).
	dir := t.TempDir()
	secKSK := testdnssec.KeyGen(t, dir, "sec.example.test.", true)
	ds := secKSK.DS()
	if _, err := c.p.AppendRecords(context.Background(), "example.test.", []libdns.Record{
		libdns.NS{Name: "sec", TTL: ttl, Target: "ns.sec.example.test."},
		libdns.Address{Name: "ns.sec", TTL: ttl, IP: ip("127.0.0.1")},
		libdns.RR{Name: "sec", TTL: ttl, Type: "DS", Data: fmt.Sprintf("%d %d %d %s", ds.KeyTag, ds.Algorithm, ds.DigestType, ds.Digest)},
	}); err != nil {
		t.Fatal(err)
	}
	grandchild := &testdnssec.Zone{Name: "sec.example.test.", Sign: []*testdnssec.Key{secKSK},
		Text: "@ IN SOA ns hostmaster SERIAL 60 60 600 30\n@ IN NS ns\nns IN A 127.0.0.1\nwww IN A 192.0.2.7\n"}
	c.srv = startServer(t, c.p, func(*dnsserver.ServerConfig) {})

	pKSK, pZSK := testdnssec.KeyGen(t, dir, "test.", true), testdnssec.KeyGen(t, dir, "test.", false)
	c.parent = &testdnssec.Zone{Name: "test.", Text: parentOf(c.cds(t)...), Sign: []*testdnssec.Key{pKSK, pZSK}}
	c.auth = testdnssec.StartAuthority(t, c.parent, grandchild)
	c.v = testdnssec.StartValidator(t, []dns.RR{pKSK.DNSKEY}, map[string]string{
		"test.": c.auth.Addr, "example.test.": c.srv.Addr(), "sec.example.test.": c.auth.Addr})
	return c
}

// cds asks the embedded server for the zone's CDS RRset and returns it as
// DS records: what the parent publishes (RFC 7344).
func (c *signedChain) cds(t *testing.T) []dns.RR {
	t.Helper()
	r := c.ask(t, "example.test.", dns.TypeCDS, false)
	var ds []dns.RR
	for _, rr := range r.Answer {
		if cds, ok := rr.(*dns.CDS); ok {
			d := cds.DS
			d.Hdr.Rrtype = dns.TypeDS
			ds = append(ds, &d)
		}
	}
	if len(ds) == 0 {
		t.Fatalf("no CDS at the apex:\n%v", r)
	}
	return ds
}

// ask queries the embedded server directly, with DO, and CO when co.
func (c *signedChain) ask(t *testing.T, name string, qtype uint16, co bool) *dns.Msg {
	t.Helper()
	m := new(dns.Msg)
	m.SetQuestion(name, qtype)
	m.SetEdns0(1232, true)
	if co {
		m.IsEdns0().SetCo()
	}
	r, _, err := (&dns.Client{Net: "tcp", Timeout: 10 * time.Second}).Exchange(m, c.srv.Addr())
	if err != nil {
		t.Fatalf("ask %s %s: %v", name, dns.TypeToString[qtype], err)
	}
	return r
}

// validated checks that unbound (AD, rcode) and delv (its verdict) both
// validate name/qtype; negative says the answer is NODATA or NXDOMAIN.
func (c *signedChain) validated(t *testing.T, step, name string, qtype uint16, negative bool) {
	t.Helper()
	a := c.v.Query(t, name, qtype)
	if !a.Secure() || (negative && len(a.Msg.Answer) > 0) || (!negative && len(a.Msg.Answer) == 0) {
		t.Errorf("%s: unbound: %s %s: %v\n%v", step, name, dns.TypeToString[qtype], a, a.Msg)
	}
	d := c.v.Delv(t, name, qtype)
	if !d.Validated || d.Negative != negative {
		t.Errorf("%s: delv: %s %s: %q, want validated (negative %v)\n%s", step, name, dns.TypeToString[qtype], d.Status, negative, d.Output)
	}
}

// noFailures checks unbound logged no validation failure so far.
func (c *signedChain) noFailures(t *testing.T) {
	t.Helper()
	if strings.Contains(c.v.Log(), "validation failure") {
		t.Errorf("unbound logged a validation failure:\n%s", c.v.Log())
	}
}

func generate(t *testing.T, flags uint16) *dnssec.Key {
	t.Helper()
	k, err := dnssec.GenerateKey("example.test.", dnssec.ECDSAP256SHA256, flags, 30)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestValidatorsAcceptSignedAnswers serves example.test. signed online by
// the embedded server (one combined signing key) behind a signed parent,
// and has unbound and delv validate every kind of answer.
func TestValidatorsAcceptSignedAnswers(t *testing.T) {
	c := startSignedChain(t, []dnssec.ZoneKey{{Key: generate(t, dnssec.FlagsKSK)}})
	cases := []struct {
		name     string
		qname    string
		qtype    uint16
		negative bool
	}{
		{"positive", "www.example.test.", dns.TypeA, false},
		{"NODATA", "www.example.test.", dns.TypeTXT, true},
		{"NXDOMAIN (compact denial, no CO)", "nope.example.test.", dns.TypeA, true},
		{"NXDOMAIN below an existing name", "x.www.example.test.", dns.TypeA, true},
		{"empty non-terminal", "ent.example.test.", dns.TypeA, true},
		{"wildcard", "x.w.example.test.", dns.TypeA, false},
		{"wildcard NODATA", "x.w.example.test.", dns.TypeTXT, true},
		{"CNAME chain", "app.example.test.", dns.TypeA, false},
		{"delegation with DS: the DS", "sec.example.test.", dns.TypeDS, false},
		{"delegation with DS: a name below it (BIND's signed zone)", "www.sec.example.test.", dns.TypeA, false},
		{"delegation without DS (provably insecure)", "sub.example.test.", dns.TypeDS, true},
		{"apex DNSKEY", "example.test.", dns.TypeDNSKEY, false},
		{"apex CDS", "example.test.", dns.TypeCDS, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c.validated(t, tc.name, tc.qname, tc.qtype, tc.negative)
		})
	}
	t.Run("hooked answers", func(t *testing.T) {
		seen := map[string]bool{}
		for i := range 3 {
			c.v.Flush(t, "example.test.")
			a := c.v.Query(t, "hooked.example.test.", dns.TypeA)
			if !a.Secure() || len(a.Msg.Answer) == 0 {
				t.Fatalf("query %d: unbound: %v\n%v", i, a, a.Msg)
			}
			for _, rr := range a.Msg.Answer {
				if x, ok := rr.(*dns.A); ok {
					seen[x.A.String()] = true
				}
			}
			c.validated(t, "hooked", "hooked.example.test.", dns.TypeA, false)
		}
		if len(seen) < 2 {
			t.Errorf("the hook's choices seen validated: %v, want more than one", seen)
		}
	})
	t.Run("compact denial on the wire", func(t *testing.T) {
		dnskeys := c.ask(t, "example.test.", dns.TypeDNSKEY, false).Answer
		for _, co := range []bool{false, true} {
			r := c.ask(t, "nope.example.test.", dns.TypeA, co)
			want := dns.RcodeSuccess
			if co {
				want = dns.RcodeNameError
			}
			if r.Rcode != want {
				t.Errorf("CO=%v: rcode %s, want %s", co, dns.RcodeToString[r.Rcode], dns.RcodeToString[want])
			}
			var nsec *dns.NSEC
			var sig *dns.RRSIG
			for _, rr := range r.Ns {
				switch x := rr.(type) {
				case *dns.NSEC:
					nsec = x
				case *dns.RRSIG:
					if x.TypeCovered == dns.TypeNSEC {
						sig = x
					}
				}
			}
			if nsec == nil || sig == nil {
				t.Fatalf("CO=%v: no signed NSEC in the authority section:\n%v", co, r)
			}
			if fmt.Sprint(nsec.TypeBitMap) != fmt.Sprint([]uint16{dns.TypeRRSIG, dns.TypeNSEC, dnssec.TypeNXNAME}) {
				t.Errorf("CO=%v: NSEC bitmap %v, want RRSIG NSEC NXNAME", co, nsec.TypeBitMap)
			}
			verified := false
			for _, k := range dnskeys {
				if key, ok := k.(*dns.DNSKEY); ok && key.KeyTag() == sig.KeyTag && sig.Verify(key, []dns.RR{nsec}) == nil {
					verified = true
				}
			}
			if !verified || !sig.ValidityPeriod(time.Now()) {
				t.Errorf("CO=%v: the NSEC's RRSIG does not verify with the zone's DNSKEYs now", co)
			}
		}
		if r := c.ask(t, "nope.example.test.", dnssec.TypeNXNAME, false); r.Rcode != dns.RcodeFormatError {
			t.Errorf("a query for NXNAME: rcode %s, want FORMERR (RFC 9824 section 3.5)", dns.RcodeToString[r.Rcode])
		}
	})
	c.noFailures(t)
}

// TestValidatorsFollowRollovers walks a ZSK pre-publish rollover and a KSK
// double-signature rollover (the parent's DS following the zone's CDS)
// with unbound and delv validating at every step: first with what they
// cached at the step before (a fresh name, so the answer is fetched anew
// and checked against the cached keys), then with their caches flushed,
// standing in for the TTLs running out.
func TestValidatorsFollowRollovers(t *testing.T) {
	ksk1, zsk1 := generate(t, dnssec.FlagsKSK), generate(t, dnssec.FlagsZSK)
	c := startSignedChain(t, []dnssec.ZoneKey{{Key: ksk1}, {Key: zsk1}})
	n := 0
	check := func(step string) {
		t.Helper()
		n++
		c.validated(t, step+" (cached keys)", fmt.Sprintf("s%d.w.example.test.", n), dns.TypeA, false)
		c.v.Flush(t, "test.")
		c.validated(t, step+" (caches expired)", "www.example.test.", dns.TypeA, false)
		if a := c.v.Query(t, fmt.Sprintf("nx%d.example.test.", n), dns.TypeA); !a.Secure() || len(a.Msg.Answer) > 0 {
			t.Errorf("%s (caches expired): unbound: nx%d.example.test. A: %v, want a validated denial", step, n, a)
		}
	}
	set := func(keys ...dnssec.ZoneKey) {
		t.Helper()
		if err := c.signer.SetKeys(keys); err != nil {
			t.Fatal(err)
		}
	}
	check("start")

	// ZSK pre-publish (RFC 6781 section 4.1.1.1).
	zsk2 := generate(t, dnssec.FlagsZSK)
	set(dnssec.ZoneKey{Key: ksk1}, dnssec.ZoneKey{Key: zsk1}, dnssec.ZoneKey{Key: zsk2, State: dnssec.Published})
	check("ZSK: new key published")
	set(dnssec.ZoneKey{Key: ksk1}, dnssec.ZoneKey{Key: zsk1, State: dnssec.Published}, dnssec.ZoneKey{Key: zsk2})
	check("ZSK: new key signs, old one published")
	set(dnssec.ZoneKey{Key: ksk1}, dnssec.ZoneKey{Key: zsk2})
	check("ZSK: old key removed")

	// KSK double signature (RFC 6781 section 4.1.2), the parent's DS
	// taken from the zone's CDS at each step.
	ksk2 := generate(t, dnssec.FlagsKSK)
	set(dnssec.ZoneKey{Key: ksk1}, dnssec.ZoneKey{Key: ksk2}, dnssec.ZoneKey{Key: zsk2})
	check("KSK: new key signs the DNSKEY set beside the old")
	c.parent.Text = parentOf(c.cds(t)...)
	c.auth.Update(t, c.parent)
	check("KSK: parent's DS names both (from CDS)")
	set(dnssec.ZoneKey{Key: ksk2}, dnssec.ZoneKey{Key: zsk2})
	check("KSK: old key removed")
	c.parent.Text = parentOf(c.cds(t)...)
	c.auth.Update(t, c.parent)
	check("KSK: parent's DS names the new key only")
	if ds := c.cds(t); len(ds) != 1 || ds[0].(*dns.DS).KeyTag != ksk2.Tag() {
		t.Errorf("CDS after the roll: %v, want the new KSK's (tag %d) only", ds, ksk2.Tag())
	}
	c.noFailures(t)
}
