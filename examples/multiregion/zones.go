package main

import (
	"context"
	"fmt"
	"net/netip"
	"strings"

	"github.com/libdns/libdns"

	"github.com/gslbkit/gslb/internal/dnsname"
	"github.com/gslbkit/gslb/provider"
	"github.com/gslbkit/gslb/provider/memory"
	"github.com/gslbkit/gslb/provider/rfc2136"
)

// view is one region's view of the DNS: the shared global zone and the
// region's own copy of the private local zone (split horizon), mounted
// with provider.Mounts. In memory every region's copy of the local zone is
// a zone of its own. A single RFC 2136 server has one copy of each name,
// so there the region's copy of "local.<domain>" is mounted from the
// subtree "<region>.local.<domain>" of the global zone, records renamed on
// the way in and out (CNAME targets are left as they are). A view is safe
// for concurrent use.
type view struct {
	*provider.Mounts
	region string
	zones  []string // the mounted zones' names, fully qualified
}

// newView mounts the region's zones.
func newView(region string, mounts map[string]provider.Mount) (*view, error) {
	m, err := provider.NewMounts(mounts)
	if err != nil {
		return nil, fmt.Errorf("region %s: %w", region, err)
	}
	v := &view{Mounts: m, region: region}
	for z := range mounts {
		v.zones = append(v.zones, dnsname.Fqdn(z))
	}
	return v, nil
}

// zoneFor returns the zone of the view that holds name (the longest match).
func (v *view) zoneFor(name string) (string, bool) {
	best := ""
	for _, z := range v.zones {
		if dnsname.InZone(name, z) && len(z) > len(best) {
			best = z
		}
	}
	return best, best != ""
}

// describe says where the view's copy of zone lives, for the header.
func (v *view) describe(zone string) string {
	m, ok := v.Where(zone)
	if !ok {
		return "?"
	}
	if m.Below != "" {
		return fmt.Sprintf("%s, kept at %s", zone, dnsname.Join(m.Below, m.Zone))
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
			v, err := newView(r, map[string]provider.Mount{
				n.global: {Store: global},
				n.local:  {Store: local},
			})
			if err != nil {
				return nil, err
			}
			views[r] = v
		}
	case "rfc2136":
		p, err := rfc2136.New(opts.rfc)
		if err != nil {
			return nil, err
		}
		sub, _ := dnsname.Relative(n.local, n.global) // "local"
		for _, r := range regions {
			v, err := newView(r, map[string]provider.Mount{
				n.global: {Store: p},
				n.local:  {Store: p, Zone: n.global, Below: r + "." + sub},
			})
			if err != nil {
				return nil, err
			}
			views[r] = v
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
