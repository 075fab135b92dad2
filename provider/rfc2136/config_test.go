package rfc2136_test

import (
	"encoding/json"
	"github.com/libdns/libdns"
	"net/netip"
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
		{"zero fields take the defaults", func(c *rfc2136.Config) { c.KeyAlg, c.Timeout = "", 0 }, ""},
		{"no server", func(c *rfc2136.Config) { c.Server = "" }, `rfc2136: invalid config: server = "": allowed "host:port" (or set GSLB_RFC2136_SERVER)`},
		{"bad port", func(c *rfc2136.Config) { c.Server = "127.0.0.1:99999" }, `rfc2136: invalid config: server = "127.0.0.1:99999": allowed "host:port" with a port in [1, 65535]`},
		{"key without secret", func(c *rfc2136.Config) { c.Secret = "" }, `rfc2136: invalid config: secret = "": allowed set together with keyName (or both empty for unsigned updates)`},
		{"secret not base64", func(c *rfc2136.Config) { c.Secret = "not base64!" }, "rfc2136: invalid config: secret = (11 characters): allowed base64, as tsig-keygen prints it"},
		{"bad key name", func(c *rfc2136.Config) { c.KeyName = "bad key" }, `rfc2136: invalid config: keyName = "bad key": allowed a DNS name: dot-separated labels of [1, 63] letters, digits, hyphens or underscores (no hyphen first or last), at most 253 bytes`},
		{"bad algorithm", func(c *rfc2136.Config) { c.KeyAlg = "md5" }, `rfc2136: invalid config: keyAlg = "md5": allowed one of "hmac-sha1", "hmac-sha224", "hmac-sha256", "hmac-sha384", "hmac-sha512"`},
		{"timeout too short", func(c *rfc2136.Config) { c.Timeout = time.Millisecond }, "rfc2136: invalid config: timeout = 1ms: allowed [100ms, 5m], or 0 for the default (10s)"},
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
			require.EqualError(t, err, c.wantErr)
			require.ErrorIs(t, err, rfc2136.ErrInvalidConfig)
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

// TestZeroValues: a zero Provider returns ErrNotConfigured, never panics.
func TestZeroValues(t *testing.T) {
	var z rfc2136.Provider
	ctx := t.Context()
	_, err := z.GetRecords(ctx, "example.com.")
	assert.ErrorIs(t, err, rfc2136.ErrNotConfigured)
	_, err = z.SetRecords(ctx, "example.com.", []libdns.Record{libdns.Address{Name: "a", IP: netip.MustParseAddr("192.0.2.1")}})
	assert.ErrorIs(t, err, rfc2136.ErrNotConfigured)
	_, err = z.AppendRecords(ctx, "example.com.", []libdns.Record{libdns.Address{Name: "a", IP: netip.MustParseAddr("192.0.2.1")}})
	assert.ErrorIs(t, err, rfc2136.ErrNotConfigured)
	_, err = z.DeleteRecords(ctx, "example.com.", []libdns.Record{libdns.Address{Name: "a", IP: netip.MustParseAddr("192.0.2.1")}})
	assert.ErrorIs(t, err, rfc2136.ErrNotConfigured)
}
