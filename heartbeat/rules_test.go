package heartbeat

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

func TestJudge(t *testing.T) {
	r := DefaultRules()
	s := time.Second
	cases := []struct {
		name   string
		age    time.Duration // now − ts
		fresh  bool
		reason Reason
	}{
		{"just written", 0, true, ReasonNone},
		{"at healthy duration", 30 * s, true, ReasonNone},
		{"within skew tolerance", 35 * s, true, ReasonNone},
		{"just past tolerance", 35*s + time.Millisecond, false, ReasonTooOld},
		{"long dead", time.Hour, false, ReasonTooOld},
		{"small future (skew)", -5 * s, true, ReasonNone},
		{"self-heal beat", -3 * time.Minute, true, ReasonNone},
		{"self-heal beat plus skew", -(3*time.Minute + 5*s), true, ReasonNone},
		{"too far in the future", -(3*time.Minute + 5*s + time.Millisecond), false, ReasonFuture},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := r.Judge(t0, t0.Add(c.age))
			assert.Equal(t, c.fresh, f.Fresh)
			assert.Equal(t, c.reason, f.Reason)
			assert.Equal(t, c.age, f.Age)
			assert.Equal(t, t0.Add(35*s), f.StaleAt)
		})
	}
}

func TestSelfHealThreshold(t *testing.T) {
	cases := []struct {
		name  string
		rules Rules
		want  time.Duration
	}{
		{"default: two intervals early", DefaultRules(), 10 * time.Second},
		{"reference: once stale", ReferenceRules(), 30 * time.Second},
		{"fast", FastRules(), 4 * time.Second},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.NoError(t, c.rules.Validate())
			assert.Equal(t, c.want, c.rules.SelfHealThreshold())
			assert.False(t, c.rules.NeedsSelfHeal(t0, t0.Add(c.want)))
			assert.True(t, c.rules.NeedsSelfHeal(t0, t0.Add(c.want+time.Millisecond)))
		})
	}
}

func TestRulesValidate(t *testing.T) {
	cases := []struct {
		name   string
		mutate func(*Rules)
		field  string
	}{
		{"negative interval", func(r *Rules) { r.ReconcileInterval = -1 }, "reconcileInterval = -1ns: allowed [100ms, 10m]"},
		{"healthy too short", func(r *Rules) { r.HealthyDuration = time.Millisecond }, "healthyDuration"},
		{"negative skew", func(r *Rules) { r.SkewTolerance = -1 }, "skewTolerance"},
		{"skew above healthy", func(r *Rules) { r.SkewTolerance = time.Minute }, "skewTolerance"},
		{"self-heal interval too short", func(r *Rules) { r.SelfHealInterval = time.Millisecond }, "heartbeat: invalid config: selfHealInterval = 1ms: allowed [1s, 24h]"},
		{"lead too large", func(r *Rules) { r.SelfHealLeadIntervals = 3 }, "selfHealLeadIntervals"},
		{"lead negative", func(r *Rules) { r.SelfHealLeadIntervals = -1 }, "selfHealLeadIntervals"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := DefaultRules()
			c.mutate(&r)
			err := r.Validate()
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.field)
		})
	}
}

func TestConfigValidate(t *testing.T) {
	base := DefaultConfig()
	base.Cluster, base.Region, base.GlobalZone = "eu-1", "europe", "global.example.com."
	require.NoError(t, base.Validate())
	cases := []struct {
		name   string
		mutate func(*Config)
		field  string
	}{
		{"no cluster", func(c *Config) { c.Cluster = "" }, "cluster"},
		{"bad region", func(c *Config) { c.Region = "eu west" }, "region"},
		{"no zones", func(c *Config) { c.GlobalZone = "" }, "globalZone"},
		{"bad zone", func(c *Config) { c.LocalZone = "a..b" }, "localZone"},
		{"same zone twice", func(c *Config) { c.LocalZone = "Global.Example.com" }, "localZone"},
		{"ttl", func(c *Config) { c.TTL = 2 * time.Hour }, "heartbeat: invalid config: ttl = 2h: allowed [1s, 1h], or 0 for the default (5s)"},
		{"attempts", func(c *Config) { c.MaxAttempts = -1 }, "heartbeat: invalid config: maxAttempts = -1: allowed [1, 10], or 0 for the default (3)"},
		{"zone rule", func(c *Config) { c.LocalZone = "a..b" }, "heartbeat: invalid config: localZone = \"a..b\": allowed a DNS name: dot-separated labels of [1, 63] letters, digits, hyphens or underscores (no hyphen first or last), at most 253 bytes, short enough for the beat record name"},
		{"attempts beyond the interval", func(c *Config) { c.MaxAttempts = 5 }, "retryBackoff"},
		{"negative backoff", func(c *Config) { c.RetryBackoff = -1 }, "retryBackoff"},
		{"factor below 1", func(c *Config) { c.RetryFactor = 0.5 }, "retryFactor"},
		{"jitter above 1", func(c *Config) { c.RetryJitter = 2 }, "retryJitter"},
		{"tripling beyond the interval", func(c *Config) { c.RetryFactor = 3 }, "retryBackoff"},
		{"bad rules", func(c *Config) { c.Global.HealthyDuration = time.Millisecond }, "heartbeat: invalid config: global.healthyDuration = 1ms: allowed [1s, 1h]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := base
			c.mutate(&cfg)
			err := cfg.Validate()
			require.Error(t, err)
			assert.Contains(t, err.Error(), c.field)
		})
	}
	for name, preset := range map[string]Config{"default": DefaultConfig(), "reference": ReferenceConfig(), "fast": FastConfig()} {
		t.Run("preset "+name, func(t *testing.T) {
			preset.Cluster, preset.Region, preset.LocalZone = "a", "r", "local.example.com"
			assert.NoError(t, preset.Validate())
		})
	}
}

