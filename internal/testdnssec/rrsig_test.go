package testdnssec_test

import (
	"strings"
	"testing"

	"github.com/gslbkit/gslb/internal/testdnssec"
	"github.com/miekg/dns"
)

// TestOnlineSignedRRSIGAndANY has unbound (and delv, for ANY), behind a
// parent BIND serves signed with the DS of the online-signed zone, ask for
// type RRSIG and type ANY. A query for RRSIG gets the RRSIGs at the name (the NSEC's
// among them): validators do not validate a positive RRSIG answer (an
// RRSIG is not signed, RFC 4035 section 2.2) but they do validate a
// negative one, and the NODATA the zone gave before, whose NSEC lists
// RRSIG, was bogus (SERVFAIL). ANY gets one RRset, signed (RFC 8482
// section 4.1), or a NODATA whose NSEC does not list ANY: secure.
func TestOnlineSignedRRSIGAndANY(t *testing.T) {
	testdnssec.Require(t, "named", "dnssec-keygen", "dnssec-signzone", "unbound", "unbound-control", "delv")
	o := startOnline(t)
	v := validatorFor(t, o)
	for _, qname := range []string{"www.online.test.", "online.test.", "ent.online.test.", "x.w.online.test.", "nope.online.test."} {
		t.Run("RRSIG "+qname, func(t *testing.T) {
			a := v.Query(t, qname, dns.TypeRRSIG)
			if a.Rcode != dns.RcodeSuccess || len(a.Msg.Answer) == 0 {
				t.Fatalf("unbound: %s RRSIG: %v\n%v", qname, a, a.Msg)
			}
			nsec := false
			for _, rr := range a.Msg.Answer {
				s, ok := rr.(*dns.RRSIG)
				if !ok || s.Hdr.Name != qname {
					t.Errorf("unbound: %s RRSIG: answer holds %s", qname, rr)
					continue
				}
				nsec = nsec || s.TypeCovered == dns.TypeNSEC
			}
			if !nsec {
				t.Errorf("unbound: %s RRSIG: no RRSIG of the NSEC at the name\n%v", qname, a.Msg)
			}
			// delv is not asked: BIND's resolver does not fetch type
			// RRSIG ("shut down hung fetch", from BIND 9.18's own signed
			// zones too).
		})
		t.Run("ANY "+qname, func(t *testing.T) {
			a := v.Query(t, qname, dns.TypeANY)
			if !a.Secure() || a.Rcode != dns.RcodeSuccess {
				t.Errorf("unbound: %s ANY: %v\n%v", qname, a, a.Msg)
			}
			d := v.Delv(t, qname, dns.TypeANY)
			if !d.Validated {
				t.Errorf("delv: %s ANY: %q, want a validated answer\n%s", qname, d.Status, d.Output)
			}
		})
	}
	if strings.Contains(v.Log(), "validation failure") {
		t.Errorf("unbound logged a validation failure:\n%s", v.Log())
	}
}
