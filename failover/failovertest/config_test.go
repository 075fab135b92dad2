package failovertest_test

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gslbkit/gslb/failover"
	"github.com/gslbkit/gslb/failover/failovertest"
)

func TestConfigValidate(t *testing.T) {
	cases := []struct {
		name   string
		change func(c *failovertest.Config)
		field  string // "" = valid
	}{
		{"default", func(*failovertest.Config) {}, ""},
		{"fast", func(c *failovertest.Config) { *c = failovertest.FastConfig() }, ""},
		{"no service", func(c *failovertest.Config) { c.Topology.Service = "" }, "topology"},
		{"bad probe", func(c *failovertest.Config) { c.Probe.CriticalThreshold = -1 }, "probe"},
		{"bad rules", func(c *failovertest.Config) { c.Heartbeat.HealthyDuration = time.Millisecond }, "failovertest: invalid scenario: heartbeat.healthyDuration = 1ms: allowed [1s, 1h]"},
		{"nested probe, one prefix", func(c *failovertest.Config) { c.Probe.Interval = -time.Second }, "failovertest: invalid scenario: probe.interval = -1s: allowed [1ms, 24h]"},
		{"nested topology, one prefix", func(c *failovertest.Config) { c.Topology.Service = "a b" }, `failovertest: invalid scenario: topology.service = "a b": allowed a DNS label: [1, 63] letters, digits or hyphens (no hyphen first or last)`},
		{"reconcile too short", func(c *failovertest.Config) { c.Reconcile = time.Millisecond }, "reconcile = 1ms"},
		{"warm-up negative", func(c *failovertest.Config) { c.WarmUp = -1 }, "warmUp"},
		{"bad faults", func(c *failovertest.Config) { c.Faults.ThrottleRate = 2 }, "faults"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := failovertest.DefaultConfig()
			tc.change(&c)
			err := c.Validate()
			if tc.field == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, failovertest.ErrInvalid)
			assert.Contains(t, err.Error(), tc.field)
			assert.ErrorIs(t, failovertest.New(c).Err(), failovertest.ErrInvalid, "New reports it")
		})
	}
}

func TestConfigJSON(t *testing.T) {
	c := failovertest.FastConfig()
	c.Trace = true
	b, err := json.Marshal(c)
	require.NoError(t, err)
	var back failovertest.Config
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, c, back)
}

// TestBounds pins the default bounds to the failover-time formula with the
// default policies: probe detection 21.032 s (10 s, then 5 s twice, plus
// the 1 s timeout and the probe event loop's 32 ms wake-up grain),
// freshness 30 s + 5 s skew + a 10 s read interval, and one 10 s reconcile
// of publish delay.
func TestBounds(t *testing.T) {
	c := failovertest.DefaultConfig()
	assert.Equal(t, 31*time.Second+32*time.Millisecond, c.GatewayBound())
	assert.Equal(t, 55*time.Second, c.ControllerBound())
	assert.Equal(t, 76*time.Second+32*time.Millisecond, c.RegionGatewaysBound())
	assert.Equal(t, 41*time.Second, c.RecoveryBound())
	c.Reconcile = 5 * time.Second
	assert.Equal(t, 26*time.Second+32*time.Millisecond, c.GatewayBound())
	assert.Equal(t, 45*time.Second, c.ControllerBound())
}

