package dnssec_test

import (
	"os"
	"strings"
	"testing"

	"github.com/gslbkit/gslb/provider/dnssec"
	"github.com/miekg/dns"
)

// FuzzParseKey: any pair of files either parses into a key whose DNSKEY
// matches its private key (a signature it makes verifies) or is an error
// wrapping ErrKey; nothing panics.
func FuzzParseKey(f *testing.F) {
	dir := f.TempDir()
	for _, alg := range []uint8{dnssec.ECDSAP256SHA256, dnssec.ED25519} {
		k, err := dnssec.GenerateKey("example.com", alg, dnssec.FlagsKSK, 3600)
		if err != nil {
			f.Fatal(err)
		}
		base, err := k.WriteFiles(dir)
		if err != nil {
			f.Fatal(err)
		}
		pub, _ := os.ReadFile(base + ".key")
		priv, _ := os.ReadFile(base + ".private")
		f.Add(pub, priv)
		f.Add(pub, []byte(strings.Replace(string(priv), "Algorithm: 13", "Algorithm: 8", 1)))
		f.Add([]byte(strings.Replace(string(pub), "257", "256", 1)), priv)
	}
	f.Add([]byte("example.com. IN DNSKEY 257 3 13 AAAA"), []byte("Private-key-format: v1.3\nAlgorithm: 13 (ECDSAP256SHA256)\nPrivateKey: AAAA\n"))
	f.Add([]byte("$INCLUDE /etc/passwd\n"), []byte(""))
	f.Fuzz(func(t *testing.T, pub, priv []byte) {
		k, err := dnssec.ParseKey(pub, priv)
		if err != nil {
			return
		}
		s, err := dnssec.NewSigner(k.Zone(), dnssec.Config{Keys: []dnssec.ZoneKey{{Key: k}}})
		if err != nil {
			t.Fatalf("a parsed key makes no signer: %v", err)
		}
		rr, _ := dns.NewRR(k.Zone() + " 60 IN A 192.0.2.1")
		sigs, err := s.Sign([]dns.RR{rr}, t0)
		if err != nil {
			t.Fatal(err)
		}
		if err := sigs[0].Verify(k.DNSKEY(), []dns.RR{rr}); err != nil {
			t.Fatalf("key %s: its signature does not verify: %v", k, err)
		}
	})
}

// FuzzDenial: the compact-denial builders accept any name a query can
// carry; a wildcard proof covers the next closer name and nothing at or
// above the closest encloser.
func FuzzDenial(f *testing.F) {
	f.Add([]byte{1, 'a', 1, 'b', 4, 'w', 'i', 'l', 'd', 0}, 2)
	f.Add([]byte{1, 0, 1, 0xFF, 0}, 1)
	f.Fuzz(func(t *testing.T, wire []byte, drop int) {
		name, _, err := dns.UnpackDomainName(wire, 0)
		if err != nil {
			return
		}
		_ = dnssec.NXName(name, 30)
		_ = dnssec.Successor(name)
		labels := dns.SplitDomainName(name)
		if drop < 1 || drop > len(labels) {
			return
		}
		ce := dns.Fqdn(strings.Join(labels[drop:], "."))
		if drop == len(labels) {
			ce = "."
		}
		n, ok := dnssec.WildcardProof(name, ce, 30)
		if !ok {
			return
		}
		if !dns.IsSubDomain(ce, n.Hdr.Name) || !dns.IsSubDomain(ce, n.NextDomain) ||
			dns.CountLabel(n.Hdr.Name) != dns.CountLabel(ce)+1 || dns.CountLabel(n.NextDomain) != dns.CountLabel(ce)+1 {
			t.Fatalf("proof for %s under %s: %s", name, ce, n)
		}
		if _, err := dns.NewRR(n.String()); err != nil {
			t.Fatalf("proof does not parse back: %s: %v", n, err)
		}
	})
}
