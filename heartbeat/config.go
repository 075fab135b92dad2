package heartbeat

import (
	"fmt"
	"github.com/gslbkit/gslb/internal/fielderr"
	"github.com/gslbkit/gslb/internal/jsontime"
	"time"

	"github.com/gslbkit/gslb/internal/dnsname"
)

// Config configures a Publisher: who this cluster is, where its beats go,
// and the timings of each scope. Start from DefaultConfig (or a preset)
// and set Cluster, Region and the zones.
type Config struct {
	// Cluster is this cluster's name, a DNS label (it forms the record
	// name Prefix + Cluster). Required.
	Cluster string `json:"cluster"`
	// Region is this cluster's region, a DNS label. Required.
	Region string `json:"region"`
	// Prefix is the beat records' label prefix; "" means DefaultPrefix
	// ("health-001-").
	Prefix string `json:"prefix,omitempty"`
	// LocalZone is the region's private zone, where local beats go; ""
	// disables the local scope.
	LocalZone string `json:"localZone,omitempty"`
	// GlobalZone is the global zone, where global beats go; "" disables
	// the global scope. At least one zone is required.
	GlobalZone string `json:"globalZone,omitempty"`
	// Local is the local scope's timings (DefaultRules).
	Local Rules `json:"local"`
	// Global is the global scope's timings (DefaultRules).
	Global Rules `json:"global"`
	// TTL is the beat record's TTL. Default (0) 5 s; allowed [1s, 1h].
	TTL time.Duration `json:"ttl"`
	// MaxAttempts is how many write attempts a scope makes per reconcile
	// interval, the first included, while the beat it is attempting is a
	// normal beat. Default (0) 3; allowed [1, 10].
	MaxAttempts int `json:"maxAttempts"`
	// SelfHealAttempts is how many write attempts a scope makes per
	// reconcile interval, the first included, while the beat it is
	// attempting is a self-heal beat (its own beat is older than
	// Rules.SelfHealThreshold: the Healer's Plan says so per attempt). The
	// limit that applies is the one of the beat being attempted, and the
	// attempts already made in the interval count when a normal beat turns
	// into a self-heal beat mid-interval. After a failed self-heal attempt
	// the delay is min(the RetryBackoff schedule's delay,
	// ReconcileInterval / SelfHealAttempts), jittered by RetryJitter, so a
	// publisher whose beat is aging tries about evenly across the whole
	// interval. Every attempt still starts within the interval and the
	// first success ends it. Default 7: the fewest that land a beat within
	// 30 s of the last one through a 15 s write outage followed by 2-of-3
	// rejections, whatever their alignment (the arithmetic is in
	// attempts.go), so peers whose clocks run up to SkewTolerance ahead
	// never see the cluster stale (0 means the default, or MaxAttempts if
	// more). Allowed [MaxAttempts, 20].
	SelfHealAttempts int `json:"selfHealAttempts"`
	// RetryBackoff is the delay before the second attempt; each later
	// attempt waits RetryFactor times longer than the one before, and every
	// attempt must start within the reconcile interval. Default 3 s, which
	// with the default factor and jitter spreads three normal attempts about
	// evenly over a 10 s interval, so a throttled provider gets time to
	// recover between them (self-heal attempts are closer: see
	// SelfHealAttempts). Allowed [0s, 1m]; 0 (not replaced by the
	// default) retries at once.
	RetryBackoff time.Duration `json:"retryBackoff"`
	// RetryFactor multiplies each delay for the next attempt. Default (0)
	// 1 (constant delays); allowed [1, 4].
	RetryFactor float64 `json:"retryFactor"`
	// RetryJitter is the share of each delay drawn at random: a delay d
	// becomes uniform in [d × (1 − RetryJitter), d]. DefaultConfig sets
	// 0.1; 0 (not replaced by the default) means no jitter. Allowed [0, 1].
	RetryJitter float64 `json:"retryJitter"`
	// BeatVersion is the beat format version the publisher writes (see
	// Beat). 0 or 1 (the default): version 1, which every release reads;
	// 2: version 2, which adds the gateway summary (Verdict.Gateways of
	// Verdict.Total) so peers know how much of the cluster serves. Readers
	// of releases before version 2 reject version-2 beats, and would judge
	// the cluster stale: upgrade every reader first, then set 2 on the
	// writers (see the package documentation, "Upgrading to version 2").
	// Allowed 0, 1 or 2.
	BeatVersion int `json:"beatVersion,omitempty"`
}

// DefaultConfig returns a config with DefaultRules in both scopes, a 5 s
// TTL, 3 attempts per interval 2.7–3 s apart for normal beats and 7 about
// 1.29–1.43 s apart for self-heal beats. Cluster, Region and the zones are
// left for the caller.
func DefaultConfig() Config {
	return Config{
		Local:            DefaultRules(),
		Global:           DefaultRules(),
		TTL:              5 * time.Second,
		MaxAttempts:      3,
		SelfHealAttempts: 7,
		RetryBackoff:     3 * time.Second,
		RetryFactor:      1,
		RetryJitter:      0.1,
	}
}

