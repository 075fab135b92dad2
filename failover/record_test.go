package failover_test

import (
	"encoding/json"
	"errors"
	"net/netip"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/gslbkit/gslb/failover"
)

func ep(ip string, h failover.Health, regions ...string) failover.Endpoint {
	return failover.Endpoint{IP: netip.MustParseAddr(ip), Health: h, Regions: regions}
}

func baseRecord() failover.Record {
	return failover.Record{
		Name: "api.gslb.example.com", Zone: "gslb.example.com", TTL: 30 * time.Second,
		FailoverFQDN: "api.backup.example.net",
		Endpoints: []failover.Endpoint{
			ep("192.0.2.1", failover.Passing, "eu"),
			ep("2001:db8::1", failover.Warning, "eu"),
			ep("192.0.2.2", failover.Critical, "us"),
			ep("192.0.2.3", failover.Recovery, "us"),
		},
	}
}

func recPolicy(t *testing.T, mod ...func(*failover.RecordConfig)) *failover.RecordPolicy {
	t.Helper()
	cfg := failover.DefaultRecordConfig()
	for _, m := range mod {
		m(&cfg)
	}
	p, err := failover.NewRecordPolicy(cfg)
	require.NoError(t, err)
	return p
}

func allCritical(r *failover.Record) {
	for i := range r.Endpoints {
		r.Endpoints[i].Health = failover.Critical
	}
}

