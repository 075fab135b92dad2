package provider

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/libdns/libdns"

	"github.com/gslbkit/gslb/internal/dnsname"
	"github.com/gslbkit/gslb/internal/fielderr"
)

// ErrNotMounted is matched (errors.Is) by the error of a Mounts call for a
// zone it does not mount.
var ErrNotMounted = errors.New("provider: zone not mounted")

// ErrMountConfig is wrapped by the *FieldError NewMounts returns for an
// invalid mount.
var ErrMountConfig = errors.New("provider: invalid mounts")

// Mount says where one zone of a Mounts lives: in Store, as the zone Zone,
// every record name followed by the relative name Below. With Zone
// "example.test." and Below "eu.local", the mounted zone's "www" is
// "www.eu.local.example.test." and its apex "eu.local.example.test." in
// Store.
type Mount struct {
	// Store holds the records. It must implement the libdns interfaces the
	// calls made through the Mounts need (RecordSetter for SetRecords, …);
	// a call it lacks fails with an *UnsupportedError.
	Store libdns.RecordGetter
	// Zone is the zone of Store that holds the mounted zone; empty: the
	// mounted zone's own name.
	Zone string
	// Below is the relative name, below Zone, of the mounted zone's apex;
	// empty: the mounted zone is Zone itself.
	Below string
}

