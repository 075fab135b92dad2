package main

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gslbkit/gslb/internal/testdnssec"
	"github.com/miekg/dns"
)

// TestSignedZoneThroughValidators runs gslbd with a dnssec block (its key
// made in the state directory) behind a signed parent (BIND, pre-signed,
// holding the DS gslbd's key gives) and has a validating unbound and delv
// resolve a weighted name, whose answer gslbd chooses per query, and the
// zone's negative answers. /readyz reports no dnssec problem.
func TestSignedZoneThroughValidators(t *testing.T) {
	testdnssec.Require(t, "named", "dnssec-keygen", "dnssec-signzone", "unbound", "unbound-control", "delv")
	bs := []*backend{newBackend(t), newBackend(t), newBackend(t)}
	var recs strings.Builder
	recs.WriteString("  - name: app.example.test.\n    ttl: 5s\n    answer: weightedRandom\n    addresses:\n")
	for i, b := range bs {
		fmt.Fprintf(&recs, "      - {ip: 192.0.2.%d, weight: 1, probeAddr: %q}\n", i+1, b.addr())
	}
	state := ownStateDir()
	d := startDaemon(t, controllerYAML("stateDir: "+state+"\ndnssec: {validity: 2h}\n", recs.String()))

	pubs, _ := filepath.Glob(filepath.Join(state, keyDirName, "*.key"))
	if len(pubs) != 1 {
		t.Fatalf("gslbd's key files: %v, want one .key", pubs)
	}
	key, err := testdnssec.ReadKey(strings.TrimSuffix(pubs[0], ".key"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	pKSK := testdnssec.KeyGen(t, dir, "test.", true)
	parent := &testdnssec.Zone{Name: "test.", Sign: []*testdnssec.Key{pKSK}, Text: "@ IN SOA ns hostmaster SERIAL 60 60 600 30\n@ IN NS ns\nns IN A 127.0.0.1\n" +
		"example IN NS ns1.example\nns1.example IN A 127.0.0.1\n" + key.DS().String() + "\n"}
	auth := testdnssec.StartAuthority(t, parent)
	v := testdnssec.StartValidator(t, []dns.RR{pKSK.DNSKEY}, map[string]string{"test.": auth.Addr, "example.test.": d.dns})

	waitFor(t, 60*time.Second, "unbound validates gslbd's answer for app.example.test.", func() bool {
		v.Flush(t, "example.test.")
		a := v.Query(t, "app.example.test.", dns.TypeA)
		return a.Secure() && len(a.Msg.Answer) > 0
	})
	seen := map[string]bool{}
	for i := range 6 {
		v.Flush(t, "example.test.")
		a := v.Query(t, "app.example.test.", dns.TypeA)
		if !a.Secure() {
			t.Fatalf("query %d: unbound: %v", i, a)
		}
		for _, rr := range a.Msg.Answer {
			if x, ok := rr.(*dns.A); ok {
				seen[x.A.String()] = true
			}
		}
	}
	if len(seen) < 2 {
		t.Errorf("weighted answers validated: %v, want more than one address among six queries", seen)
	}
	if r := v.Delv(t, "app.example.test.", dns.TypeA); !r.Validated {
		t.Errorf("delv: app.example.test. A: %q\n%s", r.Status, r.Output)
	}
	for _, q := range []struct {
		name  string
		qtype uint16
	}{{"app.example.test.", dns.TypeTXT}, {"nope.example.test.", dns.TypeA}} {
		if a := v.Query(t, q.name, q.qtype); !a.Secure() || len(a.Msg.Answer) > 0 {
			t.Errorf("unbound: %s %s: %v, want a validated denial", q.name, dns.TypeToString[q.qtype], a)
		}
		if r := v.Delv(t, q.name, q.qtype); !r.Validated || !r.Negative {
			t.Errorf("delv: %s %s: %q, want a validated negative response\n%s", q.name, dns.TypeToString[q.qtype], r.Status, r.Output)
		}
	}
	if _, body := get(t, d.http, "/readyz"); strings.Contains(body, "dnssec_") {
		t.Errorf("/readyz reports a dnssec problem:\n%s", body)
	}
}
