package probe

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

func TestStatsRecord(t *testing.T) {
	t0 := time.Unix(1000, 0)
	s := monNewStats(t0, Passing, 4)
	ms := time.Millisecond
	results := []Result{
		{Status: Pass, Latency: 10 * ms},
		{Status: Fail, Kind: KindTimeout, Latency: 40 * ms, Detail: "deadline"},
		{Status: Pass, Latency: 20 * ms},
		{Status: FailNow, Kind: KindStatus, Latency: 30 * ms},
		{Status: Pass, Latency: 50 * ms},
		{Status: Pass, Latency: 60 * ms},
	}
	for i, r := range results {
		s.record(t0.Add(time.Duration(i)*time.Second), r, 0.5)
	}
	s.enter(t0.Add(10*time.Second), Warning)
	var out TargetStats
	buf := s.samples(nil)
	s.fill(t0.Add(15*time.Second), &out)
	monPercentiles(buf, &out)

	assert.Equal(t, uint64(6), out.Probes)
	assert.Equal(t, uint64(4), out.Passes)
	assert.Equal(t, uint64(2), out.Failures)
	assert.Equal(t, uint64(1), out.FailuresByKind[KindTimeout])
	assert.Equal(t, uint64(1), out.FailuresByKind[KindStatus])
	assert.Equal(t, "status", out.LastError, "kind name when the prober gave no detail")
	assert.Equal(t, t0.Add(3*time.Second), out.LastErrorAt)
	assert.Equal(t, 60*ms, out.LastLatency)
	// EWMA with weight 0.5: 10, 25, 22.5, 26.25, 38.125, 49.0625
	assert.Equal(t, time.Duration(49.0625*float64(ms)), out.SmoothedLatency)
	// window of 4 keeps 20, 30, 50, 60
	assert.Equal(t, 4, out.Samples)
	assert.Equal(t, 30*ms, out.P50)
	assert.Equal(t, 60*ms, out.P95)
	assert.Equal(t, 60*ms, out.P99)
	assert.Equal(t, Warning, out.State)
	assert.Equal(t, 10*time.Second, out.TimeIn[Passing])
	assert.Equal(t, 5*time.Second, out.TimeIn[Warning])
	assert.Equal(t, uint64(1), out.Transitions)
}

// TestStatsPassesOnly checks that a target that never fails nor changes
// state keeps no rare block (allocated at the first failure, local or not,
// or state change) and reports its time in its one state all the same.
func TestStatsPassesOnly(t *testing.T) {
	t0 := time.Unix(1000, 0)
	s := monNewStats(t0, Passing, 4)
	for i := range 10 {
		s.record(t0.Add(time.Duration(i)*time.Second), Result{Status: Pass, Latency: time.Millisecond}, 0.5)
	}
	assert.Nil(t, s.rare)
	var out TargetStats
	s.fill(t0.Add(10*time.Second), &out)
	assert.Equal(t, uint64(10), out.Passes)
	assert.Equal(t, 10*time.Second, out.TimeIn[Passing])
	assert.Zero(t, out.Transitions)
	assert.Zero(t, out.FailuresByKind)
	assert.Empty(t, out.LastError)
	assert.True(t, out.LastErrorAt.IsZero())

	s.record(t0.Add(11*time.Second), Result{Status: Fail, Kind: KindLocal}, 0.5)
	s.fill(t0.Add(12*time.Second), &out)
	assert.Equal(t, uint64(1), out.LocalFailures)
	assert.Equal(t, KindLocal.String(), out.LastError)
	assert.Equal(t, uint64(10), out.Probes, "a local failure is not a probe")
}

func TestStatsRank(t *testing.T) {
	ms := time.Millisecond
	var hundred []time.Duration
	for i := 1; i <= 100; i++ {
		hundred = append(hundred, time.Duration(i)*ms)
	}
	cases := []struct {
		name          string
		in            []time.Duration
		p50, p95, p99 time.Duration
	}{
		{"empty", nil, 0, 0, 0},
		{"one", []time.Duration{7 * ms}, 7 * ms, 7 * ms, 7 * ms},
		{"two unsorted", []time.Duration{9 * ms, 1 * ms}, 1 * ms, 9 * ms, 9 * ms},
		{"one to hundred", hundred, 50 * ms, 95 * ms, 99 * ms},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var out TargetStats
			monPercentiles(append([]time.Duration(nil), c.in...), &out)
			assert.Equal(t, c.p50, out.P50)
			assert.Equal(t, c.p95, out.P95)
			assert.Equal(t, c.p99, out.P99)
			assert.Equal(t, len(c.in), out.Samples)
		})
	}
}

func BenchmarkStatsRecord(b *testing.B) {
	s := monNewStats(time.Now(), Passing, 64)
	now := time.Now()
	r := Result{Status: Pass, Latency: time.Millisecond}
	b.ReportAllocs()
	for b.Loop() {
		s.record(now, r, 0.2)
	}
}
