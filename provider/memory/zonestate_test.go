package memory_test

import (
	"context"
	"fmt"
	"net/netip"
	"slices"
	"testing"
	"time"

	"github.com/gslbkit/gslb/provider/memory"
	"github.com/libdns/libdns"
	"github.com/miekg/dns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestZoneStateAll: All yields the records Records lists (SOA excluded), in
// its order (the apex's first, then names in canonical order, each RRset's
// records together), stops when asked,
// and keeps yielding the version it was read from while writes land;
// LenAtLeast agrees with Len.
func TestZoneStateAll(t *testing.T) {
	var zero memory.ZoneState
	for range zero.All() {
		t.Fatal("the zero ZoneState yields a record")
	}
	assert.True(t, zero.LenAtLeast(0))
	assert.False(t, zero.LenAtLeast(1))

	p := new(memory.Provider)
	require.NoError(t, p.AddZone("example.test."))
	var recs []libdns.Record
	for i := range 50 {
		for j := range 3 {
			recs = append(recs, libdns.Address{Name: fmt.Sprintf("h%d", i), TTL: time.Minute, IP: netip.AddrFrom4([4]byte{192, 0, 2, byte(i*3 + j)})})
		}
		recs = append(recs, libdns.TXT{Name: fmt.Sprintf("h%d", i), TTL: time.Minute, Text: fmt.Sprint(i)})
	}
	_, err := p.SetRecords(context.Background(), "example.test.", recs)
	require.NoError(t, err)
	st, err := p.ZoneState("example.test.")
	require.NoError(t, err)

	// Writes after the read do not reach st.
	_, err = p.DeleteRecords(context.Background(), "example.test.", recs[:40])
	require.NoError(t, err)
	_, err = p.SetRecords(context.Background(), "example.test.", []libdns.Record{
		libdns.Address{Name: "new", TTL: time.Minute, IP: netip.MustParseAddr("192.0.2.250")},
	})
	require.NoError(t, err)

	var got []dns.RR
	for rr := range st.All() {
		got = append(got, rr)
	}
	want := st.Records()
	require.Len(t, got, len(want))
	assert.Equal(t, 1+200, len(got), "NS, then 50 names of 3 A and a TXT")
	assert.Equal(t, strs(want), strs(got), "Records' order: canonical")
	assert.Equal(t, dns.TypeNS, got[0].Header().Rrtype, "the apex first")
	seen := map[string]bool{}
	for i, rr := range got {
		k := rr.Header().Name + "/" + dns.TypeToString[rr.Header().Rrtype]
		if i > 0 && k == got[i-1].Header().Name+"/"+dns.TypeToString[got[i-1].Header().Rrtype] {
			continue
		}
		assert.False(t, seen[k], "RRset %s split", k)
		seen[k] = true
	}

	n := 0
	for range st.All() {
		if n++; n == 5 {
			break
		}
	}
	assert.Equal(t, 5, n)

	assert.Equal(t, 201, st.Len())
	for _, c := range []int{-1, 0, 1, 3, 200, 201} {
		assert.True(t, st.LenAtLeast(c), c)
	}
	assert.False(t, st.LenAtLeast(202))
}

func strs(rrs []dns.RR) []string {
	out := make([]string, len(rrs))
	for i, rr := range rrs {
		out[i] = rr.String()
	}
	return slices.Sorted(slices.Values(out))
}
