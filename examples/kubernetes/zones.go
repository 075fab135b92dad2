package main

import (
	"context"
	"fmt"
	"net/netip"
	"strings"
	"sync"

	"github.com/libdns/libdns"

	"github.com/gslbkit/gslb/internal/dnsname"
	"github.com/gslbkit/gslb/provider/memory"
	"github.com/gslbkit/gslb/record"
)

// store is what the controller needs of a DNS host: the libdns interfaces
// the heartbeat publisher and readers and the record reconciler use.
type store interface {
	libdns.RecordGetter
	libdns.RecordSetter
	libdns.RecordDeleter
}

// names are the zones of the deployment.
type names struct {
	domain string // "example.test."
	global string // the global zone, = domain
	local  string // "local.example.test.", every region's private zone
}

func newNames(domain string) names {
	d := dnsname.Fqdn(domain)
	return names{domain: d, global: d, local: dnsname.Join("local", d)}
}

// view is one region's view of the DNS: the shared global zone and the
// region's private copy of the local zone (split horizon). It routes every
// libdns call by zone to the store holding it. A single RFC 2136 server
// has one copy of each name, so there the region's copy of
// "local.<domain>" lives in the subtree "<region>.local.<domain>" of the
// global zone, and the view renames records on the way in and out (CNAME
// targets are left alone). Safe for concurrent use.
type view struct {
	region string
	zones  map[string]zoneRef // by the zone's name in the topology
}

// zoneRef says where a zone of the view lives: in store, as zone name,
// every record name followed by suffix ("" for none).
type zoneRef struct {
	store  store
	name   string
	suffix string
}

func (v *view) route(zone string) (zoneRef, error) {
	z, ok := v.zones[dnsname.Fqdn(zone)]
	if !ok {
		return zoneRef{}, fmt.Errorf("region %s: no zone %q in this view", v.region, zone)
	}
	return z, nil
}

func (z zoneRef) in(recs []libdns.Record) ([]libdns.Record, error) {
	if z.suffix == "" {
		return recs, nil
	}
	out := make([]libdns.Record, 0, len(recs))
	for _, r := range recs {
		rr := r.RR()
		if rr.Name == "@" || rr.Name == "" {
			rr.Name = z.suffix
		} else {
			rr.Name += "." + z.suffix
		}
		if rr.Data == "" {
			out = append(out, rr)
			continue
		}
		p, err := rr.Parse()
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

func (z zoneRef) out(recs []libdns.Record) []libdns.Record {
	if z.suffix == "" {
		return recs
	}
	out := make([]libdns.Record, 0, len(recs))
	for _, r := range recs {
		rr := r.RR()
		name := strings.ToLower(rr.Name)
		switch {
		case name == z.suffix:
			rr.Name = "@"
		case strings.HasSuffix(name, "."+z.suffix):
			rr.Name = name[:len(name)-len(z.suffix)-1]
		default:
			continue
		}
		if p, err := rr.Parse(); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// GetRecords implements libdns.RecordGetter.
func (v *view) GetRecords(ctx context.Context, zone string) ([]libdns.Record, error) {
	z, err := v.route(zone)
	if err != nil {
		return nil, err
	}
	recs, err := z.store.GetRecords(ctx, z.name)
	if err != nil {
		return nil, err
	}
	return z.out(recs), nil
}

// SetRecords implements libdns.RecordSetter.
func (v *view) SetRecords(ctx context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
	z, err := v.route(zone)
	if err != nil {
		return nil, err
	}
	in, err := z.in(recs)
	if err != nil {
		return nil, err
	}
	set, err := z.store.SetRecords(ctx, z.name, in)
	return z.out(set), err
}

// DeleteRecords implements libdns.RecordDeleter.
func (v *view) DeleteRecords(ctx context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
	z, err := v.route(zone)
	if err != nil {
		return nil, err
	}
	in, err := z.in(recs)
	if err != nil {
		return nil, err
	}
	del, err := z.store.DeleteRecords(ctx, z.name, in)
	return z.out(del), err
}

// ReplaceFenced implements record.Fencer when the zone's store does (the
// embedded zone, RFC 2136, Route 53): the fenced write, renamed into the
// store's names like every other write.
func (v *view) ReplaceFenced(ctx context.Context, zone string, was, now libdns.TXT, del, set []libdns.Record) error {
	z, err := v.route(zone)
	if err != nil {
		return err
	}
	f, ok := z.store.(record.Fencer)
	if !ok {
		return record.ErrCannotFence
	}
	del, err = z.in(del)
	if err != nil {
		return err
	}
	set, err = z.in(set)
	if err != nil {
		return err
	}
	if z.suffix != "" {
		was.Name, now.Name = was.Name+"."+z.suffix, now.Name+"."+z.suffix
	}
	return f.ReplaceFenced(ctx, z.name, was, now, del, set)
}

// memoryZones are the embedded zones of one process: the global zone and
// one private copy of the local zone per region.
type memoryZones struct {
	names  names
	global *memory.Provider
	mu     sync.Mutex
	locals map[string]*memory.Provider
}

func newMemoryZones(n names) (*memoryZones, error) {
	g := new(memory.Provider)
	if err := g.AddZone(n.global); err != nil {
		return nil, err
	}
	return &memoryZones{names: n, global: g, locals: map[string]*memory.Provider{}}, nil
}

// local returns region's private copy of the local zone.
func (m *memoryZones) local(region string) (*memory.Provider, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if p, ok := m.locals[region]; ok {
		return p, nil
	}
	p := new(memory.Provider)
	if err := p.AddZone(m.names.local); err != nil {
		return nil, err
	}
	m.locals[region] = p
	return p, nil
}

// view returns region's view of the embedded zones.
func (m *memoryZones) view(region string) (*view, error) {
	l, err := m.local(region)
	if err != nil {
		return nil, err
	}
	return &view{region: region, zones: map[string]zoneRef{
		m.names.global: {store: m.global, name: m.names.global},
		m.names.local:  {store: l, name: m.names.local},
	}}, nil
}

// addrsAt returns the A and AAAA addresses at name (fully qualified) among
// recs of zone.
func addrsAt(recs []libdns.Record, zone, name string) []netip.Addr {
	rel, _ := dnsname.Relative(name, zone)
	var out []netip.Addr
	for _, r := range recs {
		rr := r.RR()
		if !strings.EqualFold(rr.Name, rel) || (rr.Type != "A" && rr.Type != "AAAA") {
			continue
		}
		if a, err := netip.ParseAddr(rr.Data); err == nil {
			out = append(out, a)
		}
	}
	return out
}

// subtreeView is region's view of one primary (RFC 2136, Route 53) holding
// the global zone, with the region's local zone in a subtree of it.
func subtreeView(p store, n names, region string) *view {
	sub, _ := dnsname.Relative(n.local, n.global) // "local"
	return &view{region: region, zones: map[string]zoneRef{
		n.global: {store: p, name: n.global},
		n.local:  {store: p, name: n.global, suffix: region + "." + sub},
	}}
}
