package dnssec_test

import (
	"testing"
	"time"

	"github.com/gslbkit/gslb/provider/dnssec"
	"github.com/miekg/dns"
)

// BenchmarkSign measures new signatures (every iteration a cache miss: the
// RRset's TTL changes), per algorithm: its inverse is signatures per second
// on one core. BenchmarkSign/cached-… measures a cache hit.
func BenchmarkSign(b *testing.B) {
	for _, alg := range []uint8{dnssec.ECDSAP256SHA256, dnssec.ED25519} {
		k, err := dnssec.GenerateKey("example.com.", alg, dnssec.FlagsKSK, 300)
		if err != nil {
			b.Fatal(err)
		}
		s, err := dnssec.NewSigner("example.com.", dnssec.Config{Keys: []dnssec.ZoneKey{{Key: k}}, SignaturesPerSecond: 10_000_000})
		if err != nil {
			b.Fatal(err)
		}
		rr, _ := dns.NewRR("www.example.com. 60 IN A 192.0.2.1")
		rr2, _ := dns.NewRR("www.example.com. 60 IN A 192.0.2.2")
		set := []dns.RR{rr, rr2}
		b.Run(dns.AlgorithmToString[alg], func(b *testing.B) {
			b.ReportAllocs()
			ttl := uint32(0)
			for b.Loop() {
				ttl++
				rr.Header().Ttl, rr2.Header().Ttl = ttl, ttl
				if _, err := s.Sign(set, t0); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("cached-"+dns.AlgorithmToString[alg], func(b *testing.B) {
			rr.Header().Ttl, rr2.Header().Ttl = 60, 60
			b.ReportAllocs()
			for b.Loop() {
				if _, err := s.Sign(set, t0.Add(time.Minute)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