// TestConfigSelfHealAttempts: SelfHealAttempts is allowed from MaxAttempts
// to 20, and an error names the field, its value and the range.
func TestConfigSelfHealAttempts(t *testing.T) {
	cases := []struct {
		name     string
		max      int // MaxAttempts
		selfHeal int
		wantErr  string // "" = valid
	}{
		{"default", 3, 7, ""},
		{"equal to maxAttempts", 3, 3, ""},
		{"at most", 3, 20, ""},
		{"zero takes the default", 3, 0, ""},
		{"below maxAttempts", 3, 2, "heartbeat: invalid config: selfHealAttempts = 2: allowed [maxAttempts (3), 20], or 0 for the default (7)"},
		{"below a raised maxAttempts", 4, 3, "heartbeat: invalid config: selfHealAttempts = 3: allowed [maxAttempts (4), 20], or 0 for the default (7)"},
		{"negative", 3, -1, "heartbeat: invalid config: selfHealAttempts = -1: allowed [maxAttempts (3), 20], or 0 for the default (7)"},
		{"too many", 3, 21, "heartbeat: invalid config: selfHealAttempts = 21: allowed [maxAttempts (3), 20], or 0 for the default (7)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Cluster, cfg.Region, cfg.GlobalZone = "eu-1", "europe", "global.example.com."
			cfg.MaxAttempts, cfg.SelfHealAttempts = c.max, c.selfHeal
			err := cfg.Validate()
			if c.wantErr == "" {
				assert.NoError(t, err)
				return
			}
			require.ErrorIs(t, err, ErrInvalidConfig)
			var fe *FieldError
			require.ErrorAs(t, err, &fe)
			assert.Equal(t, "selfHealAttempts", fe.Path)
			assert.Equal(t, c.wantErr, err.Error())
		})
	}
	for name, preset := range map[string]Config{"default": DefaultConfig(), "reference": ReferenceConfig(), "fast": FastConfig()} {
		t.Run("preset "+name, func(t *testing.T) {
			assert.Equal(t, 7, preset.SelfHealAttempts)
			assert.GreaterOrEqual(t, preset.SelfHealAttempts, preset.MaxAttempts)
		})
	}
}

// TestAttemptPolicy: normal attempts follow RetryBackoff; self-heal
// attempts are at most ReconcileInterval / SelfHealAttempts apart, with
// the same jitter, and never further apart than the normal ones.
func TestAttemptPolicy(t *testing.T) {
	cases := []struct {
		name           string
		cfg            func() Config
		interval       time.Duration
		rand           float64
		normal, healed time.Duration
	}{
		{"default, no jitter drawn", DefaultConfig, 10 * time.Second, 0, 2700 * time.Millisecond, 1285714285},
		{"default, longest", DefaultConfig, 10 * time.Second, 1, 3 * time.Second, 1428571428},
		{"fast", FastConfig, 2 * time.Second, 1, 600 * time.Millisecond, 285714285},
		{"back-off already short", func() Config { c := DefaultConfig(); c.RetryBackoff = time.Second; return c },
			10 * time.Second, 1, time.Second, time.Second},
		{"no back-off", func() Config { c := DefaultConfig(); c.RetryBackoff = 0; return c }, 10 * time.Second, 1, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := c.cfg().attempts(c.interval)
			r := randFunc(func() float64 { return c.rand })
			assert.Equal(t, c.normal, p.delay(1, false, r))
			assert.Equal(t, c.healed, p.delay(1, true, r))
			assert.Equal(t, 3, p.limit(false))
			assert.Equal(t, 7, p.limit(true))
		})
	}
}

func TestConfigJSON(t *testing.T) {
	c := DefaultConfig()
	c.Cluster, c.Region, c.GlobalZone = "eu-1", "europe", "global.example.com."
	b, err := json.Marshal(c)
	require.NoError(t, err)
	assert.Contains(t, string(b), `"healthyDuration":"30s"`)
	assert.Contains(t, string(b), `"selfHealInterval":"3m0s"`)
	assert.Contains(t, string(b), `"selfHealAttempts":7`)
	var back Config
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, c, back)
}

