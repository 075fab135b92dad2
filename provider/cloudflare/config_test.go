package cloudflare_test

import (
	"encoding/json"
	"net/url"
	"testing"
	"time"

	"github.com/gslbkit/gslb/provider/cloudflare"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func mustURL(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		panic(err)
	}
	return u
}

func TestValidate(t *testing.T) {
	cases := []struct {
		name    string
		mutate  func(*cloudflare.Config)
		wantErr string
	}{
		{"good", func(*cloudflare.Config) {}, ""},
		{"zone id", func(c *cloudflare.Config) { c.ZoneID = "0123456789abcdef0123456789abcdef" }, ""},
		{"zero timeout takes the default", func(c *cloudflare.Config) { c.Timeout = 0 }, ""},
		{"no token", func(c *cloudflare.Config) { c.APIToken = "" }, `cloudflare: invalid config: apiToken = "": allowed a scoped API token with Zone.DNS:Edit (or set CLOUDFLARE_API_TOKEN)`},
		{"token with space", func(c *cloudflare.Config) { c.APIToken = "abc def" }, "cloudflare: invalid config: apiToken = (set): allowed the bare token, without white space"},
		{"bad zone id", func(c *cloudflare.Config) { c.ZoneID = "zone-1" }, `cloudflare: invalid config: zoneID = "zone-1": allowed the zone's 32 hexadecimal digits`},
		{"timeout", func(c *cloudflare.Config) { c.Timeout = time.Hour }, "cloudflare: invalid config: timeout = 1h: allowed [1s, 5m], or 0 for the default (30s)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := cloudflare.DefaultConfig()
			cfg.APIToken = "s3cr3t-token"
			c.mutate(&cfg)
			err := cfg.Validate()
			if c.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.EqualError(t, err, c.wantErr)
			require.ErrorIs(t, err, cloudflare.ErrInvalidConfig)
			assert.NotContains(t, err.Error(), "s3cr3t")
			_, err = cloudflare.New(cfg)
			require.Error(t, err)
		})
	}
}

func TestFromEnv(t *testing.T) {
	t.Setenv(cloudflare.EnvAPIToken, "from-env")
	t.Setenv(cloudflare.EnvZoneID, "abc")
	got := cloudflare.DefaultConfig().FromEnv(nil)
	assert.Equal(t, "from-env", got.APIToken)
	assert.Equal(t, "abc", got.ZoneID)
	own := cloudflare.Config{APIToken: "mine"}.FromEnv(nil)
	assert.Equal(t, "mine", own.APIToken)
	assert.Equal(t, "from-env", cloudflare.Config{}.FromEnv(nil).Libdns().APIToken)
}

// FuzzConfig: any JSON decodes or fails cleanly, and Validate never panics.
func FuzzConfig(f *testing.F) {
	f.Add([]byte(`{"apiToken":"t","zoneID":"0123456789abcdef0123456789abcdef","timeout":"10s"}`))
	f.Add([]byte(`{"apiToken":"a b"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var c cloudflare.Config
		if json.Unmarshal(b, &c) != nil {
			return
		}
		if err := c.Validate(); err == nil {
			if _, err := cloudflare.New(c); err != nil {
				t.Fatalf("Validate passed but New failed: %v", err)
			}
		}
	})
}

// TestZeroValues: a Config with only a token takes the defaults; a zero
// Provider returns ErrNotConfigured, never panics.
func TestZeroValues(t *testing.T) {
	p, err := cloudflare.New(cloudflare.Config{APIToken: "t"})
	require.NoError(t, err)
	assert.Equal(t, cloudflare.DefaultConfig().Timeout, p.Config().Timeout)
	var z cloudflare.Provider
	ctx := t.Context()
	_, err = z.GetRecords(ctx, "example.com.")
	assert.ErrorIs(t, err, cloudflare.ErrNotConfigured)
	_, err = z.ListZones(ctx)
	assert.ErrorIs(t, err, cloudflare.ErrNotConfigured)
	_, err = z.SetRecords(ctx, "example.com.", nil)
	assert.ErrorIs(t, err, cloudflare.ErrNotConfigured)
	_, err = z.AppendRecords(ctx, "example.com.", nil)
	assert.ErrorIs(t, err, cloudflare.ErrNotConfigured)
	_, err = z.DeleteRecords(ctx, "example.com.", nil)
	assert.ErrorIs(t, err, cloudflare.ErrNotConfigured)
}
