package memory

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"slices"
	"strings"

	"github.com/gslbkit/gslb/internal/zonerecord"
	"github.com/gslbkit/gslb/provider/internal/zonedata"
	"github.com/gslbkit/gslb/provider/internal/zonejson"
	"github.com/miekg/dns"
)

// Streaming snapshots. A Snapshot of a large zone is a second copy of every
// record; writing one to a file or a response, or reading one back before
// building the zone, holds both at once. SnapshotView writes a state's
// zones as Snapshot JSON while it walks them, and SnapshotBuilder builds
// zones record by record as a decoder reads them, so neither side holds
// more than one record beyond the copy itself.

// SnapshotView is one consistent state of a Provider (see
// Provider.SnapshotView), written as a Snapshot without building one. It
// stays valid and unchanged while the Provider changes; it holds that
// state's zones in memory until dropped. The zero SnapshotView holds no
// zone. Its methods are safe for concurrent use.
type SnapshotView struct {
	// Version and Epoch are written as the Snapshot's (the Provider's at
	// the view; a caller may set others, as a replica saving the source's
	// version does).
	Version uint64
	Epoch   string
	s       *state
}

// SnapshotView returns the current state as a SnapshotView. It never
// blocks writers and copies nothing.
func (p *Provider) SnapshotView() SnapshotView {
	s := p.load()
	return SnapshotView{Version: s.version, Epoch: s.epoch, s: s}
}

// Changes returns the journal entries after version since of history
// epoch ("" for any), in order, from the view's state (not to be
// modified), or ok false when that state's journal cannot serve them and a
// full snapshot is needed (see Provider.Since).
func (v SnapshotView) Changes(since uint64, epoch string) (changes []Change, ok bool) {
	s := v.s
	if s == nil || since > s.version || since < s.floor || (epoch != "" && epoch != s.epoch) {
		return nil, false
	}
	changes, _ = s.changes(since)
	return changes, true
}

// WriteJSON writes the view to w as the JSON of its Snapshot (the bytes
// json.Marshal writes for Provider.Snapshot, with the view's Version and
// Epoch), walking the zones without building the Snapshot: each record is
// written from its wire form, and the walk allocates about one sorted list
// of each zone's names (16 bytes a name). keep, when not nil, drops the
// records for which it returns false (it is handed each record's
// ZoneRecord, built for it). Errors are w's.
func (v SnapshotView) WriteJSON(w io.Writer, keep func(zone string, r ZoneRecord) bool) error {
	var zones map[string]*zone
	if v.s != nil {
		zones = v.s.Zones
	}
	var keepRec func(zone string, r rec) bool
	if keep != nil {
		keepRec = func(zone string, r rec) bool { return keep(zone, zoneRecord(zone, r)) }
	}
	return zonejson.Write(w, ReplicationFormat, v.Version, v.Epoch, zones, keepRec)
}

// SnapshotBuilder builds zones record by record, as a decoder reads a
// streamed Snapshot, without holding the Snapshot: Zone starts each zone,
// Add (or AddRR) adds its records (in GetRecords order, as a Snapshot
// holds them; any order is accepted; ReadZoneFile does both from a zone
// file), and Provider.RestoreBuilt or ResumeBuilt publishes the result. Nothing is published before: a builder whose input turns out
// bad (a record that does not validate, a signature that does not verify)
// is dropped and the Provider keeps answering from its zones. The first
// error sticks: later calls return it. The zero SnapshotBuilder is an
// empty one without a context. Not safe for concurrent use.
type SnapshotBuilder struct {
	// Version and Epoch are the source's, as read (ResumeBuilt adopts them).
	Version uint64
	Epoch   string

	ctx   context.Context
	zones map[string]*zone
	names []string // in the order begun
	cur   *zoneBuild
	err   error
}

// NewSnapshotBuilder returns an empty builder. ctx bounds the building:
// once it ends, Add fails with its error.
func NewSnapshotBuilder(ctx context.Context) *SnapshotBuilder {
	return &SnapshotBuilder{ctx: ctx, zones: map[string]*zone{}}
}

