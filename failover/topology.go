package failover

import (
	"encoding/json"
	"fmt"
	"github.com/gslbkit/gslb/internal/fielderr"
	"time"

	"github.com/gslbkit/gslb/internal/dnsname"
	"github.com/gslbkit/gslb/internal/jsontime"
)

// TopologyConfig describes one service's CNAME topology (the heartbeat
// controller's layout). With Service "edge" and Domain "example.com" the
// names are:
//
//	app names              CNAME edge.global.example.com.        (global zone, every controller)
//	edge.global.example.com.   CNAME edge.local.example.com.     (or the failover name)
//	edge.local.example.com.    A/AAAA  (each region's private zone, that region's controllers)
//	global-edge.global.example.com. A/AAAA (global zone, every controller)
//
// Start from DefaultTopologyConfig and set Service and Domain; a zero
// label, prefix or TTL takes its default. Fields are JSON-tagged; the TTL
// is written "30s".
type TopologyConfig struct {
	// Service is the service's label, e.g. "edge-internal". Required: a
	// DNS label (letters, digits, hyphens; 1–63 bytes).
	Service string `json:"service"`
	// Domain is the base domain the names are built under, e.g.
	// "example.com". Required.
	Domain string `json:"domain"`
	// GlobalZone is the zone that holds the global and failover names.
	// Default "" means Domain.
	GlobalZone string `json:"globalZone,omitempty"`
	// GlobalLabel is the label between the service and the domain in the
	// global and failover names. Default "global".
	GlobalLabel string `json:"globalLabel"`
	// LocalLabel is the label between the service and the domain in the
	// regional name. Default "local". Must differ from GlobalLabel.
	LocalLabel string `json:"localLabel"`
	// FailoverPrefix is prepended to the service label to form the
	// failover name's first label. Default "global-".
	FailoverPrefix string `json:"failoverPrefix"`
	// AppNames are the names users resolve (e.g. "httpbin.example.com");
	// each is a CNAME to the global name. Optional.
	AppNames []AppName `json:"appNames,omitempty"`
	// TTL is every record's time to live. Default (and 0) 30 s; allowed
	// 1 s to 24 h, whole seconds.
	TTL time.Duration `json:"ttl"`
	// AllUnhealthy says what happens to an address set (a regional record
	// or the failover record) with no served address. Default keepLast: the
	// set is omitted and the reconciler holds the last one. failOpen
	// publishes every address of the set's inventory; failClosed withdraws
	// the name; fallback holds the address sets and, while every region is
	// dead, points the global name at FallbackTarget (an address name
	// never switches to a CNAME).
	AllUnhealthy AllUnhealthy `json:"allUnhealthy"`
	// FallbackTarget is the CNAME target used by AllUnhealthy fallback;
	// required then, and must be empty otherwise.
	FallbackTarget string `json:"fallbackTarget,omitempty"`
	// PanicThreshold is Envoy's panic threshold for a region's regional
	// record, in percent, 0–100. When the addresses the regional record
	// would hold are fewer than PanicThreshold percent of the region's
	// addresses (strictly fewer; the percentage truncated to a whole
	// number), the region is treated as failed: its regional record holds
	// the failover record's addresses of the other regions instead, so its
	// clients move on rather than crowd onto the last survivors (when no
	// other region has any, the survivors stay). Pair it with a heartbeat
	// verdict that stops beating below the same threshold, so every
	// controller then fails the region over. Default 0: no panic mode (the
	// region's record shrinks to its last address, then AllUnhealthy
	// decides).
	PanicThreshold float64 `json:"panicThreshold,omitempty"`
}

// AppName is a name users resolve, published as a CNAME to the global name.
type AppName struct {
	// Name is the fully qualified name, e.g. "httpbin.example.com".
	Name string `json:"name"`
	// Zone is the zone that holds Name; "" means the global zone.
	Zone string `json:"zone,omitempty"`
}

// DefaultTopologyConfig returns the heartbeat controller's layout: labels
// "global" and "local", failover prefix "global-", TTL 30 s, keep last. The
// caller still sets Service and Domain.
func DefaultTopologyConfig() TopologyConfig {
	return TopologyConfig{
		GlobalLabel:    "global",
		LocalLabel:     "local",
		FailoverPrefix: "global-",
		TTL:            30 * time.Second,
	}
}

