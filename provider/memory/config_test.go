package memory_test

import (
	"testing"
	"time"

	"github.com/gslbkit/gslb/provider/memory"
	"github.com/stretchr/testify/assert"
)

func TestConfigValidate(t *testing.T) {
	d := func(x time.Duration) memory.Duration { return memory.Duration(x) }
	server := func(f func(*memory.ServerConfig)) error {
		c := memory.DefaultServerConfig()
		f(&c)
		return c.Validate()
	}
	replica := func(f func(*memory.ReplicaConfig)) error {
		c := memory.DefaultReplicaConfig()
		c.URL, c.Auth.Secret = "http://primary:8053/replication", secret
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
		{"replica interval", replica(func(c *memory.ReplicaConfig) { c.Interval = d(time.Millisecond) }), "interval"},
		{"replica timeout", replica(func(c *memory.ReplicaConfig) { c.Timeout = 0 }), "timeout"},
		{"replica degradedAfter", replica(func(c *memory.ReplicaConfig) { c.DegradedAfter = 0 }), "degradedAfter"},
		{"replica secret", replica(func(c *memory.ReplicaConfig) { c.Auth.Secret = "short" }), "secret"},
		{"default zone", zone(func(*memory.ZoneConfig) {}), ""},
		{"zone ns", zone(func(c *memory.ZoneConfig) { c.NS = nil }), "ns"},
		{"zone mbox", zone(func(c *memory.ZoneConfig) { c.Mbox = "" }), "mbox"},
		{"zone ttl", zone(func(c *memory.ZoneConfig) { c.TTL = d(-time.Second) }), "ttl"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.wantMsg == "" {
				assert.NoError(t, tc.err)
				return
			}
			if assert.Error(t, tc.err) {
				assert.Contains(t, tc.err.Error(), tc.wantMsg)
			}
		})
	}
}
