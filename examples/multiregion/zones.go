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
	"github.com/gslbkit/gslb/provider/rfc2136"
)

// store is what a controller needs of a DNS host: the libdns interfaces the
// heartbeat publisher and readers and the record reconciler use.
type store interface {
	libdns.RecordGetter
	libdns.RecordSetter
	libdns.RecordDeleter
}

// view is one region's view of the DNS: the shared global zone and the
// region's own copy of the private local zone (split horizon). It routes
// every libdns call by zone name to the store that holds that zone. In
// memory every region's copy of the local zone is a zone of its own. A
// single RFC 2136 server has one copy of each name, so there the view keeps
// the region's copy of "local.<domain>" in a subtree of the global zone,
// "<region>.local.<domain>", rewriting record names on the way in and out
// (CNAME targets are left as they are). A view is safe for concurrent use.
type view struct {
	region string
	zones  map[string]zoneRef // by the zone's name in the topology, fully qualified
}

// zoneRef says where a zone of the view lives: in store, as zone name,
// every record name followed by the relative labels suffix ("" for none).
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

// in renames records of the view's zone to the store's names.
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
			out = append(out, rr) // a delete's wildcard: nothing to parse
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

// out keeps the store's records inside the view's zone, renamed back.
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

// tickReads is one controller's reads of its view during one tick: each
// store zone is read once per tick however many of the view's zones live
// in it and however many readers ask (the two heartbeat readers and the
// read-backs of the shared sets), so a controller costs one zone transfer
// per zone per tick against an RFC 2136 server. Call reset at the start of
// every tick. Safe for concurrent use.
type tickReads struct {
	v    *view
	mu   sync.Mutex
	recs map[zoneRef][]libdns.Record
}

func (t *tickReads) reset() {
	t.mu.Lock()
	t.recs = nil
	t.mu.Unlock()
}

// GetRecords implements libdns.RecordGetter from this tick's reads.
func (t *tickReads) GetRecords(ctx context.Context, zone string) ([]libdns.Record, error) {
	z, err := t.v.route(zone)
	if err != nil {
		return nil, err
	}
	key := zoneRef{store: z.store, name: z.name}
	t.mu.Lock()
	recs, ok := t.recs[key]
	t.mu.Unlock()
	if !ok {
		if recs, err = z.store.GetRecords(ctx, z.name); err != nil {
			return nil, err
		}
		t.mu.Lock()
		if t.recs == nil {
			t.recs = map[zoneRef][]libdns.Record{}
		}
		t.recs[key] = recs
		t.mu.Unlock()
	}
	return z.out(recs), nil
}

// zoneFor returns the zone of the view that holds name (the longest match).
func (v *view) zoneFor(name string) (string, bool) {
	best := ""
	for z := range v.zones {
		if dnsname.InZone(name, z) && len(z) > len(best) {
			best = z
		}
	}
	return best, best != ""
}

// describe says where the view's copy of zone lives, for the header.
func (v *view) describe(zone string) string {
	z, err := v.route(zone)
	if err != nil {
		return "?"
	}
	if z.suffix != "" {
		return fmt.Sprintf("%s, kept at %s", zone, dnsname.Join(z.suffix, z.name))
	}
	return zone + ", a zone of its own"
}

// names are the zones and names of the deployment.
type names struct {
	domain string // "example.test."
	global string // the global zone, = domain
	local  string // "local.example.test.", every region's private zone
	app    string // "httpbin.example.test."
}

func newNames(domain string) names {
	d := dnsname.Fqdn(domain)
	return names{domain: d, global: d, local: dnsname.Join("local", d), app: dnsname.Join("httpbin", d)}
}

// short drops the domain from a name for the tables: "edge.global".
func (n names) short(name string) string {
	s := strings.TrimSuffix(dnsname.Fqdn(name), "."+n.domain)
	return strings.TrimSuffix(s, ".")
}

// buildViews creates the zones and returns one view per region.
func buildViews(opts options, n names, regions []string) (map[string]*view, error) {
	views := map[string]*view{}
	switch opts.provider {
	case "memory":
		global := new(memory.Provider)
		if err := global.AddZone(n.global); err != nil {
			return nil, err
		}
		for _, r := range regions {
			local := new(memory.Provider)
			if err := local.AddZone(n.local); err != nil {
				return nil, err
			}
			views[r] = &view{region: r, zones: map[string]zoneRef{
				n.global: {store: global, name: n.global},
				n.local:  {store: local, name: n.local},
			}}
		}
	case "rfc2136":
		p, err := rfc2136.New(opts.rfc)
		if err != nil {
			return nil, err
		}
		sub, _ := dnsname.Relative(n.local, n.global) // "local"
		for _, r := range regions {
			views[r] = &view{region: r, zones: map[string]zoneRef{
				n.global: {store: p, name: n.global},
				n.local:  {store: p, name: n.global, suffix: r + "." + sub},
			}}
		}
	default:
		return nil, fmt.Errorf("unknown provider %q", opts.provider)
	}
	return views, nil
}

// resolution is how a name resolves from one region: the CNAME chain
// followed and the IPv4 addresses at its end.
type resolution struct {
	chain []string // the names after the first, fully qualified
	addrs []netip.Addr
	err   error
}

// target is the last CNAME target ("" when the name has no CNAME).
func (r resolution) target() string {
	if len(r.chain) == 0 {
		return ""
	}
	return r.chain[len(r.chain)-1]
}

// resolve follows name's CNAME chain through the view's zones, as a
// resolver in the region would, and returns the A records at its end. It
// reads each zone at most once.
func (v *view) resolve(ctx context.Context, name string) resolution {
	var res resolution
	cache := map[string][]libdns.RR{}
	cur := dnsname.Fqdn(name)
	for hop := 0; hop < 8; hop++ {
		zone, ok := v.zoneFor(cur)
		if !ok {
			res.err = fmt.Errorf("%s is outside every zone", cur)
			return res
		}
		rrs, ok := cache[zone]
		if !ok {
			recs, err := v.GetRecords(ctx, zone)
			if err != nil {
				res.err = err
				return res
			}
			for _, r := range recs {
				rrs = append(rrs, r.RR())
			}
			cache[zone] = rrs
		}
		rel, _ := dnsname.Relative(cur, zone)
		next := ""
		for _, rr := range rrs {
			if !strings.EqualFold(rr.Name, rel) {
				continue
			}
			switch rr.Type {
			case "CNAME":
				next = dnsname.Fqdn(rr.Data)
			case "A":
				if a, err := netip.ParseAddr(rr.Data); err == nil {
					res.addrs = append(res.addrs, a)
				}
			}
		}
		if next == "" {
			sortAddrs(res.addrs)
			return res
		}
		res.chain = append(res.chain, next)
		cur = next
	}
	res.err = fmt.Errorf("CNAME chain of %s too long", name)
	return res
}
