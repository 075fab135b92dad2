package failover

import (
	"fmt"
	"github.com/gslbkit/gslb/internal/fielderr"
	"net/netip"
	"slices"
	"time"

	"github.com/gslbkit/gslb/internal/dnsname"
)

// Record is the record service's model of one name: its endpoints with
// region tags and health, an optional failover FQDN in a backup zone and a
// disabled flag. It is plain data; policies never modify it.
type Record struct {
	// Name is the fully qualified name clients resolve, e.g.
	// "api.gslb.example.com". Required; it must not be Zone's apex.
	Name string
	// Zone is the fully qualified zone holding Name and its pool name.
	Zone string
	// TTL is the records' time to live: whole seconds from 1 s to 24 h.
	TTL time.Duration
	// Endpoints are the name's addresses. An address appears once.
	Endpoints []Endpoint
	// FailoverFQDN, when set, is answered (as a CNAME) while no endpoint is
	// served or the record is disabled. It must differ from Name.
	FailoverFQDN string
	// Disabled takes the record out of service until cleared: it answers
	// the failover FQDN, or is withdrawn when there is none.
	Disabled bool
	// Pool overrides the pool name (provider output); "" means
	// "<name relative to Zone>.<poolLabel>.<Zone>".
	Pool string
}

// ForRegions returns a copy of r that keeps only the endpoints tagged with
// at least one of regions: the region-filtered view. With no regions it
// keeps none.
func (r Record) ForRegions(regions ...string) Record {
	out := r
	out.Endpoints = nil
	for _, e := range r.Endpoints {
		if e.hasRegion(regions) {
			out.Endpoints = append(out.Endpoints, e)
		}
	}
	return out
}

// Tags returns each endpoint's region tags, for RegionFilter and Geo.
func (r Record) Tags() map[netip.Addr][]string {
	m := make(map[netip.Addr][]string, len(r.Endpoints))
	for _, e := range r.Endpoints {
		m[e.IP.Unmap()] = slices.Clone(e.Regions)
	}
	return m
}

// Weights returns each endpoint's weight, for WeightedRandom.
func (r Record) Weights() map[netip.Addr]int {
	m := make(map[netip.Addr]int, len(r.Endpoints))
	for _, e := range r.Endpoints {
		m[e.IP.Unmap()] = e.Weight
	}
	return m
}

// RecordConfig configures a RecordPolicy. Start from DefaultRecordConfig
// or a preset; the zero RecordConfig is the default (a zero PoolLabel
// means "pool"). Fields are JSON-tagged.
type RecordConfig struct {
	// PoolLabel is the label that places pool names under the zone:
	// "<name>.<poolLabel>.<zone>". Default (and "") "pool".
	PoolLabel string `json:"poolLabel"`
	// Strategy chooses the published endpoints among the healthy ones.
	// Default allHealthy.
	Strategy Strategy `json:"strategy"`
	// AllUnhealthy says what happens when no endpoint is served and the
	// record has no failover FQDN. Default keepLast.
	AllUnhealthy AllUnhealthy `json:"allUnhealthy"`
	// FallbackTarget is the CNAME target for AllUnhealthy fallback;
	// required then, empty otherwise.
	FallbackTarget string `json:"fallbackTarget,omitempty"`
}

// DefaultRecordConfig returns gslbkit's defaults: pool label "pool", all
// healthy endpoints, and keep the last published set when none is healthy
// and the record has no failover FQDN.
func DefaultRecordConfig() RecordConfig {
	return RecordConfig{PoolLabel: "pool"}
}

// RecordServiceConfig returns DefaultRecordConfig with the record service's
// rule for a record without a failover FQDN whose endpoints are all down:
// the name answers nothing (fail closed: it is withdrawn).
func RecordServiceConfig() RecordConfig {
	c := DefaultRecordConfig()
	c.AllUnhealthy = FailClosed
	return c
}

// Route53RecordConfig returns DefaultRecordConfig with Route 53's rule for
// a routing set with no healthy record: treat them all as healthy (fail
// open).
func Route53RecordConfig() RecordConfig {
	c := DefaultRecordConfig()
	c.AllUnhealthy = FailOpen
	return c
}

