package record_test

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/libdns/libdns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gslbkit/gslb/heartbeat"
	"github.com/gslbkit/gslb/record"
)

var _ heartbeat.Store = (*record.FencedStore)(nil)

func beat(text string) []libdns.Record {
	return []libdns.Record{libdns.TXT{Name: "health-001-eu1", TTL: time.Minute, Text: text}}
}

// A deposed leader's late heartbeat: its beat store, fenced with the
// Reconciler's token, is refused once the newer leader has written, and
// the refusal fences its Reconciler off too; without fencing the late
// beat lands over the newer leader's.
func TestFencedStoreLateBeat(t *testing.T) {
	for _, fencing := range []bool{true, false} {
		t.Run(map[bool]string{true: "fenced", false: "unfenced"}[fencing], func(t *testing.T) {
			ctx := context.Background()
			z := newZone(t)
			tok := map[bool][2]uint64{true: {1, 2}, false: {0, 0}}[fencing]
			var ev1 events
			r1, r2 := writer(t, z, tok[0], &ev1), writer(t, z, tok[1], nil)
			s1, s2 := r1.FencedStore(), r2.FencedStore()
			_, err := s1.SetRecords(ctx, "example.com.", beat("old leader, t=1"))
			require.NoError(t, err)
			_, err = s1.SetRecords(ctx, "example.com.", beat("old leader, t=2")) // the fence remembered
			require.NoError(t, err)
			_, err = s2.SetRecords(ctx, "example.com.", beat("new leader, t=3"))
			require.NoError(t, err)

			_, err = s1.SetRecords(ctx, "example.com.", beat("old leader, late"))
			if !fencing {
				require.NoError(t, err)
				assert.Equal(t, []string{"old leader, late"}, published(t, z, "health-001-eu1", "TXT"))
				return
			}
			require.ErrorIs(t, err, record.ErrFenced)
			assert.Equal(t, []string{"new leader, t=3"}, published(t, z, "health-001-eu1", "TXT"))
			_, fenced := r1.FenceToken()
			assert.True(t, fenced, "the Reconciler is fenced off too")
			assert.Equal(t, 1, ev1.fenced())
			v := z.Version()
			_, err = s1.SetRecords(ctx, "example.com.", beat("old leader, later"))
			require.ErrorIs(t, err, record.ErrFenced)
			_, err = r1.Apply(ctx, appAt("192.0.2.9"))
			require.ErrorIs(t, err, record.ErrFenced)
			assert.Equal(t, v, z.Version())
		})
	}
}

// The beats and the records of one leader share the fence: each moves it
// on, and neither is fenced by the other.
func TestFencedStoreBesideReconciler(t *testing.T) {
	ctx := context.Background()
	z := newZone(t)
	r := writer(t, z, 4, nil)
	s := r.FencedStore()
	for i := range 3 {
		_, err := s.SetRecords(ctx, "example.com.", beat("beat"+string(rune('0'+i))))
		require.NoError(t, err)
		_, err = r.Apply(ctx, appAt("192.0.2."+string(rune('1'+i))))
		require.NoError(t, err)
	}
	_, fenced := r.FenceToken()
	assert.False(t, fenced)
	assert.Equal(t, []string{"beat2"}, published(t, z, "health-001-eu1", "TXT"))
	assert.Equal(t, []string{"192.0.2.3"}, published(t, z, "app", "A"))
}

// A heartbeat.Publisher writing through a FencedStore: while its leader
// holds the zone its beats land; once a newer leader has taken the zone
// over, its beats are refused (not retried) and nothing of them lands.
func TestFencedStorePublisher(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		z := newZone(t)
		old, cur := writer(t, z, 1, nil), writer(t, z, 2, nil)
		var mu sync.Mutex
		var written, refused int
		cfg := heartbeat.DefaultConfig()
		cfg.Cluster, cfg.Region, cfg.GlobalZone = "eu1", "europe", "example.com."
		pub, err := heartbeat.NewPublisher(cfg, heartbeat.Options{
			Global: old.FencedStore(),
			Observer: heartbeat.ObserverFunc(func(e heartbeat.Event) {
				mu.Lock()
				defer mu.Unlock()
				switch e := e.(type) {
				case heartbeat.BeatWritten:
					written++
				case heartbeat.WriteFailed:
					assert.ErrorIs(t, e.Err, record.ErrFenced)
					assert.False(t, e.Retrying, "a fence is not retried")
					refused++
				}
			}),
		})
		require.NoError(t, err)
		pub.SetVerdict(heartbeat.Verdict{Healthy: true, Gateways: 1})
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- pub.Run(ctx) }()
		time.Sleep(25 * time.Second)
		synctest.Wait()
		mu.Lock()
		assert.Equal(t, 3, written, "beats at 0, 10 and 20 s")
		mu.Unlock()

		_, err = cur.Apply(ctx, appAt("192.0.2.2")) // the newer leader takes over
		require.NoError(t, err)
		beats := published(t, z, "health-001-eu1", "TXT")
		require.Len(t, beats, 1)
		time.Sleep(30 * time.Second)
		synctest.Wait()
		mu.Lock()
		assert.Equal(t, 3, written)
		assert.Equal(t, 3, refused, "one refused attempt per interval")
		mu.Unlock()
		assert.Equal(t, beats, published(t, z, "health-001-eu1", "TXT"), "no late beat landed")
		cancel()
		require.NoError(t, <-done)
	})
}
