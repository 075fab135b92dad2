package zonedata_test

import (
	"testing"

	"github.com/gslbkit/gslb/internal/zonerecord"
	"github.com/gslbkit/gslb/provider/internal/zonedata"
	"github.com/miekg/dns"
	"pgregory.net/rapid"
)

func sign(c int) int {
	switch {
	case c < 0:
		return -1
	case c > 0:
		return 1
	}
	return 0
}

// TestCanonicalCompare: the allocation-free comparison orders names as
// zonerecord.CanonicalCompare does, escaped dots included.
func TestCanonicalCompare(t *testing.T) {
	name := rapid.StringOf(rapid.SampledFrom([]rune{'a', 'b', '.', '\\', '*', '-'}))
	rapid.Check(t, func(t *rapid.T) {
		a, b := dns.Fqdn(name.Draw(t, "a")+".x."), dns.Fqdn(name.Draw(t, "b")+".x.")
		if _, ok := dns.IsDomainName(a); !ok {
			t.Skip()
		}
		if _, ok := dns.IsDomainName(b); !ok {
			t.Skip()
		}
		if got, want := sign(zonedata.CanonicalCompare(a, b)), sign(zonerecord.CanonicalCompare(a, b)); got != want {
			t.Fatalf("canonicalCompare(%q, %q) = %d, want %d", a, b, got, want)
		}
	})
	if n := testing.AllocsPerRun(100, func() { zonedata.CanonicalCompare("a.b\\.c.example.test.", "b.b\\.c.example.test.") }); n != 0 {
		t.Fatalf("%v allocations", n)
	}
}
