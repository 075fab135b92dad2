package rfc2136_test

import (
	"context"
	"testing"

	"github.com/libdns/libdns"
	"github.com/miekg/dns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gslbkit/gslb/internal/testbind"
	"github.com/gslbkit/gslb/internal/testrecords"
	"github.com/gslbkit/gslb/provider/rfc2136"
	"github.com/gslbkit/gslb/record"
	"github.com/gslbkit/gslb/record/fencetest"
	"github.com/gslbkit/gslb/record/replacetest"
)

var _ record.Fencer = (*rfc2136.Provider)(nil)

// Against a real BIND: a fenced UPDATE carries the fence as a value
// dependent prerequisite (RFC 2136 section 2.4.2), so once a newer writer
// has replaced the fence, a late writer that still expects the old value
// is refused by the server (NXRRSET) and nothing of its UPDATE is applied;
// expecting no fence where one is gets YXRRSET (section 2.4.3).
func TestReplaceFencedBIND(t *testing.T) {
	ctx := context.Background()
	p := newProvider(t, testbind.Start(t, "example.test."))
	require.NoError(t, p.ReplaceFenced(ctx, "example.test.", libdns.TXT{Name: record.DefaultFenceName}, testrecords.Fence("d 1"),
		nil, []libdns.Record{testrecords.Address("app", "192.0.2.1")}))
	require.NoError(t, p.ReplaceFenced(ctx, "example.test.", testrecords.Fence("d 1"), testrecords.Fence("d 2"),
		[]libdns.Record{testrecords.Address("app", "192.0.2.1")}, []libdns.Record{testrecords.Address("app", "192.0.2.2")}))
	assert.Equal(t, []string{"d 2"}, testrecords.Data(t, p, "example.test.", "_gslb-fence", "TXT"))

	err := p.ReplaceFenced(ctx, "example.test.", testrecords.Fence("d 1"), testrecords.Fence("d 1"),
		[]libdns.Record{testrecords.Address("app", "192.0.2.2")}, []libdns.Record{testrecords.Address("app", "192.0.2.9"), testrecords.Address("late", "192.0.2.9")})
	var re *rfc2136.ResponseError
	require.ErrorAs(t, err, &re)
	assert.Equal(t, dns.RcodeNXRrset, re.Rcode)
	assert.True(t, re.Fenced())
	assert.Equal(t, []string{"192.0.2.2"}, testrecords.Data(t, p, "example.test.", "app", "A"))
	assert.Empty(t, testrecords.Data(t, p, "example.test.", "late", "A"))
	assert.Equal(t, []string{"d 2"}, testrecords.Data(t, p, "example.test.", "_gslb-fence", "TXT"))

	err = p.ReplaceFenced(ctx, "example.test.", libdns.TXT{Name: record.DefaultFenceName}, testrecords.Fence("d 1"), nil, nil)
	require.ErrorAs(t, err, &re)
	assert.Equal(t, dns.RcodeYXRrset, re.Rcode)
	assert.True(t, re.Fenced())
	assert.Equal(t, []string{"d 2"}, testrecords.Data(t, p, "example.test.", "_gslb-fence", "TXT"))
}

// The fencing kit's scenarios against a real BIND: a compare-and-set
// takeover, a late writer refused with nothing of its UPDATE applied, and
// the frozen leader's late write refused by the fence (landing without).
func TestFencingBIND(t *testing.T) {
	fencetest.Run(t, "example.test.", func(context.Context) (fencetest.Store, error) {
		return newProvider(t, testbind.Start(t, "example.test.")), nil
	})
}

// The ReplaceRecords kit's scenarios against a real BIND: one UPDATE
// switches a name between addresses and a CNAME (BIND would ignore a
// CNAME added beside the addresses in a separate UPDATE), never read with
// neither, and a Reconciler's type switch is that one UPDATE.
func TestReplaceRecordsBIND(t *testing.T) {
	replacetest.Run(t, "example.test.", func(context.Context) (replacetest.Store, error) {
		return newProvider(t, testbind.Start(t, "example.test.")), nil
	})
}
