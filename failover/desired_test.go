package failover_test

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gslbkit/gslb/failover"
)

func TestDesiredHelpers(t *testing.T) {
	d, err := topo(t, func(c *failover.TopologyConfig) { c.GlobalZone, c.AppNames = "global.example.com", nil }).Desired(twoRegions())
	require.NoError(t, err)

	g, ok := d.Lookup("", "EDGE.GLOBAL.EXAMPLE.COM", "CNAME")
	require.True(t, ok)
	assert.Equal(t, "edge", g.RelativeName())
	assert.Equal(t, []string{regional}, g.Values())
	assert.Equal(t, regional, g.Target())
	assert.Empty(t, g.Addrs())

	a, ok := d.Lookup("eu", regional, "A")
	require.True(t, ok)
	assert.Equal(t, "edge", a.RelativeName())
	assert.Equal(t, []string{"192.0.2.1", "192.0.2.2"}, a.Values())
	assert.Empty(t, a.Target())

	_, ok = d.Lookup("us", regional, "A")
	assert.False(t, ok, "another view")

	w := failover.Withdraw{Zone: "example.com.", Name: "example.com.", Type: "AAAA"}
	assert.Equal(t, "@", w.RelativeName())
	d.Withdraws = append(d.Withdraws, w)
	assert.True(t, d.Withdrawn("", "example.com", "AAAA"))
	assert.False(t, d.Withdrawn("", "example.com", "A"))
	assert.Contains(t, d.String(), "withdraw example.com. AAAA (everyone)\n")
	assert.Contains(t, d.String(), "[eu] edge.local.example.com. A 30s 192.0.2.1 192.0.2.2 (region eu)\n")

	assert.True(t, failover.Everyone.Includes("anything"))
	assert.True(t, failover.RegionWriters("eu").Includes("eu"))
	assert.False(t, failover.RegionWriters("eu").Includes("us"))
	assert.Equal(t, "region eu", failover.RegionWriters("eu").String())
	assert.Empty(t, failover.DesiredState{}.WrittenBy("eu").Sets)
}

func TestEnumsText(t *testing.T) {
	for _, m := range []failover.AllUnhealthy{failover.KeepLast, failover.FailOpen, failover.FailClosed, failover.Fallback} {
		b, err := json.Marshal(m)
		require.NoError(t, err)
		var back failover.AllUnhealthy
		require.NoError(t, json.Unmarshal(b, &back))
		assert.Equal(t, m, back)
	}
	for _, k := range []failover.StrategyKind{failover.AllHealthy, failover.Priority, failover.Weighted} {
		b, err := json.Marshal(k)
		require.NoError(t, err)
		var back failover.StrategyKind
		require.NoError(t, json.Unmarshal(b, &back))
		assert.Equal(t, k, back)
	}
	var m failover.AllUnhealthy = failover.FailOpen
	require.NoError(t, json.Unmarshal([]byte(`""`), &m))
	assert.Equal(t, failover.KeepLast, m)
	_, err := json.Marshal(failover.AllUnhealthy(9))
	require.ErrorIs(t, err, failover.ErrInvalidConfig)
	_, err = json.Marshal(failover.StrategyKind(9))
	require.ErrorIs(t, err, failover.ErrInvalidConfig)
	assert.Equal(t, "AllUnhealthy(9)", failover.AllUnhealthy(9).String())
	assert.Equal(t, "StrategyKind(9)", failover.StrategyKind(9).String())

	strs := map[string]interface{ String() string }{
		"unknown": failover.HealthUnknown, "passing": failover.Passing, "warning": failover.Warning,
		"critical": failover.Critical, "recovery": failover.Recovery,
		"fresh": failover.Fresh, "stale": failover.Stale,
		"alive": failover.RegionAlive, "dead": failover.RegionDead,
		"no healthy address": failover.HoldNoHealthy, "published state not read": failover.HoldUnread,
		"region state unknown": failover.HoldUndecided,
	}
	for want, v := range strs {
		assert.Equal(t, want, v.String())
	}
	assert.Equal(t, "unknown", failover.FreshnessUnknown.String())
	assert.Equal(t, "unknown", failover.RegionUnknown.String())
	assert.Equal(t, "unknown", failover.HoldReason(0).String())
	assert.True(t, failover.Warning.Served())
	assert.False(t, failover.HealthUnknown.Served())
	assert.False(t, failover.HealthUnknown.Known())
}

func TestFieldError(t *testing.T) {
	err := failover.DefaultTopologyConfig().Validate()
	var fe *failover.FieldError
	require.True(t, errors.As(err, &fe))
	assert.Equal(t, "service", fe.Path)
	assert.Equal(t, `failover: invalid config: service = "": allowed a DNS label (required: start from failover.DefaultTopologyConfig and set service and domain)`, err.Error())
}

// TestFieldErrorFormat: the exact message of a few fields, one shape.
func TestFieldErrorFormat(t *testing.T) {
	topo := func(f func(*failover.TopologyConfig)) error {
		c := failover.DefaultTopologyConfig()
		c.Service, c.Domain = "edge", "example.com"
		f(&c)
		return c.Validate()
	}
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"percent", topo(func(c *failover.TopologyConfig) { c.PanicThreshold = 101 }), "failover: invalid config: panicThreshold = 101: allowed [0, 100] percent (0: off)"},
		{"dns rule, no internal names", topo(func(c *failover.TopologyConfig) { c.Service = "-x" }), `failover: invalid config: service = "-x": allowed a DNS label: [1, 63] letters, digits or hyphens (no hyphen first or last)`},
		{"set", failover.Strategy{Kind: 9}.Validate(), `failover: invalid config: strategy.kind = 9: allowed one of "allHealthy", "priority", "weighted"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.EqualError(t, c.err, c.want)
			require.ErrorIs(t, c.err, failover.ErrInvalidConfig)
		})
	}
}
