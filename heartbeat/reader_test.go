package heartbeat

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/libdns/libdns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func putBeat(t *testing.T, store Store, kr *Keyring, scope Scope, b Beat) {
	t.Helper()
	text, err := kr.Seal(scope, b)
	require.NoError(t, err)
	putText(t, store, "health-001-"+b.Cluster, text)
}

func putText(t *testing.T, store Store, name, text string) {
	t.Helper()
	_, err := store.SetRecords(context.Background(), testGlobal, []libdns.Record{libdns.TXT{Name: name, TTL: time.Second, Text: text}})
	require.NoError(t, err)
}

func counts(evs []recorded) (rejected map[Reason]int, changes []string) {
	rejected = map[Reason]int{}
	for _, e := range evs {
		switch ev := e.ev.(type) {
		case BeatRejected:
			rejected[ev.Reason]++
		case ClusterChanged:
			changes = append(changes, "cluster "+ev.Status.Cluster+" "+ev.Status.Reason.String())
		case RegionChanged:
			changes = append(changes, "region "+ev.Status.Region+" "+map[bool]string{true: "healthy", false: "unhealthy"}[ev.Status.Healthy])
		case FailoverChanged:
			changes = append(changes, "failover "+ev.Region+" "+map[bool]string{true: "on", false: "off"}[ev.InProgress])
		}
	}
	return rejected, changes
}

// TestReaderJudges: fresh, too old, future, forged, unsigned, truncated,
// oversized and foreign beats, regions and failover, in one zone.
func TestReaderJudges(t *testing.T) {
	zone := newZone(t, testGlobal)
	kr := mustKeyring(t, testKey)
	now := t0
	putBeat(t, zone, kr, Global, Beat{Cluster: "eu-1", Region: "europe", Time: now.Add(-31 * time.Second)})                // fresh within skew
	putBeat(t, zone, kr, Global, Beat{Cluster: "eu-2", Region: "europe", Time: now.Add(-36 * time.Second)})                // too old
	putBeat(t, zone, kr, Global, Beat{Cluster: "us-1", Region: "america", Time: now.Add(2 * time.Minute), SelfHeal: true}) // self-heal, fresh
	putBeat(t, zone, kr, Global, Beat{Cluster: "us-2", Region: "america", Time: now.Add(4 * time.Minute)})                 // from the future
	putBeat(t, zone, kr, Global, Beat{Cluster: "ap-1", Region: "asia", Time: now.Add(-40 * time.Second)})                  // too old
	good, err := kr.Seal(Global, Beat{Cluster: "ap-2", Region: "asia", Time: now})
	require.NoError(t, err)
	putText(t, zone, "health-001-ap-2", strings.Replace(good, "t=", "t=1", 1))   // forged
	putText(t, zone, "health-001-ap-3", "v=gslb1;c=ap-3;r=asia;t=1795964400000") // unsigned
	putText(t, zone, "health-001-ap-4", good[:len(good)-10])                     // truncated
	putText(t, zone, "health-001-ap-5", strings.Repeat("v", 300))                // oversized
	putText(t, zone, "health-001-ap-6", good)                                    // names ap-2
	putText(t, zone, "unrelated", "v=spf1 -all")                                 // not ours

	rec := &recorder{}
	r, err := NewReader(DefaultReaderConfig(Global, testGlobal), zone, ReaderOptions{Keyring: kr, Observer: rec})
	require.NoError(t, err)
	snap, err := r.Read(context.Background(), now)
	require.NoError(t, err)

	want := map[string]Reason{
		"eu-1": ReasonNone, "eu-2": ReasonTooOld, "us-1": ReasonNone, "us-2": ReasonFuture, "ap-1": ReasonTooOld,
		"ap-2": ReasonBadSignature, "ap-3": ReasonBadSignature, "ap-4": ReasonMalformed, "ap-5": ReasonMalformed, "ap-6": ReasonMalformed,
	}
	require.Len(t, snap.Clusters, len(want))
	for name, reason := range want {
		c, ok := snap.Cluster(name)
		require.True(t, ok, name)
		assert.Equal(t, reason, c.Reason, name)
		assert.Equal(t, reason == ReasonNone, c.Fresh, name)
	}
	us1, _ := snap.Cluster("us-1")
	assert.True(t, us1.SelfHealing)
	ap2, _ := snap.Cluster("ap-2")
	assert.ErrorIs(t, ap2.Err, ErrBadSignature)
	assert.Equal(t, "", ap2.Region, "a cluster never seen valid belongs to no region")
	assert.Equal(t, 6, snap.Rejected)
	us2, _ := snap.Cluster("us-2")
	assert.ErrorIs(t, us2.Err, ErrFuture)

	assert.True(t, snap.Healthy("europe"))
	assert.True(t, snap.Healthy("america"))
	asia, ok := snap.Region("asia")
	require.True(t, ok)
	assert.Equal(t, RegionStatus{Region: "asia", Clusters: 1, FailoverInProgress: true}, asia)

	rejected, _ := counts(rec.all())
	assert.Equal(t, map[Reason]int{ReasonBadSignature: 2, ReasonMalformed: 3, ReasonFuture: 1}, rejected)
	last := rec.all()[len(rec.all())-1].ev.(ReadDone)
	assert.Equal(t, ReadDone{At: now, Scope: Global, Fresh: 2, Stale: 8, Rejected: 6}, last)
}

