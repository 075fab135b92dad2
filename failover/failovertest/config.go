package failovertest

import (
	"encoding/json"
	"errors"
	"fmt"
	"github.com/gslbkit/gslb/internal/fielderr"
	"reflect"
	"time"

	"github.com/gslbkit/gslb/failover"
	"github.com/gslbkit/gslb/heartbeat"
	"github.com/gslbkit/gslb/internal/dnsname"
	"github.com/gslbkit/gslb/internal/jsontime"
	"github.com/gslbkit/gslb/probe"
	"github.com/gslbkit/gslb/provider/providertest"
)

// ErrInvalid is wrapped by every error about a scenario's configuration,
// declarations or timeline.
var ErrInvalid = errors.New("failovertest: invalid scenario")

// ErrNotConfigured is returned (or reported) by Replay and Run of a zero
// Scenario, one not made by New.
var ErrNotConfigured = errors.New("failovertest: scenario not configured (use New)")

// Config sets the pieces every controller of a scenario runs with. Start
// from DefaultConfig (or FastConfig) and change what the test needs. A zero
// field takes DefaultConfig's value (a zero Topology, Probe, Heartbeat or
// Publisher the kit's default one; Seed 0 means 1), so the zero Config is
// DefaultConfig. Fields are JSON-tagged; durations are written "10s".
type Config struct {
	// Topology is the CNAME topology the controllers publish (service,
	// domain, app names, TTL, what happens when nothing is healthy).
	// Default: service "edge-internal", domain "example.test", one app
	// name "httpbin.example.test", the failover package's defaults
	// otherwise.
	Topology failover.TopologyConfig `json:"topology"`
	// Probe is every gateway's probe policy (thresholds and schedule),
	// fed by the scripted up/down through an in-memory prober. Default
	// probe.DefaultPolicy with MaxBackoff equal to its Interval, so a
	// critical gateway is probed every interval and recovers promptly.
	Probe probe.Policy `json:"probe"`
	// Heartbeat are the timings of both heartbeat scopes (local and
	// global), shared by publishers and readers. Default
	// heartbeat.DefaultRules (beats every 10 s, fresh for 30 s, 5 s of
	// skew tolerance).
	Heartbeat heartbeat.Rules `json:"heartbeat"`
	// Publisher is the template of every controller's heartbeat
	// publisher: TTL and write retries (MaxAttempts, RetryBackoff, ...).
	// The kit fills in Cluster, Region, Prefix, the zones, and sets both
	// scopes' rules to Heartbeat. Default heartbeat.DefaultConfig with
	// BeatVersion 2, so beats carry each cluster's gateway summary and
	// every controller's Snapshot has failover.Cluster.Reported (with BeatVersion
	// 0 or 1 it stays unknown, as against peers of an older release).
	Publisher heartbeat.Config `json:"publisher"`
	// Reconcile is how often a controller reads the beats and the
	// published sets, decides and publishes. Default 0 means
	// Heartbeat.ReconcileInterval; allowed 100 ms – 10 min. A controller
	// also reconciles at once when one of its gateways changes state.
	Reconcile time.Duration `json:"reconcile"`
	// WarmUp is how long the deployment runs before the timeline's time
	// zero, so every beat is written and every name published when the
	// first step runs. Default 0 means three reconcile intervals; allowed
	// up to 1 h.
	WarmUp time.Duration `json:"warmUp"`
	// Faults are random faults (throttling, transient and permanent
	// errors, partial batches, latency) injected into every call a
	// controller makes to a zone, through a providertest.Faulty per
	// controller and zone, each seeded from Seed (Faults.Seed is
	// ignored): a provider's bad day on top of the timeline. The zero
	// value injects nothing.
	Faults providertest.FaultConfig `json:"faults"`
	// Seed seeds the probe and heartbeat jitter and the random faults, so
	// runs repeat. Default (and 0) 1.
	Seed uint64 `json:"seed"`
	// Trace logs (t.Logf) every change of what a controller asks to
	// publish, with the virtual time. Default false.
	Trace bool `json:"trace"`
}