func TestRecordOutputs(t *testing.T) {
	const (
		name = "api.gslb.example.com."
		pool = "api.pool.gslb.example.com."
		back = "api.backup.example.net."
	)
	cases := []struct {
		name     string
		cfg      func(*failover.RecordConfig)
		rec      func(*failover.Record)
		provider string // Desired.String() for Provider
		embedded string // Desired.String() for Embedded
	}{
		{
			name: "passing and warning addresses are served, both families",
			provider: name + " CNAME 30s " + pool + " (everyone)\n" +
				pool + " A 30s 192.0.2.1 (everyone)\n" + pool + " AAAA 30s 2001:db8::1 (everyone)\n",
			embedded: name + " A 30s 192.0.2.1 (everyone)\n" + name + " AAAA 30s 2001:db8::1 (everyone)\n",
		},
		{
			name:     "none healthy: the failover FQDN",
			rec:      allCritical,
			provider: name + " CNAME 30s " + back + " (everyone)\n",
			embedded: name + " CNAME 30s " + back + " (everyone)\n",
		},
		{
			name:     "disabled: the failover FQDN even while healthy",
			rec:      func(r *failover.Record) { r.Disabled = true },
			provider: name + " CNAME 30s " + back + " (everyone)\n",
			embedded: name + " CNAME 30s " + back + " (everyone)\n",
		},
		{
			name:     "disabled without failover FQDN: withdrawn",
			rec:      func(r *failover.Record) { r.Disabled, r.FailoverFQDN = true, "" },
			provider: "withdraw " + name + " * (everyone)\n",
			embedded: "withdraw " + name + " * (everyone)\n",
		},
		{
			name:     "none healthy, keep last: pool held, embedded omitted",
			rec:      func(r *failover.Record) { allCritical(r); r.FailoverFQDN = "" },
			provider: name + " CNAME 30s " + pool + " (everyone)\n",
			embedded: "",
		},
		{
			name: "none healthy, fail open: every address",
			cfg:  func(c *failover.RecordConfig) { c.AllUnhealthy = failover.FailOpen },
			rec:  func(r *failover.Record) { allCritical(r); r.FailoverFQDN = "" },
			provider: name + " CNAME 30s " + pool + " (everyone)\n" +
				pool + " A 30s 192.0.2.1 192.0.2.2 192.0.2.3 (everyone)\n" + pool + " AAAA 30s 2001:db8::1 (everyone)\n",
			embedded: name + " A 30s 192.0.2.1 192.0.2.2 192.0.2.3 (everyone)\n" + name + " AAAA 30s 2001:db8::1 (everyone)\n",
		},
		{
			name:     "none healthy, fail open, failover FQDN wins",
			cfg:      func(c *failover.RecordConfig) { c.AllUnhealthy = failover.FailOpen },
			rec:      allCritical,
			provider: name + " CNAME 30s " + back + " (everyone)\n",
			embedded: name + " CNAME 30s " + back + " (everyone)\n",
		},
		{
			name:     "none healthy, fail closed: withdrawn",
			cfg:      func(c *failover.RecordConfig) { c.AllUnhealthy = failover.FailClosed },
			rec:      func(r *failover.Record) { allCritical(r); r.FailoverFQDN = "" },
			provider: "withdraw " + name + " * (everyone)\n",
			embedded: "withdraw " + name + " * (everyone)\n",
		},
		{
			name: "none healthy, fallback CNAME",
			cfg: func(c *failover.RecordConfig) {
				c.AllUnhealthy, c.FallbackTarget = failover.Fallback, "Sorry.Example.net"
			},
			rec:      func(r *failover.Record) { allCritical(r); r.FailoverFQDN = "" },
			provider: name + " CNAME 30s sorry.example.net. (everyone)\n",
			embedded: name + " CNAME 30s sorry.example.net. (everyone)\n",
		},
		{
			name: "IPv4 only left: AAAA withdrawn",
			rec:  func(r *failover.Record) { r.Endpoints[1].Health = failover.Critical },
			provider: name + " CNAME 30s " + pool + " (everyone)\n" + pool + " A 30s 192.0.2.1 (everyone)\n" +
				"withdraw " + pool + " AAAA (everyone)\n",
			embedded: name + " A 30s 192.0.2.1 (everyone)\n" + "withdraw " + name + " AAAA (everyone)\n",
		},
		{
			name: "custom pool name",
			rec:  func(r *failover.Record) { r.Pool = "p1.gslb.example.com"; r.Endpoints = r.Endpoints[:1] },
			provider: name + " CNAME 30s p1.gslb.example.com. (everyone)\n" + "p1.gslb.example.com. A 30s 192.0.2.1 (everyone)\n" +
				"withdraw p1.gslb.example.com. AAAA (everyone)\n",
			embedded: name + " A 30s 192.0.2.1 (everyone)\n" + "withdraw " + name + " AAAA (everyone)\n",
		},
		{
			name: "priority strategy: us first, eu only when us is down",
			cfg: func(c *failover.RecordConfig) {
				c.Strategy = failover.Strategy{Kind: failover.Priority, Order: []string{"us", "eu"}}
			},
			rec: func(r *failover.Record) { r.Endpoints[3].Health = failover.Passing },
			provider: name + " CNAME 30s " + pool + " (everyone)\n" + pool + " A 30s 192.0.2.3 (everyone)\n" +
				"withdraw " + pool + " AAAA (everyone)\n",
			embedded: name + " A 30s 192.0.2.3 (everyone)\n" + "withdraw " + name + " AAAA (everyone)\n",
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var mods []func(*failover.RecordConfig)
			if tc.cfg != nil {
				mods = append(mods, tc.cfg)
			}
			p := recPolicy(t, mods...)
			r := baseRecord()
			if tc.rec != nil {
				tc.rec(&r)
			}
			d, err := p.Provider(r)
			require.NoError(t, err)
			assert.Equal(t, tc.provider, d.String(), "provider")
			assertWellFormed(t, d)
			for _, s := range d.Sets {
				if s.Name == name {
					assert.Equal(t, "CNAME", s.Type, "provider output never switches the name's type")
				}
			}
			d, err = p.Embedded(r)
			require.NoError(t, err)
			assert.Equal(t, tc.embedded, d.String(), "embedded")
			assertWellFormed(t, d)
		})
	}
}

func TestRecordForRegions(t *testing.T) {
	r := baseRecord()
	r.Endpoints = append(r.Endpoints, ep("192.0.2.9", failover.Passing))
	eu := r.ForRegions("eu")
	require.Len(t, eu.Endpoints, 2)
	assert.Len(t, r.ForRegions("us", "eu").Endpoints, 4, "untagged endpoints match no filter")
	assert.Empty(t, r.ForRegions().Endpoints)
	assert.Len(t, r.Endpoints, 5, "the original is not modified")
	// us has no healthy address: its view answers the failover FQDN.
	d, err := recPolicy(t).Embedded(r.ForRegions("us"))
	require.NoError(t, err)
	assert.Equal(t, "api.backup.example.net.", d.Sets[0].Target())
}

