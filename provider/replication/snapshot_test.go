package replication_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strconv"
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

// TestHandlerStreamsSnapshots: the snapshot and the full changes replies,
// written as the source's state is walked, are the bytes encoding/json
// writes for the Snapshot and the ChangesResponse (what older replicas
// read), signed over the whole body, with their length announced; a region
// filter drops the same records.
func TestHandlerStreamsSnapshots(t *testing.T) {
	src := fixture(t)
	cfg := replication.HandlerConfig{Secret: "0123456789abcdef-stream"}
	filter := func(region, zone string, r memory.ZoneRecord) bool { return r.Type != "TXT" }
	h, err := replication.NewHandler(src, cfg, filter, nil)
	require.NoError(t, err)
	filtered := func(s memory.Snapshot) memory.Snapshot {
		for i, z := range s.Zones {
			keep := []memory.ZoneRecord{}
			for _, r := range z.Records {
				if filter("eu", z.Name, r) {
					keep = append(keep, r)
				}
			}
			s.Zones[i].Records = keep
		}
		return s
	}
	encode := func(v any) []byte {
		var b bytes.Buffer
		require.NoError(t, json.NewEncoder(&b).Encode(v))
		return b.Bytes()
	}
	snap := src.Snapshot()
	for _, tc := range []struct {
		name, query string
		want        []byte
	}{
		{"snapshot", "", encode(snap)},
		{"snapshot", "region=eu", encode(filtered(src.Snapshot()))},
		{"changes", "since=0&epoch=other", encode(replication.ChangesResponse{Format: memory.ReplicationFormat, Version: snap.Version, Epoch: snap.Epoch, Full: true, Snapshot: &snap})},
	} {
		req := httptest.NewRequest(http.MethodGet, "/replication/"+tc.name+"?"+tc.query, nil)
		nonce := cfg.SignRequest(req)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
		assert.Equal(t, string(tc.want), rec.Body.String(), "%s?%s", tc.name, tc.query)
		assert.True(t, cfg.VerifyReply(nonce, rec.Body.Bytes(), rec.Header().Get(replication.SignatureHeader)), "%s?%s: signature", tc.name, tc.query)
		assert.Equal(t, strconv.Itoa(rec.Body.Len()), rec.Header().Get("Content-Length"))
	}
}