// Zone ends the zone being built, if any, and starts the zone name with
// soa. It fails on an invalid name or SOA, or a zone given twice.
func (b *SnapshotBuilder) Zone(name string, soa SOA) error {
	if b.err != nil {
		return b.err
	}
	if err := b.endZone(); err != nil {
		return err
	}
	if b.zones == nil {
		b.zones = map[string]*zone{}
	}
	if b.ctx == nil {
		b.ctx = context.Background()
	}
	zb, err := newZoneBuild(b.ctx, name, soa)
	if err == nil {
		if _, dup := b.zones[zb.z.Name]; dup {
			err = fmt.Errorf("%w: zone %s appears twice", ErrInvalidZone, zb.z.Name)
		}
	}
	if err != nil {
		b.err = err
		return err
	}
	b.cur = zb
	b.zones[zb.z.Name] = nil // reserved until built
	b.names = append(b.names, zb.z.Name)
	return nil
}

// Add adds a record to the zone started last. Errors are *RecordError, a
// missing Zone, or the context's.
func (b *SnapshotBuilder) Add(r ZoneRecord) error {
	if b.err != nil {
		return b.err
	}
	if b.cur == nil {
		b.err = fmt.Errorf("%w: a record before any zone", ErrInvalidZone)
		return b.err
	}
	if err := b.cur.add(r); err != nil {
		b.err = err
		return err
	}
	return nil
}

// ZoneNames returns the names of the zones started so far (fully
// qualified, lower case), in the order they came.
func (b *SnapshotBuilder) ZoneNames() []string { return slices.Clone(b.names) }

// Err returns the builder's first error, nil if none.
func (b *SnapshotBuilder) Err() error { return b.err }

func (b *SnapshotBuilder) endZone() error {
	if b.cur == nil {
		return nil
	}
	z, err := b.cur.finish()
	b.cur = nil
	if err != nil {
		b.err = err
		return err
	}
	b.zones[z.Name] = z
	return nil
}

// built ends the last zone and returns the zones. A builder is used once.
func (b *SnapshotBuilder) built() (map[string]*zone, error) {
	if b == nil {
		return nil, errors.New("memory: nil SnapshotBuilder")
	}
	if b.err != nil {
		return nil, b.err
	}
	if err := b.endZone(); err != nil {
		return nil, err
	}
	zones := b.zones
	if zones == nil {
		zones = map[string]*zone{}
	}
	b.zones, b.err = nil, errors.New("memory: SnapshotBuilder already used")
	return zones, nil
}

// RestoreBuilt is RestoreContext with the zones of b (which it consumes):
// every zone is replaced atomically, the Provider's version moves one past
// its own, and b's Version and Epoch are not adopted. On error (b's
// first error included) nothing changes.
func (p *Provider) RestoreBuilt(b *SnapshotBuilder) error {
	zones, err := b.built()
	if err != nil {
		return err
	}
	p.replace(zones)
	return nil
}

// ResumeBuilt is Resume with the zones of b (which it consumes) and b's
// Version and Epoch.
func (p *Provider) ResumeBuilt(b *SnapshotBuilder) error {
	if b != nil && b.Epoch == "" && b.err == nil {
		return fmt.Errorf("%w: Resume needs a snapshot with an epoch", ErrInvalidZone)
	}
	zones, err := b.built()
	if err != nil {
		return err
	}
	return p.resume(zones, b.Version, b.Epoch)
}

// zoneBuild is one zone being built from records in GetRecords order
// (zonedata.Builder), each validated.
type zoneBuild struct {
	ctx context.Context
	z   *zone
	n   int
	b   zonedata.Builder
	// The last record's name as given and its owner: records come grouped
	// by name, so most owners are validated once and their string shared.
	lastName, lastOwner string
}

func newZoneBuild(ctx context.Context, name string, soa SOA) (*zoneBuild, error) {
	key := zoneKey(name)
	if _, ok := dns.IsDomainName(key); !ok || name == "" || len(key) > 254 {
		return nil, fmt.Errorf("%w: zone name %q is not a valid domain name", ErrInvalidZone, name)
	}
	if err := checkSOA(soa); err != nil {
		return nil, fmt.Errorf("zone %s: %w", key, err)
	}
	z := &zone{Name: key, SOA: zonedata.SOA(soa), Nodes: map[string]*node{}}
	z.SOA.NS, z.SOA.Mbox = zoneKey(soa.NS), zoneKey(soa.Mbox)
	return &zoneBuild{ctx: ctx, z: z, b: zonedata.Builder{Z: z}}, nil
}