// ReferenceConfig returns DefaultConfig with ReferenceRules in both
// scopes: the heartbeat controller's own self-heal timing.
func ReferenceConfig() Config {
	c := DefaultConfig()
	c.Local, c.Global = ReferenceRules(), ReferenceRules()
	return c
}

// FastConfig returns DefaultConfig with FastRules in both scopes, normal
// attempts 540–600 ms apart and self-heal attempts about 257–286 ms apart,
// for the embedded zone.
func FastConfig() Config {
	c := DefaultConfig()
	c.Local, c.Global = FastRules(), FastRules()
	c.TTL = time.Second
	c.RetryBackoff = 600 * time.Millisecond
	return c
}

// Rules returns the timings of scope s.
func (c Config) Rules(s Scope) Rules {
	if s == Local {
		return c.Local
	}
	return c.Global
}

// Zone returns the zone of scope s ("" when the scope is disabled).
func (c Config) Zone(s Scope) string {
	if s == Local {
		return c.LocalZone
	}
	return c.GlobalZone
}

// withDefaults fills the zero fields that take a default: TTL,
// MaxAttempts, SelfHealAttempts (7, or MaxAttempts if more), RetryFactor
// and the Rules' (see Rules). RetryBackoff and RetryJitter keep their
// zeros, which mean "retry at once" and "no jitter".
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	c.Local, c.Global = c.Local.withDefaults(), c.Global.withDefaults()
	if c.TTL == 0 {
		c.TTL = d.TTL
	}
	if c.MaxAttempts == 0 {
		c.MaxAttempts = d.MaxAttempts
	}
	if c.SelfHealAttempts == 0 {
		c.SelfHealAttempts = max(d.SelfHealAttempts, c.MaxAttempts)
	}
	if c.RetryFactor == 0 {
		c.RetryFactor = d.RetryFactor
	}
	return c
}

// Validate reports the first field out of range, as a *FieldError naming
// it, its value and the allowed range; zero fields that take a default
// take it first.
func (c Config) Validate() error {
	c = c.withDefaults()
	n := Naming{Prefix: c.Prefix}
	if err := n.CheckPrefix(); err != nil {
		return fieldErr("prefix", c.Prefix, prefixRule)
	}
	if err := n.CheckCluster(c.Cluster); err != nil {
		return fieldErr("cluster", c.Cluster, dnsname.LabelRule+", short enough for a record name with the prefix")
	}
	if err := dnsname.CheckLabel(c.Region, false); err != nil {
		return fieldErr("region", c.Region, dnsname.LabelRule)
	}
	if c.LocalZone == "" && c.GlobalZone == "" {
		return fieldErr("localZone", "", "a zone name in at least one of localZone and globalZone")
	}
	if c.LocalZone != "" && dnsname.Equal(c.LocalZone, c.GlobalZone) {
		return fieldErr("localZone", c.LocalZone, "a zone other than globalZone (the scopes need distinct zones)")
	}
	for _, s := range []Scope{Local, Global} {
		z := c.Zone(s)
		if z == "" {
			continue
		}
		if _, err := n.Name(c.Cluster, z); err != nil {
			return fieldErr(s.String()+"Zone", z, dnsname.NameRule+", short enough for the beat record name")
		}
		r := c.Rules(s)
		if err := r.validate(s.String() + "."); err != nil {
			return err
		}
		if c.MaxAttempts >= 1 && c.MaxAttempts <= 10 && c.RetryBackoff >= 0 && c.RetryBackoff <= time.Minute &&
			c.RetryFactor >= 1 && c.RetryFactor <= 4 {
			if span := c.attemptsSpan(); span >= r.ReconcileInterval {
				return fieldErr("retryBackoff", c.RetryBackoff, fmt.Sprintf("a value for which maxAttempts %d and retryFactor %v span less than %s.reconcileInterval %v (they span %v)",
					c.MaxAttempts, c.RetryFactor, s, r.ReconcileInterval, span))
			}
		}
	}
	if c.TTL < time.Second || c.TTL > time.Hour {
		return fieldErr("ttl", c.TTL, fielderr.DurationRange(time.Second, time.Hour)+", or 0 for the default (5s)")
	}
	if c.MaxAttempts < 1 || c.MaxAttempts > 10 {
		return fieldErr("maxAttempts", c.MaxAttempts, fielderr.Range(1, 10)+", or 0 for the default (3)")
	}
	if c.SelfHealAttempts < c.MaxAttempts || c.SelfHealAttempts > 20 {
		return fieldErr("selfHealAttempts", c.SelfHealAttempts, fmt.Sprintf("[maxAttempts (%d), 20], or 0 for the default (7)", c.MaxAttempts))
	}
	if c.RetryBackoff < 0 || c.RetryBackoff > time.Minute {
		return fieldErr("retryBackoff", c.RetryBackoff, fielderr.DurationRange(0, time.Minute))
	}
	if !(c.RetryFactor >= 1 && c.RetryFactor <= 4) {
		return fieldErr("retryFactor", c.RetryFactor, fielderr.Range(1, 4)+", or 0 for the default (1)")
	}
	if !(c.RetryJitter >= 0 && c.RetryJitter <= 1) {
		return fieldErr("retryJitter", c.RetryJitter, fielderr.Range(0, 1))
	}
	return c.validateBeatVersion()
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
