package record

import (
	"encoding/json"
	"github.com/gslbkit/gslb/internal/fielderr"
	"time"

	"github.com/gslbkit/gslb/internal/dnsname"
	"github.com/gslbkit/gslb/internal/jsontime"
)

// DefaultMarkerPrefix is the label under which owner markers live:
// "_gslb-owner.www.example.com." marks "www.example.com.".
const DefaultMarkerPrefix = "_gslb-owner"

// Config tunes a Reconciler. Build one with DefaultConfig or a preset and
// change fields; Validate reports the first bad field as a *FieldError
// (wrapping ErrInvalid). The reconciler keeps its own copy. A zero field
// takes its default, except RetryJitter (0 means no jitter) and the
// booleans; OwnerID has no default, so the zero Config is rejected with an
// error that names DefaultConfig. In JSON the durations are strings such as
// "60s".
type Config struct {
	// OwnerID identifies the deployment: every controller of one deployment
	// uses the same id, since they compute and write the same records. It
	// is the text of the owner markers. Required; 1–255 printable ASCII
	// characters, no spaces or quotes.
	OwnerID string `json:"ownerId"`
	// MarkerPrefix is the label prepended to a name to form its owner
	// marker's name (a TXT record). Default "_gslb-owner"; one label,
	// letters, digits, hyphens and underscores. It differs from
	// ExternalDNS's registry names so the two never clash.
	MarkerPrefix string `json:"markerPrefix"`
	// MarkerTTL is the TTL of owner markers. Default 300s; 1s to 24h.
	MarkerTTL time.Duration `json:"markerTTL"`
	// AllowTypeSwitch lets a published name switch between CNAME and other
	// types. Default false: the switch is refused (ErrTypeSwitch) and the
	// published records stay. When true, the old type is deleted and the new
	// one set in one call if the provider implements Replacer, otherwise in
	// two calls, and the window between them is reported (SwitchWindow).
	AllowTypeSwitch bool `json:"allowTypeSwitch"`
	// DryRun computes and reports plans without writing anything; the plan
	// is printed to Options.DryRunOutput (or logged). The desired state
	// stays pending, since nothing was applied.
	DryRun bool `json:"dryRun"`
	// ResyncInterval is how often Run re-reads the zones and repairs drift on
	// owned names, even when the desired state has not changed. Default
	// 60s; 1s to 24h.
	ResyncInterval time.Duration `json:"resyncInterval"`
	// WritesPerSecond caps provider calls per second: writes (SetRecords,
	// DeleteRecords) and the reads of zones (GetRecords) alike, since
	// providers such as Route 53 count both against one quota. Default 5;
	// greater than 0, at most 10000. Options.Limiter, when set, replaces
	// this limit by a shared one.
	WritesPerSecond float64 `json:"writesPerSecond"`
	// WriteBurst is how many write calls may go out at once before the rate
	// applies. Default 5; 1 to 10000.
	WriteBurst int `json:"writeBurst"`
	// RetryBase is the first delay before retrying a throttled or transient
	// failure; later delays double up to RetryMax. Default 1s; 10ms to 1h.
	RetryBase time.Duration `json:"retryBase"`
	// RetryMax caps the retry delay. Default 2m; RetryBase to 24h.
	RetryMax time.Duration `json:"retryMax"`
	// RetryJitter is the share of each retry delay that is random, 0 to 1
	// (0.5: a delay d becomes uniform in [d/2, d]). Default 0.5.
	RetryJitter float64 `json:"retryJitter"`
	// FenceName is the label, at each zone's apex, of the fence record a
	// Reconciler with a fencing token (Options.FenceToken) keeps: a TXT
	// holding "<ownerId> <token>". Default "_gslb-fence"; one label, as
	// MarkerPrefix, and not MarkerPrefix itself. Deployments (owner ids)
	// that share a zone and fence need different names. Unused without a
	// fencing token.
	FenceName string `json:"fenceName,omitempty"`
}

// DefaultConfig returns a complete config for ownerID: markers under
// "_gslb-owner", no type switches, a 60s resync, 5 writes per second with a
// burst of 5, retries from 1s to 2m with 50% jitter.
func DefaultConfig(ownerID string) Config {
	return Config{
		OwnerID:         ownerID,
		MarkerPrefix:    DefaultMarkerPrefix,
		MarkerTTL:       300 * time.Second,
		ResyncInterval:  60 * time.Second,
		WritesPerSecond: 5,
		WriteBurst:      5,
		RetryBase:       time.Second,
		RetryMax:        2 * time.Minute,
		RetryJitter:     0.5,
		FenceName:       DefaultFenceName,
	}
}

// Route53Config derives from DefaultConfig the limits that suit AWS Route
// 53, which allows five API requests per second per account shared by all
// its users: 2 writes per second, a burst of 2, retries from 2s.
func Route53Config(ownerID string) Config {
	c := DefaultConfig(ownerID)
	c.WritesPerSecond = 2
	c.WriteBurst = 2
	c.RetryBase = 2 * time.Second
	return c
}

// CloudflareConfig derives from DefaultConfig the limits that suit
// Cloudflare's API (1200 requests per 5 minutes): 3 writes per second, a
// burst of 5.
func CloudflareConfig(ownerID string) Config {
	c := DefaultConfig(ownerID)
	c.WritesPerSecond = 3
	return c
}

