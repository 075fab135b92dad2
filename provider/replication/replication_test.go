package replication_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/gslbkit/gslb/provider/memory"
	"github.com/gslbkit/gslb/provider/replication"
	"github.com/libdns/libdns"
	"github.com/miekg/dns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const secret = "0123456789abcdef-secret"

// handlerTransport calls an http.Handler in process; down makes every
// request fail as an unreachable source would.
type handlerTransport struct {
	h    http.Handler
	down atomic.Bool
}

func (t *handlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if t.down.Load() {
		return nil, errors.New("connection refused (simulated)")
	}
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, req)
	return rec.Result(), nil
}

type eventLog struct {
	mu     sync.Mutex
	events []replication.ReplicaEvent
}

func (l *eventLog) Observe(e replication.ReplicaEvent) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, e)
}

func (l *eventLog) kinds() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, e := range l.events {
		out = append(out, e.Kind.String())
	}
	return out
}

func (l *eventLog) last() replication.ReplicaEvent {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.events[len(l.events)-1]
}

func auth() replication.HandlerConfig {
	c := replication.DefaultHandlerConfig()
	c.Secret = secret
	return c
}

type rig struct {
	source, local *memory.Provider
	transport     *handlerTransport
	replica       *replication.Replica
	events        *eventLog
	stop          func()
}

func newRig(t *testing.T, journal int, filter replication.RegionFilter, region string) *rig {
	t.Helper()
	source, err := memory.New(memory.Config{JournalSize: journal})
	require.NoError(t, err)
	require.NoError(t, source.AddZone(zone))
	_, err = source.SetRecords(context.Background(), zone, []libdns.Record{a("www", "192.0.2.1"), a("www", "192.0.2.2")})
	require.NoError(t, err)
	h, err := replication.NewHandler(source, auth(), filter, nil)
	require.NoError(t, err)
	tr := &handlerTransport{h: h}
	cfg := replication.DefaultReplicaConfig()
	cfg.URL = "http://source.invalid/replication"
	cfg.Zones = []string{zone}
	cfg.Auth = auth()
	cfg.Region = region
	local := new(memory.Provider)
	ev := &eventLog{}
	rep, err := replication.NewReplica(local, cfg, &http.Client{Transport: tr}, ev, nil)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rep.Run(ctx) }()
	return &rig{source: source, local: local, transport: tr, replica: rep, events: ev, stop: func() {
		cancel()
		require.NoError(t, <-done)
	}}
}

func addrs(t *testing.T, p *memory.Provider, name string) []string {
	t.Helper()
	recs, err := p.GetRecords(context.Background(), zone)
	require.NoError(t, err)
	var out []string
	for _, r := range recs {
		rr := r.RR()
		if rr.Name == name {
			out = append(out, rr.Type+" "+rr.Data)
		}
	}
	return out
}

func TestReplicaFollowsSource(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, 4096, nil, "")
		defer r.stop()
		synctest.Wait()
		assert.Equal(t, []string{"A 192.0.2.1", "A 192.0.2.2"}, addrs(t, r.local, "www"), "first sync is a snapshot")
		assert.True(t, r.events.last().Full)
		srcSOA, _ := r.source.SOA(zone)
		localSOA, _ := r.local.SOA(zone)
		assert.Equal(t, srcSOA, localSOA, "the serial travels with the zone")

		// A change reaches the replica on the next interval, not before.
		_, err := r.source.SetRecords(context.Background(), zone, []libdns.Record{cname("www", "pool.example.test.")})
		require.NoError(t, err)
		synctest.Wait()
		assert.Equal(t, []string{"A 192.0.2.1", "A 192.0.2.2"}, addrs(t, r.local, "www"))
		time.Sleep(10 * time.Second)
		synctest.Wait()
		assert.Equal(t, []string{"CNAME pool.example.test."}, addrs(t, r.local, "www"), "A set swapped for a CNAME in one step")
		last := r.events.last()
		assert.False(t, last.Full)
		assert.Equal(t, 2, last.Changes, "the CNAME set and the A set removed")
		assert.Equal(t, r.source.Version(), r.replica.Status().Version)

		// A notify pulls at once.
		_, err = r.source.SetRecords(context.Background(), zone, []libdns.Record{txt("t", "now")})
		require.NoError(t, err)
		r.replica.Notify()
		synctest.Wait()
		assert.Equal(t, []string{"TXT now"}, addrs(t, r.local, "t"))
	})
}

