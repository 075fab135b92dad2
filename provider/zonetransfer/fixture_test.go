package zonetransfer

import (
	"net/netip"
	"testing"

	"github.com/gslbkit/gslb/internal/testrecords"
	"github.com/gslbkit/gslb/provider/memory"
	"github.com/libdns/libdns"
)

// fastFixture is example.test. with the records of memory's fast-path
// tests (an address set, a CNAME, TXTs, a wildcard, a delegation, an MX)
// and one answer hook.
func fastFixture(t testing.TB) *memory.Provider {
	p := new(memory.Provider)
	testrecords.Load(t, p, "example.test.", testrecords.FastPath())
	p.SetAnswerFunc("hooked.example.test.", func(netip.Prefix, string, string, []libdns.Record) ([]libdns.Record, int) { return nil, 0 })
	return p
}