// withDefaults fills the zero fields that take a default.
func (c TopologyConfig) withDefaults() TopologyConfig {
	d := DefaultTopologyConfig()
	if c.GlobalLabel == "" {
		c.GlobalLabel = d.GlobalLabel
	}
	if c.LocalLabel == "" {
		c.LocalLabel = d.LocalLabel
	}
	if c.FailoverPrefix == "" {
		c.FailoverPrefix = d.FailoverPrefix
	}
	if c.TTL == 0 {
		c.TTL = d.TTL
	}
	return c
}

type plainTopology TopologyConfig

type topologyJSON struct {
	plainTopology
	TTL jsontime.Duration `json:"ttl"`
}

// MarshalJSON writes the TTL as a string such as "30s".
func (c TopologyConfig) MarshalJSON() ([]byte, error) {
	return json.Marshal(topologyJSON{plainTopology(c), jsontime.Duration(c.TTL)})
}

// UnmarshalJSON reads the TTL as a string such as "30s" or a number of
// seconds; absent fields keep their values.
func (c *TopologyConfig) UnmarshalJSON(b []byte) error {
	j := topologyJSON{plainTopology(*c), jsontime.Duration(c.TTL)}
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*c = TopologyConfig(j.plainTopology)
	c.TTL = j.TTL.D()
	return nil
}

// Validate reports the first invalid field as a *FieldError naming the
// field, its value and the allowed range (zero fields take their defaults
// first); the error wraps ErrInvalidConfig.
func (c TopologyConfig) Validate() error {
	_, err := c.withDefaults().names()
	return err
}

// topoNames are the names a valid config produces.
type topoNames struct {
	regional, global, failover, globalZone string
	apps                                   []AppName // fully qualified, with zones filled
}

func (c TopologyConfig) names() (topoNames, error) {
	var n topoNames
	if c.Service == "" && c.Domain == "" {
		return n, configErr("service", "", "a DNS label (required: start from failover.DefaultTopologyConfig and set service and domain)")
	}
	if err := dnsname.CheckLabel(c.Service, false); err != nil {
		return n, configErr("service", c.Service, dnsname.LabelRule)
	}
	if err := dnsname.Check(c.Domain); err != nil {
		return n, configErr("domain", c.Domain, dnsname.NameRule+", e.g. example.com")
	}
	if err := dnsname.CheckLabel(c.GlobalLabel, false); err != nil {
		return n, configErr("globalLabel", c.GlobalLabel, dnsname.LabelRule+", e.g. global")
	}
	if err := dnsname.CheckLabel(c.LocalLabel, false); err != nil {
		return n, configErr("localLabel", c.LocalLabel, dnsname.LabelRule+", e.g. local")
	}
	if dnsname.Equal(c.GlobalLabel, c.LocalLabel) {
		return n, configErr("localLabel", c.LocalLabel, "a label different from globalLabel")
	}
	if c.FailoverPrefix == "" || dnsname.CheckLabel(c.FailoverPrefix+c.Service, false) != nil {
		return n, configErr("failoverPrefix", c.FailoverPrefix, "a non-empty prefix that forms a DNS label with the service, e.g. global-")
	}
	ttl := c.TTL
	if ttl < time.Second || ttl > 24*time.Hour || ttl%time.Second != 0 {
		return n, configErr("ttl", ttl, "[1s, 24h] in whole seconds")
	}
	if !c.AllUnhealthy.valid() {
		return n, configErr("allUnhealthy", uint8(c.AllUnhealthy), allUnhealthyModes)
	}
	if err := checkFallback(c.AllUnhealthy, c.FallbackTarget); err != nil {
		return n, err
	}
	if !(c.PanicThreshold >= 0 && c.PanicThreshold <= 100) {
		return n, configErr("panicThreshold", c.PanicThreshold, fielderr.Range(0, 100)+" percent (0: off)")
	}
	n.regional = dnsname.Join(c.Service, dnsname.Join(c.LocalLabel, c.Domain))
	n.global = dnsname.Join(c.Service, dnsname.Join(c.GlobalLabel, c.Domain))
	n.failover = dnsname.Join(c.FailoverPrefix+c.Service, dnsname.Join(c.GlobalLabel, c.Domain))
	n.globalZone = dnsname.Fqdn(c.Domain)
	if c.GlobalZone != "" {
		if err := dnsname.Check(c.GlobalZone); err != nil {
			return n, configErr("globalZone", c.GlobalZone, dnsname.NameRule)
		}
		n.globalZone = dnsname.Fqdn(c.GlobalZone)
	}
	if !dnsname.InZone(n.global, n.globalZone) || dnsname.Equal(n.global, n.globalZone) {
		return n, configErr("globalZone", c.GlobalZone, "a zone strictly above "+n.global+" and "+n.failover)
	}
	if err := dnsname.Check(n.failover); err != nil {
		return n, configErr("domain", c.Domain, "a domain short enough for "+n.failover)
	}
	for i, a := range c.AppNames {
		f := fmt.Sprintf("appNames[%d]", i)
		if err := dnsname.Check(a.Name); err != nil {
			return n, configErr(f+".name", a.Name, dnsname.NameRule)
		}
		an := AppName{Name: dnsname.Fqdn(a.Name), Zone: n.globalZone}
		if a.Zone != "" {
			if err := dnsname.Check(a.Zone); err != nil {
				return n, configErr(f+".zone", a.Zone, dnsname.NameRule)
			}
			an.Zone = dnsname.Fqdn(a.Zone)
		}
		if !dnsname.InZone(an.Name, an.Zone) || an.Name == an.Zone {
			return n, configErr(f+".zone", an.Zone, "a zone strictly above "+an.Name+" (no CNAME at an apex; an empty zone means the global zone)")
		}
		if an.Name == n.global || an.Name == n.failover || an.Name == n.regional {
			return n, configErr(f+".name", a.Name, "a name other than the topology's own names")
		}
		n.apps = append(n.apps, an)
	}
	return n, nil
}