// DefaultConfig returns the configuration described field by field on
// Config: the heartbeat controller's layout and default timings.
func DefaultConfig() Config {
	tc := failover.DefaultTopologyConfig()
	tc.Service = "edge-internal"
	tc.Domain = "example.test"
	tc.AppNames = []failover.AppName{{Name: "httpbin.example.test"}}
	p := probe.DefaultPolicy()
	p.MaxBackoff = p.Interval
	hc := heartbeat.DefaultConfig()
	hc.BeatVersion = 2
	return Config{Topology: tc, Probe: p, Heartbeat: heartbeat.DefaultRules(), Publisher: hc, Seed: 1}
}

// FastConfig returns DefaultConfig with the embedded zone's timings:
// heartbeat.FastRules (beats every 2 s, fresh for 8 s) with
// heartbeat.FastConfig's retries, and probes every 2 s.
func FastConfig() Config {
	c := DefaultConfig()
	c.Heartbeat = heartbeat.FastRules()
	c.Publisher = heartbeat.FastConfig()
	c.Publisher.BeatVersion = 2
	c.Probe.Interval = 2 * time.Second
	c.Probe.MaxBackoff = c.Probe.Interval
	return c
}

// withDefaults fills the zero fields with DefaultConfig's.
func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.Topology.Service == "" && c.Topology.Domain == "" && len(c.Topology.AppNames) == 0 {
		c.Topology = d.Topology
	}
	if reflect.ValueOf(c.Probe).IsZero() {
		c.Probe = d.Probe
	}
	if reflect.ValueOf(c.Heartbeat).IsZero() {
		c.Heartbeat = d.Heartbeat
	}
	if reflect.ValueOf(c.Publisher).IsZero() {
		c.Publisher = d.Publisher
	}
	if c.Seed == 0 {
		c.Seed = d.Seed
	}
	return c
}

type plainConfig Config

type configJSON struct {
	plainConfig
	Reconcile jsontime.Duration `json:"reconcile"`
	WarmUp    jsontime.Duration `json:"warmUp"`
}

// MarshalJSON writes the durations as strings such as "10s".
func (c Config) MarshalJSON() ([]byte, error) {
	return json.Marshal(configJSON{plainConfig(c), jsontime.Duration(c.Reconcile), jsontime.Duration(c.WarmUp)})
}

// UnmarshalJSON reads the durations as strings such as "10s" or numbers of
// seconds; absent fields keep their values.
func (c *Config) UnmarshalJSON(b []byte) error {
	j := configJSON{plainConfig(*c), jsontime.Duration(c.Reconcile), jsontime.Duration(c.WarmUp)}
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*c = Config(j.plainConfig)
	c.Reconcile, c.WarmUp = j.Reconcile.D(), j.WarmUp.D()
	return nil
}

func fieldErr(field string, value any, allowed string) error {
	return fielderr.New(ErrInvalid, field, value, allowed)
}

// nested re-roots a nested config's *FieldError under field, with this
// package's prefix (the error matches the nested config's sentinel too);
// other errors are wrapped after the field's name.
func nested(field string, err error) error {
	var fe *fielderr.Error
	if errors.As(err, &fe) {
		return fielderr.In(field, fielderr.Both(ErrInvalid, fe.Err), err)
	}
	return fmt.Errorf("%w: %s: %w", ErrInvalid, field, err)
}

// Validate reports the first invalid field, naming it, its value and the
// allowed range (zero fields take DefaultConfig's values first); the error
// wraps ErrInvalid. Every field, the kit's own and those of nested
// configs (topology.ttl, probe.interval, ...), is reported as a
// *failover.FieldError under this package's prefix; a nested config's
// error also matches that config's own sentinel.
func (c Config) Validate() error {
	c = c.withDefaults()
	if err := c.Topology.Validate(); err != nil {
		return nested("topology", err)
	}
	if err := c.Probe.Validate(); err != nil {
		return nested("probe", err)
	}
	if err := c.Faults.Validate(); err != nil {
		return nested("faults", err)
	}
	if err := c.Heartbeat.Validate(); err != nil {
		return nested("heartbeat", err)
	}
	if err := c.publisher("validate", "validate").Validate(); err != nil {
		return nested("publisher", err)
	}
	if r := c.Reconcile; r != 0 && (r < 100*time.Millisecond || r > 10*time.Minute) {
		return fieldErr("reconcile", r, fielderr.DurationRange(100*time.Millisecond, 10*time.Minute)+", or 0 for the heartbeat interval")
	}
	if w := c.WarmUp; w < 0 || w > time.Hour {
		return fieldErr("warmUp", w, fielderr.DurationRange(0, time.Hour)+" (0: three reconcile intervals)")
	}
	return nil
}

