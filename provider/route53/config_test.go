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
		{"key without secret", func(c *route53.Config) { c.AccessKeyID = "AKID" }, "set together"},
		{"token alone", func(c *route53.Config) { c.SessionToken = "tok" }, "sessionToken"},
		{"zone id with prefix", func(c *route53.Config) { c.HostedZoneID = "/hostedzone/Z1" }, "without the \"/hostedzone/\" prefix"},
		{"zone id odd", func(c *route53.Config) { c.HostedZoneID = "Z1-2" }, "letters and digits"},
		{"attempts zero", func(c *route53.Config) { c.MaxAttempts = 0 }, "maxAttempts 0: must be in [1, 10]"},
		{"wait too long", func(c *route53.Config) { c.MaxWait = time.Hour }, "maxWait 1h0m0s: must be in [1s, 10m]"},
		{"region", func(c *route53.Config) { c.Region = "us east" }, "region"},
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
			require.ErrorContains(t, err, c.wantErr)
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
