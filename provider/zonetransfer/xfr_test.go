package zonetransfer_test

import (
	"context"
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/gslbkit/gslb/provider/memory"
	"github.com/gslbkit/gslb/provider/zonetransfer"
	"github.com/libdns/libdns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReadXFR: a transfer read from one snapshot of the store is the AXFR,
// the IXFR differences or the SOA alone; a zone not held (also of a zero
// or nil Provider) is memory.ErrNoZone.
func TestReadXFR(t *testing.T) {
	_, err := zonetransfer.ReadXFR(new(memory.Provider), "example.test.", false, 0)
	assert.True(t, errors.Is(err, memory.ErrNoZone))
	_, err = zonetransfer.ReadXFR(nil, "example.test.", true, 1)
	assert.True(t, errors.Is(err, memory.ErrNoZone))

	p := new(memory.Provider)
	require.NoError(t, p.AddZone("example.test."))
	_, err = p.SetRecords(context.Background(), "example.test.", []libdns.Record{
		libdns.Address{Name: "www", TTL: time.Minute, IP: netip.MustParseAddr("192.0.2.1")},
	})
	require.NoError(t, err)
	x, err := zonetransfer.ReadXFR(p, "EXAMPLE.test", true, 1)
	require.NoError(t, err)
	assert.Equal(t, zonetransfer.XFRIncremental, x.Kind)
	assert.Equal(t, "example.test.", x.Zone)
	assert.Equal(t, uint32(2), x.Serial)
	assert.Len(t, x.Records, 5, "SOA, SOA 1, SOA 2, A, SOA")
	x, err = zonetransfer.ReadXFR(p, "example.test.", true, 2)
	require.NoError(t, err)
	assert.Equal(t, zonetransfer.XFRUpToDate, x.Kind)
	assert.Len(t, x.Records, 1)
	x, err = zonetransfer.ReadXFR(p, "example.test.", false, 0)
	require.NoError(t, err)
	assert.Equal(t, zonetransfer.XFRFull, x.Kind)
	assert.Equal(t, "AXFR", x.Kind.String())
	assert.Len(t, x.Records, 4, "SOA, NS, A, SOA")
}
