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
					assert.True(t, strings.HasSuffix(fe.Path, tc.wantMsg), "field %q", fe.Path)
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

	var zc memory.ZoneConfig
	require.NoError(t, json.Unmarshal([]byte(`{"ttl":"90s","minimum":"5s"}`), &zc))
	assert.Equal(t, 90*time.Second, zc.TTL)
	b, err := json.Marshal(memory.DefaultZoneConfig())
	require.NoError(t, err)
	assert.Contains(t, string(b), `"expire":"10m0s"`)
}

// TestFieldErrorMessages pins the message of a few fields: one shape across
// the module (internal/fielderr).
func TestFieldErrorMessages(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{memory.Config{JournalSize: -1}.Validate(), "memory: invalid config: journalSize = -1: allowed [1, 1048576], or 0 for the default 4096"},
		{memory.Config{MaxUDPSize: 100}.Validate(), "memory: invalid config: maxUDPSize = 100: allowed [512, 4096], or 0 for the default 1232"},
		{memory.ZoneConfig{TTL: -time.Second}.Validate(), "memory: invalid zone: ttl = -1s: allowed [0s, 596523h14m7s] in whole seconds"},
		{memory.ZoneConfig{NS: []string{"a", "bad..name"}}.Validate(), `memory: invalid zone: ns[1] = "bad..name": allowed a domain name, relative to the zone unless it ends with a dot`},
	} {
		if assert.Error(t, tc.err) {
			assert.Equal(t, tc.want, tc.err.Error())
		}
	}
}
