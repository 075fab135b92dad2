package memory_test

import (
	"testing"

	"github.com/gslbkit/gslb/provider/memory"
	"github.com/gslbkit/gslb/provider/providertest"
	"github.com/stretchr/testify/require"
)

// TestConformance runs the shared libdns conformance suite against the
// embedded zone. CNAMEBesideData is Accept because SetRecords deliberately
// lets a CNAME replace a name's address set (and back) in one call — the
// atomic switch only the embedded zone can offer; AppendRecords still
// refuses a CNAME beside other data (TestAppendRecords), and any data but
// A/AAAA beside a CNAME is refused by SetRecords too (TestSetRecords).
func TestConformance(t *testing.T) {
	p := new(memory.Provider)
	require.NoError(t, p.AddZone("example.test."))
	providertest.Run(t, p, "example.test.", providertest.Capabilities{
		CNAMEBesideData: providertest.Accept,
		ApexCNAME:       providertest.Refuse,
		ListZones:       true,
	})
}