// Validate reports the first invalid field as a *FieldError wrapping
// ErrInvalidConfig (a zero PoolLabel takes its default first).
func (c RecordConfig) Validate() error {
	c = c.withDefaults()
	if err := dnsname.CheckLabel(c.PoolLabel, false); err != nil {
		return configErr("poolLabel", c.PoolLabel, dnsname.LabelRule+", e.g. pool")
	}
	if err := c.Strategy.Validate(); err != nil {
		return err
	}
	if !c.AllUnhealthy.valid() {
		return configErr("allUnhealthy", uint8(c.AllUnhealthy), allUnhealthyModes)
	}
	return checkFallback(c.AllUnhealthy, c.FallbackTarget)
}

func (c RecordConfig) withDefaults() RecordConfig {
	if c.PoolLabel == "" {
		c.PoolLabel = DefaultRecordConfig().PoolLabel
	}
	return c
}

// RecordPolicy turns Records into desired states. It is immutable and safe
// for concurrent use; its methods are pure.
type RecordPolicy struct {
	cfg      RecordConfig
	fallback string // fully qualified FallbackTarget
}

// NewRecordPolicy validates cfg and returns its policy; cfg is copied.
func NewRecordPolicy(cfg RecordConfig) (*RecordPolicy, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	cfg.Strategy.Order = slices.Clone(cfg.Strategy.Order)
	p := &RecordPolicy{cfg: cfg}
	if cfg.AllUnhealthy == Fallback {
		p.fallback = dnsname.Fqdn(cfg.FallbackTarget)
	}
	return p, nil
}

// recordNames are a validated record's names.
type recordNames struct {
	name, zone, pool, failover string
}

// check validates r and returns its names; errors wrap ErrInvalidSnapshot.
func (p *RecordPolicy) check(r *Record) (recordNames, error) {
	var n recordNames
	if dnsname.Check(r.Name) != nil {
		return n, snapErr("name", r.Name, dnsname.NameRule)
	}
	if dnsname.Check(r.Zone) != nil {
		return n, snapErr("zone", r.Zone, dnsname.NameRule)
	}
	n.name, n.zone = dnsname.Fqdn(r.Name), dnsname.Fqdn(r.Zone)
	rel, ok := dnsname.Relative(n.name, n.zone)
	if !ok || rel == "@" {
		return n, snapErr("zone", r.Zone, "a zone strictly above "+n.name)
	}
	if r.TTL < time.Second || r.TTL > 24*time.Hour || r.TTL%time.Second != 0 {
		return n, snapErr("ttl", r.TTL, "[1s, 24h] in whole seconds")
	}
	n.pool = dnsname.Join(rel, dnsname.Join(p.cfg.PoolLabel, n.zone))
	if r.Pool != "" {
		if dnsname.Check(r.Pool) != nil {
			return n, snapErr("pool", r.Pool, dnsname.NameRule)
		}
		n.pool = dnsname.Fqdn(r.Pool)
	}
	if dnsname.Check(n.pool) != nil || !dnsname.InZone(n.pool, n.zone) || n.pool == n.name {
		return n, snapErr("pool", n.pool, "a valid name inside "+n.zone+", other than the record's name")
	}
	if r.FailoverFQDN != "" {
		if dnsname.Check(r.FailoverFQDN) != nil || dnsname.Equal(r.FailoverFQDN, n.name) {
			return n, snapErr("failoverFQDN", r.FailoverFQDN, dnsname.NameRule+", other than the record's name")
		}
		n.failover = dnsname.Fqdn(r.FailoverFQDN)
	}
	seen := make(map[netip.Addr]bool, len(r.Endpoints))
	for i, e := range r.Endpoints {
		f := fmt.Sprintf("endpoints[%d]", i)
		a := e.IP.Unmap()
		if !a.IsValid() || a.IsUnspecified() || seen[a] {
			return n, snapErr(f+".ip", e.IP, "a valid, specified address not listed twice")
		}
		seen[a] = true
		if e.Health > Recovery {
			return n, snapErr(f+".health", e.Health, healthValues)
		}
		if e.Weight < 0 || e.Weight > 65535 {
			return n, snapErr(f+".weight", e.Weight, fielderr.Range(0, 65535))
		}
	}
	return n, nil
}

// PoolName returns the name that holds r's address set in provider output.
func (p *RecordPolicy) PoolName(r Record) (string, error) {
	n, err := p.check(&r)
	return n.pool, err
}

