package main

import (
	"fmt"
	"net/netip"
	"strings"
	"sync"

	"github.com/libdns/libdns"

	"github.com/gslbkit/gslb/internal/dnsname"
	"github.com/gslbkit/gslb/provider"
	"github.com/gslbkit/gslb/provider/memory"
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
// region's private copy of the local zone (split horizon), mounted with
// provider.Mounts, which routes every libdns call by zone to the store
// holding it. In memory each region's copy of the local zone is a zone of
// its own. A single RFC 2136 server or Route 53 hosted zone has one copy
// of each name, so there the region's copy of "local.<domain>" is mounted
// from the subtree "<region>.local.<domain>" of the global zone, records
// renamed on the way in and out (CNAME targets are left alone). Mounts
// forwards the fenced write (record.Fencer) to the store. Safe for
// concurrent use.
type view struct {
	*provider.Mounts
	region string
}

// newView mounts the region's zones.
func newView(region string, mounts map[string]provider.Mount) (*view, error) {
	m, err := provider.NewMounts(mounts)
	if err != nil {
		return nil, fmt.Errorf("region %s: %w", region, err)
	}
	return &view{Mounts: m, region: region}, nil
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
	return newView(region, map[string]provider.Mount{
		m.names.global: {Store: m.global},
		m.names.local:  {Store: l},
	})
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
func subtreeView(p store, n names, region string) (*view, error) {
	sub, _ := dnsname.Relative(n.local, n.global) // "local"
	return newView(region, map[string]provider.Mount{
		n.global: {Store: p},
		n.local:  {Store: p, Zone: n.global, Below: region + "." + sub},
	})
}
