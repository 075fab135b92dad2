package dnssec_test

import (
	"fmt"
	"time"

	"github.com/gslbkit/gslb/provider/dnssec"
	"github.com/miekg/dns"
)

// Example signs an RRset with a combined signing key, verifies the
// signature, and builds the compact-denial NSEC for a name that does not
// exist.
func Example() {
	key, err := dnssec.GenerateKey("example.com.", dnssec.ECDSAP256SHA256, dnssec.FlagsKSK, 3600)
	if err != nil {
		panic(err)
	}
	s, err := dnssec.NewSigner("example.com.", dnssec.Config{Keys: []dnssec.ZoneKey{{Key: key}}})
	if err != nil {
		panic(err)
	}
	now := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	a, _ := dns.NewRR("www.example.com. 60 IN A 192.0.2.1")
	sigs, err := s.Sign([]dns.RR{a}, now)
	if err != nil {
		panic(err)
	}
	sig := sigs[0]
	fmt.Println("verifies:", sig.Verify(key.DNSKEY(), []dns.RR{a}) == nil)
	fmt.Println("valid from", dns.TimeToString(sig.Inception), "to", dns.TimeToString(sig.Expiration))
	_, _ = s.Sign([]dns.RR{a}, now.Add(time.Minute)) // from the cache
	st := s.Stats()
	fmt.Println("made", st.Made, "cached hits", st.Hits)
	fmt.Println(dnssec.NXName("nope.example.com.", 30))
	// Output:
	// verifies: true
	// valid from 20261130230000 to 20261208000000
	// made 1 cached hits 1
	// nope.example.com.	30	IN	NSEC	\000.nope.example.com. RRSIG NSEC NXNAME
}
