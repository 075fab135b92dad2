package memory_test

import (
	"context"
	"testing"

	"github.com/gslbkit/gslb/provider/memory"
	"github.com/libdns/libdns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRestoreRefusesBadSnapshots(t *testing.T) {
	soa := memory.SOA{NS: "ns1.example.test.", Mbox: "h.example.test.", Serial: 1}
	tests := []struct {
		name string
		snap memory.Snapshot
		want error
	}{
		{"apex CNAME", memory.Snapshot{Zones: []memory.ZoneSnapshot{{Name: zone, SOA: soa,
			Records: []memory.ZoneRecord{{Name: "@", Type: "CNAME", TTL: 1, Data: "x."}}}}}, memory.ErrApexCNAME},
		{"CNAME beside A", memory.Snapshot{Zones: []memory.ZoneSnapshot{{Name: zone, SOA: soa,
			Records: []memory.ZoneRecord{{Name: "x", Type: "CNAME", TTL: 1, Data: "y."}, {Name: "x", Type: "A", TTL: 1, Data: "192.0.2.1"}}}}}, memory.ErrCNAMEConflict},
		{"bad zone name", memory.Snapshot{Zones: []memory.ZoneSnapshot{{Name: "", SOA: soa}}}, memory.ErrInvalidZone},
		{"duplicate zone", memory.Snapshot{Zones: []memory.ZoneSnapshot{{Name: zone, SOA: soa}, {Name: "EXAMPLE.test", SOA: soa}}}, memory.ErrInvalidZone},
		{"bad record", memory.Snapshot{Zones: []memory.ZoneSnapshot{{Name: zone, SOA: soa,
			Records: []memory.ZoneRecord{{Name: "x", Type: "A", TTL: 1, Data: "::1"}}}}}, memory.ErrInvalidRecord},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p := fixture(t)
			v := p.Version()
			require.ErrorIs(t, p.Restore(tc.snap), tc.want)
			assert.Equal(t, v, p.Version(), "nothing changed")
		})
	}
}

func TestApplyChain(t *testing.T) {
	// A replica of a replica: Apply writes the local journal, so changes
	// flow on.
	ctx := context.Background()
	src := new(memory.Provider)
	require.NoError(t, src.AddZone(zone))
	mid, end := new(memory.Provider), new(memory.Provider)
	require.NoError(t, mid.Restore(src.Snapshot()))
	require.NoError(t, end.Restore(mid.Snapshot()))
	sv, mv := src.Version(), mid.Version()

	_, err := src.SetRecords(ctx, zone, []libdns.Record{a("www", "192.0.2.1")})
	require.NoError(t, err)
	require.NoError(t, src.AddZone("new.test."))
	ch, ok := src.Changes(sv)
	require.True(t, ok)
	require.NoError(t, mid.Apply(ch))
	ch, ok = mid.Changes(mv)
	require.True(t, ok)
	require.NoError(t, end.Apply(ch))
	assert.Equal(t, src.Snapshot().Zones, end.Snapshot().Zones)
}
