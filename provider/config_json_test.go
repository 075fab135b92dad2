package provider_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gslbkit/gslb/heartbeat"
	"github.com/gslbkit/gslb/provider"
	"github.com/gslbkit/gslb/provider/cloudflare"
	"github.com/gslbkit/gslb/provider/providertest"
	"github.com/gslbkit/gslb/provider/rfc2136"
	"github.com/gslbkit/gslb/provider/route53"
)

// TestConfigDurationsJSON checks that every config type with time.Duration
// fields reads and writes them as duration strings and rejects a key in the
// wrong case, naming the right one.
func TestConfigDurationsJSON(t *testing.T) {
	for _, tc := range []jsonCase{
		mk("provider.RetryConfig", provider.DefaultRetryConfig(), "baseDelay", func(c *provider.RetryConfig) time.Duration { return c.BaseDelay }),
		mk("route53.Config", route53.DefaultConfig(), "maxWait", func(c *route53.Config) time.Duration { return c.MaxWait }),
		mk("cloudflare.Config", cloudflare.DefaultConfig(), "timeout", func(c *cloudflare.Config) time.Duration { return c.Timeout }),
		mk("rfc2136.Config", rfc2136.DefaultConfig(), "timeout", func(c *rfc2136.Config) time.Duration { return c.Timeout }),
		mk("providertest.FaultConfig", providertest.FaultConfig{}, "latency", func(c *providertest.FaultConfig) time.Duration { return c.Latency }),
		mk("heartbeat.Rules", heartbeat.DefaultRules(), "skewTolerance", func(c *heartbeat.Rules) time.Duration { return c.SkewTolerance }),
		mk("heartbeat.Config", heartbeat.DefaultConfig(), "ttl", func(c *heartbeat.Config) time.Duration { return c.TTL }),
		mk("heartbeat.ReaderConfig", heartbeat.DefaultReaderConfig(heartbeat.Global, "example.com."), "forgetAfter", func(c *heartbeat.ReaderConfig) time.Duration { return c.ForgetAfter }),
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := json.Unmarshal([]byte(`{"`+tc.key+`":"1m30s"}`), tc.v); err != nil {
				t.Fatal(err)
			}
			if got := tc.get(); got != 90*time.Second {
				t.Fatalf("%s = %v after reading \"1m30s\"", tc.key, got)
			}
			b, err := json.Marshal(tc.v)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(b), `"`+tc.key+`":"1m30s"`) {
				t.Fatalf("written as %s", b)
			}
			wrong := strings.ToUpper(tc.key[:1]) + tc.key[1:]
			err = json.Unmarshal([]byte(`{"`+wrong+`":"1s"}`), tc.v)
			if err == nil || !strings.Contains(err.Error(), `"`+tc.key+`"`) {
				t.Fatalf("key %q: got %v, want an error naming %q", wrong, err, tc.key)
			}
		})
	}
}

type jsonCase struct {
	name string
	v    any // pointer to a config
	key  string
	get  func() time.Duration
}

func mk[T any](name string, c T, key string, get func(*T) time.Duration) jsonCase {
	p := &c
	return jsonCase{name, p, key, func() time.Duration { return get(p) }}
}