func TestRecordErrors(t *testing.T) {
	cases := []struct {
		field string
		mod   func(*failover.Record)
	}{
		{"name", func(r *failover.Record) { r.Name = "bad name" }},
		{"zone", func(r *failover.Record) { r.Zone = "" }},
		{"zone", func(r *failover.Record) { r.Zone = "example.org" }},
		{"zone", func(r *failover.Record) { r.Name = "gslb.example.com" }},
		{"ttl", func(r *failover.Record) { r.TTL = 0 }},
		{"ttl", func(r *failover.Record) { r.TTL = 1500 * time.Millisecond }},
		{"pool", func(r *failover.Record) { r.Pool = "pool.example.org" }},
		{"pool", func(r *failover.Record) { r.Pool = "api.gslb.example.com" }},
		{"failoverFQDN", func(r *failover.Record) { r.FailoverFQDN = "API.gslb.example.com." }},
		{"endpoints[1].ip", func(r *failover.Record) { r.Endpoints[1].IP = netip.Addr{} }},
		{"endpoints[1].ip", func(r *failover.Record) { r.Endpoints[1].IP = netip.MustParseAddr("::ffff:192.0.2.1") }},
		{"endpoints[0].health", func(r *failover.Record) { r.Endpoints[0].Health = 99 }},
		{"endpoints[0].weight", func(r *failover.Record) { r.Endpoints[0].Weight = -1 }},
	}
	p := recPolicy(t)
	for _, tc := range cases {
		t.Run(tc.field, func(t *testing.T) {
			r := baseRecord()
			tc.mod(&r)
			for _, f := range []func(failover.Record) (failover.DesiredState, error){p.Provider, p.Embedded} {
				_, err := f(r)
				require.ErrorIs(t, err, failover.ErrInvalidSnapshot)
				var fe *failover.FieldError
				require.True(t, errors.As(err, &fe))
				assert.Equal(t, tc.field, fe.Path)
			}
		})
	}
	pool, err := p.PoolName(baseRecord())
	require.NoError(t, err)
	assert.Equal(t, "api.pool.gslb.example.com.", pool)
}

func TestRecordConfig(t *testing.T) {
	cases := []struct {
		name  string
		field string
		mod   func(*failover.RecordConfig)
	}{
		{"default", "", func(*failover.RecordConfig) {}},
		{"bad pool label", "poolLabel", func(c *failover.RecordConfig) { c.PoolLabel = "a.b" }},
		{"bad strategy", "strategy.kind", func(c *failover.RecordConfig) { c.Strategy.Kind = 7 }},
		{"duplicate order", "strategy.order[1]", func(c *failover.RecordConfig) { c.Strategy.Order = []string{"eu", "eu"} }},
		{"empty order entry", "strategy.order[0]", func(c *failover.RecordConfig) { c.Strategy.Order = []string{""} }},
		{"bad mode", "allUnhealthy", func(c *failover.RecordConfig) { c.AllUnhealthy = 4 }},
		{"fallback without target", "fallbackTarget", func(c *failover.RecordConfig) { c.AllUnhealthy = failover.Fallback }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := failover.DefaultRecordConfig()
			tc.mod(&c)
			err := c.Validate()
			if tc.field == "" {
				require.NoError(t, err)
				return
			}
			var fe *failover.FieldError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, tc.field, fe.Path)
			require.ErrorIs(t, err, failover.ErrInvalidConfig)
			_, err = failover.NewRecordPolicy(c)
			require.ErrorIs(t, err, failover.ErrInvalidConfig)
		})
	}
	assert.Equal(t, failover.FailOpen, failover.Route53RecordConfig().AllUnhealthy)
	assert.Equal(t, failover.FailClosed, failover.RecordServiceConfig().AllUnhealthy)
	require.NoError(t, failover.RecordServiceConfig().Validate())
	require.NoError(t, failover.Route53RecordConfig().Validate())

	var c failover.RecordConfig
	require.NoError(t, json.Unmarshal([]byte(`{"poolLabel":"p","strategy":{"kind":"priority","order":["eu","us"]},"allUnhealthy":"failClosed"}`), &c))
	require.NoError(t, c.Validate())
	assert.Equal(t, failover.Priority, c.Strategy.Kind)
	out, err := json.Marshal(c)
	require.NoError(t, err)
	assert.JSONEq(t, `{"poolLabel":"p","strategy":{"kind":"priority","order":["eu","us"]},"allUnhealthy":"failClosed"}`, string(out))
	require.Error(t, json.Unmarshal([]byte(`{"strategy":{"kind":"random"}}`), &c))
}