// LocalConfig derives from DefaultConfig a config for servers on the same
// host or network (the embedded zone, an RFC 2136 server): 100 writes per
// second, a burst of 20, a 10s resync and retries from 100ms to 10s.
func LocalConfig(ownerID string) Config {
	c := DefaultConfig(ownerID)
	c.WritesPerSecond = 100
	c.WriteBurst = 20
	c.ResyncInterval = 10 * time.Second
	c.RetryBase = 100 * time.Millisecond
	c.RetryMax = 10 * time.Second
	return c
}

// withDefaults fills the zero fields that take a default.
func (c Config) withDefaults() Config {
	d := DefaultConfig(c.OwnerID)
	if c.MarkerPrefix == "" {
		c.MarkerPrefix = d.MarkerPrefix
	}
	if c.MarkerTTL == 0 {
		c.MarkerTTL = d.MarkerTTL
	}
	if c.FenceName == "" {
		c.FenceName = d.FenceName
	}
	if c.ResyncInterval == 0 {
		c.ResyncInterval = d.ResyncInterval
	}
	if c.WritesPerSecond == 0 {
		c.WritesPerSecond = d.WritesPerSecond
	}
	if c.WriteBurst == 0 {
		c.WriteBurst = d.WriteBurst
	}
	if c.RetryBase == 0 {
		c.RetryBase = d.RetryBase
	}
	if c.RetryMax == 0 {
		c.RetryMax = max(d.RetryMax, c.RetryBase)
	}
	return c
}

// Validate reports the first invalid field as a *FieldError naming the
// field, its value and the allowed range; zero fields take their defaults
// first.
func (c Config) Validate() error {
	c = c.withDefaults()
	if n := len(c.OwnerID); n == 0 || n > 255 {
		return configErr("ownerId", c.OwnerID, "[1, 255] printable ASCII characters (required: start from record.DefaultConfig(ownerID))")
	}
	for i := 0; i < len(c.OwnerID); i++ {
		if ch := c.OwnerID[i]; ch <= ' ' || ch > '~' || ch == '"' || ch == '\\' {
			return configErr("ownerId", c.OwnerID, "printable ASCII without spaces, quotes or backslashes")
		}
	}
	if err := dnsname.CheckLabel(c.MarkerPrefix, true); err != nil {
		return configErr("markerPrefix", c.MarkerPrefix, dnsname.ServiceLabelRule)
	}
	if err := dnsname.CheckLabel(c.FenceName, true); err != nil || c.FenceName == c.MarkerPrefix {
		return configErr("fenceName", c.FenceName, dnsname.ServiceLabelRule+", not markerPrefix")
	}
	if err := between("markerTTL", c.MarkerTTL, time.Second, 24*time.Hour); err != nil {
		return err
	}
	if err := between("resyncInterval", c.ResyncInterval, time.Second, 24*time.Hour); err != nil {
		return err
	}
	if !(c.WritesPerSecond > 0 && c.WritesPerSecond <= 10000) {
		return configErr("writesPerSecond", c.WritesPerSecond, "(0, 10000], or 0 for the default")
	}
	if c.WriteBurst < 1 || c.WriteBurst > 10000 {
		return configErr("writeBurst", c.WriteBurst, fielderr.Range(1, 10000)+", or 0 for the default")
	}
	if err := between("retryBase", c.RetryBase, 10*time.Millisecond, time.Hour); err != nil {
		return err
	}
	if err := between("retryMax", c.RetryMax, c.RetryBase, 24*time.Hour); err != nil {
		return err
	}
	if !(c.RetryJitter >= 0 && c.RetryJitter <= 1) {
		return configErr("retryJitter", c.RetryJitter, fielderr.Range(0, 1))
	}
	return nil
}

func between(field string, v, lo, hi time.Duration) error {
	if v < lo || v > hi {
		return configErr(field, v, fielderr.DurationRange(lo, hi))
	}
	return nil
}

// configJSON is Config's JSON form, with duration strings.
type configJSON struct {
	plainConfig
	MarkerTTL      jsontime.Duration `json:"markerTTL"`
	ResyncInterval jsontime.Duration `json:"resyncInterval"`
	RetryBase      jsontime.Duration `json:"retryBase"`
	RetryMax       jsontime.Duration `json:"retryMax"`
}

type plainConfig Config

func (c Config) toJSON() configJSON {
	return configJSON{plainConfig(c), jsontime.Duration(c.MarkerTTL), jsontime.Duration(c.ResyncInterval), jsontime.Duration(c.RetryBase), jsontime.Duration(c.RetryMax)}
}

// MarshalJSON writes the durations as strings such as "60s".
func (c Config) MarshalJSON() ([]byte, error) { return json.Marshal(c.toJSON()) }

// UnmarshalJSON reads the durations as strings such as "60s" or numbers of
// seconds; absent fields keep their values.
func (c *Config) UnmarshalJSON(b []byte) error {
	j := c.toJSON()
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*c = Config(j.plainConfig)
	c.MarkerTTL, c.ResyncInterval, c.RetryBase, c.RetryMax = j.MarkerTTL.D(), j.ResyncInterval.D(), j.RetryBase.D(), j.RetryMax.D()
	return nil
}
