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

// txn is one write in progress on a copy of a zone.
type txn struct {
	z       *zone
	from    *zone // the version z is a copy of
	touched map[setKey]bool
	names   bool // the set of owner names changed
}

type setKey struct {
	name string
	typ  uint16
}

func newTxn(z *zone) *txn { return &txn{z: z.Clone(), from: z, touched: map[setKey]bool{}} }

// carryIndex gives t.z the name index of the version it copies, updated
// for the names t touched (zonedata's CarryIndex): call it once t.z is
// final, before it is published.
func (t *txn) carryIndex() {
	t.z.CarryIndex(t.from, func(yield func(string) bool) {
		for k := range t.touched {
			if !yield(k.name) {
				return
			}
		}
	})
}

// get returns the RRset (name, typ); the slice must not be modified.
func (t *txn) get(name string, typ uint16) []rec {
	return t.z.Nodes[name].Get(typ)
}

// put replaces the RRset (name, typ) by rs; an empty rs removes it.
func (t *txn) put(name string, typ uint16, rs []rec) {
	old, ok := t.z.Nodes[name]
	var n *node
	if ok {
		n = old.Clone()
	} else {
		if len(rs) == 0 {
			return
		}
		n = zonedata.NewNode(typ, rs)
		t.names = true
	}
	n.Put(typ, rs)
	if n.Len() == 0 {
		delete(t.z.Nodes, name)
		t.names = true
	} else {
		t.z.Nodes[name] = n
	}
	t.touched[setKey{name, typ}] = true
	if typ == dns.TypeNS {
		t.names = true // delegation points are derived like the names
	}
}

// check enforces the CNAME rules at every touched name.
func (t *txn) check() error {
	seen := map[string]bool{}
	for k := range t.touched {
		if seen[k.name] {
			continue
		}
		seen[k.name] = true
		n, ok := t.z.Nodes[k.name]
		if !ok {
			continue
		}
		cn := n.Get(dns.TypeCNAME)
		if len(cn) == 0 {
			continue
		}
		if k.name == t.z.Name {
			return recErr(t.z.Name, k.name, "CNAME", ErrApexCNAME)
		}
		if len(cn) > 1 {
			return recErr(t.z.Name, k.name, "CNAME", fmt.Errorf("%w: %d CNAME records at one name", ErrCNAMEConflict, len(cn)))
		}
		if n.Len() > 1 {
			var other []string
			for _, s := range n.Sets() {
				if s.Type != dns.TypeCNAME {
					other = append(other, dns.TypeToString[s.Type])
				}
			}
			slices.Sort(other)
			return recErr(t.z.Name, k.name, "CNAME", fmt.Errorf("%w: the name also holds %v", ErrCNAMEConflict, other))
		}
	}
	return nil
}

// commit bumps the serial, rebuilds derived data and returns the journal
// entries, or nil when nothing changed.
func (t *txn) commit(old *zone) []Change {
	var entries []Change
	keys := make([]setKey, 0, len(t.touched))
	for k := range t.touched {
		if !slices.EqualFunc(old.Get(k.name, k.typ), t.get(k.name, k.typ), rec.Equal) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return nil
	}
	// Sort by a key computed once per name: comparing split names made
	// appending a million records take minutes.
	type keyed struct {
		ck string
		k  setKey
	}
	ks := make([]keyed, len(keys))
	for i, k := range keys {
		ks[i] = keyed{zonerecord.CanonicalKey(k.name), k}
	}
	slices.SortFunc(ks, func(a, b keyed) int {
		if c := strings.Compare(a.ck, b.ck); c != 0 {
			return c
		}
		return int(a.k.typ) - int(b.k.typ)
	})
	for i := range ks {
		keys[i] = ks[i].k
	}
	t.z.SOA.Serial = bumpSerial(t.z.SOA.Serial, SerialPolicy(t.z.SerialPolicy), time.Now())
	if t.names {
		t.z.RebuildENTs()
	}
	for _, k := range keys {
		entries = append(entries, rrsetChange(old, t.z, k.name, k.typ))
	}
	return entries
}

// rrsetChange describes the RRset (name, typ) of z as a journal entry; old
// (nil for a new zone) is the zone before the change.
func rrsetChange(old, z *zone, name string, typ uint16) Change {
	c := Change{Kind: ChangeRRSet, Zone: z.Name, Serial: z.SOA.Serial, Name: zonerecord.Rel(name, z.Name), Type: dns.TypeToString[typ]}
	for _, r := range z.Get(name, typ) {
		c.Records = append(c.Records, zoneRecord(z.Name, r))
	}
	if old != nil {
		for _, r := range old.Get(name, typ) {
			c.Old = append(c.Old, zoneRecord(z.Name, r))
		}
		c.PrevSerial = old.SOA.Serial
	}
	return c
}

// write runs fn on a transaction over zoneName and publishes the result.
func (p *Provider) write(ctx context.Context, zoneName string, fn func(t *txn) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	key := zoneKey(zoneName)
	p.mu.Lock()
	defer p.mu.Unlock()
	old := p.load()
	z, ok := old.Zones[key]
	if !ok {
		return fmt.Errorf("%w: %s", ErrNoZone, key)
	}
	t := newTxn(z)
	if err := fn(t); err != nil {
		return err
	}
	if err := t.check(); err != nil {
		return err
	}
	entries := t.commit(z)
	if entries == nil {
		return nil
	}
	t.carryIndex()
	zones := maps(old.Zones)
	zones[key] = t.z
	p.publish(old, zones, entries)
	return nil
}

