package heartbeat

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/libdns/libdns"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestBeatVersions encodes and decodes beats of both format versions: a
// beat with a gateway summary (Total > 0) is a version-2 beat, any other
// one is byte for byte the version-1 beat earlier releases wrote.
func TestBeatVersions(t *testing.T) {
	cases := []struct {
		name    string
		beat    Beat
		want    string
		version int
	}{
		{"v1 minimal", Beat{Cluster: "eu-1", Region: "europe", Time: t0}, "v=gslb1;c=eu-1;r=europe;t=1795964400000", 1},
		{"v1 healthy count", Beat{Cluster: "eu-1", Region: "europe", Time: t0, Gateways: 3}, "v=gslb1;c=eu-1;r=europe;t=1795964400000;g=3", 1},
		{"v2 summary", Beat{Cluster: "eu-1", Region: "europe", Time: t0, Gateways: 2, Total: 3}, "v=gslb2;c=eu-1;r=europe;t=1795964400000;g=2;n=3", 2},
		{"v2 none healthy", Beat{Cluster: "eu-1", Region: "europe", Time: t0, Total: 3}, "v=gslb2;c=eu-1;r=europe;t=1795964400000;g=0;n=3", 2},
		{"v2 self-heal", Beat{Cluster: "EU-1", Region: "europe", Time: t0, Gateways: 3, Total: 3, SelfHeal: true}, "v=gslb2;c=eu-1;r=europe;t=1795964400000;g=3;n=3;h=1", 2},
		{"v2 largest", Beat{Cluster: "a", Region: "b", Time: time.UnixMilli(0), Gateways: MaxGateways, Total: MaxGateways}, "v=gslb2;c=a;r=b;t=0;g=65535;n=65535", 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.version, c.beat.Version())
			got, err := c.beat.MarshalText()
			require.NoError(t, err)
			assert.Equal(t, c.want, string(got))
			back, err := ParseBeat(string(got))
			require.NoError(t, err)
			want := c.beat
			want.Cluster = strings.ToLower(want.Cluster)
			assert.True(t, want.Time.Equal(back.Time))
			want.Time = back.Time
			assert.Equal(t, want, back)
			h, n, ok := back.Summary()
			assert.Equal(t, c.version == 2, ok)
			if ok {
				assert.Equal(t, [2]int{c.beat.Gateways, c.beat.Total}, [2]int{h, n})
			} else {
				assert.Zero(t, h+n, "a v1 beat's summary is unknown, not zero of zero")
			}
		})
	}
}

func TestBeatV2Rejects(t *testing.T) {
	cases := []struct {
		name, text string
		want       error
		field      string
	}{
		{"no summary", "v=gslb2;c=a;r=b;t=1", ErrMalformed, "g"},
		{"no total", "v=gslb2;c=a;r=b;t=1;g=1", ErrMalformed, "n"},
		{"total before healthy", "v=gslb2;c=a;r=b;t=1;n=2;g=1", ErrMalformed, "g"},
		{"zero total", "v=gslb2;c=a;r=b;t=1;g=0;n=0", ErrMalformed, "n"},
		{"more healthy than total", "v=gslb2;c=a;r=b;t=1;g=3;n=2", ErrMalformed, "g"},
		{"total too large", "v=gslb2;c=a;r=b;t=1;g=1;n=65536", ErrMalformed, "n"},
		{"leading zero", "v=gslb2;c=a;r=b;t=1;g=01;n=2", ErrMalformed, "g"},
		{"empty healthy", "v=gslb2;c=a;r=b;t=1;g=;n=2", ErrMalformed, "g"},
		{"total in a v1 beat", "v=gslb1;c=a;r=b;t=1;g=1;n=2", ErrMalformed, "value"},
		{"duplicate total", "v=gslb2;c=a;r=b;t=1;g=1;n=2;n=2", ErrMalformed, "value"},
		{"version 3", "v=gslb3;c=a;r=b;t=1;g=1;n=2", ErrVersion, "v"},
		{"version 2 prefix", "v=gslb22;c=a;r=b;t=1;g=1;n=2", ErrVersion, "v"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseBeat(c.text)
			require.ErrorIs(t, err, c.want)
			var be *BeatError
			require.True(t, errors.As(err, &be))
			assert.Equal(t, c.field, be.Field, "%v", err)
		})
	}
}

func TestBeatV2Validate(t *testing.T) {
	for _, c := range []struct {
		name string
		beat Beat
		want string
	}{
		{"negative total", Beat{Cluster: "a", Region: "r", Time: t0, Total: -1}, "heartbeat: invalid beat: Total = -1: allowed [0, 65535]"},
		{"total too large", Beat{Cluster: "a", Region: "r", Time: t0, Total: MaxGateways + 1}, "Total = 65536"},
		{"more healthy than total", Beat{Cluster: "a", Region: "r", Time: t0, Gateways: 4, Total: 3}, "Gateways = 4: allowed [0, Total (3)]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := c.beat.MarshalText()
			require.ErrorIs(t, err, ErrInvalidBeat)
			assert.Contains(t, err.Error(), c.want)
		})
	}
}