func TestReplicaDegradedKeepsServing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, 4096, nil, "")
		defer r.stop()
		synctest.Wait()
		r.transport.down.Store(true)

		time.Sleep(10 * time.Second)
		synctest.Wait()
		assert.False(t, r.replica.Degraded(), "one missed sync is not degraded")
		time.Sleep(10 * time.Second)
		synctest.Wait()
		assert.True(t, r.replica.Degraded(), "two missed syncs are")
		assert.Equal(t, []string{"synced", "sync-failed", "sync-failed", "degraded"}, r.events.kinds())

		// The last good copy is still answered.
		m := r.local.Respond(query("www.example.test.", dns.TypeA), netip.Addr{}, false)
		assert.Len(t, m.Answer, 2)

		r.transport.down.Store(false)
		time.Sleep(10 * time.Second)
		synctest.Wait()
		assert.False(t, r.replica.Degraded())
		assert.Equal(t, []string{"synced", "sync-failed", "sync-failed", "degraded", "synced", "recovered"}, r.events.kinds())
	})
}

func TestReplicaJournalOverrun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRig(t, 2, nil, "")
		defer r.stop()
		synctest.Wait()
		for i := range 5 {
			_, err := r.source.SetRecords(context.Background(), zone, []libdns.Record{txt("t", strings.Repeat("x", i+1))})
			require.NoError(t, err)
		}
		r.replica.Notify()
		synctest.Wait()
		assert.True(t, r.events.last().Full, "the journal no longer reaches back: a snapshot")
		assert.Equal(t, []string{"TXT xxxxx"}, addrs(t, r.local, "t"))
	})
}

func TestReplicaRegionFilter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// Records whose data ends in .1 belong to region "eu"; others are shared.
		filter := func(region, _ string, rec memory.ZoneRecord) bool {
			if rec.Type != "A" {
				return true
			}
			return (region == "eu") == strings.HasSuffix(rec.Data, ".1")
		}
		r := newRig(t, 4096, filter, "eu")
		defer r.stop()
		synctest.Wait()
		assert.Equal(t, []string{"A 192.0.2.1"}, addrs(t, r.local, "www"))
		_, err := r.source.SetRecords(context.Background(), zone, []libdns.Record{a("www", "192.0.2.2"), a("www", "198.51.100.1")})
		require.NoError(t, err)
		r.replica.Notify()
		synctest.Wait()
		assert.Equal(t, []string{"A 198.51.100.1"}, addrs(t, r.local, "www"))
	})
}

func TestReplicaWrongSecret(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		source := new(memory.Provider)
		require.NoError(t, source.AddZone(zone))
		h, err := replication.NewHandler(source, auth(), nil, nil)
		require.NoError(t, err)
		cfg := replication.DefaultReplicaConfig()
		cfg.URL = "http://source.invalid/"
		cfg.Zones = []string{zone}
		cfg.Auth.Secret = "a-different-secret-value"
		ev := &eventLog{}
		rep, err := replication.NewReplica(new(memory.Provider), cfg, &http.Client{Transport: &handlerTransport{h: h}}, ev, nil)
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- rep.Run(ctx) }()
		synctest.Wait()
		cancel()
		require.NoError(t, <-done)
		var se *replication.StatusError
		require.ErrorAs(t, ev.last().Err, &se)
		assert.Equal(t, http.StatusUnauthorized, se.StatusCode())
	})
}

