package memory

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/gslbkit/gslb/internal/zonerecord"
	"github.com/gslbkit/gslb/provider/internal/zonedata"
	"github.com/libdns/libdns"
	"github.com/miekg/dns"
)

// Snapshot is a whole copy of a Provider's zones at one version, in the form
// replication sends over the wire (JSON).
type Snapshot struct {
	// Format is the format version (ReplicationFormat when written here).
	Format int `json:"format,omitempty"`
	// Version is the Provider's version the copy was taken at.
	Version uint64 `json:"version"`
	// Epoch is the Provider's epoch (see Provider.Epoch): versions of one
	// epoch are one history.
	Epoch string `json:"epoch,omitempty"`
	// Zones are sorted by name.
	Zones []ZoneSnapshot `json:"zones"`
}

// ZoneSnapshot is one zone in a Snapshot: its SOA and every other record.
type ZoneSnapshot struct {
	// Name is fully qualified, lower case.
	Name string `json:"name"`
	SOA  SOA    `json:"soa"`
	// Records are in GetRecords order, apex NS included.
	Records []ZoneRecord `json:"records"`
}

// Snapshot returns a copy of every zone at the current version. It never
// blocks writers.
func (p *Provider) Snapshot() Snapshot {
	return p.load().snapshot()
}

func (s *state) snapshot() Snapshot {
	out := Snapshot{Format: ReplicationFormat, Version: s.version, Epoch: s.epoch, Zones: []ZoneSnapshot{}}
	for _, name := range sortedZoneNames(s.Zones) {
		z := s.Zones[name]
		zs := ZoneSnapshot{Name: z.Name, SOA: SOA(z.SOA), Records: []ZoneRecord{}}
		for _, r := range z.Records() {
			zs.Records = append(zs.Records, zoneRecord(z.Name, r))
		}
		out.Zones = append(out.Zones, zs)
	}
	return out
}

// zoneRecord returns r, a record of zone, as a ZoneRecord.
func zoneRecord(zone string, r rec) ZoneRecord {
	h := r.Wire.Header()
	zr := ZoneRecord{Name: zonerecord.Rel(h.Name, zone), Type: dns.TypeToString[h.Rrtype], TTL: h.Ttl, Data: r.Data()}
	if t, ok := r.Wire.(*dns.TXT); ok {
		ss := zonerecord.TXTStrings(t)
		if _, plain := zonerecord.TXTData(ss); !plain {
			zr.Data, zr.Strings = strings.Join(ss, ""), ss
		}
	}
	return zr
}

// Record returns r as the libdns record it was written as: a TXT whose
// Strings are set as a libdns.RR in presentation form, any other TXT as a
// libdns.TXT, the rest as a libdns.RR.
func (r ZoneRecord) Record() libdns.Record {
	ttl := time.Duration(r.TTL) * time.Second
	if strings.EqualFold(r.Type, "TXT") {
		if r.Strings != nil {
			return libdns.RR{Name: r.Name, Type: r.Type, TTL: ttl, Data: zonerecord.TXTPresentation(r.Strings)}
		}
		return libdns.TXT{Name: r.Name, TTL: ttl, Text: r.Data}
	}
	return libdns.RR{Name: r.Name, Type: r.Type, TTL: ttl, Data: r.Data}
}

func sortedZoneNames(m map[string]*zone) []string {
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sortStrings(names)
	return names
}

// buildZone validates a zone snapshot and builds the zone.
func buildZone(ctx context.Context, zs ZoneSnapshot) (*zone, error) {
	zb, err := newZoneBuild(ctx, zs.Name, zs.SOA)
	if err != nil {
		return nil, err
	}
	for _, zr := range zs.Records {
		if err := zb.add(zr); err != nil {
			return nil, err
		}
	}
	return zb.finish()
}

