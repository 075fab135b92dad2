package testdnssec_test

import (
	"context"
	"net/netip"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gslbkit/gslb/internal/testdnssec"
	"github.com/gslbkit/gslb/provider/dnssec"
	"github.com/gslbkit/gslb/provider/dnsserver"
	"github.com/gslbkit/gslb/provider/memory"
	"github.com/libdns/libdns"
	"github.com/miekg/dns"
)

// online is the embedded server answering online.test. signed online.
type online struct {
	p      *memory.Provider
	signer *dnssec.Signer
	addr   string
}

// startOnline serves online.test. signed online (one combined signing key)
// on 127.0.0.1: addresses of in-zone name servers and mail exchangers, a
// delegation with glue, a wildcard, an empty non-terminal.
func startOnline(t *testing.T) *online {
	t.Helper()
	const zone = "online.test."
	key, err := dnssec.GenerateKey(zone, dnssec.ECDSAP256SHA256, dnssec.FlagsKSK, 30)
	if err != nil {
		t.Fatal(err)
	}
	o := &online{p: new(memory.Provider)}
	if o.signer, err = dnssec.NewSigner(zone, dnssec.Config{Keys: []dnssec.ZoneKey{{Key: key}}, Validity: time.Hour}); err != nil {
		t.Fatal(err)
	}
	cfg := memory.DefaultZoneConfig()
	cfg.Signer = o.signer
	if err := o.p.AddZoneWith(zone, cfg); err != nil {
		t.Fatal(err)
	}
	ip := netip.MustParseAddr
	ttl := 30 * time.Second
	if _, err := o.p.AppendRecords(context.Background(), zone, []libdns.Record{
		libdns.Address{Name: "ns1", TTL: ttl, IP: ip("127.0.0.1")},
		libdns.Address{Name: "www", TTL: ttl, IP: ip("192.0.2.1")},
		libdns.MX{Name: "mail", TTL: ttl, Preference: 10, Target: "mx.online.test."},
		libdns.Address{Name: "mx", TTL: ttl, IP: ip("192.0.2.25")},
		libdns.Address{Name: "mx", TTL: ttl, IP: ip("2001:db8::25")},
		libdns.Address{Name: "a.ent", TTL: ttl, IP: ip("192.0.2.3")},
		libdns.Address{Name: "*.w", TTL: ttl, IP: ip("192.0.2.5")},
		libdns.NS{Name: "sub", TTL: ttl, Target: "ns.sub.online.test."},
		libdns.Address{Name: "ns.sub", TTL: ttl, IP: ip("127.0.0.1")},
	}); err != nil {
		t.Fatal(err)
	}
	scfg := dnsserver.DefaultServerConfig()
	scfg.Addr = "127.0.0.1:0"
	srv, err := dnsserver.NewServer(o.p, scfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := srv.Listen(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- srv.Run(context.Background()) }()
	t.Cleanup(func() {
		_ = srv.Close()
		<-done
	})
	o.addr = srv.Addr()
	return o
}

// validatorFor starts unbound, and delv's configuration, behind a parent
// BIND serves test. signed, delegating online.test. to o with its DS.
func validatorFor(t *testing.T, o *online) *testdnssec.Validator {
	t.Helper()
	dir := t.TempDir()
	pKSK, pZSK := testdnssec.KeyGen(t, dir, "test.", true), testdnssec.KeyGen(t, dir, "test.", false)
	var b strings.Builder
	b.WriteString("@ IN SOA ns hostmaster SERIAL 60 60 600 30\n@ IN NS ns\nns IN A 127.0.0.1\n")
	b.WriteString("online IN NS ns1.online\nns1.online IN A 127.0.0.1\n")
	for _, k := range o.signer.CDS() {
		d := k.(*dns.CDS).DS
		d.Hdr.Rrtype = dns.TypeDS
		b.WriteString(d.String() + "\n")
	}
	parent := &testdnssec.Zone{Name: "test.", Text: b.String(), Sign: []*testdnssec.Key{pKSK, pZSK}}
	auth := testdnssec.StartAuthority(t, parent)
	v := testdnssec.StartValidator(t, []dns.RR{pKSK.DNSKEY}, map[string]string{"test.": auth.Addr, "online.test.": o.addr})
	return v
}

// TestOnlineSignedValidated has unbound and delv, behind a parent BIND
// serves signed with the DS of the embedded server's online-signed zone,
// validate what the gaps of online signing were: answers whose additional
// section carries in-zone addresses (now signed), and queries for type
// NSEC at names that exist, at an empty non-terminal, at a name a wildcard
// synthesises and at a name that does not exist.
func TestOnlineSignedValidated(t *testing.T) {
	testdnssec.Require(t, "named", "dnssec-keygen", "dnssec-signzone", "unbound", "unbound-control", "delv")
	o := startOnline(t)
	v := validatorFor(t, o)

	for _, tc := range []struct {
		name  string
		qname string
		qtype uint16
	}{
		{"MX with signed addresses", "mail.online.test.", dns.TypeMX},
		{"apex NS with signed addresses", "online.test.", dns.TypeNS},
		{"the addresses themselves", "mx.online.test.", dns.TypeAAAA},
		{"NSEC at a name", "www.online.test.", dns.TypeNSEC},
		{"NSEC at the apex", "online.test.", dns.TypeNSEC},
		{"NSEC at an empty non-terminal", "ent.online.test.", dns.TypeNSEC},
		{"NSEC at a name a wildcard synthesises", "x.w.online.test.", dns.TypeNSEC},
		{"NSEC at a name that does not exist", "nope.online.test.", dns.TypeNSEC},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := v.Query(t, tc.qname, tc.qtype)
			if !a.Secure() || len(a.Msg.Answer) == 0 {
				t.Errorf("unbound: %s %s: %v\n%v", tc.qname, dns.TypeToString[tc.qtype], a, a.Msg)
			}
			if tc.qtype == dns.TypeNSEC {
				var nsec *dns.NSEC
				for _, rr := range a.Msg.Answer {
					if n, ok := rr.(*dns.NSEC); ok {
						nsec = n
					}
				}
				if nsec == nil || nsec.Hdr.Name != tc.qname {
					t.Errorf("unbound: no NSEC at %s in the answer:\n%v", tc.qname, a.Msg)
				}
			}
			d := v.Delv(t, tc.qname, tc.qtype)
			if !d.Validated || d.Negative {
				t.Errorf("delv: %s %s: %q, want a validated answer\n%s", tc.qname, dns.TypeToString[tc.qtype], d.Status, d.Output)
			}
		})
	}
	// The server's own reply carries the additional addresses with their
	// RRSIGs, and the glue of the delegation without.
	m := new(dns.Msg)
	m.SetQuestion("mail.online.test.", dns.TypeMX)
	m.SetEdns0(1232, true)
	r, _, err := (&dns.Client{Net: "udp", Timeout: 10 * time.Second}).Exchange(m, o.addr)
	if err != nil {
		t.Fatal(err)
	}
	covered := map[uint16]bool{}
	for _, rr := range r.Extra {
		if s, ok := rr.(*dns.RRSIG); ok && s.Hdr.Name == "mx.online.test." {
			covered[s.TypeCovered] = true
		}
	}
	if !covered[dns.TypeA] || !covered[dns.TypeAAAA] {
		t.Errorf("the additional addresses of mx.online.test. are not signed:\n%v", r)
	}
	if strings.Contains(v.Log(), "validation failure") {
		t.Errorf("unbound logged a validation failure:\n%s", v.Log())
	}
}

