package memory_test

import (
	"context"
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/gslbkit/gslb/provider/memory"
	"github.com/libdns/libdns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestStoreAPIZeroProvider: the methods the serving packages use work on
// a zero Provider (it holds no zone) and never panic.
func TestStoreAPIZeroProvider(t *testing.T) {
	var p memory.Provider
	_, err := p.ZoneState("example.test.")
	assert.True(t, errors.Is(err, memory.ErrNoZone))
	var st memory.ZoneState
	assert.Nil(t, st.SOA())
	assert.Empty(t, st.Records())
	assert.Zero(t, st.Len())
	assert.Empty(t, st.Journal())
	assert.Empty(t, st.Name())
	_, err = p.SOARecord("example.test.")
	assert.True(t, errors.Is(err, memory.ErrNoZone))
	v, soas := p.SOARecords()
	assert.Zero(t, v)
	assert.Empty(t, soas)
	assert.False(t, p.HoldsZone([]byte("example.test.")))
	hooked, _ := p.ZoneHooked("example.test.")
	assert.False(t, hooked)
	h := p.Since(0, "")
	assert.Nil(t, h.Full)
	assert.Empty(t, h.Changes)
	require.NoError(t, p.RestoreContext(context.Background(), memory.Snapshot{}))
}

// TestStoreAPI: ZoneState, SOARecords, HoldsZone, ZoneHooked and Since read one
// snapshot of the store.
func TestStoreAPI(t *testing.T) {
	p := new(memory.Provider)
	require.NoError(t, p.AddZone("example.test."))
	assert.True(t, p.HoldsZone([]byte("example.test.")))
	assert.False(t, p.HoldsZone([]byte("other.test.")))
	_, err := p.SetRecords(context.Background(), "example.test.", []libdns.Record{
		libdns.Address{Name: "www", TTL: time.Minute, IP: netip.MustParseAddr("192.0.2.1")},
	})
	require.NoError(t, err)
	st, err := p.ZoneState("EXAMPLE.test")
	require.NoError(t, err)
	assert.Equal(t, "example.test.", st.Name())
	assert.Equal(t, uint32(2), st.SOA().Serial)
	assert.Len(t, st.Records(), 2, "NS, A")
	assert.Equal(t, 2, st.Len())
	assert.NotEmpty(t, st.Journal())

	v, soas := p.SOARecords()
	assert.Equal(t, p.Version(), v)
	assert.Equal(t, uint32(2), soas["example.test."].Serial)

	hooked, set := p.ZoneHooked("example.test.")
	assert.False(t, hooked)
	p.SetAnswerFunc("www.example.test.", func(_ netip.Prefix, _, _ string, rrs []libdns.Record) ([]libdns.Record, int) { return rrs, 0 })
	hooked, set2 := p.ZoneHooked("example.test.")
	assert.True(t, hooked)
	assert.NotEqual(t, set, set2)

	h := p.Since(0, "")
	assert.Nil(t, h.Full)
	assert.NotEmpty(t, h.Changes)
	h = p.Since(0, "another-epoch")
	require.NotNil(t, h.Full, "another history needs a full snapshot")
	assert.Equal(t, p.Epoch(), h.Epoch)
	h = p.Since(p.Version()+1, "")
	assert.NotNil(t, h.Full, "a version from the future needs a full snapshot")
}