func checkSOA(s SOA) error {
	for _, n := range []struct{ field, v string }{{"soa.ns", s.NS}, {"soa.mbox", s.Mbox}} {
		if _, ok := dns.IsDomainName(zoneKey(n.v)); !ok || n.v == "" {
			return fmt.Errorf("%w: %s %q is not a valid domain name", ErrInvalidZone, n.field, n.v)
		}
	}
	for _, v := range []struct {
		field string
		v     uint32
	}{{"soa.ttl", s.TTL}, {"soa.refresh", s.Refresh}, {"soa.retry", s.Retry}, {"soa.expire", s.Expire}, {"soa.minimum", s.Minimum}} {
		if v.v > maxTTL {
			return fmt.Errorf("%w: %s %d is out of range (allowed 0 to %d)", ErrInvalidZone, v.field, v.v, maxTTL)
		}
	}
	return nil
}

// Restore replaces every zone the Provider holds by the zones of s (zones
// absent from s are removed), atomically: on error nothing changes. The
// Provider's version moves to one past its current version (s.Version and
// s.Epoch are the source's and are not adopted), and its journal restarts
// there, so a replica of this Provider needs a full snapshot afterwards.
func (p *Provider) Restore(s Snapshot) error {
	return p.RestoreContext(context.Background(), s)
}

// Resume replaces every zone like Restore, and also adopts s's Version and
// Epoch as the Provider's own, with an empty journal: replicas that hold
// s.Epoch at s.Version go on with the changes made after it, without a full
// snapshot. It is how a controller restarted from a copy of its zones it
// saved itself (Snapshot) continues its history. It refuses an s with no
// Epoch, and an s whose Version is below the Provider's own.
//
// Resume only from the last version that any replica may have fetched: if
// versions after s.Version were served under s.Epoch before the copy was
// lost, replicas holding them would take the new changes of those versions
// as the old ones. When in doubt use Restore, which keeps the Provider's own
// epoch (a fresh Provider's is new), so replicas take a full snapshot.
func (p *Provider) Resume(s Snapshot) error {
	if s.Epoch == "" {
		return fmt.Errorf("%w: Resume needs a snapshot with an epoch", ErrInvalidZone)
	}
	zones, err := buildZones(context.Background(), s)
	if err != nil {
		return err
	}
	return p.resume(zones, s.Version, s.Epoch)
}

// resume publishes zones at version of epoch, with an empty journal.
func (p *Provider) resume(zones map[string]*zone, version uint64, epoch string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	old := p.load()
	if version < old.version {
		return fmt.Errorf("%w: Resume at version %d, below the Provider's %d", ErrInvalidZone, version, old.version)
	}
	keepSerialPolicies(old.Zones, zones)
	p.withSigners(zones)
	ns := &state{version: version, epoch: epoch, Set: zonedata.Set{Zones: zones}, floor: version, next: make(chan struct{})}
	p.store(ns)
	close(old.next)
	return nil
}

// keepSerialPolicies gives each zone of zones the serial policy of the
// zone of that name in old (a snapshot does not carry it).
func keepSerialPolicies(old, zones map[string]*zone) {
	for name, z := range zones {
		if o, ok := old[name]; ok {
			z.SerialPolicy = o.SerialPolicy
			z.Signer = o.Signer
		}
	}
}

// buildZones validates and builds every zone of s, checking ctx between
// records so that a caller can bound the time it takes.
func buildZones(ctx context.Context, s Snapshot) (map[string]*zone, error) {
	b := NewSnapshotBuilder(ctx)
	for _, zs := range s.Zones {
		if err := b.Zone(zs.Name, zs.SOA); err != nil {
			return nil, err
		}
		for _, zr := range zs.Records {
			if err := b.Add(zr); err != nil {
				return nil, err
			}
		}
	}
	return b.built()
}

// RestoreContext is Restore with a context that bounds building the zones
// (a replica's timeout bounds applying a snapshot so).
func (p *Provider) RestoreContext(ctx context.Context, s Snapshot) error {
	zones, err := buildZones(ctx, s)
	if err != nil {
		return err
	}
	p.replace(zones)
	return nil
}

