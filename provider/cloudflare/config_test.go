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
		{"no token", func(c *cloudflare.Config) { c.APIToken = "" }, "apiToken is empty"},
		{"token with space", func(c *cloudflare.Config) { c.APIToken = "abc def" }, "white space"},
		{"bad zone id", func(c *cloudflare.Config) { c.ZoneID = "zone-1" }, "zoneID \"zone-1\""},
		{"timeout", func(c *cloudflare.Config) { c.Timeout = time.Hour }, "timeout 1h0m0s: must be in [1s, 5m]"},
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
			require.ErrorContains(t, err, c.wantErr)
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