func TestDeclarationErrors(t *testing.T) {
	base := func() *failovertest.Scenario {
		return failovertest.New(failovertest.DefaultConfig()).Region("eu").Cluster("eu-1", "eu").
			Gateway("eu-1", "eu-a", "192.0.2.1")
	}
	cases := []struct {
		name  string
		build func(s *failovertest.Scenario)
		says  string
	}{
		{"region twice", func(s *failovertest.Scenario) { s.Region("eu") }, `region "eu" declared twice`},
		{"region not a label", func(s *failovertest.Scenario) { s.Region("e u") }, `failovertest: invalid scenario: region = "e u": allowed a DNS label: [1, 63] letters, digits or hyphens (no hyphen first or last), short enough for a heartbeat record name`},
		{"cluster of unknown region", func(s *failovertest.Scenario) { s.Cluster("x-1", "mars") }, `region "mars" not declared`},
		{"cluster twice", func(s *failovertest.Scenario) { s.Cluster("eu-1", "eu") }, `cluster "eu-1" declared twice`},
		{"gateway of unknown cluster", func(s *failovertest.Scenario) { s.Gateway("x", "g", "192.0.2.9") }, `cluster "x" not declared`},
		{"gateway twice", func(s *failovertest.Scenario) { s.Gateway("eu-1", "eu-a", "192.0.2.9") }, `gateway "eu-a"`},
		{"gateway without address", func(s *failovertest.Scenario) { s.Gateway("eu-1", "eu-b") }, "no address"},
		{"bad address", func(s *failovertest.Scenario) { s.Gateway("eu-1", "eu-b", "192.0.2.300") }, `address "192.0.2.300"`},
		{"shared address", func(s *failovertest.Scenario) { s.Gateway("eu-1", "eu-b", "192.0.2.1") }, `already belongs to gateway "eu-a"`},
		{"negative time", func(s *failovertest.Scenario) { s.At(-time.Second) }, "must not be negative"},
		{"unknown gateway", func(s *failovertest.Scenario) { s.At(0).GatewayDown("nope") }, `gateway "nope" not declared`},
		{"unknown cluster", func(s *failovertest.Scenario) { s.At(0).ControllerDown("nope") }, `cluster "nope" not declared`},
		{"unknown region", func(s *failovertest.Scenario) { s.At(0).Expect("mars", "x.example.test.") }, `region "mars" not declared`},
		{"partition with itself", func(s *failovertest.Scenario) { s.At(0).Partition("eu", "eu") }, "two declared regions"},
		{"zero throttle", func(s *failovertest.Scenario) { s.At(0).Throttle(failovertest.GlobalZone, 0) }, "must be positive"},
		{"bad expected address", func(s *failovertest.Scenario) { s.At(0).Expect("eu", "x.example.test.", "nope") }, `"nope"`},
		{"negative bound", func(s *failovertest.Scenario) { s.At(0).ExpectWithin(-1, "eu", "x.example.test.") }, "bound"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := base()
			require.NoError(t, s.Err())
			tc.build(s)
			err := s.Err()
			require.Error(t, err)
			assert.True(t, errors.Is(err, failovertest.ErrInvalid))
			assert.Contains(t, err.Error(), tc.says)
			assert.Contains(t, s.String(), "invalid: ")
		})
	}
}

func TestNames(t *testing.T) {
	s := twoRegions(failovertest.DefaultConfig())
	assert.Equal(t, "httpbin.example.test.", s.AppName())
	assert.Equal(t, "edge-internal.global.example.test.", s.GlobalName())
	assert.Equal(t, "edge-internal.local.example.test.", s.RegionalName())
	assert.Equal(t, "global-edge-internal.global.example.test.", s.FailoverName())
	assert.Equal(t, []string{"192.0.2.1", "2001:db8:e::1", "198.51.100.2", "2001:db8:a::2"}, s.Addrs("eu-a", "nope", "us-b"))
	assert.Len(t, s.RegionAddrs("us"), 4)
	assert.Equal(t, "global", failovertest.GlobalZone.String())
	assert.Equal(t, "local/eu", failovertest.LocalZone("eu").String())
}

func TestZeroConfigIsDefault(t *testing.T) {
	var zero failovertest.Config
	require.NoError(t, zero.Validate())
	assert.Equal(t, failovertest.DefaultConfig().GatewayBound(), zero.GatewayBound())
	assert.Equal(t, failovertest.DefaultConfig(), failovertest.New(zero).Config())
	c := failovertest.DefaultConfig()
	c.WarmUp = 2 * time.Hour
	var fe *failover.FieldError
	require.ErrorAs(t, c.Validate(), &fe)
	assert.Equal(t, "warmUp", fe.Path)
	b, err := json.Marshal(failovertest.Config{Reconcile: 5 * time.Second})
	require.NoError(t, err)
	assert.Contains(t, string(b), `"reconcile":"5s"`)
}

// TestZeroScenario: a zero Scenario reports ErrNotConfigured, never panics.
func TestZeroScenario(t *testing.T) {
	var s failovertest.Scenario
	require.NotPanics(t, func() {
		s.Region("eu").Cluster("eu-1", "eu")
		_ = s.String()
		_, _, _ = s.GlobalName(), s.RegionalName(), s.FailoverName()
		_ = s.AppName()
		require.ErrorIs(t, s.Replay(nil), failovertest.ErrNotConfigured)
	})
}
