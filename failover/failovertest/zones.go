package failovertest

import (
	"context"
	"net/netip"
	"slices"

	"github.com/libdns/libdns"
	"github.com/miekg/dns"

	"github.com/gslbkit/gslb/internal/dnsname"
	"github.com/gslbkit/gslb/provider/providertest"
	"github.com/gslbkit/gslb/record"
)

// Resolve returns the addresses (A and AAAA, sorted, IPv4-mapped
// addresses unmapped) a client in region gets for name: the kit's
// resolver asks the zones directly, following CNAMEs across them — the
// region's private zone for names in the local zone, the global zone for
// the others — so no TTL is involved. A name that leads nowhere gives
// nil.
func (w *World) Resolve(region, name string) []netip.Addr {
	addrs, _ := w.lookup(region, name, defaultClient)
	return addrs
}

// ResolveFrom is Resolve for a client at address client, which the zones'
// answer hooks see as the query's source (e.g. failover.Geo installed on
// a zone with World.Zone(...).SetAnswerFunc).
func (w *World) ResolveFrom(region, name string, client netip.Addr) []netip.Addr {
	addrs, _ := w.lookup(region, name, client)
	return addrs
}

// Chain returns the names Resolve visits for name in region, name first,
// each CNAME target after it.
func (w *World) Chain(region, name string) []string {
	_, chain := w.lookup(region, name, defaultClient)
	return chain
}

// defaultClient is the source address of Resolve's queries.
var defaultClient = netip.AddrFrom4([4]byte{10, 0, 0, 1})

// maxHops bounds the CNAME chain the resolver follows.
const maxHops = 16

func (w *World) lookup(region, name string, src netip.Addr) ([]netip.Addr, []string) {
	cur := dnsname.Fqdn(name)
	chain := []string{cur}
	for range maxHops {
		p := w.global
		if dnsname.InZone(cur, w.s.cfg.localZone()) {
			p = w.locals[region]
		} else if !dnsname.InZone(cur, w.s.cfg.globalZone()) {
			return nil, chain
		}
		if p == nil {
			return nil, chain
		}
		var addrs []netip.Addr
		var hops []string // CNAME targets inside this zone, in order
		for i, qt := range []uint16{dns.TypeA, dns.TypeAAAA} {
			m := new(dns.Msg)
			m.SetQuestion(cur, qt)
			resp := p.Respond(m, src, false)
			if resp == nil {
				continue
			}
			at := cur
			for _, rr := range resp.Answer {
				if !dnsname.Equal(rr.Header().Name, at) {
					continue
				}
				switch v := rr.(type) {
				case *dns.CNAME:
					at = dnsname.Fqdn(v.Target)
					if i == 0 {
						hops = append(hops, at)
					}
				case *dns.A:
					if ip, ok := netip.AddrFromSlice(v.A); ok {
						addrs = append(addrs, ip.Unmap())
					}
				case *dns.AAAA:
					if ip, ok := netip.AddrFromSlice(v.AAAA); ok {
						addrs = append(addrs, ip.Unmap())
					}
				}
			}
		}
		chain = append(chain, hops...)
		if len(addrs) > 0 {
			slices.SortFunc(addrs, netip.Addr.Compare)
			return slices.Compact(addrs), chain
		}
		if len(hops) == 0 {
			return nil, chain
		}
		cur = hops[len(hops)-1]
	}
	return nil, chain
}

// store is one controller's access to one zone: the memory provider with
// the scripted faults in front (and Config.Faults behind them), counting
// the writes that land.
type store struct {
	w      *World
	zone   Zone
	region string // the accessing controller's region
	p      record.ZoneEditor
}

// newStore returns region's access to zone z.
func (w *World) newStore(region string, z Zone) (*store, error) {
	st := &store{w: w, zone: z, region: region, p: w.Zone(z)}
	if w.s.cfg.faulty() {
		fc := w.s.cfg.Faults
		fc.Seed = w.seed()
		f, err := providertest.NewFaulty(w.Zone(z), fc)
		if err != nil {
			return nil, err
		}
		st.p = f
		w.mu.Lock()
		w.faulties = append(w.faulties, f)
		w.mu.Unlock()
	}
	return st, nil
}

// InjectedFaults returns how many calls Config.Faults has faulted or
// delayed so far, over every controller and zone (restarted controllers'
// included).
func (w *World) InjectedFaults() int {
	w.mu.Lock()
	fs := slices.Clone(w.faulties)
	w.mu.Unlock()
	n := 0
	for _, f := range fs {
		n += len(f.Faults())
	}
	return n
}

// GetRecords lists zone unless a throttle or Unreadable stops the call.
func (st *store) GetRecords(ctx context.Context, zone string) ([]libdns.Record, error) {
	if err := st.w.fault(st.region, st.zone, false); err != nil {
		return nil, err
	}
	return st.p.GetRecords(ctx, zone)
}

// SetRecords sets RRsets unless a throttle stops the call; it counts the
// write and re-evaluates watches and conditions.
func (st *store) SetRecords(ctx context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
	if err := st.w.fault(st.region, st.zone, true); err != nil {
		return nil, err
	}
	out, err := st.p.SetRecords(ctx, zone, recs)
	st.w.wrote(zone, recs, err == nil)
	return out, err
}

// DeleteRecords deletes records unless a throttle stops the call; it counts
// the write and re-evaluates watches and conditions.
func (st *store) DeleteRecords(ctx context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
	if err := st.w.fault(st.region, st.zone, true); err != nil {
		return nil, err
	}
	out, err := st.p.DeleteRecords(ctx, zone, recs)
	st.w.wrote(zone, recs, err == nil)
	return out, err
}
