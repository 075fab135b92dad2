package cloudflare

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/gslbkit/gslb/internal/envfill"
	"github.com/gslbkit/gslb/internal/fielderr"
	"github.com/gslbkit/gslb/internal/jsontime"
	libcloudflare "github.com/libdns/cloudflare"
)

// The environment variables FromEnv reads.
const (
	EnvAPIToken  = "CLOUDFLARE_API_TOKEN"
	EnvZoneToken = "CLOUDFLARE_ZONE_TOKEN"
	EnvZoneID    = "CLOUDFLARE_ZONE_ID"
)

// BaseURL is Cloudflare's API v4 endpoint.
const BaseURL = "https://api.cloudflare.com/client/v4"

// HTTPClient sends requests; *http.Client satisfies it. Tests pass one
// that routes requests for the API host to a local server.
type HTTPClient interface {
	Do(*http.Request) (*http.Response, error)
}

// Config holds the API token and, optionally, the zone's ID.
type Config struct {
	// APIToken is a scoped API token with Zone.DNS:Edit on the zones used
	// (not a global API key). Required; FromEnv reads CLOUDFLARE_API_TOKEN.
	APIToken string `json:"apiToken"`
	// ZoneToken, when set, is used instead of APIToken to look zones up
	// by name (a Zone:Read token of wider scope).
	ZoneToken string `json:"zoneToken"`
	// ZoneID skips the lookup of the zone by name: every call then acts on
	// this zone, whatever name it is given.
	ZoneID string `json:"zoneID"`
	// Timeout bounds each HTTP request when the context has no earlier
	// deadline, in [1s, 5m]. Default (0) 30s.
	Timeout time.Duration `json:"timeout"`
	// HTTPClient sends the requests; nil means an *http.Client with
	// Timeout. Not part of the JSON form.
	HTTPClient HTTPClient `json:"-"`
}

// DefaultConfig returns a 30 s timeout; the token is left for the caller
// (or FromEnv) to fill.
func DefaultConfig() Config {
	return Config{Timeout: 30 * time.Second}
}

// FromEnv returns a copy of c with empty APIToken, ZoneToken and ZoneID
// taken from CLOUDFLARE_API_TOKEN, CLOUDFLARE_ZONE_TOKEN and
// CLOUDFLARE_ZONE_ID. getenv nil means os.Getenv. Fields already set win.
func (c Config) FromEnv(getenv func(string) string) Config {
	fill := envfill.From(getenv)
	fill(&c.APIToken, EnvAPIToken)
	fill(&c.ZoneToken, EnvZoneToken)
	fill(&c.ZoneID, EnvZoneID)
	return c
}

// ErrInvalidConfig is wrapped by every Config validation error (a
// *FieldError).
var ErrInvalidConfig = errors.New("cloudflare: invalid config")

// FieldError is the module's one invalid-configuration error: the field's
// path, its value as written (tokens never) and what is allowed. Its
// message reads
//
//	cloudflare: invalid config: timeout = 10m: allowed [1s, 5m], or 0 for the default (30s)
type FieldError = fielderr.Error

// withDefaults fills the zero fields that take a default.
func (c Config) withDefaults() Config {
	if c.Timeout == 0 {
		c.Timeout = DefaultConfig().Timeout
	}
	return c
}

// Validate reports the first field that is missing or out of range, as a
// *FieldError wrapping ErrInvalidConfig; zero fields that take a default
// take it first. Tokens never appear in its errors.
func (c Config) Validate() error {
	c = c.withDefaults()
	if c.APIToken == "" {
		return fielderr.Missing(ErrInvalidConfig, "apiToken", "a scoped API token with Zone.DNS:Edit (or set "+EnvAPIToken+")")
	}
	if strings.ContainsAny(c.APIToken, " \t\r\n") {
		return fielderr.Hidden(ErrInvalidConfig, "apiToken", "the bare token, without white space")
	}
	if strings.ContainsAny(c.ZoneToken, " \t\r\n") {
		return fielderr.Hidden(ErrInvalidConfig, "zoneToken", "the bare token, without white space")
	}
	notHex := func(r rune) bool { return !strings.ContainsRune("0123456789abcdefABCDEF", r) }
	if strings.ContainsFunc(c.ZoneID, notHex) {
		return fielderr.New(ErrInvalidConfig, "zoneID", c.ZoneID, "the zone's 32 hexadecimal digits")
	}
	if t := c.Timeout; t < time.Second || t > 5*time.Minute {
		return fielderr.New(ErrInvalidConfig, "timeout", c.Timeout, fielderr.OrDefault(fielderr.DurationRange(time.Second, 5*time.Minute), DefaultConfig().Timeout))
	}
	return nil
}

// Libdns returns the equivalent github.com/libdns/cloudflare provider, for
// callers who want the upstream module itself. It classifies no errors,
// replaces an RRset record by record (erroring when one holds several
// records), and returns TXT text with its escapes; Provider does not.
func (c Config) Libdns() *libcloudflare.Provider {
	return &libcloudflare.Provider{APIToken: c.APIToken, ZoneToken: c.ZoneToken, HTTPClient: c.HTTPClient}
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
