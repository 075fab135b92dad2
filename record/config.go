package record

import (
	"fmt"
	"time"

	"github.com/gslbkit/gslb/internal/dnsname"
	"github.com/gslbkit/gslb/internal/jsontime"
)

// Duration is a time.Duration that reads and writes "3s" in JSON.
type Duration = jsontime.Duration

// DefaultMarkerPrefix is the label under which owner markers live:
// "_gslb-owner.www.example.com." marks "www.example.com.".
const DefaultMarkerPrefix = "_gslb-owner"

// Config tunes a Reconciler. Build one with DefaultConfig or a preset and
// change fields; Validate reports the first bad field. The reconciler keeps
// its own copy. The zero Config is invalid (it has no OwnerID and no
// limits); New never fills in missing values.
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
	MarkerTTL Duration `json:"markerTTL"`
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
	ResyncInterval Duration `json:"resyncInterval"`
	// WritesPerSecond caps provider write calls (SetRecords and
	// DeleteRecords) per second. Default 5; greater than 0, at most 10000.
	// Options.Limiter, when set, replaces this limit by a shared one.
	WritesPerSecond float64 `json:"writesPerSecond"`
	// WriteBurst is how many write calls may go out at once before the rate
	// applies. Default 5; 1 to 10000.
	WriteBurst int `json:"writeBurst"`
	// RetryBase is the first delay before retrying a throttled or transient
	// failure; later delays double up to RetryMax. Default 1s; 10ms to 1h.
	RetryBase Duration `json:"retryBase"`
	// RetryMax caps the retry delay. Default 2m; RetryBase to 24h.
	RetryMax Duration `json:"retryMax"`
	// RetryJitter is the share of each retry delay that is random, 0 to 1
	// (0.5: a delay d becomes uniform in [d/2, d]). Default 0.5.
	RetryJitter float64 `json:"retryJitter"`
}

// DefaultConfig returns a complete config for ownerID: markers under
// "_gslb-owner", no type switches, a 60s resync, 5 writes per second with a
// burst of 5, retries from 1s to 2m with 50% jitter.
func DefaultConfig(ownerID string) Config {
	return Config{
		OwnerID:         ownerID,
		MarkerPrefix:    DefaultMarkerPrefix,
		MarkerTTL:       Duration(300 * time.Second),
		ResyncInterval:  Duration(60 * time.Second),
		WritesPerSecond: 5,
		WriteBurst:      5,
		RetryBase:       Duration(time.Second),
		RetryMax:        Duration(2 * time.Minute),
		RetryJitter:     0.5,
	}
}

// Route53Config derives from DefaultConfig the limits that suit AWS Route
// 53, which allows five API requests per second per account shared by all
// its users: 2 writes per second, a burst of 2, retries from 2s.
func Route53Config(ownerID string) Config {
	c := DefaultConfig(ownerID)
	c.WritesPerSecond = 2
	c.WriteBurst = 2
	c.RetryBase = Duration(2 * time.Second)
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
	c.ResyncInterval = Duration(10 * time.Second)
	c.RetryBase = Duration(100 * time.Millisecond)
	c.RetryMax = Duration(10 * time.Second)
	return c
}

// Validate reports the first invalid field, naming the field, its value and
// the allowed range.
func (c Config) Validate() error {
	if n := len(c.OwnerID); n == 0 || n > 255 {
		return fmt.Errorf("record: Config.OwnerID %q has %d characters, allowed 1–255", c.OwnerID, n)
	}
	for i := 0; i < len(c.OwnerID); i++ {
		if ch := c.OwnerID[i]; ch <= ' ' || ch > '~' || ch == '"' || ch == '\\' {
			return fmt.Errorf("record: Config.OwnerID %q has character %q, allowed printable ASCII without spaces, quotes or backslashes", c.OwnerID, ch)
		}
	}
	if err := dnsname.CheckLabel(c.MarkerPrefix, true); err != nil {
		return fmt.Errorf("record: Config.MarkerPrefix %q: want one label of letters, digits, hyphens and underscores: %w", c.MarkerPrefix, err)
	}
	if err := between("MarkerTTL", c.MarkerTTL.D(), time.Second, 24*time.Hour); err != nil {
		return err
	}
	if err := between("ResyncInterval", c.ResyncInterval.D(), time.Second, 24*time.Hour); err != nil {
		return err
	}
	if !(c.WritesPerSecond > 0 && c.WritesPerSecond <= 10000) {
		return fmt.Errorf("record: Config.WritesPerSecond %v out of range, allowed greater than 0 up to 10000", c.WritesPerSecond)
	}
	if c.WriteBurst < 1 || c.WriteBurst > 10000 {
		return fmt.Errorf("record: Config.WriteBurst %d out of range, allowed 1–10000", c.WriteBurst)
	}
	if err := between("RetryBase", c.RetryBase.D(), 10*time.Millisecond, time.Hour); err != nil {
		return err
	}
	if err := between("RetryMax", c.RetryMax.D(), c.RetryBase.D(), 24*time.Hour); err != nil {
		return err
	}
	if !(c.RetryJitter >= 0 && c.RetryJitter <= 1) {
		return fmt.Errorf("record: Config.RetryJitter %v out of range, allowed 0–1", c.RetryJitter)
	}
	return nil
}

func between(field string, v, lo, hi time.Duration) error {
	if v < lo || v > hi {
		return fmt.Errorf("record: Config.%s %v out of range, allowed %v–%v", field, v, lo, hi)
	}
	return nil
}
