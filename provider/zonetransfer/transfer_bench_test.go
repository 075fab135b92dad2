package zonetransfer

import (
	"net/netip"
	"testing"

	"github.com/gslbkit/gslb/internal/testrecords"
)

// BenchmarkServerUDPPath answers testrecords.FastPathMix the way the DNS server's UDP loops
// do: with transfers off through the store's fast path (what memory's
// BenchmarkFastPathMix measures); with a Transfer set, through
// Transfer.RespondUDP, which first scans each query for a transfer type or
// a TSIG record.
func BenchmarkServerUDPPath(b *testing.B) {
	qs := testrecords.FastPathMix(b)
	src := netip.MustParseAddr("192.0.2.99")
	for _, on := range []bool{false, true} {
		name := "transfersOff"
		if on {
			name = "transfersOn"
		}
		b.Run(name, func(b *testing.B) {
			p := fastFixture(b)
			answer := p.RespondUDP
			if on {
				x, err := NewTransfer(p, TransferConfig{Allow: []TransferRule{{}}}, nil)
				if err != nil {
					b.Fatal(err)
				}
				answer = x.RespondUDP
			}
			buf := make([]byte, 4096)
			for _, q := range qs {
				_ = answer(q, buf, src)
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				_ = answer(qs[i%len(qs)], buf, src)
				i++
			}
		})
	}
}
