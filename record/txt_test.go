package record

import (
	"context"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReconcilerTXTStrings: TXT sets with several strings (presentation
// form, spaced loosely) and a text longer than 255 bytes are published with
// their strings and then left alone: no rewrite because of splitting.
func TestReconcilerTXTStrings(t *testing.T) {
	ctx := context.Background()
	m := newMemory(t, "example.com.")
	r, err := New(m, localConfig(), Options{})
	require.NoError(t, err)
	long := strings.Repeat("k", 600)
	d := Desired{Sets: []RRSet{
		{Zone: "example.com.", Name: "multi", Type: "TXT", TTL: time.Minute, Values: []string{`"first"   "second" "third"`, `"v=1" "x"`}},
		{Zone: "example.com.", Name: "long", Type: "TXT", TTL: time.Minute, Values: []string{long}},
	}}
	rep, err := r.Apply(ctx, d)
	require.NoError(t, err)
	assert.Positive(t, rep.Writes)
	for range 2 {
		rep, err = r.ReconcileOnce(ctx)
		require.NoError(t, err)
		assert.Zero(t, rep.Writes, "the TXT sets were rewritten: %v", rep.Changes)
	}

	q := new(dns.Msg)
	q.SetQuestion("multi.example.com.", dns.TypeTXT)
	wire, _ := q.Pack()
	a := new(dns.Msg)
	require.NoError(t, a.Unpack(m.RespondWire(wire, netip.Addr{}, true)))
	var got []string
	for _, rr := range a.Answer {
		got = append(got, strings.Join(rr.(*dns.TXT).Txt, "|"))
	}
	assert.ElementsMatch(t, []string{"first|second|third", "v=1|x"}, got)
}