// TestHealer walks the self-heal rule through a throttled stretch.
func TestHealer(t *testing.T) {
	r := DefaultRules()
	h := NewHealer(r)
	s := time.Second

	p, changed := h.Plan(t0)
	assert.Equal(t, Plan{Time: t0}, p, "first beat is normal")
	assert.False(t, changed)
	h.Written(p.Time, false)
	assert.False(t, h.ReadBack(t0, false, true))

	// 10 s later the beat is exactly at the threshold: still normal.
	p, _ = h.Plan(t0.Add(10 * s))
	assert.False(t, p.SelfHeal)
	// The write failed; a moment later the beat is past the threshold.
	now := t0.Add(10*s + time.Millisecond)
	p, changed = h.Plan(now)
	assert.True(t, p.SelfHeal)
	assert.True(t, changed)
	assert.Equal(t, now.Add(3*time.Minute), p.Time)
	assert.True(t, h.Recovering())
	// Planning again does not report a change.
	_, changed = h.Plan(now)
	assert.False(t, changed)

	// The self-heal beat gets through; while it covers us, plans are normal.
	h.Written(p.Time, true)
	assert.False(t, h.ReadBack(p.Time, true, true))
	assert.True(t, h.Recovering(), "a self-heal beat does not end recovery")
	p2, _ := h.Plan(now.Add(10 * s))
	assert.False(t, p2.SelfHeal)
	// The normal write fails; reading back still finds the self-heal beat.
	assert.False(t, h.ReadBack(p.Time, true, true))
	assert.True(t, h.Recovering())
	// A normal beat is written and read back: recovery ends.
	n := now.Add(20 * s)
	h.Written(n, false)
	assert.True(t, h.ReadBack(n, false, true))
	assert.False(t, h.Recovering())

	// A missing own record plans a normal beat, not a self-heal one.
	h.ReadBack(time.Time{}, false, false)
	p, _ = h.Plan(n.Add(time.Hour))
	assert.False(t, p.SelfHeal)

	// Reset (the verdict changed) forgets everything and ends recovery.
	h.Written(n, false)
	_, changed = h.Plan(n.Add(time.Minute))
	assert.True(t, changed)
	assert.True(t, h.Reset())
	assert.False(t, h.Recovering())
	p, _ = h.Plan(n.Add(time.Minute))
	assert.False(t, p.SelfHeal)
	assert.False(t, h.Reset())
}

// TestHealerProperty checks the healer against a model over random
// sequences of plans, successful or failed writes, and read-backs (found,
// missing, or showing an older beat): a plan is a self-heal beat exactly
// when the beat believed in the zone is older than the threshold, stamped
// now or now + SelfHealInterval; recovering starts with the first self-heal
// plan and ends only when a normal beat it wrote is read back.
func TestHealerProperty(t *testing.T) {
	r := DefaultRules()
	rapid.Check(t, func(t *rapid.T) {
		h := NewHealer(r)
		now := t0
		var own time.Time
		hasOwn, recovering := false, false
		var pendingNormal time.Time
		hasPending := false
		for range 100 {
			now = now.Add(time.Duration(rapid.IntRange(0, 20000).Draw(t, "step")) * time.Millisecond)
			p, changed := h.Plan(now)
			wantHeal := hasOwn && now.Sub(own) > r.SelfHealThreshold()
			if p.SelfHeal != wantHeal {
				t.Fatalf("at %v own %v: self-heal %v, want %v", now.Sub(t0), own.Sub(t0), p.SelfHeal, wantHeal)
			}
			if (p.SelfHeal && !p.Time.Equal(now.Add(r.SelfHealInterval))) || (!p.SelfHeal && !p.Time.Equal(now)) {
				t.Fatalf("plan %+v at %v", p, now)
			}
			if changed != (wantHeal && !recovering) {
				t.Fatalf("changed %v with recovering %v and self-heal %v", changed, recovering, wantHeal)
			}
			recovering = recovering || wantHeal
			if rapid.Bool().Draw(t, "written") {
				h.Written(p.Time, p.SelfHeal)
				own, hasOwn = p.Time, true
				hasPending = !p.SelfHeal
				if !p.SelfHeal {
					pendingNormal = p.Time
				}
			}
			switch rapid.IntRange(0, 3).Draw(t, "read") {
			case 0: // no read-back (the read failed)
			case 1: // missing
				h.ReadBack(time.Time{}, false, false)
				hasOwn = false
			default: // what we believe is there
				if hasOwn {
					heal := own.After(now)
					ch := h.ReadBack(own, heal, true)
					ends := !heal && hasPending && own.Equal(pendingNormal) && recovering
					if !heal && hasPending && own.Equal(pendingNormal) {
						hasPending = false
					}
					if ends {
						recovering = false
					}
					if ch != ends {
						t.Fatalf("read-back changed %v, want %v", ch, ends)
					}
				}
			}
			if h.Recovering() != recovering {
				t.Fatalf("recovering %v, model %v", h.Recovering(), recovering)
			}
		}
	})
}