func (zb *zoneBuild) add(zr ZoneRecord) error {
	if zb.n%1024 == 1023 {
		if err := zb.ctx.Err(); err != nil {
			return fmt.Errorf("zone %s: building stopped after %d records: %w", zb.z.Name, zb.n, err)
		}
	}
	zb.n++
	name, r, ok := zb.quick(zr)
	if !ok {
		var err error
		if name, r, err = makeRec(zb.z.Name, zr.Record()); err != nil {
			return err
		}
	}
	zb.lastName, zb.lastOwner = zr.Name, name
	zb.b.Add(name, r)
	return nil
}

// quick is makeRec for the records a zone mostly holds, with no libdns
// record in between: valid records other than TXT (whose Strings take the
// libdns path), owners validated once per run of a name, A and AAAA
// records allocated with their address. It returns false where makeRec
// must decide (and report the error).
func (zb *zoneBuild) quick(zr ZoneRecord) (string, rec, bool) {
	typ := strings.ToUpper(strings.TrimSpace(zr.Type))
	code, ok := zonerecord.TypeCode(typ)
	if !ok || code == dns.TypeTXT || zr.TTL > maxTTL {
		return "", rec{}, false
	}
	fqdn := zb.lastOwner
	if zr.Name != zb.lastName || fqdn == "" {
		var err error
		if fqdn, err = zonerecord.Owner(zb.z.Name, zr.Name); err != nil {
			return "", rec{}, false
		}
	}
	hdr := dns.RR_Header{Name: fqdn, Rrtype: code, Class: dns.ClassINET, Ttl: zr.TTL}
	switch code {
	case dns.TypeA, dns.TypeAAAA: // as zonerecord.Canonical reads them
		ip, err := netip.ParseAddr(strings.TrimSpace(zr.Data))
		if err != nil || ip.Zone() != "" {
			return "", rec{}, false
		}
		if code == dns.TypeA {
			if !ip.Is4() {
				return "", rec{}, false
			}
			return fqdn, rec{Wire: zonedata.NewA(hdr, ip.As4())}, true
		}
		if !ip.Is6() {
			return "", rec{}, false
		}
		return fqdn, rec{Wire: zonedata.NewAAAA(hdr, ip.As16())}, true
	}
	_, wire, err := zonerecord.Canonical(nil, fqdn, typ, code, zr.TTL, zr.Data)
	if err != nil {
		return "", rec{}, false
	}
	return fqdn, rec{Wire: wire}, true
}

// finish stores the last RRsets, derives the empty non-terminals and
// checks the CNAME rules at every name holding a CNAME.
func (zb *zoneBuild) finish() (*zone, error) {
	zb.b.Flush() // also derives the empty non-terminals
	z := zb.z
	for _, name := range zb.b.CNAMEs() {
		if err := checkCNAME(z.Name, name, z.Nodes[name]); err != nil {
			return nil, err
		}
	}
	return z, nil
}

// checkCNAME enforces the CNAME rules at the name of n (txn.check's rules
// for one name).
func checkCNAME(zoneName, name string, n *node) error {
	cn := n.Get(dns.TypeCNAME)
	if len(cn) == 0 {
		return nil
	}
	if name == zoneName {
		return recErr(zoneName, name, "CNAME", ErrApexCNAME)
	}
	if len(cn) > 1 {
		return recErr(zoneName, name, "CNAME", fmt.Errorf("%w: %d CNAME records at one name", ErrCNAMEConflict, len(cn)))
	}
	if n.Len() > 1 {
		var other []string
		for _, s := range n.Sets() {
			if s.Type != dns.TypeCNAME {
				other = append(other, dns.TypeToString[s.Type])
			}
		}
		slices.Sort(other)
		return recErr(zoneName, name, "CNAME", fmt.Errorf("%w: the name also holds %v", ErrCNAMEConflict, other))
	}
	return nil
}
