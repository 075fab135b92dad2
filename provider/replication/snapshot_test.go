package replication_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/gslbkit/gslb/provider/memory"
	"github.com/gslbkit/gslb/provider/replication"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestSnapshotRoundTrip(t *testing.T) {
	src := fixture(t)
	data, err := json.Marshal(src.Snapshot())
	require.NoError(t, err)
	snap, err := replication.ParseSnapshot(data)
	require.NoError(t, err)
	dst := new(memory.Provider)
	require.NoError(t, dst.AddZone("stale.test."))
	require.NoError(t, dst.Restore(snap))
	assert.Equal(t, src.Zones(), dst.Zones(), "zones absent from the snapshot are removed")
	for _, z := range src.Zones() {
		want, _ := src.GetRecords(context.Background(), z)
		got, _ := dst.GetRecords(context.Background(), z)
		assert.Equal(t, want, got)
		ws, _ := src.SOA(z)
		gs, _ := dst.SOA(z)
		assert.Equal(t, ws, gs)
	}
	_, ok := dst.Changes(0)
	assert.False(t, ok, "a restore restarts the journal")
}
