package testdnssec_test

import (
	"strings"
	"testing"
	"time"

	"github.com/gslbkit/gslb/internal/testdnssec"
	"github.com/miekg/dns"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const childText = `@ IN SOA ns1 hostmaster SERIAL 60 60 600 30
@ IN NS ns1
ns1 IN A 127.0.0.1
www IN A 192.0.2.1
*.wild IN A 192.0.2.2
alias IN CNAME alias2
alias2 IN CNAME www
sub IN NS ns.sub
ns.sub IN A 127.0.0.1
insec IN NS ns.insec
ns.insec IN A 127.0.0.1
`

// parentText returns the parent zone "test." delegating each child, with
// the DS records given.
func parentText(ds ...*dns.DS) string {
	var b strings.Builder
	b.WriteString("@ IN SOA ns hostmaster SERIAL 60 60 600 30\n@ IN NS ns\nns IN A 127.0.0.1\n")
	for _, c := range []string{"example", "broken"} {
		b.WriteString(c + " IN NS ns1." + c + "\nns1." + c + " IN A 127.0.0.1\n")
	}
	for _, d := range ds {
		b.WriteString(d.String() + "\n")
	}
	return b.String()
}

// TestHarnessValidates proves the harness on zones BIND's dnssec-signzone
// signed: every kind of answer validates in unbound and delv, an expired
// signature fails in both with the reason said, and a child's KSK roll is
// followed through the parent's DS.
func TestHarnessValidates(t *testing.T) {
	testdnssec.Require(t, "named", "dnssec-keygen", "dnssec-signzone", "unbound", "unbound-control", "delv", "kzonecheck", "ldns-verify-zone")
	dir := t.TempDir()
	pKSK, pZSK := testdnssec.KeyGen(t, dir, "test.", true), testdnssec.KeyGen(t, dir, "test.", false)
	cKSK, cZSK := testdnssec.KeyGen(t, dir, "example.test.", true), testdnssec.KeyGen(t, dir, "example.test.", false)
	subKSK := testdnssec.KeyGen(t, dir, "sub.example.test.", true)
	bKey := testdnssec.KeyGen(t, dir, "broken.test.", true)

	child := &testdnssec.Zone{Name: "example.test.", Text: childText + subKSK.DS().String() + "\n", Sign: []*testdnssec.Key{cKSK, cZSK}}
	now := time.Now()
	broken := &testdnssec.Zone{Name: "broken.test.", Text: childText, Sign: []*testdnssec.Key{bKey},
		Inception: now.Add(-48 * time.Hour), Expiration: now.Add(-24 * time.Hour)}
	parent := &testdnssec.Zone{Name: "test.", Text: parentText(cKSK.DS(), bKey.DS()), Sign: []*testdnssec.Key{pKSK, pZSK}}
	auth := testdnssec.StartAuthority(t, parent, child, broken)
	v := testdnssec.StartValidator(t, []dns.RR{pKSK.DNSKEY}, map[string]string{
		"test.": auth.Addr, "example.test.": auth.Addr, "broken.test.": auth.Addr})

	secure := []struct {
		name     string
		qname    string
		qtype    uint16
		rcode    int
		negative bool
	}{
		{"positive", "www.example.test.", dns.TypeA, dns.RcodeSuccess, false},
		{"NODATA", "www.example.test.", dns.TypeAAAA, dns.RcodeSuccess, true},
		{"NXDOMAIN", "nope.example.test.", dns.TypeA, dns.RcodeNameError, true},
		{"wildcard", "x.wild.example.test.", dns.TypeA, dns.RcodeSuccess, false},
		{"wildcard NODATA", "x.wild.example.test.", dns.TypeTXT, dns.RcodeSuccess, true},
		{"CNAME chain", "alias.example.test.", dns.TypeA, dns.RcodeSuccess, false},
		{"delegation with DS", "sub.example.test.", dns.TypeDS, dns.RcodeSuccess, false},
		{"delegation without DS", "insec.example.test.", dns.TypeDS, dns.RcodeSuccess, true},
		{"apex DNSKEY", "example.test.", dns.TypeDNSKEY, dns.RcodeSuccess, false},
	}
	for _, c := range secure {
		t.Run(c.name, func(t *testing.T) {
			a := v.Query(t, c.qname, c.qtype)
			if !a.Secure() || a.Rcode != c.rcode {
				t.Errorf("unbound: %s %s: %v, want %s with AD", c.qname, dns.TypeToString[c.qtype], a, dns.RcodeToString[c.rcode])
			}
			d := v.Delv(t, c.qname, c.qtype)
			if !d.Validated || d.Negative != c.negative {
				t.Errorf("delv: %s %s: %q (negative=%v), want validated, negative=%v\n%s", c.qname, dns.TypeToString[c.qtype], d.Status, d.Negative, c.negative, d.Output)
			}
		})
	}
	t.Run("expired signature fails", func(t *testing.T) {
		d := v.Delv(t, "www.broken.test.", dns.TypeA)
		if d.Validated || !strings.Contains(d.Output, "expired") {
			t.Errorf("delv: www.broken.test A: %q, want a failure saying the signature expired\n%s", d.Status, d.Output)
		}
		a := v.Query(t, "www.broken.test.", dns.TypeA)
		if a.Rcode != dns.RcodeServerFailure || !strings.Contains(a.Reason, "expired") {
			t.Errorf("unbound: www.broken.test A: %v, want SERVFAIL saying the signature expired", a)
		}
	})
	t.Run("transferred zones checked", func(t *testing.T) {
		rrs, err := testdnssec.Transfer("example.test.", auth.Addr)
		if err != nil {
			t.Fatal(err)
		}
		if err := testdnssec.CheckZone(t, "example.test.", rrs); err != nil {
			t.Errorf("the zone dnssec-signzone signed: %v", err)
		}
		if rrs, err = testdnssec.Transfer("broken.test.", auth.Addr); err != nil {
			t.Fatal(err)
		}
		if err := testdnssec.CheckZone(t, "broken.test.", rrs); err == nil || !strings.Contains(err.Error(), "kzonecheck") || !strings.Contains(err.Error(), "ldns-verify-zone") {
			t.Errorf("the zone whose signatures expired: %v, want both tools to refuse it", err)
		}
	})
	t.Run("KSK roll through the parent's DS", func(t *testing.T) {
		check := func(step string) {
			t.Helper()
			v.Flush(t, "test.")
			if a := v.Query(t, "www.example.test.", dns.TypeA); !a.Secure() {
				t.Errorf("%s: unbound: %v", step, a)
			}
			if d := v.Delv(t, "www.example.test.", dns.TypeA); !d.Validated {
				t.Errorf("%s: delv: %q\n%s", step, d.Status, d.Output)
			}
		}
		newKSK := testdnssec.KeyGen(t, dir, "example.test.", true)
		child.Sign = []*testdnssec.Key{cKSK, newKSK, cZSK} // double signature of the DNSKEY set
		auth.Update(t, child)
		check("new KSK signs beside the old")
		parent.Text = parentText(newKSK.DS(), bKey.DS())
		auth.Update(t, parent)
		check("parent's DS names the new KSK")
		child.Sign = []*testdnssec.Key{newKSK, cZSK}
		auth.Update(t, child)
		check("old KSK removed")
		parent.Text = parentText(cKSK.DS(), bKey.DS()) // back to a DS naming a key no longer there
		auth.Update(t, parent)
		v.Flush(t, "test.")
		if a := v.Query(t, "www.example.test.", dns.TypeA); a.Rcode != dns.RcodeServerFailure {
			t.Errorf("a DS naming a removed KSK: unbound: %v, want SERVFAIL", a)
		}
	})
}