// digReply is what TestOnlineSignedCompactAnswers reads of dig's output.
type digReply struct {
	rcode  string // "NOERROR", "NXDOMAIN", …
	eflags string // the EDNS flags dig prints: "do", "do co", …
	body   string // the sections, for comparing two replies
}

var (
	digStatus = regexp.MustCompile(`status: ([A-Z]+),`)
	digEDNS   = regexp.MustCompile(`; EDNS: version: 0, flags:([^;]*);`)
)

// dig runs dig against addr with args and reads the reply.
func dig(t *testing.T, path, addr string, args ...string) digReply {
	t.Helper()
	host, port, _ := strings.Cut(addr, ":")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	all := append([]string{"@" + host, "-p", port, "+norec", "+tries=1", "+time=5", "+nocookie"}, args...)
	out, err := exec.CommandContext(ctx, path, all...).CombinedOutput()
	if err != nil {
		t.Fatalf("dig %s: %v\n%s", strings.Join(all, " "), err, out)
	}
	s := string(out)
	st := digStatus.FindStringSubmatch(s)
	i := strings.Index(s, ";; QUESTION SECTION:")
	if st == nil || i < 0 {
		t.Fatalf("dig %s: no status line or question in\n%s", strings.Join(all, " "), s)
	}
	r := digReply{rcode: st[1], body: s[i:]}
	if ed := digEDNS.FindStringSubmatch(s); ed != nil {
		r.eflags = strings.TrimSpace(ed[1])
	}
	if i := strings.Index(r.body, ";; Query time"); i >= 0 {
		r.body = r.body[:i]
	}
	return r
}

