package rfc2136_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/gslbkit/gslb/provider/rfc2136"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestValidate(t *testing.T) {
	good := rfc2136.DefaultConfig()
	good.Server, good.KeyName, good.Secret = "127.0.0.1:5353", "gslb-key", "c2VjcmV0"
	cases := []struct {
		name    string
		mutate  func(*rfc2136.Config)
		wantErr string
	}{
		{"good", func(*rfc2136.Config) {}, ""},
		{"no port means 53", func(c *rfc2136.Config) { c.Server = "ns1.example.com" }, ""},
		{"ipv6", func(c *rfc2136.Config) { c.Server = "[::1]:53" }, ""},
		{"unsigned", func(c *rfc2136.Config) { c.KeyName, c.Secret = "", "" }, ""},
		{"no server", func(c *rfc2136.Config) { c.Server = "" }, "server is empty"},
		{"bad port", func(c *rfc2136.Config) { c.Server = "127.0.0.1:99999" }, "port must be in [1, 65535]"},
		{"key without secret", func(c *rfc2136.Config) { c.Secret = "" }, "set together"},
		{"secret not base64", func(c *rfc2136.Config) { c.Secret = "not base64!" }, "not valid base64"},
		{"bad key name", func(c *rfc2136.Config) { c.KeyName = "bad key" }, "keyName"},
		{"bad algorithm", func(c *rfc2136.Config) { c.KeyAlg = "md5" }, "keyAlg \"md5\": must be one of"},
		{"timeout too short", func(c *rfc2136.Config) { c.Timeout = time.Millisecond }, "timeout 1ms: must be in [100ms, 5m]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := good
			c.mutate(&cfg)
			err := cfg.Validate()
			if c.wantErr == "" {
				require.NoError(t, err)
				_, err = rfc2136.New(cfg)
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, c.wantErr)
			assert.NotContains(t, err.Error(), "c2VjcmV0", "the secret leaks into the error")
			_, err = rfc2136.New(cfg)
			require.Error(t, err)
		})
	}
}

func TestFromEnv(t *testing.T) {
	env := map[string]string{
		rfc2136.EnvServer: "10.0.0.1:53", rfc2136.EnvKeyName: "k", rfc2136.EnvKeyAlg: "hmac-sha512", rfc2136.EnvSecret: "c2VjcmV0",
	}
	base := rfc2136.Config{KeyName: "explicit"}
	got := base.FromEnv(func(k string) string { return env[k] })
	assert.Equal(t, "10.0.0.1:53", got.Server)
	assert.Equal(t, "explicit", got.KeyName, "a field already set wins")
	assert.Equal(t, "hmac-sha512", got.KeyAlg)
	assert.Equal(t, "c2VjcmV0", got.Secret)
	assert.Equal(t, "explicit", base.KeyName)
	assert.Empty(t, base.Server, "FromEnv must not change its receiver")

	t.Setenv(rfc2136.EnvServer, "192.0.2.53")
	assert.Equal(t, "192.0.2.53", rfc2136.Config{}.FromEnv(nil).Server)
}

func TestConfigJSON(t *testing.T) {
	var c rfc2136.Config
	require.NoError(t, json.Unmarshal([]byte(`{"server":"127.0.0.1:53","keyName":"k","keyAlg":"hmac-sha256","secret":"c2VjcmV0","timeout":"3s"}`), &c))
	assert.Equal(t, 3*time.Second, c.Timeout)
	require.NoError(t, c.Validate())
	lp := c.Libdns()
	assert.Equal(t, "127.0.0.1:53", lp.Server)
	assert.Equal(t, "c2VjcmV0", lp.Key)
}

// FuzzConfig: any JSON decodes or fails cleanly, and Validate never
// panics nor lets a bad server address through to New.
func FuzzConfig(f *testing.F) {
	f.Add([]byte(`{"server":"127.0.0.1:53","keyName":"k","keyAlg":"hmac-sha256","secret":"c2VjcmV0","timeout":"3s"}`))
	f.Add([]byte(`{"server":"[::1]","timeout":1}`))
	f.Add([]byte(`{"server":"a:b:c"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var c rfc2136.Config
		if json.Unmarshal(b, &c) != nil {
			return
		}
		if err := c.Validate(); err == nil {
			if _, err := rfc2136.New(c); err != nil {
				t.Fatalf("Validate passed but New failed: %v", err)
			}
		}
	})
}
