package replication_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/gslbkit/gslb/provider/memory"
	"github.com/gslbkit/gslb/provider/replication"
	"github.com/libdns/libdns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestTXTStringsReplicate: a TXT's strings survive the snapshot and the
// journal through their JSON form; a newer format is refused.
func TestTXTStringsReplicate(t *testing.T) {
	ctx := context.Background()
	src := new(memory.Provider)
	require.NoError(t, src.AddZone("example.test."))
	recs := []libdns.Record{
		libdns.RR{Name: "multi", Type: "TXT", Data: `"first" "second" "say \"hi\""`},
		libdns.TXT{Name: "long", Text: strings.Repeat("y", 600)},
		libdns.TXT{Name: "q", Text: `"starts with a quote`},
	}
	_, err := src.AppendRecords(ctx, "example.test.", recs)
	require.NoError(t, err)
	want, _ := src.GetRecords(ctx, "example.test.")

	// Snapshot.
	b, err := json.Marshal(src.Snapshot())
	require.NoError(t, err)
	s, err := replication.ParseSnapshot(b)
	require.NoError(t, err)
	assert.Equal(t, memory.ReplicationFormat, s.Format)
	dst := new(memory.Provider)
	require.NoError(t, dst.Restore(s))
	got, _ := dst.GetRecords(ctx, "example.test.")
	assert.Equal(t, want, got)

	// Journal: the same records written after the copy.
	_, err = src.AppendRecords(ctx, "example.test.", []libdns.Record{libdns.RR{Name: "later", Type: "TXT", Data: `"a" "b"`}})
	require.NoError(t, err)
	ch, _ := src.Changes(s.Version)
	b, err = json.Marshal(replication.ChangesResponse{Format: memory.ReplicationFormat, Version: src.Version(), Changes: ch})
	require.NoError(t, err)
	cr, err := replication.ParseChanges(b)
	require.NoError(t, err)
	require.NoError(t, dst.Apply(cr.Changes))
	want, _ = src.GetRecords(ctx, "example.test.")
	got, _ = dst.GetRecords(ctx, "example.test.")
	assert.Equal(t, want, got)

	_, err = replication.ParseSnapshot([]byte(`{"format":3,"version":1,"zones":[]}`))
	assert.ErrorContains(t, err, "format 3")
	_, err = replication.ParseChanges([]byte(`{"format":3,"version":1}`))
	assert.ErrorContains(t, err, "format 3")
}
