package memory

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/gslbkit/gslb/internal/fielderr"
	"github.com/gslbkit/gslb/provider/dnssec"
	"github.com/gslbkit/gslb/provider/internal/answer"
	"github.com/gslbkit/gslb/provider/internal/zonedata"
	"github.com/libdns/libdns"
	"github.com/miekg/dns"
)

// Config tunes a Provider. Start from DefaultConfig and change fields; a
// field left at zero takes its default, so New(Config{}) is the same as
// new(Provider) and New(DefaultConfig()).
type Config struct {
	// JournalSize bounds the change journal, in entries (one per RRset
	// changed), 1 to 1048576. Default 4096. A replica further behind than
	// the journal reaches gets a full snapshot instead.
	JournalSize int `json:"journalSize"`
	// MaxUDPSize caps the size of UDP replies, in bytes: a reply goes out
	// whole if it fits min(the client's EDNS buffer size, MaxUDPSize), else
	// with TC set (512 bytes for a client without EDNS). It is also the size
	// the OPT record of replies advertises. 512 to 4096; 0 means
	// DefaultMaxUDPSize (1232).
	MaxUDPSize int `json:"maxUDPSize,omitempty"`
	// FullANYOverUDP answers ANY over UDP with every RRset at the name. By
	// default (false) ANY over UDP gets one RRset, as RFC 8482 section 4.1
	// allows (over TCP it always gets every RRset).
	FullANYOverUDP bool `json:"fullAnyOverUDP,omitempty"`
	// NoAdditional leaves out the in-zone A and AAAA records of NS, MX and
	// SRV targets that replies otherwise carry in the additional section.
	// Glue in referrals is always sent.
	NoAdditional bool `json:"noAdditional,omitempty"`
	// Signers sign zones online whenever the Provider holds them, however
	// they came: AddZone, Restore, Resume or a replica's Apply. A DNS node
	// following another Provider by replication signs so, with keys it was
	// given itself: keys never travel with the records. A zone added with
	// ZoneConfig.Signer set uses that one. At most one signer per zone.
	Signers []*dnssec.Signer `json:"-"`
}

// DefaultConfig returns the configuration the zero Provider uses.
func DefaultConfig() Config { return Config{JournalSize: 4096} }

// Validate reports a field that is out of range as a *FieldError wrapping
// ErrInvalidConfig. Zero fields are valid: they take their defaults.
func (c Config) Validate() error {
	if c.JournalSize != 0 && (c.JournalSize < 1 || c.JournalSize > 1<<20) {
		return fielderr.New(ErrInvalidConfig, "journalSize", c.JournalSize, fielderr.Range(1, 1<<20)+", or 0 for the default 4096")
	}
	if c.MaxUDPSize != 0 && (c.MaxUDPSize < 512 || c.MaxUDPSize > maxUDPSize) {
		return fielderr.New(ErrInvalidConfig, "maxUDPSize", c.MaxUDPSize, fielderr.Range(512, maxUDPSize)+", or 0 for the default "+strconv.Itoa(DefaultMaxUDPSize))
	}
	return validateSigners(c.Signers)
}

// Provider is an in-process DNS host holding any number of zones. It
// implements libdns's RecordGetter, RecordAppender, RecordSetter,
// RecordDeleter and ZoneLister, and (through Handler) answers DNS queries
// authoritatively from the same data.
//
// Concurrency: every method is safe for concurrent use. Readers (GetRecords,
// the DNS handler, Snapshot, Changes) load an immutable snapshot with one
// atomic read and never block, nor are blocked by, writers; writers serialise
// among themselves and publish a new snapshot atomically, so a reader sees
// either all of a call's changes or none of them.
//
// Atomicity: every call either applies completely or, returning an error,
// changes nothing (the error is then a *RecordError or wraps a sentinel).
// Every call that changes a zone bumps its SOA serial by one and the
// Provider's Version by one, and appends to the journal (see Changes).
//
// Names are case-insensitive: the zone stores and returns them in lower case.
// Record names are relative to the zone ("@" for the apex); a name with a
// trailing dot is taken as fully qualified and must lie inside the zone.
// CNAME, NS and PTR targets are stored lower case and fully qualified: a
// target without a trailing dot is taken as already fully qualified.
//
// The zero value is an empty Provider with DefaultConfig, ready to use.
type Provider struct {
	cfg Config
	mu  sync.Mutex // serialises writers
	cur atomic.Pointer[state]
	eng answer.Engine // answers queries: the general and the fast path, the hooks
}