// Provider returns r's desired state for an external provider, where a
// name must never switch type: Name is always a CNAME, to the pool name
// (which holds the A/AAAA set chosen by the strategy) or to the failover
// FQDN. In detail:
//
//   - some endpoint served: Name → pool; the pool holds the chosen set;
//   - none served or disabled, failover FQDN set: Name → failover FQDN, the
//     pool is left alone (held);
//   - disabled without failover FQDN: Name withdrawn;
//   - none served without failover FQDN: keepLast keeps Name → pool and
//     holds the pool; failOpen publishes every endpoint in the pool;
//     failClosed withdraws Name; fallback points Name at the fallback
//     target.
//
// Every set is written by everyone (Writers is the zero scope). An invalid
// record gives an error wrapping ErrInvalidSnapshot.
func (p *RecordPolicy) Provider(r Record) (DesiredState, error) {
	n, err := p.check(&r)
	if err != nil {
		return DesiredState{}, err
	}
	var d DesiredState
	chosen := p.choose(&r, n)
	switch {
	case len(chosen) > 0:
		d.Sets = append(d.Sets, cnameSet(n.zone, "", n.name, n.pool, r.TTL, Everyone))
		addrOut(&d, n.zone, "", n.pool, chosen, r.TTL, Everyone)
	case n.failover != "":
		d.Sets = append(d.Sets, cnameSet(n.zone, "", n.name, n.failover, r.TTL, Everyone))
	case r.Disabled || p.cfg.AllUnhealthy == FailClosed:
		d.Withdraws = append(d.Withdraws, Withdraw{Zone: n.zone, Name: n.name})
	case p.cfg.AllUnhealthy == Fallback:
		d.Sets = append(d.Sets, cnameSet(n.zone, "", n.name, p.fallback, r.TTL, Everyone))
	default: // keepLast, or failOpen with no endpoint at all
		d.Sets = append(d.Sets, cnameSet(n.zone, "", n.name, n.pool, r.TTL, Everyone))
	}
	d.sort()
	return d, nil
}

// Decide returns r's Provider output as a Decision (only Desired is set),
// so a RecordPolicy is a Decider[Record]; now is not read. For the embedded
// zone's output, wrap Embedded in a DeciderFunc.
func (p *RecordPolicy) Decide(_ time.Time, r Record) (Decision, error) {
	d, err := p.Provider(r)
	return Decision{Desired: d}, err
}

// Embedded returns r's desired state for the embedded zone, which swaps
// whole snapshots and so may switch a name between A/AAAA and CNAME (the
// caller must allow type switches in its reconciler): Name holds the
// chosen A/AAAA set directly, or a CNAME to the failover FQDN (or fallback
// target), or is withdrawn, by the same rules as Provider. With keepLast
// and nothing served, Name is omitted.
func (p *RecordPolicy) Embedded(r Record) (DesiredState, error) {
	n, err := p.check(&r)
	if err != nil {
		return DesiredState{}, err
	}
	var d DesiredState
	chosen := p.choose(&r, n)
	switch {
	case len(chosen) > 0:
		addrOut(&d, n.zone, "", n.name, chosen, r.TTL, Everyone)
	case n.failover != "":
		d.Sets = append(d.Sets, cnameSet(n.zone, "", n.name, n.failover, r.TTL, Everyone))
	case r.Disabled || p.cfg.AllUnhealthy == FailClosed:
		d.Withdraws = append(d.Withdraws, Withdraw{Zone: n.zone, Name: n.name})
	case p.cfg.AllUnhealthy == Fallback:
		d.Sets = append(d.Sets, cnameSet(n.zone, "", n.name, p.fallback, r.TTL, Everyone))
	}
	d.sort()
	return d, nil
}

// choose returns the addresses r publishes: the strategy's choice among
// served endpoints, every endpoint under failOpen (when no failover FQDN
// takes precedence), or nil.
func (p *RecordPolicy) choose(r *Record, n recordNames) []netip.Addr {
	if r.Disabled {
		return nil
	}
	sel := p.cfg.Strategy.Select(r.Endpoints)
	if len(sel) == 0 && n.failover == "" && p.cfg.AllUnhealthy == FailOpen {
		sel = r.Endpoints
	}
	addrs := make([]netip.Addr, 0, len(sel))
	for _, e := range sel {
		addrs = append(addrs, e.IP)
	}
	return normAddrs(addrs)
}
