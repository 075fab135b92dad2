package heartbeat

import (
	"fmt"
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
	// TTL is the beat record's TTL. Default 5 s; allowed 1 s – 1 h.
	TTL Duration `json:"ttl"`
	// MaxAttempts is how many write attempts a scope makes per reconcile
	// interval, the first included, while the beat it is attempting is a
	// normal beat. Default 3; allowed 1–10.
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
	// never see the cluster stale. Allowed MaxAttempts–20.
	SelfHealAttempts int `json:"selfHealAttempts"`
	// RetryBackoff is the delay before the second attempt; each later
	// attempt waits RetryFactor times longer than the one before, and every
	// attempt must start within the reconcile interval. Default 3 s, which
	// with the default factor and jitter spreads three normal attempts about
	// evenly over a 10 s interval, so a throttled provider gets time to
	// recover between them (self-heal attempts are closer: see
	// SelfHealAttempts). Allowed 0 (retry at once) – 1 min.
	RetryBackoff Duration `json:"retryBackoff"`
	// RetryFactor multiplies each delay for the next attempt. Default 1
	// (constant delays); allowed 1–4.
	RetryFactor float64 `json:"retryFactor"`
	// RetryJitter is the share of each delay drawn at random: a delay d
	// becomes uniform in [d × (1 − RetryJitter), d]. Default 0.1; allowed 0–1.
	RetryJitter float64 `json:"retryJitter"`
}

// DefaultConfig returns a config with DefaultRules in both scopes, a 5 s
// TTL, 3 attempts per interval 2.7–3 s apart for normal beats and 7 about
// 1.29–1.43 s apart for self-heal beats. Cluster, Region and the zones are
// left for the caller.
func DefaultConfig() Config {
	return Config{
		Local:            DefaultRules(),
		Global:           DefaultRules(),
		TTL:              Duration(5 * time.Second),
		MaxAttempts:      3,
		SelfHealAttempts: 7,
		RetryBackoff:     Duration(3 * time.Second),
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
	c.TTL = Duration(time.Second)
	c.RetryBackoff = Duration(600 * time.Millisecond)
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

// Validate reports the first field out of range, naming it, its value and
// the allowed range.
func (c Config) Validate() error {
	n := Naming{Prefix: c.Prefix}
	if err := n.CheckPrefix(); err != nil {
		return fmt.Errorf("heartbeat: prefix: %w", err)
	}
	if err := n.CheckCluster(c.Cluster); err != nil {
		return fmt.Errorf("heartbeat: cluster: %w", err)
	}
	if err := dnsname.CheckLabel(c.Region, false); err != nil {
		return fmt.Errorf("heartbeat: region %q: want a DNS label of 1–63 letters, digits and hyphens: %w", c.Region, err)
	}
	if c.LocalZone == "" && c.GlobalZone == "" {
		return fmt.Errorf("heartbeat: localZone and globalZone are both empty: set at least one")
	}
	if c.LocalZone != "" && dnsname.Equal(c.LocalZone, c.GlobalZone) {
		return fmt.Errorf("heartbeat: localZone %q equals globalZone: the scopes need distinct zones", c.LocalZone)
	}
	for _, s := range []Scope{Local, Global} {
		z := c.Zone(s)
		if z == "" {
			continue
		}
		if _, err := n.Name(c.Cluster, z); err != nil {
			return fmt.Errorf("heartbeat: %sZone %q: %w", s, z, err)
		}
		r := c.Rules(s)
		if err := r.validate(s.String() + "."); err != nil {
			return err
		}
		if c.MaxAttempts >= 1 && c.MaxAttempts <= 10 && c.RetryBackoff >= 0 && c.RetryBackoff.D() <= time.Minute &&
			c.RetryFactor >= 1 && c.RetryFactor <= 4 {
			if span := c.attemptsSpan(); span >= r.ReconcileInterval.D() {
				return fmt.Errorf("heartbeat: retryBackoff %v: with maxAttempts %d and retryFactor %v the attempts span %v, allowed less than %s.reconcileInterval %v",
					c.RetryBackoff, c.MaxAttempts, c.RetryFactor, span, s, r.ReconcileInterval)
			}
		}
	}
	if c.TTL.D() < time.Second || c.TTL.D() > time.Hour {
		return fmt.Errorf("heartbeat: ttl %v: allowed 1s – 1h", c.TTL)
	}
	if c.MaxAttempts < 1 || c.MaxAttempts > 10 {
		return fmt.Errorf("heartbeat: maxAttempts %d: allowed 1–10", c.MaxAttempts)
	}
	if c.SelfHealAttempts < c.MaxAttempts || c.SelfHealAttempts > 20 {
		return fmt.Errorf("heartbeat: selfHealAttempts %d: allowed maxAttempts (%d) – 20", c.SelfHealAttempts, c.MaxAttempts)
	}
	if c.RetryBackoff < 0 || c.RetryBackoff.D() > time.Minute {
		return fmt.Errorf("heartbeat: retryBackoff %v: allowed 0 – 1m", c.RetryBackoff)
	}
	if !(c.RetryFactor >= 1 && c.RetryFactor <= 4) {
		return fmt.Errorf("heartbeat: retryFactor %v: allowed 1–4", c.RetryFactor)
	}
	if !(c.RetryJitter >= 0 && c.RetryJitter <= 1) {
		return fmt.Errorf("heartbeat: retryJitter %v: allowed 0–1", c.RetryJitter)
	}
	return nil
}