// state is one immutable version of everything a Provider holds.
type state struct {
	version      uint64
	epoch        string // the history's id, see Provider.Epoch
	zonedata.Set        // the zones, Set.Zones: what the answer path reads
	journal      []Change
	floor        uint64        // the journal holds every change with version > floor
	next         chan struct{} // closed when a newer state is published
}

var (
	_ libdns.RecordGetter   = (*Provider)(nil)
	_ libdns.RecordAppender = (*Provider)(nil)
	_ libdns.RecordSetter   = (*Provider)(nil)
	_ libdns.RecordDeleter  = (*Provider)(nil)
	_ libdns.ZoneLister     = (*Provider)(nil)
)

// New returns an empty Provider configured by cfg, or cfg's validation error.
// It starts nothing.
func New(cfg Config) (*Provider, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	p := &Provider{cfg: cfg}
	p.eng.MaxUDPSize, p.eng.FullANYOverUDP, p.eng.NoAdditional = cfg.MaxUDPSize, cfg.FullANYOverUDP, cfg.NoAdditional
	return p, nil
}

func (p *Provider) load() *state {
	if s := p.cur.Load(); s != nil {
		return s
	}
	p.cur.CompareAndSwap(nil, &state{epoch: newEpoch(), Set: zonedata.Set{Zones: map[string]*zone{}}, next: make(chan struct{})})
	return p.cur.Load()
}

// store makes ns the current state: first the zones the answer path
// reads, then the state every other reader loads (a reader that saw ns
// then asks a query is answered from ns's zones).
func (p *Provider) store(ns *state) {
	p.eng.Publish(&ns.Set)
	p.cur.Store(ns)
}

func (p *Provider) journalSize() int {
	if p.cfg.JournalSize == 0 {
		return DefaultConfig().JournalSize
	}
	return p.cfg.JournalSize
}

// publish installs a new state built from old with zones and the journal
// entries of one change, and wakes every Wait. Callers hold p.mu.
func (p *Provider) publish(old *state, zones map[string]*zone, entries []Change) {
	ns := &state{version: old.version + 1, epoch: old.epoch, Set: zonedata.Set{Zones: zones}, next: make(chan struct{})}
	for i := range entries {
		entries[i].Version = ns.version
	}
	ns.journal, ns.floor = appendJournal(old.journal, old.floor, entries, p.journalSize())
	p.store(ns)
	close(old.next)
}

// zoneKey normalises a zone name: lower case, one trailing dot.
func zoneKey(name string) string {
	name = strings.ToLower(strings.TrimSpace(name))
	return strings.TrimRight(name, ".") + "."
}

// AddZone creates an empty zone with DefaultZoneConfig: SOA and one apex NS
// "ns1.<zone>". It returns ErrZoneExists if the zone is already held.
func (p *Provider) AddZone(name string) error {
	return p.AddZoneWith(name, DefaultZoneConfig())
}

