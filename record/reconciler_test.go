package record

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/libdns/libdns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gslbkit/gslb/provider/memory"
)

// recorder collects events; safe for concurrent use.
type recorder struct {
	mu  sync.Mutex
	evs []Event
}

func (r *recorder) Observe(e Event) {
	r.mu.Lock()
	r.evs = append(r.evs, e)
	r.mu.Unlock()
}

func (r *recorder) events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.evs...)
}

func eventsOf[T Event](r *recorder) []T {
	var out []T
	for _, e := range r.events() {
		if x, ok := e.(T); ok {
			out = append(out, x)
		}
	}
	return out
}

// readZone reads a zone back through the provider as sorted lines, without
// the zone's own SOA and NS.
func readZone(t testing.TB, p libdns.RecordGetter, zone string) []string {
	t.Helper()
	recs, err := p.GetRecords(context.Background(), zone)
	require.NoError(t, err)
	var out []string
	for _, s := range Group(zone, recs) {
		if s.Type == "SOA" || s.Type == "NS" {
			continue
		}
		for _, v := range s.Values {
			out = append(out, s.Name+" "+s.Type+" "+v)
		}
	}
	return out
}

func newMemory(t testing.TB, zones ...string) *memory.Provider {
	t.Helper()
	m, err := memory.New(memory.DefaultConfig())
	require.NoError(t, err)
	for _, z := range zones {
		require.NoError(t, m.AddZone(z))
	}
	return m
}

func localConfig() Config {
	c := LocalConfig("dep-1")
	c.WritesPerSecond = 10000
	c.WriteBurst = 100
	return c
}

func TestReconcilerAgainstMemory(t *testing.T) {
	ctx := context.Background()
	m := newMemory(t, "example.com.", "global.test.")
	_, err := m.SetRecords(ctx, "example.com.", []libdns.Record{
		libdns.Address{Name: "legacy", TTL: time.Minute, IP: mustAddr("198.51.100.1")},
		libdns.TXT{Name: "@", TTL: time.Minute, Text: "v=spf1 -all"},
	})
	require.NoError(t, err)
	rec := &recorder{}
	r, err := New(m, localConfig(), Options{Observer: rec})
	require.NoError(t, err)

	d := Desired{Sets: []RRSet{
		{Zone: "example.com.", Name: "@", Type: "A", TTL: time.Minute, Values: []string{"192.0.2.1"}},
		{Zone: "example.com.", Name: "www", Type: "A", TTL: time.Minute, Values: []string{"192.0.2.1", "192.0.2.2"}},
		{Zone: "global.test", Name: "app", Type: "CNAME", TTL: 30 * time.Second, Values: []string{"www.example.com."}},
		{Zone: "example.com.", Name: "legacy", Type: "A", TTL: time.Minute, Values: []string{"192.0.2.9"}},
	}}
	rep, err := r.Apply(ctx, d)
	require.NoError(t, err)
	// The apex already holds a foreign TXT, so it is not ours: refused, like legacy.
	require.Len(t, rep.Changes.Refused, 2)
	assert.ErrorIs(t, rep.Changes.Refused[0].Err, ErrNotOwned)
	assert.Equal(t, 4, rep.Writes, "per zone: one call for markers, one for records")
	assert.Equal(t, []string{"@ TXT v=spf1 -all", "_gslb-owner.www TXT dep-1", "legacy A 198.51.100.1", "www A 192.0.2.1", "www A 192.0.2.2"},
		readZone(t, m, "example.com."))
	assert.Equal(t, []string{"_gslb-owner.app TXT dep-1", "app CNAME www.example.com."}, readZone(t, m, "global.test."))
	assert.False(t, r.Pending())

	// Steady state: zero writes.
	rep, err = r.ReconcileOnce(ctx)
	require.NoError(t, err)
	assert.Equal(t, 0, rep.Writes)

	// Adopt the apex; retarget the CNAME; drop one address: one call per zone.
	d.Adopt = []Name{{Zone: "example.com.", Name: "@"}}
	d.Sets[1].Values = []string{"192.0.2.2"}
	d.Sets[2].Values = []string{"WWW.example.com"}
	rep, err = r.Apply(ctx, d)
	require.NoError(t, err)
	assert.Equal(t, 2, rep.Writes, "apex claim then the www update")
	assert.Equal(t, []string{"@ A 192.0.2.1", "@ TXT v=spf1 -all", "_gslb-owner TXT dep-1", "_gslb-owner.www TXT dep-1", "legacy A 198.51.100.1", "www A 192.0.2.2"},
		readZone(t, m, "example.com."))
	d.Sets[2].Values = []string{"other.example.com."}
	rep, err = r.Apply(ctx, d)
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Writes, "CNAME retarget is one replace")

	// Empty desired: held stale, since stays put.
	d.Sets[1].Values = nil
	rep, err = r.Apply(ctx, d)
	require.NoError(t, err)
	assert.Equal(t, 0, rep.Writes)
	require.Len(t, rep.Held, 1)
	since := rep.Held[0].Since
	assert.ErrorIs(t, rep.Held[0].Err(), ErrEmptySet)
	rep, err = r.ReconcileOnce(ctx)
	require.NoError(t, err)
	require.Len(t, rep.Held, 1)
	assert.Equal(t, since, rep.Held[0].Since)
	assert.Contains(t, readZone(t, m, "example.com."), "www A 192.0.2.2")

	// Withdraw: records go, then the marker.
	d.Sets = append(d.Sets[:1], d.Sets[2:]...)
	d.Withdraw = []Key{{Zone: "example.com.", Name: "www"}}
	rep, err = r.Apply(ctx, d)
	require.NoError(t, err)
	assert.Equal(t, 2, rep.Writes)
	assert.Equal(t, []string{"@ A 192.0.2.1", "@ TXT v=spf1 -all", "_gslb-owner TXT dep-1", "legacy A 198.51.100.1"},
		readZone(t, m, "example.com."))
	assert.NotEmpty(t, eventsOf[HeldStale](rec))
	assert.NotEmpty(t, eventsOf[AppliedEvent](rec))
}