func TestHandlerRequests(t *testing.T) {
	source := new(memory.Provider)
	require.NoError(t, source.AddZone(zone))
	var notified atomic.Int32
	h, err := replication.NewHandler(source, auth(), nil, func() { notified.Add(1) })
	require.NoError(t, err)
	tests := []struct {
		name, method, target, secret string
		want                         int
	}{
		{"snapshot", "GET", "/r/snapshot", secret, 200},
		{"changes", "GET", "/r/changes?since=0", secret, 200},
		{"no secret", "GET", "/r/snapshot", "", 401},
		{"wrong secret", "GET", "/r/snapshot", secret + "x", 401},
		{"bad since", "GET", "/r/changes?since=-1", secret, 400},
		{"region without filter", "GET", "/r/snapshot?region=eu", secret, 400},
		{"notify", "POST", "/r/notify", secret, 204},
		{"notify by GET", "GET", "/r/notify", secret, 405},
		{"snapshot by POST", "POST", "/r/snapshot", secret, 405},
		{"unknown path", "GET", "/r/other", secret, 404},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := httptest.NewRequest(tc.method, tc.target, nil)
			if tc.secret != "" {
				req.Header.Set(replication.DefaultSecretHeader, tc.secret)
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			assert.Equal(t, tc.want, rec.Code, rec.Body.String())
		})
	}
	assert.Equal(t, int32(1), notified.Load())
	_, err = replication.NewHandler(source, replication.HandlerConfig{Secret: "short"}, nil, nil)
	require.Error(t, err)
}

// TestReplicaRealSocket follows a source over a real HTTP server on
// 127.0.0.1, with the replica's own notify endpoint on another, and checks
// the order of events under a generous hang guard.
func TestReplicaRealSocket(t *testing.T) {
	source := new(memory.Provider)
	require.NoError(t, source.AddZone(zone))
	h, err := replication.NewHandler(source, auth(), nil, nil)
	require.NoError(t, err)
	srcSrv := httptest.NewServer(h)
	defer srcSrv.Close()

	cfg := replication.DefaultReplicaConfig()
	cfg.URL = srcSrv.URL
	cfg.Zones = []string{zone}
	cfg.Auth = auth()
	cfg.Interval = time.Hour // only notifies move it
	local := new(memory.Provider)
	synced := make(chan replication.ReplicaEvent, 16)
	rep, err := replication.NewReplica(local, cfg, srcSrv.Client(), observerFunc(func(e replication.ReplicaEvent) { synced <- e }), nil)
	require.NoError(t, err)
	nh, err := replication.NewHandler(nil, auth(), nil, rep.Notify)
	require.NoError(t, err)
	nodeSrv := httptest.NewServer(nh)
	defer nodeSrv.Close()

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- rep.Run(ctx) }()
	defer func() { cancel(); require.NoError(t, <-done) }()

	next := func() replication.ReplicaEvent {
		select {
		case e := <-synced:
			return e
		case <-time.After(60 * time.Second):
			t.Fatal("no replica event within 60s")
		}
		return replication.ReplicaEvent{}
	}
	require.Equal(t, replication.ReplicaSynced, next().Kind)
	_, err = source.SetRecords(ctx, zone, []libdns.Record{a("www", "192.0.2.7")})
	require.NoError(t, err)
	require.NoError(t, replication.SendNotify(ctx, nodeSrv.Client(), nodeSrv.URL, auth()))
	e := next()
	require.Equal(t, replication.ReplicaSynced, e.Kind)
	assert.Equal(t, source.Version(), e.Version)
	assert.Equal(t, []string{"A 192.0.2.7"}, addrs(t, local, "www"))
}

type observerFunc func(replication.ReplicaEvent)

func (f observerFunc) Observe(e replication.ReplicaEvent) { f(e) }
