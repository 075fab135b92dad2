package memory

import (
	"net/netip"
	"testing"
)

// BenchmarkServerUDPPath answers fastMix the way the Server's UDP loops do:
// with transfers off it is the fast path behind one nil check (what
// BenchmarkFastPathMix measures without it); with transfers on, each query
// is first scanned for a transfer type or a TSIG record.
func BenchmarkServerUDPPath(b *testing.B) {
	qs := fastMix(b)
	src := netip.MustParseAddr("192.0.2.99")
	for _, c := range []struct {
		name string
		cfg  ServerConfig
	}{
		{"transfersOff", ServerConfig{}},
		{"transfersOn", ServerConfig{Transfer: TransferConfig{Allow: []TransferRule{{}}}}},
	} {
		b.Run(c.name, func(b *testing.B) {
			s, err := NewServer(fastFixture(b), c.cfg, nil)
			if err != nil {
				b.Fatal(err)
			}
			buf := make([]byte, 4096)
			answer := func(q []byte) []byte {
				if s.xfr == nil {
					return s.p.RespondUDP(q, buf, src)
				}
				return s.xfr.RespondUDP(q, buf, src)
			}
			for _, q := range qs {
				_ = answer(q)
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				_ = answer(qs[i%len(qs)])
				i++
			}
		})
	}
}
