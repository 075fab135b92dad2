package probe

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Each test names the rule of docs/semantics.md it checks. States
// after each result are written p passing, w warning, c critical,
// r recovery; served states are p and w.

func machServed(states string) string {
	return strings.Map(func(r rune) rune {
		if r == 'p' || r == 'w' {
			return 'U'
		}
		return 'D'
	}, states)
}

func TestPresetsValidate(t *testing.T) {
	for name, p := range map[string]Policy{
		"default": DefaultPolicy(), "record service": RecordService(), "envoy": Envoy(),
		"proxy sync": ProxySync(), "consul": Consul(0, 0, 0), "route 53": Route53(3, false),
		"route 53 fast": Route53(3, true), "gdnsd": Gdnsd(gdnsdUpThresh, gdnsdOkThresh, gdnsdDownThresh),
	} {
		assert.NoError(t, p.Validate(), name)
	}
	assert.NoError(t, RecordService().ValidateRecordService())
	assert.Equal(t, DefaultPolicy(), RecordService(), "the record service is the default")
}

func TestEnvoyPreset(t *testing.T) {
	p := Envoy()
	t.Run("Envoy Gateway defaults: interval 3s, timeout 1s, unhealthy 3, healthy 1", func(t *testing.T) {
		assert.Equal(t, 3*time.Second, p.Interval)
		assert.Equal(t, time.Second, p.Timeout)
		assert.Equal(t, 3, p.CriticalThreshold)
		assert.Equal(t, 1, p.PassingThreshold)
		assert.Equal(t, 1, p.WarningThreshold)
	})
	t.Run("Envoy rule 1: every host starts unhealthy, including hosts added later", func(t *testing.T) {
		for i := 0; i < 2; i++ {
			m, err := NewMachine(p)
			require.NoError(t, err)
			assert.Equal(t, Critical, m.State())
			assert.False(t, m.Served())
		}
	})
	hp := p
	hp.PassingThreshold = 3
	t.Run("Envoy rule 2: at startup one success is enough whatever healthyThreshold says", func(t *testing.T) {
		assert.Equal(t, "p", machRun(t, hp, "P"))
	})
	t.Run("Envoy rule 3: a failed first check needs healthyThreshold successes", func(t *testing.T) {
		assert.Equal(t, "crrp", machRun(t, hp, "FPPP"))
	})
	t.Run("Envoy rule 4: every success resets the failure count", func(t *testing.T) {
		assert.Equal(t, "pwwpwwc", machRun(t, p, "PFFPFFF"))
	})
	t.Run("Envoy rule 4: every failure resets the success count", func(t *testing.T) {
		assert.Equal(t, "pwwcrcrrp", machRun(t, hp, "PFFFPFPPP"))
	})
	t.Run("Envoy rule 5: a non-retriable answer makes a healthy host unhealthy at once", func(t *testing.T) {
		assert.Equal(t, "pc", machRun(t, p, "PN"))
		assert.Equal(t, "pwc", machRun(t, p, "PFN"))
	})
	t.Run("Envoy rule 6: only timeouts, connection failures and retriable statuses count toward the threshold", func(t *testing.T) {
		assert.Equal(t, "UUUD", machServed(machRun(t, p, "PFFF")))
	})
	t.Run("Envoy rule 9: next interval by pending change", func(t *testing.T) {
		q := p
		q.PassingThreshold = 2
		q.UnhealthyInterval = 7 * time.Second
		q.UnhealthyEdgeInterval = time.Second
		q.HealthyEdgeInterval = 2 * time.Second
		m, err := NewMachine(q)
		require.NoError(t, err)
		s := time.Second
		for i, c := range []struct {
			in   byte
			want time.Duration
			why  string
		}{
			{'P', 3 * s, "success, host healthy: interval"},
			{'F', 1 * s, "failure, still healthy under the threshold: unhealthy edge"},
			{'F', 1 * s, "failure, still pending: unhealthy edge"},
			{'F', 7 * s, "failure made it unhealthy: unhealthy interval"},
			{'F', 7 * s, "failure while unhealthy: unhealthy interval (no back-off)"},
			{'P', 2 * s, "success while a return is pending: healthy edge"},
			{'P', 3 * s, "success made it healthy: interval"},
		} {
			assert.Equal(t, c.want, m.Observe(machT0, machResult(c.in)).Next, "step %d: %s", i, c.why)
		}
	})
	t.Run("Envoy rule 9: each interval defaults to the interval and is never below 1ms", func(t *testing.T) {
		m, err := NewMachine(p)
		require.NoError(t, err)
		for _, c := range []byte("FFPFFF") {
			assert.Equal(t, 3*time.Second, m.Observe(machT0, machResult(c)).Next)
		}
		q := p
		q.Interval, q.Timeout = time.Millisecond, time.Millisecond
		m, err = NewMachine(q)
		require.NoError(t, err)
		assert.Equal(t, time.Millisecond, m.Observe(machT0, machResult('F')).Next)
	})
}