// Into renames records of the mounted zone to the names they have in
// m.Zone. A record with empty data (a delete's wildcard) keeps its type
// and empty data.
func (m Mount) Into(recs []libdns.Record) ([]libdns.Record, error) {
	if m.Below == "" {
		return recs, nil
	}
	out := make([]libdns.Record, 0, len(recs))
	for _, r := range recs {
		rr := r.RR()
		rr.Name = m.into(rr.Name)
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

func (m Mount) into(name string) string {
	if m.Below == "" {
		return name
	}
	if name == "@" || name == "" {
		return m.Below
	}
	return name + "." + m.Below
}

// Out keeps the records of m.Zone that lie in the mounted zone (at or
// below Below), renamed relative to the mounted zone; the others, and
// records that no longer parse once renamed, are left out.
func (m Mount) Out(recs []libdns.Record) []libdns.Record {
	if m.Below == "" {
		return recs
	}
	below := strings.ToLower(m.Below)
	out := make([]libdns.Record, 0, len(recs))
	for _, r := range recs {
		rr := r.RR()
		name := strings.ToLower(rr.Name)
		switch {
		case name == below:
			rr.Name = "@"
		case strings.HasSuffix(name, "."+below):
			rr.Name = name[:len(name)-len(below)-1]
		default:
			continue
		}
		if p, err := rr.Parse(); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// Mounts is a libdns provider over zones that live in other providers,
// maybe as subtrees of their zones: it routes every call by zone name to
// the Mount of that zone and renames records into and out of the subtree.
// It lets one program keep a private copy of a zone per region (split
// horizon) in a single RFC 2136 server or Route 53 hosted zone, as
// "<region>.local.<domain>" of the shared zone, while its code reads and
// writes "local.<domain>" — or in zones of their own in memory, unchanged.
//
// Besides the libdns interfaces it forwards record's atomic writes
// (ReplaceRecords, ReplaceFenced; a fence's name is renamed like any
// record's) when the zone's store has them, else fails them with an
// *UnsupportedError; Unwrap lists the stores, so record.New grants a
// Reconciler over a Mounts those writes only when every store has them. CNAME targets and other data are never rewritten.
// A Mounts is safe for concurrent use when its stores are; it never
// changes after NewMounts. Its zero value mounts nothing.
type Mounts struct {
	zones map[string]Mount // by the mounted zone's lower-case, fully qualified name
}

// NewMounts checks mounts (zone name → Mount) and returns their Mounts. A
// zone name or Mount.Zone that is not a valid domain name, a nil Store, or
// a Below that is not a valid relative name is a *FieldError wrapping
// ErrMountConfig.
func NewMounts(mounts map[string]Mount) (*Mounts, error) {
	zones := make(map[string]Mount, len(mounts))
	for _, name := range slices.Sorted(maps.Keys(mounts)) {
		m := mounts[name]
		path := fmt.Sprintf("mounts[%q]", name)
		if err := dnsname.Check(name); err != nil || name == "" {
			return nil, fielderr.New(ErrMountConfig, path, name, "a domain name")
		}
		if m.Store == nil {
			return nil, fielderr.New(ErrMountConfig, path+".Store", nil, "a provider")
		}
		if m.Zone == "" {
			m.Zone = name
		}
		if err := dnsname.Check(m.Zone); err != nil {
			return nil, fielderr.New(ErrMountConfig, path+".Zone", m.Zone, "a domain name")
		}
		m.Zone = strings.ToLower(dnsname.Fqdn(m.Zone))
		if m.Below != "" {
			if strings.HasSuffix(m.Below, ".") || dnsname.Check(m.Below) != nil {
				return nil, fielderr.New(ErrMountConfig, path+".Below", m.Below, "a relative domain name (no trailing dot)")
			}
			m.Below = strings.ToLower(m.Below)
		}
		key := strings.ToLower(dnsname.Fqdn(name))
		if _, dup := zones[key]; dup {
			return nil, fielderr.New(ErrMountConfig, path, name, "each zone once (names differ only in case)")
		}
		zones[key] = m
	}
	return &Mounts{zones: zones}, nil
}

// Where returns the Mount of zone, with Zone fully qualified and in lower
// case, and whether zone is mounted.
func (ms *Mounts) Where(zone string) (Mount, bool) {
	if ms == nil {
		return Mount{}, false
	}
	m, ok := ms.zones[strings.ToLower(dnsname.Fqdn(zone))]
	return m, ok
}

func (ms *Mounts) route(zone string) (Mount, error) {
	m, ok := ms.Where(zone)
	if !ok {
		return Mount{}, fmt.Errorf("%w: %q", ErrNotMounted, zone)
	}
	return m, nil
}

func unsupportedIn(m Mount, method Method) error {
	return &UnsupportedError{Method: method, Provider: fmt.Sprintf("%T", m.Store)}
}

// GetRecords implements libdns.RecordGetter: the store's records of the
// mounted zone, renamed.
func (ms *Mounts) GetRecords(ctx context.Context, zone string) ([]libdns.Record, error) {
	m, err := ms.route(zone)
	if err != nil {
		return nil, err
	}
	recs, err := m.Store.GetRecords(ctx, m.Zone)
	if err != nil {
		return nil, err
	}
	return m.Out(recs), nil
}

// write renames recs into the store, makes the call method there and
// renames what it returns back.
func (ms *Mounts) write(ctx context.Context, zone string, recs []libdns.Record, method Method) ([]libdns.Record, error) {
	m, err := ms.route(zone)
	if err != nil {
		return nil, err
	}
	in, err := m.Into(recs)
	if err != nil {
		return nil, err
	}
	var got []libdns.Record
	switch method {
	case MethodAppendRecords:
		s, ok := m.Store.(libdns.RecordAppender)
		if !ok {
			return nil, unsupportedIn(m, method)
		}
		got, err = s.AppendRecords(ctx, m.Zone, in)
	case MethodSetRecords:
		s, ok := m.Store.(libdns.RecordSetter)
		if !ok {
			return nil, unsupportedIn(m, method)
		}
		got, err = s.SetRecords(ctx, m.Zone, in)
	case MethodDeleteRecords:
		s, ok := m.Store.(libdns.RecordDeleter)
		if !ok {
			return nil, unsupportedIn(m, method)
		}
		got, err = s.DeleteRecords(ctx, m.Zone, in)
	}
	return m.Out(got), err
}

// AppendRecords implements libdns.RecordAppender.
func (ms *Mounts) AppendRecords(ctx context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
	return ms.write(ctx, zone, recs, MethodAppendRecords)
}

// SetRecords implements libdns.RecordSetter.
func (ms *Mounts) SetRecords(ctx context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
	return ms.write(ctx, zone, recs, MethodSetRecords)
}

// DeleteRecords implements libdns.RecordDeleter.
func (ms *Mounts) DeleteRecords(ctx context.Context, zone string, recs []libdns.Record) ([]libdns.Record, error) {
	return ms.write(ctx, zone, recs, MethodDeleteRecords)
}

// ListZones implements libdns.ZoneLister: the mounted zones, sorted.
func (ms *Mounts) ListZones(context.Context) ([]libdns.Zone, error) {
	if ms == nil {
		return nil, nil
	}
	out := make([]libdns.Zone, 0, len(ms.zones))
	for _, z := range slices.Sorted(maps.Keys(ms.zones)) {
		out = append(out, libdns.Zone{Name: z})
	}
	return out, nil
}

// ReplaceRecords deletes del and sets set in one call of the zone's store
// (record.Replacer), renamed into it.
func (ms *Mounts) ReplaceRecords(ctx context.Context, zone string, del, set []libdns.Record) error {
	m, err := ms.route(zone)
	if err != nil {
		return err
	}
	s, ok := m.Store.(replacer)
	if !ok {
		return unsupportedIn(m, MethodReplaceRecords)
	}
	if del, err = m.Into(del); err != nil {
		return err
	}
	if set, err = m.Into(set); err != nil {
		return err
	}
	return s.ReplaceRecords(ctx, m.Zone, del, set)
}

// ReplaceFenced is the zone's store's fenced write (record.Fencer), the
// fence and the records renamed into it.
func (ms *Mounts) ReplaceFenced(ctx context.Context, zone string, was, now libdns.TXT, del, set []libdns.Record) error {
	m, err := ms.route(zone)
	if err != nil {
		return err
	}
	s, ok := m.Store.(fencer)
	if !ok {
		return unsupportedIn(m, MethodReplaceFenced)
	}
	if del, err = m.Into(del); err != nil {
		return err
	}
	if set, err = m.Into(set); err != nil {
		return err
	}
	was.Name, now.Name = m.into(was.Name), m.into(now.Name)
	return s.ReplaceFenced(ctx, m.Zone, was, now, del, set)
}

// Unwrap returns the store of every mounted zone, in the order of the
// zones' names (a store holding several zones appears once for each).
// record.New reads it to judge the atomic writes: a Reconciler over a
// Mounts replaces atomically or fences only if every store can.
func (ms *Mounts) Unwrap() []libdns.RecordGetter {
	if ms == nil {
		return nil
	}
	out := make([]libdns.RecordGetter, 0, len(ms.zones))
	for _, z := range slices.Sorted(maps.Keys(ms.zones)) {
		out = append(out, ms.zones[z].Store)
	}
	return out
}

var (
	_ Provider = (*Mounts)(nil)
	_ replacer = (*Mounts)(nil)
	_ fencer   = (*Mounts)(nil)
)