func TestReconcilerDryRun(t *testing.T) {
	m := newMemory(t, "example.com.")
	cfg := localConfig()
	cfg.DryRun = true
	var out bytes.Buffer
	r, err := New(m, cfg, Options{DryRunOutput: &out})
	require.NoError(t, err)
	rep, err := r.Apply(context.Background(), Desired{Sets: []RRSet{set("www", "A", 60, "192.0.2.1")}})
	require.NoError(t, err)
	assert.Equal(t, 0, rep.Writes)
	assert.True(t, rep.Pending, "nothing was applied")
	assert.Empty(t, readZone(t, m, testZone))
	assert.Equal(t, "dry run, not applied:\nzone example.com.\n  claim   _gslb-owner.www TXT 300 dep-1\n  create  www A 60 192.0.2.1\n", out.String())
}

func TestReconcilerTypeSwitch(t *testing.T) {
	ctx := context.Background()
	cfg := localConfig()
	cfg.AllowTypeSwitch = true
	f := newFake(testZone)
	rec := &recorder{}
	r, err := New(f, cfg, Options{Observer: rec})
	require.NoError(t, err)
	_, err = r.Apply(ctx, Desired{Sets: []RRSet{set("app", "A", 30, "192.0.2.1")}})
	require.NoError(t, err)
	rep, err := r.Apply(ctx, Desired{Sets: []RRSet{set("app", "CNAME", 30, "pool.example.com.")}})
	require.NoError(t, err)
	assert.Equal(t, 2, rep.Writes, "delete the A, then set the CNAME")
	assert.Equal(t, lines("_gslb-owner.app TXT 300 dep-1", "app CNAME 30 pool.example.com."), f.dump(testZone))
	w := eventsOf[SwitchWindow](rec)
	require.Len(t, w, 1)
	assert.True(t, w[0].Closed)
	assert.Equal(t, []Key{{Zone: testZone, Name: "app", Type: "A"}, {Zone: testZone, Name: "app", Type: "CNAME"}}, w[0].Keys)

	// A Replacer does it in one call, with no window.
	rp := &replacerFake{fakeZones: f}
	r2, err := New(rp, cfg, Options{Observer: rec})
	require.NoError(t, err)
	rep, err = r2.Apply(ctx, Desired{Sets: []RRSet{set("app", "A", 30, "192.0.2.7")}})
	require.NoError(t, err)
	assert.Equal(t, 1, rep.Writes)
	assert.Equal(t, 1, rp.replaces)
	assert.Equal(t, lines("_gslb-owner.app TXT 300 dep-1", "app A 30 192.0.2.7"), f.dump(testZone))
	assert.Len(t, eventsOf[SwitchWindow](rec), 1)

	// Refused by default: the CNAME stays published.
	r3, err := New(f, localConfig(), Options{})
	require.NoError(t, err)
	rep, err = r3.Apply(ctx, Desired{Sets: []RRSet{set("app", "CNAME", 30, "pool.example.com.")}})
	require.NoError(t, err)
	require.Len(t, rep.Changes.Refused, 1)
	assert.ErrorIs(t, rep.Changes.Refused[0].Err, ErrTypeSwitch)
	assert.Equal(t, lines("_gslb-owner.app TXT 300 dep-1", "app A 30 192.0.2.7"), f.dump(testZone))
}