// AddZoneWith creates an empty zone whose SOA and apex NS come from cfg.
// Zones may nest (a query goes to the closest enclosing zone).
func (p *Provider) AddZoneWith(name string, cfg ZoneConfig) error {
	key := zoneKey(name)
	if _, ok := dns.IsDomainName(key); !ok || len(key) > 254 || strings.TrimSpace(name) == "" {
		return fmt.Errorf("%w: zone name %q is not a valid domain name", ErrInvalidZone, name)
	}
	if err := cfg.Validate(); err != nil {
		return err
	}
	cfg = cfg.withDefaults()
	ttl := secs(cfg.TTL)
	z := &zone{
		Name: key,
		SOA: zonedata.SOA{
			NS: qualify(cfg.NS[0], key), Mbox: qualify(cfg.Mbox, key), Serial: cfg.Serial,
			Refresh: secs(cfg.Refresh), Retry: secs(cfg.Retry), Expire: secs(cfg.Expire),
			Minimum: secs(cfg.Minimum), TTL: ttl,
		},
		Nodes:        map[string]*node{},
		SerialPolicy: string(cfg.SerialPolicy),
		Signer:       cmp.Or(cfg.Signer, p.signerFor(key)),
	}
	if cfg.Signer != nil && cfg.Signer.Zone() != key {
		return fielderr.New(ErrInvalidZone, "signer", cfg.Signer.Zone(), "a signer of "+key)
	}
	var apexNS []rec
	for _, ns := range cfg.NS {
		_, r, err := makeRec(key, libdns.NS{Name: "@", TTL: cfg.TTL, Target: qualify(ns, key)})
		if err != nil {
			return err
		}
		if !slices.ContainsFunc(apexNS, func(o rec) bool { return o.SameData(r) }) {
			apexNS = append(apexNS, r)
		}
	}
	apex := &node{} // with no NS, an empty node (as before its first record)
	if len(apexNS) > 0 {
		apex = zonedata.NewNode(dns.TypeNS, apexNS)
	}
	z.Nodes[key] = apex
	z.RebuildENTs()

	p.mu.Lock()
	defer p.mu.Unlock()
	old := p.load()
	if _, ok := old.Zones[key]; ok {
		return fmt.Errorf("%w: %s", ErrZoneExists, key)
	}
	zones := maps(old.Zones)
	zones[key] = z
	soa := SOA(z.SOA)
	entries := []Change{
		{Kind: ChangeAddZone, Zone: key, Serial: soa.Serial, SOA: &soa},
		rrsetChange(nil, z, key, dns.TypeNS),
	}
	p.publish(old, zones, entries)
	return nil
}

// RemoveZone deletes a zone and all its records. It returns ErrNoZone if
// the zone is not held.
func (p *Provider) RemoveZone(name string) error {
	key := zoneKey(name)
	p.mu.Lock()
	defer p.mu.Unlock()
	old := p.load()
	z, ok := old.Zones[key]
	if !ok {
		return fmt.Errorf("%w: %s", ErrNoZone, key)
	}
	zones := maps(old.Zones)
	delete(zones, key)
	p.publish(old, zones, []Change{{Kind: ChangeRemoveZone, Zone: key, Serial: z.SOA.Serial}})
	return nil
}

// Zones returns the names of the zones held, fully qualified, lower case,
// sorted.
func (p *Provider) Zones() []string {
	s := p.load()
	out := make([]string, 0, len(s.Zones))
	for k := range s.Zones {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// SOA returns the zone's current SOA, or ErrNoZone.
func (p *Provider) SOA(zoneName string) (SOA, error) {
	z, ok := p.load().Zones[zoneKey(zoneName)]
	if !ok {
		return SOA{}, fmt.Errorf("%w: %s", ErrNoZone, zoneKey(zoneName))
	}
	return SOA(z.SOA), nil
}

func maps(m map[string]*zone) map[string]*zone {
	c := make(map[string]*zone, len(m)+1)
	for k, v := range m {
		c[k] = v
	}
	return c
}

// ListZones implements libdns.ZoneLister: every zone held, sorted by name.
func (p *Provider) ListZones(ctx context.Context) ([]libdns.Zone, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	names := p.Zones()
	out := make([]libdns.Zone, len(names))
	for i, n := range names {
		out[i] = libdns.Zone{Name: n}
	}
	return out, nil
}

// GetRecords implements libdns.RecordGetter. It returns every record in the
// zone except the SOA (read it with SOA), apex NS records included, as the
// libdns struct for each type (Address, CNAME, TXT, NS, MX, SRV, CAA,
// ServiceBinding; PTR as libdns.RR): names in DNS canonical order with the
// apex first, types in SupportedTypes order, records in the order they were
// added. It never blocks on writers.
func (p *Provider) GetRecords(ctx context.Context, zoneName string) ([]libdns.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	z, ok := p.load().Zones[zoneKey(zoneName)]
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrNoZone, zoneKey(zoneName))
	}
	recs := z.Records()
	out := make([]libdns.Record, len(recs))
	for i, r := range recs {
		out[i] = r.Typed(z.Name)
	}
	return out, nil
}

// Epoch returns the id of the Provider's history: a random string chosen
// when the history starts (the first use of a new Provider), kept by every
// change and by Restore, and replaced only by Resume. Replication carries it,
// so a replica never applies one history's journal onto a copy of another's
// (a restarted source starts a new epoch; its replicas take a full snapshot).
// Save it with the zones (Snapshot includes it) to continue the history
// after a restart with Resume. It never blocks.
func (p *Provider) Epoch() string { return p.load().epoch }

func newEpoch() string {
	var b [12]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}