// TestOnlineSignedCompactAnswers sends the Compact Answers OK flag (RFC
// 9824 section 4: EDNS header flag bit 1, 0x4000, after DO at 0x8000)
// from a real client: dig +dnssec +coflag (BIND 9.18.49's dig; its
// +ednsflags keeps the bits it knows, CO among them, out of the query, and
// kdig 3.2 has no option for EDNS flags). A name that does not exist gets NXDOMAIN with CO echoed; without
// CO, NOERROR with the NXNAME NSEC and no CO; and the second query of
// each, answered from the fast path's cache, is the first's reply.
func TestOnlineSignedCompactAnswers(t *testing.T) {
	path := testdnssec.Require(t, "dig")[0]
	o := startOnline(t)
	for _, tc := range []struct {
		name   string
		args   []string
		rcode  string
		eflags string
		nxname bool
	}{
		{"CO", []string{"+dnssec", "+coflag"}, "NXDOMAIN", "do co", true},
		{"no CO", []string{"+dnssec"}, "NOERROR", "do", true},
		{"no DO", []string{"+edns"}, "NXDOMAIN", "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var first digReply
			for i := range 2 {
				r := dig(t, path, o.addr, append(tc.args, "nope.online.test.", "A")...)
				if r.rcode != tc.rcode || r.eflags != tc.eflags {
					t.Errorf("query %d: status %s, EDNS flags %q; want %s, %q\n%s", i, r.rcode, r.eflags, tc.rcode, tc.eflags, r.body)
				}
				if got := strings.Contains(r.body, "NSEC\t\\000.nope.online.test. RRSIG NSEC TYPE128"); got != tc.nxname {
					t.Errorf("query %d: NXNAME NSEC in the reply %v, want %v\n%s", i, got, tc.nxname, r.body)
				}
				if i == 0 {
					first = r
				} else if r != first {
					t.Errorf("the cached reply differs from the first:\n%s\nvs\n%s", first.body, r.body)
				}
			}
		})
	}
	// A name that exists answers the same records with or without CO.
	a := dig(t, path, o.addr, "+dnssec", "+coflag", "www.online.test.", "A")
	b := dig(t, path, o.addr, "+dnssec", "www.online.test.", "A")
	if a.rcode != "NOERROR" || a.eflags != "do co" || b.eflags != "do" || a.body != b.body {
		t.Errorf("www with CO: %s %q, without: %s %q; want the same records\n%s\n%s", a.rcode, a.eflags, b.rcode, b.eflags, a.body, b.body)
	}
	t.Log(a.body)
}
