package provider_test

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gslbkit/gslb/provider"
	"github.com/gslbkit/gslb/provider/providertest"
	"github.com/libdns/libdns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

type recorder struct{ events []provider.CallEvent }

func (r *recorder) Observe(e provider.CallEvent) { r.events = append(r.events, e) }

// The meter counts calls, records, errors by class and latency (virtual
// time in a bubble), and hands each call to its observer in order.
func TestMeter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, err := providertest.NewFaulty(&tiny{}, providertest.FaultConfig{Latency: 50 * time.Millisecond})
		require.NoError(t, err)
		obs := &recorder{}
		m := provider.NewMeter(obs)
		w := provider.Wrap(f, m)
		ctx := t.Context()
		recs := []libdns.Record{libdns.TXT{Name: "a", Text: "1"}, libdns.TXT{Name: "b", Text: "2"}}
		_, err = w.SetRecords(ctx, "z.", recs)
		require.NoError(t, err)
		_, err = w.GetRecords(ctx, "z.")
		require.NoError(t, err)
		f.Inject(providertest.Throttle, providertest.Transient, providertest.Permanent)
		for range 3 {
			_, err = w.SetRecords(ctx, "z.", recs[:1])
			require.Error(t, err)
		}

		st := m.Stats()
		set := st.Method(provider.MethodSetRecords)
		assert.Equal(t, provider.MethodStats{
			Calls: 4, Errors: 3, Throttled: 1, Transient: 1, Permanent: 1,
			RecordsIn: 5, RecordsOut: 2, Latency: 200 * time.Millisecond, MaxLatency: 50 * time.Millisecond,
		}, set)
		assert.Equal(t, 50*time.Millisecond, set.MeanLatency())
		get := st.Method(provider.MethodGetRecords)
		assert.Equal(t, int64(1), get.Calls)
		assert.Equal(t, int64(2), get.RecordsOut)
		assert.Equal(t, int64(5), st.Total().Calls)
		assert.Zero(t, st.Method(provider.MethodListZones).Calls)

		require.Len(t, obs.events, 5)
		assert.Equal(t, provider.MethodGetRecords, obs.events[1].Method)
		assert.Equal(t, []string{"none", "none", "throttled", "transient", "permanent"},
			[]string{obs.events[0].Class, obs.events[1].Class, obs.events[2].Class, obs.events[3].Class, obs.events[4].Class})

		m.Reset()
		assert.Empty(t, m.Stats().Methods)
	})
}

// The zero Meter is ready and safe for concurrent use.
func TestMeterConcurrent(t *testing.T) {
	var m provider.Meter
	w := provider.Wrap(&tiny{}, &m)
	done := make(chan struct{})
	for range 8 {
		go func() {
			defer func() { done <- struct{}{} }()
			for range 100 {
				_, _ = w.GetRecords(context.Background(), "z.")
			}
		}()
	}
	for range 8 {
		<-done
	}
	assert.Equal(t, int64(800), m.Stats().Method(provider.MethodGetRecords).Calls)
}