// replacerFake adds an atomic ReplaceRecords to the fake.
type replacerFake struct {
	*fakeZones
	replaces int
}

func (r *replacerFake) ReplaceRecords(ctx context.Context, zone string, del, set []libdns.Record) error {
	r.mu.Lock()
	r.replaces++
	saved := append([]libdns.RR(nil), r.zones[zoneOf(zone)]...)
	r.mu.Unlock()
	if _, err := r.DeleteRecords(ctx, zone, del); err != nil {
		return err
	}
	if _, err := r.SetRecords(ctx, zone, set); err != nil {
		r.mu.Lock()
		r.zones[zoneOf(zone)] = saved
		r.mu.Unlock()
		return err
	}
	r.mu.Lock()
	r.writes-- // two inner calls count as one
	r.mu.Unlock()
	return nil
}

func TestReconcilerErrors(t *testing.T) {
	ctx := context.Background()
	f := newFake(testZone, "other.test.")
	r, err := New(f, localConfig(), Options{})
	require.NoError(t, err)
	d := Desired{Sets: []RRSet{set("www", "A", 60, "192.0.2.1"),
		{Zone: "other.test.", Name: "x", Type: "A", TTL: time.Minute, Values: []string{"192.0.2.2"}}}}

	// A permanent error in one zone does not stop the other.
	calls := 0
	f.fault = func(op string) fault {
		calls++
		if op == "set" && calls == 3 {
			return fault{err: errors.New("fake: forbidden")}
		}
		return fault{}
	}
	rep, err := r.Apply(ctx, d)
	var we *WriteError
	require.ErrorAs(t, err, &we)
	assert.Equal(t, testZone, we.Zone)
	assert.True(t, rep.Pending)
	assert.True(t, r.Pending())
	assert.Equal(t, lines("_gslb-owner.x TXT 300 dep-1", "x A 60 192.0.2.2"), f.dump("other.test."))

	// Throttled: the writes of the reconcile stop.
	f.fault = func(string) fault { return fault{err: throttled()} }
	_, err = r.ReconcileOnce(ctx)
	var th interface{ Throttled() bool }
	require.ErrorAs(t, err, &th)

	// The desired state was not lost: without faults it lands.
	f.fault = nil
	_, err = r.ReconcileOnce(ctx)
	require.NoError(t, err)
	assert.False(t, r.Pending())
	assert.Equal(t, lines("_gslb-owner.www TXT 300 dep-1", "www A 60 192.0.2.1"), f.dump(testZone))

	// Invalid desired states are refused whole and change nothing.
	_, err = r.Apply(ctx, Desired{Sets: []RRSet{set("www", "A", 60, "nope")}})
	require.ErrorIs(t, err, ErrInvalid)
	assert.False(t, r.Pending())
}

