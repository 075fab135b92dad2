package memory_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gslbkit/gslb/provider/memory"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestConfigValidate(t *testing.T) {
	server := func(f func(*memory.ServerConfig)) error {
		c := memory.DefaultServerConfig()
		f(&c)
		return c.Validate()
	}
	replica := func(f func(*memory.ReplicaConfig)) error {
		c := memory.DefaultReplicaConfig()
		c.URL, c.Zones, c.Auth.Secret = "http://primary:8053/replication", []string{"example.test."}, secret
		f(&c)
		return c.Validate()
	}
	zone := func(f func(*memory.ZoneConfig)) error {
		c := memory.DefaultZoneConfig()
		f(&c)
		return c.Validate()
	}
	tests := []struct {
		name    string
		err     error
		wantMsg string // a fragment naming the field; "" means valid
	}{
		{"default config", memory.DefaultConfig().Validate(), ""},
		{"journal too big", memory.Config{JournalSize: 1 << 21}.Validate(), "journalSize"},
		{"default server", server(func(*memory.ServerConfig) {}), ""},
		{"server addr", server(func(c *memory.ServerConfig) { c.Addr = "localhost:53" }), "addr"},
		{"server idle", server(func(c *memory.ServerConfig) { c.TCPIdleTimeout = time.Millisecond }), "tcpIdleTimeout"},
		{"server shutdown", server(func(c *memory.ServerConfig) { c.ShutdownTimeout = time.Hour }), "shutdownTimeout"},
		{"server coalesce", server(func(c *memory.ServerConfig) { c.UDPCoalesce = 2 * time.Millisecond }), "udpCoalesce"},
		{"server coalesce negative", server(func(c *memory.ServerConfig) { c.UDPCoalesce = -time.Microsecond }), "udpCoalesce"},
		{"server coalesce rate", server(func(c *memory.ServerConfig) { c.UDPCoalesceRate = 10 }), "udpCoalesceRate"},
		{"server coalesce off, rate unset", server(func(c *memory.ServerConfig) { c.UDPCoalesce, c.UDPCoalesceRate = 0, 0 }), ""},
		{"zero server config", memory.ServerConfig{}.Validate(), ""},
		{"server maxTCPConns", server(func(c *memory.ServerConfig) { c.MaxTCPConns = -1 }), "maxTCPConns"},
		{"server maxTCPConnsPerSource", server(func(c *memory.ServerConfig) { c.MaxTCPConnsPerSource = -2 }), "maxTCPConnsPerSource"},
		{"server rrl slip", server(func(c *memory.ServerConfig) { c.RRL.Rate, c.RRL.Slip = 20, 500 }), "slip"},
		{"valid replica", replica(func(*memory.ReplicaConfig) {}), ""},
		{"replica url", replica(func(c *memory.ReplicaConfig) { c.URL = "ftp://x" }), "url"},
		{"replica interval", replica(func(c *memory.ReplicaConfig) { c.Interval = time.Millisecond }), "interval"},
		{"replica timeout", replica(func(c *memory.ReplicaConfig) { c.Timeout = -time.Second }), "timeout"},
		{"replica zero timeout takes the default", replica(func(c *memory.ReplicaConfig) { c.Timeout = 0 }), ""},
		{"replica degradedAfter", replica(func(c *memory.ReplicaConfig) { c.DegradedAfter = 101 }), "degradedAfter"},
		{"replica secret", replica(func(c *memory.ReplicaConfig) { c.Auth.Secret = "short" }), "auth.secret"},
		{"replica secret with a space", replica(func(c *memory.ReplicaConfig) { c.Auth.Secret = secret + " " }), "auth.secret"},
		{"replica no zones", replica(func(c *memory.ReplicaConfig) { c.Zones = nil }), "zones"},
		{"replica root zone", replica(func(c *memory.ReplicaConfig) { c.Zones = []string{"."} }), "zones[0]"},
		{"replica zone twice", replica(func(c *memory.ReplicaConfig) { c.Zones = []string{"a.test", "A.test."} }), "zones[1]"},
		{"replica maxBody", replica(func(c *memory.ReplicaConfig) { c.MaxBody = 10 }), "maxBody"},
		{"zero config", memory.Config{}.Validate(), ""},
		{"negative journal", memory.Config{JournalSize: -1}.Validate(), "journalSize"},
		{"zero zone config", memory.ZoneConfig{}.Validate(), ""},
		{"default zone", zone(func(*memory.ZoneConfig) {}), ""},
		{"zone ns", zone(func(c *memory.ZoneConfig) { c.NS = []string{"bad..name"} }), "ns[0]"},
		{"zone mbox", zone(func(c *memory.ZoneConfig) { c.Mbox = "a..b" }), "mbox"},
		{"zone ttl", zone(func(c *memory.ZoneConfig) { c.TTL = -time.Second }), "ttl"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.wantMsg == "" {
				assert.NoError(t, tc.err)
				return
			}
			if assert.Error(t, tc.err) {
				assert.Contains(t, tc.err.Error(), tc.wantMsg)
				var fe *memory.FieldError
				if assert.ErrorAs(t, tc.err, &fe) {
					assert.True(t, strings.HasSuffix(fe.Field, tc.wantMsg), "field %q", fe.Field)
					assert.NotEmpty(t, fe.Allowed)
				}
				assert.True(t, errors.Is(tc.err, memory.ErrInvalidConfig) || errors.Is(tc.err, memory.ErrInvalidZone), "wraps the sentinel")
			}
		})
	}
}

func TestZeroConfigs(t *testing.T) {
	p, err := memory.New(memory.Config{})
	require.NoError(t, err, "a zero Config takes the defaults")
	require.NoError(t, p.AddZoneWith("example.test.", memory.ZoneConfig{}), "a zero ZoneConfig takes the defaults")
	soa, err := p.SOA("example.test.")
	require.NoError(t, err)
	assert.Equal(t, uint32(1), soa.Serial)
	assert.Equal(t, "ns1.example.test.", soa.NS)
	assert.Equal(t, uint32(600), soa.Expire)

	var rc memory.ReplicaConfig
	require.NoError(t, json.Unmarshal([]byte(`{"url":"http://c/r","zones":["example.test."],"interval":"250ms","timeout":2,"auth":{"secret":"0123456789abcdef"}}`), &rc))
	assert.Equal(t, 250*time.Millisecond, rc.Interval)
	assert.Equal(t, 2*time.Second, rc.Timeout)
	require.NoError(t, rc.Validate(), "zero degradedAfter, maxBody and header take their defaults")
	b, err := json.Marshal(rc)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"interval":"250ms"`)
	assert.Error(t, json.Unmarshal([]byte(`{"intervall":"1s"}`), &rc), "unknown fields are errors")

	var zc memory.ZoneConfig
	require.NoError(t, json.Unmarshal([]byte(`{"ttl":"90s","minimum":"5s"}`), &zc))
	assert.Equal(t, 90*time.Second, zc.TTL)
	b, err = json.Marshal(memory.DefaultZoneConfig())
	require.NoError(t, err)
	assert.Contains(t, string(b), `"expire":"10m0s"`)
}