// checkFallback checks the pairing of AllUnhealthy and FallbackTarget.
func checkFallback(m AllUnhealthy, target string) error {
	if m == Fallback {
		if dnsname.Check(target) != nil {
			return configErr("fallbackTarget", target, dnsname.NameRule+", when allUnhealthy is fallback")
		}
		return nil
	}
	if target != "" {
		return configErr("fallbackTarget", target, "empty unless allUnhealthy is fallback")
	}
	return nil
}

// Topology computes the desired records of one service's CNAME topology
// from a Snapshot. It is immutable after NewTopology and safe for
// concurrent use; its methods are pure (no I/O, no clock, no goroutines).
type Topology struct {
	cfg      TopologyConfig
	names    topoNames
	ttl      time.Duration
	fallback string // fully qualified FallbackTarget
}

// NewTopology validates cfg and returns its policy. cfg is copied, with
// its zero fields defaulted; the caller's value is not modified. An invalid
// cfg gives a *FieldError wrapping ErrInvalidConfig.
func NewTopology(cfg TopologyConfig) (*Topology, error) {
	cfg = cfg.withDefaults()
	cfg.AppNames = append([]AppName(nil), cfg.AppNames...)
	n, err := cfg.names()
	if err != nil {
		return nil, err
	}
	t := &Topology{cfg: cfg, names: n, ttl: cfg.TTL}
	if cfg.AllUnhealthy == Fallback {
		t.fallback = dnsname.Fqdn(cfg.FallbackTarget)
	}
	return t, nil
}

// Config returns a copy of the topology's configuration.
func (t *Topology) Config() TopologyConfig {
	c := t.cfg
	c.AppNames = append([]AppName(nil), c.AppNames...)
	return c
}

// RegionalName returns the regional name, e.g. "edge.local.example.com.".
func (t *Topology) RegionalName() string { return t.names.regional }

// GlobalName returns the global name, e.g. "edge.global.example.com.".
func (t *Topology) GlobalName() string { return t.names.global }

// FailoverName returns the failover name, e.g. "global-edge.global.example.com.".
func (t *Topology) FailoverName() string { return t.names.failover }

// GlobalZone returns the zone holding the global and failover names.
func (t *Topology) GlobalZone() string { return t.names.globalZone }