// TestReaderFutureBeatCannotWin: a signed beat stamped a year ahead beside
// a fresh one is rejected as "future" before the newest beat is chosen, so
// it neither wins nor hides the fresh beat; a self-heal beat (stamped
// SelfHealInterval ahead) beside an older beat still wins and counts.
func TestReaderFutureBeatCannotWin(t *testing.T) {
	zone := newZone(t, testGlobal)
	kr := mustKeyring(t, testKey)
	now := t0
	seal := func(b Beat) libdns.Record {
		text, err := kr.Seal(Global, b)
		require.NoError(t, err)
		return libdns.TXT{Name: "health-001-" + b.Cluster, TTL: time.Second, Text: text}
	}
	_, err := zone.SetRecords(context.Background(), testGlobal, []libdns.Record{
		seal(Beat{Cluster: "eu-1", Region: "europe", Time: now.Add(-2 * time.Second)}),
		seal(Beat{Cluster: "eu-1", Region: "europe", Time: now.AddDate(1, 0, 0)}),
		seal(Beat{Cluster: "us-1", Region: "america", Time: now.Add(-20 * time.Second)}),
		seal(Beat{Cluster: "us-1", Region: "america", Time: now.Add(3 * time.Minute), SelfHeal: true}),
		seal(Beat{Cluster: "ap-1", Region: "asia", Time: now.AddDate(1, 0, 0)}),
	})
	require.NoError(t, err)

	rec := &recorder{}
	r, err := NewReader(DefaultReaderConfig(Global, testGlobal), zone, ReaderOptions{Keyring: kr, Observer: rec})
	require.NoError(t, err)
	snap, err := r.Read(context.Background(), now)
	require.NoError(t, err)

	eu, ok := snap.Cluster("eu-1")
	require.True(t, ok)
	assert.True(t, eu.Fresh, "the future beat hid the fresh one: %+v", eu)
	assert.True(t, eu.Beat.Time.Equal(now.Add(-2*time.Second)), "newest legitimate beat: %v", eu.Beat.Time)
	us, _ := snap.Cluster("us-1")
	assert.True(t, us.Fresh)
	assert.True(t, us.SelfHealing, "the self-heal beat is the newest legitimate beat")
	ap, _ := snap.Cluster("ap-1")
	assert.False(t, ap.Fresh)
	assert.Equal(t, ReasonFuture, ap.Reason)
	assert.ErrorIs(t, ap.Err, ErrFuture)
	assert.Equal(t, 2, snap.Rejected, "both future beats are counted")
	rejected, _ := counts(rec.all())
	assert.Equal(t, map[Reason]int{ReasonFuture: 2}, rejected)
	assert.True(t, snap.Healthy("europe"))
}

