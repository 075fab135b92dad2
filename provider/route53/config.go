package route53

import (
	"errors"
	"strings"
	"time"

	"github.com/gslbkit/gslb/internal/envfill"
	"github.com/gslbkit/gslb/internal/fielderr"
	"github.com/gslbkit/gslb/internal/jsontime"
	libroute53 "github.com/libdns/route53"
)

// The environment variables FromEnv reads: the AWS SDK's usual ones, plus
// GSLB_ROUTE53_HOSTED_ZONE_ID.
const (
	EnvRegion          = "AWS_REGION"
	EnvDefaultRegion   = "AWS_DEFAULT_REGION"
	EnvProfile         = "AWS_PROFILE"
	EnvAccessKeyID     = "AWS_ACCESS_KEY_ID"
	EnvSecretAccessKey = "AWS_SECRET_ACCESS_KEY"
	EnvSessionToken    = "AWS_SESSION_TOKEN"
	EnvHostedZoneID    = "GSLB_ROUTE53_HOSTED_ZONE_ID"
)

// Config selects the AWS account, credentials and hosted zone. Empty
// credential fields leave the AWS SDK's default chain in charge (the
// AWS_* environment variables, the shared config and credentials files,
// SSO, web identity, the instance role), which also honours
// AWS_ENDPOINT_URL_ROUTE_53 for a local or private endpoint.
type Config struct {
	// Region is the AWS region used to sign requests (Route 53 is global;
	// any region works). Empty: the SDK's chain (AWS_REGION, the profile).
	Region string `json:"region"`
	// Profile is the shared-config profile to load. Empty: AWS_PROFILE or
	// "default".
	Profile string `json:"profile"`
	// AccessKeyID and SecretAccessKey are static credentials; set both or
	// neither. SessionToken goes with temporary ones.
	AccessKeyID     string `json:"accessKeyID"`
	SecretAccessKey string `json:"secretAccessKey"`
	SessionToken    string `json:"sessionToken"`
	// HostedZoneID is the hosted zone's ID ("Z0123456789ABC", without the
	// "/hostedzone/" prefix). Empty: looked up by zone name on each call,
	// which costs a ListHostedZonesByName request.
	HostedZoneID string `json:"hostedZoneID"`
	// MaxAttempts is how many times the AWS SDK itself tries a request,
	// in [1, 10]. Default (0) 1: the SDK sleeps in real time between its
	// tries, so gslbkit leaves retrying to provider.Retry, which honours
	// contexts and virtual time. (libdns/route53 turns 0 into 5.)
	MaxAttempts int `json:"maxAttempts"`
	// WaitForSync makes each change wait until Route 53 reports it INSYNC
	// on its own servers (not DNS propagation), up to MaxWait.
	WaitForSync bool `json:"waitForSync"`
	// MaxWait bounds the wait for INSYNC, in [1s, 10m]. Default (0) 1m.
	MaxWait time.Duration `json:"maxWait"`
}

// DefaultConfig returns one SDK attempt and a 1 minute INSYNC bound
// (unused unless WaitForSync); credentials come from the SDK's chain.
func DefaultConfig() Config {
	return Config{MaxAttempts: 1, MaxWait: time.Minute}
}

// FromEnv returns a copy of c with empty fields filled from AWS_REGION
// (else AWS_DEFAULT_REGION), AWS_PROFILE, AWS_ACCESS_KEY_ID,
// AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN and GSLB_ROUTE53_HOSTED_ZONE_ID.
// getenv nil means os.Getenv. Fields already set win. (The SDK reads the
// AWS_* variables by itself too; FromEnv makes them visible to Validate.)
func (c Config) FromEnv(getenv func(string) string) Config {
	fill := envfill.From(getenv)
	fill(&c.Region, EnvRegion, EnvDefaultRegion)
	fill(&c.Profile, EnvProfile)
	if c.AccessKeyID == "" && c.SecretAccessKey == "" {
		fill(&c.AccessKeyID, EnvAccessKeyID)
		fill(&c.SecretAccessKey, EnvSecretAccessKey)
		fill(&c.SessionToken, EnvSessionToken)
	}
	fill(&c.HostedZoneID, EnvHostedZoneID)
	return c
}