// TestBeatV2Signed: a signed v2 beat fits one TXT string at its longest,
// its MAC is computed as Beat documents (same scope context as v1, the
// version field signed), and a forged summary or version fails.
func TestBeatV2Signed(t *testing.T) {
	kr := mustKeyring(t, Key{ID: strings.Repeat("k", 16), Secret: testKey.Secret})
	longest := Beat{Cluster: strings.Repeat("c", 63), Region: strings.Repeat("r", 63), Time: time.UnixMilli(maxMillis),
		Gateways: MaxGateways, Total: MaxGateways, SelfHeal: true}
	s, err := kr.Seal(Global, longest)
	require.NoError(t, err)
	assert.LessOrEqual(t, len(s), MaxBeatLen)
	t.Logf("longest signed v2 beat: %d bytes", len(s))
	got, err := kr.Open(Global, s)
	require.NoError(t, err)
	got.KeyID = ""
	assert.True(t, longest.Time.Equal(got.Time))
	got.Time = longest.Time
	assert.Equal(t, longest, got)

	kr = mustKeyring(t, testKey)
	text, err := kr.Seal(Local, Beat{Cluster: "eu-1", Region: "europe", Time: t0, Gateways: 1, Total: 2})
	require.NoError(t, err)
	i := strings.Index(text, ";m=")
	h := hmac.New(sha256.New, testKey.Secret)
	h.Write([]byte("gslb1/local\n" + text[:i]))
	assert.Equal(t, base64.RawURLEncoding.EncodeToString(h.Sum(nil)), text[i+3:])
	for _, forged := range []string{
		strings.Replace(text, "g=1;n=2", "g=2;n=2", 1),
		strings.Replace(text, "g=1;n=2", "g=1;n=3", 1),
	} {
		_, err := kr.Open(Local, forged)
		assert.ErrorIs(t, err, ErrBadSignature, forged)
	}
}

// TestConfigBeatVersion: 0, 1 and 2 are allowed; anything else is refused
// naming the field and the range.
func TestConfigBeatVersion(t *testing.T) {
	for _, v := range []int{0, 1, 2} {
		c := testConfig("a", "europe")
		c.BeatVersion = v
		require.NoError(t, c.Validate(), "beatVersion %d", v)
	}
	c := testConfig("a", "europe")
	c.BeatVersion = 3
	err := c.Validate()
	require.ErrorIs(t, err, ErrInvalidConfig)
	assert.Equal(t, "heartbeat: invalid config: beatVersion = 3: allowed [0, 2]", err.Error())
}

// oldReaderGetter shows a zone's records the way a reader of a release
// before format version 2 parses them: that parser's version check
// accepted "v=gslb1" only and refused any other "v=…" with ErrVersion
// (TestRejects, case "other version", is that check; its v1 code path is
// unchanged). Turning "v=gslb2;" into "v=gslb2x;" makes this reader refuse
// a v2 beat with ErrVersion at the same point, and read everything else as
// it is.
type oldReaderGetter struct{ libdns.RecordGetter }

func (g oldReaderGetter) GetRecords(ctx context.Context, zone string) ([]libdns.Record, error) {
	recs, err := g.RecordGetter.GetRecords(ctx, zone)
	out := make([]libdns.Record, 0, len(recs))
	for _, r := range recs {
		if rr := r.RR(); rr.Type == "TXT" && strings.HasPrefix(unquote(rr.Data), version2+";") {
			rr.Data = "v=gslb2x" + unquote(rr.Data)[len(version2):]
			r = rr
		}
		out = append(out, r)
	}
	return out, err
}

// upgradeNode is one cluster in the rolling upgrade: a publisher and a
// global-scope reader, each of an old or a new release.
type upgradeNode struct {
	name, region string
	store        Store
	rec          *recorder
	stopPub      func()
	stopRead     func()
}

// run (re)starts the node's publisher writing beatVersion and its reader,
// old (v1 only) or new.
func (n *upgradeNode) run(t *testing.T, newReader bool, beatVersion int) {
	t.Helper()
	if n.stopPub != nil {
		n.stopPub()
		n.stopRead()
	}
	cfg := testConfig(n.name, n.region)
	cfg.BeatVersion = beatVersion
	pub, err := NewPublisher(cfg, Options{Global: n.store})
	require.NoError(t, err)
	pub.SetVerdict(Verdict{Healthy: true, Gateways: 2, Total: 3})
	var getter libdns.RecordGetter = n.store
	if !newReader {
		getter = oldReaderGetter{n.store}
	}
	r, err := NewReader(DefaultReaderConfig(Global, testGlobal), getter, ReaderOptions{Observer: n.rec})
	require.NoError(t, err)
	n.stopPub = start(t.Context(), pub.Run)
	synctest.Wait() // the beat is written before the reader's first read
	n.stopRead = start(t.Context(), r.Run)
	synctest.Wait()
}

func (n *upgradeNode) stop() { n.stopPub(); n.stopRead() }