// replace publishes zones one version past the current one, keeping the
// epoch, with the journal restarting there.
func (p *Provider) replace(zones map[string]*zone) {
	p.mu.Lock()
	defer p.mu.Unlock()
	old := p.load()
	keepSerialPolicies(old.Zones, zones)
	p.withSigners(zones)
	ns := &state{version: old.version + 1, epoch: old.epoch, Set: zonedata.Set{Zones: zones}, floor: old.version + 1, next: make(chan struct{})}
	p.store(ns)
	close(old.next)
}

// Apply applies journal entries taken from another Provider's Changes (in
// order) as one change of this Provider: every RRset named is replaced by
// the entry's records, zones are added and removed, and each zone's serial is
// set to the entry's. It is atomic: on error (a record that does not
// validate, an RRset of an unknown zone, a CNAME conflict left at the end)
// nothing changes. Replicas use it; entries need not be contiguous in
// version, but must be applied in order.
func (p *Provider) Apply(changes []Change) error {
	if len(changes) == 0 {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	old := p.load()
	zones := maps(old.Zones)
	txns := map[string]*txn{}
	var entries []Change
	for i, c := range changes {
		key := zoneKey(c.Zone)
		switch c.Kind {
		case ChangeAddZone:
			if c.SOA == nil {
				return fmt.Errorf("%w: change %d adds zone %s without an SOA", ErrInvalidZone, i, key)
			}
			z, err := buildZone(context.Background(), ZoneSnapshot{Name: key, SOA: *c.SOA})
			if err != nil {
				return err
			}
			z.Signer = p.signerFor(key)
			zones[key] = z
			delete(txns, key)
			soa := SOA(z.SOA)
			entries = append(entries, Change{Kind: ChangeAddZone, Zone: key, Serial: soa.Serial, SOA: &soa})
		case ChangeRemoveZone:
			delete(zones, key)
			delete(txns, key)
			entries = append(entries, Change{Kind: ChangeRemoveZone, Zone: key, Serial: c.Serial})
		case ChangeRRSet:
			t, ok := txns[key]
			if !ok {
				z, ok := zones[key]
				if !ok {
					return fmt.Errorf("%w: change %d: %s", ErrNoZone, i, key)
				}
				t = newTxn(z)
				txns[key] = t
			}
			name, err := zonerecord.Owner(key, c.Name)
			if err != nil {
				return recErr(key, c.Name, c.Type, err)
			}
			code, ok := zonerecord.TypeCode(c.Type)
			if !ok {
				return recErr(key, name, c.Type, ErrUnsupportedType)
			}
			var set zonedata.SetBuilder
			for _, zr := range c.Records {
				zr.Name, zr.Type = c.Name, c.Type
				_, r, err := makeRec(key, zr.Record())
				if err != nil {
					return err
				}
				set.Add(r)
			}
			t.put(name, code, set.Recs)
			t.z.SOA.Serial = c.Serial
			zones[key] = t.z
		default:
			return fmt.Errorf("%w: change %d has unknown kind %q", ErrInvalidZone, i, c.Kind)
		}
	}
	for key, t := range txns {
		if err := t.check(); err != nil {
			return err
		}
		if t.names {
			t.z.RebuildENTs()
		}
		t.carryIndex()
		keys := make([]setKey, 0, len(t.touched))
		for k := range t.touched {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, func(a, b setKey) int {
			if c := zonerecord.CanonicalCompare(a.name, b.name); c != 0 {
				return c
			}
			return int(a.typ) - int(b.typ)
		})
		for _, k := range keys {
			entries = append(entries, rrsetChange(old.Zones[key], t.z, k.name, k.typ))
		}
		zones[key] = t.z
	}
	p.publish(old, zones, entries)
	return nil
}
