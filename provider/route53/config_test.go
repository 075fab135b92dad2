package route53_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/gslbkit/gslb/provider/route53"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestValidate(t *testing.T) {
	cases := []struct {
		name    string
		mutate  func(*route53.Config)
		wantErr string
	}{
		{"default", func(*route53.Config) {}, ""},
		{"static keys", func(c *route53.Config) { c.AccessKeyID, c.SecretAccessKey = "AKID", "s3cr3t" }, ""},
		{"zero attempts take the default", func(c *route53.Config) { c.MaxAttempts = 0 }, ""},
		{"key without secret", func(c *route53.Config) { c.AccessKeyID = "AKID" }, `route53: invalid config: secretAccessKey = "": allowed set together with accessKeyID (or both empty for the SDK's credential chain)`},
		{"token alone", func(c *route53.Config) { c.SessionToken = "tok" }, "route53: invalid config: sessionToken = (set): allowed set only with accessKeyID and secretAccessKey"},
		{"zone id with prefix", func(c *route53.Config) { c.HostedZoneID = "/hostedzone/Z1" }, `route53: invalid config: hostedZoneID = "/hostedzone/Z1": allowed the ID alone, without the "/hostedzone/" prefix`},
		{"zone id odd", func(c *route53.Config) { c.HostedZoneID = "Z1-2" }, `route53: invalid config: hostedZoneID = "Z1-2": allowed letters and digits only (e.g. "Z0123456789ABC")`},
		{"attempts", func(c *route53.Config) { c.MaxAttempts = 11 }, "route53: invalid config: maxAttempts = 11: allowed [1, 10], or 0 for the default (1)"},
		{"wait too long", func(c *route53.Config) { c.MaxWait = time.Hour }, "route53: invalid config: maxWait = 1h: allowed [1s, 10m], or 0 for the default (1m)"},
		{"region", func(c *route53.Config) { c.Region = "us east" }, `route53: invalid config: region = "us east": allowed an AWS region name such as "us-east-1"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := route53.DefaultConfig()
			c.mutate(&cfg)
			err := cfg.Validate()
			if c.wantErr == "" {
				require.NoError(t, err)
				return
			}
			require.EqualError(t, err, c.wantErr)
			require.ErrorIs(t, err, route53.ErrInvalidConfig)
			var fe *route53.FieldError
			require.ErrorAs(t, err, &fe)
			assert.NotContains(t, err.Error(), "s3cr3t")
			_, err = route53.New(cfg)
			require.Error(t, err)
		})
	}
}

func TestFromEnv(t *testing.T) {
	env := map[string]string{
		"AWS_DEFAULT_REGION": "eu-west-1", "AWS_ACCESS_KEY_ID": "AKID", "AWS_SECRET_ACCESS_KEY": "s",
		"GSLB_ROUTE53_HOSTED_ZONE_ID": "Z9",
	}
	got := route53.DefaultConfig().FromEnv(func(k string) string { return env[k] })
	assert.Equal(t, "eu-west-1", got.Region)
	assert.Equal(t, "AKID", got.AccessKeyID)
	assert.Equal(t, "Z9", got.HostedZoneID)
	require.NoError(t, got.Validate())

	// Explicit static keys are not mixed with the environment's.
	own := route53.Config{AccessKeyID: "MINE", SecretAccessKey: "x"}.FromEnv(func(k string) string { return env[k] })
	assert.Equal(t, "MINE", own.AccessKeyID)
	assert.Equal(t, "x", own.SecretAccessKey)
}

func TestConfigJSON(t *testing.T) {
	var c route53.Config
	require.NoError(t, json.Unmarshal([]byte(`{"hostedZoneID":"Z1","maxAttempts":2,"maxWait":"30s","waitForSync":true}`), &c))
	assert.Equal(t, 30*time.Second, c.MaxWait)
	require.NoError(t, c.Validate())
}

// FuzzConfig: any JSON decodes or fails cleanly, and Validate never panics.
func FuzzConfig(f *testing.F) {
	f.Add([]byte(`{"hostedZoneID":"Z1","maxAttempts":2,"maxWait":"30s"}`))
	f.Add([]byte(`{"accessKeyID":"a","secretAccessKey":"b","region":"eu-west-1"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var c route53.Config
		if json.Unmarshal(b, &c) != nil {
			return
		}
		if err := c.Validate(); err == nil {
			if _, err := route53.New(c); err != nil {
				t.Fatalf("Validate passed but New failed: %v", err)
			}
		}
	})
}

// TestZeroValues: a zero Config is valid and New accepts it (defaults
// filled); a zero Provider returns ErrNotConfigured, never panics.
func TestZeroValues(t *testing.T) {
	p, err := route53.New(route53.Config{})
	require.NoError(t, err)
	assert.Equal(t, route53.DefaultConfig(), p.Config())
	var z route53.Provider
	ctx := t.Context()
	_, err = z.GetRecords(ctx, "example.com.")
	assert.ErrorIs(t, err, route53.ErrNotConfigured)
	_, err = z.SetRecords(ctx, "example.com.", nil)
	assert.ErrorIs(t, err, route53.ErrNotConfigured)
	_, err = z.AppendRecords(ctx, "example.com.", nil)
	assert.ErrorIs(t, err, route53.ErrNotConfigured)
	_, err = z.DeleteRecords(ctx, "example.com.", nil)
	assert.ErrorIs(t, err, route53.ErrNotConfigured)
}