func TestNewAndConfig(t *testing.T) {
	_, err := New(nil, DefaultConfig("x"), Options{})
	require.ErrorIs(t, err, ErrInvalid)
	_, err = New(newFake(), DefaultConfig(""), Options{})
	require.ErrorIs(t, err, ErrInvalid, "New's error matches ErrInvalid")
	require.ErrorContains(t, err, "ownerId")
	require.ErrorContains(t, err, "DefaultConfig", "the zero Config's error names DefaultConfig")
	// A config with only an owner id takes the defaults (RetryJitter 0 stays: no jitter).
	r0, err := New(newFake(), Config{OwnerID: "x"}, Options{})
	require.NoError(t, err)
	want := DefaultConfig("x")
	want.RetryJitter = 0
	assert.Equal(t, want, r0.Config())
	for _, c := range []Config{DefaultConfig("a"), Route53Config("a"), CloudflareConfig("a"), LocalConfig("a")} {
		require.NoError(t, c.Validate())
		b, err := json.Marshal(c)
		require.NoError(t, err)
		var back Config
		require.NoError(t, json.Unmarshal(b, &back))
		assert.Equal(t, c, back)
	}
	var fromJSON Config
	require.NoError(t, json.Unmarshal([]byte(`{"ownerId":"eu","markerPrefix":"_gslb-owner","markerTTL":"5m",
		"resyncInterval":"30s","writesPerSecond":2,"writeBurst":2,"retryBase":"1s","retryMax":"1m","retryJitter":0.5}`), &fromJSON))
	require.NoError(t, fromJSON.Validate())
	assert.Equal(t, 30*time.Second, fromJSON.ResyncInterval)
	bad := []struct {
		field string
		mut   func(*Config)
	}{
		{"ownerId", func(c *Config) { c.OwnerID = "has space" }},
		{"markerPrefix", func(c *Config) { c.MarkerPrefix = "a.b" }},
		{"markerTTL", func(c *Config) { c.MarkerTTL = -1 }},
		{"resyncInterval", func(c *Config) { c.ResyncInterval = 48 * time.Hour }},
		{"writesPerSecond", func(c *Config) { c.WritesPerSecond = -1 }},
		{"writeBurst", func(c *Config) { c.WriteBurst = 10001 }},
		{"retryBase", func(c *Config) { c.RetryBase = time.Millisecond }},
		{"retryMax", func(c *Config) { c.RetryMax = time.Millisecond * 500 }},
		{"retryJitter", func(c *Config) { c.RetryJitter = 2 }},
	}
	for _, b := range bad {
		t.Run(b.field, func(t *testing.T) {
			c := DefaultConfig("dep")
			b.mut(&c)
			err := c.Validate()
			var fe *FieldError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, b.field, fe.Path)
			require.ErrorIs(t, err, ErrInvalid)
		})
	}
}

func TestSetCopiesTheDesiredState(t *testing.T) {
	f := newFake(testZone)
	r, err := New(f, localConfig(), Options{})
	require.NoError(t, err)
	vals := []string{"192.0.2.1", "192.0.2.2"}
	require.NoError(t, r.Set(Desired{Sets: []RRSet{set("www", "A", 60, vals...)}}))
	d := Desired{Sets: []RRSet{{Zone: testZone, Name: "www", Type: "A", TTL: time.Minute, Values: vals}}}
	require.NoError(t, r.Set(d))
	vals[0] = "203.0.113.1" // the caller reuses its slice
	_, err = r.ReconcileOnce(context.Background())
	require.NoError(t, err)
	assert.Equal(t, lines("_gslb-owner.www TXT 300 dep-1", "www A 60 192.0.2.1", "www A 60 192.0.2.2"), f.dump(testZone))
}

func TestObserverMayCallBack(t *testing.T) {
	f := newFake(testZone)
	var r *Reconciler
	nested := 0
	obs := ObserverFunc(func(e Event) {
		if _, ok := e.(AppliedEvent); ok && nested == 0 {
			nested++
			_, err := r.ReconcileOnce(context.Background()) // no deadlock
			assert.NoError(t, err)
			assert.False(t, r.Pending())
		}
	})
	var err error
	r, err = New(f, localConfig(), Options{Observer: obs})
	require.NoError(t, err)
	_, err = r.Apply(context.Background(), Desired{Sets: []RRSet{set("www", "A", 60, "192.0.2.1")}})
	require.NoError(t, err)
	assert.Equal(t, 1, nested)
}

func TestHeldSinceSurvivesAFailedRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		f := newFake(testZone)
		r, err := New(f, localConfig(), Options{})
		require.NoError(t, err)
		_, err = r.Apply(ctx, Desired{Sets: []RRSet{set("www", "A", 60, "192.0.2.1")}})
		require.NoError(t, err)
		rep, err := r.Apply(ctx, Desired{Sets: []RRSet{set("www", "A", 60)}})
		require.NoError(t, err)
		require.Len(t, rep.Held, 1)
		since := rep.Held[0].Since
		time.Sleep(time.Minute)
		f.fault = func(op string) fault {
			if op == "get" {
				return fault{err: timeout()}
			}
			return fault{}
		}
		_, err = r.ReconcileOnce(ctx)
		require.Error(t, err)
		f.fault = nil
		time.Sleep(time.Minute)
		rep, err = r.ReconcileOnce(ctx)
		require.NoError(t, err)
		require.Len(t, rep.Held, 1)
		assert.Equal(t, since, rep.Held[0].Since)
		assert.Equal(t, 2*time.Minute, rep.Held[0].At.Sub(since))
	})
}