func TestRecordServicePreset(t *testing.T) {
	p := RecordService()
	t.Run("record service: warning at warningThreshold, critical at criticalThreshold", func(t *testing.T) {
		q := p
		q.WarningThreshold, q.CriticalThreshold = 2, 4
		assert.Equal(t, "pwwc", machRun(t, q, "FFFF"))
		assert.Equal(t, "UUUD", machServed(machRun(t, q, "FFFF")))
	})
	t.Run("record service: passingThreshold above 1 holds the target in recovery, not served", func(t *testing.T) {
		q := p
		q.PassingThreshold = 3
		got := machRun(t, q, "FFFPPP")
		assert.Equal(t, "wwcrrp", got)
		assert.Equal(t, "UUDDDU", machServed(got))
	})
	t.Run("record service: warning and recovery at half the interval, critical backs off to 300s", func(t *testing.T) {
		q := p
		q.PassingThreshold = 2
		m, err := NewMachine(q)
		require.NoError(t, err)
		var got []time.Duration
		for _, c := range []byte("FFFFFFFFFPP") {
			got = append(got, m.Observe(machT0, machResult(c)).Next/time.Second)
		}
		assert.Equal(t, []time.Duration{5, 5, 10, 20, 40, 80, 160, 300, 300, 5, 10}, got)
	})
	t.Run("record service: interval 10–300s and timeout 0.1–3.0s", func(t *testing.T) {
		for _, c := range []struct {
			interval, timeout time.Duration
			field             string
		}{
			{10 * time.Second, 100 * time.Millisecond, ""},
			{300 * time.Second, 3 * time.Second, ""},
			{9 * time.Second, time.Second, "interval"},
			{301 * time.Second, time.Second, "interval"},
			{10 * time.Second, 99 * time.Millisecond, "timeout"},
			{10 * time.Second, 3001 * time.Millisecond, "timeout"},
		} {
			q := p
			q.Interval, q.Timeout, q.MaxBackoff = c.interval, c.timeout, max(c.interval, 300*time.Second)
			err := q.ValidateRecordService()
			if c.field == "" {
				assert.NoError(t, err)
				continue
			}
			var pe *FieldError
			require.ErrorAs(t, err, &pe, "%v/%v", c.interval, c.timeout)
			assert.Equal(t, c.field, pe.Path)
		}
	})
	t.Run("record service: a drain is not permanent, real results move the target again", func(t *testing.T) {
		m, err := NewMachine(p)
		require.NoError(t, err)
		m.Override(machT0, Critical)
		assert.False(t, m.Served())
		m.Observe(machT0, machResult('P'))
		assert.True(t, m.Served())
	})
}

func TestProxySyncPreset(t *testing.T) {
	p := ProxySync()
	t.Run("proxy sync: any failure makes the gateway unhealthy at once", func(t *testing.T) {
		assert.Equal(t, "pc", machRun(t, p, "PF"))
	})
	t.Run("proxy sync: three consecutive successes to recover", func(t *testing.T) {
		assert.Equal(t, "pcrrcrrp", machRun(t, p, "PFPPFPPP"))
	})
}

