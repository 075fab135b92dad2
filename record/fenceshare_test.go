package record_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/libdns/libdns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// refusals counts the fenced writes the store refused; afterRead, once
// set, runs after the next zone read returns (a sibling's write landing
// between a reconcile's read and its write).
type refusals struct {
	*pausing
	n         atomic.Int32
	afterRead func()
}

func (c *refusals) GetRecords(ctx context.Context, zone string) ([]libdns.Record, error) {
	recs, err := c.pausing.GetRecords(ctx, zone)
	if f := c.afterRead; f != nil {
		c.afterRead = nil
		f()
	}
	return recs, err
}

func (c *refusals) ReplaceFenced(ctx context.Context, zone string, was, now libdns.TXT, del, set []libdns.Record) error {
	err := c.pausing.ReplaceFenced(ctx, zone, was, now, del, set)
	if err != nil {
		c.n.Add(1)
	}
	return err
}

// A Reconciler and its FencedStore (a leader's records and its beats)
// share one fence: interleaved writes, one landing between the other's
// read and write, are never refused for expecting a fence the sibling
// moved on.
func TestFencedStoreSharesTheFence(t *testing.T) {
	ctx := context.Background()
	z := &refusals{pausing: &pausing{Provider: newZone(t)}}
	w := writer(t, z, 1, nil)
	beats := w.FencedStore()
	beat := func(text string) {
		_, err := beats.SetRecords(ctx, "example.com.", []libdns.Record{libdns.TXT{Name: "beat", TTL: time.Minute, Text: text}})
		require.NoError(t, err)
	}
	_, err := w.Apply(ctx, appAt("192.0.2.1"))
	require.NoError(t, err)
	beat("1")
	for i, ip := range []string{"192.0.2.2", "192.0.2.3", "192.0.2.4"} {
		// The beat lands after the reconcile read the zone, before it writes.
		z.afterRead = func() { beat(ip) }
		_, err = w.Apply(ctx, appAt(ip))
		require.NoError(t, err, "round %d", i)
		beat("after " + ip)
	}
	assert.Equal(t, int32(0), z.n.Load(), "fenced writes refused between siblings")
	assert.Equal(t, []string{"192.0.2.4"}, published(t, z, "app", "A"))
	assert.Equal(t, []string{"after 192.0.2.4"}, published(t, z, "beat", "TXT"))
}