// ErrInvalidConfig is wrapped by every Config validation error (a
// *FieldError).
var ErrInvalidConfig = errors.New("route53: invalid config")

// FieldError is the module's one invalid-configuration error: the field's
// path, its value as written (secrets never) and what is allowed. Its
// message reads
//
//	route53: invalid config: maxWait = 1h: allowed [1s, 10m], or 0 for the default (1m)
type FieldError = fielderr.Error

// withDefaults fills the zero fields that take a default.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.MaxAttempts == 0 {
		c.MaxAttempts = d.MaxAttempts
	}
	if c.MaxWait == 0 {
		c.MaxWait = d.MaxWait
	}
	return c
}

// Validate reports the first field that is inconsistent or out of range,
// as a *FieldError wrapping ErrInvalidConfig; zero fields take their
// defaults first. Secrets never appear in its errors.
func (c Config) Validate() error {
	c, d := c.withDefaults(), DefaultConfig()
	bad := func(f string, v any, allowed string) error { return fielderr.New(ErrInvalidConfig, f, v, allowed) }
	if err := fielderr.Together(ErrInvalidConfig, "accessKeyID", c.AccessKeyID != "", "secretAccessKey", c.SecretAccessKey != "", "for the SDK's credential chain"); err != nil {
		return err
	}
	if c.SessionToken != "" && c.AccessKeyID == "" {
		return fielderr.Hidden(ErrInvalidConfig, "sessionToken", "set only with accessKeyID and secretAccessKey")
	}
	if strings.HasPrefix(c.HostedZoneID, "/") || strings.Contains(c.HostedZoneID, "hostedzone") {
		return bad("hostedZoneID", c.HostedZoneID, `the ID alone, without the "/hostedzone/" prefix`)
	}
	notAlnum := func(r rune) bool { return !(r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z') }
	if strings.ContainsFunc(c.HostedZoneID, notAlnum) {
		return bad("hostedZoneID", c.HostedZoneID, `letters and digits only (e.g. "Z0123456789ABC")`)
	}
	if c.MaxAttempts < 1 || c.MaxAttempts > 10 {
		return bad("maxAttempts", c.MaxAttempts, fielderr.OrDefault(fielderr.Range(1, 10), d.MaxAttempts))
	}
	if w := c.MaxWait; w < time.Second || w > 10*time.Minute {
		return bad("maxWait", c.MaxWait, fielderr.OrDefault(fielderr.DurationRange(time.Second, 10*time.Minute), d.MaxWait))
	}
	if strings.ContainsAny(c.Region, " /") {
		return bad("region", c.Region, `an AWS region name such as "us-east-1"`)
	}
	return nil
}

// Libdns returns the equivalent github.com/libdns/route53 provider, for
// callers who want the upstream module itself. It classifies no errors,
// treats an empty type or value in DeleteRecords literally, and strips
// quotes at either end of TXT text when reading; Provider does not.
func (c Config) Libdns() *libroute53.Provider {
	c = c.withDefaults()
	return &libroute53.Provider{
		Region: c.Region, Profile: c.Profile,
		AccessKeyId: c.AccessKeyID, SecretAccessKey: c.SecretAccessKey, SessionToken: c.SessionToken,
		HostedZoneID: c.HostedZoneID, MaxRetries: c.MaxAttempts,
		WaitForRoute53Sync: c.WaitForSync, Route53MaxWait: c.MaxWait,
	}
}

// MarshalJSON writes Config with its durations as strings such as "10s".
func (c Config) MarshalJSON() ([]byte, error) {
	type plain Config
	return jsontime.Marshal(plain(c))
}

// UnmarshalJSON reads Config, its durations as strings such as "10s" or as
// numbers of seconds. Unknown keys, and keys in the wrong case, are errors.
func (c *Config) UnmarshalJSON(b []byte) error {
	type plain Config
	return jsontime.Unmarshal(b, (*plain)(c))
}
