package memory_test

import (
	"context"
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/gslbkit/gslb/provider/dnssec"
	"github.com/gslbkit/gslb/provider/memory"
	"github.com/libdns/libdns"
	"github.com/miekg/dns"
)

// TestConfigSigners: a Provider given a signer for a zone it does not hold
// yet signs that zone once a snapshot restores it, as a replica's first
// sync does, and once a replica's changes add it; two signers of one zone
// are refused.
func TestConfigSigners(t *testing.T) {
	k, err := dnssec.GenerateKey("signed.test.", dnssec.ECDSAP256SHA256, dnssec.FlagsKSK, 30)
	if err != nil {
		t.Fatal(err)
	}
	s, err := dnssec.NewSigner("signed.test.", dnssec.Config{Keys: []dnssec.ZoneKey{{Key: k}}})
	if err != nil {
		t.Fatal(err)
	}
	src := new(memory.Provider)
	if err := src.AddZone("signed.test."); err != nil {
		t.Fatal(err)
	}
	if _, err := src.SetRecords(context.Background(), "signed.test.", []libdns.Record{
		libdns.Address{Name: "www", TTL: time.Minute, IP: netip.MustParseAddr("192.0.2.1")},
	}); err != nil {
		t.Fatal(err)
	}
	snap := src.Snapshot()
	changes, ok := src.Changes(0)
	if !ok {
		t.Fatal("the journal does not reach version 0")
	}

	for _, how := range []string{"restore", "apply"} {
		t.Run(how, func(t *testing.T) {
			p, err := memory.New(memory.Config{Signers: []*dnssec.Signer{s}})
			if err != nil {
				t.Fatal(err)
			}
			if p.Signed("signed.test.") {
				t.Fatal("a zone not held is not signed")
			}
			if how == "restore" {
				err = p.Restore(snap)
			} else {
				err = p.Apply(changes)
			}
			if err != nil {
				t.Fatal(err)
			}
			if !p.Signed("signed.test.") {
				t.Fatal("the zone is held unsigned")
			}
			m := new(dns.Msg)
			m.SetQuestion("www.signed.test.", dns.TypeA)
			m.SetEdns0(1232, true)
			r := p.Respond(m, netip.MustParseAddr("192.0.2.9"), false)
			var sigs int
			for _, rr := range r.Answer {
				if rr.Header().Rrtype == dns.TypeRRSIG {
					sigs++
				}
			}
			if sigs == 0 {
				t.Errorf("no RRSIG in the answer:\n%v", r)
			}
		})
	}
	if _, err := memory.New(memory.Config{Signers: []*dnssec.Signer{s, s}}); !errors.Is(err, memory.ErrInvalidConfig) {
		t.Errorf("two signers of one zone: %v, want ErrInvalidConfig", err)
	}
}