// TestReaderMemory: a cluster whose record vanishes is reported missing in
// its region until ForgetAfter; events say what changed, in order.
func TestReaderMemory(t *testing.T) {
	zone := newZone(t, testGlobal)
	rec := &recorder{}
	cfg := DefaultReaderConfig(Global, testGlobal)
	r, err := NewReader(cfg, zone, ReaderOptions{Observer: rec})
	require.NoError(t, err)
	ctx := context.Background()
	putBeat(t, zone, nil, Global, Beat{Cluster: "eu-1", Region: "europe", Time: t0})
	putBeat(t, zone, nil, Global, Beat{Cluster: "us-1", Region: "america", Time: t0})
	_, err = r.Read(ctx, t0)
	require.NoError(t, err)
	_, err = zone.DeleteRecords(ctx, testGlobal, []libdns.Record{libdns.RR{Name: "health-001-eu-1", Type: "TXT"}})
	require.NoError(t, err)
	snap, _ := r.Read(ctx, t0.Add(time.Second))
	eu, _ := snap.Cluster("eu-1")
	assert.Equal(t, ReasonMissing, eu.Reason)
	assert.Equal(t, "europe", eu.Region)
	assert.False(t, snap.Healthy("europe"))
	// Nothing changes on the next read; then the beat returns.
	putBeat(t, zone, nil, Global, Beat{Cluster: "us-1", Region: "america", Time: t0.Add(2 * time.Second)})
	_, _ = r.Read(ctx, t0.Add(2*time.Second))
	_, changes := counts(rec.all())
	assert.Equal(t, []string{
		"cluster eu-1 fresh", "cluster us-1 fresh", "region america healthy", "region europe healthy",
		"cluster eu-1 missing", "region europe unhealthy", "failover europe on",
	}, changes)
	// Forgotten after ForgetAfter: the region is gone and its failover ends.
	putBeat(t, zone, nil, Global, Beat{Cluster: "us-1", Region: "america", Time: t0.Add(11 * time.Minute)})
	snap, _ = r.Read(ctx, t0.Add(11*time.Minute))
	_, ok := snap.Cluster("eu-1")
	assert.False(t, ok)
	_, changes = counts(rec.all())
	assert.Equal(t, []string{"cluster eu-1 missing", "region europe unhealthy", "failover europe off"}, changes[7:])
	assert.Equal(t, snap, r.Last())
}

type failingGetter struct{ err error }

func (f failingGetter) GetRecords(context.Context, string) ([]libdns.Record, error) {
	return nil, f.err
}

// TestReaderReadFailure: when the zone cannot be read, the reader judges
// the beats it last saw, so a cluster still goes stale on time.
func TestReaderReadFailure(t *testing.T) {
	zone := newZone(t, testGlobal)
	putBeat(t, zone, nil, Global, Beat{Cluster: "eu-1", Region: "europe", Time: t0})
	g := &switchGetter{RecordGetter: zone}
	r, err := NewReader(DefaultReaderConfig(Global, testGlobal), g, ReaderOptions{})
	require.NoError(t, err)
	_, err = r.Read(context.Background(), t0)
	require.NoError(t, err)
	boom := errors.New("boom")
	g.RecordGetter = failingGetter{boom}
	snap, err := r.Read(context.Background(), t0.Add(20*time.Second))
	require.ErrorIs(t, err, boom)
	c, _ := snap.Cluster("eu-1")
	assert.True(t, c.Fresh)
	snap, _ = r.Read(context.Background(), t0.Add(36*time.Second))
	c, _ = snap.Cluster("eu-1")
	assert.False(t, c.Fresh)
	assert.Equal(t, ReasonTooOld, c.Reason)
}

type switchGetter struct{ libdns.RecordGetter }

func TestReaderConfigValidate(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*ReaderConfig)
		field  string
	}{
		{"scope", func(c *ReaderConfig) { c.Scope = 0 }, "scope"},
		{"zone", func(c *ReaderConfig) { c.Zone = "" }, "zone"},
		{"prefix", func(c *ReaderConfig) { c.Prefix = "a.b" }, "prefix"},
		{"rules", func(c *ReaderConfig) { c.Rules.SkewTolerance = -1 }, "rules.skewTolerance"},
		{"forget", func(c *ReaderConfig) { c.ForgetAfter = time.Second }, "forgetAfter"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := DefaultReaderConfig(Global, testGlobal)
			c.mutate(&cfg)
			err := cfg.Validate()
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.field)
		})
	}
	_, err := NewReader(DefaultReaderConfig(Global, testGlobal), nil, ReaderOptions{})
	assert.Error(t, err)
}