// stales returns the clusters n's readers ever saw stale, and the errors.
func (n *upgradeNode) stales() (clusters []string, errs []error) {
	for _, e := range n.rec.all() {
		switch ev := e.ev.(type) {
		case ClusterChanged:
			if !ev.Status.Fresh && !ev.Forgotten {
				clusters = append(clusters, ev.Status.Cluster)
			}
		case BeatRejected:
			errs = append(errs, ev.Err)
		}
	}
	return clusters, errs
}

// TestRollingUpgradeToV2 upgrades three clusters, one at a time, from a
// release that reads and writes version 1 to version 2, in the two steps
// the package documentation gives: first every binary (new readers, still
// writing v1), then the writers' BeatVersion, one at a time, each a
// restart of the cluster's publisher and reader. No reader, old or new,
// ever judges any cluster stale or rejects a beat; at the end every reader
// sees every region's summary. A one-step upgrade (a writer on v2 while
// some reader is old) is shown to make that old reader judge the writer
// stale within the freshness bound, with ErrVersion: why it takes two.
func TestRollingUpgradeToV2(t *testing.T) {
	const pause = 40 * time.Second // more than HealthyDuration + SkewTolerance
	t.Run("two steps", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			store := newZone(t, testGlobal)
			var nodes []*upgradeNode
			for _, c := range [][2]string{{"a-1", "a"}, {"b-1", "b"}, {"c-1", "c"}} {
				n := &upgradeNode{name: c[0], region: c[1], store: store, rec: &recorder{}}
				nodes = append(nodes, n)
			}
			for _, n := range nodes { // every node on the old release
				n.run(t, false, 1)
			}
			time.Sleep(pause)
			for _, n := range nodes { // step 1: new binaries, still writing v1
				n.run(t, true, 0)
				time.Sleep(pause)
			}
			for _, n := range nodes { // step 2: writers on v2
				n.run(t, true, 2)
				time.Sleep(pause)
			}
			for _, n := range nodes {
				clusters, errs := n.stales()
				assert.Empty(t, clusters, "%s's readers saw clusters stale", n.name)
				assert.Empty(t, errs, "%s's readers rejected beats", n.name)
			}
			r, err := NewReader(DefaultReaderConfig(Global, testGlobal), store, ReaderOptions{})
			require.NoError(t, err)
			snap, err := r.Read(t.Context(), time.Now())
			require.NoError(t, err)
			for _, reg := range snap.Regions {
				assert.Equal(t, RegionStatus{Region: reg.Region, Healthy: true, Fresh: 1, Clusters: 1,
					Summarized: 1, Gateways: 2, TotalGateways: 3}, reg)
			}
			for _, n := range nodes {
				n.stop()
			}
		})
	})
	t.Run("one step goes stale", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			store := newZone(t, testGlobal)
			old := &upgradeNode{name: "a-1", region: "a", store: store, rec: &recorder{}}
			upgraded := &upgradeNode{name: "b-1", region: "b", store: store, rec: &recorder{}}
			old.run(t, false, 1)
			upgraded.run(t, false, 1)
			time.Sleep(pause)
			upgraded.run(t, true, 2) // v2 writer while a-1 still reads v1 only
			time.Sleep(pause)
			clusters, errs := old.stales()
			assert.Equal(t, []string{"b-1"}, clusters)
			require.NotEmpty(t, errs)
			assert.ErrorIs(t, errs[0], ErrVersion)
			clusters, _ = upgraded.stales()
			assert.Empty(t, clusters, "the new reader reads both versions")
			old.stop()
			upgraded.stop()
		})
	})
}

// TestRegionSummaries: a region sums the summaries of its fresh clusters;
// a fresh cluster writing v1 beats counts as fresh but not summarized (its
// gateways are unknown), and a stale cluster counts in no sum.
func TestRegionSummaries(t *testing.T) {
	v2 := func(c string, h, n int) Beat { return Beat{Cluster: c, Region: "eu", Time: t0, Gateways: h, Total: n} }
	got := regions([]ClusterStatus{
		{Cluster: "eu-1", Region: "eu", Fresh: true, Beat: v2("eu-1", 1, 2)},
		{Cluster: "eu-2", Region: "eu", Fresh: true, Beat: v2("eu-2", 3, 3)},
		{Cluster: "eu-3", Region: "eu", Fresh: true, Beat: Beat{Cluster: "eu-3", Region: "eu", Time: t0, Gateways: 4}},
		{Cluster: "eu-4", Region: "eu", Fresh: false, Beat: v2("eu-4", 2, 2)},
		{Cluster: "us-1", Region: "us", Fresh: false, Beat: Beat{Cluster: "us-1", Region: "us", Time: t0, Gateways: 1, Total: 2}},
	})
	assert.Equal(t, []RegionStatus{
		{Region: "eu", Healthy: true, Fresh: 3, Clusters: 4, Summarized: 2, Gateways: 4, TotalGateways: 5},
		{Region: "us", Clusters: 1, FailoverInProgress: true},
	}, got)
}