// publisher returns the heartbeat publisher config of cluster in region.
func (c Config) publisher(cluster, region string) heartbeat.Config {
	hc := c.Publisher
	hc.Cluster, hc.Region, hc.Prefix = cluster, region, ""
	hc.LocalZone, hc.GlobalZone = c.localZone(), c.globalZone()
	hc.Local, hc.Global = c.Heartbeat, c.Heartbeat
	return hc
}

// faulty reports whether Faults injects anything.
func (c Config) faulty() bool {
	f := c.Faults
	return f.ThrottleRate+f.TransientRate+f.PermanentRate+f.PartialRate > 0 || f.Latency > 0 || f.LatencyJitter > 0
}

// interval is the controllers' reconcile interval.
func (c Config) interval() time.Duration {
	if c.Reconcile != 0 {
		return c.Reconcile
	}
	return time.Duration(c.Heartbeat.ReconcileInterval)
}

func (c Config) warmUp() time.Duration {
	if c.WarmUp != 0 {
		return c.WarmUp
	}
	return 3 * c.interval()
}

// globalZone is the zone of the global and failover names and of global
// beats.
func (c Config) globalZone() string {
	if c.Topology.GlobalZone != "" {
		return dnsname.Fqdn(c.Topology.GlobalZone)
	}
	return dnsname.Fqdn(c.Topology.Domain)
}

// localZone is the private zone each region has its own copy of: the
// regional name's parent, e.g. "local.example.test.".
func (c Config) localZone() string {
	return dnsname.Join(c.Topology.LocalLabel, dnsname.Fqdn(c.Topology.Domain))
}

// GatewayBound is the failover time for one gateway, without a TTL
// term (the kit's resolver asks the zones directly): the probe policy's
// worst-case detection plus one reconcile interval of publish delay.
func (c Config) GatewayBound() time.Duration {
	c = c.withDefaults()
	return probe.WorstCaseDetection(c.Probe) + c.interval()
}

// ControllerBound is the failover time for a cluster whose
// controller is gone (or a region lost whole): the heartbeat freshness
// bound seen by a peer that reads every reconcile interval
// (HealthyDuration + SkewTolerance + interval) plus one reconcile interval
// of publish delay.
func (c Config) ControllerBound() time.Duration {
	c = c.withDefaults()
	return c.Heartbeat.DetectionBound(false, c.interval()) + c.interval()
}

// RegionGatewaysBound is the failover time when every gateway of a region
// fails while its controllers live: the gateways are detected (the probe
// bound), the controllers stop writing beats, and peers see those beats
// stale (the controller bound).
func (c Config) RegionGatewaysBound() time.Duration {
	c = c.withDefaults()
	return probe.WorstCaseDetection(c.Probe) + c.ControllerBound()
}

// RecoveryBound is the kit's bound for a gateway or a region coming back:
// the probes see the gateway pass again (PassingThreshold probes one
// MaxBackoff apart — the longest delay between probes of a critical
// target under the record-service schedule, or UnhealthyInterval under
// Envoy's — jitter and the probe timeout included), its controller's next
// beat lands within one reconcile interval, peers read it within another,
// and publish within a third. A restarted controller beats at once and
// reconciles at most one interval later, inside the same bound.
func (c Config) RecoveryBound() time.Duration {
	c = c.withDefaults()
	gap := time.Duration(c.Probe.MaxBackoff)
	if c.Probe.Schedule == probe.ScheduleEnvoy {
		gap = time.Duration(c.Probe.UnhealthyInterval)
		if gap == 0 {
			gap = time.Duration(c.Probe.Interval)
		}
	}
	gap += c.Probe.MaxJitter(gap)
	return time.Duration(c.Probe.PassingThreshold)*gap + time.Duration(c.Probe.Timeout) + 3*c.interval()
}