// parseAll validates every input record.
func parseAll(zone string, in []libdns.Record) ([]string, []rec, error) {
	names := make([]string, len(in))
	recs := make([]rec, len(in))
	for i, r := range in {
		n, rr, err := makeRec(zone, r)
		if err != nil {
			return nil, nil, err
		}
		names[i], recs[i] = n, rr
	}
	return names, recs, nil
}

// typedAll returns recs, records of zone, as libdns records.
func typedAll(zone string, recs []rec) []libdns.Record {
	out := make([]libdns.Record, len(recs))
	for i, r := range recs {
		out[i] = r.Typed(zone)
	}
	return out
}

// AppendRecords implements libdns.RecordAppender: it adds the records and
// returns those it created, in input order. A record equal in name, type and
// data to one already in the zone (or earlier in the input) is not created
// again and is not returned. It refuses, changing nothing, a CNAME at a name
// that holds other data or at the apex, and data beside an existing CNAME
// (ErrCNAMEConflict, ErrApexCNAME), as well as unsupported types and invalid
// records.
func (p *Provider) AppendRecords(ctx context.Context, zoneName string, in []libdns.Record) ([]libdns.Record, error) {
	var created []rec
	err := p.write(ctx, zoneName, func(t *txn) error {
		names, recs, err := parseAll(t.z.Name, in)
		if err != nil {
			return err
		}
		for i, r := range recs {
			code := r.Wire.Header().Rrtype
			set := t.get(names[i], code)
			if slices.ContainsFunc(set, func(o rec) bool { return o.SameData(r) }) {
				continue
			}
			t.put(names[i], code, append(slices.Clip(set), r))
			created = append(created, r)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return typedAll(zoneKey(zoneName), created), nil
}

// SetRecords implements libdns.RecordSetter: for every (name, type) in the
// input, the RRset afterwards holds exactly the input records of that name
// and type (duplicates collapsed, first TTL kept); other RRsets are
// untouched. It returns the records set, in input order.
//
// A CNAME may replace an address set in one call, and back: setting a CNAME
// at a name removes that name's A and AAAA sets, and setting A or AAAA at a
// name removes its CNAME. Because readers see whole snapshots, a query never
// observes both or neither, so a failover can switch a name between an
// address set and a CNAME atomically (no external provider can do this; see
// the record package). Any other data beside a CNAME is refused with
// ErrCNAMEConflict, a CNAME at the apex with ErrApexCNAME, and nothing
// changes.
func (p *Provider) SetRecords(ctx context.Context, zoneName string, in []libdns.Record) ([]libdns.Record, error) {
	var set []rec
	err := p.write(ctx, zoneName, func(t *txn) (err error) {
		set, err = t.setRecords(in)
		return err
	})
	if err != nil {
		return nil, err
	}
	return typedAll(zoneKey(zoneName), set), nil
}

// DeleteRecords implements libdns.RecordDeleter: it removes the zone's
// records that match an input record in name and, where given, type, TTL
// and data (an empty type, zero TTL or empty data matches any), and returns
// the records removed. Inputs matching nothing, or that cannot name a record
// of this zone, are ignored. Removing the apex NS records is allowed but
// leaves the zone without name servers.
func (p *Provider) DeleteRecords(ctx context.Context, zoneName string, in []libdns.Record) ([]libdns.Record, error) {
	var deleted []rec
	err := p.write(ctx, zoneName, func(t *txn) error {
		deleted = t.deleteRecords(in)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return typedAll(zoneKey(zoneName), deleted), nil
}

func typesOf(n *node) []uint16 {
	return zonedata.SortedTypes(n, make([]uint16, 0, n.Len()))
}

// setRecords applies SetRecords' semantics to t and returns the records set.
func (t *txn) setRecords(in []libdns.Record) ([]rec, error) {
	var set []rec
	names, recs, err := parseAll(t.z.Name, in)
	if err != nil {
		return nil, err
	}
	groups := map[setKey][]rec{}
	var order []setKey
	for i, r := range recs {
		k := setKey{names[i], r.Wire.Header().Rrtype}
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		if slices.ContainsFunc(groups[k], func(o rec) bool { return o.SameData(r) }) {
			continue
		}
		groups[k] = append(groups[k], r)
		set = append(set, r)
	}
	// The A <-> CNAME swap: only when the input does not itself put both
	// kinds at the name (that is refused by check).
	for _, k := range order {
		switch k.typ {
		case dns.TypeCNAME:
			_, a := groups[setKey{k.name, dns.TypeA}]
			_, aaaa := groups[setKey{k.name, dns.TypeAAAA}]
			if !a && !aaaa {
				t.put(k.name, dns.TypeA, nil)
				t.put(k.name, dns.TypeAAAA, nil)
			}
		case dns.TypeA, dns.TypeAAAA:
			if _, c := groups[setKey{k.name, dns.TypeCNAME}]; !c {
				t.put(k.name, dns.TypeCNAME, nil)
			}
		}
	}
	for _, k := range order {
		t.put(k.name, k.typ, groups[k])
	}
	return set, nil
}

// deleteRecords applies DeleteRecords' semantics to t and returns the
// records removed.
func (t *txn) deleteRecords(in []libdns.Record) []rec {
	var deleted []rec
	for _, r := range in {
		pat, ok := makePattern(t.z.Name, r)
		if !ok {
			continue
		}
		n, ok := t.z.Nodes[pat.name]
		if !ok {
			continue
		}
		for _, typ := range typesOf(n) {
			set := n.Get(typ)
			keep := make([]rec, 0, len(set))
			for _, o := range set {
				if pat.match(o) {
					deleted = append(deleted, o)
				} else {
					keep = append(keep, o)
				}
			}
			if len(keep) != len(set) {
				t.put(pat.name, typ, keep)
				n = t.z.Nodes[pat.name]
				if n == nil {
					break
				}
			}
		}
	}
	return deleted
}