func TestConsulPreset(t *testing.T) {
	t.Run("Consul: 0 and 1 behave the same", func(t *testing.T) {
		assert.Equal(t, Consul(1, 1, 1), Consul(0, 1, 0))
	})
	t.Run("Consul: failuresBeforeWarning 0 means the same as failuresBeforeCritical", func(t *testing.T) {
		p := Consul(1, 0, 3)
		assert.Equal(t, 3, p.WarningThreshold)
		assert.Equal(t, "pppc", machRun(t, p, "PFFF"))
	})
	t.Run("Consul: failuresBeforeWarning below critical shows warning first", func(t *testing.T) {
		assert.Equal(t, "ppwwc", machRun(t, Consul(1, 2, 4), "PFFFF"))
	})
	t.Run("Consul: a new check with no status is critical", func(t *testing.T) {
		m, err := NewMachine(Consul(2, 0, 3))
		require.NoError(t, err)
		assert.Equal(t, Critical, m.State())
	})
	t.Run("Consul: the first result applies at once", func(t *testing.T) {
		assert.Equal(t, "p", machRun(t, Consul(3, 0, 3), "P"))
		assert.Equal(t, "c", machRun(t, Consul(3, 0, 3), "F"))
	})
	t.Run("Consul: the 2/3 example F→critical P→unchanged P→passing F,F→unchanged F→critical", func(t *testing.T) {
		got := machRun(t, Consul(2, 0, 3), "FPPFFF")
		// Consul's "unchanged" after a pass from critical is recovery here.
		assert.Equal(t, "crpppc", got)
		assert.Equal(t, "DDUUUD", machServed(got))
	})
	t.Run("Consul: successBeforePassing also applies to leaving warning", func(t *testing.T) {
		assert.Equal(t, "ppwwp", machRun(t, Consul(2, 2, 3), "PFFPP"))
	})
	t.Run("Consul: no fail-now, it counts as an ordinary failure", func(t *testing.T) {
		assert.Equal(t, "pppc", machRun(t, Consul(1, 0, 3), "PNNN"))
	})
}

func TestRoute53Preset(t *testing.T) {
	t.Run("Route 53: interval 10 or 30 seconds", func(t *testing.T) {
		assert.Equal(t, 30*time.Second, Route53(3, false).Interval)
		assert.Equal(t, 10*time.Second, Route53(3, true).Interval)
	})
	t.Run("Route 53: failureThreshold failures make a healthy endpoint unhealthy", func(t *testing.T) {
		assert.Equal(t, "pppppc", machRun(t, Route53(3, false), "FFPFFF"))
		assert.Equal(t, "ppc", machRun(t, Route53(3, false), "FFF"))
	})
	t.Run("Route 53: failureThreshold successes make an unhealthy endpoint healthy (symmetric)", func(t *testing.T) {
		assert.Equal(t, "ppcrrcrrp", machRun(t, Route53(3, false), "FFFPPFPPP"))
	})
	t.Run("Route 53: a new endpoint is healthy until results say otherwise", func(t *testing.T) {
		m, err := NewMachine(Route53(3, false))
		require.NoError(t, err)
		assert.True(t, m.Served())
	})
	t.Run("Route 53: a negative threshold is rejected, 0 takes the default", func(t *testing.T) {
		assert.ErrorIs(t, Route53(-1, false).Validate(), ErrInvalidPolicy)
		assert.NoError(t, Route53(0, false).Validate())
	})
}

func TestGdnsdPreset(t *testing.T) {
	p := Gdnsd(3, 2, 3) // up 3, ok 2, down 3
	t.Run("gdnsd: the first round takes the raw result", func(t *testing.T) {
		assert.Equal(t, "p", machRun(t, p, "P"))
		assert.Equal(t, "c", machRun(t, p, "F"))
	})
	t.Run("gdnsd: down after down_thresh failures counted while up, across sparse successes", func(t *testing.T) {
		assert.Equal(t, "pppppc", machRun(t, p, "PFPFPF"))
	})
	t.Run("gdnsd: ok_thresh consecutive successes reset the failure count", func(t *testing.T) {
		assert.Equal(t, "pppppppp", machRun(t, p, "PFFPPFFP"))
	})
	t.Run("gdnsd: up after up_thresh consecutive successes while down", func(t *testing.T) {
		assert.Equal(t, "crrcrrp", machRun(t, p, "FPPFPPP"))
	})
	t.Run("gdnsd: defaults up 20, ok 10, down 10", func(t *testing.T) {
		q := Gdnsd(gdnsdUpThresh, gdnsdOkThresh, gdnsdDownThresh)
		assert.Equal(t, 20, q.PassingThreshold)
		assert.Equal(t, 10, q.FailureResetThreshold)
		assert.Equal(t, 10, q.CriticalThreshold)
		assert.Equal(t, "c", machRun(t, q, "F"))
		assert.Equal(t, strings.Repeat("r", 19)+"p", machRun(t, q, "F"+strings.Repeat("P", 20))[1:])
	})
}
